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

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::auth::{self, Channel, Nonce, Secret};
use crate::wire::{
    CollectiveKind, ERR_OTHER, ERR_TIMEOUT, FrameBuf, MAX_AGENT_FRAME, MAX_FRAME,
    MAX_HANDSHAKE_FRAME, MAX_TABLE, Msg, PROTOCOL_VERSION, agent_fields, control_fields,
    hello_fields, millis_u32, pe_list, relay_header, secs,
};

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

/// What travels between the server and one virtual connection of a host agent.
#[derive(Debug, Default)]
struct Pipe {
    /// Bytes the agent relayed that the server has not read yet.
    inbound: Vec<u8>,
    /// The agent closed the connection (or the agent's own connection ended).
    closed: bool,
    /// Frames for the agent, relay headers included.
    outgoing: Vec<Arc<[u8]>>,
    /// The server dropped the connection: the agent is told, and forgets it.
    dropped: bool,
}

fn lock(pipe: &Mutex<Pipe>) -> MutexGuard<'_, Pipe> {
    pipe.lock().unwrap_or_else(|p| p.into_inner())
}

/// A virtual connection: a connection to a host agent's local port, relayed over the agent's
/// connection (see [`wire`](crate::wire)).
#[derive(Debug)]
struct Virtual {
    /// The agent's node.
    node: usize,
    /// The agent's number for it.
    id: u32,
    pipe: Arc<Mutex<Pipe>>,
}

impl Drop for Virtual {
    fn drop(&mut self) {
        lock(&self.pipe).dropped = true;
    }
}

/// What a connection runs on.
#[derive(Debug)]
enum Link {
    Tcp(TcpStream),
    Virtual(Virtual),
}

impl Read for Link {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Link::Tcp(s) => s.read(buf),
            Link::Virtual(v) => {
                let mut p = lock(&v.pipe);
                if p.inbound.is_empty() {
                    return if p.closed {
                        Ok(0)
                    } else {
                        Err(io::ErrorKind::WouldBlock.into())
                    };
                }
                let n = buf.len().min(p.inbound.len());
                buf[..n].copy_from_slice(&p.inbound[..n]);
                p.inbound.drain(..n);
                Ok(n)
            }
        }
    }
}

/// A host agent's connection and its virtual connections.
#[derive(Debug)]
struct Agent {
    conn: Conn,
    pipes: HashMap<u32, Arc<Mutex<Pipe>>>,
    /// Most virtual connections open at once.
    max_conns: usize,
}

/// One TCP connection with its input and output buffers.
#[derive(Debug)]
struct Conn {
    link: Link,
    frames: FrameBuf,
    out: Outbox,
    opened: Instant,
    /// The nonce of the challenge this connection was sent.
    challenge: Nonce,
    /// Since when an incomplete frame has been buffered.
    partial_since: Option<Instant>,
}

impl Conn {
    /// Takes a new connection and sends it a challenge; it may send one handshake frame.
    fn new(stream: TcpStream) -> io::Result<Conn> {
        stream.set_nonblocking(true)?;
        stream.set_nodelay(true)?;
        Conn::challenged(Link::Tcp(stream))
    }

    /// Takes a new virtual connection of an agent and sends it a challenge.
    fn new_virtual(v: Virtual) -> io::Result<Conn> {
        Conn::challenged(Link::Virtual(v))
    }

    /// A new connection over `link`, its challenge sent.
    fn challenged(link: Link) -> io::Result<Conn> {
        let challenge = auth::nonce()?;
        let mut c = Conn {
            link,
            frames: FrameBuf::with_limit(MAX_HANDSHAKE_FRAME),
            out: Outbox::default(),
            opened: Instant::now(),
            challenge,
            partial_since: None,
        };
        c.send(&Msg::Challenge { nonce: challenge }.encode())?;
        Ok(c)
    }

    /// The descriptor to poll (none for a virtual connection: its agent's is polled).
    fn fd(&self) -> Option<RawFd> {
        match &self.link {
            Link::Tcp(s) => Some(s.as_raw_fd()),
            Link::Virtual(_) => None,
        }
    }

    /// Who is at the other end, for messages.
    fn peer(&self) -> String {
        match &self.link {
            Link::Tcp(s) => s
                .peer_addr()
                .map(|a| a.to_string())
                .unwrap_or_else(|_| "?".into()),
            Link::Virtual(v) => format!("connection {} of the agent of node {}", v.id, v.node),
        }
    }

    /// Shuts the write side (a virtual connection closes when it is dropped).
    fn shutdown_write(&self) {
        if let Link::Tcp(s) = &self.link {
            let _ = s.shutdown(Shutdown::Write);
        }
    }

    /// Reads what is available (at most one frame ahead). `Ok(false)`: end of stream.
    fn fill(&mut self) -> io::Result<bool> {
        let open = self.frames.fill_from(&mut self.link);
        if self.frames.is_empty() {
            self.partial_since = None;
        } else if self.partial_since.is_none() {
            self.partial_since = Some(Instant::now());
        }
        open
    }

    /// Takes the next complete frame; restarts the stall clock when one was taken.
    fn next_msg(&mut self) -> Result<Option<Msg>, String> {
        let msg = self.frames.next_msg()?;
        if msg.is_some() {
            self.partial_since = (!self.frames.is_empty()).then(Instant::now);
        }
        Ok(msg)
    }

    /// Whether it has sat in the middle of a frame for longer than `limit`.
    fn stalled(&self, limit: Duration) -> bool {
        self.partial_since.is_some_and(|t| t.elapsed() > limit)
    }

    /// Writes as much of the output buffer as the socket takes.
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.link {
            Link::Tcp(s) => self.out.write_to(s),
            Link::Virtual(v) => {
                // Handed to the agent's connection whole, behind a relay header each: shared
                // tables stay shared.
                let mut p = lock(&v.pipe);
                for (frame, at) in self.out.frames.drain(..) {
                    let frame: Arc<[u8]> = if at == 0 {
                        frame
                    } else {
                        Arc::from(&frame[at..])
                    };
                    p.outgoing
                        .push(Arc::from(&relay_header(v.id, frame.len())[..]));
                    p.outgoing.push(frame);
                }
                Ok(())
            }
        }
    }

    /// Queues a message and tries to send it now.
    fn send(&mut self, frame: &[u8]) -> io::Result<()> {
        self.send_shared(Arc::from(frame))
    }

    /// Queues a frame shared with other connections (a collective's table, which every PE
    /// receives: one copy in the launcher, whatever the number of PEs) and tries to send it.
    fn send_shared(&mut self, frame: Arc<[u8]>) -> io::Result<()> {
        self.out.push(frame);
        self.flush()
    }
}

