//! The x86-64 moves and loops: SSE2, which every x86-64 has, and AVX2 where the plan found it.
//! The straight-line moves of short copies up to 512 bytes ([`upto64`], [`upto512_avx2`],
//! [`upto512_sse`]) and of short copies across a page boundary ([`across_page_avx2`]), and the
//! AVX2 vector loops of long copies, from the top down or the bottom up ([`backward_avx2`],
//! [`forward_avx2`], picked by distance in [`vector_by_distance`]), with cached stores or with
//! non-temporal ones (`NT`).

use std::arch::x86_64::{
    __m128i, __m256i, _mm_sfence, _mm256_loadu_si256, _mm256_store_si256, _mm256_storeu_si256,
    _mm256_stream_si256,
};

use super::log;
use super::moves::{Moves, PAGE, Pair, by_word, load, pair, store, two_parts, upper_words, upto16};

/// Vector width: 32 bytes.
const V: usize = 32;

/// 16 bytes, the SSE vector width.
const W16: usize = 16;

/// [`short`](super::short) for `n <= 64` (SSE2, which every x86-64 has): words up to 15
/// bytes, a [`pair`] of 16-byte moves up to 32, two 16-byte moves from each end beyond,
/// all loaded first.
///
/// # Safety
/// As [`copy_bytes`](super::copy_bytes), with `n <= 64`.
#[inline(always)]
pub(super) unsafe fn upto64(dst: *mut u8, src: *const u8, n: usize) {
    debug_assert!(n <= 4 * W16);
    // SAFETY: forwarded contract; for 33..=64 the four moves lie at 0, 16, n - 32 and
    // n - 16, inside the range.
    unsafe {
        match n {
            0..16 => upto16(dst, src, n),
            16..=32 => pair::<__m128i>(dst, src, n),
            _ => {
                let a = load::<__m128i>(src);
                let b = load::<__m128i>(src.add(W16));
                let c = load::<__m128i>(src.add(n - 2 * W16));
                let d = load::<__m128i>(src.add(n - W16));
                store(dst, a);
                store(dst.add(W16), b);
                store(dst.add(n - 2 * W16), c);
                store(dst.add(n - W16), d);
            }
        }
    }
}

/// [`copy_across_page`](super::copy_across_page) with AVX2 (and more than 16 bytes): up to
/// 256 bytes [`across_parts`], beyond that the vector loops.
///
/// # Safety
/// AVX2 is available; as [`copy_bytes`](super::copy_bytes), with `len < VECTOR_MIN`; the
/// destination crosses a page boundary.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn across_page_avx2(dst: *mut u8, src: *const u8, len: usize) {
    let c = PAGE - (dst as usize & (PAGE - 1));
    // SAFETY: forwarded contract, with each callee's length range; `0 < c < len`.
    unsafe {
        if len <= 2 * V {
            across_parts::<false>(dst, src, len, c)
        } else if len <= 8 * V {
            across_parts::<true>(dst, src, len, c)
        } else {
            vector_by_distance::<false>(dst, src, len)
        }
    }
}

