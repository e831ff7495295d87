//! The wire protocol between `shmemrun` and the PEs it starts: the environment variables, the
//! frames and the messages. The PE's side is [`client`](crate::client) and
//! [`watchdog`](crate::watchdog), the launcher's [`server`](crate::server).
//!
//! # Frames
//!
//! Every message is one frame: a little-endian `u32` length `L`, then `L` bytes: a one-byte tag
//! followed by the message's payload. Integers are little-endian; byte strings are a `u32`
//! length followed by the bytes; text is UTF-8 byte strings.
//!
//! # Conversation
//!
//! 1. The PE connects to `SHMEM_RENDEZVOUS` and sends [`Msg::Hello`] with the protocol version,
//!    the job id, its PE number and the job size. A wrong job id or version, a PE number out of
//!    range or already taken is answered with [`Msg::Error`] and the connection is closed.
//! 2. Collectives: every PE sends [`Msg::Collective`] for epoch 0, 1, 2, ... in order. When all
//!    PEs have sent the same epoch, the launcher answers each with [`Msg::Table`] carrying every
//!    PE's blob, indexed by PE (an empty table for a barrier). The first collective is the
//!    rendezvous.
//! 3. [`Msg::Finalize`] tells the launcher the PE has finalized cleanly; the connection stays
//!    open until the process exits.
//!
//! The launcher sends [`Msg::Error`] when the job cannot go on (rendezvous timeout, a PE that
//! left before finalizing while others wait, a protocol error); the PE turns it into an error.
//!
//! # The control connection
//!
//! Every PE started by `shmemrun` opens a second connection to the same address, served by a
//! watchdog thread of its own ([`watchdog`](crate::watchdog)), so that supervision never waits
//! for the program to call into the library and the synchronous connection above stays exactly
//! as it is.
//!
//! 1. The PE sends [`Msg::ControlHello`] (version, job id, PE number, its pid). The launcher
//!    checks it like a hello and answers [`Msg::Welcome`] with the heartbeat interval and the
//!    PE's heartbeat timeout, or [`Msg::Error`] and closes the connection.
//! 2. With a non-zero interval both sides send [`Msg::Heartbeat`] that often. The launcher counts
//!    a PE as unresponsive when it has heard nothing from it for `SHMEM_HEARTBEAT_TIMEOUT`; the
//!    PE gives up on the launcher after the (longer) timeout in the welcome, so that the
//!    launcher, which can name the silent host, normally speaks first.
//! 3. [`Msg::Abort`] from the launcher ends the PE: it writes the reason to stderr and exits
//!    with the status. End of stream, or no heartbeat within the timeout, ends it too, with a
//!    message naming the launcher's address.
//!
//! Jobs on one host use the connection without heartbeats (interval 0): the launcher is the
//! PEs' parent and watches them with `waitpid`; see `shmem-run/src/job.rs`.

/// Environment variable: `host:port` of the launcher's rendezvous server.
pub const ENV_RENDEZVOUS: &str = "SHMEM_RENDEZVOUS";
/// Environment variable: this process's PE number.
pub const ENV_PE: &str = "SHMEM_PE";
/// Environment variable: the number of PEs in the job.
pub const ENV_NPES: &str = "SHMEM_NPES";
/// Environment variable: the job id (hexadecimal `u64`), which the launcher checks on hello.
pub const ENV_JOB_ID: &str = "SHMEM_JOB_ID";
/// Environment variable: the rendezvous timeout in seconds (decimal, fractions allowed).
pub const ENV_INIT_TIMEOUT: &str = "SHMEM_INIT_TIMEOUT";
/// The rendezvous timeout when `SHMEM_INIT_TIMEOUT` is not set, in seconds.
pub const DEFAULT_INIT_TIMEOUT_SECS: f64 = 60.0;
/// Environment variable: the index of this PE's host (node) in the job, from 0.
pub const ENV_NODE: &str = "SHMEM_NODE";
/// Environment variable: the number of hosts (nodes) the job runs on.
pub const ENV_NNODES: &str = "SHMEM_NNODES";
/// Environment variable (launcher): seconds without a heartbeat after which the launcher counts
/// a PE on another host as gone (also `shmemrun --heartbeat-timeout`).
pub const ENV_HEARTBEAT_TIMEOUT: &str = "SHMEM_HEARTBEAT_TIMEOUT";
/// The heartbeat timeout when `SHMEM_HEARTBEAT_TIMEOUT` is not set, in seconds.
pub const DEFAULT_HEARTBEAT_TIMEOUT_SECS: f64 = 3.0;
/// Time between heartbeats on the control connection of a multi-host job.
pub const HEARTBEAT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(500);

/// Version of this protocol, sent in [`Msg::Hello`] and [`Msg::ControlHello`].
pub const PROTOCOL_VERSION: u32 = 2;
/// Largest frame either side accepts (guards against garbage on the port).
pub const MAX_FRAME: usize = 1 << 30;

