//! The acknowledgement protocol's counts with every PE ([`Counts`], in a [`Ledger`] of chunks of
//! [`CHUNK`] PEs allocated at first contact): units sent, acknowledged, asked, received and
//! awaited, whether messages ask for their own ack (eager asks), whether a PE's endpoint has one
//! ordered lane, and the fence epoch up to which plain puts to it are flushed. Also the checks
//! of `ACK` and `SYNC` messages, which only touch these counts.

use super::wire::{ACK_WORDS, Refusal, SYNC_WORDS, refuse, words};
use shmem_ucx::Endpoint;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// What a counted message weighs beside its data bytes, in the units the protocol counts.
const MSG_UNITS: u64 = 64;
/// Most unacknowledged units (data bytes, plus [`MSG_UNITS`] per message) to one PE.
pub(crate) const MAX_UNACKED: u64 = 4 << 20;
/// The sender asks for an acknowledgement after this many units to one PE.
pub(super) const ASK_EVERY: u64 = MAX_UNACKED / 2;

/// The units a counted message with `data` bytes weighs (see the module docs).
pub(super) fn units(data: usize) -> u64 {
    data as u64 + MSG_UNITS
}

/// A quiet that finds at most this many messages sent to a PE since the one before makes the
/// next messages to it ask for their ack themselves ([`Counts::eager`]) ...
const EAGER_AFTER_QUIET_OF: u32 = 2;
/// ... until this many in a row go without a quiet.
const EAGER_UNTIL: u32 = 4;
/// Only messages of at most this many data bytes ask for their ack themselves (the ask is one
/// more header word, inserted before the data).
const EAGER_MAX_DATA: usize = 8 << 10;

/// [`Counts::ordered`]: not known yet, one ordered lane, or not.
const LANE_UNKNOWN: u8 = 0;
pub(super) const ORDERED: u8 = 1;
const UNORDERED: u8 = 2;

/// PEs per chunk of [`Ledger`] counts: a chunk is allocated when this PE first sends to, or
/// hears from, one of its PEs.
const CHUNK: usize = 256;

/// The counts of the acknowledgement protocol with one PE (see the module docs). Totals since
/// start-up: they only grow.
pub(super) struct Counts {
    /// Sender side: units sent to the PE, the count it acknowledged, the count a `SYNC` asked
    /// it about.
    pub(super) sent: AtomicU64,
    pub(super) acked: AtomicU64,
    pub(super) asked: AtomicU64,
    /// Receiver side: units handled from the PE, and the count a `SYNC` from it waits for
    /// (0: none).
    received: AtomicU64,
    wanted: AtomicU64,
    /// Messages sent since the last quiet that asked the PE, and whether each message asks
    /// for its own ack (the PE's puts are mostly followed by a quiet: put + quiet is then one
    /// message and its ack, as UCX's emulated put is, instead of a put, a `SYNC` and an ack).
    pub(super) since_quiet: AtomicU32,
    pub(super) eager: AtomicBool,
    /// Whether the PE is on [`Ledger::listed`].
    on_list: AtomicBool,
    /// Whether its endpoint has one ordered lane (`LANE_UNKNOWN` before the first message).
    pub(super) ordered: AtomicU8,
    /// The fence epoch up to which plain puts to the PE are known to be flushed (see
    /// `after_fence`).
    pub(super) fenced: AtomicU64,
}

impl Counts {
    fn new() -> Counts {
        Counts {
            sent: AtomicU64::new(0),
            acked: AtomicU64::new(0),
            asked: AtomicU64::new(0),
            received: AtomicU64::new(0),
            wanted: AtomicU64::new(0),
            since_quiet: AtomicU32::new(0),
            // The first messages to a PE ask (a put + quiet round's first contact is then one
            // message to each PE, not a put and a `SYNC`); a pipeline turns it off after
            // `EAGER_UNTIL` of them.
            eager: AtomicBool::new(true),
            on_list: AtomicBool::new(false),
            ordered: AtomicU8::new(LANE_UNKNOWN),
            fenced: AtomicU64::new(0),
        }
    }
}

