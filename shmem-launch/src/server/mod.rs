//! The launcher's rendezvous server: accepts the PEs' connections, runs their collectives and
//! watches for PEs that leave while others wait.
//!
//! It also serves the PEs' control connections (see [`wire`](crate::wire)): it welcomes them,
//! exchanges heartbeats when [`Server::set_heartbeat`] asked for them, reports PEs that fell
//! silent or dropped the connection, and sends [`Server::abort_all`]'s verdict.
//!
//! It is a single-threaded state machine driven by [`Server::poll`]; the caller owns the loop,
//! so `shmemrun` can wait on the sockets and on its own wake-up descriptor at once. The crate's
//! unit tests run a real server in-process against real [`client`](crate::client) connections.
//!
//! The server only reports ([`Notice`]) and answers PEs; killing processes is the caller's job.
//!
//! # Untrusted connections
//!
//! Anyone who can reach the port can connect. The server sends every new connection a challenge
//! and reads nothing from it but one small frame (at most [`MAX_HANDSHAKE_FRAME`] bytes): a hello
//! whose MAC proves the job secret ([`crate::auth`]). A connection that sends anything
//! else, a bad MAC, or nothing within [`HANDSHAKE_TIMEOUT`] is closed at once and learns nothing
//! of the job. Authenticated connections may send frames up to [`MAX_FRAME`]; one that sends a
//! bad frame, stalls in the middle of one for [`STALL_TIMEOUT`], or would take the input
//! buffered across all connections over [`MAX_BUFFERED`] is dropped. When `accept` fails (out of
//! file descriptors) the server stops accepting for [`ACCEPT_BACKOFF`] and reports it once.

// Where things are: the server's round in `poll.rs`; one connection (TCP, or relayed by a host
// agent) with its buffers in `conn.rs`; new connections (accepting, checking their proofs,
// refusing, rejecting) in `admit.rs`; a PE's rendezvous connection in `pes.rs`, and the
// completion of the collectives in `collective.rs`; the control connections (welcome,
// heartbeats, silence, abort) in `control.rs`; the host agents' connections and their virtual
// connections in `agents.rs`; PEs that left or never came in `failures.rs`. The limits and
// the server's state are here.
mod admit;
mod agents;
mod collective;
mod conn;
mod control;
mod failures;
mod pes;
mod poll;

use std::io;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::auth::Secret;
use crate::wire::{CollectiveKind, MAX_FRAME, MAX_HANDSHAKE_FRAME, Msg, secs};

use agents::Agent;
use collective::SharedRound;
use conn::Conn;

/// Time a new connection has to send its hello (the rendezvous timeout when that is shorter).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Time an authenticated connection may sit in the middle of a frame before it is dropped.
pub const STALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Most bytes of incomplete frames buffered across all connections; the connection whose input
/// would take the total over it is dropped. Real PEs send one record of a few KiB at a time.
pub const MAX_BUFFERED: usize = 64 << 20;
/// How long a PE's connection that the server has answered with an error stays open, its write
/// side shut, reading and dropping what the PE still sends: closing at once with that input
/// unread would make the kernel reset the connection, and a reset can destroy the error frame
/// before the PE reads it (seen: "Connection reset by peer" instead of the reason).
const LINGER: Duration = Duration::from_secs(1);
/// Reads (of 4 KiB) that one round of the server spends on one lingering connection.
const LINGER_READS: usize = 16;
/// Most connections lingering at once: refused strangers beyond it are closed at once, so that
/// a flood of bad hellos cannot hold the server's descriptors.
const MAX_LINGERING: usize = 64;
/// Bytes a refused stranger may still send while it lingers (a PE's first record is a few KiB).
const REFUSED_DRAIN: usize = 64 * 1024;

