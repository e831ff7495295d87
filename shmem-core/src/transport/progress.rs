//! Waiting and progress: how a PE waits for memory that other PEs write, and who drives UCX
//! while it waits or computes; and whether the runtime is still live (every operation and every
//! wait checks it).
//!
//! The lowest part of the transport layer: it knows UCX workers and nothing about peers, heaps,
//! teams or statics. Uses nothing of the crate but `error`.

use crate::error::{Error, Result};
use shmem_ucx::Worker;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;

/// Busy-wait rounds before a waiting PE starts yielding its CPU, as set at start-up.
static SPIN_LIMIT: AtomicU32 = AtomicU32::new(SPINS_WITH_OWN_CORE);
/// Whether a PE past the spin limit yields every round (its node has more PEs than CPUs) or
/// adapts how often ([`YIELD_INTERVAL`]), as set at start-up.
static YIELD_ALWAYS: AtomicBool = AtomicBool::new(false);
/// Past the spin limit, a PE with a core of its own yields once every this many rounds. Each
/// `sched_yield` is a system call between two looks at the network, 0.5 us here, which a PE
/// that serves its peers' transfers while it waits (over tcp, every put, get and atomic aimed
/// at it) pays in latency; and with a core of its own nobody wants the core back but the odd
/// other thread. So the interval adapts: a yield that came back at once doubles it (up to
/// [`YIELD_INTERVAL_MAX`]), one during which something else ran (it took over
/// [`YIELD_RAN_OTHERS`]) sets it back to 1. Then PEs that do share cores after all (two
/// "hosts" of one machine, other jobs) still hand them over every round.
static YIELD_INTERVAL: AtomicU32 = AtomicU32::new(1);
const YIELD_INTERVAL_MAX: u32 = 256;
/// A yield that took longer ran another thread or process.
const YIELD_RAN_OTHERS: Duration = Duration::from_micros(5);
/// With a core of its own a PE spins a little before yielding (wake-up latency matters).
const SPINS_WITH_OWN_CORE: u32 = 64;
/// When this node's PEs outnumber its CPUs, the PE being waited for may need this very CPU:
/// yield almost at once, and every round.
const SPINS_OVERSUBSCRIBED: u32 = 2;
/// UCX's blocking waits (whose idle rounds come only after a 64-round spin of their own when the
/// PE has a core of its own, [`SPINS_OVERSUBSCRIBED`] when not) yield one idle round in this
/// many when the PE has a core of its own.
const UCX_YIELD_EVERY_OWN_CORE: u32 = 8;

/// How many times a collective's wait on one node looks at its flags before its first round of
/// UCX progress (each look after a spin-loop hint, about 25 ns on AMD Zen 4); after that, once
/// between two rounds. Over tcp a round is a system call (0.3-0.5 us) during which an arrived
/// flag waits to be seen, so the first window catches the PEs that arrive together; while the
/// wait goes on, the PEs that this one serves through UCX (their gets and atomics over tcp) wait
/// for its next round instead, and looks between rounds delay them. 2 PEs over tcp, against 8
/// looks between every two rounds: 1 look between every two cost barrier_all 2.4x (82 -> 196
/// ns); this window kept it (70-78 ns) and made a peer's get and put + quiet 1-2% faster
/// (9.46-9.52 against 9.66-9.75 us).
pub(crate) const POLLS_PER_PROGRESS: u32 = 8;

/// While a progress thread runs, a PE that issues operations through UCX without waiting makes a
/// round of progress itself every this many (see [`Progress::note_op`]).
const OPS_PER_ROUND: u32 = 8;

/// Whether puts wait in batches to be sent (see `am::coalesces`): every wait and round of
/// progress sends them first, and the progress thread looks at least every [`BATCH_NAP`].
static BATCHED: AtomicBool = AtomicBool::new(false);
/// What sends them: set once by the transport at start-up (the arrow from this lowest layer to
/// the batches turned around).
static SEND_BATCHES: OnceLock<fn()> = OnceLock::new();
/// The longest nap of a progress thread while puts wait in batches.
const BATCH_NAP: Duration = Duration::from_micros(200);