/// The protocol's [`Counts`] for every PE of the job, in chunks of [`CHUNK`] PEs allocated at
/// first contact: a PE pays 24 B per 256 PEs of the job at start-up, and 56 B for each PE of
/// a chunk it talks to (a job of 128,000 PEs: 12 KB, where counts for all would take 7 MB).
pub(super) struct Ledger {
    pub(super) n_pes: usize,
    chunks: Box<[OnceLock<Box<[Counts]>>]>,
    /// Sent and not acknowledged, all PEs together, so that `quiet` looks at one word.
    pub(super) outstanding: AtomicU64,
    /// PEs sent messages since they were last taken off `listed` (at most once each).
    listed: Mutex<Vec<usize>>,
    /// Whether some PE's endpoint was found not to have one ordered lane.
    pub(super) any_unordered: AtomicBool,
}

impl Ledger {
    pub(super) fn new(n_pes: usize) -> Ledger {
        Ledger {
            n_pes,
            chunks: (0..n_pes.div_ceil(CHUNK))
                .map(|_| OnceLock::new())
                .collect(),
            outstanding: AtomicU64::new(0),
            listed: Mutex::new(Vec::new()),
            any_unordered: AtomicBool::new(false),
        }
    }

    /// `pe`'s counts, if this PE has been in contact with its chunk (none: all zero).
    pub(super) fn get(&self, pe: usize) -> Option<&Counts> {
        self.chunks.get(pe / CHUNK)?.get()?.get(pe % CHUNK)
    }

    /// `pe`'s counts, allocating its chunk at first contact.
    ///
    /// # Panics
    /// If `pe` is not a PE of the job (callers check what a peer sent).
    pub(super) fn at(&self, pe: usize) -> &Counts {
        assert!(
            pe < self.n_pes,
            "shmem: PE {pe} is not a PE of this job of {} PEs",
            self.n_pes
        );
        let chunk = self.chunks[pe / CHUNK].get_or_init(|| {
            let len = CHUNK.min(self.n_pes - pe / CHUNK * CHUNK);
            (0..len).map(|_| Counts::new()).collect()
        });
        &chunk[pe % CHUNK]
    }

    /// Chunks allocated so far.
    #[cfg(test)]
    fn chunks_in_use(&self) -> usize {
        self.chunks.iter().filter(|c| c.get().is_some()).count()
    }

    /// Units sent to `pe` and not acknowledged yet.
    pub(super) fn unacked(&self, pe: usize) -> u64 {
        self.get(pe).map_or(0, |c| {
            let acked = c.acked.load(Ordering::Acquire);
            c.sent.load(Ordering::Acquire).saturating_sub(acked)
        })
    }

    /// Counts a message of `weight` units to `pe` and lists it; returns the new total.
    pub(super) fn count_sent(&self, pe: usize, weight: u64) -> u64 {
        self.outstanding.fetch_add(weight, Ordering::AcqRel);
        let sent = self.at(pe).sent.fetch_add(weight, Ordering::AcqRel) + weight;
        self.list(pe);
        sent
    }

    /// Whether the next message to `pe`, with `data` bytes, asks for its own ack (see
    /// [`Counts::eager`]); counts it as sent since the last quiet.
    pub(super) fn eager_ask(&self, pe: usize, data: usize) -> bool {
        let c = self.at(pe);
        let since = c.since_quiet.fetch_add(1, Ordering::Relaxed) + 1;
        if !c.eager.load(Ordering::Relaxed) {
            return false;
        }
        if since > EAGER_UNTIL {
            // A stream without quiets (a pipeline): acks on request only.
            c.eager.store(false, Ordering::Relaxed);
            return false;
        }
        data <= EAGER_MAX_DATA
    }

