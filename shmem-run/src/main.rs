//! `shmemrun`: starts the PEs of a shmem-core job, on this host or across hosts, and
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
//! With `--hosts` or `--hostfile` every PE is started through a start command (`--rsh`, ssh by
//! default) that runs `env VAR=VALUE... sh -c READ-THE-SECRET PROGRAM ARGS...` on its host; the
//! launcher listens on the addresses the hosts are told to reach it at and supervises the remote
//! PEs through their control connections (heartbeats, aborts; see `job.rs`).

mod children;
mod events;
mod hosts;
mod job;
mod output;
mod rsh;
mod signals;

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{ArgGroup, Parser};
use shmem_launch::auth::{self, Secret};
use shmem_launch::server::Server;
use shmem_launch::wire;

use job::{Job, Remote};

/// Start N processing elements (PEs) of a shmem-core program and supervise them.
#[derive(Parser, Debug)]
#[command(
    name = "shmemrun",
    version,
    group(ArgGroup::new("hostset").args(["hosts", "hostfile"])),
    after_help = "\
Every PE gets SHMEM_RENDEZVOUS, SHMEM_PE, SHMEM_NPES, SHMEM_JOB_ID, SHMEM_JOB_SECRET, \
SHMEM_INIT_TIMEOUT, SHMEM_NODE (the index of its host, from 0), SHMEM_NNODES (the number of \
hosts), SHMEM_LOCAL_RANK and SHMEM_LOCAL_SIZE (its index among its host's PEs, and their \
number) and SHMEM_BIND_TO (--bind-to) in its environment. Only PE 0 reads stdin.

Security: every job has a random 256-bit secret; every connection to shmemrun and every \
start-up record proves it (HMAC-SHA256), so other users cannot join or disturb the job. \
shmemrun listens on 127.0.0.1 (with --hosts: on the addresses the hosts reach it at; --bind to \
choose). The secret is never on a command line: local PEs inherit it, PEs on other hosts read \
it from the first line of the start command's stdin.

When a PE exits with a non-zero status or is killed by a signal, shmemrun stops the other PEs \
(SIGTERM, then SIGKILL) and exits with that PE's status (128 + signal number for a signal). \
A PE that called init and exits with status 0 without finalizing ends the job too (status 1), \
within a second, naming it. SIGINT, SIGTERM, SIGHUP and SIGQUIT to shmemrun, also while it is \
still starting PEs, stop every PE; shmemrun then exits with 128 + the signal number. More than \
64 PEs per core (--oversubscribe-limit) are refused.

Not detected on one host: a PE stopped with SIGSTOP (or in a debugger) or hung; the others \
wait for it. For detection give --heartbeat-timeout SECS: the PEs then send heartbeats and a PE \
silent for that long ends the job (as with --hosts, where this is always on).

Several hosts (--hosts, --hostfile): PEs are placed in blocks (host 0 runs PEs 0..k): up to \
each host's slots when slots are given, else as evenly as possible. Every PE is started with \
the start command (--rsh, $SHMEM_RSH, default \"ssh -o BatchMode=yes {host} {cmd}\"), which \
runs \"env -C DIR VAR=VALUE... PROGRAM ARGS...\" on the host: DIR is shmemrun's working \
directory, the variables are the ones above, every UCX_* and SHMEM_* variable of shmemrun's \
environment, and those given with -x. Each host is told the address from --rendezvous-addr, \
else the address of this machine on the route to that host, and shmemrun listens on just those \
addresses (--bind 0.0.0.0 for every interface, e.g. behind NAT). \
The start command must pass its standard input on (ssh does): its first line is the job secret. \
The start command's exit status stands for the PE's. Besides, every PE keeps a control \
connection to shmemrun with heartbeats every 0.5 s: a PE or host silent for the heartbeat \
timeout (--heartbeat-timeout, $SHMEM_HEARTBEAT_TIMEOUT, default 3 s) ends the job, naming the \
host and its PEs; to end the job shmemrun tells every PE over that connection (the PE prints \
the reason and exits), and a PE that loses shmemrun (connection closed, or silent for the \
timeout + 1 s) exits by itself, naming shmemrun's address.

