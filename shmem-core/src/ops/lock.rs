//! Distributed locks (`shmem_set_lock`, `shmem_test_lock`, `shmem_clear_lock`).
//!
//! A [`Lock`] is one symmetric 64-bit word. Only one PE's copy is used: the *home* PE, chosen
//! from the lock's heap offset (the same on every PE), so that different locks spread over the
//! PEs. The word is a ticket lock: the high 32 bits hand out tickets, the low 32 bits say which
//! ticket is served. Acquiring is one atomic fetch-add on the home PE, then polling the word (with
//! back-off, driving UCX progress so that atomics aimed at this PE complete) until the ticket is
//! served; the lock is fair (first come, first served). Releasing quiets first, so every put
//! made while holding the lock is visible before the next holder gets it.
//!
//! A `Lock` is not an [`Element`](crate::Element): no put, get or `shmem!` transfer can
//! overwrite one; only its own methods touch it.
//!
//! Part of the operations layer; uses `ops::amo`, `object` (statics, heap arrays, storage),
//! `transport`.

use super::amo::Remote;
use crate::object::bounds::check_index;
use crate::object::heap::SymArray;
use crate::object::sealed::Placed;
use crate::object::statics::Symmetric;
use crate::object::storage::{Storable, sealed};
use crate::transport::{Transport, transport};
use std::fmt;
use std::marker::PhantomData;
use zerocopy::{FromBytes, Immutable, IntoBytes};

/// Ticket increment: the high half of the word.
const TICKET: u64 = 1 << 32;
const LOW: u64 = 0xffff_ffff;

/// A distributed mutual-exclusion lock in symmetric memory (OpenSHMEM's `long` lock variable).
///
/// Declare it as a symmetric static, or allocate an array of them on the heap; it starts
/// unlocked. As with [`std::sync::Mutex`], [`lock`](Symmetric::lock) waits for the lock and
/// returns a guard that releases it when dropped, and [`try_lock`](Symmetric::try_lock) takes it
/// only if it is free.
///
/// ```
/// use shmem_core::prelude::*;
///
/// #[symmetric]
/// static LOCK: Lock = Lock::new();
/// #[symmetric]
/// static TOTAL: u64 = 0;
///
/// let world = shmem_core::init()?;
/// {
///     let _held = LOCK.lock();               // waits until this PE holds the lock
///     let t = TOTAL.get_value(0);
///     TOTAL.put_value(0, t + 1);             // no other PE is between the read and the write
/// }                                          // quiet, then release
/// world.barrier_all();
/// if world.my_pe() == 0 {
///     assert_eq!(TOTAL.local(), world.n_pes() as u64);
/// }
/// // Heap-allocated locks: an array of them.
/// let locks = world.alloc::<Lock>(4);
/// let guard = locks.try_lock(3).expect("nobody else uses lock 3 yet");
/// drop(guard);
/// # world.barrier_all();
/// # Ok::<(), shmem_core::Error>(())
/// ```
///
/// A lock is not plain data that puts may overwrite:
///
/// ```compile_fail
/// use shmem_core::prelude::*;
/// #[symmetric]
/// static LOCKS: [Lock; 2] = [Lock::new(); 2];
/// let world = shmem_core::init()?;
/// LOCKS.put(0, 0..1, &[Lock::new()]); // error: `Lock` is not a symmetric element type
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[derive(Clone, Copy, Default, FromBytes, IntoBytes, Immutable)]
#[repr(transparent)]
pub struct Lock(u64);

impl Lock {
    /// An unlocked lock, for the initializer of a `#[symmetric]` static.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static L: Lock = Lock::new();
    /// let world = shmem_core::init()?;
    /// drop(L.lock());
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    pub const fn new() -> Lock {
        Lock(0)
    }
}

// A `Lock` may live in symmetric memory (a static, a heap array) but is not an element: no
// transfer can overwrite one.
impl sealed::Storable for Lock {}
impl<const N: usize> sealed::Storable for [Lock; N] {}
impl Storable for Lock {}
impl<const N: usize> Storable for [Lock; N] {}

impl fmt::Debug for Lock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lock")
            .field("next_ticket", &(self.0 >> 32))
            .field("serving", &(self.0 & LOW))
            .finish()
    }
}

/// One symmetric lock: a `#[symmetric]` static [`Lock`] or an element of a `Lock` array. Made by
/// [`Symmetric::<Lock>::lock_ref`] or [`LockArray::lock_ref`]; both also have `lock` and
/// `try_lock` directly.
///
/// ```
/// use shmem_core::prelude::*;
/// #[symmetric]
/// static LOCKS: [Lock; 2] = [Lock::new(); 2];
/// let world = shmem_core::init()?;
/// let l = LOCKS.lock_ref(1);
/// assert!(l.home_pe() < world.n_pes());
/// drop(l.lock());
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct LockRef<'a> {
    tp: &'static Transport,
    offset: usize,
    _obj: PhantomData<&'a Lock>,
}

