//! Waiting on this PE's own symmetric memory (`shmem_wait_until`, `shmem_test`), the element
//! types that can be waited on, and the `u64` arrays whose elements can be signal words.
//!
//! Part of the operations layer; uses `ops::rma` (the traits here extend
//! [`SymmetricArray`]), `ops::signal`, `object` and `transport`.

use super::rma::SymmetricArray;
use super::signal::{Cmp, Signal};
use crate::object::bounds::check_index;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering};

/// `u64` arrays whose elements can be signal words.
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// let world = shmem_core::init()?;
/// let (me, n) = (world.my_pe(), world.n_pes());
/// // One signal word per sender, on the heap.
/// let flags = world.alloc::<u64>(n);
/// let data = world.alloc::<u32>(n);
/// data.put_signal((me + 1) % n, me..me + 1, &[me as u32], flags.signal(me), SignalOp::Set(1));
/// let left = (me + n - 1) % n;
/// flags.signal(left).wait_until(Cmp::Eq, 1);
/// assert_eq!(data.local_get(left), left as u32);
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub trait SignalArray: SymmetricArray<u64> {
    /// Element `index` as a signal word for `put_signal`. Checks the index.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static LANES: [u64; 4] = [0; 4];
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// LANES.signal(2).add(me, 7);
    /// world.quiet();
    /// assert_eq!(LANES.signal(2).fetch(), 7);
    /// assert_eq!(LANES.local_get(2), 7); // the same word
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline]
    #[track_caller]
    fn signal(&self, index: usize) -> Signal<'_> {
        check_index("signal", index, self.len());
        Signal::at_offset(self.__transport(), self.__heap_offset() + index * 8)
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
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// use shmem_core::WaitWord;
/// // Waits until element `i` of this PE's copy is at least `floor`, for any waitable type.
/// fn wait_at_least<E: WaitWord, A: WaitArray<E>>(a: &A, i: usize, floor: E) -> E {
///     a.wait_until(i, Cmp::Ge, floor)
/// }
/// #[symmetric]
/// static TEMPERATURE: [f32; 1] = [21.5; 1];
/// let world = shmem_core::init()?;
/// assert_eq!(wait_at_least(&TEMPERATURE, 0, 20.0), 21.5);
/// # Ok::<(), shmem_core::Error>(())
/// ```
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
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// #[symmetric]
/// static DONE: [i32; 1] = [0; 1];
/// let world = shmem_core::init()?;
/// let (me, n) = (world.my_pe(), world.n_pes());
/// DONE.at((me + 1) % n, 0).set(1); // tell the right neighbour
/// DONE.wait_until(0, Cmp::Eq, 1); // and hear from the left one
/// assert!(DONE.test(0, Cmp::Eq, 1));
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub trait WaitArray<E: WaitWord>: SymmetricArray<E> {
    /// `shmem_wait_until`: waits until element `index` of this PE's copy satisfies
    /// `cmp value`, and returns it.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let (me, n) = (world.my_pe(), world.n_pes());
    /// let mailbox = world.alloc::<u64>(1);
    /// mailbox.at((me + 1) % n, 0).set(me as u64 + 1);
    /// let got = mailbox.wait_until(0, Cmp::Ne, 0);
    /// assert_eq!(got, ((me + n - 1) % n) as u64 + 1);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_wait_until")]
    #[track_caller]
    fn wait_until(&self, index: usize, cmp: Cmp, value: E) -> E {
        let tp = self.__transport();
        check_index("wait_until", index, self.len());
        let p = tp.local(self.__heap_offset() + index * size_of::<E>());
        let mut seen = E::new_zeroed();
        tp.wait_local(|| {
            // SAFETY: element `index` (checked) of a symmetric array of AMO words, aligned.
            seen = unsafe { load_local::<E>(p) };
            cmp.holds(seen, value)
        });
        seen
    }

    /// `shmem_test`: whether element `index` of this PE's copy satisfies `cmp value` now.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static FLAG: [u16; 1] = [0; 1];
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// assert!(!FLAG.test(0, Cmp::Eq, 1)); // never waits
    /// FLAG.p(me, 0, 1);
    /// world.quiet();
    /// assert!(FLAG.test(0, Cmp::Eq, 1));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_test")]
    #[track_caller]
    fn test(&self, index: usize, cmp: Cmp, value: E) -> bool {
        let tp = self.__transport();
        check_index("test", index, self.len());
        tp.progress();
        let p = tp.local(self.__heap_offset() + index * size_of::<E>());
        // SAFETY: element `index` (checked) of a symmetric array of AMO words, aligned.
        cmp.holds(unsafe { load_local::<E>(p) }, value)
    }
}

impl<E: WaitWord, T: SymmetricArray<E> + ?Sized> WaitArray<E> for T {}
