//! How a broadcast's root stores data that the other members then read from its memory (the
//! root's `dest`, or the holder's, in [`staged`](super::staged)): with cached stores or with
//! streaming (non-temporal) ones, chosen by what the root has measured on this process.
//!
//! Which is quicker depends on where the readers run, not on anything the process can look up.
//! A member reads a line that the root has just written with cached stores from the root's
//! cache: quickly while the two share a last-level cache, several times more slowly where the
//! line crosses to another die or socket. With streaming stores the lines go to memory, and the
//! members read them from there at the same cost wherever they run. Measured on the project's
//! 2-vCPU EPYC, whose host now and then places the two vCPUs apart for seconds at a time (a
//! cache line's round trip between them, `benches/c/c2c.c`, about 105 ns most of the time and
//! about 540 ns then), `broadcast_to_others` of a private source through the holder's `dest`
//! (`coll_sweep`, 8 alternating rounds, medians, us per call, cached / streaming / Open MPI's
//! oshmem):
//! - vCPUs together: 3 PEs 1 MiB 41.9 / 116.6 / 113.1, 4 MiB 140.5 / 455.3 / 488.0; 4 PEs
//!   90.2 / 107.1 / 202.6, 308.9 / 516.6 / 1,376.8; 8 PEs 140.4 / 163.2 / 238.1, 1,128.3 /
//!   1,218.0 / 1,254.6;
//! - vCPUs apart: 4 PEs 1 MiB 534.0 / 159.1 / 750.9, 4 MiB 1,581.0 / 571.3 / 2,333.0; 6 PEs
//!   548.6 / 152.2 / 373.0, 1,873.1 / 768.0 / 2,975.2; 8 PEs 668.6 / 188.7 / 281.1.
//!
//! Neither kind wins in both placements, and nothing the process can read tells them apart
//! (sysfs shows one shared L3 in both). So the root times each such broadcast, from its first
//! store to the last member's read (which it waits for anyway), per byte, and keeps the times
//! of the last three calls of each kind per team-size and size class ([`Learned`]):
//! - a kind's figure is the least of its three: a member that the scheduler kept waiting only
//!   adds time (on an oversubscribed node, often), so the least is what the stores cost, and
//!   it rises once three calls in a row took longer;
//! - the kind with the lower figure is used; the other is tried one call in [`EXPLORE`], and at
//!   the next call when the used one's figure has just more than doubled while it is still the
//!   lower; a trial's time replaces the tried kind's three (an old figure from before the
//!   readers moved does not linger);
//! - the first call of a class is a warm-up: its time, which includes first touches of pages,
//!   is not kept.
//!
//! Only the root decides: the members read the same bytes either way. Measured as above (20
//! alternating rounds, the probe before and after every run, medians, us per call, learned /
//! cached / streaming / oshmem; a run counts as "apart" where either probe read above 300 ns):
//! - vCPUs together: 3 PEs 1 MiB 40.7 / 39.6 / 92.4 / 123.6, 4 MiB 146.2 / 131.9 / 344.2 /
//!   462.0; 4 PEs 4 MiB 281.6 / 273.2 / 458.6 / 1,088.7; 8 PEs 1 MiB 127.7 / 127.3 / 140.6 /
//!   208.8, 4 MiB 890.8 / 898.1 / 1,073.6 / 1,191.0;
//! - vCPUs apart: 3 PEs 1 MiB 87.9 / 450.7 / 94.9 / 210.5; 4 PEs 1 MiB 158.8 / 480.7 / 138.8
//!   / 520.0; 6 PEs 4 MiB 785.0 / 2,021.8 / 674.0 / 3,083.9; 8 PEs 1 MiB 193.0 / 529.4 /
//!   179.9 / 279.2, 4 MiB 940.6 / 1,937.1 / 1,161.7 / 1,531.3.
//!
//! Broadcasts below [`LEARN_MIN`] keep cached stores (they stay in the caches, and a timer's
//! reading is not free).
//!
//! The members of a large all-to-all on one node learn their stores the same way, each timing
//! its own copies into the others' `dest`s, in a table of records of its own
//! ([`Choice::alltoall`]; see `coll::alltoall` for where, and why).
//!
//! Part of the collectives layer; uses nothing of the crate but `mem::copy`.

use crate::mem::copy::Stores;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The smallest broadcast (bytes) whose stores are chosen by measurement.
const LEARN_MIN: usize = 64 << 10;
/// One call in this many tries the kind of store that is not the better one.
const EXPLORE: u64 = 32;
/// Size classes: powers of two from [`LEARN_MIN`] up, the last taking everything larger.
const SIZE_CLASSES: usize = 12;
/// Team-size classes: 2, 3-4, 5-8, 9-16, 17 and more members.
const TEAM_CLASSES: usize = 5;

// `index` and `other` serve the records here only.
impl Stores {
    fn index(self) -> usize {
        match self {
            Stores::Cached => 0,
            Stores::Streaming => 1,
        }
    }

