//! Symmetric views: an element range of a symmetric object (`A.slice(a..b)`), or a scalar
//! `#[symmetric]` static seen as a one-element array (`X.as_array()`), usable wherever a
//! symmetric object is expected — RMA, atomics, waits, signals, collectives, contexts. The C
//! programs' `&dest[k]` of a symmetric array.
//!
//! Part of the object layer; uses `object::statics`, `object::bounds`, `transport`.

use super::SymObject;
use super::bounds::resolve;
use super::sealed::Placed;
use super::statics::Symmetric;
use crate::element::Element;
use crate::transport::{Transport, transport};
use std::marker::PhantomData;
use std::ops::RangeBounds;

/// Elements `start .. start + len` of a symmetric object, itself a symmetric object: every PE
/// that makes the same view addresses the same elements. Borrows the object it was made from,
/// so it cannot outlive it (nor, for a heap array, the `World`).
///
/// ```
/// use shmem_core::prelude::*;
/// let world = shmem_core::init()?;
/// let me = world.my_pe();
/// let a = world.alloc::<u32>(10);
/// let tail = a.slice(6..);                 // elements 6, 7, 8, 9
/// tail.put(me, 1..3, &[5, 6]);             // writes a[7] and a[8]
/// world.quiet();
/// assert_eq!((a.local_get(7), a.local_get(8)), (5, 6));
/// assert_eq!(tail.len(), 4);
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub struct SymSlice<'a, E> {
    tp: &'static Transport,
    offset: usize,
    len: usize,
    _borrow: PhantomData<&'a E>,
}

impl<E> Clone for SymSlice<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for SymSlice<'_, E> {}

impl<E> std::fmt::Debug for SymSlice<'_, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SymSlice")
            .field("type", &std::any::type_name::<E>())
            .field("heap_offset", &self.offset)
            .field("len", &self.len)
            .finish()
    }
}

impl<E: Element> SymSlice<'_, E> {
    /// `len` elements at `offset` of the heap or data segment, which the caller checked.
    pub(crate) fn from_offset(tp: &'static Transport, offset: usize, len: usize) -> Self {
        SymSlice {
            tp,
            offset,
            len,
            _borrow: PhantomData,
        }
    }

    /// Elements `range` of `obj` (checked against its length).
    #[track_caller]
    pub(crate) fn of<'a, A, R>(obj: &'a A, range: R) -> SymSlice<'a, E>
    where
        A: SymObject<E> + ?Sized,
        R: RangeBounds<usize>,
    {
        let (start, len) = resolve(&range, obj.__len(), "slice");
        SymSlice {
            tp: obj.__transport(),
            offset: obj.__heap_offset() + start * size_of::<E>(),
            len,
            _borrow: PhantomData,
        }
    }
}

// Contract of `SymObject`: the view's elements are a checked range of an object that is
// reserved in the heap of `tp` for at least as long as the view's borrow of it.
impl<E: Element> Placed for SymSlice<'_, E> {
    #[inline]
    fn __heap_offset(&self) -> usize {
        self.offset
    }

    #[inline]
    fn __transport(&self) -> &'static Transport {
        self.tp
    }
}

impl<E: Element> SymObject<E> for SymSlice<'_, E> {
    #[inline]
    fn __len(&self) -> usize {
        self.len
    }
}

impl<T: Element> Symmetric<T> {
    /// This scalar static as a one-element symmetric array, for the calls that take one:
    /// `wait_until`/`test`, the wait sets, collectives, `Ctx::at`, `slice`.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static READY: u64 = 0;
    /// let world = shmem_core::init()?;
    /// READY.at(world.my_pe()).set(1);
    /// READY.as_array().wait_until(0, Cmp::Eq, 1);
    /// assert!(READY.as_array().test_all(None, Cmp::Eq, 1));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[track_caller]
    pub fn as_array(&'static self) -> SymSlice<'static, T> {
        SymSlice {
            tp: transport(),
            offset: self.heap_offset(),
            len: 1,
            _borrow: PhantomData,
        }
    }
}