/// Whether the progress thread is waiting for UCX events (up to its longest nap): the first put
/// into an empty batch then wakes it ([`set_batched`]), so that a batch left behind by a PE
/// that goes on computing goes out within [`BATCH_NAP`] rather than that nap.
static THREAD_WAITS: AtomicBool = AtomicBool::new(false);
/// The worker whose events the progress thread waits for (set when it starts).
static THREAD_WORKER: OnceLock<Worker> = OnceLock::new();
/// Whether the progress thread naps longer than [`BATCH_NAP`] (parked): the first put into
/// an empty batch then unparks it.
static THREAD_NAPS_LONG: AtomicBool = AtomicBool::new(false);
/// The progress thread (set when it starts).
static THREAD: OnceLock<std::thread::Thread> = OnceLock::new();
/// Batches begun so far: while they keep being begun the thread naps at most [`BATCH_NAP`].
static BATCHES_BEGUN: AtomicU64 = AtomicU64::new(0);

/// Whether this PE waited or made a round of progress since its last put: the put right after
/// a wait goes at once, not into a batch (a ping-pong's put is followed by a wait for the
/// answer, which would send it anyway, and would only pay for the batch).
static WAITED: AtomicBool = AtomicBool::new(false);

/// Whether this PE waited (or made a round of progress) since the last call; clears it.
#[inline]
pub(crate) fn take_waited() -> bool {
    WAITED.load(Ordering::Relaxed) && WAITED.swap(false, Ordering::Relaxed)
}

/// Records whether puts wait in batches; the first of a batch wakes a progress thread that
/// waits for events (a write to the worker's event descriptor).
#[inline]
pub(crate) fn set_batched(on: bool) {
    // SeqCst here and in the thread (flag up, then a look at `BATCHED`): either the thread
    // sees the batch or this sees the thread waiting.
    let was = BATCHED.swap(on, Ordering::SeqCst);
    if on && !was {
        BATCHES_BEGUN.fetch_add(1, Ordering::Relaxed);
        if THREAD_WAITS.load(Ordering::SeqCst) {
            if let Some(w) = THREAD_WORKER.get() {
                // A failed wake-up leaves the batch to the thread's next look.
                let _ = w.signal();
            }
        } else if THREAD_NAPS_LONG.load(Ordering::SeqCst)
            && let Some(t) = THREAD.get()
        {
            t.unpark();
        }
    }
}

/// Whether puts wait in batches.
#[inline(always)]
pub(crate) fn batched() -> bool {
    BATCHED.load(Ordering::Acquire)
}

/// Sets what sends the batches (once).
pub(crate) fn set_batch_sender(send: fn()) {
    let _ = SEND_BATCHES.set(send);
}

/// Sends the puts waiting in batches, if any (unless another thread is sending them).
#[inline]
fn send_batches() {
    if batched()
        && let Some(send) = SEND_BATCHES.get()
    {
        send();
    }
}

/// When this node's PEs outnumber its CPUs, the period of their progress threads (in µs; 0: they
/// do not outnumber them), as set at start-up: see [`ProgressThread`].
static OVERSUBSCRIBED_PERIOD_US: AtomicU64 = AtomicU64::new(0);
/// On an oversubscribed node, a progress thread's period per PE that shares a CPU ...
const PERIOD_PER_PE_PER_CPU: Duration = Duration::from_millis(1);
/// ... and its bounds.
const PERIOD_MIN: Duration = Duration::from_millis(5);
const PERIOD_MAX: Duration = Duration::from_millis(50);

/// The period of a progress thread on a node of `local_pes` PEs and `cpus` CPUs, `None` when
/// the PEs do not outnumber the CPUs.
fn oversubscribed_period(local_pes: usize, cpus: usize) -> Option<Duration> {
    (local_pes > cpus).then(|| {
        let per_cpu = local_pes.div_ceil(cpus.max(1)) as u32;
        (PERIOD_PER_PE_PER_CPU * per_cpu).clamp(PERIOD_MIN, PERIOD_MAX)
    })
}

/// The CPUs this node's PEs share when this PE bound itself to one of them (0: it did not, and
/// its own affinity mask tells).
static NODE_CPUS: AtomicUsize = AtomicUsize::new(0);

/// Records that this PE bound itself to one of `cpus` CPUs at start-up: its own mask now has one.
pub(crate) fn set_node_cpus(cpus: usize) {
    NODE_CPUS.store(cpus, Ordering::Relaxed);
}

