//! `shmemrun`: starts the PEs of a shmem-core job on this host and supervises them.
//!
//! It listens on a TCP port for the PEs' rendezvous (see `bootstrap/wire.rs`), starts N copies
//! of the program with `SHMEM_RENDEZVOUS`, `SHMEM_PE`, `SHMEM_NPES`, `SHMEM_JOB_ID` and
//! `SHMEM_INIT_TIMEOUT` set, runs their start-up collectives, and ends the whole job when a PE
//! fails or the launcher is interrupted.

// The protocol and the server are shared with the library (which the binary does not depend
// on for them); the binary uses only part of the protocol module.
#[path = "../../bootstrap/server.rs"]
mod server;
#[allow(dead_code)]
#[path = "../../bootstrap/wire.rs"]
mod wire;

mod children;
mod events;
mod job;
mod output;
mod signals;

use std::ffi::OsString;
use std::io::{self, Read};
use std::time::Duration;

use clap::Parser;

use job::Job;
use server::Server;

/// Start N processing elements (PEs) of a shmem-core program and supervise them.
#[derive(Parser, Debug)]
#[command(
    name = "shmemrun",
    version,
    after_help = "\
Every PE gets SHMEM_RENDEZVOUS, SHMEM_PE, SHMEM_NPES, SHMEM_JOB_ID and SHMEM_INIT_TIMEOUT in its \
environment. Only PE 0 reads stdin.

When a PE exits with a non-zero status or is killed by a signal, shmemrun stops the other PEs \
(SIGTERM, then SIGKILL) and exits with that PE's status (128 + signal number for a signal). \
A PE that exits before finalizing while others wait for it also ends the job. SIGINT, SIGTERM, \
SIGHUP and SIGQUIT to shmemrun stop every PE; shmemrun then exits with 128 + the signal number.

Exit status: 0 when every PE exits with 0; 127 when PROGRAM cannot be found, 126 when it cannot \
be executed."
)]
struct Cli {
    /// Number of PEs to start.
    #[arg(
        short = 'n',
        long = "np",
        value_name = "N",
        default_value_t = 1,
        value_parser = clap::value_parser!(u32).range(1..=1_000_000)
    )]
    np: u32,

    /// Prefix every line a PE writes to stdout or stderr with "[PE i] ".
    #[arg(short, long)]
    prefix: bool,

    /// Seconds the PEs have to reach the start-up rendezvous (fractions allowed). Default:
    /// $SHMEM_INIT_TIMEOUT, else 60.
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    init_timeout: Option<String>,

    /// The program to run, and its arguments (which may start with '-').
    #[arg(
        value_name = "PROGRAM",
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    command: Vec<OsString>,
}

fn parse_timeout(s: &str) -> Result<String, String> {
    wire::parse_timeout_secs(s).map(|_| s.trim().to_string())
}

fn main() {
    let cli = Cli::parse();
    std::process::exit(run(&cli));
}

/// The timeout and its text for the PEs' environment.
fn init_timeout(cli: &Cli) -> Result<(Duration, String), String> {
    let text = match (&cli.init_timeout, std::env::var_os(wire::ENV_INIT_TIMEOUT)) {
        (Some(t), _) => t.clone(),
        (None, Some(v)) => v
            .into_string()
            .map_err(|v| format!("{}={v:?} is not valid UTF-8", wire::ENV_INIT_TIMEOUT))?,
        (None, None) => wire::DEFAULT_INIT_TIMEOUT_SECS.to_string(),
    };
    let d =
        wire::parse_timeout_secs(&text).map_err(|e| format!("{}: {e}", wire::ENV_INIT_TIMEOUT))?;
    Ok((d, text))
}

/// A job id that is different for every run.
fn random_id() -> u64 {
    let mut b = [0u8; 8];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_ok()
    {
        return u64::from_le_bytes(b);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ (u64::from(std::process::id()) << 32) ^ 0x9e37_79b9_7f4a_7c15
}

/// The text of an I/O error without Rust's " (os error N)" suffix.
fn os_message(e: &io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

fn run(cli: &Cli) -> i32 {
    let npes = cli.np as usize;
    let (timeout, timeout_text) = match init_timeout(cli) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("shmemrun: {e}");
            return 2;
        }
    };
    let setup = || -> io::Result<(events::Notifier, events::Inbox)> {
        let set = signals::block()?;
        let (notifier, inbox) = events::channel()?;
        signals::spawn_waiter(set, notifier.clone())?;
        Ok((notifier, inbox))
    };
    let (notifier, inbox) = match setup() {
        Ok(x) => x,
        Err(e) => {
            eprintln!("shmemrun: cannot set up: {e}");
            return 1;
        }
    };
    let job_id = random_id();
    let server = match Server::bind("127.0.0.1:0", job_id, npes, timeout) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("shmemrun: cannot listen for the PEs' rendezvous: {e}");
            return 1;
        }
    };
    let addr = match server.local_addr() {
        Ok(a) => a.to_string(),
        Err(e) => {
            eprintln!("shmemrun: cannot listen for the PEs' rendezvous: {e}");
            return 1;
        }
    };
    let (program, args) = match cli.command.split_first() {
        Some(x) => x,
        None => {
            eprintln!("shmemrun: no program given");
            return 2;
        }
    };
    let mut job = Job::new(server, inbox);
    for pe in 0..npes {
        let spec = children::Spec {
            program,
            args,
            env: vec![
                (wire::ENV_RENDEZVOUS, addr.clone()),
                (wire::ENV_PE, pe.to_string()),
                (wire::ENV_NPES, npes.to_string()),
                (wire::ENV_JOB_ID, format!("{job_id:016x}")),
                (wire::ENV_INIT_TIMEOUT, timeout_text.clone()),
            ],
            prefix: cli.prefix,
            pe,
        };
        match children::spawn(&spec, &notifier) {
            Ok((pid, outputs)) => job.add(pid, outputs),
            Err(e) => {
                let code = match e.kind() {
                    io::ErrorKind::NotFound => 127,
                    io::ErrorKind::PermissionDenied => 126,
                    _ if e.raw_os_error() == Some(libc::ENOEXEC) => 126,
                    _ => 1,
                };
                let which = if pe == 0 {
                    String::new()
                } else {
                    format!(" as PE {pe}")
                };
                eprintln!(
                    "shmemrun: cannot start {}{which}: {}",
                    program.to_string_lossy(),
                    os_message(&e)
                );
                job.fail(code);
                break;
            }
        }
    }
    job.run()
}