/// Proof that this PE holds a lock; dropping it releases the lock (`shmem_clear_lock`), after a
/// quiet, so that everything this PE wrote while holding it is visible to the next holder.
///
/// ```
/// use shmem_core::prelude::*;
/// #[symmetric]
/// static L: Lock = Lock::new();
/// let world = shmem_core::init()?;
/// let guard = L.lock();
/// guard.unlock();            // the same as drop(guard)
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[doc(alias = "shmem_clear_lock")]
#[must_use = "the lock is released as soon as the guard is dropped"]
#[derive(Debug)]
pub struct LockGuard<'a> {
    lock: LockRef<'a>,
}

impl<'a> LockRef<'a> {
    #[inline]
    fn new(tp: &'static Transport, offset: usize) -> LockRef<'a> {
        LockRef {
            tp,
            offset,
            _obj: PhantomData,
        }
    }

    /// The lock whose word is at `offset` (checked by the caller: 8-byte aligned, symmetric).
    pub(crate) fn at_offset(tp: &'static Transport, offset: usize) -> LockRef<'a> {
        LockRef::new(tp, offset)
    }

    /// The PE whose copy of the lock word holds the lock's state (the same on every PE).
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static L: Lock = Lock::new();
    /// let world = shmem_core::init()?;
    /// assert!(L.lock_ref().home_pe() < world.n_pes());
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    pub fn home_pe(self) -> usize {
        self.tp.check_live();
        home(self.tp, self.offset)
    }

    #[track_caller]
    fn word(self) -> Remote<'static, u64> {
        let pe = home(self.tp, self.offset);
        Remote::new(self.tp, self.tp.peer(pe), self.offset)
    }

    /// `shmem_set_lock`: waits until this PE holds the lock. Waiting backs off and keeps UCX
    /// progressing. Taking a lock this PE already holds (without releasing it) waits forever,
    /// as in OpenSHMEM.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static L: Lock = Lock::new();
    /// let world = shmem_core::init()?;
    /// let held = L.lock_ref().lock();
    /// drop(held);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_set_lock")]
    #[track_caller]
    pub fn lock(self) -> LockGuard<'a> {
        let word = self.word();
        let mine = (word.fetch_add(TICKET) >> 32) as u32;
        let mut now = 0u32;
        self.tp.wait_local(|| {
            // A fetch with Acquire semantics (a CPU SeqCst load, or a UCX fetch that completes
            // before anything this PE issues next).
            now = (word.fetch() & LOW) as u32;
            now == mine
        });
        LockGuard { lock: self }
    }

    /// `shmem_test_lock`: takes the lock if nobody holds or waits for it; never waits (it drives
    /// UCX progress once, so a loop around it lets other PEs' transfers to this PE complete).
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static L: Lock = Lock::new();
    /// let world = shmem_core::init()?;
    /// world.barrier_all();
    /// if world.n_pes() == 1 {
    ///     let held = L.try_lock().expect("free");
    ///     assert!(L.try_lock().is_none());     // already held (by this PE)
    ///     drop(held);
    /// }
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_test_lock")]
    #[track_caller]
    pub fn try_lock(self) -> Option<LockGuard<'a>> {
        // A caller may loop on `try_lock`: keep transfers aimed at this PE moving (over UCX they
        // need this PE's progress, and the word may be local).
        self.tp.check_live();
        self.tp.progress();
        let word = self.word();
        let seen = word.fetch();
        if seen >> 32 != seen & LOW {
            return None;
        }
        // (Not `then_some`: a guard built eagerly and dropped would release the lock.)
        if word.compare_swap(seen, seen.wrapping_add(TICKET)) == seen {
            Some(LockGuard { lock: self })
        } else {
            None
        }
    }
}

/// Where the state of the lock at heap `offset` lives.
fn home(tp: &Transport, offset: usize) -> usize {
    (offset / size_of::<Lock>()) % tp.n_pes
}

impl LockGuard<'_> {
    /// `shmem_clear_lock`: releases the lock now (the same as dropping the guard).
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static L: Lock = Lock::new();
    /// let world = shmem_core::init()?;
    /// L.lock().unlock();
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_clear_lock")]
    pub fn unlock(self) {}
}

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        let tp = self.lock.tp;
        // Everything written while holding the lock is complete before the next holder runs.
        tp.quiet();
        let word = self.lock.word();
        // Advance the served ticket without carrying into the ticket half: only acquirers (adding
        // to the high half) race with this, so the loop ends.
        let mut seen = word.fetch();
        loop {
            let next = (seen & !LOW) | (seen.wrapping_add(1) & LOW);
            let old = word.compare_swap(seen, next);
            if old == seen {
                break;
            }
            seen = old;
        }
    }
}