    fn other(self) -> Stores {
        match self {
            Stores::Cached => Stores::Streaming,
            Stores::Streaming => Stores::Cached,
        }
    }
}

/// How a call's time counts ([`Record::pick`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// The first call of a class: its time includes first touches of pages, and is not kept.
    WarmUp,
    /// A try of the kind that is not the better one (or not yet measured): its time replaces
    /// that kind's figures.
    Trial,
    /// The better kind: its time joins that kind's last figures.
    Chosen,
}

/// What the root has measured for one team-size and size class.
struct Learned {
    /// Calls made in this class.
    calls: u64,
    /// Per kind ([`Stores::index`]): the times of its last three calls, picoseconds per byte;
    /// empty (all 0) until measured. The kind's figure is the least of them: a member that the
    /// scheduler kept waiting only adds time, so the least is what the stores cost, and it
    /// rises once three calls in a row took longer.
    last: [[u64; 3]; 2],
    /// Where the next time of each kind goes in `last`.
    next: [usize; 2],
    /// A kind whose figure has just more than doubled: the next call tries the other, unless
    /// the other is the better one already.
    doubt: Option<Stores>,
}

impl Learned {
    fn figure(&self, kind: Stores) -> u64 {
        self.last[kind.index()].into_iter().min().unwrap_or(0)
    }

    /// The kind for the next call, and how its time counts.
    fn pick(&mut self) -> (Stores, Role) {
        let k = self.calls;
        self.calls += 1;
        if k == 0 {
            return (Stores::Cached, Role::WarmUp);
        }
        let [c, s] = [Stores::Cached, Stores::Streaming].map(|kind| self.figure(kind));
        if s == 0 {
            return (Stores::Streaming, Role::Trial);
        }
        if c == 0 {
            return (Stores::Cached, Role::Trial);
        }
        let best = if s < c {
            Stores::Streaming
        } else {
            Stores::Cached
        };
        if self.doubt.take() == Some(best) || k % EXPLORE == EXPLORE - 1 {
            (best.other(), Role::Trial)
        } else {
            (best, Role::Chosen)
        }
    }

    /// Records a call of kind `kind` that took `ps_per_byte`.
    fn record(&mut self, kind: Stores, role: Role, ps_per_byte: u64) {
        let i = kind.index();
        let sample = ps_per_byte.max(1);
        match role {
            Role::WarmUp => {}
            Role::Trial => self.last[i] = [sample; 3],
            Role::Chosen => {
                let before = self.figure(kind);
                self.last[i][self.next[i]] = sample;
                self.next[i] = (self.next[i] + 1) % 3;
                if self.figure(kind) > before.saturating_mul(2) {
                    self.doubt = Some(kind);
                }
            }
        }
    }
}

/// A class's [`Learned`], shared by the threads of the process.
struct Record(Mutex<Learned>);

impl Record {
    const fn new() -> Record {
        Record(Mutex::new(Learned {
            calls: 0,
            last: [[0; 3]; 2],
            next: [0; 2],
            doubt: None,
        }))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Learned> {
        // A panic while holding it leaves figures that are still figures.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn pick(&self) -> (Stores, Role) {
        self.lock().pick()
    }

    fn record(&self, kind: Stores, role: Role, ps_per_byte: u64) {
        self.lock().record(kind, role, ps_per_byte);
    }
}

/// What a record learns for: its own table of classes each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Learner {
    /// A broadcast's root, timed from its first store to the last member's read.
    Broadcast = 0,
    /// A member of an all-to-all on one node, timed over its own copies ([`Choice::alltoall`]).
    AllToAll = 1,
}

/// Every class's record, per [`Learner`] (per process: the members' placement is this
/// process's).
static RECORDS: [[[Record; SIZE_CLASSES]; TEAM_CLASSES]; 2] =
    [const { [const { [const { Record::new() }; SIZE_CLASSES] }; TEAM_CLASSES] }; 2];

/// The record of `learner` for `bytes` (at least [`LEARN_MIN`]; less counts as that) in a team
/// of `n`.
fn record_of(learner: Learner, n: usize, bytes: usize) -> &'static Record {
    let team = match n {
        0..=2 => 0,
        3..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        _ => 4,
    };
    let size = bytes.max(1).ilog2().saturating_sub(LEARN_MIN.ilog2()) as usize;
    &RECORDS[learner as usize][team][size.min(SIZE_CLASSES - 1)]
}

/// The root's choice for one broadcast, and its timing.
pub(crate) struct Choice {
    kind: Stores,
    /// Where the time goes, how it counts, and when the call started (none below
    /// [`LEARN_MIN`]).
    learn: Option<(&'static Record, Role, Instant)>,
    bytes: usize,
}

impl Choice {
    /// The kind of store for a broadcast of `bytes` in a team of `n` (cached below
    /// [`LEARN_MIN`], not timed); the clock starts here, just before the root's first store.
    pub(crate) fn new(n: usize, bytes: usize) -> Choice {
        if bytes < LEARN_MIN {
            return Choice {
                kind: Stores::Cached,
                learn: None,
                bytes,
            };
        }
        Choice::learned(record_of(Learner::Broadcast, n, bytes), bytes)
    }

