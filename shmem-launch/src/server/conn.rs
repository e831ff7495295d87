//! One connection of the server, with its input and output buffers: a TCP connection, or a
//! virtual one that a host agent relays over its own connection ([`Pipe`], [`Virtual`]); the
//! [`Outbox`] writes shared frames without copying them.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::auth::{self, Nonce};
use crate::wire::{FrameBuf, MAX_HANDSHAKE_FRAME, Msg, relay_header};

/// What travels between the server and one virtual connection of a host agent.
#[derive(Debug, Default)]
pub(super) struct Pipe {
    /// Bytes the agent relayed that the server has not read yet.
    pub(super) inbound: Vec<u8>,
    /// The agent closed the connection (or the agent's own connection ended).
    pub(super) closed: bool,
    /// Frames for the agent, relay headers included.
    pub(super) outgoing: Vec<Arc<[u8]>>,
    /// The server dropped the connection: the agent is told, and forgets it.
    pub(super) dropped: bool,
}

pub(super) fn lock(pipe: &Mutex<Pipe>) -> MutexGuard<'_, Pipe> {
    pipe.lock().unwrap_or_else(|p| p.into_inner())
}

/// A virtual connection: a connection to a host agent's local port, relayed over the agent's
/// connection (see [`wire`](crate::wire)).
#[derive(Debug)]
pub(super) struct Virtual {
    /// The agent's node.
    pub(super) node: usize,
    /// The agent's number for it.
    pub(super) id: u32,
    pub(super) pipe: Arc<Mutex<Pipe>>,
}

impl Drop for Virtual {
    fn drop(&mut self) {
        lock(&self.pipe).dropped = true;
    }
}

/// What a connection runs on.
#[derive(Debug)]
pub(super) enum Link {
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

/// One TCP connection with its input and output buffers.
#[derive(Debug)]
pub(super) struct Conn {
    pub(super) link: Link,
    pub(super) frames: FrameBuf,
    pub(super) out: Outbox,
    pub(super) opened: Instant,
    /// The nonce of the challenge this connection was sent.
    pub(super) challenge: Nonce,
    /// Since when an incomplete frame has been buffered.
    partial_since: Option<Instant>,
}

impl Conn {
    /// Takes a new connection and sends it a challenge; it may send one handshake frame.
    pub(super) fn new(stream: TcpStream) -> io::Result<Conn> {
        stream.set_nonblocking(true)?;
        stream.set_nodelay(true)?;
        Conn::challenged(Link::Tcp(stream))
    }

    /// Takes a new virtual connection of an agent and sends it a challenge.
    pub(super) fn new_virtual(v: Virtual) -> io::Result<Conn> {
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
    pub(super) fn fd(&self) -> Option<RawFd> {
        match &self.link {
            Link::Tcp(s) => Some(s.as_raw_fd()),
            Link::Virtual(_) => None,
        }
    }

    /// Who is at the other end, for messages.
    pub(super) fn peer(&self) -> String {
        match &self.link {
            Link::Tcp(s) => s
                .peer_addr()
                .map(|a| a.to_string())
                .unwrap_or_else(|_| "?".into()),
            Link::Virtual(v) => format!("connection {} of the agent of node {}", v.id, v.node),
        }
    }

    /// Shuts the write side (a virtual connection closes when it is dropped).
    pub(super) fn shutdown_write(&self) {
        if let Link::Tcp(s) = &self.link {
            let _ = s.shutdown(Shutdown::Write);
        }
    }

    /// Reads what is available (at most one frame ahead). `Ok(false)`: end of stream.
    pub(super) fn fill(&mut self) -> io::Result<bool> {
        let open = self.frames.fill_from(&mut self.link);
        if self.frames.is_empty() {
            self.partial_since = None;
        } else if self.partial_since.is_none() {
            self.partial_since = Some(Instant::now());
        }
        open
    }

    /// Takes the next complete frame; restarts the stall clock when one was taken.
    pub(super) fn next_msg(&mut self) -> Result<Option<Msg>, String> {
        let msg = self.frames.next_msg()?;
        if msg.is_some() {
            self.partial_since = (!self.frames.is_empty()).then(Instant::now);
        }
        Ok(msg)
    }

    /// Whether it has sat in the middle of a frame for longer than `limit`.
    pub(super) fn stalled(&self, limit: Duration) -> bool {
        self.partial_since.is_some_and(|t| t.elapsed() > limit)
    }

    /// Writes as much of the output buffer as the socket takes.
    pub(super) fn flush(&mut self) -> io::Result<()> {
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
    pub(super) fn send(&mut self, frame: &[u8]) -> io::Result<()> {
        self.send_shared(Arc::from(frame))
    }

    /// Queues a frame shared with other connections (a collective's table, which every PE
    /// receives: one copy in the launcher, whatever the number of PEs) and tries to send it.
    pub(super) fn send_shared(&mut self, frame: Arc<[u8]>) -> io::Result<()> {
        self.out.push(frame);
        self.flush()
    }
}

/// The frames a connection still has to send: shared buffers and how far each has been
/// written. Writing a part costs nothing more than the write (no copy, no shifting of the
/// rest), so a table of megabytes sent to thousands of PEs costs its size once in memory and
/// its bytes once per PE on the wire.
#[derive(Debug, Default)]
pub(super) struct Outbox {
    frames: VecDeque<(Arc<[u8]>, usize)>,
}

impl Outbox {
    pub(super) fn push(&mut self, frame: Arc<[u8]>) {
        if !frame.is_empty() {
            self.frames.push_back((frame, 0));
        }
    }

    pub(super) fn is_empty(&self) -> bool {
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