/// Pause of the accept loop after `accept` failed (e.g. `EMFILE`: out of file descriptors).
pub const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);
/// A connection holding more than this of an incomplete frame is the one dropped when the total
/// goes over [`MAX_BUFFERED`].
const BIG_PARTIAL: usize = 64 * 1024;
/// Longest text in an error or abort sent to a PE (longer ones are cut).
const MAX_DETAIL: usize = 16 * 1024;
/// Most bytes an agent may have relayed on one virtual connection that the server has not read
/// yet: a hello and a first record behind it (the agent relays whole frames only, each within
/// the limits; the server reads a virtual connection as it reads a TCP one). A virtual
/// connection that would hold more is closed.
pub const MAX_RELAYED: usize = 2 * (MAX_FRAME + 4) + MAX_HANDSHAKE_FRAME;
/// Virtual connections an agent may hold open beyond two per PE of its host (strangers on its
/// local port, until the agent drops them).
const AGENT_SPARE_CONNS: usize = 64;
/// Rejected connections reported one by one; later ones are counted silently.
const REPORTED_REJECTIONS: u64 = 5;

/// `text`, cut to [`MAX_DETAIL`] bytes at a character boundary.
fn clip(text: &str) -> String {
    if text.len() <= MAX_DETAIL {
        return text.to_string();
    }
    let mut end = MAX_DETAIL;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

fn over_budget() -> String {
    format!(
        "the launcher's input buffers are full ({} MiB across all connections); dropped the \
         connection",
        MAX_BUFFERED >> 20
    )
}

fn stalled(limit: Duration) -> String {
    format!(
        "stalled in the middle of a frame for {}; dropped the connection",
        secs(limit)
    )
}

/// Binds a nonblocking listener to `addr`.
fn listen(addr: &str) -> io::Result<TcpListener> {
    let mut last = None;
    for a in addr.to_socket_addrs()? {
        match TcpListener::bind(a) {
            Ok(l) => {
                l.set_nonblocking(true)?;
                return Ok(l);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        io::Error::new(io::ErrorKind::NotFound, "the name resolves to no address")
    }))
}

fn error_frame(code: u8, detail: &str) -> Vec<u8> {
    Msg::Error {
        code,
        detail: clip(detail),
    }
    .encode()
}

/// Something the caller should know about; returned by [`Server::poll`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// The rendezvous timed out; the connected PEs have been sent the error. `detail` names the
    /// missing PEs. Only reported when at least one PE had connected.
    RendezvousTimeout {
        /// E.g. "PEs 2, 5 of 8 did not reach the rendezvous within 10 s".
        detail: String,
    },
    /// A PE left (finalized, exited, closed its connection) while others wait in a collective
    /// it has not joined: they can never be released. [`Server::stranded`] describes it;
    /// [`Server::abort`] tells the waiters. Reported once per collective.
    Stranded,
    /// A connection was rejected or a PE broke the protocol (for the launcher's log).
    Warning(String),
    /// PE `pe` called `global_exit(status)`: the caller should end the job with `status`.
    /// The PE has been answered.
    GlobalExit {
        /// The PE that asked.
        pe: usize,
        /// The exit status it asked for.
        status: i32,
    },
    /// Nothing arrived on PE `pe`'s control connection for longer than the heartbeat timeout
    /// (only with [`Server::set_heartbeat`]). Reported once per PE.
    Silent {
        /// The silent PE.
        pe: usize,
        /// How long it has been silent.
        silent_for: Duration,
    },
    /// PE `pe`'s control connection ended (closed, reset, protocol error) before the PE
    /// finalized and before the caller reported its exit: the PE or its host is probably gone.
    ControlLost {
        /// The PE.
        pe: usize,
        /// What happened to the connection.
        why: String,
    },
    /// The host agent of PE `pe`'s node reports that the PE (process `pid` there) ended with
    /// the wait status `status` (as `waitpid` gives it). Everything the PE's connections held
    /// has been taken in; the caller reports the exit with [`Server::pe_exited`].
    Exited {
        /// The PE.
        pe: usize,
        /// Its process id on its host.
        pid: u32,
        /// The raw wait status.
        status: i32,
    },
}

