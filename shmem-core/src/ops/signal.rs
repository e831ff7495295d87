//! Signals (`shmem_put_signal`, `shmem_signal_fetch`, `shmem_signal_wait_until`): the signal
//! word, how `put_signal` updates it, and the comparisons of the waits.
//!
//! A signal is a `u64` in symmetric memory. `put_signal` delivers the data, then updates the
//! signal word on the same PE (set or add), so a consumer that sees the signal sees the data.
//!
//! Part of the operations layer; uses `object` and `transport` only (the arrays whose elements
//! are signal words, [`SignalArray`](crate::SignalArray), come with the waits in `ops::wait`).

use crate::object::statics::Symmetric;
use crate::transport::{Transport, transport};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

/// How `put_signal` updates the signal word (`SHMEM_SIGNAL_SET`, `SHMEM_SIGNAL_ADD`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignalOp {
    /// Store the value.
    Set(u64),
    /// Add the value (wrapping).
    Add(u64),
}

/// Comparison for `wait_until` and `test` (`SHMEM_CMP_EQ`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// Equal.
    Eq,
    /// Not equal.
    Ne,
    /// Greater than.
    Gt,
    /// Greater than or equal.
    Ge,
    /// Less than.
    Lt,
    /// Less than or equal.
    Le,
}

impl Cmp {
    /// Whether `a CMP b` holds.
    #[inline]
    pub fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
        }
    }
}

/// A `u64` signal word in symmetric memory: a `#[symmetric] static S: u64` (`S.signal()`) or an
/// element of a `u64` array (`A.signal(i)`).
///
/// ```
/// use shmem_core::prelude::*;
///
/// #[symmetric]
/// static READY: u64 = 0;
/// #[symmetric]
/// static DATA: [f64; 4] = [0.0; 4];
///
/// let world = shmem_core::init()?;
/// let (me, n) = (world.my_pe(), world.n_pes());
/// // Each PE sends its row to the right neighbour and raises the neighbour's READY by one.
/// DATA.put_signal((me + 1) % n, .., &[me as f64; 4], READY.signal(), SignalOp::Add(1));
/// READY.signal().wait_until(Cmp::Ge, 1);   // the data from the left has arrived
/// assert_eq!(DATA.local_get(0), ((me + n - 1) % n) as f64);
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Signal<'a> {
    tp: &'static Transport,
    offset: usize,
    _obj: PhantomData<&'a ()>,
}

impl<'a> Signal<'a> {
    /// The signal word at `offset` (checked by the caller: an 8-byte aligned `u64` of a
    /// symmetric object that lives at least as long as `'a`).
    #[inline]
    pub(crate) fn at_offset(tp: &'static Transport, offset: usize) -> Signal<'a> {
        Signal {
            tp,
            offset,
            _obj: PhantomData,
        }
    }
}

impl Signal<'_> {
    /// Heap offset of the signal word.
    #[inline]
    pub(crate) fn heap_offset(self) -> usize {
        self.offset
    }

    /// The transport this signal's object lives in.
    #[inline]
    pub(crate) fn transport(self) -> &'static Transport {
        self.tp
    }

    /// The signal word in this PE's heap (8-byte aligned; other PEs update it atomically).
    #[inline]
    #[track_caller]
    fn word(self) -> &'static AtomicU64 {
        self.tp.local_word(self.offset)
    }

    /// `shmem_signal_fetch`: this PE's signal value.
    #[doc(alias = "shmem_signal_fetch")]
    #[inline]
    pub fn fetch(self) -> u64 {
        let word = self.word();
        // A loop polling the signal drives UCX (signals over tcp need this PE's progress).
        self.tp.progress();
        word.load(Ordering::Acquire)
    }

    /// `shmem_signal_wait_until`: waits until this PE's signal satisfies `cmp value`; returns
    /// the signal's value then. Everything put before the signal update is visible.
    #[doc(alias = "shmem_signal_wait_until")]
    pub fn wait_until(self, cmp: Cmp, value: u64) -> u64 {
        let word = self.word();
        let mut seen = 0;
        self.tp.wait_local(|| {
            seen = word.load(Ordering::Acquire);
            cmp.holds(seen, value)
        });
        seen
    }

    /// Sets this PE's own signal word (to reset it between rounds).
    #[inline]
    pub fn set_local(self, value: u64) {
        self.word().store(value, Ordering::Release);
    }
}

impl Symmetric<u64> {
    /// This static as a signal word for `put_signal`.
    #[inline]
    #[track_caller]
    pub fn signal(&self) -> Signal<'_> {
        Signal {
            tp: transport(),
            offset: self.heap_offset(),
            _obj: PhantomData,
        }
    }
}