Exit status: 0 when every PE exits with 0; 127 when PROGRAM (or the start command) cannot be \
found, 126 when it cannot be executed; 1 when the job fails for another reason (rendezvous, \
a silent host, a lost PE); 2 for a bad command line."
)]
struct Cli {
    /// Number of PEs to start. Default: 1; with --hosts or --hostfile, every slot when slots
    /// are given, else one per host.
    #[arg(
        short = 'n',
        long = "np",
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(1..=1_000_000)
    )]
    np: Option<u32>,

    /// Prefix every line a PE writes to stdout or stderr with "[PE i] ".
    #[arg(short, long)]
    prefix: bool,

    /// Seconds the PEs have to reach the start-up rendezvous (fractions allowed). Default:
    /// $SHMEM_INIT_TIMEOUT, else 60.
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    init_timeout: Option<String>,

    /// Run the PEs on these hosts, in blocks: HOST or HOST:SLOTS, comma-separated (e.g.
    /// "node1:4,node2:4"). Every host, this one included, is reached through the start command.
    #[arg(long, value_name = "HOST[:SLOTS],...")]
    hosts: Option<String>,

    /// Like --hosts, from a file: one host per line as HOST, HOST:SLOTS or HOST slots=SLOTS;
    /// '#' starts a comment.
    #[arg(long, value_name = "FILE")]
    hostfile: Option<PathBuf>,

    /// Start command template for a PE on a host: {host} becomes the host; {cmd} becomes the
    /// remote command as one shell-quoted word (for ssh); without {cmd} the remote command's
    /// words are appended. Default: $SHMEM_RSH, else "ssh -o BatchMode=yes {host} {cmd}".
    #[arg(long, value_name = "TEMPLATE", requires = "hostset")]
    rsh: Option<String>,

    /// The address (IPv4 or name) at which the hosts reach this machine for the rendezvous.
    /// Default: $SHMEM_RENDEZVOUS_ADDR, else for each host the local address of the route to
    /// it.
    #[arg(long, value_name = "IP", requires = "hostset")]
    rendezvous_addr: Option<String>,

    /// Seconds without a heartbeat after which a PE counts as gone (fractions allowed). Default
    /// with --hosts: $SHMEM_HEARTBEAT_TIMEOUT, else 3. On one host heartbeats are off unless
    /// this is given: then a stopped or hung PE ends the job too.
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    heartbeat_timeout: Option<String>,

    /// The address shmemrun listens on for its PEs, e.g. 0.0.0.0 for every interface. Default:
    /// 127.0.0.1; with --hosts, the addresses the hosts are told to reach it at.
    #[arg(long, value_name = "IP")]
    bind: Option<String>,

    /// Refuse to start more PEs than this per core: of this machine, and with --hosts of each
    /// host (taken to have as many cores as this machine).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 64,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    oversubscribe_limit: u32,

    /// "core": each PE binds itself to one CPU of its host at start-up, in order of its index
    /// among the host's PEs (within the CPUs shmemrun, or the remote command, may run on); on
    /// a host with more PEs than those CPUs, none is bound. "none": the scheduler places the
    /// PEs. Default: $SHMEM_BIND_TO, else core (as mpirun binds).
    #[arg(long, value_name = "core|none")]
    bind_to: Option<String>,

    /// Pass the variable NAME (with its value here, or VALUE) to every PE; repeatable. UCX_*
    /// and SHMEM_* variables are passed anyway.
    #[arg(short = 'x', value_name = "NAME[=VALUE]")]
    export: Vec<String>,

    /// The program to run, and its arguments (which may start with '-').
    #[arg(
        value_name = "PROGRAM",
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    command: Vec<OsString>,
}