/// Sets the spin limit and the yield policy from the number of PEs on this node, for the
/// runtime's waits and for UCX's blocking waits.
pub(crate) fn set_spin_limit(local_pes: usize) {
    let cpus = match NODE_CPUS.load(Ordering::Relaxed) {
        0 => std::thread::available_parallelism().map_or(1, |c| c.get()),
        n => n,
    };
    let oversubscribed = local_pes > cpus;
    let limit = if oversubscribed {
        SPINS_OVERSUBSCRIBED
    } else {
        SPINS_WITH_OWN_CORE
    };
    SPIN_LIMIT.store(limit, Ordering::Relaxed);
    let period = oversubscribed_period(local_pes, cpus).map_or(0, |p| p.as_micros() as u64);
    OVERSUBSCRIBED_PERIOD_US.store(period, Ordering::Relaxed);
    YIELD_ALWAYS.store(oversubscribed, Ordering::Relaxed);
    shmem_ucx::set_yield_every(if oversubscribed {
        1
    } else {
        UCX_YIELD_EVERY_OWN_CORE
    });
    shmem_ucx::set_idle_spins(if oversubscribed {
        SPINS_OVERSUBSCRIBED
    } else {
        shmem_ucx::IDLE_SPINS
    });
}

/// Whether this node has more PEs than CPUs (as set at start-up), so that a PE waiting for
/// another often waits for one that is not running.
pub(crate) fn oversubscribed() -> bool {
    YIELD_ALWAYS.load(Ordering::Relaxed)
}

/// One round of backing off in a wait loop: spin a few times, then yield: every round when
/// the node is oversubscribed (so that 8 or 16 PEs on 2 cores still make progress quickly),
/// else as often as yielding turns out to let something else run ([`YIELD_INTERVAL`]).
#[inline]
pub(crate) fn backoff(spins: &mut u32) {
    let limit = SPIN_LIMIT.load(Ordering::Relaxed);
    *spins = spins.wrapping_add(1);
    if *spins <= limit {
        std::hint::spin_loop();
    } else if YIELD_ALWAYS.load(Ordering::Relaxed) {
        std::thread::yield_now();
    } else {
        let interval = YIELD_INTERVAL.load(Ordering::Relaxed).max(1);
        if (*spins - limit).is_multiple_of(interval) {
            adaptive_yield(interval);
        }
    }
}

#[cold]
fn adaptive_yield(interval: u32) {
    let start = std::time::Instant::now();
    std::thread::yield_now();
    let next = if start.elapsed() > YIELD_RAN_OTHERS {
        1
    } else {
        (interval * 2).min(YIELD_INTERVAL_MAX)
    };
    YIELD_INTERVAL.store(next, Ordering::Relaxed);
}

/// The UCX workers of this process and the thread that serves them while the PE computes.
pub(crate) struct Progress {
    /// False once the `World` was dropped: every operation and every wait checks it.
    live: AtomicBool,
    /// Some peer is reached through UCX: waits drive the workers and quiet flushes.
    any_ucx: bool,
    worker: Worker,
    /// The workers of live contexts: every wait progresses them too, because a peer's operation
    /// (or UCX's own wire-up traffic over tcp) may be waiting on any worker of this process.
    ctx_workers: RwLock<Vec<Worker>>,
    /// Counts this PE's own rounds of progress while a progress thread reads the count, so that
    /// the thread can tell a PE that waits in the library (and progresses by itself) from one
    /// that computes.
    rounds: Arc<AtomicU64>,
    count_rounds: bool,
    /// Operations this PE issued through UCX (counted only while a progress thread runs).
    ops: AtomicU32,
    thread: Mutex<Option<ProgressThread>>,
    /// A progress thread runs and wakes for events (its node's PEs do not outnumber its CPUs):
    /// then waits skip their first round of progress and [`note_op`](Self::note_op) makes
    /// rounds. A thread that only looks once a period (an oversubscribed node) contends with
    /// nobody, and the PE keeps the habits it has without a thread.
    thread_waits_for_events: bool,
}

impl Progress {
    /// Progress for `worker`; with `thread`, a [`ProgressThread`] serves it while the PE
    /// computes (only when some peer is reached through UCX).
    pub(crate) fn new(worker: Worker, any_ucx: bool, thread: bool) -> Result<Progress> {
        let rounds = Arc::new(AtomicU64::new(0));
        let thread = (thread && any_ucx)
            .then(|| ProgressThread::start(worker.clone(), Arc::clone(&rounds)))
            .transpose()?;
        Ok(Progress {
            live: AtomicBool::new(true),
            any_ucx,
            worker,
            ctx_workers: RwLock::new(Vec::new()),
            rounds,
            count_rounds: thread.is_some(),
            ops: AtomicU32::new(0),
            thread_waits_for_events: thread.is_some()
                && OVERSUBSCRIBED_PERIOD_US.load(Ordering::Relaxed) == 0,
            thread: Mutex::new(thread),
        })
    }

