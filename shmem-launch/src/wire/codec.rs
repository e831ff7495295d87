//! The bytes of every message: [`Msg::encode`] and [`Msg::decode`] with their tags, the fields a
//! hello's MAC covers, and the relay header that lets a host agent's connection carry frames
//! already encoded.

use super::{CollectiveKind, MAX_FRAME, Msg};

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
const TAG_CHALLENGE: u8 = 11;
const TAG_ACCEPTED: u8 = 12;
const TAG_LEAD: u8 = 13;
const TAG_PUBLISHED: u8 = 14;
const TAG_TABLE_AT: u8 = 15;
const TAG_FETCH: u8 = 16;
const TAG_AGENT_HELLO: u8 = 17;
const TAG_OPEN: u8 = 18;
const TAG_RELAY: u8 = 19;
const TAG_CLOSE: u8 = 20;
const TAG_EXITED: u8 = 21;
const TAG_STOP: u8 = 22;

/// Bytes of a [`Msg::Relay`] frame before its data: the length, the tag and the connection.
pub const RELAY_HEADER: usize = 9;

/// The first [`RELAY_HEADER`] bytes of the [`Msg::Relay`] frame of `len` bytes of data for
/// connection `conn`, so that a frame already encoded (a table shared by many PEs) can be
/// relayed by sending this header and then the frame, without copying it.
///
/// ```
/// use shmem_launch::wire::{Msg, relay_header};
///
/// let inner = Msg::Heartbeat.encode();
/// let mut frame = relay_header(7, inner.len()).to_vec();
/// frame.extend_from_slice(&inner);
/// assert_eq!(frame, Msg::Relay { conn: 7, data: inner }.encode());
/// ```
pub fn relay_header(conn: u32, len: usize) -> [u8; RELAY_HEADER] {
    let mut h = [0u8; RELAY_HEADER];
    // A relayed frame is at most a table frame (`max_table_frame`), below u32::MAX.
    h[..4].copy_from_slice(&((len + RELAY_HEADER - 4) as u32).to_le_bytes());
    h[4] = TAG_RELAY;
    h[5..].copy_from_slice(&conn.to_le_bytes());
    h
}

/// Largest frame the launcher accepts from an authenticated host agent: a relayed frame of up
/// to [`MAX_FRAME`] bytes with its length prefix, behind the relay header.
pub const MAX_AGENT_FRAME: usize = MAX_FRAME + 4 + RELAY_HEADER;

/// The fields of a [`Msg::AgentHello`] that its MAC covers, in order.
pub fn agent_fields(version: u32, job_id: u64, node: u32, pid: u32) -> Vec<u8> {
    hello_fields(version, job_id, node, pid)
}

/// The fields of a [`Msg::Hello`] that its MAC covers, in order.
pub fn hello_fields(version: u32, job_id: u64, pe: u32, npes: u32) -> Vec<u8> {
    let mut f = Vec::with_capacity(20);
    f.extend_from_slice(&version.to_le_bytes());
    f.extend_from_slice(&job_id.to_le_bytes());
    f.extend_from_slice(&pe.to_le_bytes());
    f.extend_from_slice(&npes.to_le_bytes());
    f
}

