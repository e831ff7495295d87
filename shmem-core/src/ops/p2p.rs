//! OpenSHMEM 1.5/1.6 point-to-point synchronization on sets of words: `wait_until_all`,
//! `_any`, `_some` and their `_vector` forms, the matching `test_*` calls, remote signal updates
//! (`shmem_signal_add`, `shmem_signal_set`) and `shmem_pe_quiet`.
//!
//! The C `status` array (non-zero = leave this element out) is an `Option<&[bool]>` here:
//! `Some(mask)` with `mask[i] == true` excludes element `i`; `None` includes every element.
//!
//! Part of the operations layer; uses `ops::rma`, `ops::signal`, `ops::wait`, `transport`.

use super::rma::SymmetricArray;
use super::signal::{Cmp, Signal};
use super::wait::{WaitWord, load_local};
use crate::transport::{Peer, Transport};
use std::sync::atomic::{AtomicU64, Ordering};

/// The checked inputs of one wait or test: which elements take part and what each is compared
/// with.
struct Set<'v, E> {
    tp: &'static Transport,
    base: usize,
    len: usize,
    ignore: Option<&'v [bool]>,
    cmp: Cmp,
    values: Values<'v, E>,
}

#[derive(Clone, Copy)]
enum Values<'v, E> {
    One(E),
    Each(&'v [E]),
}

impl<'v, E: WaitWord> Set<'v, E> {
    #[track_caller]
    fn new<A: SymmetricArray<E> + ?Sized>(
        arr: &A,
        op: &str,
        ignore: Option<&'v [bool]>,
        cmp: Cmp,
        values: Values<'v, E>,
    ) -> Self {
        let len = arr.len();
        if let Some(m) = ignore
            && m.len() != len
        {
            panic!(
                "shmem: {op}: the ignore mask has {} entries but the symmetric object has {len} \
                     elements; lengths must match",
                m.len()
            );
        }
        if let Values::Each(v) = values
            && v.len() != len
        {
            panic!(
                "shmem: {op}: {} comparison values for a symmetric object of {len} elements; \
                     lengths must match",
                v.len()
            );
        }
        Set {
            tp: arr.__transport(),
            base: arr.__heap_offset(),
            len,
            ignore,
            cmp,
            values,
        }
    }

    #[inline]
    fn active(&self, i: usize) -> bool {
        self.ignore.is_none_or(|m| !m[i])
    }

    /// Whether element `i` satisfies its comparison now.
    #[inline]
    fn holds(&self, i: usize) -> bool {
        let p = self.tp.local(self.base + i * size_of::<E>());
        // SAFETY: `i < len` (callers iterate `0..len`), an aligned AMO word of the array.
        let v = unsafe { load_local::<E>(p) };
        let want = match self.values {
            Values::One(x) => x,
            Values::Each(xs) => xs[i],
        };
        self.cmp.holds(v, want)
    }

    fn any_active(&self) -> bool {
        (0..self.len).any(|i| self.active(i))
    }

    /// The first included element that satisfies its comparison now.
    fn first(&self) -> Option<usize> {
        (0..self.len).find(|&i| self.active(i) && self.holds(i))
    }

    /// Every included element that satisfies its comparison now, in increasing order.
    fn satisfied(&self) -> Vec<usize> {
        (0..self.len)
            .filter(|&i| self.active(i) && self.holds(i))
            .collect()
    }

    fn wait_all(&self) {
        // Each element must be seen satisfying its comparison; once seen it is not re-read.
        let mut pending: Vec<usize> = (0..self.len).filter(|&i| self.active(i)).collect();
        self.tp.wait_local(|| {
            pending.retain(|&i| !self.holds(i));
            pending.is_empty()
        });
    }

    fn test_all(&self) -> bool {
        self.tp.progress();
        (0..self.len).all(|i| !self.active(i) || self.holds(i))
    }

    fn wait_any(&self) -> Option<usize> {
        if !self.any_active() {
            return None;
        }
        let mut found = None;
        self.tp.wait_local(|| {
            found = self.first();
            found.is_some()
        });
        found
    }

    fn test_any(&self) -> Option<usize> {
        self.tp.progress();
        self.first()
    }