/// Environment variable: the start command template (`--rsh`).
const ENV_RSH: &str = "SHMEM_RSH";
/// Environment variable: the rendezvous address for other hosts (`--rendezvous-addr`).
const ENV_RENDEZVOUS_ADDR: &str = "SHMEM_RENDEZVOUS_ADDR";
/// How much longer than the launcher a PE waits for a heartbeat before it gives up, so that the
/// launcher, which can name the silent host, normally speaks first.
const PE_HEARTBEAT_SLACK: Duration = Duration::from_secs(1);

fn parse_timeout(s: &str) -> Result<String, String> {
    wire::parse_timeout_secs(s).map(|_| s.trim().to_string())
}

fn main() {
    set_ucx_defaults();
    let cli = Cli::parse();
    std::process::exit(run(&cli));
}

/// UCX settings the PEs get unless the user set them (PEs inherit shmemrun's environment, and
/// PEs on other hosts get its UCX_* variables): over TCP, large transfers move in segments of
/// this size; UCX's 8 KiB default costs a round of progress per 8 KiB (tests-sos `bigget`, 16 MiB
/// gets between 4 PEs on 2 cores over `UCX_TLS=tcp,self`: 57 s, with 256 KiB 23 s). UCX 1.13
/// ignores these names in `ucp_config_modify`, so they travel in the environment.
const UCX_DEFAULTS: [(&str, &str); 2] = [
    ("UCX_TCP_TX_SEG_SIZE", "256k"),
    ("UCX_TCP_RX_SEG_SIZE", "256k"),
];

fn set_ucx_defaults() {
    for (name, value) in UCX_DEFAULTS {
        if std::env::var_os(name).is_none() {
            // SAFETY: the first thing `main` does, before shmemrun starts any thread: nothing
            // reads or writes the environment concurrently.
            unsafe { std::env::set_var(name, value) };
        }
    }
}

/// A setting from the command line, else from the environment variable `var`, else `default`;
/// with the text it came from.
fn setting(cli: &Option<String>, var: &str, default: &str) -> Result<String, String> {
    match (cli, std::env::var_os(var)) {
        (Some(t), _) => Ok(t.clone()),
        (None, Some(v)) => v
            .into_string()
            .map_err(|v| format!("{var}={v:?} is not valid UTF-8")),
        (None, None) => Ok(default.to_string()),
    }
}

/// The timeout and its text for the PEs' environment.
fn init_timeout(cli: &Cli) -> Result<(Duration, String), String> {
    let default = wire::DEFAULT_INIT_TIMEOUT_SECS.to_string();
    let text = setting(&cli.init_timeout, wire::ENV_INIT_TIMEOUT, &default)?;
    let d =
        wire::parse_timeout_secs(&text).map_err(|e| format!("{}: {e}", wire::ENV_INIT_TIMEOUT))?;
    Ok((d, text))
}

/// The variables shmemrun sets for every PE besides [`JOB_VARS`], which never go on a command
/// line.
const SECRET_VARS: [&str; 1] = [wire::ENV_JOB_SECRET];

/// The script that runs a remote PE: reads the job secret from the first line of stdin into the
/// environment, then runs the PE (`sh -c SCRIPT NAME PROGRAM ARGS...`).
const SECRET_SCRIPT: &str = "IFS= read -r SHMEM_JOB_SECRET || { echo \"shmemrun: no job secret \
     on standard input: the start command must pass its standard input to the remote command\" \
     >&2; exit 126; }; export SHMEM_JOB_SECRET; exec \"$@\"";

/// The variables shmemrun sets for every PE; -x may not set them and they are not forwarded.
const JOB_VARS: [&str; 10] = [
    wire::ENV_RENDEZVOUS,
    wire::ENV_PE,
    wire::ENV_NPES,
    wire::ENV_JOB_ID,
    wire::ENV_INIT_TIMEOUT,
    wire::ENV_NODE,
    wire::ENV_NNODES,
    wire::ENV_LOCAL_RANK,
    wire::ENV_LOCAL_SIZE,
    wire::ENV_BIND_TO,
];

