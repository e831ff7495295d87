//! The fast path of a foreign layer, for atomics: [`Located::word`] makes the first located
//! element a [`LocatedWord`], whose AMOs are one CPU atomic on a mapped peer, by the type sets
//! of `ops::amo` ([`AmoWord`], [`AmoExtended`], [`AmoStandard`], [`AmoBitwise`]).

use super::located::Located;
use crate::ops::amo::{AmoBitwise, AmoExtended, AmoStandard, AmoWord};
use crate::transport::atomic::AmoOp;
use crate::transport::{Peer, Transport};
use std::marker::PhantomData;

// Named by the documentation only.
#[cfg(doc)]
use super::located::locate;
#[cfg(doc)]
use crate::ops::amo::Remote;

impl<E: AmoWord> Located<E> {
    /// The first element as the target of atomics, `None` when there is none or its address is
    /// not aligned for `E`: [`remote`](Self::remote) without its second look at the liveness
    /// and the range (`locate` checked them), the same atomic instructions.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u64>(2);
    /// let base = shmem_core::raw::local_addr(&a);
    /// // SAFETY: element 1 of `a`, which lives until the end of this example.
    /// let at = unsafe { shmem_core::raw::locate(base.wrapping_add(1), 1, world.my_pe()) };
    /// let word = at.and_then(|l| l.word()).expect("symmetric and aligned");
    /// word.add(5);
    /// assert_eq!((word.fetch_add(1), word.compare_swap(6, 9), word.swap(2)), (5, 6, 9));
    /// assert_eq!(a.local_get(1), 2);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn word(self) -> Option<LocatedWord<E>> {
        self.aligned_first().then_some(LocatedWord {
            tp: self.tp,
            peer: self.peer,
            offset: self.offset,
            mapped: self.mapped,
            _e: PhantomData,
        })
    }
}

/// One aligned element that [`locate`] found, as the target of atomics ([`Located::word`]):
/// the OpenSHMEM AMOs of the element's type, as [`Remote`] has them, with the default
/// context's completion (a non-fetching AMO on a peer reached through UCX is complete at the
/// next quiet of the runtime). On a mapped peer each is a round of progress (free unless some
/// peer is reached through UCX) and one CPU atomic, the one [`Remote`] uses.
///
/// # Examples
///
/// ```
/// use shmem_core::{SymmetricArray, raw};
/// let world = shmem_core::init()?;
/// let counters = world.alloc::<u64>(1);
/// // SAFETY: the element of `counters`, which lives until the end of this example.
/// let at = unsafe { raw::locate(raw::local_addr(&counters), 1, world.my_pe()) };
/// let word = at.and_then(|l| l.word()).expect("symmetric and aligned");
/// assert_eq!((word.fetch_inc(), word.fetch_inc()), (0, 1));
/// assert_eq!(counters.local_get(0), 2);
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub struct LocatedWord<E> {
    tp: &'static Transport,
    peer: &'static Peer,
    offset: usize,
    mapped: *mut u8,
    _e: PhantomData<*const E>,
}

impl<E> Clone for LocatedWord<E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for LocatedWord<E> {}

impl<E> std::fmt::Debug for LocatedWord<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocatedWord")
            .field("type", &std::any::type_name::<E>())
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

impl<E: AmoWord> LocatedWord<E> {
    /// Whether each AMO on the word is one CPU atomic and nothing else ([`Located::is_plain`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// // Inline when the AMO is one CPU atomic; a foreign layer sends the others out of line.
    /// let old = if word.is_plain() {
    ///     word.fetch_add(1)
    /// } else {
    ///     a.at(world.my_pe(), 0).fetch_add(1)
    /// };
    /// assert_eq!((old, word.fetch()), (0, 1));
    /// # use shmem_core::SymmetricArray;
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn is_plain(&self) -> bool {
        !self.mapped.is_null() && !self.tp.any_ucx()
    }

    /// One AMO on the word.
    #[inline(always)]
    fn amo(self, op: AmoOp, value: E, compare: E) -> E {
        let (v, c) = (value.to_bits(), compare.to_bits());
        // SAFETY: `locate` checked the liveness and that the word lies in the heap or the data
        // segment; `word` checked its alignment; `mapped` is its address here, or null.
        let old = unsafe {
            self.tp
                .atomic_at(self.peer, self.offset, self.mapped, E::SIZE, op, (v, c))
        };
        E::from_bits(old)
    }
}