impl Symmetric<Lock> {
    /// This lock as a [`LockRef`] (which PE is its home, and the lock operations).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static L: Lock = Lock::new();
    /// let world = shmem_core::init()?;
    /// let l = L.lock_ref();
    /// assert!(l.home_pe() < world.n_pes());
    /// let held = l.lock();
    /// drop(held);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline]
    #[track_caller]
    pub fn lock_ref(&self) -> LockRef<'_> {
        LockRef::new(transport(), self.heap_offset())
    }

    /// `shmem_set_lock`: waits until this PE holds the lock; the guard releases it.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static L: Lock = Lock::new();
    /// #[symmetric]
    /// static TOTAL: [u64; 1] = [0; 1];
    /// let world = shmem_core::init()?;
    /// {
    ///     let _held = L.lock(); // one PE at a time from here ...
    ///     let t = TOTAL.g(0, 0);
    ///     TOTAL.p(0, 0, t + 1);
    /// } // ... to here (the put is complete before the next holder reads)
    /// world.barrier_all();
    /// assert_eq!(TOTAL.g(0, 0), world.n_pes() as u64);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_set_lock")]
    #[track_caller]
    pub fn lock(&self) -> LockGuard<'_> {
        self.lock_ref().lock()
    }

    /// `shmem_test_lock`: the lock if it is free, without waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static L: Lock = Lock::new();
    /// let world = shmem_core::init()?;
    /// let mut attempts = 0;
    /// let held = loop {
    ///     attempts += 1;
    ///     if let Some(g) = L.try_lock() {
    ///         break g; // taken without waiting
    ///     }
    /// };
    /// drop(held);
    /// assert!(attempts >= 1);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_test_lock")]
    #[track_caller]
    pub fn try_lock(&self) -> Option<LockGuard<'_>> {
        self.lock_ref().try_lock()
    }
}

/// Arrays of locks: a `#[symmetric] static L: [Lock; N]` or a `SymArray<Lock>` from
/// `world.alloc::<Lock>(n)`.
///
/// ```
/// use shmem_core::prelude::*;
/// #[symmetric]
/// static LOCKS: [Lock; 4] = [Lock::new(); 4];
/// let world = shmem_core::init()?;
/// let _g = LOCKS.lock(2);
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub trait LockArray: Placed {
    /// Number of locks.
    #[doc(hidden)]
    fn __lock_count(&self) -> usize;

    /// Lock `index` as a [`LockRef`]; panics if the index is out of range.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let locks = world.alloc::<Lock>(8);
    /// // The locks' states are spread over the PEs.
    /// for i in 0..8 {
    ///     assert!(locks.lock_ref(i).home_pe() < world.n_pes());
    /// }
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[track_caller]
    fn lock_ref(&self, index: usize) -> LockRef<'_> {
        check_index("lock", index, self.__lock_count());
        LockRef::new(
            self.__transport(),
            self.__heap_offset() + index * size_of::<Lock>(),
        )
    }

    /// `shmem_set_lock` on lock `index`: waits until this PE holds it.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static BUCKET_LOCKS: [Lock; 4] = [Lock::new(); 4];
    /// #[symmetric]
    /// static BUCKETS: [u32; 4] = [0; 4];
    /// let world = shmem_core::init()?;
    /// let b = world.my_pe() % 4;
    /// {
    ///     let _held = BUCKET_LOCKS.lock(b); // only this bucket is held
    ///     let v = BUCKETS.g(0, b);
    ///     BUCKETS.p(0, b, v + 1);
    /// }
    /// world.barrier_all();
    /// if world.my_pe() == 0 {
    ///     let mut all = [0; 4];
    ///     BUCKETS.local_read(.., &mut all);
    ///     assert_eq!(all.iter().sum::<u32>() as usize, world.n_pes());
    /// }
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_set_lock")]
    #[track_caller]
    fn lock(&self, index: usize) -> LockGuard<'_> {
        self.lock_ref(index).lock()
    }

    /// `shmem_test_lock` on lock `index`: the lock if it is free, without waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static LOCKS: [Lock; 2] = [Lock::new(); 2];
    /// let world = shmem_core::init()?;
    /// world.barrier_all();
    /// if world.n_pes() == 1 {
    ///     let first = LOCKS.try_lock(0).expect("free");
    ///     assert!(LOCKS.try_lock(0).is_none()); // held
    ///     assert!(LOCKS.try_lock(1).is_some()); // another lock is free
    ///     drop(first);
    /// }
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_test_lock")]
    #[track_caller]
    fn try_lock(&self, index: usize) -> Option<LockGuard<'_>> {
        self.lock_ref(index).try_lock()
    }
}

impl LockArray for SymArray<'_, Lock> {
    fn __lock_count(&self) -> usize {
        self.count()
    }
}

impl<const N: usize> LockArray for Symmetric<[Lock; N]> {
    fn __lock_count(&self) -> usize {
        N
    }
}