    fn wait_some(&self) -> Vec<usize> {
        if !self.any_active() {
            return Vec::new();
        }
        let mut found = Vec::new();
        self.tp.wait_local(|| {
            found = self.satisfied();
            !found.is_empty()
        });
        found
    }

    fn test_some(&self) -> Vec<usize> {
        self.tp.progress();
        self.satisfied()
    }
}

/// Waiting for and testing several elements of this PE's own copy of a symmetric array at once
/// (OpenSHMEM 1.5 `shmem_wait_until_{all,any,some}[_vector]`, `shmem_test_{all,any,some}[_vector]`).
/// Implemented for every symmetric array of an AMO word type.
///
/// `ignore` is the C `status` array: `Some(mask)` leaves out every element `i` with
/// `mask[i] == true` (its length must be the array's); `None` includes all. The `_vector` forms
/// compare element `i` with `values[i]` instead of one value. Waits back off and keep UCX
/// progressing; everything written to this PE before the elements were updated (and ordered by
/// a fence or quiet before the update) is visible when they return.
///
/// ```
/// use shmem_core::prelude::*;
///
/// let world = shmem_core::init()?;
/// let (me, n) = (world.my_pe(), world.n_pes());
/// let arrived = world.alloc::<u64>(n);
/// // Every PE flags its arrival in slot `me` on PE 0.
/// arrived.at(0, me).set(1);
/// if me == 0 {
///     arrived.wait_until_all(None, Cmp::Eq, 1);
///     assert_eq!(arrived.test_some(None, Cmp::Eq, 1), (0..n).collect::<Vec<_>>());
/// }
/// world.barrier_all();
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub trait WaitSet<E: WaitWord>: SymmetricArray<E> {
    /// `shmem_wait_until_all`: waits until every included element has satisfied `cmp value`.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<i32>(3);
    /// a.local_set(0, 5);
    /// a.local_set(2, 5);
    /// a.wait_until_all(Some(&[false, true, false]), Cmp::Eq, 5);   // element 1 left out
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_wait_until_all")]
    #[track_caller]
    fn wait_until_all(&self, ignore: Option<&[bool]>, cmp: Cmp, value: E) {
        Set::new(self, "wait_until_all", ignore, cmp, Values::One(value)).wait_all()
    }

    /// `shmem_wait_until_any`: waits until some included element satisfies `cmp value` and
    /// returns its index (the lowest such index when several do); `None` at once when no element
    /// is included.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u64>(4);
    /// a.local_set(2, 9);
    /// assert_eq!(a.wait_until_any(None, Cmp::Ne, 0), Some(2));
    /// assert_eq!(a.wait_until_any(Some(&[true; 4]), Cmp::Ne, 0), None);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_wait_until_any")]
    #[track_caller]
    fn wait_until_any(&self, ignore: Option<&[bool]>, cmp: Cmp, value: E) -> Option<usize> {
        Set::new(self, "wait_until_any", ignore, cmp, Values::One(value)).wait_any()
    }

    /// `shmem_wait_until_some`: waits until at least one included element satisfies
    /// `cmp value` and returns the indices of all that do then, in increasing order (empty at
    /// once when no element is included).
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(4);
    /// a.local_set(1, 3);
    /// a.local_set(3, 4);
    /// assert_eq!(a.wait_until_some(None, Cmp::Ge, 3), vec![1, 3]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_wait_until_some")]
    #[track_caller]
    fn wait_until_some(&self, ignore: Option<&[bool]>, cmp: Cmp, value: E) -> Vec<usize> {
        Set::new(self, "wait_until_some", ignore, cmp, Values::One(value)).wait_some()
    }

    /// `shmem_wait_until_all_vector`: waits until every included element `i` has satisfied
    /// `cmp values[i]`.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<i64>(2);
    /// a.local_set(0, 1);
    /// a.local_set(1, 2);
    /// a.wait_until_all_vector(None, Cmp::Eq, &[1, 2]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_wait_until_all_vector")]
    #[track_caller]
    fn wait_until_all_vector(&self, ignore: Option<&[bool]>, cmp: Cmp, values: &[E]) {
        Set::new(
            self,
            "wait_until_all_vector",
            ignore,
            cmp,
            Values::Each(values),
        )
        .wait_all()
    }

    /// `shmem_wait_until_any_vector`: as [`wait_until_any`](Self::wait_until_any), comparing
    /// element `i` with `values[i]`.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<i64>(3);
    /// a.local_set(1, 7);
    /// assert_eq!(a.wait_until_any_vector(None, Cmp::Eq, &[1, 7, 1]), Some(1));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_wait_until_any_vector")]
    #[track_caller]
    fn wait_until_any_vector(
        &self,
        ignore: Option<&[bool]>,
        cmp: Cmp,
        values: &[E],
    ) -> Option<usize> {
        Set::new(
            self,
            "wait_until_any_vector",
            ignore,
            cmp,
            Values::Each(values),
        )
        .wait_any()
    }

    /// `shmem_wait_until_some_vector`: as [`wait_until_some`](Self::wait_until_some), comparing
    /// element `i` with `values[i]`.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u64>(3);
    /// a.local_set(0, 4);
    /// a.local_set(2, 6);
    /// assert_eq!(a.wait_until_some_vector(None, Cmp::Ge, &[4, 1, 5]), vec![0, 2]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_wait_until_some_vector")]
    #[track_caller]
    fn wait_until_some_vector(
        &self,
        ignore: Option<&[bool]>,
        cmp: Cmp,
        values: &[E],
    ) -> Vec<usize> {
        Set::new(
            self,
            "wait_until_some_vector",
            ignore,
            cmp,
            Values::Each(values),
        )
        .wait_some()
    }

    /// `shmem_test_all`: whether every included element satisfies `cmp value` now (true when
    /// none is included).
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(2);
    /// assert!(a.test_all(None, Cmp::Eq, 0));
    /// a.local_set(1, 1);
    /// assert!(!a.test_all(None, Cmp::Eq, 0));
    /// assert!(a.test_all(Some(&[false, true]), Cmp::Eq, 0));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_test_all")]
    #[track_caller]
    fn test_all(&self, ignore: Option<&[bool]>, cmp: Cmp, value: E) -> bool {
        Set::new(self, "test_all", ignore, cmp, Values::One(value)).test_all()
    }

    /// `shmem_test_any`: the lowest index of an included element that satisfies `cmp value`
    /// now, if any.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(3);
    /// assert_eq!(a.test_any(None, Cmp::Gt, 0), None);
    /// a.local_set(2, 1);
    /// assert_eq!(a.test_any(None, Cmp::Gt, 0), Some(2));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_test_any")]
    #[track_caller]
    fn test_any(&self, ignore: Option<&[bool]>, cmp: Cmp, value: E) -> Option<usize> {
        Set::new(self, "test_any", ignore, cmp, Values::One(value)).test_any()
    }

    /// `shmem_test_some`: the indices of the included elements that satisfy `cmp value` now, in
    /// increasing order.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(3);
    /// a.local_set(0, 1);
    /// a.local_set(2, 1);
    /// assert_eq!(a.test_some(None, Cmp::Eq, 1), vec![0, 2]);
    /// assert_eq!(a.test_some(Some(&[true, false, false]), Cmp::Eq, 1), vec![2]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_test_some")]
    #[track_caller]
    fn test_some(&self, ignore: Option<&[bool]>, cmp: Cmp, value: E) -> Vec<usize> {
        Set::new(self, "test_some", ignore, cmp, Values::One(value)).test_some()
    }

    /// `shmem_test_all_vector`: [`test_all`](Self::test_all) comparing element `i` with
    /// `values[i]`.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(2);
    /// a.local_set(1, 5);
    /// assert!(a.test_all_vector(None, Cmp::Eq, &[0, 5]));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_test_all_vector")]
    #[track_caller]
    fn test_all_vector(&self, ignore: Option<&[bool]>, cmp: Cmp, values: &[E]) -> bool {
        Set::new(self, "test_all_vector", ignore, cmp, Values::Each(values)).test_all()
    }

    /// `shmem_test_any_vector`: [`test_any`](Self::test_any) comparing element `i` with
    /// `values[i]`.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(2);
    /// assert_eq!(a.test_any_vector(None, Cmp::Eq, &[1, 0]), Some(1));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_test_any_vector")]
    #[track_caller]
    fn test_any_vector(&self, ignore: Option<&[bool]>, cmp: Cmp, values: &[E]) -> Option<usize> {
        Set::new(self, "test_any_vector", ignore, cmp, Values::Each(values)).test_any()
    }

    /// `shmem_test_some_vector`: [`test_some`](Self::test_some) comparing element `i` with
    /// `values[i]`.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(3);
    /// a.local_set(0, 2);
    /// assert_eq!(a.test_some_vector(None, Cmp::Lt, &[3, 0, 1]), vec![0, 2]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_test_some_vector")]
    #[track_caller]
    fn test_some_vector(&self, ignore: Option<&[bool]>, cmp: Cmp, values: &[E]) -> Vec<usize> {
        Set::new(self, "test_some_vector", ignore, cmp, Values::Each(values)).test_some()
    }
}

