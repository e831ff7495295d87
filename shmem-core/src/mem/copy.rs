//! The copy engine of the direct path: how bytes move between a user's buffer and a peer's
//! heap mapped into this process (a put or get to a PE on this node), and in the collectives.
//!
//! # Why not just `memcpy`
//! glibc's `memcpy` copies large blocks with `rep movsb`. On AMD Zen CPUs (the EPYCs most HPC
//! systems run) `rep movsb` stalls when the destination lies just past the source modulo 4096
//! bytes (the CPU takes each load for a possible alias of an earlier store to the same page
//! offset; glibc bug 30994). Where that happens depends only on where the allocator put the
//! user's buffer, so a put from an ordinary `Vec` can be 25-50x slower than the same put from
//! a buffer 64 bytes further on. Measured on this project's EPYC (ns, best of 5 loops, source
//! page-aligned; distance = (destination - source) mod 4096):
//!
//! | size | memcpy, distance 0 | memcpy, distance 1 or 8 | this engine, distance 1 or 8 |
//! |---|---:|---:|---:|
//! | 4 KiB | 42 | 1141-1159 | 54 |
//! | 16 KiB | 156 | 4650-4689 | 179 |
//! | 64 KiB | 1137 | 18765-18807 | 1130 |
//! | 256 KiB | 4661 | 75193-75293 | 4605 |
//!
//! A second cost comes from where the destination sits in its page: a store that straddles a
//! 4 KiB page boundary costs about 10 ns on this EPYC (two address translations for one
//! store), and `memcpy`'s short copies end with overlapping *unaligned* stores, so a 64-byte
//! copy into a buffer that crosses a page takes 22 ns instead of 2.4 (ns, pure copies in a
//! loop, best of 15; a = source page offset, d = distance):
//!
//! | size | memcpy, no boundary | memcpy, destination crosses (a, d) | this engine, same |
//! |---|---:|---:|---:|
//! | 64 B | 2.4 | 22.7 (4093, 4064) | 4.3 |
//! | 256 B | 3.0 | 16.9 (4093, 4000) | 5.4 |
//! | 1000 B | 9.7 | 25.1 (4093, 4088) | 11.4 |
//!
//! A load that straddles a page costs little by comparison, so only the destination counts.
//!
//! # What it does
//! The plan is chosen once, at run time, from what the CPU is (as glibc and UCX choose their
//! copy routines from CPUID):
//! - **Aliasing window, any x86-64 with AVX2.** Copies of at least [`VECTOR_MIN`] bytes whose
//!   distance modulo 4096 is in `1..64` go *backwards* with 32-byte vector loads and aligned
//!   stores: going down, a load never has the page offset of a store still in flight, so
//!   nothing stalls. Intel CPUs have the same 4 KiB aliasing penalty for loads behind stores,
//!   so this serves them too.
//! - **AMD (Zen) with AVX2, other distances.** Copies from [`VECTOR_MIN`] up to [`VECTOR_MAX`]
//!   bytes (less where the last-level cache is under 32 MiB) also take the vector loops,
//!   backwards when the destination lies less than half a page above the source (in page
//!   offset), forwards otherwise, so that no load meets a store
//!   just made to its page offset: measured here they beat `rep movsb` by about 15% at 1-8 KiB
//!   (4 KiB: 35 ns against 41 ns), and glibc's own loop for 513 B - 1 KiB at the distances
//!   where its loads meet its stores (1000 B: 11.4 ns at worst against 25), and by 1.5-3% at
//!   1-4 MiB. Larger copies stay with glibc, which switches to non-temporal stores for very
//!   large ones.
//! - **Copies shorter than [`VECTOR_MIN`]** are this engine's own straight-line moves, as
//!   `memcpy`'s short copies are: moves of one width from both ends (words up to 15 bytes,
//!   16-byte vectors up to 64, 32-byte ones with AVX2 up to 512), all loaded before any is
//!   stored. Where the destination crosses a page boundary, no store straddles it: up to 256
//!   bytes (16 without AVX2) the same moves on each side of it, all loaded before any is
//!   stored (`two_parts`), longer ones the vector loops (or, without AVX2, a copy of each
//!   side).
//! - **Everything else** (long copies on other CPUs, and beyond [`VECTOR_MAX`]) is `memcpy`;
//!   other architectures use `memcpy` above 64 bytes.
//!
//! # One store for the last element
//! C programs wait for a put by polling its last element, and many reset it when they see it
//! (tests-sos `sping` does). A copy that stores those bytes twice can set the element again
//! after the poller reset it: the poller then takes the next round's put for done before it
//! arrives. `memcpy` does so: its moves from both ends coincide at lengths of 2, 4, 8, 16, 32
//! and 64 bytes (an 8-byte put was stored twice), and this engine's first vector loops
//! stored an end on a 32-byte boundary twice (`sping` hung in 4 of 60 runs). Every copy here
//! keeps one rule instead: the last element (1, 2, 4 or 8 bytes, aligned, the length a
//! multiple of it) is written by one store that no other store of the copy touches, and on
//! this engine's own paths that store comes last, so on x86 a PE that sees the element sees
//! the whole copy. A test checks every store of every path against it (test builds log
//! them). Copies left to `memcpy` (only from [`VECTOR_MIN`] bytes on) end with unaligned
//! moves from the end that the aligned moves before them do not reach.
//!
//! What is left: a short copy across a page boundary still costs 0.5-1.5 ns more than one
//! within a page (more moves, and a few comparisons for each side's width), and copies in a
//! tight loop between the *same* two buffers where the destination lies just *below* the
//! source (distance `4096 - n .. 4096`), or where a load straddles the source's page boundary
//! at the page offsets the previous copy stored to, pay a few nanoseconds when one copy's
//! loads meet the previous copy's stores. `benches/run.sh`'s sweep shows both.
//!
//! Part of the memory layer: uses nothing of the crate; the transport and the collectives copy with
//! it.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// Copies at least this long take the vector loops where the plan says so; shorter ones are
/// straight-line moves from both ends (`short`), which beat the loops there.
pub(crate) const VECTOR_MIN: usize = 513;

