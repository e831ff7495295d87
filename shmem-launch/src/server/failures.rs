//! PEs that left or never came: the rendezvous timeout, exits the launcher saw, PEs stranded in
//! a collective that can no longer complete, and the error every PE gets when the job ends.

use crate::wire::{ERR_OTHER, ERR_TIMEOUT, pe_list, secs};

use super::{Notice, Server, error_frame};

impl Server {
    /// Records that the launcher saw PE `pe`'s process exit. Call it for every exit: a PE that
    /// exits without finalizing strands the PEs waiting for it.
    pub fn pe_exited(&mut self, pe: usize) -> Vec<Notice> {
        // Take in what the PE sent before it exited (a hello, a finalize): the data and the
        // connection reached this host before the exit did. Only its own connections and the
        // new ones: the others wait for the next poll (an exit costs O(1) connections, not
        // O(PEs)).
        self.accept_all();
        self.read_pending();
        if pe < self.npes() {
            self.read_pe(pe);
            self.read_control(pe);
        }
        if let Some(slot) = self.slots.get_mut(pe) {
            slot.exited = true;
            slot.gone = true;
            slot.conn = None;
            self.release_node(pe, None);
            // The control connection stays: a PE on another host may outlive its start command,
            // and this connection is how it learns that the job is over.
        }
        self.check_stranded();
        std::mem::take(&mut self.notices)
    }

    /// Describes the PEs that left while others wait, if any: "PE 2 exited before finalizing
    /// while PEs 0, 1 wait in a barrier".
    pub fn stranded(&self) -> Option<String> {
        let waiting: Vec<usize> = (0..self.npes())
            .filter(|&p| self.slots[p].arrived.is_some())
            .collect();
        let kind = self
            .slots
            .iter()
            .find_map(|s| s.arrived.as_ref().map(|a| a.0))?;
        let left: Vec<String> = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.arrived.is_none() && (s.gone || s.finalized))
            .map(|(p, s)| {
                let how = if s.finalized {
                    "finalized"
                } else if s.exited && !s.hello {
                    "exited without connecting to the launcher"
                } else if s.exited {
                    "exited before finalizing"
                } else {
                    "closed its launcher connection before finalizing"
                };
                format!("PE {p} {how}")
            })
            .collect();
        if left.is_empty() {
            return None;
        }
        let what = if self.epoch == 0 {
            "the rendezvous"
        } else {
            kind.name()
        };
        let who = if waiting.len() == 1 { "PE" } else { "PEs" };
        Some(format!(
            "{} while {who} {} wait{} in {what}",
            left.join(", "),
            pe_list(&waiting),
            if waiting.len() == 1 { "s" } else { "" },
        ))
    }

    /// [`stranded`](Self::stranded), after taking in what every PE has sent on its rendezvous
    /// connection: for the report of a job that ends because a PE left, which should name the
    /// PEs already waiting even where the launcher had not yet read their requests. O(PEs): call
    /// it only when the job ends.
    pub fn stranded_now(&mut self) -> Option<String> {
        for pe in 0..self.npes() {
            self.read_pe(pe);
        }
        self.stranded()
    }

    /// Sends `detail` as an error to every connected PE (best effort, without waiting), e.g.
    /// before the launcher ends the job.
    pub fn abort(&mut self, detail: &str) {
        let frame = error_frame(ERR_OTHER, detail);
        for slot in &mut self.slots {
            if let Some(c) = slot.conn.as_mut() {
                let _ = c.send(&frame);
            }
        }
    }

    pub(super) fn check_timeout(&mut self) {
        if self.timeout_detail.is_some()
            || self.all_hello()
            || self.started.elapsed() < self.timeout
        {
            return;
        }
        let missing: Vec<usize> = (0..self.npes()).filter(|&p| !self.slots[p].hello).collect();
        let detail = format!(
            "{} {} of {} did not reach the rendezvous within {}",
            if missing.len() == 1 { "PE" } else { "PEs" },
            pe_list(&missing),
            self.npes(),
            secs(self.timeout)
        );
        let frame = error_frame(ERR_TIMEOUT, &detail);
        let mut told = 0;
        for slot in &mut self.slots {
            if let Some(c) = slot.conn.as_mut() {
                let _ = c.send(&frame);
                told += 1;
            }
        }
        if self.slots.iter().any(|s| s.hello) || told > 0 {
            self.notices.push(Notice::RendezvousTimeout {
                detail: detail.clone(),
            });
        }
        self.timeout_detail = Some(detail);
    }

    pub(super) fn check_stranded(&mut self) {
        // Cheap first: nobody waits in a collective most of the time.
        if self.stranded_reported || !self.slots.iter().any(|s| s.arrived.is_some()) {
            return;
        }
        if self.stranded().is_some() {
            self.stranded_reported = true;
            self.notices.push(Notice::Stranded);
        }
    }
}