/// The frames a connection still has to send: shared buffers and how far each has been
/// written. Writing a part costs nothing more than the write (no copy, no shifting of the
/// rest), so a table of megabytes sent to thousands of PEs costs its size once in memory and
/// its bytes once per PE on the wire.
#[derive(Debug, Default)]
struct Outbox {
    frames: VecDeque<(Arc<[u8]>, usize)>,
}

impl Outbox {
    fn push(&mut self, frame: Arc<[u8]>) {
        if !frame.is_empty() {
            self.frames.push_back((frame, 0));
        }
    }

    fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Writes as much as `w` takes; `Ok` when it would block or everything is out.
    fn write_to(&mut self, w: &mut impl Write) -> io::Result<()> {
        while let Some((frame, at)) = self.frames.front_mut() {
            match w.write(&frame[*at..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    *at += n;
                    if *at == frame.len() {
                        self.frames.pop_front();
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
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

/// The last [`CollectiveKind::SharedAllgather`] (see [`crate::table`]).
#[derive(Debug)]
struct SharedRound {
    epoch: u64,
    /// The [`Msg::Table`] frame, for leaders, fetches and fallbacks.
    frame: Arc<[u8]>,
    /// Per node that has not heard from its leader yet: the leader and the node's other PEs.
    waiting: Vec<(usize, Vec<usize>)>,
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

    /// Whether the host agent of `node` reached the launcher (said hello) at some point.
    pub fn agent_reached(&self, node: usize) -> bool {
        self.agent_hello.get(node).copied().unwrap_or(false)
    }

    /// The number of host agents connected now.
    pub fn agents_connected(&self) -> usize {
        self.agents.iter().flatten().count()
    }

    /// Sends every connected host agent [`Msg::Stop`]: it ends its PEs (best effort, without
    /// waiting).
    pub fn stop_agents(&mut self, status: i32) {
        let frame = Msg::Stop { status }.encode();
        for a in self.agents.iter_mut().flatten() {
            let _ = a.conn.send(&frame);
        }
    }

    /// Takes in everything the host agent of `node` has sent (its start command ended: what it
    /// sent before is there to be read), waiting at most `wait` for the end of its connection;
    /// returns what the caller should know.
    pub fn drain_agent(&mut self, node: usize, wait: Duration) -> Vec<Notice> {
        let until = Instant::now() + wait;
        while self.agents.get(node).is_some_and(Option::is_some) {
            self.read_agent(node);
            self.read_pending();
            let left = until.saturating_duration_since(Instant::now());
            let Some(fd) = self.agents[node].as_ref().and_then(|a| a.conn.fd()) else {
                break;
            };
            if left.is_zero() {
                break;
            }
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = left.as_millis().clamp(1, 100) as libc::c_int;
            // SAFETY: `p` is one live, initialized pollfd; poll writes only its `revents`.
            unsafe { libc::poll(&mut p, 1, ms) };
        }
        self.flush_agents();
        std::mem::take(&mut self.notices)
    }

    /// Reads what the host agent of `node` sent: opens, relayed bytes, closes and exits.
    fn read_agent(&mut self, node: usize) {
        let Some(a) = self.agents.get_mut(node).and_then(Option::as_mut) else {
            return;
        };
        let open = a.conn.fill();
        let mut broken = None;
        let mut opened = Vec::new();
        loop {
            match a.conn.next_msg() {
                Ok(Some(Msg::Open { conn })) => {
                    if a.pipes.len() >= a.max_conns || a.pipes.contains_key(&conn) {
                        let _ = a.conn.send(&Msg::Close { conn }.encode());
                        continue;
                    }
                    let pipe = Arc::new(Mutex::new(Pipe::default()));
                    a.pipes.insert(conn, Arc::clone(&pipe));
                    opened.push(Virtual {
                        node,
                        id: conn,
                        pipe,
                    });
                }
                Ok(Some(Msg::Relay { conn, data })) => {
                    // A connection the server dropped may still have bytes on the way.
                    if let Some(pipe) = a.pipes.get(&conn) {
                        let mut p = lock(pipe);
                        if p.inbound.len() + data.len() > MAX_RELAYED {
                            p.inbound.clear();
                            p.closed = true;
                        } else if !p.closed {
                            p.inbound.extend_from_slice(&data);
                        }
                    }
                }
                Ok(Some(Msg::Close { conn })) => {
                    if let Some(pipe) = a.pipes.get(&conn) {
                        lock(pipe).closed = true;
                    }
                }
                Ok(Some(Msg::Exited { pe, pid, status })) => {
                    let pe = pe as usize;
                    if self.nodes.as_ref().and_then(|n| n.get(pe)) != Some(&node) {
                        broken = Some(format!("reported the exit of PE {pe}, not one of its"));
                        break;
                    }
                    self.notices.push(Notice::Exited { pe, pid, status });
                }
                Ok(Some(other)) => {
                    broken = Some(format!("unexpected {other:?}"));
                    break;
                }
                Ok(None) => break,
                Err(e) => {
                    broken = Some(format!("protocol error: {e}"));
                    break;
                }
            }
        }
        if broken.is_none() && a.conn.stalled(self.stall_timeout) {
            broken = Some(stalled(self.stall_timeout));
        }
        for v in opened {
            match Conn::new_virtual(v) {
                Ok(c) => self.pending.push(c),
                Err(e) => self.warn(format!("cannot set up a connection of node {node}: {e}")),
            }
        }
        match (broken, open) {
            (None, Ok(true)) => {}
            (Some(why), _) => {
                self.warn(format!("the host agent of node {node}: {why}; dropped it"));
                self.drop_agent(node);
            }
            (None, _) => self.drop_agent(node),
        }
    }

    /// Closes the connection of the agent of `node`: its virtual connections end.
    fn drop_agent(&mut self, node: usize) {
        if let Some(a) = self.agents.get_mut(node).and_then(Option::take) {
            for pipe in a.pipes.values() {
                lock(pipe).closed = true;
            }
        }
    }

    /// Hands what the virtual connections have to say to their agents' connections, tells the
    /// agents which ones the server dropped, and writes.
    fn flush_agents(&mut self) {
        for node in 0..self.agents.len() {
            let Some(a) = self.agents[node].as_mut() else {
                continue;
            };
            let mut closed = Vec::new();
            for (&id, pipe) in &a.pipes {
                let mut p = lock(pipe);
                for frame in p.outgoing.drain(..) {
                    a.conn.out.push(frame);
                }
                if p.dropped {
                    closed.push(id);
                }
            }
            for id in closed {
                a.pipes.remove(&id);
                a.conn.out.push(Arc::from(Msg::Close { conn: id }.encode()));
            }
            if a.conn.flush().is_err() {
                self.drop_agent(node);
            }
        }
    }

    fn agent_hello(&mut self, mut c: Conn, version: u32, job_id: u64, node: usize, nonce: &Nonce) {
        let n = self.agents.len();
        let why = if version != PROTOCOL_VERSION {
            format!("protocol version {version}, this launcher speaks {PROTOCOL_VERSION}")
        } else if job_id != self.job_id {
            format!("job id {job_id:016x} is not this job's (host agent of node {node})")
        } else if node >= n {
            format!("host agent of node {node}, out of range for {n} nodes")
        } else if self.agent_hello[node] {
            format!("the host agent of node {node} connected twice")
        } else {
            let proof = auth::launcher_mac(
                &self.secret,
                Channel::Agent,
                &c.challenge,
                nonce,
                node as u32,
            );
            if c.send(&Msg::Accepted { mac: proof }.encode()).is_err() {
                return;
            }
            c.frames.set_limit(MAX_AGENT_FRAME);
            let pes = self
                .nodes
                .as_ref()
                .map_or(0, |ns| ns.iter().filter(|&&x| x == node).count());
            self.agent_hello[node] = true;
            self.agents[node] = Some(Agent {
                conn: c,
                pipes: HashMap::new(),
                max_conns: 2 * pes + AGENT_SPARE_CONNS,
            });
            // Frames that came with the hello are read by `read_agent`.
            return;
        };
        self.reject(c, why);
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

    /// Waits up to `max_wait` for activity on the sockets or on `wake` (a descriptor the caller
    /// uses to interrupt the wait; the caller drains it), handles it and returns what the caller
    /// should know.
    pub fn poll(&mut self, wake: Option<RawFd>, max_wait: Duration) -> io::Result<Vec<Notice>> {
        // What was sent on virtual connections since the last round goes out now.
        self.flush_agents();
        let mut wait = max_wait;
        if self.timeout_detail.is_none() && !self.all_hello() {
            let deadline = self.started + self.timeout;
            wait = wait.min(deadline.saturating_duration_since(Instant::now()));
        }
        if self.heartbeat.is_some() {
            wait = wait.min(self.next_beat.saturating_duration_since(Instant::now()));
        }
        let accepting = match self.accept_paused_until {
            Some(t) if t > Instant::now() => {
                wait = wait.min(t.saturating_duration_since(Instant::now()));
                false
            }
            _ => true,
        };
        if !self.pending.is_empty() || !self.closing.is_empty() {
            // Wake to close connections that do not say hello in time, and lingering ones.
            wait = wait.min(Duration::from_millis(250));
        }
        let mut fds = Vec::with_capacity(
            self.listeners.len() + 1 + self.pending.len() + 2 * self.slots.len(),
        );
        let mut watch = |fd: RawFd, out: bool| {
            let events = libc::POLLIN | if out { libc::POLLOUT } else { 0 };
            fds.push(libc::pollfd {
                fd,
                events,
                revents: 0,
            });
        };
        if accepting {
            for l in &self.listeners {
                watch(l.as_raw_fd(), false);
            }
        }
        if let Some(fd) = wake {
            watch(fd, false);
        }
        for c in self
            .pending
            .iter()
            .chain(self.closing.iter().map(|(c, _, _)| c))
            .chain(self.agents.iter().flatten().map(|a| &a.conn))
        {
            if let Some(fd) = c.fd() {
                watch(fd, !c.out.is_empty());
            }
        }
        for s in &self.slots {
            for c in [&s.conn, &s.control].into_iter().flatten() {
                if let Some(fd) = c.fd() {
                    watch(fd, !c.out.is_empty());
                }
            }
        }
        // Round up so a sub-millisecond wait does not become a busy loop.
        let ms = wait.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int;
        // SAFETY: `fds` is a live, exclusively borrowed array of `fds.len()` initialized pollfd
        // structs; poll only writes their `revents` fields.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        self.service();
        Ok(std::mem::take(&mut self.notices))
    }

    /// Records that the launcher saw PE `pe`'s process exit. Call it for every exit: a PE that
    /// exits without finalizing strands the PEs waiting for it.
    pub fn pe_exited(&mut self, pe: usize) -> Vec<Notice> {
        // Take in what the PE sent before it exited (a hello, a finalize): the data and the
        // connection reached this host before the exit did. Only its own connections and the
        // new ones: the others wait for the next poll (an exit costs O(1) connections, not
        // O(PEs)).
        self.accept_all();
        self.read_pending();
        if pe < self.npes() {
            self.read_pe(pe);
            self.read_control(pe);
        }
        if let Some(slot) = self.slots.get_mut(pe) {
            slot.exited = true;
            slot.gone = true;
            slot.conn = None;
            self.release_node(pe, None);
            // The control connection stays: a PE on another host may outlive its start command,
            // and this connection is how it learns that the job is over.
        }
        self.check_stranded();
        std::mem::take(&mut self.notices)
    }

    /// Describes the PEs that left while others wait, if any: "PE 2 exited before finalizing
    /// while PEs 0, 1 wait in a barrier".
    pub fn stranded(&self) -> Option<String> {
        let waiting: Vec<usize> = (0..self.npes())
            .filter(|&p| self.slots[p].arrived.is_some())
            .collect();
        let kind = self
            .slots
            .iter()
            .find_map(|s| s.arrived.as_ref().map(|a| a.0))?;
        let left: Vec<String> = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.arrived.is_none() && (s.gone || s.finalized))
            .map(|(p, s)| {
                let how = if s.finalized {
                    "finalized"
                } else if s.exited && !s.hello {
                    "exited without connecting to the launcher"
                } else if s.exited {
                    "exited before finalizing"
                } else {
                    "closed its launcher connection before finalizing"
                };
                format!("PE {p} {how}")
            })
            .collect();
        if left.is_empty() {
            return None;
        }
        let what = if self.epoch == 0 {
            "the rendezvous"
        } else {
            kind.name()
        };
        let who = if waiting.len() == 1 { "PE" } else { "PEs" };
        Some(format!(
            "{} while {who} {} wait{} in {what}",
            left.join(", "),
            pe_list(&waiting),
            if waiting.len() == 1 { "s" } else { "" },
        ))
    }

    /// [`stranded`](Self::stranded), after taking in what every PE has sent on its rendezvous
    /// connection: for the report of a job that ends because a PE left, which should name the
    /// PEs already waiting even where the launcher had not yet read their requests. O(PEs): call
    /// it only when the job ends.
    pub fn stranded_now(&mut self) -> Option<String> {
        for pe in 0..self.npes() {
            self.read_pe(pe);
        }
        self.stranded()
    }

    /// Sends `detail` as an error to every connected PE (best effort, without waiting), e.g.
    /// before the launcher ends the job.
    pub fn abort(&mut self, detail: &str) {
        let frame = error_frame(ERR_OTHER, detail);
        for slot in &mut self.slots {
            if let Some(c) = slot.conn.as_mut() {
                let _ = c.send(&frame);
            }
        }
    }

    /// Sends every open control connection [`Msg::Abort`]: the PEs exit with `status` after
    /// writing `reason` (best effort, without waiting). Control connections opened later get
    /// it right after their welcome.
    pub fn abort_all(&mut self, status: i32, reason: &str) {
        let frame = Msg::Abort {
            status,
            reason: clip(reason),
        }
        .encode();
        for c in self.slots.iter_mut().filter_map(|s| s.control.as_mut()) {
            // A broken connection is found (and reported) by the next read.
            let _ = c.send(&frame);
        }
        self.abort_frame = Some(frame);
    }

    /// PE `pe`'s pid on its host, once its control connection said hello.
    pub fn pid(&self, pe: usize) -> Option<u32> {
        self.slots.get(pe).and_then(|s| s.pid)
    }

    /// Whether PE `pe` ever reached the launcher (on either connection).
    pub fn reached(&self, pe: usize) -> bool {
        self.slots
            .get(pe)
            .is_some_and(|s| s.hello || s.control_hello)
    }

    /// Whether PE `pe` said hello on its rendezvous connection (it called `init`).
    pub fn said_hello(&self, pe: usize) -> bool {
        self.slots.get(pe).is_some_and(|s| s.hello)
    }

    /// Whether PE `pe` told the launcher it finalized.
    pub fn finalized(&self, pe: usize) -> bool {
        self.slots.get(pe).is_some_and(|s| s.finalized)
    }

    /// How long PE `pe` has been silent on its open control connection (`None`: no connection).
    pub fn silence(&self, pe: usize) -> Option<Duration> {
        let s = self.slots.get(pe)?;
        s.control.as_ref()?;
        s.heard.map(|t| t.elapsed())
    }

    /// The number of control connections still open whose PE was heard from within `within`
    /// (any open one when there are no heartbeats).
    pub fn controls_alive(&self, within: Duration) -> usize {
        self.slots
            .iter()
            .filter(|s| s.control.is_some())
            .filter(|s| self.heartbeat.is_none() || s.heard.is_some_and(|t| t.elapsed() < within))
            .count()
    }

    fn all_hello(&self) -> bool {
        self.slots.iter().all(|s| s.hello)
    }

    /// Accepts, reads and answers everything that is ready, without waiting.
    fn service(&mut self) {
        self.buffered = self
            .pending
            .iter()
            .map(|c| c.frames.buffered())
            .sum::<usize>()
            + self
                .slots
                .iter()
                .flat_map(|s| [&s.conn, &s.control])
                .flatten()
                .map(|c| c.frames.buffered())
                .sum::<usize>()
            + self
                .agents
                .iter()
                .flatten()
                .map(|a| {
                    a.conn.frames.buffered()
                        + a.pipes
                            .values()
                            .map(|p| lock(p).inbound.len())
                            .sum::<usize>()
                })
                .sum::<usize>();
        self.accept_all();
        for node in 0..self.agents.len() {
            self.read_agent(node);
        }
        if self.buffered > MAX_BUFFERED {
            // Relayed bytes count too: the agent holding the most goes.
            let relayed = |a: &Agent| {
                a.pipes
                    .values()
                    .map(|p| lock(p).inbound.len())
                    .sum::<usize>()
            };
            let most = (0..self.agents.len())
                .filter_map(|n| Some((n, relayed(self.agents[n].as_ref()?))))
                .max_by_key(|&(_, bytes)| bytes)
                .filter(|&(_, bytes)| bytes > BIG_PARTIAL)
                .map(|(n, _)| n);
            if let Some(node) = most {
                self.warn(format!("the host agent of node {node}: {}", over_budget()));
                self.drop_agent(node);
            }
        }
        self.read_pending();
        self.linger();
        for pe in 0..self.npes() {
            self.read_pe(pe);
        }
        for pe in 0..self.npes() {
            self.read_control(pe);
        }
        self.heartbeats();
        self.check_timeout();
        self.check_stranded();
        self.flush_agents();
    }

    fn accept_all(&mut self) {
        if self.accept_paused_until.is_some_and(|t| t > Instant::now()) {
            return;
        }
        self.accept_paused_until = None;
        // Real PEs open two connections each; beyond that, the oldest unauthenticated ones go.
        let max_pending = 2 * self.npes() + 256;
        for i in 0..self.listeners.len() {
            loop {
                match self.listeners[i].accept() {
                    Ok((stream, peer)) => match Conn::new(stream) {
                        Ok(c) => {
                            if self.pending.len() >= max_pending {
                                self.pending.remove(0);
                            }
                            self.pending.push(c);
                        }
                        // Typically reset at once by its peer: counted with the refusals, so
                        // that a flood of them cannot fill the launcher's stderr.
                        Err(e) => self
                            .note_refusal(format!("cannot set up a connection from {peer}: {e}")),
                    },
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => {
                        // E.g. EMFILE: the connection stays queued. Free a descriptor held by
                        // an unauthenticated connection, and do not try again at once (the
                        // listener stays readable: retrying in a loop would spin a core).
                        if !self.pending.is_empty() {
                            self.pending.remove(0);
                        }
                        if self.accept_failures == 0 {
                            self.warn(format!(
                                "cannot accept a connection: {e}; retrying every {} ms and \
                                 closing unauthenticated connections to make room (reported \
                                 once)",
                                ACCEPT_BACKOFF.as_millis()
                            ));
                        }
                        self.accept_failures += 1;
                        self.accept_paused_until = Some(Instant::now() + ACCEPT_BACKOFF);
                        return;
                    }
                }
            }
        }
    }

    fn warn(&mut self, text: String) {
        self.notices.push(Notice::Warning(text));
    }

    /// Reads the first frame of new connections and admits or rejects them.
    fn read_pending(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        let handshake = self.timeout.min(self.handshake_timeout);
        for mut c in pending {
            let open = c.fill();
            match c.next_msg() {
                Ok(Some(Msg::Hello {
                    version,
                    job_id,
                    pe,
                    npes,
                    nonce,
                    mac,
                })) => {
                    let fields = hello_fields(version, job_id, pe, npes);
                    if !self.proves(&c, Channel::Rendezvous, &nonce, &fields, &mac) {
                        self.refuse(c, "authentication failed", true);
                        continue;
                    }
                    let proof = auth::launcher_mac(
                        &self.secret,
                        Channel::Rendezvous,
                        &c.challenge,
                        &nonce,
                        pe,
                    );
                    if c.send(&Msg::Accepted { mac: proof }.encode()).is_err() {
                        continue;
                    }
                    c.frames.set_limit(MAX_FRAME);
                    self.hello(c, version, job_id, pe as usize, npes as usize);
                }
                Ok(Some(Msg::ControlHello {
                    version,
                    job_id,
                    pe,
                    pid,
                    nonce,
                    mac,
                })) => {
                    let fields = control_fields(version, job_id, pe, pid);
                    if !self.proves(&c, Channel::Control, &nonce, &fields, &mac) {
                        self.refuse(c, "authentication failed", true);
                        continue;
                    }
                    c.frames.set_limit(MAX_FRAME);
                    self.control_hello(c, version, job_id, pe as usize, pid, &nonce);
                }
                Ok(Some(Msg::AgentHello {
                    version,
                    job_id,
                    node,
                    pid,
                    nonce,
                    mac,
                })) if matches!(c.link, Link::Tcp(_)) => {
                    let fields = agent_fields(version, job_id, node, pid);
                    if !self.proves(&c, Channel::Agent, &nonce, &fields, &mac) {
                        self.refuse(c, "authentication failed", true);
                        continue;
                    }
                    self.agent_hello(c, version, job_id, node as usize, &nonce);
                }
                Ok(Some(_)) => self.refuse(c, "expected a hello", false),
                Err(_) => self.refuse(c, "bad frame", false),
                Ok(None) => match open {
                    Ok(true) if c.opened.elapsed() < handshake => self.pending.push(c),
                    Ok(true) => self.refuse(c, "no hello in time", false),
                    // Closed or broken before saying anything: nothing to answer.
                    Ok(false) | Err(_) => {}
                },
            }
        }
    }

    /// Whether `mac` proves the secret for connection `c`'s challenge.
    fn proves(&self, c: &Conn, channel: Channel, nonce: &Nonce, fields: &[u8], mac: &[u8]) -> bool {
        let want = auth::hello_mac(&self.secret, channel, &c.challenge, nonce, fields);
        auth::tags_equal(&want, mac)
    }

    /// Closes an unauthenticated connection: it learns only that it was refused. One that sent
    /// a well-formed hello (`linger`) lingers like a rejected PE's, reading at most
    /// [`REFUSED_DRAIN`] bytes more, unless [`MAX_LINGERING`] connections already do: a client
    /// that sent its first record behind its hello otherwise got "Connection reset by peer"
    /// instead of the refusal. Garbage is closed at once.
    fn refuse(&mut self, mut c: Conn, why: &str, linger: bool) {
        let _ = c.send(&error_frame(ERR_OTHER, "connection refused"));
        let peer = c.peer();
        self.note_refusal(format!(
            "refused a connection from {peer}: {why} (not a PE of this job)"
        ));
        if linger && self.closing.len() < MAX_LINGERING {
            self.closing
                .push((c, Instant::now() + LINGER, REFUSED_DRAIN));
            self.linger();
        }
    }

    /// Reports a refused connection, up to [`REPORTED_REJECTIONS`] of them.
    fn note_refusal(&mut self, text: String) {
        self.rejections += 1;
        if self.rejections <= REPORTED_REJECTIONS {
            let more = if self.rejections == REPORTED_REJECTIONS {
                " (further refused connections are not reported)"
            } else {
                ""
            };
            self.warn(format!("{text}{more}"));
        }
    }

    /// Rejects an authenticated connection whose hello cannot be admitted, saying why.
    fn reject(&mut self, mut c: Conn, why: String) {
        let peer = c.peer();
        let _ = c.send(&error_frame(
            ERR_OTHER,
            &format!("connection rejected: {why}"),
        ));
        self.warn(format!("rejected a connection from {peer}: {why}"));
        self.close_after_error(c);
    }

    /// Closes `c`, which the server has just answered with an error, once the error is out
    /// and the PE has closed its side, or after [`LINGER`] (see there).
    fn close_after_error(&mut self, c: Conn) {
        self.closing.push((c, Instant::now() + LINGER, usize::MAX));
        self.linger();
    }

    /// Sends what closing connections still owe, shuts their write side once it is out, reads
    /// and drops what their PEs send, and closes those whose PE closed, that failed, that sent
    /// their allowance, or whose time is up.
    fn linger(&mut self) {
        let now = Instant::now();
        let mut scratch = [0u8; 4096];
        self.closing.retain_mut(|(c, until, allowance)| {
            if now >= *until || c.flush().is_err() {
                return false;
            }
            if c.out.is_empty() {
                c.shutdown_write();
            }
            // A bounded amount per round: a PE that keeps sending cannot hold the server here.
            for _ in 0..LINGER_READS {
                match c.link.read(&mut scratch) {
                    Ok(0) => return false,
                    Ok(n) if n >= *allowance => return false,
                    Ok(n) => *allowance -= n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return e.kind() == io::ErrorKind::WouldBlock,
                }
            }
            true
        });
    }

    fn hello(&mut self, mut c: Conn, version: u32, job_id: u64, pe: usize, npes: usize) {
        let n = self.npes();
        let why = if version != PROTOCOL_VERSION {
            format!("protocol version {version}, this launcher speaks {PROTOCOL_VERSION}")
        } else if job_id != self.job_id {
            format!("job id {job_id:016x} is not this job's (PE {pe})")
        } else if npes != n {
            format!("PE {pe} believes the job has {npes} PEs, it has {n}")
        } else if pe >= n {
            format!("PE {pe} is out of range for {n} PEs")
        } else if self.slots[pe].hello {
            format!("PE {pe} connected twice")
        } else {
            if let Some(detail) = &self.timeout_detail {
                let _ = c.send(&error_frame(ERR_TIMEOUT, detail));
            }
            let slot = &mut self.slots[pe];
            slot.hello = true;
            if slot.exited {
                // Its process is already gone; the connection is what it left behind.
                slot.gone = true;
            }
            // Frames that came with the hello are handled by `read_pe`.
            if !slot.gone {
                slot.conn = Some(c);
            }
            return;
        };
        self.reject(c, why);
    }

    fn control_hello(
        &mut self,
        mut c: Conn,
        version: u32,
        job_id: u64,
        pe: usize,
        pid: u32,
        nonce: &Nonce,
    ) {
        let n = self.npes();
        let why = if version != PROTOCOL_VERSION {
            format!("protocol version {version}, this launcher speaks {PROTOCOL_VERSION}")
        } else if job_id != self.job_id {
            format!("job id {job_id:016x} is not this job's (PE {pe}, control connection)")
        } else if pe >= n {
            format!("PE {pe} is out of range for {n} PEs (control connection)")
        } else if self.slots[pe].control_hello {
            format!("PE {pe} opened its control connection twice")
        } else {
            let mac = auth::launcher_mac(
                &self.secret,
                Channel::Control,
                &c.challenge,
                nonce,
                pe as u32,
            );
            let welcome = match self.heartbeat {
                Some(h) => Msg::Welcome {
                    interval_ms: millis_u32(h.interval).max(1),
                    timeout_ms: millis_u32(h.pe_timeout).max(1),
                    mac,
                },
                None => Msg::Welcome {
                    interval_ms: 0,
                    timeout_ms: 0,
                    mac,
                },
            };
            let mut sent = c.send(&welcome.encode());
            if let Some(abort) = &self.abort_frame {
                sent = sent.and_then(|()| c.send(abort));
            }
            let slot = &mut self.slots[pe];
            slot.control_hello = true;
            slot.pid = Some(pid);
            slot.heard = Some(Instant::now());
            // A PE whose exit was already seen leaves nothing to supervise.
            if !slot.exited && sent.is_ok() {
                slot.control = Some(c);
            }
            return;
        };
        self.reject(c, why);
    }

    /// Reads PE `pe`'s control connection: heartbeats, or the end of it.
    fn read_control(&mut self, pe: usize) {
        let slot = &mut self.slots[pe];
        let Some(c) = slot.control.as_mut() else {
            return;
        };
        let before = c.frames.buffered();
        let open = c.fill();
        self.buffered += c.frames.buffered().saturating_sub(before);
        let mut broken = None;
        if self.buffered > MAX_BUFFERED && c.frames.buffered() > BIG_PARTIAL {
            broken = Some(over_budget());
        }
        let mut heard = false;
        while broken.is_none() {
            match c.next_msg() {
                Ok(Some(Msg::Heartbeat)) => heard = true,
                Ok(Some(other)) => {
                    broken = Some(format!("unexpected {other:?} on the control connection"));
                    break;
                }
                Ok(None) => break,
                Err(e) => {
                    broken = Some(format!("protocol error on the control connection: {e}"));
                    break;
                }
            }
        }
        if broken.is_none() && c.stalled(self.stall_timeout) {
            broken = Some(stalled(self.stall_timeout));
        }
        let flushed = c.flush();
        if heard {
            slot.heard = Some(Instant::now());
        }
        let why = match (broken, open, flushed) {
            (None, Ok(true), Ok(())) => return,
            (Some(why), _, _) => why,
            (None, Ok(false), _) => "connection closed".to_string(),
            (None, Err(e), _) | (None, Ok(true), Err(e)) => e.to_string(),
        };
        slot.control = None;
        if !slot.finalized && !slot.exited {
            self.notices.push(Notice::ControlLost { pe, why });
        }
    }

    /// Sends heartbeats when due and reports PEs that fell silent.
    fn heartbeats(&mut self) {
        let Some(h) = self.heartbeat else {
            return;
        };
        let now = Instant::now();
        if now >= self.next_beat {
            self.next_beat = now + h.interval;
            let frame = Msg::Heartbeat.encode();
            for c in self.slots.iter_mut().filter_map(|s| s.control.as_mut()) {
                // A PE that has not taken the last ones needs no more. A broken connection is
                // found (and reported) by the next read.
                if c.out.is_empty() {
                    let _ = c.send(&frame);
                }
            }
        }
        for (pe, slot) in self.slots.iter_mut().enumerate() {
            if slot.control.is_none() || slot.silent_reported {
                continue;
            }
            let silent_for = slot.heard.map_or(Duration::ZERO, |t| now - t);
            if silent_for > h.timeout {
                slot.silent_reported = true;
                self.notices.push(Notice::Silent { pe, silent_for });
            }
        }
    }

    /// Reads and handles everything PE `pe` sent.
    fn read_pe(&mut self, pe: usize) {
        let Some(c) = self.slots[pe].conn.as_mut() else {
            return;
        };
        let before = c.frames.buffered();
        let open = c.fill();
        let after = c.frames.buffered();
        self.buffered += after.saturating_sub(before);
        if self.buffered > MAX_BUFFERED && after > BIG_PARTIAL {
            return self.fail_pe(pe, over_budget());
        }
        loop {
            let Some(c) = self.slots[pe].conn.as_mut() else {
                return;
            };
            match c.next_msg() {
                Ok(Some(msg)) => self.handle(pe, msg),
                Ok(None) => break,
                Err(e) => return self.fail_pe(pe, format!("protocol error: {e}")),
            }
        }
        let limit = self.stall_timeout;
        if self.slots[pe]
            .conn
            .as_ref()
            .is_some_and(|c| c.stalled(limit))
        {
            return self.fail_pe(pe, stalled(limit));
        }
        let flushed = match self.slots[pe].conn.as_mut() {
            Some(c) => c.flush(),
            None => return,
        };
        if !matches!((open, flushed), (Ok(true), Ok(()))) {
            // End of stream or a broken connection. A crash is reported by the launcher from
            // the exit status; a PE that left early is caught by `check_stranded`.
            self.drop_pe(pe);
        }
    }

    fn drop_pe(&mut self, pe: usize) {
        let slot = &mut self.slots[pe];
        slot.conn = None;
        slot.gone = true;
        self.release_node(pe, None);
    }

    /// Answers PE `pe` with an error, closes its connection and counts it as gone.
    fn fail_pe(&mut self, pe: usize, why: String) {
        if let Some(mut c) = self.slots[pe].conn.take() {
            let _ = c.send(&error_frame(ERR_OTHER, &format!("PE {pe}: {why}")));
            self.close_after_error(c);
        }
        self.slots[pe].gone = true;
        self.warn(format!("PE {pe}: {why}"));
        self.release_node(pe, None);
    }

    /// Sends `frame` to PE `pe` if it is connected, counting the bytes as a table's; a PE whose
    /// connection broke is dropped.
    fn send_table(&mut self, pe: usize, frame: &Arc<[u8]>) {
        let Some(c) = self.slots[pe].conn.as_mut() else {
            return;
        };
        self.table_bytes += frame.len() as u64;
        if c.send_shared(Arc::clone(frame)).is_err() {
            self.drop_pe(pe);
        }
    }

    /// If `leader` leads a node waiting for the shared table, answers the node's other PEs:
    /// with `at` ([`Msg::TableAt`]) when the leader published it, else with the table itself.
    fn release_node(&mut self, leader: usize, at: Option<Msg>) {
        let Some(round) = self.shared.as_mut() else {
            return;
        };
        let Some(i) = round.waiting.iter().position(|w| w.0 == leader) else {
            return;
        };
        let (_, waiters) = round.waiting.swap_remove(i);
        let frame = Arc::clone(&round.frame);
        for pe in waiters {
            match &at {
                Some(msg) => {
                    let sent = self.slots[pe].conn.as_mut().map(|c| c.send(&msg.encode()));
                    if let Some(Err(_)) = sent {
                        self.drop_pe(pe);
                    }
                }
                None => self.send_table(pe, &frame),
            }
        }
    }

    fn handle(&mut self, pe: usize, msg: Msg) {
        match msg {
            Msg::Finalize => self.slots[pe].finalized = true,
            Msg::GlobalExit { status } => {
                // The answer tells the PE its request was read (it may exit now).
                if let Some(c) = self.slots[pe].conn.as_mut() {
                    let frame = Msg::Error {
                        code: ERR_OTHER,
                        detail: format!("PE {pe} called global_exit({status})"),
                    };
                    let _ = c.send(&frame.encode());
                }
                self.notices.push(Notice::GlobalExit { pe, status });
            }
            Msg::Collective { epoch, kind, blob } => {
                if self.slots[pe].finalized {
                    return self.fail_pe(pe, "collective after finalize".into());
                }
                if epoch != self.epoch || self.slots[pe].arrived.is_some() {
                    let e = self.epoch;
                    return self.fail_pe(pe, format!("sent collective {epoch}, expected {e}"));
                }
                self.slots[pe].arrived = Some((kind, blob));
                self.try_complete();
            }
            Msg::Published {
                epoch,
                pid,
                fd,
                len,
            } => {
                let leads = self
                    .shared
                    .as_ref()
                    .is_some_and(|r| r.epoch == epoch && r.waiting.iter().any(|w| w.0 == pe));
                if !leads {
                    return self.fail_pe(pe, format!("unexpected publication of table {epoch}"));
                }
                let at = (fd != u32::MAX).then_some(Msg::TableAt {
                    epoch,
                    pid,
                    fd,
                    len,
                });
                self.release_node(pe, at);
            }
            Msg::Fetch { epoch } => match &self.shared {
                Some(r) if r.epoch == epoch => {
                    let frame = Arc::clone(&r.frame);
                    self.send_table(pe, &frame);
                }
                _ => self.fail_pe(pe, format!("fetch of table {epoch}, which is not shared")),
            },
            other => self.fail_pe(pe, format!("unexpected message {other:?}")),
        }
    }

    /// Releases the current collective if every PE has arrived.
    fn try_complete(&mut self) {
        if self.slots.iter().any(|s| s.arrived.is_none()) {
            return;
        }
        let arrived: Vec<(CollectiveKind, Vec<u8>)> = self
            .slots
            .iter_mut()
            .filter_map(|s| s.arrived.take())
            .collect();
        let epoch = self.epoch;
        self.epoch += 1;
        self.stranded_reported = false;
        let (bar, ag): (Vec<usize>, Vec<usize>) =
            (0..arrived.len()).partition(|&p| arrived[p].0 == CollectiveKind::Barrier);
        let asks_shared: Vec<bool> = arrived
            .iter()
            .map(|a| a.0 == CollectiveKind::SharedAllgather)
            .collect();
        let total: usize = arrived.iter().map(|a| a.1.len()).sum();
        let is_table = total <= MAX_TABLE && bar.is_empty();
        let frame = if total > MAX_TABLE {
            let detail = format!(
                "collective {epoch}: the PEs' records add up to {total} bytes, over the \
                 launcher's limit of {MAX_TABLE} bytes"
            );
            self.warn(detail.clone());
            Msg::Error {
                code: ERR_OTHER,
                detail,
            }
        } else if !ag.is_empty() && !bar.is_empty() {
            let detail = format!(
                "collective {epoch} mismatch: PEs {} called an allgather but PEs {} a barrier",
                pe_list(&ag),
                pe_list(&bar)
            );
            self.warn(detail.clone());
            Msg::Error {
                code: ERR_OTHER,
                detail,
            }
        } else if bar.is_empty() {
            Msg::Table {
                epoch,
                blobs: arrived.into_iter().map(|a| a.1).collect(),
            }
        } else {
            Msg::Table {
                epoch,
                blobs: Vec::new(),
            }
        }
        .encode();
        let frame: Arc<[u8]> = Arc::from(frame);
        // A shared allgather: one PE per node (the lowest that asked, still connected) gets the
        // table and publishes it; the node's other askers wait for it (see `crate::table`).
        // Linear in the PEs: a job of 100,000 PEs pays no per-pair work here.
        let mut groups: BTreeMap<usize, (usize, Vec<usize>)> = BTreeMap::new();
        if let (true, Some(nodes)) = (is_table, &self.nodes) {
            for pe in (0..self.npes()).filter(|&p| asks_shared[p]) {
                if self.slots[pe].conn.is_some() {
                    groups
                        .entry(nodes[pe])
                        .or_insert((pe, Vec::new()))
                        .1
                        .push(pe);
                }
            }
        }
        // Each group lists its leader first; a node with one asker gets the table itself.
        let waiting: Vec<(usize, Vec<usize>)> = groups
            .into_values()
            .filter(|(_, pes)| pes.len() > 1)
            .map(|(leader, mut pes)| {
                pes.remove(0);
                (leader, pes)
            })
            .collect();
        let mut waits = vec![false; self.npes()];
        for (leader, pes) in &waiting {
            pes.iter().for_each(|&pe| waits[pe] = true);
            let lead = Msg::Lead { epoch }.encode();
            if let Some(c) = self.slots[*leader].conn.as_mut() {
                let _ = c.send(&lead);
            }
        }
        for pe in (0..self.npes()).filter(|&pe| !waits[pe]) {
            self.send_table(pe, &frame);
        }
        if is_table && asks_shared.iter().any(|&a| a) {
            self.shared = Some(SharedRound {
                epoch,
                frame,
                waiting,
            });
        }
    }

    fn check_timeout(&mut self) {
        if self.timeout_detail.is_some()
            || self.all_hello()
            || self.started.elapsed() < self.timeout
        {
            return;
        }
        let missing: Vec<usize> = (0..self.npes()).filter(|&p| !self.slots[p].hello).collect();
        let detail = format!(
            "{} {} of {} did not reach the rendezvous within {}",
            if missing.len() == 1 { "PE" } else { "PEs" },
            pe_list(&missing),
            self.npes(),
            secs(self.timeout)
        );
        let frame = error_frame(ERR_TIMEOUT, &detail);
        let mut told = 0;
        for slot in &mut self.slots {
            if let Some(c) = slot.conn.as_mut() {
                let _ = c.send(&frame);
                told += 1;
            }
        }
        if self.slots.iter().any(|s| s.hello) || told > 0 {
            self.notices.push(Notice::RendezvousTimeout {
                detail: detail.clone(),
            });
        }
        self.timeout_detail = Some(detail);
    }

    fn check_stranded(&mut self) {
        // Cheap first: nobody waits in a collective most of the time.
        if self.stranded_reported || !self.slots.iter().any(|s| s.arrived.is_some()) {
            return;
        }
        if self.stranded().is_some() {
            self.stranded_reported = true;
            self.notices.push(Notice::Stranded);
        }
    }
}

#[cfg(test)]
mod outbox_tests {
    use super::Outbox;
    use std::io::{self, Write};
    use std::sync::Arc;

    /// A socket that takes at most `step` bytes per write and would block every other call.
    struct Trickle {
        got: Vec<u8>,
        step: usize,
        block: bool,
    }

    impl Write for Trickle {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.block = !self.block;
            if self.block {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = b.len().min(self.step);
            self.got.extend_from_slice(&b[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn shared_frames_go_out_whole_and_in_order_through_partial_writes() {
        let table: Arc<[u8]> = (0..=255u8).cycle().take(10_000).collect::<Vec<_>>().into();
        let mut a = Outbox::default();
        let mut b = Outbox::default();
        a.push(Arc::from(&b"hello"[..]));
        a.push(Arc::clone(&table));
        b.push(Arc::clone(&table));
        a.push(Arc::from(&[][..]));
        assert_eq!(
            Arc::strong_count(&table),
            3,
            "one copy of the table, shared"
        );
        let mut sa = Trickle {
            got: Vec::new(),
            step: 777,
            block: false,
        };
        let mut sb = Trickle {
            got: Vec::new(),
            step: 4096,
            block: false,
        };
        while !a.is_empty() || !b.is_empty() {
            a.write_to(&mut sa).expect("write");
            b.write_to(&mut sb).expect("write");
        }
        let mut want = b"hello".to_vec();
        want.extend_from_slice(&table);
        assert_eq!(sa.got, want);
        assert_eq!(sb.got, &table[..]);
        assert_eq!(Arc::strong_count(&table), 1, "sent frames are released");
    }
}