/// [`two_parts`] for `n <= 256` bytes whose destination's page boundary lies `0 < c < n`
/// bytes in, with the moves each side's length takes: four 32-byte ones from each end
/// above 128 bytes, two above 64, a [`Pair`] of 32-byte vectors, 16-byte ones or words
/// below. `BIG` (`n > 64`) leaves the first two out of shorter copies' code.
///
/// # Safety
/// AVX2 is available; as [`copy_bytes`](super::copy_bytes), with `n <= 256` (64 unless
/// `BIG`) and `0 < c < n`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn across_parts<const BIG: bool>(dst: *mut u8, src: *const u8, n: usize, c: usize) {
    debug_assert!(n <= if BIG { 8 * V } else { 2 * V } && 0 < c && c < n);
    /// [`two_parts`] with the `U` that `n - c` bytes take.
    #[inline(always)]
    unsafe fn upper<L: Moves, const BIG: bool>(dst: *mut u8, src: *const u8, n: usize, c: usize) {
        // SAFETY: each arm's moves fit `n - c` as `two_parts` needs.
        unsafe {
            let u = n - c;
            if u >= V {
                if BIG && u > 2 * V {
                    if u > 4 * V {
                        two_parts::<L, Ends4>(dst, src, n, c)
                    } else {
                        two_parts::<L, Ends2>(dst, src, n, c)
                    }
                } else {
                    two_parts::<L, Pair<__m256i>>(dst, src, n, c)
                }
            } else if u >= W16 {
                two_parts::<L, Pair<__m128i>>(dst, src, n, c)
            } else {
                upper_words::<L>(dst, src, n, c)
            }
        }
    }
    // SAFETY: each arm's moves fit `c` as `two_parts` needs.
    unsafe {
        if c >= W16 {
            if c >= V {
                if BIG && c > 2 * V {
                    if c > 4 * V {
                        upper::<Ends4, BIG>(dst, src, n, c)
                    } else {
                        upper::<Ends2, BIG>(dst, src, n, c)
                    }
                } else {
                    upper::<Pair<__m256i>, BIG>(dst, src, n, c)
                }
            } else {
                upper::<Pair<__m128i>, BIG>(dst, src, n, c)
            }
        } else {
            macro_rules! go {
                ($l:ty) => {
                    upper::<$l, BIG>(dst, src, n, c)
                };
            }
            by_word!(c, go)
        }
    }
}

/// Two 32-byte moves from each end of `64 < p <= 128` bytes. The front ones end at 64,
/// below the last element (`p` and 64 are multiples of its size); the back ones are
/// stored in order, the last `[p - 32, p)`.
struct Ends2;

impl Moves for Ends2 {
    type Regs = ([__m256i; 2], [__m256i; 2]);
    #[inline(always)]
    unsafe fn load(src: *const u8, p: usize) -> Self::Regs {
        debug_assert!(2 * V < p && p <= 4 * V);
        // SAFETY: every move is at an offset `o` with `o + V <= p` (`p > 2 V`).
        unsafe {
            (
                [ld(src, 0), ld(src, V)],
                [ld(src, p - 2 * V), ld(src, p - V)],
            )
        }
    }
    #[inline(always)]
    unsafe fn store(dst: *mut u8, p: usize, r: Self::Regs) {
        // SAFETY: as in `load`.
        unsafe { store_ends(dst, p, r) }
    }
}

/// Four 32-byte moves from each end of `128 < p <= 256` bytes, as [`Ends2`] does two.
struct Ends4;

impl Moves for Ends4 {
    type Regs = ([__m256i; 4], [__m256i; 4]);
    #[inline(always)]
    unsafe fn load(src: *const u8, p: usize) -> Self::Regs {
        debug_assert!(4 * V < p && p <= 8 * V);
        // SAFETY: every move is at an offset `o` with `o + V <= p` (`p > 4 V`).
        unsafe {
            let f = |i: usize| ld(src, i * V);
            let b = |i: usize| ld(src, p - i * V);
            ([f(0), f(1), f(2), f(3)], [b(4), b(3), b(2), b(1)])
        }
    }
    #[inline(always)]
    unsafe fn store(dst: *mut u8, p: usize, r: Self::Regs) {
        // SAFETY: as in `load`.
        unsafe { store_ends(dst, p, r) }
    }
}

/// Eight 32-byte moves from each end of `256 < p <= 512` bytes, as [`Ends2`] does two.
struct Ends8;

