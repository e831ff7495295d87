//! The moves every path of the engine is built from: one unaligned load or store of a word or
//! an SSE vector ([`load`], [`store`], which test builds log), a [`pair`] of them at both ends
//! of a range ([`upto16`] for up to 16 bytes), and the fixed sets of moves loaded apart from
//! being stored ([`Moves`], [`Pair`]) that [`two_parts`] puts on the two sides of a page
//! boundary, with the words each side takes ([`by_word`], [`upper_words`]; [`across_upto16`]
//! for a copy of up to 16 bytes). Also the page size ([`PAGE`]), [`by_page`], which splits a
//! range at the destination's page boundary, and `portable_short`, the short copy of other
//! architectures (and of a test on x86-64), all words.

use super::log;

/// Bytes in a page: the unit of the address translation, which no store may straddle here.
pub(super) const PAGE: usize = 4096;

/// One unaligned load of a `T`.
///
/// # Safety
/// `p` is valid for reads of `size_of::<T>()` bytes, and they hold a valid `T`.
#[inline(always)]
pub(super) unsafe fn load<T: Copy>(p: *const u8) -> T {
    // SAFETY: per the caller.
    unsafe { p.cast::<T>().read_unaligned() }
}

/// One unaligned store of a `T` (a single instruction for the words and SSE vectors used
/// here).
///
/// # Safety
/// `p` is valid for writes of `size_of::<T>()` bytes.
#[inline(always)]
pub(super) unsafe fn store<T: Copy>(p: *mut u8, v: T) {
    log::store(p, size_of::<T>());
    // SAFETY: per the caller.
    unsafe { p.cast::<T>().write_unaligned(v) }
}

/// Copies `w <= n <= 2 w` bytes (`w` the size of a `T`): one move when `n == w`, else a move
/// at each end, the last one last. (`memcpy` moves both ends at `n == w` too: the same bytes
/// twice, the second store after a PE polling the element may have seen and reset it.)
///
/// # Safety
/// As [`copy_bytes`](super::copy_bytes), with `size_of::<T>() <= n <= 2 size_of::<T>()`.
#[inline(always)]
pub(super) unsafe fn pair<T: Copy>(dst: *mut u8, src: *const u8, n: usize) {
    let w = size_of::<T>();
    debug_assert!(w <= n && n <= 2 * w);
    // SAFETY: both moves lie inside `[0, n)` (`w <= n`). (Not through `Pair`, whose load takes
    // the second move also when it is the first: on the within-page path of every short copy
    // that cost 0.2 ns of an 8-byte put or get's 5-7.)
    unsafe {
        let a = load::<T>(src);
        if n == w {
            store(dst, a);
        } else {
            let b = load::<T>(src.add(n - w));
            store(dst, a);
            store(dst.add(n - w), b);
        }
    }
}

/// Copies `n <= 16` bytes with [`pair`]s of words.
///
/// # Safety
/// As [`copy_bytes`](super::copy_bytes), with `n <= 16`.
#[inline(always)]
pub(super) unsafe fn upto16(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: forwarded contract, each arm within its `pair`'s range.
    unsafe {
        if n >= 8 {
            pair::<u64>(dst, src, n)
        } else if n >= 4 {
            pair::<u32>(dst, src, n)
        } else if n >= 2 {
            pair::<u16>(dst, src, n)
        } else if n == 1 {
            pair::<u8>(dst, src, 1)
        }
    }
}

/// A fixed set of moves that copies `p` bytes for every `p` in the range the implementation
/// takes, loaded (into registers) apart from being stored. The last move stored is the only
/// one to touch the range's last element (1 to 8 bytes; `p` a multiple of its size).
pub(super) trait Moves {
    /// The loaded moves.
    type Regs: Copy;
    /// Loads the moves of `p` bytes at `src`.
    ///
    /// # Safety
    /// `src` is valid for reads of `p` bytes, `p` in the implementation's range.
    unsafe fn load(src: *const u8, p: usize) -> Self::Regs;
    /// Stores what [`load`](Moves::load) loaded for the same `p` at `dst`.
    ///
    /// # Safety
    /// `dst` is valid for writes of `p` bytes, `p` in the implementation's range.
    unsafe fn store(dst: *mut u8, p: usize, r: Self::Regs);
}

/// Two moves of a `T` (`w` bytes) at both ends of `w <= p <= 2 w` bytes; one when `p == w`,
/// as in [`pair`]. The first ends below the last element where `p < 2 w` or `w >= 8`.
pub(super) struct Pair<T>(std::marker::PhantomData<T>);

