//! `shmemrun` (also built as `oshrun`, the name OpenSHMEM users type): starts the PEs of a shmem-core job, on this host or across hosts, and
//! supervises them.
//!
//! It listens on a TCP port for the PEs' rendezvous (`shmem_launch::server`; the protocol is
//! `shmem_launch::wire`), starts N copies of the program with `SHMEM_RENDEZVOUS`, `SHMEM_PE`,
//! `SHMEM_NPES`, `SHMEM_JOB_ID`, `SHMEM_JOB_SECRET`, `SHMEM_INIT_TIMEOUT`, `SHMEM_NODE`,
//! `SHMEM_NNODES`, `SHMEM_LOCAL_RANK`, `SHMEM_LOCAL_SIZE` and `SHMEM_BIND_TO` set, runs their
//! start-up collectives, and ends the whole job when a PE fails or the launcher is interrupted.
//! The PEs bind themselves to cores at start-up (`--bind-to core`, the default) unless their
//! host has more PEs than CPUs.
//!
//! Every job has a random secret (`shmem_launch::auth`) that only its PEs know: local PEs get it
//! in their environment, PEs on other hosts on the first line of their start command's standard
//! input. It is never on a command line.
//!
//! With `--hosts` or `--hostfile` every host is started through a start command (`--rsh`, ssh
//! by default) that runs `env VAR=VALUE... SHMEMRUN --host-agent -- PROGRAM ARGS...` there: the
//! host agent (`agent/`), which starts the host's PEs and relays their connections over its
//! one connection to the launcher (with `--launch-agent off`, every PE is started through a
//! start command of its own, `env VAR=VALUE... sh -c READ-THE-SECRET PROGRAM ARGS...`); the
//! launcher listens on the addresses the hosts are told to reach it at and supervises the remote
//! PEs through their control connections (heartbeats, aborts; see `job.rs`).
//!
//! The library is the launcher itself, for its two binaries ([`main`]); it has no other API.
//!
//! Where things are: the command line in `cli.rs`; what the PEs are given (settings, their
//! variables, the secret's way to them) in `spec.rs`; the two run paths in `local.rs` (one
//! host) and `remote.rs` (several hosts), with what they share in `start.rs`; the host agent in
//! `agent/`; the main loop
//! that supervises a running job in `job.rs`; set-up failures and their exit statuses in
//! `error.rs`, printed in one place, [`main`].
#![deny(missing_docs)]

mod agent;
mod children;
mod cli;
mod error;
mod events;
mod hosts;
mod job;
mod local;
mod oom;
mod output;
mod remote;
mod rsh;
mod say;
mod signals;
mod spec;
mod start;

/// Entry points for the fuzz targets (`fuzz/` in the repository): the parsers of `--hosts`,
/// `--hostfile` and `--rsh`/`SHMEM_RSH`, and the placement of PEs on hosts. Not part of the
/// API: they may change or go in any release.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::hosts::{HostSpec, Node, parse_hostfile, parse_list, place};
    pub use crate::rsh::Template;
}

use std::io;

use cli::Cli;
use error::RunError;
use spec::JobSpec;

/// The launcher's `main`, for its two binaries (`shmemrun` and `oshrun`): parses the command
/// line, runs the job and exits with the job's status. The one place where a set-up failure
/// (a `RunError`) is printed and turned into the exit status.
pub fn main() -> ! {
    main_with_args(std::env::args_os().collect())
}

/// [`main`] with the command line `args` (`args[0]` is the command's name) instead of the
/// process's: for a launcher started from another program (the Python package's `shmemrun`
/// script, which runs inside the interpreter).
pub fn main_with_args(args: Vec<std::ffi::OsString>) -> ! {
    say::set_prog(args.first().map(|a| a.as_os_str()));
    // The host agent, which `shmemrun --hosts` starts on every host (hidden from --help).
    if args.get(1).is_some_and(|a| a == agent::FLAG) {
        std::process::exit(agent::main(&args[2..]));
    }
    spec::set_ucx_defaults();
    let cli = cli::parse(args);
    let code = run(&cli).unwrap_or_else(|e| {
        say::say_args(format_args!("{e}"));
        e.exit_code()
    });
    std::process::exit(code);
}

/// Runs the job `cli` asks for: sets up, checks the settings, then runs the PEs on this host or
/// across hosts. Returns the launcher's exit status; a failure before the PEs start is a
/// [`RunError`], which `main` prints.
fn run(cli: &Cli) -> Result<i32, RunError> {
    // Signals first: a Ctrl-C from here on ends the job (and stops the spawning) in order.
    let (notifier, inbox) =
        watch_signals().map_err(|e| RunError::Setup(format!("cannot set up: {e}")))?;
    let job = JobSpec::new(cli)?;
    let multi = remote::multi_host(cli).map_err(RunError::Usage)?;
    let npes = cli.np.map_or(1, |n| n as usize);
    let (cores, limit) = (spec::cores(), cli.oversubscribe_limit);
    match &multi {
        None => spec::check_oversubscription(npes, cores, limit, "this machine"),
        Some(m) => m.check_oversubscription(cores, limit),
    }
    .map_err(RunError::Usage)?;
    let holders = multi
        .as_ref()
        .map_or(start::Holders::Pes(npes), remote::MultiHost::fd_holders);
    start::raise_fd_limit(holders)?;
    match multi {
        None => {
            let heartbeat = local::heartbeat(cli).map_err(RunError::Usage)?;
            local::run(&job, npes, cli.bind.as_deref(), heartbeat, &notifier, inbox)
        }
        Some(m) => remote::run(&job, &m, cli.bind.as_deref(), &notifier, inbox),
    }
}

/// Blocks the signals that end the job and starts the thread that hands them to the main loop
/// as events; returns the two ends of the event channel.
fn watch_signals() -> io::Result<(events::Notifier, events::Inbox)> {
    let set = signals::block()?;
    let (notifier, inbox) = events::channel()?;
    signals::spawn_waiter(set, notifier.clone())?;
    Ok((notifier, inbox))
}
