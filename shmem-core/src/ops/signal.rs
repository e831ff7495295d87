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
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// #[symmetric]
/// static MSG: [u32; 2] = [0; 2];
/// #[symmetric]
/// static SIG: u64 = 0;
/// let world = shmem_core::init()?;
/// let me = world.my_pe();
/// MSG.put_signal(me, .., &[1, 2], SIG.signal(), SignalOp::Set(10)); // the signal becomes 10
/// MSG.put_signal(me, .., &[3, 4], SIG.signal(), SignalOp::Add(5));  // then 15
/// assert_eq!(SIG.signal().wait_until(Cmp::Eq, 15), 15);
/// assert_eq!(MSG.local_get(1), 4);
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignalOp {
    /// Store the value.
    Set(u64),
    /// Add the value (wrapping).
    Add(u64),
}

/// Comparison for `wait_until` and `test` (`SHMEM_CMP_EQ`, ...).
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// #[symmetric]
/// static LEVEL: [i32; 1] = [5; 1];
/// let world = shmem_core::init()?;
/// assert!(LEVEL.test(0, Cmp::Gt, 4));
/// assert!(LEVEL.test(0, Cmp::Le, 5));
/// assert!(!LEVEL.test(0, Cmp::Ne, 5));
/// # Ok::<(), shmem_core::Error>(())
/// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::Cmp;
    /// assert!(Cmp::Ge.holds(3, 3));
    /// assert!(Cmp::Lt.holds(2.5, 3.0));
    /// assert!(!Cmp::Eq.holds(1u64, 2));
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static PROGRESS: u64 = 0;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// PROGRESS.signal().add(me, 3); // shmem_signal_add on this PE
    /// world.quiet();
    /// assert_eq!(PROGRESS.signal().fetch(), 3);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static TOKENS: u64 = 0;
    /// let world = shmem_core::init()?;
    /// let n = world.n_pes();
    /// // Every PE adds one to every PE's signal; each then waits for all n.
    /// for pe in 0..n {
    ///     TOKENS.signal().add(pe, 1);
    /// }
    /// let seen = TOKENS.signal().wait_until(Cmp::Ge, n as u64);
    /// assert_eq!(seen, n as u64);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static ROUND: u64 = 0;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// ROUND.signal().set(me, 1);
    /// ROUND.signal().wait_until(Cmp::Eq, 1);
    /// ROUND.signal().set_local(0); // ready for the next round
    /// assert_eq!(ROUND.signal().fetch(), 0);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline]
    pub fn set_local(self, value: u64) {
        self.word().store(value, Ordering::Release);
    }
}

impl Symmetric<u64> {
    /// This static as a signal word for `put_signal`.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static PAYLOAD: [f64; 2] = [0.0; 2];
    /// #[symmetric]
    /// static ARRIVED: u64 = 0;
    /// let world = shmem_core::init()?;
    /// let (me, n) = (world.my_pe(), world.n_pes());
    /// PAYLOAD.put_signal((me + 1) % n, .., &[1.0, 2.0], ARRIVED.signal(), SignalOp::Set(1));
    /// ARRIVED.signal().wait_until(Cmp::Eq, 1);
    /// assert_eq!(PAYLOAD.local_get(1), 2.0);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
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
