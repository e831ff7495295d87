//! The symmetric heap's allocator: first fit over the user heap with a coalescing free list.
//!
//! Every PE runs the same sequence of collective allocations and frees, so this deterministic
//! allocator hands out the same offsets everywhere and a remote address is just
//! `peer base + offset`. Offsets are relative to the start of the user heap.
//!
//! Part of the memory layer: uses `error` and `mem::layout` only. Pure arithmetic (no FFI), so its
//! tests also run under Miri.

use crate::error::{Error, Result};
use crate::mem::layout::OBJECT_ALIGN;

/// First-fit allocator over the user heap with coalescing free list. Offsets are relative to the
/// start of the user heap.
#[derive(Debug)]
pub(crate) struct Allocator {
    /// Free blocks `(start, len)`, sorted by start, never adjacent.
    free: Vec<(usize, usize)>,
    total: usize,
    /// No byte at or above this offset was ever handed out: those pages still read as zero and
    /// cost no memory until touched, so a new block there needs no zeroing.
    clean_from: usize,
}

impl Allocator {
    pub(crate) fn new(total: usize) -> Allocator {
        Allocator {
            free: vec![(0, total)],
            total,
            clean_from: 0,
        }
    }

    /// Marks the block `[start, start + len)`, just handed out, as used, and returns how many of
    /// its leading bytes may still hold data of an earlier block: the rest was never handed out
    /// and reads as zero, so zeroing it would only commit memory the program may never touch.
    pub(crate) fn used_prefix(&mut self, start: usize, len: usize) -> usize {
        let dirty = self.clean_from.saturating_sub(start).min(len);
        self.clean_from = self.clean_from.max(start.saturating_add(len));
        dirty
    }

    /// The free bytes, the largest free range and the number of free ranges.
    pub(crate) fn stats(&self) -> (usize, usize, usize) {
        (self.free_bytes(), self.largest_free(), self.free.len())
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

    /// Allocates `len` bytes (a multiple of `OBJECT_ALIGN`) at an offset `o` with
    /// `(o + phase) % align == 0` (`align` a power of two at least `OBJECT_ALIGN`, `phase` the
    /// address of offset 0 modulo `align`). The gap before the block stays free.
    pub(crate) fn alloc_aligned(
        &mut self,
        len: usize,
        align: usize,
        phase: usize,
    ) -> Result<usize> {
        debug_assert!(align.is_power_of_two() && align >= OBJECT_ALIGN);
        let fit = |&(s, l): &(usize, usize)| -> Option<usize> {
            let at = (s + phase).checked_next_multiple_of(align)? - phase;
            (at.checked_add(len)? <= s + l).then_some(at)
        };
        let Some((i, at)) = self
            .free
            .iter()
            .enumerate()
            .find_map(|(i, b)| fit(b).map(|at| (i, at)))
        else {
            return Err(Error::HeapExhausted {
                requested: len,
                free: self.free_bytes(),
                largest_free: self.largest_free(),
                total: self.total,
            });
        };
        self.take_from(i, at, len);
        Ok(at)
    }

    /// Reserves exactly `[start, start + len)`, which must lie inside one free block (as a block
    /// just freed does). Returns false when it does not.
    pub(crate) fn take(&mut self, start: usize, len: usize) -> bool {
        match self
            .free
            .iter()
            .position(|&(s, l)| s <= start && start + len <= s + l)
        {
            Some(i) => {
                self.take_from(i, start, len);
                true
            }
            None => false,
        }
    }

    /// Cuts `[at, at + len)` out of free block `i`, which contains it.
    fn take_from(&mut self, i: usize, at: usize, len: usize) {
        let (s, l) = self.free[i];
        let before = (s, at - s);
        let after = (at + len, s + l - (at + len));
        let mut keep = Vec::with_capacity(2);
        if before.1 > 0 {
            keep.push(before);
        }
        if after.1 > 0 {
            keep.push(after);
        }
        self.free.splice(i..=i, keep);
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

#[cfg(test)]
mod tests {
    use super::Allocator;

    #[test]
    fn aligned_alloc_and_take() {
        let mut a = Allocator::new(8192);
        assert_eq!(a.alloc(64).unwrap(), 0);
        // Offset 0 sits at address phase 64 modulo 1024: the block starts at 960.
        let x = a.alloc_aligned(128, 1024, 64).unwrap();
        assert_eq!((x + 64) % 1024, 0);
        assert_eq!(x, 960);
        // The gap before it stays free and is used first.
        assert_eq!(a.alloc(64).unwrap(), 64);
        a.free(x, 128);
        assert!(a.take(x, 128));
        assert!(!a.take(x, 128), "already taken");
        a.free(x, 128);
        a.free(0, 64);
        a.free(64, 64);
        assert_eq!(a.free, vec![(0, 8192)]);
        assert!(a.alloc_aligned(64, 16384, 0).is_ok());
        assert!(a.alloc_aligned(64, 16384, 64).is_err());
    }

    #[test]
    fn only_blocks_used_before_need_zeroing() {
        let mut a = Allocator::new(1 << 20);
        let x = a.alloc(4096).expect("fits");
        assert_eq!(a.used_prefix(x, 4096), 0, "a fresh heap is all zero");
        let y = a.alloc(8192).expect("fits");
        assert_eq!(a.used_prefix(y, 8192), 0);
        a.free(x, 4096);
        // First fit reuses the freed block: all of it held data.
        let z = a.alloc(4096).expect("fits");
        assert_eq!(z, x);
        assert_eq!(a.used_prefix(z, 4096), 4096);
        // A block that straddles the end of what was ever used: only its head.
        a.free(y, 8192);
        let w = a.alloc(16384).expect("fits");
        assert_eq!(w, y);
        assert_eq!(a.used_prefix(w, 16384), 8192);
        assert_eq!(a.used_prefix(w + 16384, 64), 0);
    }

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
