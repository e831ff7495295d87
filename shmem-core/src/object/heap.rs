//! The symmetric heap: collective allocation of [`SymArray`]s.
//!
//! Every PE runs the same sequence of collective allocations and frees, so a deterministic
//! allocator (`mem::allocator`) hands out the same offsets everywhere and a remote address is
//! just `peer base + offset`. Sizes (at allocation) and offsets (at free) are compared across
//! PEs, so a program that breaks the rule gets an error naming both values instead of silent
//! corruption.
//!
//! Part of the object layer; uses the transport (its all-reduce and barrier) and `mem`. An array
//! carries the two narrow handles it needs: the transport and the process's allocator.

use super::SymObject;
use super::sealed::Placed;
use super::storage::Storable;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::mem::allocator::Allocator;
use crate::mem::layout::OBJECT_ALIGN;
use crate::transport::Transport;
use crate::transport::collective::{Coll, Group, allreduce_minmax, barrier_all};
use std::fmt;
use std::marker::PhantomData;
use std::sync::Mutex;

/// An array of `len` elements of type `E` on the symmetric heap: the same array exists on every
/// PE, at the same place, and any PE can read and write any PE's copy.
///
/// Made by the collective [`World::alloc`](crate::World::alloc); dropping it is collective too (every PE drops its
/// arrays in the same order), so it borrows the [`World`](crate::World) and cannot outlive it.
///
/// The remote-access methods come from [`SymmetricArray`](crate::SymmetricArray).
///
/// ```
/// use shmem_core::prelude::*;
///
/// let world = shmem_core::init()?;
/// let (me, n) = (world.my_pe(), world.n_pes());
/// let ring = world.alloc::<u64>(n);
/// // Every PE writes its number into slot `me` of its right neighbour.
/// ring.p((me + 1) % n, me, me as u64 * 10);
/// world.barrier_all();
/// assert_eq!(ring.local_get((me + n - 1) % n), ((me + n - 1) % n) as u64 * 10);
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub struct SymArray<'w, E: Storable> {
    tp: &'static Transport,
    /// The process's heap allocator (this array's block is freed into it).
    heap: &'static Mutex<Allocator>,
    offset: usize,
    len: usize,
    bytes: usize,
    /// Alignment of the block (`OBJECT_ALIGN` unless allocated with a larger one).
    align: usize,
    /// Borrows the `World` for `'w` (freed before it) and is `Sync` but not `Send`: threads may
    /// share it for RMA (thread-safe in this runtime), while its collective free stays on the
    /// thread that owns it.
    _world: PhantomData<Borrow<'w>>,
    _e: PhantomData<E>,
}

/// Marker: a borrow for `'w`; `Sync` but not `Send` (see `SymArray::_world`).
type Borrow<'w> = (fn() -> &'w (), std::sync::MutexGuard<'static, ()>);

impl<E: Storable> fmt::Debug for SymArray<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SymArray")
            .field("type", &std::any::type_name::<E>())
            .field("len", &self.len)
            .field("heap_offset", &self.offset)
            .finish()
    }
}

/// The byte size of `len` elements of `E`, checked against overflow.
fn byte_len<E: Storable>(tp: &Transport, len: usize) -> Result<usize> {
    len.checked_mul(size_of::<E>())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or(Error::HeapExhausted {
            requested: usize::MAX,
            free: 0,
            largest_free: 0,
            total: tp.layout.user_len,
        })
}

/// Checks that every PE asked for the same number of bytes (also a barrier).
fn same_size(tp: &Transport, bytes: u64) -> Result<()> {
    let mm = allreduce_minmax(tp, bytes);
    if mm.min != mm.max {
        let (other_pe, other) = if bytes == mm.min {
            (mm.max_pe, mm.max)
        } else {
            (mm.min_pe, mm.min)
        };
        return Err(Error::AllocMismatch {
            my_pe: tp.my_pe,
            my_bytes: bytes as usize,
            other_pe: other_pe as usize,
            other_bytes: other as usize,
        });
    }
    Ok(())
}

/// Checks that every PE passed the same `value` as parameter `what` of collective `op`; panics
/// on every PE alike (naming both values) when they differ.
#[track_caller]
fn same_param(tp: &Transport, op: &str, what: &str, value: u64) {
    let mm = allreduce_minmax(tp, value);
    if mm.min != mm.max {
        panic!(
            "shmem: {op}: PE {} passed {what} {:#x} but PE {} passed {:#x}; every PE must pass the \
             same {what}",
            mm.min_pe, mm.min, mm.max_pe, mm.max
        );
    }
}