/// `--bind-to` (or `$SHMEM_BIND_TO`, else `core`): `core` or `none`.
fn bind_to(cli: &Cli) -> Result<&'static str, String> {
    let text = setting(&cli.bind_to, wire::ENV_BIND_TO, "core")?;
    match text.trim() {
        "core" => Ok("core"),
        "none" => Ok("none"),
        _ => Err(format!(
            "--bind-to {text}: expected core or none (or {} is set to it)",
            wire::ENV_BIND_TO
        )),
    }
}

/// The `-x` variables as (name, value); `-x NAME` takes the value from shmemrun's environment.
fn exports(cli: &Cli) -> Result<Vec<(OsString, OsString)>, String> {
    let mut out = Vec::new();
    for x in &cli.export {
        let (name, value) = match x.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (x.as_str(), None),
        };
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
            && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
        if !valid {
            return Err(format!("-x {x}: {name:?} is not a variable name"));
        }
        if JOB_VARS.contains(&name) || SECRET_VARS.contains(&name) {
            return Err(format!("-x {x}: shmemrun sets {name} itself"));
        }
        let value = match value {
            Some(v) => OsString::from(v),
            None => std::env::var_os(name)
                .ok_or_else(|| format!("-x {name}: {name} is not set in shmemrun's environment"))?,
        };
        out.push((OsString::from(name), value));
    }
    Ok(out)
}

/// A job id that is different for every run (a label, not a secret).
fn random_id() -> u64 {
    let mut b = [0u8; 8];
    if auth::random_bytes(&mut b).is_ok() {
        return u64::from_le_bytes(b);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ (u64::from(std::process::id()) << 32) ^ 0x9e37_79b9_7f4a_7c15
}

/// The cores this process may run on.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Refuses `npes` PEs on one host of `cores` cores above `limit` per core; `host` names it.
fn check_oversubscription(npes: usize, cores: usize, limit: u32, host: &str) -> Result<(), String> {
    let most = cores.saturating_mul(limit as usize);
    if npes <= most {
        return Ok(());
    }
    Err(format!(
        "{npes} PEs on {host} with {cores} core{} would be {} PEs per core, above the limit \
         of {limit} (at most {most} PEs); pass --oversubscribe-limit N to allow more",
        if cores == 1 { "" } else { "s" },
        npes.div_ceil(cores)
    ))
}

/// The text of an I/O error without Rust's " (os error N)" suffix.
fn os_message(e: &io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// The exit code for a program or start command that cannot be started.
fn spawn_code(e: &io::Error) -> i32 {
    match e.kind() {
        io::ErrorKind::NotFound => 127,
        io::ErrorKind::PermissionDenied => 126,
        _ if e.raw_os_error() == Some(libc::ENOEXEC) => 126,
        _ => 1,
    }
}

fn run(cli: &Cli) -> i32 {
    // Signals first: a Ctrl-C from here on ends the job (and stops the spawning) in order.
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
    let (timeout, timeout_text) = match init_timeout(cli) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("shmemrun: {e}");
            return 2;
        }
    };
    let exports = match exports(cli) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("shmemrun: {e}");
            return 2;
        }
    };
    let Some((program, args)) = cli.command.split_first() else {
        eprintln!("shmemrun: no program given");
        return 2;
    };
    let secret = match Secret::generate() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("shmemrun: cannot make the job secret (getrandom): {e}");
            return 1;
        }
    };
    let bind_to = match bind_to(cli) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("shmemrun: {e}");
            return 2;
        }
    };
    let job = JobSpec {
        program,
        args,
        exports,
        timeout,
        timeout_text,
        id: random_id(),
        secret,
        prefix: cli.prefix,
        bind_to,
    };
    let multi = match multi_host(cli) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("shmemrun: {e}");
            return 2;
        }
    };
    let cores = cores();
    let limit = cli.oversubscribe_limit;
    let checked = match &multi {
        None => check_oversubscription(
            cli.np.map_or(1, |n| n as usize),
            cores,
            limit,
            "this machine",
        ),
        Some(m) => m.nodes.iter().try_for_each(|n| {
            check_oversubscription(
                n.pes.len(),
                cores,
                limit,
                &format!(
                    "host {} (taken to have as many cores as this machine)",
                    n.name
                ),
            )
        }),
    };
    if let Err(e) = checked {
        eprintln!("shmemrun: {e}");
        return 2;
    }
    let heartbeat = match local_heartbeat(cli) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("shmemrun: {e}");
            return 2;
        }
    };
    match multi {
        None => {
            let npes = cli.np.map_or(1, |n| n as usize);
            run_local(&job, npes, cli.bind.as_deref(), heartbeat, &notifier, inbox)
        }
        Some(m) => run_hosts(&job, &m, cli.bind.as_deref(), &notifier, inbox),
    }
}

