//! Atomic memory operations (AMOs) on one element of a symmetric object on some PE.
//!
//! On a peer whose heap is mapped into this process (same node) an AMO is a CPU atomic on the
//! mapped word; otherwise it is `ucp_atomic_op_nbx`. The element type decides at compile time
//! which operations exist, following the OpenSHMEM type sets:
//!
//! | trait | operations | types |
//! |---|---|---|
//! | [`AmoExtended`] | `fetch`, `set`, `swap` | `i32 i64 u32 u64 isize usize f32 f64` |
//! | [`AmoStandard`] | `compare_swap`, `fetch_add`, `add`, `fetch_inc`, `inc` | `i32 i64 u32 u64 isize usize` |
//! | [`AmoBitwise`] | `fetch_and`, `and`, `fetch_or`, `or`, `fetch_xor`, `xor` | `i32 i64 u32 u64` |
//!
//! Part of the operations layer, its lowest part; uses `object::statics`, `transport::atomic` (the
//! dispatch itself), the base modules.

use crate::element::Element;
use crate::object::statics::Symmetric;
use crate::transport::atomic::AmoOp as Op;
use crate::transport::{Peer, Transport, transport};
use shmem_ucx::AtomicSize;
use std::marker::PhantomData;

mod sealed {
    /// Only the word types below are atomic.
    pub trait Word {}
}

/// A 4- or 8-byte element that AMOs move as raw bits. Implemented for the OpenSHMEM AMO types.
#[doc(hidden)]
pub trait AmoWord: Element + sealed::Word {
    /// Word size for UCX.
    const SIZE: AtomicSize;
    /// The value's bits, zero-extended.
    fn to_bits(self) -> u64;
    /// The value from (the low bytes of) `bits`.
    fn from_bits(bits: u64) -> Self;
}

/// Types with the OpenSHMEM *extended* AMOs: `fetch`, `set` and `swap`.
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// // Generic over every type with atomic swap: f64 has it, as do the integers.
/// fn exchange<E: AmoExtended>(word: Remote<'_, E>, new: E) -> E {
///     word.swap(new)
/// }
/// #[symmetric]
/// static LEVEL: f64 = 0.5;
/// let world = shmem_core::init()?;
/// assert_eq!(exchange(LEVEL.at(world.my_pe()), 2.5), 0.5);
/// assert_eq!(LEVEL.local(), 2.5);
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no atomic operations in OpenSHMEM",
    label = "no atomic fetch, set or swap for `{Self}`",
    note = "atomic fetch, set and swap exist for i32, i64, u32, u64, isize, usize, f32 and f64"
)]
pub trait AmoExtended: AmoWord {}

/// Types with the OpenSHMEM *standard* AMOs: `compare_swap`, `fetch_add`, `add`, `fetch_inc`,
/// `inc` (and `-=` as an add of the negated value).
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// // A ticket dispenser for any integer type with atomic add.
/// fn take_ticket<E: AmoStandard>(counter: Remote<'_, E>) -> E {
///     counter.fetch_inc()
/// }
/// #[symmetric]
/// static NEXT: usize = 0;
/// let world = shmem_core::init()?;
/// let me = world.my_pe();
/// assert_eq!((take_ticket(NEXT.at(me)), take_ticket(NEXT.at(me))), (0, 1));
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no atomic add, increment or compare-and-swap in OpenSHMEM",
    label = "no atomic arithmetic for `{Self}`",
    note = "atomic add, increment and compare_swap exist for i32, i64, u32, u64, isize and usize; \
            f32 and f64 have only atomic fetch, set and swap"
)]
pub trait AmoStandard: AmoExtended {}

/// Types with the OpenSHMEM *bitwise* AMOs: `and`, `or`, `xor` and their fetching forms.
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// // Sets `bits` in a flag word of any type with atomic or; returns the bits set before.
/// fn raise<E: AmoBitwise>(flags: Remote<'_, E>, bits: E) -> E {
///     flags.fetch_or(bits)
/// }
/// #[symmetric]
/// static FLAGS: u32 = 0b0001;
/// let world = shmem_core::init()?;
/// assert_eq!(raise(FLAGS.at(world.my_pe()), 0b1000), 0b0001);
/// assert_eq!(FLAGS.local(), 0b1001);
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no atomic bitwise operations in OpenSHMEM",
    label = "no atomic and/or/xor for `{Self}`",
    note = "atomic and, or and xor exist for i32, i64, u32 and u64"
)]
pub trait AmoBitwise: AmoStandard {}

