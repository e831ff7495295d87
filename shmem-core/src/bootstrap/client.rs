//! The PE's side of the launcher connection: hello, collectives, finalize.
//!
//! Uses only `std` (and the sibling `wire` module) so integration tests can compile it on its own
//! with `#[path]`. The library wraps it in `Bootstrap`, which maps [`ClientError`] to the
//! crate's error type.

use std::io::{self, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::wire::{CollectiveKind, ENV_RENDEZVOUS, ERR_TIMEOUT, FrameBuf, Msg, PROTOCOL_VERSION};

/// Extra time the PE waits for the launcher's verdict beyond the rendezvous timeout before it
/// gives up on its own.
pub const BACKSTOP_SLACK: Duration = Duration::from_secs(5);

/// Why a launcher conversation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    /// Not every PE reached the rendezvous in time; the text names the missing PEs when the
    /// launcher knows them.
    Timeout(String),
    /// Anything else: lost connection, protocol error, error reported by the launcher.
    Failed(String),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Timeout(s) | ClientError::Failed(s) => f.write_str(s),
        }
    }
}

/// Waits politely: yields first, then sleeps for growing intervals capped well below 1 ms, so
/// the caller's progress function still runs often and many PEs on few cores all move.
struct Backoff {
    rounds: u32,
}

impl Backoff {
    const YIELDS: u32 = 32;
    const MAX_SLEEP: Duration = Duration::from_micros(500);

    fn new() -> Self {
        Backoff { rounds: 0 }
    }

    fn wait(&mut self) {
        if self.rounds < Self::YIELDS {
            std::thread::yield_now();
        } else {
            let shift = (self.rounds - Self::YIELDS).min(9);
            std::thread::sleep(Duration::from_micros(1u64 << shift).min(Self::MAX_SLEEP));
        }
        self.rounds = self.rounds.saturating_add(1);
    }
}

