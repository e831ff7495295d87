//! The environment `shmemrun` gives every PE (and the settings the launcher itself reads), with
//! their defaults and the parsing of a timeout in seconds.

/// Environment variable: `host:port` of the launcher's rendezvous server.
pub const ENV_RENDEZVOUS: &str = "SHMEM_RENDEZVOUS";
/// Environment variable: this process's PE number.
pub const ENV_PE: &str = "SHMEM_PE";
/// Environment variable: the number of PEs in the job.
pub const ENV_NPES: &str = "SHMEM_NPES";
/// Environment variable: the job id (hexadecimal `u64`), which the launcher checks on hello. A
/// label, not a secret: it may appear on command lines.
pub const ENV_JOB_ID: &str = "SHMEM_JOB_ID";
/// Environment variable: the job secret, as [`Secret::to_hex`](crate::auth::Secret::to_hex)
/// writes it. Never on a command line: local PEs inherit it, PEs on other hosts read it from the
/// first line of their start command's standard input.
pub const ENV_JOB_SECRET: &str = "SHMEM_JOB_SECRET";
/// Environment variable: the rendezvous timeout in seconds (decimal, fractions allowed).
pub const ENV_INIT_TIMEOUT: &str = "SHMEM_INIT_TIMEOUT";
/// The rendezvous timeout when `SHMEM_INIT_TIMEOUT` is not set, in seconds.
pub const DEFAULT_INIT_TIMEOUT_SECS: f64 = 60.0;
/// Environment variable: the index of this PE's host (node) in the job, from 0.
pub const ENV_NODE: &str = "SHMEM_NODE";
/// Environment variable: the number of hosts (nodes) the job runs on.
pub const ENV_NNODES: &str = "SHMEM_NNODES";
/// Environment variable: this PE's index among the job's PEs on its host, from 0.
pub const ENV_LOCAL_RANK: &str = "SHMEM_LOCAL_RANK";
/// Environment variable: the number of the job's PEs on this PE's host.
pub const ENV_LOCAL_SIZE: &str = "SHMEM_LOCAL_SIZE";
/// Environment variable: `core` or `none`. For the launcher, the default of `shmemrun
/// --bind-to`; for a PE, whether it binds itself to one core at start-up (see
/// [`crate::affinity`]). A PE without it does not bind.
pub const ENV_BIND_TO: &str = "SHMEM_BIND_TO";
/// Environment variable (launcher): seconds without a heartbeat after which the launcher counts
/// a PE on another host as gone (also `shmemrun --heartbeat-timeout`).
pub const ENV_HEARTBEAT_TIMEOUT: &str = "SHMEM_HEARTBEAT_TIMEOUT";
/// The heartbeat timeout when `SHMEM_HEARTBEAT_TIMEOUT` is not set, in seconds.
pub const DEFAULT_HEARTBEAT_TIMEOUT_SECS: f64 = 3.0;
/// Time between heartbeats on the control connection of a multi-host job.
pub const HEARTBEAT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(500);

/// Parses a timeout in seconds (`"60"`, `"0.5"`), as in `SHMEM_INIT_TIMEOUT` and `--init-timeout`.
pub fn parse_timeout_secs(s: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    // Below a millisecond a timeout would round to nothing (1e-91 became a zero timeout: found
    // by the settings fuzz target).
    if !secs.is_finite() || !(1e-3..=1e9).contains(&secs) {
        return Err(format!(
            "{s:?} must be a number of seconds from 0.001 to 1000000000"
        ));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::pe_list;

    #[test]
    fn timeouts_parse() {
        assert_eq!(parse_timeout_secs("60").unwrap().as_secs(), 60);
        assert_eq!(parse_timeout_secs(" 0.25 ").unwrap().as_millis(), 250);
        for bad in ["", "x", "0", "-1", "inf", "NaN", "1e-91", "0.0009", "2e9"] {
            assert!(parse_timeout_secs(bad).is_err(), "{bad}");
        }
        // The smallest timeout is a millisecond, not one that rounds to zero.
        assert_eq!(parse_timeout_secs("0.001").unwrap().as_millis(), 1);
        assert_eq!(pe_list(&[2, 5]), "2, 5");
    }
}
