//! The PEs' control connections: the welcome with the heartbeat settings, heartbeats both
//! ways, silent PEs and lost connections, and [`Server::abort_all`]'s verdict.

use std::time::{Duration, Instant};

use crate::auth::{self, Channel, Nonce};
use crate::wire::{Msg, PROTOCOL_VERSION, millis_u32};

use super::conn::Conn;
use super::{BIG_PARTIAL, MAX_BUFFERED, Notice, Server, clip, over_budget, stalled};

impl Server {
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

    pub(super) fn control_hello(
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
    pub(super) fn read_control(&mut self, pe: usize) {
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
    pub(super) fn heartbeats(&mut self) {
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
}