/// The fields of a [`Msg::ControlHello`] that its MAC covers, in order.
pub fn control_fields(version: u32, job_id: u64, pe: u32, pid: u32) -> Vec<u8> {
    hello_fields(version, job_id, pe, pid)
}

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
            Msg::Challenge { nonce } => {
                out.push(TAG_CHALLENGE);
                out.extend_from_slice(nonce);
            }
            Msg::Hello {
                version,
                job_id,
                pe,
                npes,
                nonce,
                mac,
            } => {
                out.push(TAG_HELLO);
                out.extend_from_slice(&hello_fields(*version, *job_id, *pe, *npes));
                out.extend_from_slice(nonce);
                out.extend_from_slice(mac);
            }
            Msg::Accepted { mac } => {
                out.push(TAG_ACCEPTED);
                out.extend_from_slice(mac);
            }
            Msg::Collective { epoch, kind, blob } => {
                out.push(TAG_COLLECTIVE);
                out.extend_from_slice(&epoch.to_le_bytes());
                out.push(match kind {
                    CollectiveKind::Allgather => 0,
                    CollectiveKind::Barrier => 1,
                    CollectiveKind::SharedAllgather => 2,
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
                nonce,
                mac,
            } => {
                out.push(TAG_CONTROL_HELLO);
                out.extend_from_slice(&control_fields(*version, *job_id, *pe, *pid));
                out.extend_from_slice(nonce);
                out.extend_from_slice(mac);
            }
            Msg::Welcome {
                interval_ms,
                timeout_ms,
                mac,
            } => {
                out.push(TAG_WELCOME);
                out.extend_from_slice(&interval_ms.to_le_bytes());
                out.extend_from_slice(&timeout_ms.to_le_bytes());
                out.extend_from_slice(mac);
            }
            Msg::Heartbeat => out.push(TAG_HEARTBEAT),
            Msg::Abort { status, reason } => {
                out.push(TAG_ABORT);
                out.extend_from_slice(&status.to_le_bytes());
                put_bytes(&mut out, reason.as_bytes());
            }
            Msg::Lead { epoch } => {
                out.push(TAG_LEAD);
                out.extend_from_slice(&epoch.to_le_bytes());
            }
            Msg::Fetch { epoch } => {
                out.push(TAG_FETCH);
                out.extend_from_slice(&epoch.to_le_bytes());
            }
            Msg::Published {
                epoch,
                pid,
                fd,
                len,
            }
            | Msg::TableAt {
                epoch,
                pid,
                fd,
                len,
            } => {
                out.push(if matches!(self, Msg::Published { .. }) {
                    TAG_PUBLISHED
                } else {
                    TAG_TABLE_AT
                });
                out.extend_from_slice(&epoch.to_le_bytes());
                out.extend_from_slice(&pid.to_le_bytes());
                out.extend_from_slice(&fd.to_le_bytes());
                out.extend_from_slice(&len.to_le_bytes());
            }
            Msg::AgentHello {
                version,
                job_id,
                node,
                pid,
                nonce,
                mac,
            } => {
                out.push(TAG_AGENT_HELLO);
                out.extend_from_slice(&agent_fields(*version, *job_id, *node, *pid));
                out.extend_from_slice(nonce);
                out.extend_from_slice(mac);
            }
            Msg::Open { conn } | Msg::Close { conn } => {
                out.push(if matches!(self, Msg::Open { .. }) {
                    TAG_OPEN
                } else {
                    TAG_CLOSE
                });
                out.extend_from_slice(&conn.to_le_bytes());
            }
            Msg::Relay { conn, data } => {
                out.push(TAG_RELAY);
                out.extend_from_slice(&conn.to_le_bytes());
                out.extend_from_slice(data);
            }
            Msg::Exited { pe, pid, status } => {
                out.push(TAG_EXITED);
                out.extend_from_slice(&pe.to_le_bytes());
                out.extend_from_slice(&pid.to_le_bytes());
                out.extend_from_slice(&status.to_le_bytes());
            }
            Msg::Stop { status } => {
                out.push(TAG_STOP);
                out.extend_from_slice(&status.to_le_bytes());
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
            TAG_CHALLENGE => Msg::Challenge { nonce: r.array()? },
            TAG_HELLO => Msg::Hello {
                version: r.u32()?,
                job_id: r.u64()?,
                pe: r.u32()?,
                npes: r.u32()?,
                nonce: r.array()?,
                mac: r.array()?,
            },
            TAG_ACCEPTED => Msg::Accepted { mac: r.array()? },
            TAG_COLLECTIVE => {
                let epoch = r.u64()?;
                let kind = match r.u8()? {
                    0 => CollectiveKind::Allgather,
                    1 => CollectiveKind::Barrier,
                    2 => CollectiveKind::SharedAllgather,
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
                nonce: r.array()?,
                mac: r.array()?,
            },
            TAG_WELCOME => Msg::Welcome {
                interval_ms: r.u32()?,
                timeout_ms: r.u32()?,
                mac: r.array()?,
            },
            TAG_HEARTBEAT => Msg::Heartbeat,
            TAG_ABORT => {
                let status = r.u32()? as i32;
                let reason = String::from_utf8_lossy(r.bytes()?).into_owned();
                Msg::Abort { status, reason }
            }
            TAG_LEAD => Msg::Lead { epoch: r.u64()? },
            TAG_FETCH => Msg::Fetch { epoch: r.u64()? },
            TAG_PUBLISHED => Msg::Published {
                epoch: r.u64()?,
                pid: r.u32()?,
                fd: r.u32()?,
                len: r.u64()?,
            },
            TAG_TABLE_AT => Msg::TableAt {
                epoch: r.u64()?,
                pid: r.u32()?,
                fd: r.u32()?,
                len: r.u64()?,
            },
            TAG_AGENT_HELLO => Msg::AgentHello {
                version: r.u32()?,
                job_id: r.u64()?,
                node: r.u32()?,
                pid: r.u32()?,
                nonce: r.array()?,
                mac: r.array()?,
            },
            TAG_OPEN => Msg::Open { conn: r.u32()? },
            TAG_CLOSE => Msg::Close { conn: r.u32()? },
            TAG_RELAY => {
                let conn = r.u32()?;
                let data = r.take(body.len() - r.pos)?.to_vec();
                Msg::Relay { conn, data }
            }
            TAG_EXITED => Msg::Exited {
                pe: r.u32()?,
                pid: r.u32()?,
                status: r.u32()? as i32,
            },
            TAG_STOP => Msg::Stop {
                status: r.u32()? as i32,
            },
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
    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{ERR_TIMEOUT, FrameBuf, MAX_HANDSHAKE_FRAME, PROTOCOL_VERSION};

    #[test]
    fn roundtrip_every_message() {
        let msgs = [
            Msg::Challenge { nonce: [9; 32] },
            Msg::Hello {
                version: 1,
                job_id: u64::MAX - 3,
                pe: 7,
                npes: 8,
                nonce: [1; 32],
                mac: [2; 32],
            },
            Msg::Accepted { mac: [3; 32] },
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
                nonce: [4; 32],
                mac: [5; 32],
            },
            Msg::Welcome {
                interval_ms: 500,
                timeout_ms: 4000,
                mac: [6; 32],
            },
            Msg::Heartbeat,
            Msg::Abort {
                status: 137,
                reason: "PE 3 on host b was killed by signal 9 (SIGKILL)".into(),
            },
            Msg::AgentHello {
                version: PROTOCOL_VERSION,
                job_id: 42,
                node: 3,
                pid: 99,
                nonce: [7; 32],
                mac: [8; 32],
            },
            Msg::Open { conn: 5 },
            Msg::Relay {
                conn: 5,
                data: Msg::Heartbeat.encode(),
            },
            Msg::Relay {
                conn: u32::MAX,
                data: vec![],
            },
            Msg::Close { conn: 5 },
            Msg::Exited {
                pe: 9,
                pid: 1234,
                status: 0x8b,
            },
            Msg::Stop { status: -1 },
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
        // Over the limit: refused from the length prefix alone.
        let mut fb = FrameBuf::with_limit(MAX_HANDSHAKE_FRAME);
        fb.extend(&((MAX_HANDSHAKE_FRAME + 1) as u32).to_le_bytes());
        assert!(fb.next_msg().is_err());
        // A hello fits the handshake limit.
        let hello = Msg::Hello {
            version: PROTOCOL_VERSION,
            job_id: 1,
            pe: 0,
            npes: 1,
            nonce: [0; 32],
            mac: [0; 32],
        };
        assert!(hello.encode().len() - 4 <= MAX_HANDSHAKE_FRAME);
    }
}
