//! Why the launcher gives up before the job runs, and the exit status that says so.
//!
//! Every set-up failure comes back to `main` as a [`RunError`], which prints it once as
//! `shmemrun: MESSAGE` and exits with [`RunError::exit_code`]. Failures of the job itself (a PE
//! that cannot be started or exits badly, a silent host) are the main loop's (`job.rs`).

use std::fmt;

/// A set-up failure: what went wrong, as printed after `shmemrun: `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// A bad command line or environment setting (exit status 2).
    Usage(String),
    /// The launcher could not set itself up: signals, the job secret, the rendezvous listener
    /// (exit status 1).
    Setup(String),
}

impl RunError {
    /// The launcher's exit status for this failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::Usage(_) => 2,
            RunError::Setup(_) => 1,
        }
    }
}

impl std::error::Error for RunError {}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Usage(message) | RunError::Setup(message) => f.write_str(message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_exits_with_2_and_setup_with_1_printing_just_the_message() {
        let usage = RunError::Usage("--bind-to x: expected core or none".into());
        assert_eq!(usage.exit_code(), 2);
        assert_eq!(usage.to_string(), "--bind-to x: expected core or none");
        let setup = RunError::Setup("cannot set up: boom".into());
        assert_eq!(setup.exit_code(), 1);
        assert_eq!(setup.to_string(), "cannot set up: boom");
    }
}