/// The heartbeat timeout asked for a job on one host, if any.
fn local_heartbeat(cli: &Cli) -> Result<Option<Duration>, String> {
    let Some(text) = &cli.heartbeat_timeout else {
        return Ok(None);
    };
    let t = wire::parse_timeout_secs(text).map_err(|e| format!("--heartbeat-timeout: {e}"))?;
    if t < 2 * wire::HEARTBEAT_INTERVAL {
        return Err(format!(
            "--heartbeat-timeout: {text} s is too short: heartbeats come every {} s",
            wire::HEARTBEAT_INTERVAL.as_secs_f64()
        ));
    }
    Ok(Some(t))
}

/// What every PE of the job runs, and with which settings.
struct JobSpec<'a> {
    program: &'a OsString,
    args: &'a [OsString],
    exports: Vec<(OsString, OsString)>,
    timeout: Duration,
    timeout_text: String,
    id: u64,
    secret: Secret,
    prefix: bool,
    bind_to: &'static str,
}

/// Where a PE runs: its host's index and the number of hosts, its index among the job's PEs
/// on that host and their number.
struct Place {
    node: usize,
    nnodes: usize,
    local_rank: usize,
    local_size: usize,
}

impl JobSpec<'_> {
    /// The variables shmemrun sets for PE `pe` (in the order of [`JOB_VARS`]); not the secret.
    fn vars(
        &self,
        rendezvous: &str,
        pe: usize,
        npes: usize,
        at: Place,
    ) -> Vec<(OsString, OsString)> {
        [
            rendezvous.to_string(),
            pe.to_string(),
            npes.to_string(),
            format!("{:016x}", self.id),
            self.timeout_text.clone(),
            at.node.to_string(),
            at.nnodes.to_string(),
            at.local_rank.to_string(),
            at.local_size.to_string(),
            self.bind_to.to_string(),
        ]
        .into_iter()
        .zip(JOB_VARS)
        .map(|(v, k)| (OsString::from(k), OsString::from(v)))
        .collect()
    }
}

/// Binds the rendezvous server to `addr`, or says why not.
fn bind(addr: &str, job: &JobSpec<'_>, npes: usize) -> Result<Server, i32> {
    Server::bind(addr, job.id, job.secret.clone(), npes, job.timeout).map_err(|e| {
        eprintln!("shmemrun: cannot listen for the PEs' rendezvous on {addr}: {e}");
        1
    })
}

/// `host:port` for `ip`, with brackets for IPv6.
fn host_port(ip: &str, port: u16) -> String {
    if ip.contains(':') {
        format!("[{ip}]:{port}")
    } else {
        format!("{ip}:{port}")
    }
}

/// Tells the user how the start of many PEs goes, once it takes more than a second.
struct Progress {
    npes: usize,
    started: std::time::Instant,
    next: std::time::Instant,
    shown: bool,
}