impl Moves for Ends8 {
    type Regs = ([__m256i; 8], [__m256i; 8]);
    #[inline(always)]
    unsafe fn load(src: *const u8, p: usize) -> Self::Regs {
        debug_assert!(8 * V < p && p <= 16 * V);
        // SAFETY: every move is at an offset `o` with `o + V <= p` (`p > 8 V`).
        unsafe {
            let f = |i: usize| ld(src, i * V);
            let b = |i: usize| ld(src, p - i * V);
            (
                [f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7)],
                [b(8), b(7), b(6), b(5), b(4), b(3), b(2), b(1)],
            )
        }
    }
    #[inline(always)]
    unsafe fn store(dst: *mut u8, p: usize, r: Self::Regs) {
        // SAFETY: as in `load`.
        unsafe { store_ends(dst, p, r) }
    }
}

/// Stores `K` 32-byte moves at each end of `p` bytes at `dst` (loaded from the same offsets
/// of the source): the front moves, then the back ones in order, the last `[p - 32, p)`.
/// The front moves end at `K V`, below the last element (`p` and `K V` are multiples of
/// its size). (The loads are written out in each caller: arrays filled by a loop or
/// `array::from_fn` went through the stack.)
///
/// # Safety
/// AVX2 is available; `K V < p <= 2 K V` (every move at an offset `o` with `o + V <= p`),
/// and `dst` is valid for writes of `p` bytes.
#[inline(always)]
unsafe fn store_ends<const K: usize>(
    dst: *mut u8,
    p: usize,
    (front, back): ([__m256i; K], [__m256i; K]),
) {
    // SAFETY: per the caller.
    unsafe {
        for (i, v) in front.into_iter().enumerate() {
            st(dst, i * V, v);
        }
        for (i, v) in back.into_iter().enumerate() {
            st(dst, p - (K - i) * V, v);
        }
    }
}

/// A 32-byte load at `src + o`.
///
/// # Safety
/// AVX2 is available (the caller's `target_feature`); `src + o` is valid for 32 bytes.
#[inline(always)]
unsafe fn ld(src: *const u8, o: usize) -> __m256i {
    // SAFETY: per the caller.
    unsafe { _mm256_loadu_si256(src.add(o).cast::<__m256i>()) }
}

/// A 32-byte store at `dst + o`.
///
/// # Safety
/// AVX2 is available; `dst + o` is valid for writes of 32 bytes.
#[inline(always)]
unsafe fn st(dst: *mut u8, o: usize, v: __m256i) {
    // SAFETY: per the caller.
    unsafe {
        log::store(dst.add(o), V);
        _mm256_storeu_si256(dst.add(o).cast::<__m256i>(), v)
    }
}

/// An aligned 32-byte store at `dst + o` of the vector loops: non-temporal with `NT`, cached
/// otherwise.
///
/// # Safety
/// AVX2 is available; `dst + o` is 32-byte aligned and valid for writes of 32 bytes.
#[inline(always)]
unsafe fn st_aligned<const NT: bool>(dst: *mut u8, o: usize, v: __m256i) {
    // SAFETY: per the caller.
    unsafe {
        log::store(dst.add(o), V);
        if NT {
            _mm256_stream_si256(dst.add(o).cast::<__m256i>(), v)
        } else {
            _mm256_store_si256(dst.add(o).cast::<__m256i>(), v)
        }
    }
}

/// [`short`](super::short) for `65..=512` bytes with AVX2: `K` 32-byte moves from each
/// end (`K` = 2, 4 or 8), all loaded first, the front ones stored first.
///
/// # Safety
/// AVX2 is available; as [`copy_bytes`](super::copy_bytes), with `64 < n <= 512`.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn upto512_avx2(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: forwarded contract, each arm within its moves' range.
    unsafe {
        if n <= 4 * V {
            moves::<Ends2>(dst, src, n)
        } else if n <= 8 * V {
            moves::<Ends4>(dst, src, n)
        } else {
            moves::<Ends8>(dst, src, n)
        }
    }
}

/// `M`'s moves of `n` bytes, all loaded first.
///
/// # Safety
/// As [`copy_bytes`](super::copy_bytes), with `n` in `M`'s range.
#[inline(always)]
unsafe fn moves<M: Moves>(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: per the caller.
    unsafe { M::store(dst, n, M::load(src, n)) }
}

