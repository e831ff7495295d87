//! Signals (`shmem_put_signal`, `shmem_signal_fetch`, `shmem_signal_wait_until`) and waiting on
//! local symmetric memory (`shmem_wait_until`, `shmem_test`).
//!
//! A signal is a `u64` in symmetric memory. `put_signal` delivers the data, then updates the
//! signal word on the same PE (set or add), so a consumer that sees the signal sees the data.

use crate::rma::SymmetricArray;
use crate::runtime::runtime;
use crate::statics::Symmetric;
use crate::transport::Transport;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering};

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
    rt: &'static Transport,
    offset: usize,
    _obj: PhantomData<&'a ()>,
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
        self.rt
    }

    /// The signal word in this PE's heap (8-byte aligned; other PEs update it atomically).
    #[inline]
    #[track_caller]
    fn word(self) -> &'static AtomicU64 {
        self.rt.local_word(self.offset)
    }

    /// `shmem_signal_fetch`: this PE's signal value.
    #[doc(alias = "shmem_signal_fetch")]
    #[inline]
    pub fn fetch(self) -> u64 {
        let word = self.word();
        // A loop polling the signal drives UCX (signals over tcp need this PE's progress).
        self.rt.progress();
        word.load(Ordering::Acquire)
    }

    /// `shmem_signal_wait_until`: waits until this PE's signal satisfies `cmp value`; returns
    /// the signal's value then. Everything put before the signal update is visible.
    #[doc(alias = "shmem_signal_wait_until")]
    pub fn wait_until(self, cmp: Cmp, value: u64) -> u64 {
        let word = self.word();
        let mut seen = 0;
        self.rt.wait_local(|| {
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
            rt: runtime(),
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
        crate::rma::check_index("signal", index, self.len());
        Signal {
            rt: self.__runtime(),
            offset: self.__heap_offset() + index * 8,
            _obj: PhantomData,
        }
    }
}

impl<T: SymmetricArray<u64> + ?Sized> SignalArray for T {}

mod sealed {
    pub trait Sealed {}
}

/// An element type that point-to-point synchronization (`wait_until`, `test`, the wait sets)
/// can load atomically: OpenSHMEM's point-to-point types, the 16-, 32- and 64-bit integers
/// (`short`, `int`, `long`, `long long`, their unsigned forms, `size_t`, `ptrdiff_t`), and
/// `f32`/`f64`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be waited on: OpenSHMEM's wait_until and test take 16-, 32- and \
               64-bit integers",
    label = "no wait_until/test for `{Self}`",
    note = "wait_until and test exist for i16, u16, i32, u32, i64, u64, isize, usize, f32 and f64"
)]
pub trait WaitWord: crate::element::Element + PartialOrd + sealed::Sealed {
    /// Atomically loads the value at `p` (acquire).
    ///
    /// # Safety
    /// `p` is an aligned element of this type in this PE's mapped heap, which other PEs and
    /// threads access only atomically or by explicit copies.
    #[doc(hidden)]
    unsafe fn __load_acquire(p: *mut u8) -> Self;
}

macro_rules! wait_words {
    ($($t:ty => $atomic:ty, $bits:ty;)*) => {$(
        impl sealed::Sealed for $t {}
        impl WaitWord for $t {
            #[inline]
            unsafe fn __load_acquire(p: *mut u8) -> Self {
                // SAFETY: per the caller: aligned, inside the mapping, accessed atomically.
                let a = unsafe { <$atomic>::from_ptr(p.cast()) };
                <$t>::from_ne_bytes(<$bits>::to_ne_bytes(a.load(Ordering::Acquire)))
            }
        }
    )*};
}

wait_words! {
    i16 => AtomicU16, u16;
    u16 => AtomicU16, u16;
    i32 => AtomicU32, u32;
    u32 => AtomicU32, u32;
    f32 => AtomicU32, u32;
    i64 => AtomicU64, u64;
    u64 => AtomicU64, u64;
    isize => AtomicU64, u64;
    usize => AtomicU64, u64;
    f64 => AtomicU64, u64;
}

/// Atomically loads a local word of type `E` (acquire).
///
/// # Safety
/// As [`WaitWord::__load_acquire`].
#[inline]
pub(crate) unsafe fn load_local<E: WaitWord>(p: *mut u8) -> E {
    // SAFETY: forwarded contract.
    unsafe { E::__load_acquire(p) }
}

/// Point-to-point synchronization on this PE's own copy of a symmetric array.
pub trait WaitArray<E: WaitWord>: SymmetricArray<E> {
    /// `shmem_wait_until`: waits until element `index` of this PE's copy satisfies
    /// `cmp value`, and returns it.
    #[doc(alias = "shmem_wait_until")]
    #[track_caller]
    fn wait_until(&self, index: usize, cmp: Cmp, value: E) -> E {
        let rt = self.__runtime();
        crate::rma::check_index("wait_until", index, self.len());
        let p = rt.local(self.__heap_offset() + index * size_of::<E>());
        let mut seen = E::new_zeroed();
        rt.wait_local(|| {
            // SAFETY: element `index` (checked) of a symmetric array of AMO words, aligned.
            seen = unsafe { load_local::<E>(p) };
            cmp.holds(seen, value)
        });
        seen
    }

    /// `shmem_test`: whether element `index` of this PE's copy satisfies `cmp value` now.
    #[doc(alias = "shmem_test")]
    #[track_caller]
    fn test(&self, index: usize, cmp: Cmp, value: E) -> bool {
        let rt = self.__runtime();
        crate::rma::check_index("test", index, self.len());
        rt.progress();
        let p = rt.local(self.__heap_offset() + index * size_of::<E>());
        // SAFETY: element `index` (checked) of a symmetric array of AMO words, aligned.
        cmp.holds(unsafe { load_local::<E>(p) }, value)
    }
}

impl<E: WaitWord, T: SymmetricArray<E> + ?Sized> WaitArray<E> for T {}
