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
//! [`MAX_HANDSHAKE_FRAME`] bytes, which the agent checks against the relayed challenge with the
//! secret before it relays anything more; anything else is dropped on the spot, and at most
//! [`MAX_STRANGERS`] such connections are held at once. Relayed frames keep the launcher's
//! limits ([`MAX_FRAME`]).
//!
//! The PEs' stdout and stderr are read by the agent and written to its own, line by line, as
//! tagged records ([`output::record`]) that the launcher splits per PE. The agent reports every
//! PE's end ([`Msg::Exited`]) after relaying what its connections still held; it ends its PEs
//! (SIGTERM, then SIGKILL) on [`Msg::Stop`] or when its connection to the launcher ends, and
//! exits when they are gone.

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::process::{ChildStderr, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use shmem_launch::auth::{self, Channel, Nonce, Secret};
use shmem_launch::client;
use shmem_launch::wire::{
    self, FrameBuf, MAX_FRAME, MAX_HANDSHAKE_FRAME, Msg, control_fields, hello_fields,
    max_table_frame,
};

use crate::children;
use crate::output::{self, MAX_PIECE};

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

/// A connection of a process on this host to the agent's port, relayed as virtual connection
/// `id`.
struct Local {
    stream: TcpStream,
    /// Frames from the process.
    frames: FrameBuf,
    /// The launcher's challenge, once relayed (the hello is checked against it).
    challenge: Option<Nonce>,
    /// The first bytes from the launcher, until they make the challenge.
    head: Vec<u8>,
    /// The PE it proved to be, once its hello proved the secret.
    pe: Option<usize>,
    /// Bytes for the process.
    out: VecDeque<u8>,
    opened: Instant,
    /// The launcher closed it: close once `out` is written.
    closing: bool,
}

/// One PE process.
struct Pe {
    pid: libc::pid_t,
    reaped: bool,
    /// Its stdout and stderr, while open, with the bytes of an unfinished line.
    pipes: Vec<OutPipe>,
}

/// A PE's stdout or stderr being forwarded as records.
struct OutPipe {
    fd: Box<dyn ReadFd>,
    to_stderr: bool,
    buf: Vec<u8>,
    /// Whether the next byte starts a line.
    line_start: bool,
    open: bool,
}

/// The agent's stdout or stderr, written without blocking from what its PEs wrote.
struct Sink {
    fd: RawFd,
    buf: VecDeque<u8>,
    /// Writing failed for good (the reader is gone): what comes is dropped.
    broken: bool,
}

impl Sink {
    fn new(fd: RawFd) -> Sink {
        set_nonblocking(fd, true);
        Sink {
            fd,
            buf: VecDeque::new(),
            broken: false,
        }
    }

    /// Writes what the descriptor takes now.
    fn flush(&mut self) {
        while !self.buf.is_empty() && !self.broken {
            let (a, _) = self.buf.as_slices();
            // SAFETY: writes at most `a.len()` bytes from `a`, a live slice, to a descriptor
            // of this process (its stdout or stderr).
            let n = unsafe { libc::write(self.fd, a.as_ptr().cast(), a.len()) };
            if n > 0 {
                self.buf.drain(..n as usize);
                continue;
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::WouldBlock => return,
                _ => self.broken = true,
            }
        }
        if self.broken {
            self.buf.clear();
        }
    }

    /// Writes everything left, waiting (the agent is about to exit).
    fn drain(&mut self) {
        set_nonblocking(self.fd, false);
        self.flush();
    }
}

/// A pipe that can be read and polled.
trait ReadFd: Read + AsRawFd {}
impl ReadFd for ChildStdout {}
impl ReadFd for ChildStderr {}

/// The agent's state.
struct Agent {
    node: usize,
    first_pe: usize,
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

    /// Starts the PE of local rank `rank`; a PE that cannot start is reported as exited with
    /// 127 or 126, as a shell would, after its message.
    fn spawn(&mut self, program: &OsString, args: &[OsString], rank: usize, rendezvous: &str) {
        let pe = self.first_pe + rank;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env(wire::ENV_RENDEZVOUS, rendezvous)
            .env(wire::ENV_PE, pe.to_string())
            .env(wire::ENV_LOCAL_RANK, rank.to_string())
            .env(wire::ENV_JOB_SECRET, self.secret.to_hex())
            .stdin(if pe == 0 {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Die with the agent.
        children::die_with_parent(&mut cmd);
        match cmd.spawn() {
            Ok(mut child) => {
                let mut pipes = Vec::new();
                let out = child.stdout.take().map(|p| Box::new(p) as Box<dyn ReadFd>);
                let err = child.stderr.take().map(|p| Box::new(p) as Box<dyn ReadFd>);
                for (fd, to_stderr) in [(out, false), (err, true)] {
                    if let Some(fd) = fd {
                        set_nonblocking(fd.as_raw_fd(), true);
                        pipes.push(OutPipe {
                            fd,
                            to_stderr,
                            buf: Vec::new(),
                            line_start: true,
                            open: true,
                        });
                    }
                }
                self.pes.push(Pe {
                    pid: child.id() as libc::pid_t,
                    reaped: false,
                    pipes,
                });
            }
            Err(e) => {
                let text = format!(
                    "shmemrun: cannot run {}: {}",
                    program.to_string_lossy(),
                    children::os_message(&e)
                );
                emit(&mut self.sinks, pe, true, text.as_bytes(), true, true);
                let code = children::spawn_code(&e);
                self.pes.push(Pe {
                    pid: 0,
                    reaped: true,
                    pipes: Vec::new(),
                });
                self.exited(pe, 0, (code & 0xff) << 8);
            }
        }
    }

    /// Reports that PE `pe` ended with the wait status `status`.
    fn exited(&mut self, pe: usize, pid: u32, status: i32) {
        if self.status == 0 {
            let s = decode_status(status);
            self.status = s.code();
        }
        self.send_up(&Msg::Exited {
            pe: pe as u32,
            pid,
            status,
        });
    }

    fn send_up(&mut self, msg: &Msg) {
        if self.up.is_some() {
            self.up_out.extend(msg.encode());
        }
    }

    fn all_reaped(&self) -> bool {
        self.pes.iter().all(|p| p.reaped)
    }

    /// The main loop; returns the exit status.
    fn run(&mut self) -> i32 {
        let mut done_at: Option<Instant> = None;
        loop {
            self.poll_once();
            self.reap();
            // The exits go out now, not a round later.
            self.write_up();
            if self.kill_at.is_some_and(|t| Instant::now() >= t) {
                self.kill_at = None;
                self.signal_all(libc::SIGKILL);
            }
            if self.all_reaped() {
                let outputs_open = self.pes.iter().any(|p| p.pipes.iter().any(|o| o.open));
                let until = *done_at.get_or_insert_with(|| Instant::now() + LINGER);
                if !outputs_open || Instant::now() >= until {
                    break;
                }
            }
        }
        self.finish();
        self.status
    }

    /// Sends what is left to the launcher and waits (bounded) for it to close the connection,
    /// so that everything was read before the agent's exit is seen.
    fn finish(&mut self) {
        for (i, p) in self.pes.iter_mut().enumerate() {
            for o in &mut p.pipes {
                if !o.buf.is_empty() {
                    let pe = self.first_pe + i;
                    emit(&mut self.sinks, pe, o.to_stderr, &o.buf, o.line_start, true);
                    o.buf.clear();
                }
            }
        }
        for sink in &mut self.sinks {
            sink.drain();
        }
        let Some(up) = self.up.take() else {
            return;
        };
        let until = Instant::now() + LINGER;
        let _ = up.set_nonblocking(false);
        let _ = up.set_write_timeout(Some(LINGER));
        let bytes: Vec<u8> = self.up_out.drain(..).collect();
        let mut w = &up;
        if w.write_all(&bytes).is_err() {
            return;
        }
        let _ = up.shutdown(Shutdown::Write);
        let mut scratch = [0u8; 4096];
        let mut r = &up;
        while Instant::now() < until {
            let _ = up.set_read_timeout(Some(until.saturating_duration_since(Instant::now())));
            match r.read(&mut scratch) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    }

    fn signal_all(&self, sig: libc::c_int) {
        for p in self.pes.iter().filter(|p| !p.reaped && p.pid > 0) {
            children::kill(p.pid, sig);
        }
    }

    /// Ends the PEs: SIGTERM now, SIGKILL after [`KILL_GRACE`].
    fn stop(&mut self) {
        if self.stopping {
            return;
        }
        self.stopping = true;
        self.signal_all(libc::SIGTERM);
        self.kill_at = Some(Instant::now() + KILL_GRACE);
    }

    /// Reaps the PEs that exited, and reports them once their connections are relayed.
    fn reap(&mut self) {
        loop {
            let mut status: libc::c_int = 0;
            // SAFETY: `status` is a valid, writable int for the duration of the call.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                return;
            }
            let Some(i) = self.pes.iter().position(|p| p.pid == pid && !p.reaped) else {
                continue;
            };
            self.pes[i].reaped = true;
            let pe = self.first_pe + i;
            // What it wrote to the agent before exiting goes first (a finalize).
            let ids: Vec<u32> = self
                .locals
                .iter()
                .filter(|(_, l)| l.pe == Some(pe))
                .map(|(&id, _)| id)
                .collect();
            for id in ids {
                self.read_local(id, true);
            }
            self.exited(pe, pid as u32, status);
        }
    }

    /// One round: waits for activity (at most [`REAP_EVERY`]) and handles it.
    fn poll_once(&mut self) {
        let mut fds = Vec::new();
        let mut what = Vec::new();
        let pollin = |fd: RawFd, out: bool| libc::pollfd {
            fd,
            events: libc::POLLIN | if out { libc::POLLOUT } else { 0 },
            revents: 0,
        };
        fds.push(pollin(self.listener.as_raw_fd(), false));
        what.push(Slot::Listener);
        if let Some(up) = &self.up {
            fds.push(pollin(up.as_raw_fd(), !self.up_out.is_empty()));
            what.push(Slot::Up);
        }
        let reading = self.up_out.len() < UPSTREAM_HIGH;
        for (&id, l) in &self.locals {
            let mut p = pollin(l.stream.as_raw_fd(), !l.out.is_empty());
            if !reading {
                p.events &= !libc::POLLIN;
            }
            fds.push(p);
            what.push(Slot::Local(id));
        }
        for (k, sink) in self.sinks.iter().enumerate() {
            if !sink.buf.is_empty() {
                fds.push(libc::pollfd {
                    fd: sink.fd,
                    events: libc::POLLOUT,
                    revents: 0,
                });
                what.push(Slot::Sink(k));
            }
        }
        let output_room = self.sinks.iter().all(|s| s.buf.len() < OUTPUT_HIGH);
        for (i, p) in self.pes.iter().enumerate() {
            for (j, o) in p.pipes.iter().enumerate() {
                if o.open && output_room {
                    fds.push(pollin(o.fd.as_raw_fd(), false));
                    what.push(Slot::Output(i, j));
                }
            }
        }
        let ms = REAP_EVERY.as_millis() as libc::c_int;
        // SAFETY: `fds` is a live, exclusively borrowed array of `fds.len()` initialized pollfd
        // structs; poll only writes their `revents` fields.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if rc <= 0 {
            self.expire_strangers();
            return;
        }
        for (p, w) in fds.iter().zip(what) {
            if p.revents == 0 {
                continue;
            }
            match w {
                Slot::Listener => self.accept(),
                Slot::Up => self.read_up(),
                Slot::Local(id) => {
                    self.read_local(id, reading);
                    self.write_local(id);
                }
                Slot::Output(i, j) => self.read_output(i, j),
                Slot::Sink(k) => self.sinks[k].flush(),
            }
        }
        for sink in &mut self.sinks {
            sink.flush();
        }
        self.write_up();
        self.expire_strangers();
    }

    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    let strangers = self.locals.values().filter(|l| l.pe.is_none()).count();
                    if strangers >= MAX_STRANGERS || self.up.is_none() {
                        continue; // Closed at once.
                    }
                    if stream.set_nonblocking(true).is_err() {
                        continue;
                    }
                    let _ = stream.set_nodelay(true);
                    let id = self.next_id;
                    self.next_id = self.next_id.wrapping_add(1);
                    self.locals.insert(
                        id,
                        Local {
                            stream,
                            frames: FrameBuf::with_limit(MAX_HANDSHAKE_FRAME),
                            challenge: None,
                            head: Vec::new(),
                            pe: None,
                            out: VecDeque::new(),
                            opened: Instant::now(),
                            closing: false,
                        },
                    );
                    self.send_up(&Msg::Open { conn: id });
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }

    /// Drops connections that did not prove the secret in time.
    fn expire_strangers(&mut self) {
        let late: Vec<u32> = self
            .locals
            .iter()
            .filter(|(_, l)| l.pe.is_none() && l.opened.elapsed() > HANDSHAKE_TIMEOUT)
            .map(|(&id, _)| id)
            .collect();
        for id in late {
            self.close_local(id);
        }
    }

    /// Forgets local connection `id` and tells the launcher.
    fn close_local(&mut self, id: u32) {
        if self.locals.remove(&id).is_some() {
            self.send_up(&Msg::Close { conn: id });
        }
    }

    /// Reads local connection `id` and relays its frames (checking the hello first); with
    /// `all`, everything it holds, else one frame's worth.
    fn read_local(&mut self, id: u32, all: bool) {
        loop {
            let Some(l) = self.locals.get_mut(&id) else {
                return;
            };
            let before = l.frames.buffered();
            let open = l.frames.fill_from(&mut l.stream);
            let got = l.frames.buffered() > before;
            let mut relay = Vec::new();
            let mut bad = false;
            loop {
                match l.frames.next_frame() {
                    Ok(Some(frame)) => {
                        if l.pe.is_none() {
                            match check_hello(&self.secret, self.job_id, l.challenge, &frame) {
                                Some(pe)
                                    if (self.first_pe..self.first_pe + self.pes.len())
                                        .contains(&pe) =>
                                {
                                    l.pe = Some(pe);
                                    l.frames.set_limit(MAX_FRAME);
                                }
                                _ => {
                                    bad = true;
                                    break;
                                }
                            }
                        }
                        relay.push(frame);
                    }
                    Ok(None) => break,
                    Err(_) => {
                        bad = true;
                        break;
                    }
                }
            }
            for frame in relay {
                self.send_up(&Msg::Relay {
                    conn: id,
                    data: frame,
                });
            }
            if bad || !matches!(open, Ok(true)) {
                self.close_local(id);
                return;
            }
            if !all || !got {
                return;
            }
        }
    }

    fn write_local(&mut self, id: u32) {
        let Some(l) = self.locals.get_mut(&id) else {
            return;
        };
        while !l.out.is_empty() {
            let (a, _) = l.out.as_slices();
            match l.stream.write(a) {
                Ok(0) => break,
                Ok(n) => {
                    l.out.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => {
                    self.close_local(id);
                    return;
                }
            }
        }
        if l.closing && l.out.is_empty() {
            // The launcher closed it: so does the agent (nothing to tell the launcher).
            self.locals.remove(&id);
        }
    }

    /// Reads what the launcher sent (at most one frame ahead) and acts on it.
    fn read_up(&mut self) {
        let Some(up) = self.up.as_mut() else {
            return;
        };
        let open = self.up_frames.fill_from(up);
        loop {
            match self.up_frames.next_msg() {
                Ok(Some(Msg::Relay { conn, data })) => {
                    if let Some(l) = self.locals.get_mut(&conn) {
                        if l.challenge.is_none() {
                            l.head.extend_from_slice(&data);
                            l.challenge = first_challenge(&l.head);
                            if l.challenge.is_some() {
                                l.head = Vec::new();
                            }
                        }
                        l.out.extend(data);
                        self.write_local(conn);
                    }
                }
                Ok(Some(Msg::Close { conn })) => {
                    if let Some(l) = self.locals.get_mut(&conn) {
                        l.closing = true;
                        self.write_local(conn);
                    }
                }
                Ok(Some(Msg::Stop { .. })) => self.stop(),
                Ok(Some(other)) => {
                    return self.lost(&format!("unexpected {other:?} from the launcher"));
                }
                Ok(None) => break,
                Err(e) => return self.lost(&format!("protocol error: {e}")),
            }
        }
        match open {
            Ok(true) => {}
            Ok(false) => self.lost(""),
            Err(e) => self.lost(&e.to_string()),
        }
    }

    fn write_up(&mut self) {
        let Some(up) = self.up.as_mut() else {
            return;
        };
        while !self.up_out.is_empty() {
            let (a, _) = self.up_out.as_slices();
            match up.write(a) {
                Ok(0) => break,
                Ok(n) => {
                    self.up_out.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return self.lost(&e.to_string()),
            }
        }
    }

    /// The connection to the launcher ended (`why` empty: closed): the PEs end.
    fn lost(&mut self, why: &str) {
        self.up = None;
        self.up_out.clear();
        self.locals.clear();
        if !self.all_reaped() && !self.stopping {
            if !why.is_empty() {
                agent_say!(
                    self.node,
                    "lost the connection to the launcher at {} ({why}); ending the host's PEs",
                    self.launcher
                );
            }
            self.stop();
        }
    }

    /// Forwards what PE index `i`'s pipe `j` holds as records.
    fn read_output(&mut self, i: usize, j: usize) {
        let pe = self.first_pe + i;
        let o = &mut self.pes[i].pipes[j];
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match o.fd.read(&mut chunk) {
                Ok(0) => {
                    o.open = false;
                    break;
                }
                Ok(n) => {
                    o.buf.extend_from_slice(&chunk[..n]);
                    let mut start = 0;
                    while let Some(at) = o.buf[start..].iter().position(|&b| b == b'\n') {
                        let end = start + at;
                        let line = &o.buf[start..end];
                        emit(&mut self.sinks, pe, o.to_stderr, line, o.line_start, true);
                        o.line_start = true;
                        start = end + 1;
                    }
                    o.buf.drain(..start);
                    while o.buf.len() >= MAX_PIECE {
                        let piece = &o.buf[..MAX_PIECE];
                        emit(&mut self.sinks, pe, o.to_stderr, piece, o.line_start, false);
                        o.line_start = false;
                        o.buf.drain(..MAX_PIECE);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(_) => {
                    o.open = false;
                    break;
                }
            }
        }
        if !o.buf.is_empty() || !o.line_start {
            let start = o.line_start;
            emit(&mut self.sinks, pe, o.to_stderr, &o.buf, start, true);
            o.buf.clear();
            o.line_start = true;
        }
    }
}

/// What a descriptor in the poll set is.
#[derive(Clone, Copy)]
enum Slot {
    Listener,
    Up,
    Local(u32),
    Output(usize, usize),
    Sink(usize),
}

/// Queues one record of PE `pe`'s output for the agent's stdout or stderr (`sinks`). A reader
/// that is gone is not a reason to stop (the launcher's end is seen on the connection).
/// Records of at most [`MAX_PIECE`] bytes each (the launcher reads no longer ones), the last
/// one ending the line when `end`.
fn emit(sinks: &mut [Sink; 2], pe: usize, to_stderr: bool, bytes: &[u8], start: bool, end: bool) {
    let sink = &mut sinks[usize::from(to_stderr)];
    if sink.broken {
        return;
    }
    let mut start = start;
    let mut rest = bytes;
    while rest.len() > MAX_PIECE {
        sink.buf
            .extend(output::record(pe, &rest[..MAX_PIECE], start, false));
        start = false;
        rest = &rest[MAX_PIECE..];
    }
    sink.buf.extend(output::record(pe, rest, start, end));
}

/// Sets or clears `O_NONBLOCK` on `fd`.
fn set_nonblocking(fd: RawFd, on: bool) {
    // SAFETY: fcntl on a descriptor this process owns (its stdout or stderr, or a pipe of its
    // child); no memory is involved.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            let flags = if on {
                flags | libc::O_NONBLOCK
            } else {
                flags & !libc::O_NONBLOCK
            };
            libc::fcntl(fd, libc::F_SETFL, flags);
        }
    }
}

/// The challenge that starts `head` (what the launcher sent first on a connection), once it is
/// complete.
fn first_challenge(head: &[u8]) -> Option<Nonce> {
    let mut frames = FrameBuf::with_limit(MAX_HANDSHAKE_FRAME);
    frames.extend(head);
    match frames.next_msg() {
        Ok(Some(Msg::Challenge { nonce })) => Some(nonce),
        // Not a challenge: no hello can be checked against it, so none is relayed.
        Ok(Some(_)) | Err(_) => Some([0; auth::NONCE_BYTES]),
        Ok(None) => None,
    }
}

/// The PE that `frame` (a connection's first) proves to be: a hello or control hello whose MAC
/// over `challenge` proves the secret; `None` for anything else.
fn check_hello(
    secret: &Secret,
    job_id: u64,
    challenge: Option<Nonce>,
    frame: &[u8],
) -> Option<usize> {
    let challenge = challenge?;
    let (channel, fields, nonce, mac, pe) = match Msg::decode(frame.get(4..)?).ok()? {
        Msg::Hello {
            version,
            job_id: j,
            pe,
            npes,
            nonce,
            mac,
        } if j == job_id => (
            Channel::Rendezvous,
            hello_fields(version, j, pe, npes),
            nonce,
            mac,
            pe,
        ),
        Msg::ControlHello {
            version,
            job_id: j,
            pe,
            pid,
            nonce,
            mac,
        } if j == job_id => (
            Channel::Control,
            control_fields(version, j, pe, pid),
            nonce,
            mac,
            pe,
        ),
        _ => return None,
    };
    let want = auth::hello_mac(secret, channel, &challenge, &nonce, &fields);
    auth::tags_equal(&want, &mac).then_some(pe as usize)
}

/// A raw wait status as a [`children::Status`].
pub fn decode_status(status: i32) -> children::Status {
    if libc::WIFSIGNALED(status) {
        children::Status::Signaled {
            sig: libc::WTERMSIG(status),
            core: libc::WCOREDUMP(status),
        }
    } else {
        children::Status::Exited(libc::WEXITSTATUS(status))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_hello_that_proves_the_secret_passes() {
        let secret = Secret::from_hex(&"42".repeat(32)).unwrap();
        let other = Secret::from_hex(&"43".repeat(32)).unwrap();
        let challenge = [5u8; 32];
        let hello = |s: &Secret, pe: u32| {
            let fields = hello_fields(wire::PROTOCOL_VERSION, 9, pe, 4);
            Msg::Hello {
                version: wire::PROTOCOL_VERSION,
                job_id: 9,
                pe,
                npes: 4,
                nonce: [1; 32],
                mac: auth::hello_mac(s, Channel::Rendezvous, &challenge, &[1; 32], &fields),
            }
            .encode()
        };
        assert_eq!(
            check_hello(&secret, 9, Some(challenge), &hello(&secret, 3)),
            Some(3)
        );
        assert_eq!(
            check_hello(&secret, 9, Some(challenge), &hello(&other, 3)),
            None
        );
        assert_eq!(
            check_hello(&secret, 8, Some(challenge), &hello(&secret, 3)),
            None
        );
        assert_eq!(
            check_hello(&secret, 9, Some([6; 32]), &hello(&secret, 3)),
            None
        );
        assert_eq!(check_hello(&secret, 9, None, &hello(&secret, 3)), None);
        assert_eq!(check_hello(&secret, 9, Some(challenge), b"junk"), None);
        assert_eq!(
            check_hello(&secret, 9, Some(challenge), &Msg::Heartbeat.encode()),
            None
        );
        // The challenge is taken from the launcher's first frame, whole.
        let c = Msg::Challenge { nonce: challenge }.encode();
        assert_eq!(first_challenge(&c[..10]), None);
        assert_eq!(first_challenge(&c), Some(challenge));
        assert_eq!(decode_status(0x0900).code(), 9);
        assert_eq!(decode_status(9).code(), 128 + 9);
    }
}