impl<E: WaitWord, T: SymmetricArray<E> + ?Sized> WaitSet<E> for T {}

impl Signal<'_> {
    /// `shmem_signal_add` (OpenSHMEM 1.6): atomically adds `value` (wrapping) to this signal on
    /// PE `pe`. Unordered with respect to puts (use [`World::pe_quiet`] or a put-with-signal for
    /// that).
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static HITS: u64 = 0;
    /// let world = shmem_core::init()?;
    /// HITS.signal().add(0, 1);
    /// if world.my_pe() == 0 {
    ///     HITS.signal().wait_until(Cmp::Eq, world.n_pes() as u64);
    /// }
    /// # world.barrier_all();
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    ///
    /// [`World::pe_quiet`]: crate::World::pe_quiet
    #[doc(alias = "shmem_signal_add")]
    #[track_caller]
    pub fn add(self, pe: usize, value: u64) {
        self.remote_update(pe, true, value)
    }

    /// `shmem_signal_set` (OpenSHMEM 1.6): atomically writes `value` into this signal on PE
    /// `pe`. Unordered with respect to puts, as [`add`](Self::add).
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static GO: u64 = 0;
    /// let world = shmem_core::init()?;
    /// let right = (world.my_pe() + 1) % world.n_pes();
    /// GO.signal().set(right, 3);
    /// assert_eq!(GO.signal().wait_until(Cmp::Eq, 3), 3);
    /// # world.barrier_all();
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_signal_set")]
    #[track_caller]
    pub fn set(self, pe: usize, value: u64) {
        self.remote_update(pe, false, value)
    }

    #[track_caller]
    fn remote_update(self, pe: usize, add: bool, value: u64) {
        let tp = self.transport();
        self.remote_update_via(tp.peer(pe), add, value);
    }

    /// [`add`](Self::add) (`add`) or [`set`](Self::set) through `peer` (the runtime's own, or a
    /// context's).
    #[track_caller]
    pub(crate) fn remote_update_via(self, peer: &Peer, add: bool, value: u64) {
        let tp = self.transport();
        let offset = self.heap_offset();
        if tp.is_direct(peer) {
            // SAFETY: a signal is an 8-byte aligned u64 of a symmetric object, inside the peer's
            // mapped heap; other PEs access it atomically.
            let word = unsafe { AtomicU64::from_ptr(tp.direct_ptr(peer, offset).cast()) };
            if add {
                word.fetch_add(value, Ordering::SeqCst);
            } else {
                word.store(value, Ordering::SeqCst);
            }
        } else {
            use shmem_ucx::{AtomicOp, AtomicSize};
            let op = if add { AtomicOp::Add } else { AtomicOp::Swap };
            tp.ucx_amo(peer, offset, AtomicSize::U64, (op, false), (value, 0));
        }
    }
}

/// `shmem_pe_quiet` (OpenSHMEM 1.6): completes every put, get and non-blocking operation this PE
/// issued to the PEs in `pes`. Panics if a PE is out of range.
#[track_caller]
pub(crate) fn pe_quiet(tp: &Transport, pes: &[usize]) {
    for &pe in pes {
        tp.flush_peer(tp.peer(pe));
    }
    // Direct stores become visible in program order once fenced.
    std::sync::atomic::fence(Ordering::SeqCst);
}