macro_rules! words {
    ($($t:ty => $size:ident, $bits:ty, [$($tr:ident),*];)*) => {$(
        impl sealed::Word for $t {}
        impl AmoWord for $t {
            const SIZE: AtomicSize = AtomicSize::$size;
            #[inline(always)]
            fn to_bits(self) -> u64 {
                <$bits>::from_ne_bytes(self.to_ne_bytes()) as u64
            }
            #[inline(always)]
            fn from_bits(bits: u64) -> Self {
                <$t>::from_ne_bytes((bits as $bits).to_ne_bytes())
            }
        }
        $(impl $tr for $t {})*
    )*};
}

words! {
    i32 => U32, u32, [AmoExtended, AmoStandard, AmoBitwise];
    u32 => U32, u32, [AmoExtended, AmoStandard, AmoBitwise];
    i64 => U64, u64, [AmoExtended, AmoStandard, AmoBitwise];
    u64 => U64, u64, [AmoExtended, AmoStandard, AmoBitwise];
    isize => U64, u64, [AmoExtended, AmoStandard];
    usize => U64, u64, [AmoExtended, AmoStandard];
    f32 => U32, u32, [AmoExtended];
    f64 => U64, u64, [AmoExtended];
}

const _: () = assert!(
    size_of::<usize>() == 8,
    "AMOs on usize/isize assume a 64-bit target"
);

/// One element of a symmetric object on one PE: the target of atomic operations, and of single
/// element reads and writes. Made by [`SymmetricArray::at`](crate::SymmetricArray::at) or
/// [`Symmetric::at`](crate::Symmetric::at), which check the PE and the index.
///
/// ```
/// use shmem_core::prelude::*;
///
/// #[symmetric]
/// static HITS: [u64; 4] = [0; 4];
///
/// let world = shmem_core::init()?;
/// HITS.at(0, 2).add(5);                      // atomic add on PE 0
/// world.barrier_all();
/// let before = HITS.at(0, 2).fetch_inc();    // returns the old value
/// assert!(before >= 5);
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub struct Remote<'a, E> {
    tp: &'static Transport,
    peer: &'a Peer,
    offset: usize,
    _e: PhantomData<&'a E>,
}

impl<E> Clone for Remote<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<E> Copy for Remote<'_, E> {}

impl<'a, E: Element> Remote<'a, E> {
    /// A checked location: `pe` and `offset` were validated by the caller.
    #[inline]
    pub(crate) fn new(tp: &'static Transport, peer: &'a Peer, offset: usize) -> Self {
        Remote {
            tp,
            peer,
            offset,
            _e: PhantomData,
        }
    }

    /// Reads the element (`shmem_g`).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static TABLE: [u16; 4] = [10, 11, 12, 13];
    /// let world = shmem_core::init()?;
    /// // Any element type, not only the atomic ones.
    /// assert_eq!(TABLE.at(world.my_pe(), 2).get(), 12);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_g")]
    #[inline]
    pub fn get(self) -> E {
        let mut value = E::new_zeroed();
        // SAFETY: the location was checked when this `Remote` was made.
        unsafe {
            self.tp.get_bytes(
                self.peer,
                self.offset,
                (&raw mut value).cast(),
                size_of::<E>(),
            )
        }
        value
    }

    /// Writes the element (`shmem_p`).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static TABLE: [u16; 4] = [0; 4];
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// TABLE.at(me, 1).put(77);
    /// world.quiet();
    /// assert_eq!(TABLE.local_get(1), 77);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_p")]
    #[inline]
    pub fn put(self, value: E) {
        // SAFETY: the location was checked when this `Remote` was made.
        unsafe {
            self.tp.put_bytes(
                self.peer,
                self.offset,
                (&raw const value).cast(),
                size_of::<E>(),
            )
        }
    }
}

