//! The checks of a range, an index or a strided selection against a symmetric object, before
//! any byte moves: each panics with a message that names the operation and the values. The
//! messages' text is part of what users see (and tests check).
//!
//! Part of the object layer; uses the object contract only.

use super::SymObject;
use crate::element::Element;
use std::ops::{Bound, RangeBounds};

/// Resolves `range` against an object of `len` elements: `(start, count)`, or a panic naming the
/// range and the length.
#[inline]
#[track_caller]
pub(crate) fn resolve<R: RangeBounds<usize>>(range: &R, len: usize, op: &str) -> (usize, usize) {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e
            .checked_add(1)
            .unwrap_or_else(|| bad_range(op, start, usize::MAX, len)),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    if start > end || end > len {
        bad_range(op, start, end, len);
    }
    (start, end - start)
}

/// Heap offset of elements `range` of `target`, after checking the range against the object and
/// its element count against the local buffer's (`local_len` elements, named `what` in the panic).
#[inline]
#[track_caller]
pub(crate) fn checked_offset<E: Element, A: SymObject<E> + ?Sized, R: RangeBounds<usize>>(
    target: &A,
    range: &R,
    local_len: usize,
    op: &str,
    what: &str,
) -> usize {
    let (start, count) = resolve(range, target.__len(), op);
    if count != local_len {
        len_mismatch(op, count, what, local_len);
    }
    elem_offset::<E>(target.__heap_offset(), start)
}

/// Number of elements that `start..start+span` selects with `stride`.
#[inline]
#[track_caller]
fn strided_count(span: usize, stride: usize, op: &str, which: &str) -> usize {
    if stride == 0 {
        zero_stride(op, which);
    }
    span.div_ceil(stride)
}

/// The one check of a strided transfer: `(start, count)` of the elements that `range` with
/// `stride` selects in a symmetric object of `len` elements, after checking both strides and
/// that the local side (`local_len` elements at `local_stride`) selects as many. `sides` names
/// the symmetric and the local side in the panics (`("target", "source")` for a put).
#[inline]
#[track_caller]
pub(crate) fn strided_selection<R: RangeBounds<usize>>(
    op: &str,
    (range, len, stride): (&R, usize, usize),
    (local_len, local_stride): (usize, usize),
    (sym_side, local_side): (&str, &str),
) -> (usize, usize) {
    let (start, span) = resolve(range, len, op);
    let count = strided_count(span, stride, op, sym_side);
    let have = strided_count(local_len, local_stride, op, local_side);
    if count != have {
        strided_mismatch(op, count, local_side, have);
    }
    (start, count)
}

/// The one check of a blocked strided transfer (`ibput`, `ibget`): `(start, count)` of the
/// blocks of `block` elements that `range` holds, one starting every `stride` elements from its
/// start (the blocks that end inside the range), after checking that a block holds at least
/// one element, that neither stride is less than the block (blocks may not overlap), and that
/// the local side (`local_len` elements, a block every `local_stride`) holds as many blocks.
/// With `block == 1` this is [`strided_selection`]'s count.
#[inline]
#[track_caller]
pub(crate) fn blocked_selection<R: RangeBounds<usize>>(
    op: &str,
    (range, len, stride): (&R, usize, usize),
    (local_len, local_stride): (usize, usize),
    block: usize,
    (sym_side, local_side): (&str, &str),
) -> (usize, usize) {
    let (start, span) = resolve(range, len, op);
    if block == 0 {
        zero_block(op);
    }
    let count = blocked_count(span, stride, block, op, sym_side);
    let have = blocked_count(local_len, local_stride, block, op, local_side);
    if count != have {
        block_mismatch(op, (count, block), local_side, have);
    }
    (start, count)
}

/// Number of blocks of `block` elements, one every `stride`, that end within `span` elements.
#[inline]
#[track_caller]
fn blocked_count(span: usize, stride: usize, block: usize, op: &str, which: &str) -> usize {
    if stride < block {
        overlapping_blocks(op, which, stride, block);
    }
    if span < block {
        0
    } else {
        (span - block) / stride + 1
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn zero_block(op: &str) -> ! {
    panic!("shmem: {op}: the block size is 0; a block holds at least one element")
}

#[cold]
#[inline(never)]
#[track_caller]
fn overlapping_blocks(op: &str, which: &str, stride: usize, block: usize) -> ! {
    panic!(
        "shmem: {op}: the {which} stride {stride} is less than the block size {block}; \
         blocks may not overlap"
    )
}

#[cold]
#[inline(never)]
#[track_caller]
fn block_mismatch(op: &str, (count, block): (usize, usize), local_side: &str, have: usize) -> ! {
    panic!(
        "shmem: {op}: the symmetric range holds {count} blocks of {block} elements but the \
         {local_side} holds {have}; the block counts must match"
    )
}

#[cold]
#[inline(never)]
#[track_caller]
fn strided_mismatch(op: &str, count: usize, local_side: &str, have: usize) -> ! {
    len_mismatch(op, count, &format!("strided {local_side}"), have)
}

#[cold]
#[inline(never)]
#[track_caller]
fn bad_range(op: &str, start: usize, end: usize, len: usize) -> ! {
    if start > end {
        panic!("shmem: {op}: range {start}..{end} is reversed (start > end)")
    }
    panic!("shmem: {op}: range {start}..{end} is outside the symmetric object of length {len}")
}

/// The one index check: panics naming the operation, the index and the length unless
/// `index < len`.
#[inline]
#[track_caller]
pub(crate) fn check_index(op: &str, index: usize, len: usize) {
    if index >= len {
        bad_index(op, index, len);
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn bad_index(op: &str, index: usize, len: usize) -> ! {
    panic!("shmem: {op}: index {index} is outside the symmetric object of length {len}")
}

#[cold]
#[inline(never)]
#[track_caller]
fn zero_stride(op: &str, which: &str) -> ! {
    panic!("shmem: {op}: the {which} stride is 0; strides must be positive")
}

#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn len_mismatch(op: &str, target: usize, local_what: &str, local: usize) -> ! {
    panic!(
        "shmem: {op}: the symmetric range selects {target} elements but the {local_what} has {local}; \
         lengths must match"
    )
}

#[inline(always)]
pub(crate) fn elem_offset<E>(base: usize, index: usize) -> usize {
    base + index * size_of::<E>()
}