impl Progress {
    fn new(npes: usize) -> Progress {
        let now = std::time::Instant::now();
        Progress {
            npes,
            started: now,
            next: now + Duration::from_secs(1),
            shown: false,
        }
    }

    /// `done` PEs have been started.
    fn tick(&mut self, done: usize) {
        let now = std::time::Instant::now();
        if now >= self.next && done < self.npes {
            self.next = now + Duration::from_secs(1);
            self.shown = true;
            eprintln!(
                "shmemrun: started {done} of {} PEs ({:.0} s)",
                self.npes,
                (now - self.started).as_secs_f64()
            );
        }
    }

    /// The start is over: `done` PEs started.
    fn finish(&self, done: usize) {
        if !self.shown {
            return;
        }
        let took = self.started.elapsed().as_secs_f64();
        if done == self.npes {
            eprintln!("shmemrun: started all {done} PEs in {took:.1} s");
        } else {
            eprintln!(
                "shmemrun: stopped starting PEs after {done} of {} ({took:.1} s)",
                self.npes
            );
        }
    }
}

/// All PEs on this host, as children of the launcher.
fn run_local(
    job: &JobSpec<'_>,
    npes: usize,
    bind_to: Option<&str>,
    heartbeat: Option<Duration>,
    notifier: &events::Notifier,
    inbox: events::Inbox,
) -> i32 {
    let ip = bind_to.unwrap_or("127.0.0.1");
    let mut server = match bind(&host_port(ip, 0), job, npes) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let port = match server.local_addr() {
        Ok(a) => a.port(),
        Err(e) => {
            eprintln!("shmemrun: cannot listen for the PEs' rendezvous: {e}");
            return 1;
        }
    };
    // The PEs connect to the address bound, or to loopback when every interface is.
    let reach = match ip {
        "0.0.0.0" => "127.0.0.1",
        "::" => "::1",
        other => other,
    };
    let addr = host_port(reach, port);
    if let Some(t) = heartbeat {
        server.set_heartbeat(wire::HEARTBEAT_INTERVAL, t, t + PE_HEARTBEAT_SLACK);
    }
    let mut run = Job::new(server, inbox, heartbeat, false);
    let secret = [(
        OsString::from(wire::ENV_JOB_SECRET),
        OsString::from(job.secret.to_hex()),
    )];
    let mut progress = Progress::new(npes);
    for pe in 0..npes {
        if run.interrupted() {
            break;
        }
        let at = Place {
            node: 0,
            nnodes: 1,
            local_rank: pe,
            local_size: npes,
        };
        let mut env = job.vars(&addr, pe, npes, at);
        env.extend(secret.iter().cloned());
        env.extend(job.exports.iter().cloned());
        let spec = children::Spec {
            program: job.program,
            args: job.args,
            env: &env,
            prefix: job.prefix,
            tail: None,
            pe,
            // Only PE 0 reads the launcher's stdin.
            input: if pe == 0 {
                children::Input::Launcher
            } else {
                children::Input::Null
            },
        };
        match children::spawn(&spec, notifier) {
            Ok((pid, outputs)) => run.add(pid, outputs, None),
            Err(e) => {
                let which = if pe == 0 {
                    String::new()
                } else {
                    format!(" as PE {pe}")
                };
                eprintln!(
                    "shmemrun: cannot start {}{which}: {}",
                    job.program.to_string_lossy(),
                    os_message(&e)
                );
                run.fail(spawn_code(&e), "shmemrun could not start every PE");
                break;
            }
        }
        progress.tick(pe + 1);
    }
    progress.finish(run.started());
    run.run()
}

/// The settings of a multi-host job.
struct MultiHost {
    nodes: Vec<hosts::Node>,
    template: rsh::Template,
    /// The rendezvous address for every node.
    reach: Vec<String>,
    heartbeat_timeout: Duration,
}