impl<T: Copy> Moves for Pair<T> {
    type Regs = (T, T);
    #[inline(always)]
    unsafe fn load(src: *const u8, p: usize) -> (T, T) {
        debug_assert!(size_of::<T>() <= p && p <= 2 * size_of::<T>());
        // SAFETY: both moves lie inside `[0, p)` (`w <= p`).
        unsafe { (load::<T>(src), load::<T>(src.add(p - size_of::<T>()))) }
    }
    #[inline(always)]
    unsafe fn store(dst: *mut u8, p: usize, r: (T, T)) {
        let w = size_of::<T>();
        // SAFETY: as in `load`.
        unsafe {
            store(dst, r.0);
            if p > w {
                store(dst.add(p - w), r.1);
            }
        }
    }
}

/// A copy of `n` bytes whose destination's page boundary lies `c` bytes in: `L`'s moves on
/// `[0, c)` and `U`'s on `[c, n)`, all loaded before any is stored (so that no load of the
/// copy waits on one of its own stores to the same page offset). The callers pick `L` and `U`
/// by the parts' lengths, each through a balanced tree of comparisons (at most 3 for words, 4
/// for 256-byte copies): one code path per combination. (Measured here, a copy of one part
/// after the other cost about 1 ns more at 64 bytes, and moves from both ends of the whole
/// range with those that would straddle the boundary replaced 1.3 ns more at 256. Matches on
/// ranges, which compile to a chain of comparisons from the widest down, put up to 8 taken
/// branches before a short lower part's moves: 0.3-0.5 ns more at 8 and 64 bytes, 0.8-1.4 ns
/// at 256; a jump table on the parts' size classes was slower still.)
/// The last element lies above the boundary, where `U` stores it once, last.
///
/// # Safety
/// As [`copy_bytes`](super::copy_bytes); `0 < c < n`, and `c` and `n - c` lie in the ranges `L` and
/// `U` take.
#[inline(always)]
pub(super) unsafe fn two_parts<L: Moves, U: Moves>(
    dst: *mut u8,
    src: *const u8,
    n: usize,
    c: usize,
) {
    // SAFETY: per the caller, the moves of each part lie inside it.
    unsafe {
        let low = L::load(src, c);
        let high = U::load(src.add(c), n - c);
        L::store(dst, c, low);
        U::store(dst.add(c), n - c, high);
    }
}

/// `$go!(Pair<T>)` with the word `T` whose [`Pair`] takes `0 < p < 16` bytes, picked by a
/// balanced tree of at most 3 comparisons (`$go` a macro of the caller's, naming its own
/// locals). One tree for both parts of every crossing copy.
macro_rules! by_word {
    ($p:expr, $go:ident) => {{
        let p = $p;
        if p >= 4 {
            if p >= 8 {
                $go!(Pair<u64>)
            } else {
                $go!(Pair<u32>)
            }
        } else if p >= 2 {
            $go!(Pair<u16>)
        } else {
            $go!(Pair<u8>)
        }
    }};
}
pub(super) use by_word;

/// [`two_parts`] with the words that `n - c < 16` bytes above the boundary take.
///
/// # Safety
/// As [`two_parts`], for `U` any of the words.
#[inline(always)]
pub(super) unsafe fn upper_words<L: Moves>(dst: *mut u8, src: *const u8, n: usize, c: usize) {
    debug_assert!(n - c < 16);
    macro_rules! go {
        ($u:ty) => {
            two_parts::<L, $u>(dst, src, n, c)
        };
    }
    // SAFETY: each word's moves fit `n - c` as `two_parts` needs.
    unsafe { by_word!(n - c, go) }
}

/// `part` on the bytes of the range below the destination's page boundary, then on those above
/// it, or once on the whole range when it lies within a page.
///
/// # Safety
/// As [`copy_bytes`](super::copy_bytes), `len < PAGE`, and `part` has the contract of
/// [`copy_bytes`](super::copy_bytes).
#[inline(always)]
pub(super) unsafe fn by_page(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    part: impl Fn(*mut u8, *const u8, usize),
) {
    let c = PAGE - (dst as usize & (PAGE - 1));
    if len <= c {
        part(dst, src, len)
    } else {
        part(dst, src, c);
        // SAFETY: `c < len`: the part above the boundary lies inside both ranges.
        part(unsafe { dst.add(c) }, unsafe { src.add(c) }, len - c);
    }
}

/// A copy of `n <= 16` bytes whose destination crosses a page boundary: [`two_parts`] with
/// the words each side's length takes.
///
/// # Safety
/// As [`copy_bytes`](super::copy_bytes), with `n <= 16`, and the destination crosses a page
/// boundary.
#[inline(always)]
pub(super) unsafe fn across_upto16(dst: *mut u8, src: *const u8, n: usize) {
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

/// [`short`](super::short) without vector registers (other architectures): words up to 64 bytes,
/// each word stored by one instruction, and `memcpy` beyond (whose longer copies, on glibc,
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