/// [`Msg::Error`] code: not every PE reached the rendezvous in time.
pub const ERR_TIMEOUT: u8 = 1;
/// [`Msg::Error`] code: any other failure.
pub const ERR_OTHER: u8 = 0;

/// What a [`Msg::Collective`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollectiveKind {
    /// Every PE contributes a blob and receives all of them.
    Allgather,
    /// No data; returns when every PE has arrived.
    Barrier,
}

impl CollectiveKind {
    /// Human-readable name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            CollectiveKind::Allgather => "an allgather",
            CollectiveKind::Barrier => "a barrier",
        }
    }
}

/// One message of the protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg {
    /// PE -> launcher, first frame on a connection.
    Hello {
        /// [`PROTOCOL_VERSION`] of the sender.
        version: u32,
        /// The job id from `SHMEM_JOB_ID`.
        job_id: u64,
        /// The sender's PE number.
        pe: u32,
        /// The job size the sender believes in.
        npes: u32,
    },
    /// PE -> launcher: contribution to collective number `epoch`.
    Collective {
        /// Sequence number of the collective, from 0.
        epoch: u64,
        /// Allgather or barrier.
        kind: CollectiveKind,
        /// The contribution (empty for a barrier).
        blob: Vec<u8>,
    },
    /// Launcher -> PE: collective `epoch` is complete.
    Table {
        /// Sequence number of the collective.
        epoch: u64,
        /// Every PE's blob, indexed by PE (empty for a barrier).
        blobs: Vec<Vec<u8>>,
    },
    /// PE -> launcher: this PE finalized cleanly; its exit is expected.
    Finalize,
    /// PE -> launcher: end every PE of the job; the launcher exits with `status`.
    GlobalExit {
        /// The exit status the PE passed to `global_exit`.
        status: i32,
    },
    /// Launcher -> PE: the job cannot go on.
    Error {
        /// [`ERR_TIMEOUT`] or [`ERR_OTHER`].
        code: u8,
        /// What happened, for the user.
        detail: String,
    },
    /// PE -> launcher, first frame on the control connection.
    ControlHello {
        /// [`PROTOCOL_VERSION`] of the sender.
        version: u32,
        /// The job id from `SHMEM_JOB_ID`.
        job_id: u64,
        /// The sender's PE number.
        pe: u32,
        /// The sender's process id on its host (for the launcher's messages).
        pid: u32,
    },
    /// Launcher -> PE on the control connection: accepted; how to keep in touch.
    Welcome {
        /// Milliseconds between heartbeats; 0: no heartbeats.
        interval_ms: u32,
        /// Milliseconds without a word from the launcher after which the PE gives up; 0: never.
        timeout_ms: u32,
    },
    /// Either way on the control connection: still here.
    Heartbeat,
    /// Launcher -> PE on the control connection: the job is over; exit now with `status`.
    Abort {
        /// The exit status the PE should exit with (the launcher's own).
        status: i32,
        /// Why, for the PE's stderr.
        reason: String,
    },
}

const TAG_HELLO: u8 = 1;
const TAG_COLLECTIVE: u8 = 2;
const TAG_TABLE: u8 = 3;
const TAG_FINALIZE: u8 = 4;
const TAG_ERROR: u8 = 5;
const TAG_GLOBAL_EXIT: u8 = 6;
const TAG_CONTROL_HELLO: u8 = 7;
const TAG_WELCOME: u8 = 8;
const TAG_HEARTBEAT: u8 = 9;
const TAG_ABORT: u8 = 10;

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    // Blobs are bounded by MAX_FRAME, far below u32::MAX.
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