/// On AMD, copies up to this long take the vector loops at every distance, unless the last-level
/// cache is small ([`VECTOR_UPTO`]).
pub(crate) const VECTOR_MAX: usize = 8 << 20;

/// Up to where the vector loops (plain cached stores) beat `memcpy` on AMD: [`VECTOR_MAX`], or
/// a quarter of the last-level cache if that is less. Measured here (32 MiB of L3): 1.5% faster
/// than `rep movsb` at 1-4 MiB, 3% at their worst distance. glibc itself switches to
/// non-temporal stores above about three quarters of the cache share of a thread, which wins
/// once the copy no longer fits; a quarter of the whole cache stays well below that.
static VECTOR_UPTO: AtomicUsize = AtomicUsize::new(1 << 20);

/// Distances (destination - source, mod 4096) from 1 to this value stall `rep movsb` (1-31
/// by 20-50x, 32-63 by up to 30%; 64 and beyond measured fine).
const ALIAS_WINDOW: usize = 63;

/// The copy plan of this CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Plan {
    /// `memcpy` always (no AVX2, or not x86-64).
    Memcpy,
    /// Vector loops in the aliasing window only.
    VectorAliasing,
    /// Vector loops for every distance from `VECTOR_MIN` to `VECTOR_MAX` (AMD).
    VectorAll,
}

/// The plan, once chosen (0: not yet).
static PLAN: AtomicU8 = AtomicU8::new(0);

/// The plan of this CPU (chosen on first use).
#[inline]
fn plan() -> Plan {
    match PLAN.load(Ordering::Relaxed) {
        1 => Plan::Memcpy,
        2 => Plan::VectorAliasing,
        3 => Plan::VectorAll,
        _ => choose_plan(),
    }
}

