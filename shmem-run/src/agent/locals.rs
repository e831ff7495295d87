//! The connections of the host's processes to the agent's port: each is relayed as a virtual
//! connection of the agent's connection to the launcher, once its hello proved the secret
//! against the relayed challenge; strangers are held at most [`MAX_STRANGERS`] at once and for
//! [`HANDSHAKE_TIMEOUT`].

use std::collections::VecDeque;
use std::io::{self, Write};
use std::net::TcpStream;
use std::time::Instant;

use shmem_launch::auth::{self, Channel, Nonce, Secret};
use shmem_launch::wire::{
    FrameBuf, MAX_FRAME, MAX_HANDSHAKE_FRAME, Msg, control_fields, hello_fields,
};

use super::{Agent, HANDSHAKE_TIMEOUT, MAX_STRANGERS};

/// A connection of a process on this host to the agent's port, relayed as virtual connection
/// `id`.
pub(super) struct Local {
    pub(super) stream: TcpStream,
    /// Frames from the process.
    frames: FrameBuf,
    /// The launcher's challenge, once relayed (the hello is checked against it).
    pub(super) challenge: Option<Nonce>,
    /// The first bytes from the launcher, until they make the challenge.
    pub(super) head: Vec<u8>,
    /// The PE it proved to be, once its hello proved the secret.
    pub(super) pe: Option<usize>,
    /// Bytes for the process.
    pub(super) out: VecDeque<u8>,
    opened: Instant,
    /// The launcher closed it: close once `out` is written.
    pub(super) closing: bool,
}

impl Agent {
    pub(super) fn accept(&mut self) {
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
    pub(super) fn expire_strangers(&mut self) {
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
    pub(super) fn read_local(&mut self, id: u32, all: bool) {
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

    pub(super) fn write_local(&mut self, id: u32) {
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
}

/// The challenge that starts `head` (what the launcher sent first on a connection), once it is
/// complete.
pub(super) fn first_challenge(head: &[u8]) -> Option<Nonce> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::decode_status;
    use shmem_launch::wire;

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