    /// The kind of store for one member's copies in an all-to-all of `bytes` per member (its
    /// `n` blocks) in a team of `n`, as this process's timings of earlier ones of the class
    /// found quicker; [`finish_after`](Self::finish_after) records the time its copies took.
    pub(crate) fn alltoall(n: usize, bytes: usize) -> Choice {
        Choice::learned(record_of(Learner::AllToAll, n, bytes), bytes)
    }

    fn learned(record: &'static Record, bytes: usize) -> Choice {
        let (kind, role) = record.pick();
        Choice {
            kind,
            learn: Some((record, role, Instant::now())),
            bytes,
        }
    }

    /// The chosen kind.
    pub(crate) fn stores(&self) -> Stores {
        self.kind
    }

    /// Stops the clock (once every member has read) and records the time.
    pub(crate) fn finish(self) {
        if let Some((_, _, start)) = self.learn {
            self.finish_after(start.elapsed());
        }
    }

    /// Records `spent` as the call's time (not the clock's since [`new`](Self::new)).
    pub(crate) fn finish_after(self, spent: Duration) {
        if let Some((record, role, _)) = self.learn {
            let ps = spent.as_nanos().saturating_mul(1000) / self.bytes.max(1) as u128;
            record.record(self.kind, role, u64::try_from(ps).unwrap_or(u64::MAX));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{EXPLORE, Record, Stores};

    const E: usize = EXPLORE as usize;

    /// Runs `calls` calls, each costing `cost(kind)`; returns the kinds used.
    fn drive(r: &Record, calls: usize, mut cost: impl FnMut(Stores) -> u64) -> Vec<Stores> {
        (0..calls)
            .map(|_| {
                let (kind, role) = r.pick();
                r.record(kind, role, cost(kind));
                kind
            })
            .collect()
    }

    /// Cached stores at 40, streaming ones at 110 (the readers share a cache).
    fn together(k: Stores) -> u64 {
        if k == Stores::Cached { 40 } else { 110 }
    }

    fn count(used: &[Stores], kind: Stores) -> usize {
        used.iter().filter(|&&k| k == kind).count()
    }

    #[test]
    fn settles_on_the_cheaper_kind_and_tries_the_other_now_and_then() {
        let r = Record::new();
        let used = drive(&r, 200, together);
        // The first try of each kind, then one call in EXPLORE.
        let streaming = count(&used, Stores::Streaming);
        assert!(
            (200 / E..=200 / E + 2).contains(&streaming),
            "{streaming} streaming calls of 200: {used:?}"
        );
        // A warm-up call, a trial of each kind, then the cheaper one.
        assert_eq!(
            used[..3],
            [Stores::Cached, Stores::Streaming, Stores::Cached]
        );
        assert_eq!(used[3..E - 1], [Stores::Cached; E - 4]);
    }

    #[test]
    fn follows_a_change_within_a_few_calls_both_ways() {
        let r = Record::new();
        drive(&r, 50, together);
        // The readers move apart: cached stores now cost 500. After three slow calls the
        // streaming stores' figure is the lower one, and they stay.
        let used = drive(&r, 10, |k| if k == Stores::Cached { 500 } else { 110 });
        assert_eq!(used[3..], [Stores::Streaming; 7], "{used:?}");
        // Back together: the next trial of cached stores (within EXPLORE calls) finds them
        // cheap again, and they stay (but for the trials of the other kind).
        let used = drive(&r, 3 * E, together);
        let first = used.iter().position(|&k| k == Stores::Cached);
        assert!(first.is_some_and(|i| i < E), "{used:?}");
        assert!(count(&used[E..], Stores::Cached) >= 2 * E - 2, "{used:?}");
    }

    #[test]
    fn one_delayed_call_changes_nothing() {
        let r = Record::new();
        drive(&r, 10, together);
        let mut n = 0;
        let used = drive(&r, 10, |k| {
            n += 1;
            together(k) * if n == 3 { 20 } else { 1 }
        });
        assert_eq!(used, [Stores::Cached; 10]);
    }

    #[test]
    fn a_slow_first_call_of_each_kind_does_not_stick() {
        let r = Record::new();
        // The first call of each kind touches the pages first: 50 times the cost.
        let mut first = [true, true];
        let used = drive(&r, 3 * E, |k| {
            let slow = std::mem::take(&mut first[k.index()]);
            together(k) * if slow { 50 } else { 1 }
        });
        assert!(count(&used[2 * E..], Stores::Cached) >= E - 1, "{used:?}");
    }
}