impl<'w, E: Storable> SymArray<'w, E> {
    /// Number of elements (also for arrays of locks, which have no `SymmetricArray::len`).
    pub(crate) fn count(&self) -> usize {
        self.len
    }

    /// Collective allocation of `len` zeroed elements on the heap of `tp`, reserved from
    /// `heap`; `align` (power of two, checked by the caller) and `hints` are compared across PEs
    /// when given. The caller ties `'w` to the `World`.
    pub(crate) fn alloc(
        (tp, heap): (&'static Transport, &'static Mutex<Allocator>),
        len: usize,
        align: Option<usize>,
        hints: Option<MallocHints>,
    ) -> Result<SymArray<'w, E>> {
        let _in = Group::world(tp).enter(Coll::Alloc);
        let bytes = byte_len::<E>(tp, len);
        // Every PE takes part in the size check, even one whose size overflowed.
        same_size(tp, bytes.as_ref().map_or(u64::MAX, |&b| b as u64))?;
        let bytes = bytes?;
        if let Some(h) = hints {
            same_param(tp, "alloc_with_hints", "hints", h.bits());
        }
        let align = match align {
            None => OBJECT_ALIGN,
            Some(a) => {
                same_param(tp, "alloc_aligned", "alignment", a as u64);
                let a = a.max(OBJECT_ALIGN);
                // The same offset must be aligned in every PE's address space.
                let phase = (tp.base() as usize).wrapping_add(tp.layout.user) % a;
                let mm = allreduce_minmax(tp, phase as u64);
                if mm.min != mm.max {
                    panic!(
                        "shmem: alloc_aligned: an alignment of {a} bytes cannot be met at the same \
                         heap offset on every PE: their heaps are mapped at addresses that differ \
                         modulo {a} (the kernel did not map them at 1 GiB boundaries)"
                    );
                }
                a
            }
        };
        let rounded = bytes.div_ceil(OBJECT_ALIGN) * OBJECT_ALIGN;
        let (offset, dirty) = if rounded == 0 {
            (tp.layout.user, 0)
        } else {
            let (rel, dirty) = reserve((tp, heap), rounded, align)?;
            (tp.layout.user + rel, dirty.min(bytes))
        };
        // Only what an earlier block used is zeroed: the rest of a fresh heap reads as zero and
        // costs no memory until the program touches it.
        // SAFETY: the block [offset, offset + bytes) was just reserved inside the user heap.
        unsafe { std::ptr::write_bytes(tp.local(offset), 0, dirty) };
        // Nobody may write into the new array before its owner has zeroed it.
        barrier_all(tp);
        Ok(SymArray {
            tp,
            heap,
            offset,
            len,
            bytes: rounded,
            align,
            _world: PhantomData,
            _e: PhantomData,
        })
    }

    /// `shmem_realloc`: collectively resizes the array to `new_len` elements, keeping the first
    /// `min(len, new_len)` elements of every PE's copy and zeroing the rest. Every PE must pass
    /// the same `new_len`. The array may move (references into it, such as signals, are borrows
    /// and cannot outlive it); its alignment is kept. Like the C call it synchronizes all PEs on
    /// entry and on exit.
    ///
    /// # Panics
    /// When the PEs ask for different sizes or the heap is exhausted;
    /// [`try_realloc`](Self::try_realloc) returns these as errors.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(2);
    /// a.local_set(1, 7);
    /// let a = a.realloc(1000);
    /// assert_eq!((a.len(), a.local_get(1), a.local_get(999)), (1000, 7, 0));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_realloc")]
    #[track_caller]
    pub fn realloc(mut self, new_len: usize) -> SymArray<'w, E> {
        if let Err(e) = self.try_realloc(new_len) {
            panic!(
                "shmem: realloc of {} x {} to {new_len}: {e}",
                self.len,
                std::any::type_name::<E>()
            );
        }
        self
    }

    /// Like [`realloc`](Self::realloc) in place, returning [`Error::AllocMismatch`] or
    /// [`Error::HeapExhausted`] instead of panicking; on error the array is unchanged (on every
    /// PE alike).
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let mut a = world.alloc::<u8>(4);
    /// a.local_set(0, 1);
    /// a.try_realloc(2)?;
    /// assert_eq!((a.len(), a.local_get(0)), (2, 1));
    /// assert!(a.try_realloc(usize::MAX).is_err());
    /// assert_eq!(a.len(), 2);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    pub fn try_realloc(&mut self, new_len: usize) -> Result<()> {
        let tp = self.tp;
        let _in = Group::world(tp).enter(Coll::Alloc);
        let new_bytes = byte_len::<E>(tp, new_len);
        // Every PE takes part in the size check, even one whose size overflowed.
        same_size(tp, new_bytes.as_ref().map_or(u64::MAX, |&b| b as u64))?;
        let new_bytes = new_bytes?;
        let rounded = new_bytes.div_ceil(OBJECT_ALIGN) * OBJECT_ALIGN;
        let old_bytes = self.len * size_of::<E>();
        // Every PE runs the same allocator steps on the same state, so the new offset agrees.
        let (new_offset, dirty) = {
            let mut a = lock(self.heap);
            if self.bytes > 0 {
                a.free(self.offset - tp.layout.user, self.bytes);
            }
            let got = if rounded == 0 {
                Ok(0)
            } else {
                let phase = (tp.base() as usize).wrapping_add(tp.layout.user) % self.align;
                a.alloc_aligned(rounded, self.align, phase)
            };
            match got {
                Ok(rel) => (tp.layout.user + rel, a.used_prefix(rel, rounded)),
                Err(e) => {
                    // The old block was just freed and nothing else happened: take it back.
                    let back = self.bytes == 0 || a.take(self.offset - tp.layout.user, self.bytes);
                    debug_assert!(back, "a block just freed can be reserved again");
                    return Err(e);
                }
            }
        };
        let keep = old_bytes.min(new_bytes);
        // SAFETY: both ranges lie in this PE's user heap (old block just released, new block just
        // reserved); `copy` allows them to overlap; nobody else touches either between the
        // barriers.
        unsafe {
            std::ptr::copy(tp.local(self.offset), tp.local(new_offset), keep);
            // Past what an earlier block used, the new block reads as zero already.
            let zero_to = dirty.clamp(keep, new_bytes);
            std::ptr::write_bytes(tp.local(new_offset + keep), 0, zero_to - keep);
        }
        self.offset = new_offset;
        self.len = new_len;
        self.bytes = rounded;
        // Nobody may write into the new array before its owner has moved the data.
        barrier_all(tp);
        Ok(())
    }
}