    /// Panics unless the runtime is live (the `World` has not been dropped).
    #[inline(always)]
    #[track_caller]
    pub(crate) fn check_live(&self) {
        if !self.live.load(Ordering::Acquire) {
            used_after_finalize();
        }
    }

    /// Marks the runtime finalized: every operation and wait from now on panics.
    pub(crate) fn end(&self) {
        self.live.store(false, Ordering::Release);
    }

    /// Waits until `done()` holds for local memory that other PEs write: spins briefly, then
    /// yields between checks, driving UCX so that transfers carried by this PE's progress land.
    ///
    /// With `polls` (`Some(n)`) it is a wait for a condition that the PEs of this node fulfil
    /// through shared memory (a collective's flags on one node): it looks at `done()` `n` more
    /// times before its first round of UCX progress and once more between later rounds (over
    /// tcp a round is a system call, during which an arrived flag waits to be seen; see
    /// [`POLLS_PER_PROGRESS`]), and a condition that already holds returns at once, without
    /// progress. That is safe for collectives: they progress whenever they do wait, and a PE
    /// whose peers need its progress is one they keep waiting. (A condition that needs this
    /// PE's UCX progress, as a quiet does, takes `None`.)
    #[track_caller]
    pub(crate) fn wait(&self, polls: Option<u32>, mut done: impl FnMut() -> bool) {
        // Whatever it waits for may need the puts that wait in batches.
        send_batches();
        WAITED.store(true, Ordering::Relaxed);
        if polls.is_none() && !self.thread_waits_for_events {
            // Progress even when the condition already holds: a program that polls with waits
            // or tests must keep the operations that peers aim at this PE moving. A progress
            // thread that waits for events does that when the PE itself does not progress (it
            // counts the PE's rounds), so with one the round is skipped: over tcp it is a system
            // call or two, which a pipeline of waits for flags that have already arrived would
            // pay on every wait.
            self.progress();
        }
        let mut spins = 0;
        let mut window = polls.unwrap_or(0);
        while !done() {
            self.check_live();
            if self.any_ucx {
                for _ in 0..window {
                    std::hint::spin_loop();
                    if done() {
                        return;
                    }
                }
                window = window.min(1);
            }
            self.progress();
            backoff(&mut spins);
        }
    }

    /// Notes an operation this PE issued through UCX that does not wait (a put, a non-fetching
    /// atomic): while a progress thread that waits for events runs, every
    /// [`OPS_PER_ROUND`]-th such operation is a round of progress here. A PE that only issues
    /// operations would otherwise never progress by itself, and the thread, taking it for a PE
    /// that computes, would wake for every event
    /// (over tcp every put's acknowledgement) and contend with it for the worker: measured at
    /// 2 PEs over tcp, put 8 B + fence took 18-19 us with the thread against 7.5 without it, and
    /// the put + fence + flag pipeline 32-40 us a row against 24. The rounds also serve, while
    /// the PE issues, what peers aim at it. Without a thread it costs one branch.
    #[inline]
    pub(crate) fn note_op(&self) {
        if self.thread_waits_for_events {
            // Only this PE's own threads count; a lost update between two of them is harmless.
            let n = self.ops.load(Ordering::Relaxed).wrapping_add(1);
            self.ops.store(n, Ordering::Relaxed);
            if n.is_multiple_of(OPS_PER_ROUND) {
                self.progress_ucx();
            }
        }
    }

    /// The main worker.
    pub(crate) fn worker(&self) -> &Worker {
        &self.worker
    }

    /// True when some peer is reached through UCX.
    #[inline(always)]
    pub(crate) fn any_ucx(&self) -> bool {
        self.any_ucx
    }

    /// Drives UCX once: the main worker and every context's (`shmem_test` and friends make
    /// progress without blocking). Free when every peer is reached directly.
    #[doc(alias = "shmem_test")]
    #[inline(always)]
    pub(crate) fn progress(&self) {
        if self.any_ucx {
            send_batches();
            WAITED.store(true, Ordering::Relaxed);
            self.progress_ucx();
        }
    }