impl<E: AmoWord> Remote<'_, E> {
    /// One AMO on the element: checked when this `Remote` was made, aligned for `E` (objects
    /// are 64-byte aligned and `E` is 4 or 8 bytes).
    #[inline]
    fn amo(self, op: Op, value: E, compare: E) -> E {
        let (v, c) = (value.to_bits(), compare.to_bits());
        E::from_bits(self.tp.atomic(self.peer, self.offset, E::SIZE, op, (v, c)))
    }
}

impl<E: AmoExtended> Remote<'_, E> {
    /// `shmem_atomic_fetch`: reads the element atomically.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static STEP: i64 = 41;
    /// let world = shmem_core::init()?;
    /// assert_eq!(STEP.at(world.my_pe()).fetch(), 41);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_atomic_fetch")]
    #[inline]
    pub fn fetch(self) -> E {
        self.amo(Op::Fetch, E::from_bits(0), E::from_bits(0))
    }

    /// `shmem_atomic_set`: writes the element atomically.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static STEP: i64 = 0;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// STEP.at(me).set(-3);
    /// assert_eq!(STEP.at(me).fetch(), -3);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_atomic_set")]
    #[inline]
    pub fn set(self, value: E) {
        self.amo(Op::Set, value, value);
    }

    /// `shmem_atomic_swap`: writes `value` and returns the old value.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static OWNER: u64 = 100;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// assert_eq!(OWNER.at(me).swap(7), 100); // the old value
    /// assert_eq!(OWNER.local(), 7);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_atomic_swap")]
    #[inline]
    pub fn swap(self, value: E) -> E {
        self.amo(Op::Swap, value, value)
    }
}

impl<E: AmoStandard> Remote<'_, E> {
    /// `shmem_atomic_compare_swap`: writes `value` if the element equals `cond`; returns the
    /// old value either way.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static SLOT: i32 = 0;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// assert_eq!(SLOT.at(me).compare_swap(0, 5), 0); // was 0: now 5
    /// assert_eq!(SLOT.at(me).compare_swap(0, 9), 5); // was not 0: unchanged
    /// assert_eq!(SLOT.local(), 5);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_atomic_compare_swap")]
    #[inline]
    pub fn compare_swap(self, cond: E, value: E) -> E {
        self.amo(Op::Cswap, value, cond)
    }

    /// `shmem_atomic_fetch_add`: adds `value` (wrapping) and returns the old value.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static TOTAL: u32 = 10;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// assert_eq!(TOTAL.at(me).fetch_add(5), 10);
    /// assert_eq!(TOTAL.local(), 15);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_atomic_fetch_add")]
    #[inline]
    pub fn fetch_add(self, value: E) -> E {
        self.amo(Op::FetchAdd, value, value)
    }

    /// `shmem_atomic_add`: adds `value` (wrapping).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static TOTAL: u64 = 0;
    /// let world = shmem_core::init()?;
    /// // Every PE adds its number into PE 0's counter.
    /// TOTAL.at(0).add(world.my_pe() as u64 + 1);
    /// world.barrier_all();
    /// if world.my_pe() == 0 {
    ///     let n = world.n_pes() as u64;
    ///     assert_eq!(TOTAL.local(), n * (n + 1) / 2);
    /// }
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_atomic_add")]
    #[inline]
    pub fn add(self, value: E) {
        self.amo(Op::Add, value, value);
    }

    /// Subtracts `value` (wrapping): an add of the two's complement negation (`-=` in `shmem!`).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static CREDITS: i64 = 10;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// CREDITS.at(me).sub(4);
    /// assert_eq!(CREDITS.at(me).fetch(), 6);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline]
    pub fn sub(self, value: E) {
        self.amo(Op::Add, E::from_bits(value.to_bits().wrapping_neg()), value);
    }

    /// `shmem_atomic_fetch_inc`: adds one and returns the old value.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static TICKET: usize = 0;
    /// let world = shmem_core::init()?;
    /// // Every PE takes a distinct ticket from PE 0's dispenser.
    /// let mine = TICKET.at(0).fetch_inc();
    /// assert!(mine < world.n_pes());
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_atomic_fetch_inc")]
    #[inline]
    pub fn fetch_inc(self) -> E {
        self.fetch_add(E::from_bits(1))
    }

    /// `shmem_atomic_inc`: adds one.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static ARRIVED: u64 = 0;
    /// let world = shmem_core::init()?;
    /// ARRIVED.at(0).inc();
    /// world.barrier_all();
    /// if world.my_pe() == 0 {
    ///     assert_eq!(ARRIVED.local(), world.n_pes() as u64);
    /// }
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_atomic_inc")]
    #[inline]
    pub fn inc(self) {
        self.add(E::from_bits(1))
    }
}

