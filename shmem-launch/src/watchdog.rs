//! The PE's watchdog: a thread with a connection of its own to the launcher (the control
//! connection of [`wire`](crate::wire)) that ends the process when the launcher ends the job or
//! is gone.
//!
//! A PE on another host cannot be signalled by the launcher, nor die with it (`PR_SET_PDEATHSIG`
//! works between parent and child only), and its host can vanish without closing anything. So
//! the PE keeps its own watch: [`Msg::Abort`] ends it with the launcher's status and reason; end
//! of stream, or no word from the launcher within the timeout of the welcome, ends it with a
//! message that names the launcher's address.
//!
//! Why a thread with its own socket: the synchronous launcher connection ([`client`]) is read
//! only while the program is inside a start-up collective, and the PE's hot paths must not pay
//! for supervision. The thread sleeps in `poll` and wakes twice a second at most.
//!
//! [`client`]: crate::client

use std::io::{self, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use crate::auth::{self, Channel, Nonce, Secret};
use crate::client::{connect_stream, read_challenge};
use crate::wire::{FrameBuf, MAX_CONTROL_FRAME, Msg, PROTOCOL_VERSION, control_fields, secs};

/// What to do when the job is over for this PE: called once, on the watchdog thread, with the
/// exit status and the message for stderr. A PE's is [`exit_now`]; tests record it.
pub type Verdict = Box<dyn FnOnce(i32, String) + Send>;

/// The exit status of a PE that lost its launcher.
pub const LOST_STATUS: i32 = 1;

/// Opens the control connection to the launcher at `addr` (the rendezvous address) for PE `pe`
/// of job `job_id`, reads the launcher's challenge, says hello with the proof that it holds
/// `secret`, and starts the watchdog thread, which calls `verdict` once when the job is over for
/// this PE. Returns an error for the user when the connection cannot be opened, no challenge
/// comes within `connect_timeout`, or the thread cannot start.
pub fn start(
    addr: &str,
    job_id: u64,
    secret: &Secret,
    pe: usize,
    connect_timeout: Duration,
    verdict: Verdict,
) -> Result<(), String> {
    let fail = |what: &str, e: io::Error| {
        format!("PE {pe}: cannot {what} the control connection to the launcher at {addr}: {e}")
    };
    let deadline = Instant::now() + connect_timeout;
    let mut stream = connect_stream(addr, connect_timeout).map_err(|e| fail("open", e))?;
    let challenge =
        read_challenge(&mut stream, deadline).map_err(|e| fail("read the challenge on", e))?;
    let mine = auth::nonce().map_err(|e| fail("make a nonce for", e))?;
    let pid = std::process::id();
    let fields = control_fields(PROTOCOL_VERSION, job_id, pe as u32, pid);
    let hello = Msg::ControlHello {
        version: PROTOCOL_VERSION,
        job_id,
        pe: pe as u32,
        pid,
        nonce: mine,
        mac: auth::hello_mac(secret, Channel::Control, &challenge, &mine, &fields),
    };
    stream
        .write_all(&hello.encode())
        .map_err(|e| fail("say hello on", e))?;
    stream
        .set_nonblocking(true)
        .map_err(|e| fail("configure", e))?;
    let now = Instant::now();
    let mut watch = Watch {
        stream,
        addr: addr.to_string(),
        pe,
        secret: secret.clone(),
        nonces: (challenge, mine),
        welcomed: false,
        frames: FrameBuf::with_limit(MAX_CONTROL_FRAME),
        out: Vec::new(),
        interval: None,
        timeout: None,
        heard: now,
        next_beat: now,
    };
    std::thread::Builder::new()
        .name("shmem-watchdog".into())
        .spawn(move || {
            let (status, message) = watch.run();
            verdict(status, message);
        })
        .map_err(|e| fail("start the thread for", e))?;
    Ok(())
}

/// Writes `message` and a newline to stderr and ends the process with `status` at once.
///
/// `_exit`, not `exit`: the program's other threads may be inside UCX, and `exit` would run
/// atexit handlers and library destructors under their feet (a crash would then replace the
/// launcher's verdict). The message goes straight to file descriptor 2, without Rust's stderr
/// lock, which a thread of the program might hold.
pub fn exit_now(status: i32, message: String) {
    let line = format!("{message}\n");
    // SAFETY: `line` is a live buffer of `line.len()` bytes for the duration of the call; write
    // only reads it. A failed or short write changes nothing: the process ends next.
    unsafe {
        libc::write(libc::STDERR_FILENO, line.as_ptr().cast(), line.len());
    }
    // SAFETY: _exit has no preconditions; it ends every thread of the process.
    unsafe { libc::_exit(status) }
}

/// The watchdog thread's state.
struct Watch {
    stream: TcpStream,
    addr: String,
    pe: usize,
    secret: Secret,
    /// The launcher's challenge and this PE's nonce, for the launcher's proof in the welcome.
    nonces: (Nonce, Nonce),
    /// The launcher proved the secret in its welcome; nothing else counts before.
    welcomed: bool,
    frames: FrameBuf,
    /// Bytes not yet taken by the socket.
    out: Vec<u8>,
    /// Heartbeat interval from the welcome (`None`: none yet, or none wanted).
    interval: Option<Duration>,
    /// Silence after which the launcher counts as gone (`None`: never).
    timeout: Option<Duration>,
    /// When something last arrived from the launcher.
    heard: Instant,
    next_beat: Instant,
}

impl Watch {
    /// Runs until the job is over for this PE; returns the exit status and the message.
    fn run(&mut self) -> (i32, String) {
        loop {
            self.wait();
            let before = self.frames.buffered();
            let open = self.fill();
            if self.frames.buffered() != before {
                self.heard = Instant::now();
            }
            // Take in what arrived before an end of stream: an abort explains it.
            loop {
                match self.frames.next_msg() {
                    Ok(Some(msg)) => {
                        if let Some(end) = self.handle(msg) {
                            return end;
                        }
                    }
                    Ok(None) => break,
                    Err(e) => return self.lost(&format!("protocol error: {e}")),
                }
            }
            match open {
                Ok(true) => {}
                Ok(false) => return self.lost("the connection was closed"),
                Err(e) => return self.lost(&e.to_string()),
            }
            if let Some(timeout) = self.timeout {
                let silent = self.heard.elapsed();
                if silent > timeout {
                    return (
                        LOST_STATUS,
                        format!(
                            "PE {}: no word from the launcher at {} for {} (heartbeat \
                             timeout): shmemrun or the network to it is gone; exiting",
                            self.pe,
                            self.addr,
                            secs(timeout)
                        ),
                    );
                }
            }
            self.beat();
        }
    }

    fn lost(&self, why: &str) -> (i32, String) {
        (
            LOST_STATUS,
            format!(
                "PE {}: lost the control connection to the launcher at {} ({why}): shmemrun is \
                 gone; exiting",
                self.pe, self.addr
            ),
        )
    }

    /// Handles one message; `Some` ends the PE.
    fn handle(&mut self, msg: Msg) -> Option<(i32, String)> {
        match msg {
            Msg::Welcome {
                interval_ms,
                timeout_ms,
                mac,
            } if !self.welcomed => {
                let (challenge, mine) = &self.nonces;
                let want = auth::launcher_mac(
                    &self.secret,
                    Channel::Control,
                    challenge,
                    mine,
                    self.pe as u32,
                );
                if !auth::tags_equal(&mac, &want) {
                    return Some((
                        LOST_STATUS,
                        format!(
                            "PE {}: the launcher at {} did not prove that it holds the job \
                             secret on the control connection: is it this job's shmemrun?",
                            self.pe, self.addr
                        ),
                    ));
                }
                self.welcomed = true;
                let ms = |v: u32| (v > 0).then(|| Duration::from_millis(u64::from(v)));
                self.interval = ms(interval_ms);
                self.timeout = ms(timeout_ms);
                self.next_beat = Instant::now();
                None
            }
            Msg::Heartbeat if self.welcomed => None,
            Msg::Abort { status, reason } if self.welcomed => Some((
                status,
                format!("PE {}: shmemrun ended the job: {reason}", self.pe),
            )),
            Msg::Error { detail, .. } => Some((
                LOST_STATUS,
                format!(
                    "PE {}: the launcher at {} refused the control connection: {detail}",
                    self.pe, self.addr
                ),
            )),
            other => Some(self.lost(&format!("unexpected {other:?}"))),
        }
    }

    /// Sleeps until the socket has something, a heartbeat is due or the timeout may expire.
    fn wait(&self) {
        let now = Instant::now();
        let mut until = now + Duration::from_secs(1);
        if let Some(i) = self.interval {
            until = until.min(self.next_beat.max(now + i / 8));
        }
        if let Some(t) = self.timeout {
            until = until.min(self.heard + t + Duration::from_millis(1));
        }
        let wait = until.saturating_duration_since(now);
        let mut fd = libc::pollfd {
            fd: self.stream.as_raw_fd(),
            events: libc::POLLIN
                | if self.out.is_empty() {
                    0
                } else {
                    libc::POLLOUT
                },
            revents: 0,
        };
        let ms = wait.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int;
        // SAFETY: `fd` is one initialized pollfd, exclusively borrowed for the call; poll only
        // writes its `revents`. An error (EINTR) just ends this wait early.
        unsafe {
            libc::poll(&mut fd, 1, ms);
        }
    }

    /// Reads what the socket holds; `Ok(false)` at the end of the stream.
    fn fill(&mut self) -> io::Result<bool> {
        self.frames.fill_from(&mut self.stream)
    }

    /// Sends a heartbeat when one is due (and the last one has left), and flushes.
    fn beat(&mut self) {
        let Some(interval) = self.interval else {
            return;
        };
        let now = Instant::now();
        if now >= self.next_beat {
            self.next_beat = now + interval;
            // A launcher that has not taken the last one needs no more.
            if self.out.is_empty() {
                self.out = Msg::Heartbeat.encode();
            }
        }
        while !self.out.is_empty() {
            match self.stream.write(&self.out) {
                Ok(0) => return,
                Ok(n) => {
                    self.out.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // Full (a silent launcher) or broken: reading finds out which.
                Err(_) => return,
            }
        }
    }
}