/// What the server knows about one PE.
#[derive(Debug, Default)]
struct Slot {
    /// The PE's connection, after its hello and until it closes.
    conn: Option<Conn>,
    /// The PE said hello at some point.
    hello: bool,
    /// The PE sent `Finalize`.
    finalized: bool,
    /// The PE can no longer take part: its connection closed or broke the protocol, or its
    /// process exited.
    gone: bool,
    /// The launcher saw the PE's process exit.
    exited: bool,
    /// Its contribution to the current collective.
    arrived: Option<(CollectiveKind, Vec<u8>)>,
    /// The PE's control connection, after its control hello and until it closes.
    control: Option<Conn>,
    /// The PE opened its control connection at some point.
    control_hello: bool,
    /// The PE's pid on its host, from its control hello.
    pid: Option<u32>,
    /// When something last arrived on the control connection.
    heard: Option<Instant>,
    /// Its silence has been reported.
    silent_reported: bool,
}

/// Heartbeat settings of a multi-host job.
#[derive(Debug, Clone, Copy)]
struct Heartbeat {
    interval: Duration,
    /// Silence after which the launcher reports a PE.
    timeout: Duration,
    /// Silence after which a PE gives up on the launcher (sent in the welcome).
    pe_timeout: Duration,
}

/// The rendezvous server of one job.
#[derive(Debug)]
pub struct Server {
    listeners: Vec<TcpListener>,
    job_id: u64,
    secret: Secret,
    /// While set, `accept` is not tried (it failed; see [`ACCEPT_BACKOFF`]).
    accept_paused_until: Option<Instant>,
    /// `accept` failures so far (the first one is reported).
    accept_failures: u64,
    /// Connections rejected so far (the first [`REPORTED_REJECTIONS`] are reported).
    rejections: u64,
    /// Bytes of incomplete frames buffered across connections (recounted every round).
    buffered: usize,
    /// [`HANDSHAKE_TIMEOUT`] unless [`Server::set_timeouts`] changed it.
    handshake_timeout: Duration,
    /// [`STALL_TIMEOUT`] unless [`Server::set_timeouts`] changed it.
    stall_timeout: Duration,
    timeout: Duration,
    started: Instant,
    /// Set when the rendezvous timed out: the error every (late) PE receives.
    timeout_detail: Option<String>,
    /// Accepted connections that have not said hello yet.
    pending: Vec<Conn>,
    /// Connections answered with an error, closing (see [`LINGER`]): rejected PEs, and refused
    /// strangers up to [`MAX_LINGERING`].
    closing: Vec<(Conn, Instant, usize)>,
    slots: Vec<Slot>,
    /// Number of the collective being gathered.
    epoch: u64,
    stranded_reported: bool,
    notices: Vec<Notice>,
    /// `None`: control connections without heartbeats.
    heartbeat: Option<Heartbeat>,
    /// When to send the next heartbeats.
    next_beat: Instant,
    /// The abort of [`Server::abort_all`], for control connections that open later.
    abort_frame: Option<Vec<u8>>,
    /// The node of every PE ([`Server::set_nodes`]); `None`: every PE gets every table.
    nodes: Option<Vec<usize>>,
    /// The last shared allgather: its table, and the PEs waiting for their leader.
    shared: Option<SharedRound>,
    /// Bytes of tables sent so far.
    table_bytes: u64,
    /// The host agents' connections, by node (see [`wire`](crate::wire)).
    agents: Vec<Option<Agent>>,
    /// Which nodes' agents said hello.
    agent_hello: Vec<bool>,
}