/// Reserves `rounded` bytes with alignment `align`; returns the offset in the user heap and how
/// many leading bytes of the block an earlier block used (`Allocator::used_prefix`).
fn reserve(
    (tp, heap): (&Transport, &Mutex<Allocator>),
    rounded: usize,
    align: usize,
) -> Result<(usize, usize)> {
    let mut a = lock(heap);
    let rel = if align == OBJECT_ALIGN {
        a.alloc(rounded)?
    } else {
        let phase = (tp.base() as usize).wrapping_add(tp.layout.user) % align;
        a.alloc_aligned(rounded, align, phase)?
    };
    Ok((rel, a.used_prefix(rel, rounded)))
}

/// Hints for [`World::alloc_with_hints`](crate::World::alloc_with_hints) (`shmem_malloc_with_hints`): how the memory will be
/// used. A set of flags combined with `|`; the empty set is [`MallocHints::NONE`].
///
/// This implementation accepts and checks them (every PE must pass the same hints) and otherwise
/// treats the memory like any other: every symmetric object already supports remote atomics and
/// signals.
///
/// ```
/// use shmem_core::MallocHints;
/// let h = MallocHints::ATOMICS_REMOTE | MallocHints::SIGNAL_REMOTE;
/// assert!(h.contains(MallocHints::SIGNAL_REMOTE));
/// assert_eq!(MallocHints::from_bits(h.bits()), Some(h));
/// assert_eq!(MallocHints::from_bits(1 << 40), None);
/// ```
#[doc(alias = "shmem_malloc_with_hints")]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MallocHints(u64);