impl<E: AmoBitwise> Remote<'_, E> {
    /// `shmem_atomic_fetch_and`: bitwise and; returns the old value.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static MASK: u32 = 0b1111;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// assert_eq!(MASK.at(me).fetch_and(0b0101), 0b1111);
    /// assert_eq!(MASK.local(), 0b0101);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_atomic_fetch_and")]
    #[inline]
    pub fn fetch_and(self, value: E) -> E {
        self.amo(Op::FetchAnd, value, value)
    }
    /// `shmem_atomic_and`.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static MASK: u64 = 0xff;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// MASK.at(me).and(0x0f);
    /// assert_eq!(MASK.at(me).fetch(), 0x0f);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_atomic_and")]
    #[inline]
    pub fn and(self, value: E) {
        self.amo(Op::And, value, value);
    }
    /// `shmem_atomic_fetch_or`: bitwise or; returns the old value.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static BITS: i32 = 0b0001;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// assert_eq!(BITS.at(me).fetch_or(0b0100), 0b0001);
    /// assert_eq!(BITS.local(), 0b0101);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_atomic_fetch_or")]
    #[inline]
    pub fn fetch_or(self, value: E) -> E {
        self.amo(Op::FetchOr, value, value)
    }
    /// `shmem_atomic_or`.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static SEEN: u64 = 0;
    /// let world = shmem_core::init()?;
    /// // Each PE sets its own bit on PE 0 (up to 64 PEs).
    /// if world.my_pe() < 64 {
    ///     SEEN.at(0).or(1 << world.my_pe());
    /// }
    /// world.barrier_all();
    /// if world.my_pe() == 0 {
    ///     assert_eq!(SEEN.local().count_ones() as usize, world.n_pes().min(64));
    /// }
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_atomic_or")]
    #[inline]
    pub fn or(self, value: E) {
        self.amo(Op::Or, value, value);
    }
    /// `shmem_atomic_fetch_xor`: bitwise xor; returns the old value.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static PARITY: u32 = 0b11;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// assert_eq!(PARITY.at(me).fetch_xor(0b01), 0b11);
    /// assert_eq!(PARITY.local(), 0b10);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_atomic_fetch_xor")]
    #[inline]
    pub fn fetch_xor(self, value: E) -> E {
        self.amo(Op::FetchXor, value, value)
    }
    /// `shmem_atomic_xor`.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static TOGGLE: i64 = 0;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// TOGGLE.at(me).xor(0b110);
    /// TOGGLE.at(me).xor(0b011);
    /// assert_eq!(TOGGLE.at(me).fetch(), 0b101);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_atomic_xor")]
    #[inline]
    pub fn xor(self, value: E) {
        self.amo(Op::Xor, value, value);
    }
}

impl<T: AmoWord> Symmetric<T> {
    /// This scalar static on PE `pe`, as a [`Remote`] for atomics (`COUNTER.at(pe).inc()`).
    /// (Array statics have [`SymmetricArray::at`](crate::SymmetricArray::at) with an index
    /// instead.)
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static COUNTER: u64 = 0;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// COUNTER.at(me).inc();
    /// assert_eq!(COUNTER.at(me).fetch(), 1);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline]
    #[track_caller]
    pub fn at(&self, pe: usize) -> Remote<'_, T> {
        let tp = transport();
        let peer = tp.peer(pe);
        Remote::new(tp, peer, self.heap_offset())
    }
}
