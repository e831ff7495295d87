//! The symmetric heap: collective allocation of [`SymArray`]s.
//!
//! Every PE runs the same sequence of collective allocations and frees, so a deterministic
//! allocator hands out the same offsets everywhere and a remote address is just
//! `peer base + offset`. Sizes (at allocation) and offsets (at free) are compared across PEs, so a
//! program that breaks the rule gets an error naming both values instead of silent corruption.

use crate::element::Element;
use crate::error::{Error, Result};
use crate::rma::{SymmetricArray, sealed};
use crate::runtime::{OBJECT_ALIGN, Runtime, runtime};
use crate::sync;
use crate::world::World;
use std::fmt;
use std::marker::PhantomData;

/// First-fit allocator over the user heap with coalescing free list. Offsets are relative to the
/// start of the user heap.
#[derive(Debug)]
pub(crate) struct Allocator {
    /// Free blocks `(start, len)`, sorted by start, never adjacent.
    free: Vec<(usize, usize)>,
    total: usize,
}

impl Allocator {
    pub(crate) fn new(total: usize) -> Allocator {
        Allocator {
            free: vec![(0, total)],
            total,
        }
    }

    fn free_bytes(&self) -> usize {
        self.free.iter().map(|b| b.1).sum()
    }

    fn largest_free(&self) -> usize {
        self.free.iter().map(|b| b.1).max().unwrap_or(0)
    }

    /// Allocates `len` bytes (a multiple of `OBJECT_ALIGN`) at an `OBJECT_ALIGN`-aligned offset.
    pub(crate) fn alloc(&mut self, len: usize) -> Result<usize> {
        let exhausted = |a: &Allocator| Error::HeapExhausted {
            requested: len,
            free: a.free_bytes(),
            largest_free: a.largest_free(),
            total: a.total,
        };
        let Some(i) = self.free.iter().position(|&(_, l)| l >= len) else {
            return Err(exhausted(self));
        };
        let (start, l) = self.free[i];
        if l == len {
            self.free.remove(i);
        } else {
            self.free[i] = (start + len, l - len);
        }
        Ok(start)
    }

    /// Returns a block to the free list, merging it with its neighbours.
    pub(crate) fn free(&mut self, start: usize, len: usize) {
        let i = self.free.partition_point(|&(s, _)| s < start);
        self.free.insert(i, (start, len));
        if i + 1 < self.free.len() && self.free[i].0 + self.free[i].1 == self.free[i + 1].0 {
            self.free[i].1 += self.free[i + 1].1;
            self.free.remove(i + 1);
        }
        if i > 0 && self.free[i - 1].0 + self.free[i - 1].1 == self.free[i].0 {
            self.free[i - 1].1 += self.free[i].1;
            self.free.remove(i);
        }
    }
}

/// An array of `len` elements of type `E` on the symmetric heap: the same array exists on every
/// PE, at the same place, and any PE can read and write any PE's copy.
///
/// Made by the collective [`World::alloc`]; dropping it is collective too (every PE drops its
/// arrays in the same order), so it borrows the [`World`] and cannot outlive it.
///
/// The remote-access methods come from [`SymmetricArray`].
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
pub struct SymArray<'w, E: Element> {
    offset: usize,
    len: usize,
    bytes: usize,
    _world: PhantomData<&'w World>,
    _e: PhantomData<E>,
}

impl<E: Element> fmt::Debug for SymArray<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SymArray")
            .field("type", &std::any::type_name::<E>())
            .field("len", &self.len)
            .field("heap_offset", &self.offset)
            .finish()
    }
}

impl<'w, E: Element> SymArray<'w, E> {
    pub(crate) fn alloc(_world: &'w World, len: usize) -> Result<SymArray<'w, E>> {
        let rt = runtime();
        let elem = size_of::<E>();
        let Some(bytes) = len.checked_mul(elem) else {
            return Err(Error::HeapExhausted {
                requested: usize::MAX,
                free: 0,
                largest_free: 0,
                total: rt.layout.user_len,
            });
        };
        let mm = sync::allreduce_minmax(rt, bytes as u64);
        if mm.min != mm.max {
            let (other_pe, other_bytes) = if bytes as u64 == mm.min {
                (mm.max_pe, mm.max)
            } else {
                (mm.min_pe, mm.min)
            };
            return Err(Error::AllocMismatch {
                my_pe: rt.my_pe,
                my_bytes: bytes,
                other_pe: other_pe as usize,
                other_bytes: other_bytes as usize,
            });
        }
        let rounded = bytes.div_ceil(OBJECT_ALIGN) * OBJECT_ALIGN;
        let offset = if rounded == 0 {
            rt.layout.user
        } else {
            let rel = lock(rt).alloc(rounded)?;
            rt.layout.user + rel
        };
        // SAFETY: the block [offset, offset + bytes) was just reserved inside the user heap.
        unsafe { std::ptr::write_bytes(rt.local(offset), 0, bytes) };
        // Nobody may write into the new array before its owner has zeroed it.
        sync::barrier_all(rt);
        Ok(SymArray {
            offset,
            len,
            bytes: rounded,
            _world: PhantomData,
            _e: PhantomData,
        })
    }
}

fn lock(rt: &Runtime) -> std::sync::MutexGuard<'_, Allocator> {
    match rt.allocator.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl<E: Element> Drop for SymArray<'_, E> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // Collective steps could hang while this PE unwinds; the block is simply leaked.
            return;
        }
        let rt = runtime();
        // Also a barrier: no PE frees (and later reuses) the block while another still uses it.
        let mm = sync::allreduce_minmax(rt, self.offset as u64);
        if mm.min != mm.max {
            panic!(
                "shmem: symmetric arrays were freed in different orders: PE {} freed the array at heap \
                 offset {} while PE {} freed the one at offset {}; drop SymArrays in the same order on every PE",
                mm.min_pe, mm.min, mm.max_pe, mm.max
            );
        }
        if self.bytes > 0 {
            lock(rt).free(self.offset - rt.layout.user, self.bytes);
        }
    }
}

impl<E: Element> sealed::Sealed for SymArray<'_, E> {}

// Contract of `SymmetricArray`: `offset .. offset + len * size_of::<E>()` was reserved in
// the symmetric heap for this array and stays reserved until it is dropped.
impl<E: Element> SymmetricArray<E> for SymArray<'_, E> {
    #[inline]
    fn __heap_offset(&self) -> usize {
        self.offset
    }

    #[inline]
    fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::Allocator;

    #[test]
    fn first_fit_and_coalescing() {
        let mut a = Allocator::new(1024);
        let x = a.alloc(256).unwrap();
        let y = a.alloc(256).unwrap();
        let z = a.alloc(256).unwrap();
        assert_eq!((x, y, z), (0, 256, 512));
        a.free(y, 256);
        assert_eq!(a.alloc(128).unwrap(), 256);
        a.free(256, 128);
        a.free(x, 256);
        a.free(z, 256);
        assert_eq!(a.free, vec![(0, 1024)]);
        let err = a.alloc(2048).unwrap_err().to_string();
        assert!(
            err.contains("requested 2048 bytes, 1024 bytes free"),
            "{err}"
        );
    }
}