/// [`short`](super::short) for `65..=512` bytes without AVX2: 16-byte moves upwards, then
/// the last 16 bytes.
///
/// # Safety
/// As [`copy_bytes`](super::copy_bytes), with `16 <= n`.
#[inline(never)]
pub(super) unsafe fn upto512_sse(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: every move is at an offset `o` with `o + 16 <= n`.
    unsafe {
        let mut o = 0;
        while o + W16 < n {
            store(dst.add(o), load::<__m128i>(src.add(o)));
            o += W16;
        }
        store(dst.add(n - W16), load::<__m128i>(src.add(n - W16)));
    }
}

/// Whether a 32-byte access at `p` would straddle a page boundary.
#[inline(always)]
fn straddles(p: *const u8) -> bool {
    (p as usize & (PAGE - 1)) > PAGE - 32
}

/// The vector loop whose loads never meet a store just made to the same page offset: forwards
/// when the destination lies less than half a page below the source (in page offset),
/// backwards otherwise. `NT`: the aligned stores of the loops are non-temporal (see
/// [`backward_avx2`]).
///
/// # Safety
/// As [`copy_bytes`](super::copy_bytes); AVX2 is available and `len >= 64`.
#[inline(always)]
pub(super) unsafe fn vector_by_distance<const NT: bool>(dst: *mut u8, src: *const u8, len: usize) {
    let distance = (dst as usize).wrapping_sub(src as usize) & (PAGE - 1);
    // SAFETY: forwarded contract.
    unsafe {
        if distance >= PAGE / 2 {
            forward_avx2::<NT>(dst, src, len)
        } else {
            backward_avx2::<NT>(dst, src, len)
        }
    }
}

/// Copies `len >= 64` non-overlapping bytes from the top down: aligned 32-byte stores four
/// at a time, then one at a time, then the bytes below the first 32-byte boundary of the
/// destination, and last the bytes above its last boundary (loaded first). No store
/// straddles a page boundary (about 10 ns each on AMD Zen 4): the stores are aligned, and
/// the two ends are one unaligned 32-byte move each where that stays within a page,
/// [`upto64`]'s moves inside the end's 32-byte block otherwise. An end on a 32-byte
/// boundary is left to the aligned stores, so the last element is stored once, last.
///
/// `NT`: the loops' aligned stores are non-temporal (they bypass the caches, and need not
/// read the lines they fill), followed by a store fence, so that the ends, stored after it
/// with cached stores, are seen after them: the last element is still seen last, and a
/// release store after the copy orders after all of it.
///
/// # Safety
/// AVX2 is available; `src` is valid for reads and `dst` for writes of `len >= 64` bytes;
/// the ranges do not overlap.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn backward_avx2<const NT: bool>(dst: *mut u8, src: *const u8, len: usize) {
    debug_assert!(len >= 2 * V);
    let head = (V - (dst as usize & (V - 1))) & (V - 1);
    let tail = (dst as usize).wrapping_add(len) & (V - 1);
    let end = len - tail;
    // SAFETY: `head + tail <= len` (len >= 64); the ends cover `[0, head)` (or `[0, 32)`)
    // and `[end, len)` (or `[len - 32, len)`); every vector offset `o` in the loops
    // satisfies `head <= o && o + V <= end` and makes `dst + o` a multiple of 32 (both
    // ends are; `end - V` too, where the loop starts when the end is on a boundary, and
    // `len - V` then); loads are unaligned.
    unsafe {
        let load = |o: usize| _mm256_loadu_si256(src.add(o).cast::<__m256i>());
        let store = |o: usize, v| {
            log::store(dst.add(o), V);
            _mm256_store_si256(dst.add(o).cast::<__m256i>(), v)
        };
        let storeu = |o: usize, v| {
            log::store(dst.add(o), V);
            _mm256_storeu_si256(dst.add(o).cast::<__m256i>(), v)
        };
        let put = |o: usize, v| st_aligned::<NT>(dst, o, v);
        // The top 32 bytes, loaded now (before any store can alias them) and stored last:
        // the last element is then the last store even where the end is on a boundary.
        let top = (!straddles(dst.add(len - V))).then(|| load(len - V));
        let mut e = if tail == 0 { end - V } else { end };
        while e >= head + 4 * V {
            e -= 4 * V;
            let (a, b, c, d) = (load(e + 3 * V), load(e + 2 * V), load(e + V), load(e));
            put(e + 3 * V, a);
            put(e + 2 * V, b);
            put(e + V, c);
            put(e, d);
        }
        while e > head {
            e -= V;
            put(e, load(e));
        }
        if NT {
            _mm_sfence();
        }
        if head == 0 {
        } else if straddles(dst) {
            upto64(dst, src, head);
        } else {
            storeu(0, load(0));
        }
        match top {
            Some(v) if tail == 0 => store(len - V, v),
            Some(v) => storeu(len - V, v),
            // (An end on a boundary never straddles: `top` is `Some` there.)
            None => upto64(dst.add(end), src.add(end), tail),
        }
    }
}