/// The multi-host settings, or `None` without --hosts and --hostfile.
fn multi_host(cli: &Cli) -> Result<Option<MultiHost>, String> {
    let specs = match (&cli.hosts, &cli.hostfile) {
        (Some(list), _) => hosts::parse_list(list)?,
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read the host file {}: {e}", path.display()))?;
            hosts::parse_hostfile(&path.display().to_string(), &text)?
        }
        (None, None) => return Ok(None),
    };
    let nodes = hosts::place(&specs, cli.np.map(|n| n as usize))?;
    let template_text = setting(&cli.rsh, ENV_RSH, rsh::DEFAULT_TEMPLATE)?;
    let template = rsh::Template::parse(&template_text).map_err(|e| format!("--rsh: {e}"))?;
    let given = match (&cli.rendezvous_addr, std::env::var_os(ENV_RENDEZVOUS_ADDR)) {
        (Some(a), _) => Some(a.clone()),
        (None, Some(v)) => Some(
            v.into_string()
                .map_err(|v| format!("{ENV_RENDEZVOUS_ADDR}={v:?} is not valid UTF-8"))?,
        ),
        (None, None) => None,
    };
    let reach = match given {
        Some(a) => {
            let a = a.trim().to_string();
            if a.is_empty() || a.contains(':') || a.contains(char::is_whitespace) {
                return Err(format!(
                    "--rendezvous-addr {a:?}: expected an IPv4 address or a host name of this \
                     machine"
                ));
            }
            vec![a; nodes.len()]
        }
        None => nodes
            .iter()
            .map(|n| hosts::reach_from(&n.name).map(|ip| ip.to_string()))
            .collect::<Result<_, _>>()?,
    };
    let default = wire::DEFAULT_HEARTBEAT_TIMEOUT_SECS.to_string();
    let text = setting(
        &cli.heartbeat_timeout,
        wire::ENV_HEARTBEAT_TIMEOUT,
        &default,
    )?;
    let heartbeat_timeout = wire::parse_timeout_secs(&text)
        .map_err(|e| format!("{}: {e}", wire::ENV_HEARTBEAT_TIMEOUT))?;
    if heartbeat_timeout < 2 * wire::HEARTBEAT_INTERVAL {
        return Err(format!(
            "{}: {text} s is too short: heartbeats come every {} s",
            wire::ENV_HEARTBEAT_TIMEOUT,
            wire::HEARTBEAT_INTERVAL.as_secs_f64()
        ));
    }
    Ok(Some(MultiHost {
        nodes,
        template,
        reach,
        heartbeat_timeout,
    }))
}

/// The UCX_* and SHMEM_* variables of shmemrun's environment, for the remote PEs (sorted, those
/// shmemrun sets itself left out).
fn forwarded_env() -> Vec<(OsString, OsString)> {
    let mut vars: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| {
            let k = k.to_string_lossy();
            (k.starts_with("UCX_") || k.starts_with("SHMEM_"))
                && !JOB_VARS.contains(&&*k)
                && !SECRET_VARS.contains(&&*k)
        })
        .collect();
    vars.sort();
    vars
}