    /// Whether a progress thread runs and waits for events (see
    /// [`thread_waits_for_events`](Self::thread_waits_for_events)): it sends the puts that
    /// wait in batches while the PE computes.
    pub(crate) fn thread_serves_events(&self) -> bool {
        self.thread_waits_for_events
    }

    /// The UCX half of [`progress`](Self::progress), out of line so that the reads that call
    /// `progress` stay a compare and a copy on the direct path.
    #[cold]
    #[inline(never)]
    fn progress_ucx(&self) {
        if self.count_rounds {
            self.rounds.fetch_add(1, Ordering::Relaxed);
        }
        self.worker.progress();
        if let Ok(workers) = self.ctx_workers.try_read() {
            for w in workers.iter() {
                w.progress();
            }
        }
    }

    /// [`progress`](Self::progress) of every worker but `waiting_on`.
    pub(crate) fn progress_except(&self, waiting_on: shmem_ucx::sys::ucp_worker_h) {
        if !self.any_ucx {
            return;
        }
        if self.count_rounds {
            self.rounds.fetch_add(1, Ordering::Relaxed);
        }
        if self.worker.raw() != waiting_on {
            self.worker.progress();
        }
        if let Ok(workers) = self.ctx_workers.try_read() {
            for w in workers.iter().filter(|w| w.raw() != waiting_on) {
                w.progress();
            }
        }
    }

    /// Adds a context's worker to those every wait progresses.
    pub(crate) fn add_worker(&self, worker: &Worker) {
        self.ctx_workers
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(worker.clone());
    }

    /// Removes a context's worker.
    pub(crate) fn remove_worker(&self, worker: &Worker) {
        self.ctx_workers
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|x| x.raw() != worker.raw());
    }

    /// Stops the progress thread, if one runs (at finalize).
    pub(crate) fn stop_thread(&self) {
        let thread = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(t) = thread {
            t.stop();
        }
    }
}

/// The panic of every operation on a handle that outlived the `World`.
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn used_after_finalize() -> ! {
    panic!(
        "shmem: used after the World was dropped: symmetric memory and the handles made from it \
         can be used only while the World returned by shmem_core::init() lives"
    )
}

/// A thread that progresses the main worker while this PE computes: operations that need this
/// PE's progress, such as atomics emulated over tcp, then complete without waiting for the PE to
/// call the library.
///
/// While the PE itself waits in the library it progresses the worker on its own, and a second
/// thread woken by every event would only contend for the worker (over tcp between two hosts it
/// tripled put latency; waking every 200 µs to look still cost 30%). So the thread watches the
/// PE's count of progress rounds: while it moves, the thread naps, each nap twice as long as the
/// last from [`ProgressThread::MIN_NAP`] up to [`ProgressThread::MAX_NAP`]; once it stands still
/// (the PE computes), the thread serves events as they come (`ucp_worker_arm` and the worker's
/// event fd), looking at the count again at least every `MAX_NAP`. An operation on a PE that has
/// just started to compute thus waits at most about `MAX_NAP`.
///
/// It also sends the puts that wait in batches (`am::coalesces`), which only exist while
/// it waits for events: at every look, with naps of at most [`BATCH_NAP`] while the PE keeps
/// beginning batches, and woken by the first put of a batch (an unpark, or a signal of the
/// worker) when it naps longer or waits for events.
///
/// On a node whose PEs outnumber its CPUs, the thread does not wait for events: it wakes once a
/// period, 1 ms per PE that shares a CPU (5 to 50 ms: 32 ms for 64 PEs on 2 CPUs), and serves
/// the worker if the PE's count stood still since the last look. There every wake-up takes a
/// CPU from a PE that has work, and the PEs of a barrier or an exchange wait for the slowest:
/// at 64 PEs on 2 cores over tcp, threads that merely woke every 5 ms to look at the count made
/// the all-to-all put round 123 ms against 79-86 ms without threads, and every 20 ms, 87 ms.
/// A PE that computes on such a node runs only a share of the time itself; an operation aimed
/// at it waits at most one period.
struct ProgressThread {
    stop: Arc<AtomicBool>,
    worker: Worker,
    handle: std::thread::JoinHandle<()>,
}

impl ProgressThread {
    /// The first nap after the PE was seen progressing by itself.
    const MIN_NAP: Duration = Duration::from_micros(100);
    /// The longest nap, and the longest event wait between looks at the PE's count.
    const MAX_NAP: Duration = Duration::from_millis(5);