impl<E: AmoExtended> LocatedWord<E> {
    /// `shmem_atomic_fetch` ([`Remote::fetch`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// # use shmem_core::SymmetricArray;
    /// a.local_set(0, 12);
    /// assert_eq!(word.fetch(), 12);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn fetch(self) -> E {
        self.amo(AmoOp::Fetch, E::from_bits(0), E::from_bits(0))
    }

    /// `shmem_atomic_set` ([`Remote::set`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// word.set(8);
    /// assert_eq!(word.fetch(), 8);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn set(self, value: E) {
        self.amo(AmoOp::Set, value, value);
    }

    /// `shmem_atomic_swap` ([`Remote::swap`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// word.set(1);
    /// assert_eq!(word.swap(2), 1);
    /// assert_eq!(word.fetch(), 2);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn swap(self, value: E) -> E {
        self.amo(AmoOp::Swap, value, value)
    }
}

impl<E: AmoStandard> LocatedWord<E> {
    /// `shmem_atomic_compare_swap` ([`Remote::compare_swap`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// assert_eq!(word.compare_swap(0, 5), 0); // was 0: now 5
    /// assert_eq!(word.compare_swap(0, 6), 5); // was not 0: unchanged
    /// assert_eq!(word.fetch(), 5);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn compare_swap(self, cond: E, value: E) -> E {
        self.amo(AmoOp::Cswap, value, cond)
    }

    /// `shmem_atomic_fetch_add` ([`Remote::fetch_add`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// assert_eq!(word.fetch_add(10), 0);
    /// assert_eq!(word.fetch_add(10), 10);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn fetch_add(self, value: E) -> E {
        self.amo(AmoOp::FetchAdd, value, value)
    }

    /// `shmem_atomic_add` ([`Remote::add`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// word.add(3);
    /// word.add(4);
    /// assert_eq!(word.fetch(), 7);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn add(self, value: E) {
        self.amo(AmoOp::Add, value, value);
    }

    /// `shmem_atomic_fetch_inc` ([`Remote::fetch_inc`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// assert_eq!((word.fetch_inc(), word.fetch_inc()), (0, 1));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn fetch_inc(self) -> E {
        self.fetch_add(E::from_bits(1))
    }

    /// `shmem_atomic_inc` ([`Remote::inc`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// word.inc();
    /// word.inc();
    /// assert_eq!(word.fetch(), 2);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn inc(self) {
        self.add(E::from_bits(1));
    }
}

impl<E: AmoBitwise> LocatedWord<E> {
    /// `shmem_atomic_fetch_and` ([`Remote::fetch_and`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// word.set(0b1100);
    /// assert_eq!(word.fetch_and(0b0110), 0b1100);
    /// assert_eq!(word.fetch(), 0b0100);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn fetch_and(self, value: E) -> E {
        self.amo(AmoOp::FetchAnd, value, value)
    }

    /// `shmem_atomic_and` ([`Remote::and`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// word.set(0xff);
    /// word.and(0x0f);
    /// assert_eq!(word.fetch(), 0x0f);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn and(self, value: E) {
        self.amo(AmoOp::And, value, value);
    }

    /// `shmem_atomic_fetch_or` ([`Remote::fetch_or`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// assert_eq!(word.fetch_or(0b01), 0);
    /// assert_eq!(word.fetch_or(0b10), 0b01);
    /// assert_eq!(word.fetch(), 0b11);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn fetch_or(self, value: E) -> E {
        self.amo(AmoOp::FetchOr, value, value)
    }

    /// `shmem_atomic_or` ([`Remote::or`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// word.or(1 << 5);
    /// assert_eq!(word.fetch(), 32);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn or(self, value: E) {
        self.amo(AmoOp::Or, value, value);
    }

    /// `shmem_atomic_fetch_xor` ([`Remote::fetch_xor`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// word.set(0b11);
    /// assert_eq!(word.fetch_xor(0b01), 0b11);
    /// assert_eq!(word.fetch(), 0b10);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn fetch_xor(self, value: E) -> E {
        self.amo(AmoOp::FetchXor, value, value)
    }

    /// `shmem_atomic_xor` ([`Remote::xor`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// word.xor(0b101);
    /// word.xor(0b100);
    /// assert_eq!(word.fetch(), 0b001);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn xor(self, value: E) {
        self.amo(AmoOp::Xor, value, value);
    }
}