    /// A quiet asks `pe`: if few messages went to it since the last one, the next ask for
    /// their acks themselves.
    pub(super) fn note_quiet(&self, pe: usize) {
        if let Some(c) = self.get(pe) {
            let since = c.since_quiet.swap(0, Ordering::Relaxed);
            c.eager
                .store(since <= EAGER_AFTER_QUIET_OF, Ordering::Relaxed);
        }
    }

    pub(super) fn list(&self, pe: usize) {
        if !self.at(pe).on_list.swap(true, Ordering::AcqRel) {
            lock(&self.listed).push(pe);
        }
    }

    /// Inline: at every quiet, from `quiet::take_listed`.
    #[inline]
    pub(super) fn take_listed(&self) -> Vec<usize> {
        let taken = std::mem::take(&mut *lock(&self.listed));
        // Off the list before anyone asks them: a message sent from here on lists its PE
        // again, so no quiet can miss it.
        for &pe in &taken {
            self.at(pe).on_list.store(false, Ordering::Release);
        }
        taken
    }

    /// Records whether `pe`'s endpoint has one ordered lane, at the first message to it.
    pub(super) fn note_lane(&self, pe: usize, ep: &Endpoint) {
        let c = self.at(pe);
        if c.ordered.load(Ordering::Relaxed) == LANE_UNKNOWN {
            let o = if ep.one_ordered_lane() {
                ORDERED
            } else {
                self.any_unordered.store(true, Ordering::Release);
                UNORDERED
            };
            c.ordered.store(o, Ordering::Relaxed);
        }
    }

    /// Checks an `ACK [from, count]` and records it.
    pub(super) fn take_ack(&self, header: &[u8]) -> std::result::Result<(), Refusal> {
        let Some([from, n]) = words::<ACK_WORDS>(header) else {
            return refuse(u64::MAX, format!("ack header of {} bytes", header.len()));
        };
        let Some(pe) = usize::try_from(from).ok().filter(|&pe| pe < self.n_pes) else {
            return refuse(
                from,
                "acknowledges messages, but is not a PE of this job".into(),
            );
        };
        let sent = self.get(pe).map_or(0, |c| c.sent.load(Ordering::Acquire));
        if n > sent {
            return refuse(
                from,
                format!(
                    "acknowledges {n} units of puts and puts with signal, but {sent} were sent to it"
                ),
            );
        }
        if n == 0 {
            return Ok(());
        }
        let before = self.at(pe).acked.fetch_max(n, Ordering::AcqRel);
        if n > before {
            // What this ack adds is part of the total: this cannot go below zero.
            self.outstanding.fetch_sub(n - before, Ordering::AcqRel);
        }
        Ok(())
    }

