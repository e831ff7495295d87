//! The copies shorter than [`VECTOR_MIN`](super::VECTOR_MIN) bytes, all the engine's own
//! straight-line moves ([`copy_short`]): within a page of the destination, moves of one width
//! from both ends, all loaded before any is stored ([`short`]: the SSE2 and AVX2 moves of
//! `x86`, or [`portable_short`] on other architectures); across a page boundary, the same moves
//! on each side of it, so that no store straddles it ([`across_upto16`], [`copy_across_page`]).

#[cfg(any(test, not(target_arch = "x86_64")))]
use super::log;
use super::moves::{PAGE, Pair, by_page, by_word, upper_words};
#[cfg(any(test, not(target_arch = "x86_64")))]
use super::moves::{load, store, upto16};
#[cfg(target_arch = "x86_64")]
use super::{
    plan::{Plan, plan},
    x86,
};

/// A copy of fewer than [`VECTOR_MIN`](super::VECTOR_MIN) bytes: [`short`]'s moves within a page of
/// the destination; across a boundary, up to 16 bytes [`across_upto16`] (here, where a call would
/// cost as much as the moves), else [`copy_across_page`].
///
/// # Safety
/// As [`copy_bytes`](super::copy_bytes), and `len < VECTOR_MIN`.
#[inline(never)]
pub(super) unsafe fn copy_short(dst: *mut u8, src: *const u8, len: usize) {
    // SAFETY: forwarded contract.
    unsafe {
        if (dst as usize & (PAGE - 1)) + len <= PAGE {
            short(dst, src, len)
        } else if len <= 16 {
            across_upto16(dst, src, len)
        } else {
            copy_across_page(dst, src, len)
        }
    }
}

/// A short copy whose destination crosses a page boundary. (`memcpy`'s overlapping moves from
/// both ends would put one store across the boundary, about 10 ns on AMD Zen 4 where a
/// 256-byte copy takes 3 ns; a load across a boundary of the source costs little, so only the
/// destination counts.) With AVX2, [`x86::across_page_avx2`]; without, two [`short`] copies
/// that end and start at the boundary. Either way an aligned element never straddles the
/// boundary, so the last lies in the upper part and is stored last, once.
///
/// # Safety
/// As [`copy_bytes`](super::copy_bytes), `len < VECTOR_MIN`, and the destination crosses a page
/// boundary.
#[inline(never)]
unsafe fn copy_across_page(dst: *mut u8, src: *const u8, len: usize) {
    // SAFETY: forwarded contract; a plan other than `Memcpy` exists only with AVX2.
    unsafe {
        #[cfg(target_arch = "x86_64")]
        if plan() != Plan::Memcpy {
            return x86::across_page_avx2(dst, src, len);
        }
        by_parts(dst, src, len)
    }
}

/// [`copy_across_page`] without AVX2: [`short`] below the boundary, then above it. (Its own
/// function, so that the register saves of its calls stay off the AVX2 path.)
///
/// # Safety
/// As [`copy_across_page`].
#[inline(never)]
unsafe fn by_parts(dst: *mut u8, src: *const u8, len: usize) {
    // SAFETY: forwarded contract; `by_page` passes parts of the range.
    unsafe { by_page(dst, src, len, |d, s, n| short(d, s, n)) }
}

/// A copy of `n <= 16` bytes whose destination crosses a page boundary:
/// [`two_parts`](super::moves::two_parts) with the words each side's length takes.
///
/// # Safety
/// As [`copy_bytes`](super::copy_bytes), with `n <= 16`, and the destination crosses a page
/// boundary.
#[inline(always)]
unsafe fn across_upto16(dst: *mut u8, src: *const u8, n: usize) {
    let c = PAGE - (dst as usize & (PAGE - 1));
    debug_assert!(n <= 16 && 0 < c && c < n);
    macro_rules! go {
        ($l:ty) => {
            upper_words::<$l>(dst, src, n, c)
        };
    }
    // SAFETY: forwarded contract; each word's moves fit `c` (below 16) as `two_parts` needs.
    unsafe { by_word!(c, go) }
}

/// Copies `n < VECTOR_MIN` bytes with moves inside the range, all of one width for a given
/// `n`, the last of them the only one to touch the range's last `w` bytes (its width); all
/// loaded before any is stored up to 512 bytes with AVX2, as glibc's short copies are, so that
/// no load waits on an earlier store to its page offset.
///
/// # Safety
/// As [`copy_bytes`](super::copy_bytes), with `n < VECTOR_MIN`.
#[inline(always)]
unsafe fn short(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: forwarded contract, with each callee's length range; a plan other than `Memcpy`
    // exists only with AVX2.
    unsafe {
        #[cfg(target_arch = "x86_64")]
        if n <= 64 {
            x86::upto64(dst, src, n)
        } else if plan() != Plan::Memcpy {
            x86::upto512_avx2(dst, src, n)
        } else {
            x86::upto512_sse(dst, src, n)
        }
        #[cfg(not(target_arch = "x86_64"))]
        portable_short(dst, src, n)
    }
}

/// [`short`] without vector registers (other architectures): words up to 64 bytes, each
/// word stored by one instruction, and `memcpy` beyond (whose longer copies, on glibc,
/// end with moves from the end that no earlier move reaches).
///
/// # Safety
/// As [`copy_bytes`](super::copy_bytes).
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(never)]
pub(super) unsafe fn portable_short(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: forwarded contract; every word at an offset `o` with `o + 8 <= n`.
    unsafe {
        match n {
            0..=16 => upto16(dst, src, n),
            17..=64 => {
                let mut o = 0;
                while o + 8 < n {
                    store(dst.add(o), load::<u64>(src.add(o)));
                    o += 8;
                }
                store(dst.add(n - 8), load::<u64>(src.add(n - 8)));
            }
            _ => {
                log::libc(dst, n);
                std::ptr::copy_nonoverlapping(src, dst, n)
            }
        }
    }
}
