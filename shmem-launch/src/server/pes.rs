//! A PE's rendezvous connection: its admission after a proved hello, the messages it sends
//! (collectives, finalize, `global_exit`, shared-table answers), and how it is dropped or
//! failed.

use std::sync::Arc;

use crate::wire::{ERR_OTHER, ERR_TIMEOUT, Msg, PROTOCOL_VERSION};

use super::conn::Conn;
use super::{BIG_PARTIAL, MAX_BUFFERED, Notice, Server, error_frame, over_budget, stalled};

impl Server {
    /// Whether PE `pe` said hello on its rendezvous connection (it called `init`).
    pub fn said_hello(&self, pe: usize) -> bool {
        self.slots.get(pe).is_some_and(|s| s.hello)
    }

    /// Whether PE `pe` told the launcher it finalized.
    pub fn finalized(&self, pe: usize) -> bool {
        self.slots.get(pe).is_some_and(|s| s.finalized)
    }

    pub(super) fn hello(&mut self, mut c: Conn, version: u32, job_id: u64, pe: usize, npes: usize) {
        let n = self.npes();
        let why = if version != PROTOCOL_VERSION {
            format!("protocol version {version}, this launcher speaks {PROTOCOL_VERSION}")
        } else if job_id != self.job_id {
            format!("job id {job_id:016x} is not this job's (PE {pe})")
        } else if npes != n {
            format!("PE {pe} believes the job has {npes} PEs, it has {n}")
        } else if pe >= n {
            format!("PE {pe} is out of range for {n} PEs")
        } else if self.slots[pe].hello {
            format!("PE {pe} connected twice")
        } else {
            if let Some(detail) = &self.timeout_detail {
                let _ = c.send(&error_frame(ERR_TIMEOUT, detail));
            }
            let slot = &mut self.slots[pe];
            slot.hello = true;
            if slot.exited {
                // Its process is already gone; the connection is what it left behind.
                slot.gone = true;
            }
            // Frames that came with the hello are handled by `read_pe`.
            if !slot.gone {
                slot.conn = Some(c);
            }
            return;
        };
        self.reject(c, why);
    }

    /// Reads and handles everything PE `pe` sent.
    pub(super) fn read_pe(&mut self, pe: usize) {
        let Some(c) = self.slots[pe].conn.as_mut() else {
            return;
        };
        let before = c.frames.buffered();
        let open = c.fill();
        let after = c.frames.buffered();
        self.buffered += after.saturating_sub(before);
        if self.buffered > MAX_BUFFERED && after > BIG_PARTIAL {
            return self.fail_pe(pe, over_budget());
        }
        loop {
            let Some(c) = self.slots[pe].conn.as_mut() else {
                return;
            };
            match c.next_msg() {
                Ok(Some(msg)) => self.handle(pe, msg),
                Ok(None) => break,
                Err(e) => return self.fail_pe(pe, format!("protocol error: {e}")),
            }
        }
        let limit = self.stall_timeout;
        if self.slots[pe]
            .conn
            .as_ref()
            .is_some_and(|c| c.stalled(limit))
        {
            return self.fail_pe(pe, stalled(limit));
        }
        let flushed = match self.slots[pe].conn.as_mut() {
            Some(c) => c.flush(),
            None => return,
        };
        if !matches!((open, flushed), (Ok(true), Ok(()))) {
            // End of stream or a broken connection. A crash is reported by the launcher from
            // the exit status; a PE that left early is caught by `check_stranded`.
            self.drop_pe(pe);
        }
    }

    pub(super) fn drop_pe(&mut self, pe: usize) {
        let slot = &mut self.slots[pe];
        slot.conn = None;
        slot.gone = true;
        self.release_node(pe, None);
    }

    /// Answers PE `pe` with an error, closes its connection and counts it as gone.
    fn fail_pe(&mut self, pe: usize, why: String) {
        if let Some(mut c) = self.slots[pe].conn.take() {
            let _ = c.send(&error_frame(ERR_OTHER, &format!("PE {pe}: {why}")));
            self.close_after_error(c);
        }
        self.slots[pe].gone = true;
        self.warn(format!("PE {pe}: {why}"));
        self.release_node(pe, None);
    }

    fn handle(&mut self, pe: usize, msg: Msg) {
        match msg {
            Msg::Finalize => self.slots[pe].finalized = true,
            Msg::GlobalExit { status } => {
                // The answer tells the PE its request was read (it may exit now).
                if let Some(c) = self.slots[pe].conn.as_mut() {
                    let frame = Msg::Error {
                        code: ERR_OTHER,
                        detail: format!("PE {pe} called global_exit({status})"),
                    };
                    let _ = c.send(&frame.encode());
                }
                self.notices.push(Notice::GlobalExit { pe, status });
            }
            Msg::Collective { epoch, kind, blob } => {
                if self.slots[pe].finalized {
                    return self.fail_pe(pe, "collective after finalize".into());
                }
                if epoch != self.epoch || self.slots[pe].arrived.is_some() {
                    let e = self.epoch;
                    return self.fail_pe(pe, format!("sent collective {epoch}, expected {e}"));
                }
                self.slots[pe].arrived = Some((kind, blob));
                self.try_complete();
            }
            Msg::Published {
                epoch,
                pid,
                fd,
                len,
            } => {
                let leads = self
                    .shared
                    .as_ref()
                    .is_some_and(|r| r.epoch == epoch && r.waiting.iter().any(|w| w.0 == pe));
                if !leads {
                    return self.fail_pe(pe, format!("unexpected publication of table {epoch}"));
                }
                let at = (fd != u32::MAX).then_some(Msg::TableAt {
                    epoch,
                    pid,
                    fd,
                    len,
                });
                self.release_node(pe, at);
            }
            Msg::Fetch { epoch } => match &self.shared {
                Some(r) if r.epoch == epoch => {
                    let frame = Arc::clone(&r.frame);
                    self.send_table(pe, &frame);
                }
                _ => self.fail_pe(pe, format!("fetch of table {epoch}, which is not shared")),
            },
            other => self.fail_pe(pe, format!("unexpected message {other:?}")),
        }
    }
}