    /// Counts a message with `data` bytes handled from `from` (a PE of the job: checked by the
    /// caller); the count to acknowledge if a `SYNC` waits for it.
    fn note_received(&self, from: usize, data: usize) -> Option<u64> {
        let c = self.at(from);
        let got = c.received.fetch_add(units(data), Ordering::AcqRel) + units(data);
        let want = c.wanted.load(Ordering::Acquire);
        (want != 0
            && got >= want
            && c.wanted
                .compare_exchange(want, 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok())
        .then_some(got)
    }

    /// Checks a `SYNC [from, count]`: the count to acknowledge now, or `None` when messages
    /// it covers are still to come (the ack goes out with the last of them).
    pub(super) fn take_sync(
        &self,
        header: &[u8],
    ) -> std::result::Result<(usize, Option<u64>), Refusal> {
        let Some([from, n]) = words::<SYNC_WORDS>(header) else {
            return refuse(u64::MAX, format!("sync header of {} bytes", header.len()));
        };
        let Some(pe) = usize::try_from(from).ok().filter(|&pe| pe < self.n_pes) else {
            return refuse(from, "asks for an ack, but is not a PE of this job".into());
        };
        Ok((pe, self.sync(pe, n)))
    }

    /// `pe` asks for an ack once `n` units from it are handled: the count to acknowledge now,
    /// or `None` when some are still to come (the ack goes out with the last of them).
    fn sync(&self, pe: usize, n: u64) -> Option<u64> {
        let c = self.at(pe);
        let got = c.received.load(Ordering::Acquire);
        if got >= n {
            return Some(got);
        }
        c.wanted.fetch_max(n, Ordering::AcqRel);
        // Handlers of one worker do not run at once, but check again all the same.
        let got = c.received.load(Ordering::Acquire);
        let now = got >= n
            && c.wanted
                .compare_exchange(n, 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok();
        now.then_some(got)
    }

    /// Counts a checked put or put with signal of `data` bytes from `from` (a PE of the job)
    /// that asks for an ack once `ask` units are handled, if it does: the count to
    /// acknowledge, if any is due.
    pub(super) fn receive_counted(
        &self,
        from: usize,
        data: usize,
        ask: Option<u64>,
    ) -> Option<u64> {
        let due = self.note_received(from, data);
        let asked = ask.and_then(|n| self.sync(from, n));
        due.max(asked)
    }

    /// The PE a counted message says it came from, checked to be one of the job's.
    pub(super) fn sender(&self, from: u64) -> std::result::Result<usize, Refusal> {
        match usize::try_from(from) {
            Ok(pe) if pe < self.n_pes => Ok(pe),
            _ => refuse(
                from,
                format!("a put from PE {from}, in a job of {} PEs", self.n_pes),
            ),
        }
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The table stays consistent whatever panicked while holding it (single inserts/removes).
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// [`lock`], or with `try_only` `None` when another thread (or this one, further up) holds it.
pub(super) fn lock_or_skip<T>(
    m: &Mutex<T>,
    try_only: bool,
) -> Option<std::sync::MutexGuard<'_, T>> {
    if !try_only {
        return Some(lock(m));
    }
    match m.try_lock() {
        Ok(g) => Some(g),
        Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::am::wire::tests::header;

    #[test]
    fn counts_are_allocated_per_chunk_at_first_contact() {
        // A job of 100,000 PEs: nothing per PE until one is contacted.
        let n = 100_000;
        let l = Ledger::new(n);
        assert_eq!(l.chunks_in_use(), 0);
        assert_eq!(l.unacked(99_999), 0);
        assert!(l.get(5).is_none(), "a read allocates nothing");
        assert_eq!(l.chunks_in_use(), 0);
        // Sending to PE 5 and hearing from the last PE take two chunks (the last one short).
        assert_eq!(l.count_sent(5, units(8)), units(8));
        assert_eq!(l.note_received(n - 1, 8), None);
        assert_eq!(l.chunks_in_use(), 2);
        assert_eq!(l.unacked(5), units(8));
        assert_eq!(l.get(6).map(|c| c.sent.load(Ordering::Relaxed)), Some(0));
        // An ack from a PE never sent to is refused without allocating; one of 0 is harmless.
        let refused = l.take_ack(&header(&[CHUNK as u64 * 3, 1]));
        assert!(refused.is_err_and(|r| r.what.contains("but 0 were sent")));
        assert!(l.take_ack(&header(&[CHUNK as u64 * 3, 0])).is_ok());
        assert!(
            l.take_ack(&header(&[n as u64, 0])).is_err(),
            "PE {n} is outside the job"
        );
        assert_eq!(l.chunks_in_use(), 2);
        assert!(l.take_ack(&header(&[5, units(8)])).is_ok());
        assert_eq!(l.unacked(5), 0);
        assert_eq!(l.outstanding.load(Ordering::Relaxed), 0);
        // What a chunk costs, and what start-up costs for the whole job.
        assert_eq!(std::mem::size_of::<Counts>(), 56);
        assert!(std::mem::size_of_val(&*l.chunks) <= n.div_ceil(CHUNK) * 24);
    }
}