/// Resolves `addr` (`host:port`) and connects to it with `timeout`, with Nagle off.
pub fn connect_stream(addr: &str, timeout: Duration) -> io::Result<TcpStream> {
    let sock = addr.to_socket_addrs()?.next().ok_or_else(|| {
        io::Error::new(io::ErrorKind::NotFound, "the name resolves to no address")
    })?;
    let stream = TcpStream::connect_timeout(&sock, timeout)?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// An open connection to the launcher.
#[derive(Debug)]
pub struct Client {
    stream: TcpStream,
    addr: String,
    frames: FrameBuf,
    pe: usize,
    npes: usize,
    /// Number of the next collective.
    epoch: u64,
    /// Until the first collective completes, give up at this instant even if the launcher is
    /// silent (a backstop for the launcher's own timeout).
    rendezvous_deadline: Option<Instant>,
    timeout: Duration,
    finalized: bool,
    /// Once broken, every later call returns this error.
    broken: Option<ClientError>,
}

impl Client {
    /// Connects to the launcher at `addr` and says hello.
    pub fn connect(
        addr: &str,
        job_id: u64,
        pe: usize,
        npes: usize,
        timeout: Duration,
    ) -> Result<Client, ClientError> {
        let start = Instant::now();
        let fail = |what: &str, e: io::Error| {
            ClientError::Failed(format!(
                "PE {pe}: cannot {what} the launcher at {addr}: {e}"
            ))
        };
        let mut stream = connect_stream(addr, timeout).map_err(|e| {
            ClientError::Failed(format!(
                "PE {pe}: cannot connect to the launcher at {addr} ({ENV_RENDEZVOUS}): {e}; \
                 is that address reachable from this host? (shmemrun --rendezvous-addr \
                 chooses it)"
            ))
        })?;
        let hello = Msg::Hello {
            version: PROTOCOL_VERSION,
            job_id,
            pe: pe as u32,
            npes: npes as u32,
        };
        stream
            .write_all(&hello.encode())
            .map_err(|e| fail("say hello to", e))?;
        stream
            .set_nonblocking(true)
            .map_err(|e| fail("configure the connection to", e))?;
        Ok(Client {
            stream,
            addr: addr.to_string(),
            frames: FrameBuf::default(),
            pe,
            npes,
            epoch: 0,
            rendezvous_deadline: Some(start + timeout + BACKSTOP_SLACK),
            timeout,
            finalized: false,
            broken: None,
        })
    }

    /// Contributes `mine` to the next collective and returns every PE's blob, indexed by PE.
    pub fn allgather(
        &mut self,
        mine: &[u8],
        progress: &mut dyn FnMut(),
    ) -> Result<Vec<Vec<u8>>, ClientError> {
        self.collective(CollectiveKind::Allgather, mine, progress)
    }

    /// Waits until every PE has entered the barrier.
    pub fn barrier(&mut self, progress: &mut dyn FnMut()) -> Result<(), ClientError> {
        self.collective(CollectiveKind::Barrier, &[], progress)
            .map(drop)
    }

    /// Tells the launcher this PE finalized cleanly. Later collectives fail.
    pub fn finalize(&mut self) -> Result<(), ClientError> {
        self.check_usable()?;
        self.finalized = true;
        let r = self.send(&Msg::Finalize, &mut || {});
        self.remember(r)
    }

    /// Asks the launcher to end the whole job with exit status `status` (`shmem_global_exit`),
    /// then waits (at most `wait`) for its answer or for the connection to close, so that the
    /// request has surely been read before this process exits. Works on a finalized or broken
    /// connection too, as far as the socket allows.
    pub fn global_exit(&mut self, status: i32, wait: Duration) -> Result<(), ClientError> {
        self.send(&Msg::GlobalExit { status }, &mut || {})?;
        let until = Instant::now() + wait;
        let mut backoff = Backoff::new();
        while Instant::now() < until {
            match self.fill() {
                // End of stream or a broken connection: the launcher is done with us.
                Ok(false) | Err(_) => return Ok(()),
                Ok(true) => {}
            }
            if !self.frames.is_empty() {
                return Ok(());
            }
            backoff.wait();
        }
        Ok(())
    }

    fn check_usable(&self) -> Result<(), ClientError> {
        if let Some(e) = &self.broken {
            return Err(e.clone());
        }
        if self.finalized {
            return Err(ClientError::Failed(format!(
                "PE {}: launcher connection used after finalize",
                self.pe
            )));
        }
        Ok(())
    }

    fn remember<T>(&mut self, r: Result<T, ClientError>) -> Result<T, ClientError> {
        if let Err(e) = &r {
            self.broken = Some(e.clone());
        }
        r
    }

    fn collective(
        &mut self,
        kind: CollectiveKind,
        blob: &[u8],
        progress: &mut dyn FnMut(),
    ) -> Result<Vec<Vec<u8>>, ClientError> {
        self.check_usable()?;
        let r = self.run_collective(kind, blob, progress);
        self.remember(r)
    }

    fn run_collective(
        &mut self,
        kind: CollectiveKind,
        blob: &[u8],
        progress: &mut dyn FnMut(),
    ) -> Result<Vec<Vec<u8>>, ClientError> {
        let epoch = self.epoch;
        self.send(
            &Msg::Collective {
                epoch,
                kind,
                blob: blob.to_vec(),
            },
            progress,
        )?;
        let blobs = self.await_table(epoch, progress)?;
        let want = if kind == CollectiveKind::Barrier {
            0
        } else {
            self.npes
        };
        if blobs.len() != want {
            return Err(self.protocol(format!(
                "table for epoch {epoch} has {} entries, expected {want}",
                blobs.len()
            )));
        }
        self.epoch += 1;
        self.rendezvous_deadline = None;
        Ok(blobs)
    }

    fn protocol(&self, what: String) -> ClientError {
        ClientError::Failed(format!(
            "PE {}: protocol error on the launcher connection ({}): {what}",
            self.pe, self.addr
        ))
    }

    fn lost(&self, why: &str) -> ClientError {
        ClientError::Failed(format!(
            "PE {}: lost the connection to the launcher at {} ({why}); did shmemrun exit?",
            self.pe, self.addr
        ))
    }

    /// Writes one frame, progressing while the socket is full.
    fn send(&mut self, msg: &Msg, progress: &mut dyn FnMut()) -> Result<(), ClientError> {
        let frame = msg.encode();
        let mut sent = 0;
        let mut backoff = Backoff::new();
        while sent < frame.len() {
            match self.stream.write(&frame[sent..]) {
                Ok(0) => return Err(self.lost("connection closed")),
                Ok(n) => sent += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    progress();
                    backoff.wait();
                }
                Err(e) => return Err(self.lost(&e.to_string())),
            }
        }
        Ok(())
    }

    /// Reads whatever the socket holds; `Ok(false)` on end of stream.
    fn fill(&mut self) -> Result<bool, ClientError> {
        self.frames
            .fill_from(&mut self.stream)
            .map_err(|e| self.lost(&e.to_string()))
    }

    fn await_table(
        &mut self,
        epoch: u64,
        progress: &mut dyn FnMut(),
    ) -> Result<Vec<Vec<u8>>, ClientError> {
        let mut backoff = Backoff::new();
        loop {
            progress();
            let open = self.fill()?;
            // Every message answers the collective: the first one decides.
            if let Some(msg) = self.frames.next_msg().map_err(|e| self.protocol(e))? {
                match msg {
                    Msg::Table { epoch: e, blobs } if e == epoch => return Ok(blobs),
                    Msg::Error { code, detail } if code == ERR_TIMEOUT => {
                        return Err(ClientError::Timeout(detail));
                    }
                    Msg::Error { detail, .. } => {
                        return Err(ClientError::Failed(format!(
                            "PE {}: the launcher reported: {detail}",
                            self.pe
                        )));
                    }
                    other => {
                        return Err(self.protocol(format!(
                            "unexpected {other:?} while waiting for collective {epoch}"
                        )));
                    }
                }
            }
            if !open {
                return Err(self.lost("end of stream"));
            }
            if self
                .rendezvous_deadline
                .is_some_and(|d| Instant::now() >= d)
            {
                return Err(ClientError::Timeout(format!(
                    "PE {} of {}: no answer from the launcher at {} within {:?} \
                     (rendezvous timeout {:?} + {:?})",
                    self.pe,
                    self.npes,
                    self.addr,
                    self.timeout + BACKSTOP_SLACK,
                    self.timeout,
                    BACKSTOP_SLACK
                )));
            }
            backoff.wait();
        }
    }
}
