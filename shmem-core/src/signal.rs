//! Signals (`shmem_put_signal`, `shmem_signal_fetch`, `shmem_signal_wait_until`) and waiting on
//! local symmetric memory (`shmem_wait_until`, `shmem_test`).
//!
//! A signal is a `u64` in symmetric memory. `put_signal` delivers the data, then updates the
//! signal word on the same PE (set or add), so a consumer that sees the signal sees the data.

use crate::amo::AmoWord;
use crate::rma::SymmetricArray;
use crate::runtime::{Runtime, runtime};
use crate::statics::Symmetric;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

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
    offset: usize,
    _obj: PhantomData<&'a ()>,
}

impl Signal<'_> {
    /// Heap offset of the signal word.
    #[inline]
    pub(crate) fn heap_offset(self) -> usize {
        self.offset
    }

    #[inline]
    fn word(self, rt: &Runtime) -> &AtomicU64 {
        // SAFETY: the offset is that of an 8-byte aligned u64 in this PE's heap; other PEs update
        // it atomically.
        unsafe { AtomicU64::from_ptr(rt.local(self.offset).cast()) }
    }

    /// `shmem_signal_fetch`: this PE's signal value.
    #[inline]
    pub fn fetch(self) -> u64 {
        self.word(runtime()).load(Ordering::Acquire)
    }

    /// `shmem_signal_wait_until`: waits until this PE's signal satisfies `cmp value`; returns
    /// the signal's value then. Everything put before the signal update is visible.
    pub fn wait_until(self, cmp: Cmp, value: u64) -> u64 {
        let rt = runtime();
        let word = self.word(rt);
        let mut seen = 0;
        rt.wait_local(|| {
            seen = word.load(Ordering::Acquire);
            cmp.holds(seen, value)
        });
        seen
    }

    /// Sets this PE's own signal word (to reset it between rounds).
    #[inline]
    pub fn set_local(self, value: u64) {
        self.word(runtime()).store(value, Ordering::Release);
    }
}

impl Symmetric<u64> {
    /// This static as a signal word for `put_signal`.
    #[inline]
    #[track_caller]
    pub fn signal(&self) -> Signal<'_> {
        Signal {
            offset: self.heap_offset(),
            _obj: PhantomData,
        }
    }
}

/// `u64` arrays whose elements can be signal words.
pub trait SignalArray: SymmetricArray<u64> {
    /// Element `index` as a signal word for `put_signal`. Checks the index.
    #[inline]
    #[track_caller]
    fn signal(&self, index: usize) -> Signal<'_> {
        if index >= self.len() {
            panic!(
                "shmem: signal: index {index} is outside the symmetric object of length {}",
                self.len()
            );
        }
        Signal {
            offset: self.__heap_offset() + index * 8,
            _obj: PhantomData,
        }
    }
}

impl<T: SymmetricArray<u64> + ?Sized> SignalArray for T {}

/// Atomically loads a local word of type `E`.
#[inline]
pub(crate) fn load_local<E: AmoWord>(p: *mut u8) -> E {
    let bits = match E::SIZE {
        // SAFETY: `p` is an aligned word of E's size in this PE's heap (checked by the caller).
        shmem_ucx::AtomicSize::U32 => {
            unsafe { AtomicU32::from_ptr(p.cast()) }.load(Ordering::Acquire) as u64
        }
        // SAFETY: as above.
        shmem_ucx::AtomicSize::U64 => {
            unsafe { AtomicU64::from_ptr(p.cast()) }.load(Ordering::Acquire)
        }
    };
    E::from_bits(bits)
}

/// Point-to-point synchronization on this PE's own copy of a symmetric array.
pub trait WaitArray<E: AmoWord + PartialOrd>: SymmetricArray<E> {
    /// `shmem_wait_until`: waits until element `index` of this PE's copy satisfies
    /// `cmp value`, and returns it.
    #[track_caller]
    fn wait_until(&self, index: usize, cmp: Cmp, value: E) -> E {
        let rt = runtime();
        if index >= self.len() {
            panic!(
                "shmem: wait_until: index {index} is outside the symmetric object of length {}",
                self.len()
            );
        }
        let p = rt.local(self.__heap_offset() + index * size_of::<E>());
        let mut seen = E::from_bits(0);
        rt.wait_local(|| {
            seen = load_local::<E>(p);
            cmp.holds(seen, value)
        });
        seen
    }

    /// `shmem_test`: whether element `index` of this PE's copy satisfies `cmp value` now.
    #[track_caller]
    fn test(&self, index: usize, cmp: Cmp, value: E) -> bool {
        let rt = runtime();
        if index >= self.len() {
            panic!(
                "shmem: test: index {index} is outside the symmetric object of length {}",
                self.len()
            );
        }
        rt.progress();
        cmp.holds(
            load_local::<E>(rt.local(self.__heap_offset() + index * size_of::<E>())),
            value,
        )
    }
}

impl<E: AmoWord + PartialOrd, T: SymmetricArray<E> + ?Sized> WaitArray<E> for T {}