impl Msg {
    /// Encodes the message as one complete frame (length prefix included).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![0u8; 4];
        match self {
            Msg::Hello {
                version,
                job_id,
                pe,
                npes,
            } => {
                out.push(TAG_HELLO);
                out.extend_from_slice(&version.to_le_bytes());
                out.extend_from_slice(&job_id.to_le_bytes());
                out.extend_from_slice(&pe.to_le_bytes());
                out.extend_from_slice(&npes.to_le_bytes());
            }
            Msg::Collective { epoch, kind, blob } => {
                out.push(TAG_COLLECTIVE);
                out.extend_from_slice(&epoch.to_le_bytes());
                out.push(match kind {
                    CollectiveKind::Allgather => 0,
                    CollectiveKind::Barrier => 1,
                });
                put_bytes(&mut out, blob);
            }
            Msg::Table { epoch, blobs } => {
                out.push(TAG_TABLE);
                out.extend_from_slice(&epoch.to_le_bytes());
                out.extend_from_slice(&(blobs.len() as u32).to_le_bytes());
                for blob in blobs {
                    put_bytes(&mut out, blob);
                }
            }
            Msg::Finalize => out.push(TAG_FINALIZE),
            Msg::GlobalExit { status } => {
                out.push(TAG_GLOBAL_EXIT);
                out.extend_from_slice(&status.to_le_bytes());
            }
            Msg::Error { code, detail } => {
                out.push(TAG_ERROR);
                out.push(*code);
                put_bytes(&mut out, detail.as_bytes());
            }
            Msg::ControlHello {
                version,
                job_id,
                pe,
                pid,
            } => {
                out.push(TAG_CONTROL_HELLO);
                out.extend_from_slice(&version.to_le_bytes());
                out.extend_from_slice(&job_id.to_le_bytes());
                out.extend_from_slice(&pe.to_le_bytes());
                out.extend_from_slice(&pid.to_le_bytes());
            }
            Msg::Welcome {
                interval_ms,
                timeout_ms,
            } => {
                out.push(TAG_WELCOME);
                out.extend_from_slice(&interval_ms.to_le_bytes());
                out.extend_from_slice(&timeout_ms.to_le_bytes());
            }
            Msg::Heartbeat => out.push(TAG_HEARTBEAT),
            Msg::Abort { status, reason } => {
                out.push(TAG_ABORT);
                out.extend_from_slice(&status.to_le_bytes());
                put_bytes(&mut out, reason.as_bytes());
            }
        }
        let len = (out.len() - 4) as u32;
        out[..4].copy_from_slice(&len.to_le_bytes());
        out
    }

    /// Decodes the body of one frame (tag and payload, without the length prefix).
    pub fn decode(body: &[u8]) -> Result<Msg, String> {
        let mut r = Reader { buf: body, pos: 0 };
        let msg = match r.u8()? {
            TAG_HELLO => Msg::Hello {
                version: r.u32()?,
                job_id: r.u64()?,
                pe: r.u32()?,
                npes: r.u32()?,
            },
            TAG_COLLECTIVE => {
                let epoch = r.u64()?;
                let kind = match r.u8()? {
                    0 => CollectiveKind::Allgather,
                    1 => CollectiveKind::Barrier,
                    k => return Err(format!("unknown collective kind {k}")),
                };
                Msg::Collective {
                    epoch,
                    kind,
                    blob: r.bytes()?.to_vec(),
                }
            }
            TAG_TABLE => {
                let epoch = r.u64()?;
                let n = r.u32()? as usize;
                // Each blob takes at least 4 bytes: do not trust `n` for the allocation.
                let mut blobs = Vec::with_capacity(n.min(body.len() / 4));
                for _ in 0..n {
                    blobs.push(r.bytes()?.to_vec());
                }
                Msg::Table { epoch, blobs }
            }
            TAG_FINALIZE => Msg::Finalize,
            TAG_GLOBAL_EXIT => Msg::GlobalExit {
                status: r.u32()? as i32,
            },
            TAG_ERROR => {
                let code = r.u8()?;
                let detail = String::from_utf8_lossy(r.bytes()?).into_owned();
                Msg::Error { code, detail }
            }
            TAG_CONTROL_HELLO => Msg::ControlHello {
                version: r.u32()?,
                job_id: r.u64()?,
                pe: r.u32()?,
                pid: r.u32()?,
            },
            TAG_WELCOME => Msg::Welcome {
                interval_ms: r.u32()?,
                timeout_ms: r.u32()?,
            },
            TAG_HEARTBEAT => Msg::Heartbeat,
            TAG_ABORT => {
                let status = r.u32()? as i32;
                let reason = String::from_utf8_lossy(r.bytes()?).into_owned();
                Msg::Abort { status, reason }
            }
            t => return Err(format!("unknown message tag {t}")),
        };
        if r.pos != body.len() {
            return Err(format!(
                "{} trailing bytes after a message",
                body.len() - r.pos
            ));
        }
        Ok(msg)
    }
}

/// Accumulates bytes from a nonblocking stream and cuts them into frames.
///
/// ```
/// use shmem_launch::wire::{FrameBuf, Msg};
///
/// let mut frames = FrameBuf::default();
/// frames.extend(&Msg::Heartbeat.encode());
/// frames.extend(&Msg::GlobalExit { status: 3 }.encode()[..6]); // part of a frame
/// assert_eq!(frames.next_msg()?, Some(Msg::Heartbeat));
/// assert_eq!(frames.next_msg()?, None);
/// assert_eq!(frames.buffered(), 6);
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Default)]
pub struct FrameBuf {
    buf: Vec<u8>,
}

