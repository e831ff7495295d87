//! The host agent: `shmemrun --host-agent -- PROGRAM ARGS...`, which `shmemrun --hosts` starts
//! once per host through the start command (as Open MPI's `orted`), instead of one start
//! command per PE.
//!
//! The agent reads the job secret from the first line of its standard input (never from a
//! command line), learns its share of the job from the variables the launcher gave its start
//! command (`SHMEM_RENDEZVOUS` is the launcher, `SHMEM_PE` the host's first PE,
//! `SHMEM_LOCAL_SIZE` the host's PE count, `SHMEM_NODE`, `SHMEM_JOB_ID`), opens its one
//! connection to the launcher and proves the secret ([`client::connect_agent`]; it checks the
//! launcher's proof too), and listens on an ephemeral port of 127.0.0.1. It then starts the
//! host's PEs with the job's variables, their own `SHMEM_PE` and `SHMEM_LOCAL_RANK`, the secret
//! in their environment and `SHMEM_RENDEZVOUS` pointing at its port, each with
//! `PR_SET_PDEATHSIG` so that they die with it. PE 0 reads the agent's standard input (the
//! launcher's, after the secret's line); the others read nothing.
//!
//! Every connection a PE opens to the agent becomes a virtual connection of the agent's
//! connection ([`wire`](shmem_launch::wire#the-host-agents-connection)): the agent relays whole
//! frames both ways, so the PEs' handshakes, collectives and heartbeats stay end to end with
//! the launcher. A local connection may send one hello of at most
//! [`MAX_HANDSHAKE_FRAME`](wire::MAX_HANDSHAKE_FRAME) bytes, which the agent checks against the
//! relayed challenge with the secret before it relays anything more; anything else is dropped on
//! the spot, and at most [`MAX_STRANGERS`] such connections are held at once. Relayed frames
//! keep the launcher's limits ([`MAX_FRAME`](wire::MAX_FRAME)).
//!
//! The PEs' stdout and stderr are read by the agent and written to its own, line by line, as
//! tagged records ([`output::record`](crate::output::record)) that the launcher splits per PE.
//! The agent reports every PE's end ([`Msg::Exited`](wire::Msg::Exited)) after relaying what its
//! connections still held; it ends its PEs (SIGTERM, then SIGKILL) on
//! [`Msg::Stop`](wire::Msg::Stop) or when its connection to the launcher ends, and exits when
//! they are gone.

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::io::{self, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use shmem_launch::auth::Secret;
use shmem_launch::client;
use shmem_launch::wire::{self, FrameBuf, max_table_frame};

/// The hidden first argument that runs the agent.
pub const FLAG: &str = "--host-agent";
/// The agent's exit status when it cannot reach the launcher or prove the secret to it (as a
/// PE whose `init` cannot reach it exits in the tests' PE program, so that either reads alike).
pub const EXIT_UNREACHABLE: i32 = 3;
/// Connections to the agent's port that have not proved the secret yet, held at most at once;
/// later ones are closed at once.
pub const MAX_STRANGERS: usize = 64;
/// Time a connection to the agent's port has to send its hello.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Time the agent has to reach the launcher.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Time between SIGTERM and SIGKILL when the agent ends its PEs.
const KILL_GRACE: Duration = Duration::from_millis(300);
/// Bytes waiting to go to the launcher above which the agent stops reading its PEs'
/// connections until they are out.
const UPSTREAM_HIGH: usize = 8 << 20;
/// Time the agent waits, after its PEs are gone, for their output and for the launcher to
/// take in its last reports.
const LINGER: Duration = Duration::from_secs(1);
/// How often the agent looks for PEs that exited (it also wakes on every socket event).
const REAP_EVERY: Duration = Duration::from_millis(20);
/// Bytes of its PEs' output the agent holds for its stdout or stderr; above it, it stops
/// reading the PEs' pipes (they wait, as they would on a slow terminal), so that a slow reader
/// never stops the relay of the host's heartbeats.
const OUTPUT_HIGH: usize = 1 << 20;

/// Says `shmemrun agent on node N: ...` on stderr as one line (which reaches the launcher's
/// stderr untagged, and its report of the host).
macro_rules! agent_say {
    ($node:expr, $($arg:tt)*) => {{
        let line = format!("shmemrun: host agent of node {}: {}\n", $node, format!($($arg)*));
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }};
}

// The parts, after `agent_say!`, which they use: starting and ending the PEs in `pes.rs`; the
// PEs' connections to the agent's port in `locals.rs`; the connection to the launcher in
// `upstream.rs`; the PEs' output in `forward.rs`; the main loop in `run.rs`.
mod forward;
mod locals;
mod pes;
mod run;
mod upstream;

pub use pes::decode_status;

use forward::Sink;
use locals::Local;
use pes::Pe;

/// Runs the agent with the arguments after [`FLAG`]; returns its exit status.
pub fn main(args: &[OsString]) -> i32 {
    let args = match args.first() {
        Some(a) if a == "--" => &args[1..],
        _ => args,
    };
    let node = std::env::var(wire::ENV_NODE).unwrap_or_else(|_| "?".into());
    match Agent::start(args) {
        Ok(mut agent) => agent.run(),
        Err((code, why)) => {
            agent_say!(node, "{why}");
            code
        }
    }
}

/// Reads the first line of stdin, one byte at a time (what follows is PE 0's).
fn read_secret_line() -> io::Result<String> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        // SAFETY: reads at most one byte into `byte`, a live, writable one-byte buffer.
        let n = unsafe { libc::read(0, byte.as_mut_ptr().cast(), 1) };
        match n {
            1 if byte[0] == b'\n' => break,
            1 if line.len() < 256 => line.push(byte[0]),
            1 => return Err(io::Error::other("the first line is too long")),
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    String::from_utf8(line).map_err(|_| io::Error::other("not UTF-8"))
}

fn var(name: &str) -> Result<String, (i32, String)> {
    std::env::var(name).map_err(|_| (126, format!("{name} is not set: run by shmemrun only")))
}

fn number(name: &str) -> Result<usize, (i32, String)> {
    let v = var(name)?;
    v.parse()
        .map_err(|_| (126, format!("{name}={v:?} is not a number")))
}

/// The agent's state.
struct Agent {
    node: usize,
    first_pe: usize,
    /// `OMP_NUM_THREADS` for the PEs, unless the job's environment sets it.
    threads: Option<(OsString, OsString)>,
    secret: Secret,
    job_id: u64,
    launcher: String,
    up: Option<TcpStream>,
    up_frames: FrameBuf,
    up_out: VecDeque<u8>,
    listener: TcpListener,
    locals: HashMap<u32, Local>,
    next_id: u32,
    pes: Vec<Pe>,
    /// When to SIGKILL the PEs left (after a SIGTERM).
    kill_at: Option<Instant>,
    /// The PEs were told to end.
    stopping: bool,
    /// The agent's exit status: the first failing PE's.
    status: i32,
    /// Its stdout and stderr.
    sinks: [Sink; 2],
}

impl Agent {
    fn start(args: &[OsString]) -> Result<Agent, (i32, String)> {
        let node = number(wire::ENV_NODE)?;
        let Some((program, pargs)) = args.split_first() else {
            return Err((2, "no program given".into()));
        };
        let secret_line = read_secret_line().map_err(|e| {
            (
                126,
                format!(
                    "no job secret on standard input ({e}): the start command must pass its \
                     standard input to the remote command"
                ),
            )
        })?;
        let secret = Secret::from_hex(&secret_line)
            .map_err(|e| (126, format!("the job secret on standard input: {e}")))?;
        let launcher = var(wire::ENV_RENDEZVOUS)?;
        let first_pe = number(wire::ENV_PE)?;
        let count = number(wire::ENV_LOCAL_SIZE)?;
        let npes = number(wire::ENV_NPES)?;
        let id_text = var(wire::ENV_JOB_ID)?;
        let job_id = u64::from_str_radix(&id_text, 16).map_err(|_| {
            (
                126,
                format!("{}={id_text:?} is not a job id", wire::ENV_JOB_ID),
            )
        })?;
        let listener = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .map_err(|e| (1, format!("cannot listen on 127.0.0.1 for the PEs: {e}")))?;
        let local = listener
            .local_addr()
            .map_err(|e| (1, format!("cannot listen on 127.0.0.1 for the PEs: {e}")))?;
        let up = client::connect_agent(&launcher, &secret, job_id, node as u32, CONNECT_TIMEOUT)
            .map_err(|e| (EXIT_UNREACHABLE, e))?;
        up.set_nonblocking(true)
            .map_err(|e| (1, format!("cannot use the connection to {launcher}: {e}")))?;
        let mut agent = Agent {
            node,
            first_pe,
            threads: crate::spec::threads_default(count),
            secret,
            job_id,
            launcher,
            up: Some(up),
            up_frames: FrameBuf::with_limit(max_table_frame(npes) + wire::RELAY_HEADER),
            up_out: VecDeque::new(),
            listener,
            locals: HashMap::new(),
            next_id: 0,
            pes: Vec::new(),
            kill_at: None,
            stopping: false,
            status: 0,
            sinks: [Sink::new(1), Sink::new(2)],
        };
        let rendezvous = local.to_string();
        for rank in 0..count {
            agent.spawn(program, pargs, rank, &rendezvous);
        }
        Ok(agent)
    }
}