impl Server {
    /// Listens on `addr` (e.g. `127.0.0.1:0`) for the `npes` PEs of job `job_id`, who prove
    /// that they hold `secret`; the rendezvous must complete within `timeout` from now.
    pub fn bind(
        addr: &str,
        job_id: u64,
        secret: Secret,
        npes: usize,
        timeout: Duration,
    ) -> io::Result<Server> {
        let listener = listen(addr)?;
        Ok(Server {
            listeners: vec![listener],
            job_id,
            secret,
            accept_paused_until: None,
            accept_failures: 0,
            rejections: 0,
            buffered: 0,
            handshake_timeout: HANDSHAKE_TIMEOUT,
            stall_timeout: STALL_TIMEOUT,
            timeout,
            started: Instant::now(),
            timeout_detail: None,
            pending: Vec::new(),
            closing: Vec::new(),
            slots: (0..npes).map(|_| Slot::default()).collect(),
            epoch: 0,
            stranded_reported: false,
            notices: Vec::new(),
            heartbeat: None,
            next_beat: Instant::now(),
            abort_frame: None,
            nodes: None,
            shared: None,
            table_bytes: 0,
            agents: Vec::new(),
            agent_hello: Vec::new(),
        })
    }

    /// Tells the server the node (host) of every PE, `nodes[pe]`, so that a shared allgather
    /// ([`CollectiveKind::SharedAllgather`]) sends its table once per node (see
    /// [`crate::table`]). Fails when `nodes` does not have one entry per PE.
    pub fn set_nodes(&mut self, nodes: Vec<usize>) -> io::Result<()> {
        if nodes.len() != self.npes() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} nodes given for {} PEs", nodes.len(), self.npes()),
            ));
        }
        let nnodes = nodes.iter().max().map_or(0, |m| m + 1);
        self.agents = (0..nnodes).map(|_| None).collect();
        self.agent_hello = vec![false; nnodes];
        self.nodes = Some(nodes);
        Ok(())
    }

    /// Bytes of collective tables sent to PEs so far (what the start-up costs the launcher's
    /// network).
    pub fn table_bytes_sent(&self) -> u64 {
        self.table_bytes
    }

    /// Turns heartbeats on for the control connections opened from now on: both sides send one
    /// every `interval`; a PE silent for `timeout` is reported ([`Notice::Silent`]); a PE gives
    /// up on a launcher silent for `pe_timeout` (make it longer than `timeout`, so that the
    /// launcher, which can say which host went silent, normally notices first).
    pub fn set_heartbeat(&mut self, interval: Duration, timeout: Duration, pe_timeout: Duration) {
        self.heartbeat = Some(Heartbeat {
            interval,
            timeout,
            pe_timeout,
        });
        self.next_beat = Instant::now() + interval;
    }

    /// Changes the time a new connection has to say hello ([`HANDSHAKE_TIMEOUT`]) and the time
    /// an authenticated one may stall in the middle of a frame ([`STALL_TIMEOUT`]).
    pub fn set_timeouts(&mut self, handshake: Duration, stall: Duration) {
        self.handshake_timeout = handshake;
        self.stall_timeout = stall;
    }

    /// Listens on `addr` too (another interface of this machine, for hosts that reach it
    /// there); returns the address bound.
    pub fn listen_also(&mut self, addr: &str) -> io::Result<SocketAddr> {
        let listener = listen(addr)?;
        let bound = listener.local_addr()?;
        self.listeners.push(listener);
        Ok(bound)
    }

    /// The address of the first listener: the one PEs connect to (`SHMEM_RENDEZVOUS`) unless
    /// [`listen_also`](Self::listen_also) added others.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        match self.listeners.first() {
            Some(l) => l.local_addr(),
            None => Err(io::ErrorKind::NotConnected.into()),
        }
    }

    fn npes(&self) -> usize {
        self.slots.len()
    }

    /// Whether PE `pe` ever reached the launcher (on either connection).
    pub fn reached(&self, pe: usize) -> bool {
        self.slots
            .get(pe)
            .is_some_and(|s| s.hello || s.control_hello)
    }

    fn all_hello(&self) -> bool {
        self.slots.iter().all(|s| s.hello)
    }

    fn warn(&mut self, text: String) {
        self.notices.push(Notice::Warning(text));
    }
}