/// Every PE through the start command on its host.
fn run_hosts(
    job: &JobSpec<'_>,
    m: &MultiHost,
    bind_to: Option<&str>,
    notifier: &events::Notifier,
    inbox: events::Inbox,
) -> i32 {
    let npes = m.nodes.last().map_or(0, |n| n.pes.end);
    // Listen where the hosts will connect: on each distinct address they are told (or on the
    // one --bind names), never on every interface unless asked.
    let mut ips: Vec<&str> = match bind_to {
        Some(ip) => vec![ip],
        None => m.reach.iter().map(String::as_str).collect(),
    };
    ips.sort_unstable();
    ips.dedup();
    let Some((first, rest)) = ips.split_first() else {
        eprintln!("shmemrun: no address to listen on");
        return 1;
    };
    let mut server = match bind(&host_port(first, 0), job, npes) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let mut ports = Vec::new();
    match server.local_addr() {
        Ok(a) => ports.push((first.to_string(), a.port())),
        Err(e) => {
            eprintln!("shmemrun: cannot listen for the PEs' rendezvous on {first}: {e}");
            return 1;
        }
    }
    for ip in rest {
        match server.listen_also(&host_port(ip, 0)) {
            Ok(a) => ports.push((ip.to_string(), a.port())),
            Err(e) => {
                eprintln!(
                    "shmemrun: cannot listen for the PEs' rendezvous on {ip}: {e}; pass --bind \
                     with an address of this machine (0.0.0.0 for every interface)"
                );
                return 1;
            }
        }
    }
    // With --bind, every host reaches the one listener at its own address; else each its own.
    let port_for = |reach: &str| {
        ports
            .iter()
            .find(|(ip, _)| bind_to.is_some() || ip == reach)
            .map_or(0, |p| p.1)
    };
    server.set_heartbeat(
        wire::HEARTBEAT_INTERVAL,
        m.heartbeat_timeout,
        m.heartbeat_timeout + PE_HEARTBEAT_SLACK,
    );
    let forwarded = forwarded_env();
    // The same directory on every host (shared file systems), as mpirun does; `env -C` fails
    // with a clear message where it does not exist.
    let cwd = std::env::current_dir().ok();
    let secret_line = format!("{}\n", job.secret.to_hex());
    let mut run = Job::new(server, inbox, Some(m.heartbeat_timeout), true);
    let mut progress = Progress::new(npes);
    'nodes: for (node, n) in m.nodes.iter().enumerate() {
        let addr = host_port(&m.reach[node], port_for(&m.reach[node]));
        for pe in n.pes.clone() {
            if run.interrupted() {
                break 'nodes;
            }
            let mut remote: Vec<OsString> = vec!["env".into()];
            if let Some(dir) = &cwd {
                remote.push("-C".into());
                remote.push(dir.clone().into_os_string());
            }
            let at = Place {
                node,
                nnodes: m.nodes.len(),
                local_rank: pe - n.pes.start,
                local_size: n.pes.len(),
            };
            let vars = job.vars(&addr, pe, npes, at);
            for (k, v) in vars.iter().chain(&forwarded).chain(&job.exports) {
                let mut kv = k.clone();
                kv.push("=");
                kv.push(v);
                remote.push(kv);
            }
            // The secret comes on stdin, never as an argument.
            remote.extend(["sh", "-c", SECRET_SCRIPT, "shmem-pe"].map(OsString::from));
            remote.push(job.program.clone());
            remote.extend(job.args.iter().cloned());
            let argv = m.template.command(&n.name, &remote);
            let command = rsh::display(&argv);
            let tail = Arc::new(output::Tail::default());
            let spec = children::Spec {
                program: OsStr::new(&argv[0]),
                args: &argv[1..],
                env: &[],
                prefix: job.prefix,
                tail: Some(tail.clone()),
                pe,
                // Only PE 0 reads the launcher's stdin, after the secret's line.
                input: children::Input::Secret {
                    first: secret_line.clone(),
                    then_launcher: pe == 0,
                },
            };
            match children::spawn(&spec, notifier) {
                Ok((pid, outputs)) => run.add(
                    pid,
                    outputs,
                    Some(Remote {
                        host: n.name.clone(),
                        node,
                        command,
                        tail,
                    }),
                ),
                Err(e) => {
                    let what = format!(
                        "cannot run the start command of PE {pe} on host {}: {}: {}",
                        n.name,
                        argv[0].to_string_lossy(),
                        os_message(&e)
                    );
                    eprintln!("shmemrun: {what}\nshmemrun:   start command: {command}");
                    run.fail(spawn_code(&e), &what);
                    break 'nodes;
                }
            }
            progress.tick(pe + 1);
        }
    }
    progress.finish(run.started());
    run.run()
}
