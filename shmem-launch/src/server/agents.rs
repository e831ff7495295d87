//! The host agents' connections (see [`wire`](crate::wire#the-host-agents-connection)): an
//! agent's admission, the virtual connections it opens, relays and closes, the PE exits it
//! reports, and [`Msg::Stop`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::auth::{self, Channel, Nonce};
use crate::wire::{MAX_AGENT_FRAME, Msg, PROTOCOL_VERSION};

use super::conn::{Conn, Pipe, Virtual, lock};
use super::{AGENT_SPARE_CONNS, MAX_RELAYED, Notice, Server, stalled};

/// A host agent's connection and its virtual connections.
#[derive(Debug)]
pub(super) struct Agent {
    pub(super) conn: Conn,
    pub(super) pipes: HashMap<u32, Arc<Mutex<Pipe>>>,
    /// Most virtual connections open at once.
    max_conns: usize,
}

impl Server {
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
    pub(super) fn read_agent(&mut self, node: usize) {
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
    pub(super) fn drop_agent(&mut self, node: usize) {
        if let Some(a) = self.agents.get_mut(node).and_then(Option::take) {
            for pipe in a.pipes.values() {
                lock(pipe).closed = true;
            }
        }
    }

    /// Hands what the virtual connections have to say to their agents' connections, tells the
    /// agents which ones the server dropped, and writes.
    pub(super) fn flush_agents(&mut self) {
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

    pub(super) fn agent_hello(
        &mut self,
        mut c: Conn,
        version: u32,
        job_id: u64,
        node: usize,
        nonce: &Nonce,
    ) {
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
}