#[cold]
fn choose_plan() -> Plan {
    let plan = detect();
    let code = match plan {
        Plan::Memcpy => 1,
        Plan::VectorAliasing => 2,
        Plan::VectorAll => 3,
    };
    PLAN.store(code, Ordering::Relaxed);
    plan
}

#[cfg(target_arch = "x86_64")]
fn detect() -> Plan {
    if !std::arch::is_x86_feature_detected!("avx2") {
        return Plan::Memcpy;
    }
    // SAFETY: CPUID leaf 0 exists on every x86-64 CPU. (`__cpuid` is a safe function from
    // Rust 1.89 on; the block keeps the minimum supported Rust building.)
    #[allow(unused_unsafe)]
    let id = unsafe { std::arch::x86_64::__cpuid(0) };
    let vendor: Vec<u8> = [id.ebx, id.edx, id.ecx]
        .iter()
        .flat_map(|r| r.to_le_bytes())
        .collect();
    if vendor == b"AuthenticAMD" || vendor == b"HygonGenuine" {
        // SAFETY: sysconf only reads the cache geometry glibc found at start-up.
        let l3 = unsafe { libc::sysconf(libc::_SC_LEVEL3_CACHE_SIZE) };
        let upto = usize::try_from(l3).map_or(1 << 20, |b| (b / 4).clamp(1 << 20, VECTOR_MAX));
        VECTOR_UPTO.store(upto, Ordering::Relaxed);
        Plan::VectorAll
    } else {
        Plan::VectorAliasing
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> Plan {
    Plan::Memcpy
}

/// Bytes in a page: the unit of the address translation, which no store may straddle here.
const PAGE: usize = 4096;

/// Copies `len` bytes from `src` to `dst`: without the 4 KiB-aliasing cliff of `rep movsb`,
/// without a store that straddles a page boundary of the destination, and with the copy's
/// last element stored by one store that no other store of the copy touches (see the module
/// documentation).
///
/// # Safety
/// As [`std::ptr::copy_nonoverlapping`]: `src` is valid for reads and `dst` for writes of
/// `len` bytes, and the two ranges do not overlap.
#[inline(always)]
pub(crate) unsafe fn copy_bytes(dst: *mut u8, src: *const u8, len: usize) {
    // SAFETY: forwarded contract, with each callee's length range.
    unsafe {
        if len >= VECTOR_MIN {
            copy_large(dst, src, len)
        } else {
            copy_short(dst, src, len)
        }
    }
}

/// A copy of fewer than [`VECTOR_MIN`] bytes: [`short`]'s moves within a page of the
/// destination; across a boundary, up to 16 bytes [`across_upto16`] (here, where a call would
/// cost as much as the moves), else [`copy_across_page`].
///
/// # Safety
/// As [`copy_bytes`], and `len < VECTOR_MIN`.
#[inline(never)]
unsafe fn copy_short(dst: *mut u8, src: *const u8, len: usize) {
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
/// As [`copy_bytes`], `len < VECTOR_MIN`, and the destination crosses a page boundary.
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

/// A copy of `n <= 16` bytes whose destination crosses a page boundary: [`two_parts`] with
/// the words each side's length takes.
///
/// # Safety
/// As [`copy_bytes`], with `n <= 16`, and the destination crosses a page boundary.
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

/// [`two_parts`] with the words that `n - c < 16` bytes above the boundary take.
///
/// # Safety
/// As [`two_parts`], for `U` any of the words.
#[inline(always)]
unsafe fn upper_words<L: Moves>(dst: *mut u8, src: *const u8, n: usize, c: usize) {
    debug_assert!(n - c < 16);
    macro_rules! go {
        ($u:ty) => {
            two_parts::<L, $u>(dst, src, n, c)
        };
    }
    // SAFETY: each word's moves fit `n - c` as `two_parts` needs.
    unsafe { by_word!(n - c, go) }
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
/// As [`copy_bytes`]; `0 < c < n`, and `c` and `n - c` lie in the ranges `L` and `U` take.
#[inline(always)]
unsafe fn two_parts<L: Moves, U: Moves>(dst: *mut u8, src: *const u8, n: usize, c: usize) {
    // SAFETY: per the caller, the moves of each part lie inside it.
    unsafe {
        let low = L::load(src, c);
        let high = U::load(src.add(c), n - c);
        L::store(dst, c, low);
        U::store(dst.add(c), n - c, high);
    }
}

/// A fixed set of moves that copies `p` bytes for every `p` in the range the implementation
/// takes, loaded (into registers) apart from being stored. The last move stored is the only
/// one to touch the range's last element (1 to 8 bytes; `p` a multiple of its size).
trait Moves {
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
struct Pair<T>(std::marker::PhantomData<T>);

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

/// `part` on the bytes of the range below the destination's page boundary, then on those above
/// it, or once on the whole range when it lies within a page.
///
/// # Safety
/// As [`copy_bytes`], `len < PAGE`, and `part` has the contract of [`copy_bytes`].
#[inline(always)]
unsafe fn by_page(
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

/// Copies `n < VECTOR_MIN` bytes with moves inside the range, all of one width for a given
/// `n`, the last of them the only one to touch the range's last `w` bytes (its width); all
/// loaded before any is stored up to 512 bytes with AVX2, as glibc's short copies are, so that
/// no load waits on an earlier store to its page offset.
///
/// # Safety
/// As [`copy_bytes`], with `n < VECTOR_MIN`.
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
/// As [`copy_bytes`].
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(never)]
unsafe fn portable_short(dst: *mut u8, src: *const u8, n: usize) {
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

/// One unaligned load of a `T`.
///
/// # Safety
/// `p` is valid for reads of `size_of::<T>()` bytes, and they hold a valid `T`.
#[inline(always)]
unsafe fn load<T: Copy>(p: *const u8) -> T {
    // SAFETY: per the caller.
    unsafe { p.cast::<T>().read_unaligned() }
}

/// One unaligned store of a `T` (a single instruction for the words and SSE vectors used
/// here).
///
/// # Safety
/// `p` is valid for writes of `size_of::<T>()` bytes.
#[inline(always)]
unsafe fn store<T: Copy>(p: *mut u8, v: T) {
    log::store(p, size_of::<T>());
    // SAFETY: per the caller.
    unsafe { p.cast::<T>().write_unaligned(v) }
}

/// Copies `w <= n <= 2 w` bytes (`w` the size of a `T`): one move when `n == w`, else a move
/// at each end, the last one last. (`memcpy` moves both ends at `n == w` too: the same bytes
/// twice, the second store after a PE polling the element may have seen and reset it.)
///
/// # Safety
/// As [`copy_bytes`], with `size_of::<T>() <= n <= 2 size_of::<T>()`.
#[inline(always)]
unsafe fn pair<T: Copy>(dst: *mut u8, src: *const u8, n: usize) {
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
/// As [`copy_bytes`], with `n <= 16`.
#[inline(always)]
unsafe fn upto16(dst: *mut u8, src: *const u8, n: usize) {
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

/// Whether a 32-byte access at `p` would straddle a page boundary.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn straddles(p: *const u8) -> bool {
    (p as usize & (PAGE - 1)) > PAGE - 32
}

/// The vector loop whose loads never meet a store just made to the same page offset: forwards
/// when the destination lies less than half a page below the source (in page offset),
/// backwards otherwise.
///
/// # Safety
/// As [`copy_bytes`]; AVX2 is available and `len >= 64`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn vector_by_distance(dst: *mut u8, src: *const u8, len: usize) {
    let distance = (dst as usize).wrapping_sub(src as usize) & (PAGE - 1);
    // SAFETY: forwarded contract.
    unsafe {
        if distance >= PAGE / 2 {
            x86::forward_avx2(dst, src, len)
        } else {
            x86::backward_avx2(dst, src, len)
        }
    }
}

/// Copies `len >= VECTOR_MIN` bytes as the plan says.
///
/// # Safety
/// As [`copy_bytes`], and `len >= 64`.
#[inline(never)]
unsafe fn copy_large(dst: *mut u8, src: *const u8, len: usize) {
    let distance = (dst as usize).wrapping_sub(src as usize) & (PAGE - 1);
    let in_window = distance.wrapping_sub(1) < ALIAS_WINDOW;
    #[cfg(target_arch = "x86_64")]
    match plan() {
        Plan::VectorAliasing if in_window => {
            // SAFETY: the plan exists only with AVX2; the caller's contract, len >= 64.
            return unsafe { x86::backward_avx2(dst, src, len) };
        }
        Plan::VectorAll if in_window || len <= VECTOR_UPTO.load(Ordering::Relaxed) => {
            // SAFETY: as above.
            return unsafe { vector_by_distance(dst, src, len) };
        }
        _ => {}
    }
    let _ = in_window;
    log::libc(dst, len);
    // SAFETY: forwarded contract.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, len) }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Moves, PAGE, Pair, load, log, pair, store, straddles, two_parts, upper_words};
    use std::arch::x86_64::{
        __m128i, __m256i, _mm256_loadu_si256, _mm256_store_si256, _mm256_storeu_si256,
    };

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
                0..16 => super::upto16(dst, src, n),
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
                super::vector_by_distance(dst, src, len)
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
        unsafe fn upper<L: Moves, const BIG: bool>(
            dst: *mut u8,
            src: *const u8,
            n: usize,
            c: usize,
        ) {
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

    /// Copies `len >= 64` non-overlapping bytes from the top down: aligned 32-byte stores four
    /// at a time, then one at a time, then the bytes below the first 32-byte boundary of the
    /// destination, and last the bytes above its last boundary (loaded first). No store
    /// straddles a page boundary (about 10 ns each on AMD Zen 4): the stores are aligned, and
    /// the two ends are one unaligned 32-byte move each where that stays within a page,
    /// [`upto64`]'s moves inside the end's 32-byte block otherwise. An end on a 32-byte
    /// boundary is left to the aligned stores, so the last element is stored once, last.
    ///
    /// # Safety
    /// AVX2 is available; `src` is valid for reads and `dst` for writes of `len >= 64` bytes;
    /// the ranges do not overlap.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn backward_avx2(dst: *mut u8, src: *const u8, len: usize) {
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
            // The top 32 bytes, loaded now (before any store can alias them) and stored last:
            // the last element is then the last store even where the end is on a boundary.
            let top = (!straddles(dst.add(len - V))).then(|| load(len - V));
            let mut e = if tail == 0 { end - V } else { end };
            while e >= head + 4 * V {
                e -= 4 * V;
                let (a, b, c, d) = (load(e + 3 * V), load(e + 2 * V), load(e + V), load(e));
                store(e + 3 * V, a);
                store(e + 2 * V, b);
                store(e + V, c);
                store(e, d);
            }
            while e > head {
                e -= V;
                store(e, load(e));
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
    /// stores four at a time, then one at a time, then the bytes above the last boundary.
    ///
    /// # Safety
    /// As [`backward_avx2`].
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn forward_avx2(dst: *mut u8, src: *const u8, len: usize) {
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
            let mut s = head;
            while s + 4 * V <= end {
                let (a, b, c, d) = (load(s), load(s + V), load(s + 2 * V), load(s + 3 * V));
                store(s, a);
                store(s + V, b);
                store(s + 2 * V, c);
                store(s + 3 * V, d);
                s += 4 * V;
            }
            while s < end {
                store(s, load(s));
                s += V;
            }
            if tail == 0 {
            } else if straddles(dst.add(len - V)) {
                upto64(dst.add(end), src.add(end), tail);
            } else {
                storeu(len - V, load(len - V));
            }
        }
    }
}

/// Test builds record every store the engine makes (address and width) and every copy it
/// leaves to libc, so that tests can check which bytes each store touched.
#[cfg(test)]
mod log {
    use std::cell::RefCell;

    /// One store of the engine, or (`libc`) one copy handed to `memcpy`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(super) struct Store {
        /// The first byte written.
        pub at: usize,
        /// Bytes written.
        pub len: usize,
        /// A `memcpy` of `len` bytes rather than one store.
        pub libc: bool,
    }

    thread_local! {
        static STORES: RefCell<Option<Vec<Store>>> = const { RefCell::new(None) };
    }

    fn push(s: Store) {
        STORES.with(|log| {
            if let Some(v) = log.borrow_mut().as_mut() {
                v.push(s);
            }
        });
    }

    /// Records a store of `len` bytes at `at`.
    pub(super) fn store(at: *const u8, len: usize) {
        push(Store {
            at: at as usize,
            len,
            libc: false,
        });
    }

    /// Records a `memcpy` of `len` bytes to `at`.
    pub(super) fn libc(at: *const u8, len: usize) {
        push(Store {
            at: at as usize,
            len,
            libc: true,
        });
    }

    /// The stores `f` made on this thread.
    pub(super) fn record(f: impl FnOnce()) -> Vec<Store> {
        STORES.with(|log| *log.borrow_mut() = Some(Vec::new()));
        f();
        STORES.with(|log| log.borrow_mut().take().unwrap_or_default())
    }
}

/// Release builds record nothing.
#[cfg(not(test))]
mod log {
    #[inline(always)]
    pub(super) fn store(_: *const u8, _: usize) {}
    #[inline(always)]
    pub(super) fn libc(_: *const u8, _: usize) {}
}

/// Copies one element of `size` bytes (a strided transfer's element loop): fixed-size moves
/// for the common sizes, [`copy_bytes`] otherwise.
///
/// # Safety
/// As [`copy_bytes`] with `len = size`.
#[inline(always)]
pub(crate) unsafe fn copy_elem(dst: *mut u8, src: *const u8, size: usize) {
    // SAFETY: in every arm, the caller's contract for `size` bytes; unaligned reads and writes
    // of exactly that many bytes.
    unsafe {
        match size {
            1 => dst.write(src.read()),
            2 => dst
                .cast::<u16>()
                .write_unaligned(src.cast::<u16>().read_unaligned()),
            4 => dst
                .cast::<u32>()
                .write_unaligned(src.cast::<u32>().read_unaligned()),
            8 => dst
                .cast::<u64>()
                .write_unaligned(src.cast::<u64>().read_unaligned()),
            16 => dst
                .cast::<u128>()
                .write_unaligned(src.cast::<u128>().read_unaligned()),
            _ => copy_bytes(dst, src, size),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length around the loops' and the short paths' edges, source and destination at
    /// every distance in and around the windows and at page offsets that put a page boundary
    /// at every interesting place inside either range: the bytes arrive and nothing around
    /// the destination changes.
    #[test]
    fn copies_exactly_at_every_distance_and_page_offset() {
        const PAGE: usize = 4096;
        let mut src_buf = vec![0u8; 4 * PAGE];
        let mut dst_buf = vec![0u8; 4 * PAGE];
        for (i, b) in src_buf.iter_mut().enumerate() {
            *b = (i * 131 + 7) as u8;
        }
        let mut lens: Vec<usize> = (0..=72).collect();
        lens.extend([
            95, 96, 97, 127, 128, 129, 160, 200, 255, 256, 257, 300, 512, 513, 1023, 1024, 1025,
            1057, 4096,
        ]);
        // Page offsets of the source: aligned, odd, and just before a boundary.
        let mut src_offsets = vec![0usize, 3, 4064, 4090, 4095];
        // Page offsets of the destination: the distances of the old window test, and places
        // just before a boundary.
        let mut dst_offsets: Vec<usize> = [1usize, 5, 31, 32, 33, 63, 64, 65, 2048].to_vec();
        for k in [
            1usize, 2, 5, 8, 16, 31, 32, 33, 63, 64, 65, 100, 128, 200, 255,
        ] {
            dst_offsets.push(PAGE - k);
        }
        if cfg!(miri) {
            // The interpreter is slow: every short length, but fewer places and long ones.
            lens.retain(|&l| l <= 72 || [129, 257, 513, 1025].contains(&l));
            src_offsets = vec![3, 4090];
            dst_offsets = vec![33, PAGE - 1, PAGE - 5, PAGE - 31, PAGE - 33, PAGE - 200];
        }
        // Where in a buffer an address has page offset `off`, at least one page in.
        let place = |base: usize, off: usize| PAGE + (off + PAGE - base % PAGE) % PAGE;
        let (sbase, dbase) = (src_buf.as_ptr() as usize, dst_buf.as_ptr() as usize);
        for &so in &src_offsets {
            let s_at = place(sbase, so);
            for &doff in &dst_offsets {
                for rel in [false, true] {
                    // Either the destination's page offset, or the distance from the source.
                    let want = if rel { (so + doff) % PAGE } else { doff };
                    let d_at = place(dbase, want);
                    for &len in &lens {
                        let window = d_at - 1..d_at + len + 1;
                        dst_buf[window.clone()].fill(0xEE);
                        let src = src_buf[s_at..].as_ptr();
                        let dst = dst_buf[d_at..].as_mut_ptr();
                        // SAFETY: both buffers hold `len` bytes at these places (they are four
                        // pages long and the places at most two pages in) and do not overlap.
                        unsafe { copy_bytes(dst, src, len) };
                        let what = format!("len {len}, source at {so}, destination at {want}");
                        assert_eq!(
                            &dst_buf[d_at..d_at + len],
                            &src_buf[s_at..s_at + len],
                            "{what}"
                        );
                        assert_eq!(dst_buf[window.start], 0xEE, "byte before, {what}");
                        assert_eq!(dst_buf[window.end - 1], 0xEE, "byte after, {what}");
                    }
                }
            }
        }
    }

    /// What a poller of a put's last element relies on, checked on every store the engine
    /// made: for every length 0 - 600 and longer ones, destinations at every place around a page
    /// boundary and sources at three page offsets, each store lies inside the destination and
    /// inside one of its pages, and for every element size (1, 2, 4, 8) that divides the
    /// length and the destination's address, one store touches the last element: it covers
    /// it whole and is the copy's last store. (`memcpy` wrote an 8-byte copy's bytes twice,
    /// and a PE that had seen and reset a flag saw it set again.) The engine's own short
    /// path (`portable_short`, other architectures) is checked up to 64 bytes the same way.
    #[test]
    fn the_last_element_is_stored_once_last_and_no_store_straddles_a_page() {
        const PAGE: usize = 4096;
        let mut src_buf = vec![0u8; 5 * PAGE];
        let mut dst_buf = vec![0u8; 5 * PAGE];
        for (i, b) in src_buf.iter_mut().enumerate() {
            *b = (i * 131 + 7) as u8;
        }
        let mut lens: Vec<usize> = (0..=600).collect();
        lens.extend([
            1023, 1024, 1025, 1056, 2047, 2048, 4095, 4096, 4097, 5000, 8192,
        ]);
        // Destination page offsets: aligned ones, and ends of the copy at every distance up
        // to 72 bytes past a page boundary (chosen per length below).
        let mut dst_offsets = vec![0usize, 1, 2, 3, 4, 6, 8, 12, 16, 24, 40, 2048];
        let mut past: Vec<usize> = (0..=72).collect();
        let mut src_offsets = vec![0usize, 5, 4093];
        if cfg!(miri) {
            lens = vec![
                0, 1, 2, 3, 4, 8, 12, 16, 24, 32, 40, 64, 72, 128, 136, 256, 512, 520,
            ];
            dst_offsets = vec![0, 4, 8];
            past = vec![0, 4, 8, 16, 24, 32, 40];
            src_offsets = vec![5];
        }
        let place = |base: usize, off: usize| PAGE + (off + PAGE - base % PAGE) % PAGE;
        let (sbase, dbase) = (src_buf.as_ptr() as usize, dst_buf.as_ptr() as usize);
        let mut checked = 0usize;
        for &len in &lens {
            let mut places: Vec<usize> = dst_offsets.clone();
            // The end `p` bytes past a boundary: destination page offset `(p - len) mod PAGE`.
            places.extend(past.iter().map(|&p| (p + 2 * PAGE - len % PAGE) % PAGE));
            for &doff in &places {
                for &so in &src_offsets {
                    let (s_at, d_at) = (place(sbase, so), place(dbase, doff));
                    let src = src_buf[s_at..].as_ptr();
                    for portable in [false, true] {
                        if portable && len > 64 {
                            continue;
                        }
                        dst_buf[d_at..d_at + len].fill(0);
                        let dst = dst_buf[d_at..].as_mut_ptr();
                        // SAFETY: both buffers hold `len` bytes at these places (five pages
                        // long, places at most two pages in) and do not overlap.
                        let stores = log::record(|| unsafe {
                            if portable {
                                by_page(dst, src, len, |d, s, n| portable_short(d, s, n))
                            } else {
                                copy_bytes(dst, src, len)
                            }
                        });
                        let what = format!(
                            "len {len}, source at {so}, destination at {doff}, portable {portable}"
                        );
                        assert_eq!(
                            &dst_buf[d_at..d_at + len],
                            &src_buf[s_at..s_at + len],
                            "{what}"
                        );
                        check_stores(dst as usize, len, &stores, &what);
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 0);
    }

    /// The checks of the test above on one copy's stores.
    fn check_stores(dst: usize, len: usize, stores: &[log::Store], what: &str) {
        const PAGE: usize = 4096;
        if stores.iter().any(|s| s.libc) {
            // Left to glibc (long copies on other CPUs or past VECTOR_UPTO, or `portable_short`
            // above 64 bytes): one call for the whole copy.
            assert!(len >= VECTOR_MIN, "{what}: {stores:?}");
            assert_eq!(
                stores,
                [log::Store {
                    at: dst,
                    len,
                    libc: true
                }],
                "{what}: {stores:?}"
            );
            return;
        }
        for s in stores {
            assert!(
                s.len > 0 && dst <= s.at && s.at + s.len <= dst + len,
                "outside: {what}: {stores:?}"
            );
            assert_eq!(
                s.at / PAGE,
                (s.at + s.len - 1) / PAGE,
                "straddles: {what}: {stores:?}"
            );
        }
        for k in [1usize, 2, 4, 8] {
            if len < k || !len.is_multiple_of(k) || !dst.is_multiple_of(k) {
                continue;
            }
            let e = dst + len - k;
            let touching: Vec<usize> = (0..stores.len())
                .filter(|&i| stores[i].at < e + k && e < stores[i].at + stores[i].len)
                .collect();
            assert_eq!(
                touching,
                [stores.len() - 1],
                "element of {k}: {what}: {stores:?}"
            );
            let last = stores[stores.len() - 1];
            assert!(
                last.at <= e && e + k <= last.at + last.len,
                "element of {k}: {what}: {stores:?}"
            );
        }
    }

    #[test]
    fn element_sizes() {
        for size in [1usize, 2, 3, 4, 8, 12, 16, 24] {
            let src: Vec<u8> = (0..size as u8).map(|b| b + 1).collect();
            let mut dst = vec![0u8; size + 2];
            // SAFETY: `size` bytes on both sides, distinct buffers; the write starts at 1.
            unsafe { copy_elem(dst[1..].as_mut_ptr(), src.as_ptr(), size) };
            assert_eq!(&dst[1..=size], &src[..]);
            assert_eq!((dst[0], dst[size + 1]), (0, 0));
        }
    }
}