impl FrameBuf {
    /// Appends received bytes.
    pub fn extend(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Appends everything a nonblocking `stream` holds now; `Ok(false)` at the end of the
    /// stream, `Ok(true)` when it would block.
    pub fn fill_from(&mut self, stream: &mut impl std::io::Read) -> std::io::Result<bool> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match stream.read(&mut chunk) {
                Ok(0) => return Ok(false),
                Ok(n) => self.extend(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(true),
                Err(e) => return Err(e),
            }
        }
    }

    /// Takes the next complete frame out of the buffer, if there is one.
    pub fn next_msg(&mut self) -> Result<Option<Msg>, String> {
        if self.buf.len() < 4 {
            return Ok(None);
        }
        let len = u32::from_le_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
        if len == 0 || len > MAX_FRAME {
            return Err(format!("bad frame length {len}"));
        }
        if self.buf.len() < 4 + len {
            return Ok(None);
        }
        let msg = Msg::decode(&self.buf[4..4 + len]);
        self.buf.drain(..4 + len);
        msg.map(Some)
    }

    /// Whether bytes of an incomplete frame are buffered.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The number of bytes buffered.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }
}

/// Reads one frame's payload.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.buf.len() - self.pos < n {
            return Err("truncated message".to_string());
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, String> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }
    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

/// Parses a timeout in seconds (`"60"`, `"0.5"`), as in `SHMEM_INIT_TIMEOUT` and `--init-timeout`.
pub fn parse_timeout_secs(s: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !secs.is_finite() || secs <= 0.0 || secs > 1e9 {
        return Err(format!("{s:?} must be a positive number of seconds"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// Milliseconds of `d` for a [`Msg::Welcome`], saturating.
pub fn millis_u32(d: std::time::Duration) -> u32 {
    d.as_millis().min(u128::from(u32::MAX)) as u32
}

/// Formats a list of PE numbers as `"2, 5"`.
pub fn pe_list(pes: &[usize]) -> String {
    pes.iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Formats a duration in seconds for messages (`"10 s"`, `"0.5 s"`).
pub fn secs(d: std::time::Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_every_message() {
        let msgs = [
            Msg::Hello {
                version: 1,
                job_id: u64::MAX - 3,
                pe: 7,
                npes: 8,
            },
            Msg::Collective {
                epoch: 3,
                kind: CollectiveKind::Allgather,
                blob: vec![1, 2, 3],
            },
            Msg::Collective {
                epoch: 4,
                kind: CollectiveKind::Barrier,
                blob: vec![],
            },
            Msg::Table {
                epoch: 9,
                blobs: vec![vec![], vec![5; 300], vec![1]],
            },
            Msg::Finalize,
            Msg::GlobalExit { status: -3 },
            Msg::GlobalExit { status: 7 },
            Msg::Error {
                code: ERR_TIMEOUT,
                detail: "PEs 2 of 3 late".into(),
            },
            Msg::ControlHello {
                version: PROTOCOL_VERSION,
                job_id: 42,
                pe: 3,
                pid: 4567,
            },
            Msg::Welcome {
                interval_ms: 500,
                timeout_ms: 4000,
            },
            Msg::Heartbeat,
            Msg::Abort {
                status: 137,
                reason: "PE 3 on host b was killed by signal 9 (SIGKILL)".into(),
            },
        ];
        let stream: Vec<u8> = msgs.iter().flat_map(Msg::encode).collect();
        // Byte-by-byte frame buffer.
        let mut fb = FrameBuf::default();
        let mut got = Vec::new();
        for b in stream {
            fb.extend(&[b]);
            while let Some(m) = fb.next_msg().unwrap() {
                got.push(m);
            }
        }
        assert_eq!(got, msgs);
        assert!(fb.is_empty());
    }

    #[test]
    fn garbage_is_rejected() {
        assert!(Msg::decode(&[]).is_err());
        assert!(Msg::decode(&[99]).is_err());
        assert!(Msg::decode(&[TAG_HELLO, 1, 2]).is_err());
        assert!(Msg::decode(&[TAG_FINALIZE, 0]).is_err());
        assert!(Msg::decode(&[TAG_HEARTBEAT, 0]).is_err());
        assert!(Msg::decode(&[TAG_WELCOME, 1, 2, 3]).is_err());
        let mut fb = FrameBuf::default();
        fb.extend(&[0, 0, 0, 0]);
        assert!(fb.next_msg().is_err());
        let mut fb = FrameBuf::default();
        fb.extend(&u32::MAX.to_le_bytes());
        assert!(fb.next_msg().is_err());
    }

    #[test]
    fn timeouts_parse() {
        assert_eq!(parse_timeout_secs("60").unwrap().as_secs(), 60);
        assert_eq!(parse_timeout_secs(" 0.25 ").unwrap().as_millis(), 250);
        for bad in ["", "x", "0", "-1", "inf", "NaN"] {
            assert!(parse_timeout_secs(bad).is_err(), "{bad}");
        }
        assert_eq!(pe_list(&[2, 5]), "2, 5");
    }
}
