//! The memory layout of the symmetric heap: where each region starts, as byte offsets from the
//! heap base. Identical on every PE because every PE runs the same program.
//!
//! ```text
//! 0               reserved            statics             user                total
//! | (team segment's offsets)       | #[symmetric] statics | World::alloc heap |
//! ```
//!
//! Offsets below `reserved` name the team segment (the runtime's sync area and team blocks, a
//! mapping of its own: `mem::segment::SEGMENT`); the heap mapping's bytes there stay unused.
//!
//! Part of the memory layer: uses nothing of the crate. Pure arithmetic (no FFI), so its tests also
//! run under Miri.

/// Heap alignment of every symmetric object: a cache line, so that objects never share one.
pub(crate) const OBJECT_ALIGN: usize = 64;
/// The page size the regions are rounded to.
pub(crate) const PAGE: usize = 4096;

/// Where each part of the symmetric heap lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeapLayout {
    /// Start of the statics region (after the offsets of the team segment).
    pub(crate) statics: usize,
    /// Start of the user heap (`World::alloc`).
    pub(crate) user: usize,
    /// Size of the user heap.
    pub(crate) user_len: usize,
    /// Total mapped bytes.
    pub(crate) total: usize,
}

impl HeapLayout {
    /// The layout for `reserved` bytes of runtime state, `statics_len` bytes of statics and a
    /// user heap of at least `user_len` bytes; `None` when the sizes overflow.
    pub(crate) fn new(reserved: usize, statics_len: usize, user_len: usize) -> Option<HeapLayout> {
        let statics = reserved.checked_next_multiple_of(OBJECT_ALIGN)?;
        let user = statics
            .checked_add(statics_len)?
            .checked_next_multiple_of(PAGE)?;
        let user_len = user_len.checked_next_multiple_of(PAGE)?;
        let total = user.checked_add(user_len)?;
        (total <= isize::MAX as usize).then_some(HeapLayout {
            statics,
            user,
            user_len,
            total,
        })
    }
}

/// Where an object of alignment `align` goes at or after `cursor`: on a cache line of its own,
/// so that two objects never share one (no false sharing between, say, a lock word and a
/// counter that different PEs hammer).
pub(crate) fn place(cursor: usize, align: usize) -> usize {
    cursor.next_multiple_of(align.max(OBJECT_ALIGN))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_follow_each_other_aligned() {
        let l = HeapLayout::new(8192 + 100, 10, 5000).expect("fits");
        assert_eq!(l.statics, 8192 + 128);
        assert_eq!(l.user, 3 * PAGE);
        assert_eq!(l.user_len, 2 * PAGE);
        assert_eq!(l.total, 5 * PAGE);
    }

    #[test]
    fn no_statics_and_empty_user_heap() {
        let l = HeapLayout::new(0, 0, 0).expect("fits");
        assert_eq!((l.statics, l.user, l.user_len, l.total), (0, 0, 0, 0));
    }

    #[test]
    fn overflow_is_none() {
        assert_eq!(HeapLayout::new(usize::MAX - 3, 0, 0), None);
        assert_eq!(HeapLayout::new(0, usize::MAX, 0), None);
        assert_eq!(HeapLayout::new(0, 0, usize::MAX), None);
        assert_eq!(HeapLayout::new(PAGE, 0, isize::MAX as usize), None);
    }

    #[test]
    fn place_keeps_objects_on_their_own_cache_lines() {
        assert_eq!(place(0, 1), 0);
        assert_eq!(place(1, 1), 64);
        assert_eq!(place(64, 8), 64);
        assert_eq!(place(65, 256), 256);
        assert_eq!(place(4097, 4096), 8192);
    }
}
