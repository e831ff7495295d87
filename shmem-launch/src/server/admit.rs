//! New connections: accepting them (with a pause when `accept` fails), reading their one
//! handshake frame, checking that its MAC proves the job secret, and handing a proved hello to
//! its kind's admission (`hello`, `control_hello`, `agent_hello`). Refused strangers and
//! rejected PEs are answered, then closed after lingering (see [`LINGER`]).

use std::io::{self, Read};
use std::time::Instant;

use crate::auth::{self, Channel, Nonce};
use crate::wire::{ERR_OTHER, MAX_FRAME, Msg, agent_fields, control_fields, hello_fields};

use super::conn::{Conn, Link};
use super::{
    ACCEPT_BACKOFF, LINGER, LINGER_READS, MAX_LINGERING, REFUSED_DRAIN, REPORTED_REJECTIONS,
    Server, error_frame,
};

impl Server {
    pub(super) fn accept_all(&mut self) {
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

    /// Reads the first frame of new connections and admits or rejects them.
    pub(super) fn read_pending(&mut self) {
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
    pub(super) fn reject(&mut self, mut c: Conn, why: String) {
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
    pub(super) fn close_after_error(&mut self, c: Conn) {
        self.closing.push((c, Instant::now() + LINGER, usize::MAX));
        self.linger();
    }

    /// Sends what closing connections still owe, shuts their write side once it is out, reads
    /// and drops what their PEs send, and closes those whose PE closed, that failed, that sent
    /// their allowance, or whose time is up.
    pub(super) fn linger(&mut self) {
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
}