impl MallocHints {
    /// No hint (`0`).
    pub const NONE: MallocHints = MallocHints(0);
    /// `SHMEM_MALLOC_ATOMICS_REMOTE`: the memory is mostly the target of remote atomics.
    pub const ATOMICS_REMOTE: MallocHints = MallocHints(1 << 0);
    /// `SHMEM_MALLOC_SIGNAL_REMOTE`: the memory holds signal words for put-with-signal.
    pub const SIGNAL_REMOTE: MallocHints = MallocHints(1 << 1);
    const ALL: u64 = Self::ATOMICS_REMOTE.0 | Self::SIGNAL_REMOTE.0;

    /// The flags as bits (as the C constants combine).
    ///
    /// ```
    /// assert_eq!(shmem_core::MallocHints::NONE.bits(), 0);
    /// ```
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// The hints with these bits, or `None` when a bit is not a known hint.
    ///
    /// ```
    /// use shmem_core::MallocHints;
    /// assert_eq!(MallocHints::from_bits(1), Some(MallocHints::ATOMICS_REMOTE));
    /// assert_eq!(MallocHints::from_bits(8), None);
    /// ```
    pub const fn from_bits(bits: u64) -> Option<MallocHints> {
        if bits & !Self::ALL == 0 {
            Some(MallocHints(bits))
        } else {
            None
        }
    }

    /// The hints with the known bits of `bits`; unknown bits are ignored, as C's
    /// `shmem_malloc_with_hints` ignores hints it does not know (a later OpenSHMEM's, or an
    /// implementation's own).
    ///
    /// ```
    /// use shmem_core::MallocHints;
    /// assert_eq!(MallocHints::from_bits_truncate(1 | 8 | 1 << 40), MallocHints::ATOMICS_REMOTE);
    /// ```
    pub const fn from_bits_truncate(bits: u64) -> MallocHints {
        MallocHints(bits & Self::ALL)
    }

    /// Whether every flag of `other` is set in `self`.
    ///
    /// ```
    /// use shmem_core::MallocHints;
    /// assert!(!MallocHints::NONE.contains(MallocHints::ATOMICS_REMOTE));
    /// assert!(MallocHints::ATOMICS_REMOTE.contains(MallocHints::NONE));
    /// ```
    pub const fn contains(self, other: MallocHints) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for MallocHints {
    type Output = MallocHints;
    fn bitor(self, rhs: MallocHints) -> MallocHints {
        MallocHints(self.0 | rhs.0)
    }
}

impl std::ops::BitOrAssign for MallocHints {
    fn bitor_assign(&mut self, rhs: MallocHints) {
        self.0 |= rhs.0;
    }
}

impl fmt::Debug for MallocHints {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names = Vec::new();
        if self.contains(MallocHints::ATOMICS_REMOTE) {
            names.push("ATOMICS_REMOTE");
        }
        if self.contains(MallocHints::SIGNAL_REMOTE) {
            names.push("SIGNAL_REMOTE");
        }
        if names.is_empty() {
            names.push("NONE");
        }
        write!(f, "MallocHints({})", names.join(" | "))
    }
}

fn lock(heap: &Mutex<Allocator>) -> std::sync::MutexGuard<'_, Allocator> {
    match heap.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl<E: Storable> Drop for SymArray<'_, E> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // Collective steps could hang while this PE unwinds; the block is simply leaked.
            return;
        }
        let tp = self.tp;
        let _in = Group::world(tp).enter(Coll::Alloc);
        // Also a barrier: no PE frees (and later reuses) the block while another still uses it.
        let mm = allreduce_minmax(tp, self.offset as u64);
        if mm.min != mm.max {
            panic!(
                "shmem: symmetric arrays were freed in different orders: PE {} freed the array at heap \
                 offset {} while PE {} freed the one at offset {}; drop SymArrays in the same order on every PE",
                mm.min_pe, mm.min, mm.max_pe, mm.max
            );
        }
        if self.bytes > 0 {
            lock(self.heap).free(self.offset - tp.layout.user, self.bytes);
        }
    }
}

// Contract of `SymObject`: `offset .. offset + len * size_of::<E>()` was reserved in the
// symmetric heap of `tp` for this array and stays reserved until it is dropped.
impl<E: Storable> Placed for SymArray<'_, E> {
    #[inline]
    fn __heap_offset(&self) -> usize {
        self.offset
    }

    #[inline]
    fn __transport(&self) -> &'static Transport {
        self.tp
    }
}

impl<E: Element> SymObject<E> for SymArray<'_, E> {
    #[inline]
    fn __len(&self) -> usize {
        self.len
    }
}