    fn start(worker: Worker, rounds: Arc<AtomicU64>) -> Result<ProgressThread> {
        let _ = THREAD_WORKER.set(worker.clone());
        let stop = Arc::new(AtomicBool::new(false));
        let (w, s) = (worker.clone(), Arc::clone(&stop));
        let handle = std::thread::Builder::new()
            .name("shmem-progress".into())
            .spawn(move || {
                let _ = THREAD.set(std::thread::current());
                let mut begun_seen = 0;
                let period = match OVERSUBSCRIBED_PERIOD_US.load(Ordering::Relaxed) {
                    0 => None,
                    us => Some(Duration::from_micros(us)),
                };
                let mut event_wait = true;
                let mut seen = rounds.load(Ordering::Relaxed);
                let mut nap = Self::MIN_NAP;
                while !s.load(Ordering::Acquire) {
                    if let Some(period) = period {
                        // `stop` unparks it (a spurious return only looks early).
                        std::thread::park_timeout(period);
                        if s.load(Ordering::Acquire) {
                            break;
                        }
                        let now = rounds.load(Ordering::Relaxed);
                        if now == seen {
                            while w.progress() != 0 {}
                        }
                        seen = now;
                        continue;
                    }
                    // Puts left in batches go out within a nap (a PE that stopped calling
                    // the library would not send them).
                    send_batches();
                    let now = rounds.load(Ordering::Relaxed);
                    if now != seen {
                        // The PE progresses by itself. While it begins batches of puts, naps
                        // are short; a long one ends early when a batch is begun.
                        seen = now;
                        let begun = BATCHES_BEGUN.load(Ordering::Relaxed);
                        let this_nap = if begun != begun_seen {
                            nap.min(BATCH_NAP)
                        } else {
                            nap
                        };
                        begun_seen = begun;
                        if this_nap > BATCH_NAP {
                            THREAD_NAPS_LONG.store(true, Ordering::SeqCst);
                            if !BATCHED.load(Ordering::SeqCst) {
                                // (A stale unpark ends it early: one look more.)
                                std::thread::park_timeout(this_nap);
                            }
                            THREAD_NAPS_LONG.store(false, Ordering::SeqCst);
                        } else {
                            std::thread::sleep(this_nap);
                        }
                        nap = (nap * 2).min(Self::MAX_NAP);
                        continue;
                    }
                    nap = Self::MIN_NAP;
                    while w.progress() != 0 {}
                    if event_wait {
                        THREAD_WAITS.store(true, Ordering::SeqCst);
                        // A batch begun just before the flag was up is not left for a nap.
                        let wait = if BATCHED.load(Ordering::SeqCst) {
                            BATCH_NAP
                        } else {
                            Self::MAX_NAP
                        };
                        let r = w.wait_for_events(wait);
                        THREAD_WAITS.store(false, Ordering::Release);
                        if let Err(e) = r {
                            crate::error::eprint_line(format_args!(
                                "shmem: progress thread: {e}; polling instead"
                            ));
                            event_wait = false;
                        }
                    } else {
                        std::thread::sleep(Self::MIN_NAP);
                    }
                }
            })
            .map_err(|e| Error::Bootstrap(format!("cannot start the progress thread: {e}")))?;
        Ok(ProgressThread {
            stop,
            worker,
            handle,
        })
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Release);
        // A failed signal only delays the exit by the thread's short wait.
        let _ = self.worker.signal();
        self.handle.thread().unpark();
        let _ = self.handle.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_period_grows_with_the_pes_per_cpu_within_its_bounds() {
        assert_eq!(oversubscribed_period(2, 2), None);
        assert_eq!(oversubscribed_period(128, 128), None);
        assert_eq!(oversubscribed_period(3, 2), Some(PERIOD_MIN));
        assert_eq!(oversubscribed_period(16, 2), Some(Duration::from_millis(8)));
        assert_eq!(
            oversubscribed_period(64, 2),
            Some(Duration::from_millis(32))
        );
        assert_eq!(
            oversubscribed_period(65, 2),
            Some(Duration::from_millis(33))
        );
        assert_eq!(oversubscribed_period(1000, 2), Some(PERIOD_MAX));
        assert_eq!(oversubscribed_period(4, 0), Some(PERIOD_MIN));
    }
}