/// Copies `len >= 64` non-overlapping bytes from the bottom up, the mirror of
/// [`backward_avx2`]: the bytes below the first 32-byte boundary of the destination, aligned
/// stores four at a time, then one at a time, then the bytes above the last boundary. `NT`:
/// as in [`backward_avx2`]; the loops then leave an end on a boundary to one cached store
/// after the fence.
///
/// # Safety
/// As [`backward_avx2`].
#[target_feature(enable = "avx2")]
pub(super) unsafe fn forward_avx2<const NT: bool>(dst: *mut u8, src: *const u8, len: usize) {
    debug_assert!(len >= 2 * V);
    let head = (V - (dst as usize & (V - 1))) & (V - 1);
    let tail = (dst as usize).wrapping_add(len) & (V - 1);
    let end = len - tail;
    // SAFETY: as in `backward_avx2`: the vector offsets `s` satisfy `head <= s` and
    // `s + V <= end`, with `dst + s` a multiple of 32.
    unsafe {
        let load = |o: usize| _mm256_loadu_si256(src.add(o).cast::<__m256i>());
        let store = |o: usize, v| {
            log::store(dst.add(o), V);
            _mm256_store_si256(dst.add(o).cast::<__m256i>(), v)
        };
        let storeu = |o: usize, v| {
            log::store(dst.add(o), V);
            _mm256_storeu_si256(dst.add(o).cast::<__m256i>(), v)
        };
        // As in `backward_avx2`: an end on a boundary is stored once, by the loop.
        if head == 0 {
        } else if straddles(dst) {
            upto64(dst, src, head);
        } else {
            storeu(0, load(0));
        }
        let put = |o: usize, v| st_aligned::<NT>(dst, o, v);
        // Where the loops' stores end: before the last vector with non-temporal stores and an
        // end on a boundary (that vector, holding the last element, is stored after the fence).
        let last = if NT && tail == 0 { end - V } else { end };
        let mut s = head;
        while s + 4 * V <= last {
            let (a, b, c, d) = (load(s), load(s + V), load(s + 2 * V), load(s + 3 * V));
            put(s, a);
            put(s + V, b);
            put(s + 2 * V, c);
            put(s + 3 * V, d);
            s += 4 * V;
        }
        while s < last {
            put(s, load(s));
            s += V;
        }
        if NT {
            _mm_sfence();
            if last < end {
                store(last, load(last));
            }
        }
        if tail == 0 {
        } else if straddles(dst.add(len - V)) {
            upto64(dst.add(end), src.add(end), tail);
        } else {
            storeu(len - V, load(len - V));
        }
    }
}
