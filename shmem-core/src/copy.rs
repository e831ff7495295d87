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
//! | 64 B | 2.4 | 22.7 (4093, 4064) | 5.4 |
//! | 256 B | 3.0 | 16.9 (4093, 4000) | 6.0 |
//! | 1000 B | 9.7 | 25.1 (4093, 4088) | 9.7 |
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
//! - **Short copies whose destination crosses a page boundary** (below [`VECTOR_MIN`]) follow
//!   `memcpy`'s pattern of overlapping moves from both ends, all loaded before any is stored,
//!   but the moves that would straddle the boundary are replaced by moves that end and start
//!   at it (`copy_across_page`). The vector loops never straddle: their stores are aligned, and
//!   their unaligned first and last moves are split where they would.
//! - **Everything else** (short copies within a page, other CPUs and architectures) is
//!   `memcpy`, whose short copies are vector moves with no cliff.
//!
//! What is left: a short copy across a page boundary still costs a few nanoseconds more than
//! one within a page (the split and its branches), and copies in a tight loop between the
//! *same* two buffers where the destination lies just *below* the source (distance
//! `4096 - n .. 4096`) pay a few nanoseconds when one copy's loads meet the previous copy's
//! stores. `benches/run.sh`'s sweep shows both.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// Copies at least this long take the vector loops where the plan says so; shorter ones are
/// glibc's straight-line vector moves (up to 512 bytes: loads, then stores, at most 1.3x
/// apart over all distances where the destination stays within a page), or
/// `copy_across_page` where it does not.
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

/// Copies `len` bytes from `src` to `dst`, without the 4 KiB-aliasing cliff of `rep movsb` and
/// without a store that straddles a page boundary of the destination.
///
/// # Safety
/// As [`std::ptr::copy_nonoverlapping`]: `src` is valid for reads and `dst` for writes of
/// `len` bytes, and the two ranges do not overlap.
#[inline(always)]
pub(crate) unsafe fn copy_bytes(dst: *mut u8, src: *const u8, len: usize) {
    if len >= VECTOR_MIN {
        // SAFETY: forwarded contract; `len >= VECTOR_MIN >= 64`.
        unsafe { copy_large(dst, src, len) }
    } else if (dst as usize & (PAGE - 1)) + len <= PAGE {
        // SAFETY: forwarded contract.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, len) }
    } else {
        // SAFETY: forwarded contract.
        unsafe { copy_across_page(dst, src, len) }
    }
}

/// A short copy whose destination crosses a page boundary. `memcpy`'s overlapping unaligned
/// stores would put one store across the boundary, which costs about 10 ns on AMD Zen 4 (a
/// 256-byte copy takes 3 ns). (A load across a boundary of the source costs little, so only
/// the destination counts.) The copy follows `memcpy`'s pattern, moves of one width from both
/// ends, all loaded before any is stored, with the stores that would straddle the boundary
/// left out and two of the same width that end and start at it stored instead; every byte a
/// left-out store covered lies within that width of the boundary. 16-byte moves up to 64
/// bytes, 32-byte ones (AVX2) up to 256, the vector loops (aligned stores) beyond; without
/// AVX2, from 64 bytes on, two copies that end and start at the boundary.
///
/// # Safety
/// As [`copy_bytes`], `len < PAGE`, and the destination crosses a page boundary.
#[inline(never)]
unsafe fn copy_across_page(dst: *mut u8, src: *const u8, len: usize) {
    let c = PAGE - (dst as usize & (PAGE - 1));
    debug_assert!(c < len && len < PAGE);
    // SAFETY: forwarded contract, with each callee's length range (the arms check them); `c`
    // is the boundary's offset in the destination, inside the copy.
    unsafe {
        #[cfg(target_arch = "x86_64")]
        {
            if len <= 64 {
                return x86::short_across(dst, src, len, c);
            }
            if plan() != Plan::Memcpy {
                // A plan other than Memcpy exists only with AVX2.
                return x86::across_page_avx2(dst, src, len, c);
            }
        }
        split_at(dst, src, len, c)
    }
}

/// Two copies that end and start at offset `c` (out of line, so that
/// [`copy_across_page`] saves no registers on its way to the others).
///
/// # Safety
/// As [`copy_bytes`], with `c <= len`.
#[inline(never)]
unsafe fn split_at(dst: *mut u8, src: *const u8, len: usize, c: usize) {
    // SAFETY: the parts `[0, c)` and `[c, len)` lie inside the caller's ranges.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, c);
        std::ptr::copy_nonoverlapping(src.add(c), dst.add(c), len - c);
    }
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
    // SAFETY: forwarded contract.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, len) }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m128i, __m256i, _mm_loadu_si128, _mm_setzero_si128, _mm_storeu_si128, _mm256_loadu_si256,
        _mm256_store_si256, _mm256_storeu_si256,
    };

    /// Vector width: 32 bytes.
    const V: usize = 32;

    /// Copies `n < 32` bytes with at most two overlapping moves of one width (as glibc's short
    /// copies do): an [`Edge`]'s moves. The callers pass ranges whose destination lies inside
    /// one 32-byte-aligned block, so no store crosses a page boundary.
    ///
    /// # Safety
    /// `src` is valid for reads and `dst` for writes of `n < 32` bytes; no overlap.
    #[inline(always)]
    unsafe fn short(dst: *mut u8, src: *const u8, n: usize) {
        // SAFETY: forwarded contract.
        unsafe { Edge::load(src, n).store(dst, n) }
    }

    /// Whether a 32-byte access at `p` would straddle a page boundary.
    #[inline(always)]
    fn straddles(p: *const u8) -> bool {
        (p as usize & (super::PAGE - 1)) > super::PAGE - V
    }

    /// The bytes of a short range (`len < 32`) as loaded by at most two overlapping moves of
    /// one width inside it: two 16-byte vectors from 16 bytes on, two words of 8, 4 or 2
    /// bytes below, one byte for one.
    #[derive(Clone, Copy)]
    struct Edge {
        v: (__m128i, __m128i),
        w: (u64, u64),
    }

    impl Edge {
        /// Loads the `len < 32` bytes at `src`.
        ///
        /// # Safety
        /// `src` is valid for reads of `len < 32` bytes.
        #[inline(always)]
        unsafe fn load(src: *const u8, len: usize) -> Edge {
            debug_assert!(len < 2 * W16);
            // SAFETY: every arm reads `[0, w)` and `[len - w, len)` with `w <= len`.
            unsafe {
                let rd = |o: usize, w: usize| -> u64 {
                    let p = src.add(o);
                    match w {
                        8 => p.cast::<u64>().read_unaligned(),
                        4 => p.cast::<u32>().read_unaligned().into(),
                        2 => p.cast::<u16>().read_unaligned().into(),
                        _ => p.read().into(),
                    }
                };
                let zero = _mm_setzero_si128();
                match len {
                    16.. => Edge {
                        v: (
                            _mm_loadu_si128(src.cast::<__m128i>()),
                            _mm_loadu_si128(src.add(len - W16).cast::<__m128i>()),
                        ),
                        w: (0, 0),
                    },
                    0 => Edge {
                        v: (zero, zero),
                        w: (0, 0),
                    },
                    _ => {
                        let w = word(len);
                        Edge {
                            v: (zero, zero),
                            w: (rd(0, w), rd(len - w, w)),
                        }
                    }
                }
            }
        }

        /// Stores what [`Edge::load`] loaded for `len` bytes at `dst`, with the same moves.
        ///
        /// # Safety
        /// `dst` is valid for writes of `len < 32` bytes.
        #[inline(always)]
        unsafe fn store(self, dst: *mut u8, len: usize) {
            // SAFETY: every arm writes `[0, w)` and `[len - w, len)` with `w <= len`.
            unsafe {
                let wr = |o: usize, w: usize, x: u64| {
                    let p = dst.add(o);
                    match w {
                        8 => p.cast::<u64>().write_unaligned(x),
                        4 => p.cast::<u32>().write_unaligned(x as u32),
                        2 => p.cast::<u16>().write_unaligned(x as u16),
                        _ => p.write(x as u8),
                    }
                };
                match len {
                    16.. => {
                        _mm_storeu_si128(dst.cast::<__m128i>(), self.v.0);
                        _mm_storeu_si128(dst.add(len - W16).cast::<__m128i>(), self.v.1);
                    }
                    0 => {}
                    _ => {
                        let w = word(len);
                        wr(0, w, self.w.0);
                        wr(len - w, w, self.w.1);
                    }
                }
            }
        }
    }

    /// The word width for `1..16` bytes: the largest of 8, 4, 2, 1 not above it.
    #[inline(always)]
    fn word(len: usize) -> usize {
        match len {
            8.. => 8,
            4..8 => 4,
            2..4 => 2,
            _ => 1,
        }
    }

    /// 16 bytes, the SSE vector width.
    const W16: usize = 16;

    /// `copy_across_page` for `len <= 64`: up to 16 bytes, the parts below and above the
    /// boundary as [`Edge`]s; above, `memcpy`'s pattern with one or two 16-byte moves from each
    /// end and the straddling ones replaced.
    ///
    /// # Safety
    /// `src` is valid for reads and `dst` for writes of `len <= 64` bytes; no overlap;
    /// `0 < c < len`.
    #[inline(never)]
    pub(super) unsafe fn short_across(dst: *mut u8, src: *const u8, len: usize, c: usize) {
        // SAFETY: forwarded contract; each callee's length range.
        unsafe {
            if len <= W16 {
                let (lo, hi) = (Edge::load(src, c), Edge::load(src.add(c), len - c));
                lo.store(dst, c);
                hi.store(dst.add(c), len - c);
            } else if len <= 2 * W16 {
                ends16::<1>(dst, src, len, c);
            } else {
                ends16::<2>(dst, src, len, c);
            }
        }
    }

    /// `copy_across_page`'s pattern with 16-byte moves: `K` from each end, for
    /// `16 * K <= len <= 32 * K`, the destination's page boundary `c` bytes in.
    ///
    /// # Safety
    /// `src` is valid for reads and `dst` for writes of `len` bytes with
    /// `16 * K <= len <= 32 * K`; the ranges do not overlap; `0 < c < len`.
    #[inline(always)]
    unsafe fn ends16<const K: usize>(dst: *mut u8, src: *const u8, len: usize, c: usize) {
        debug_assert!(K * W16 <= len && len <= 2 * K * W16 && 0 < c && c < len);
        // SAFETY: every 16-byte move is at an offset `o` with `o + 16 <= len` (`len >= 16 K`;
        // the boundary moves only where they fit); the edges stay inside `[0, c)` and
        // `[c, len)`.
        unsafe {
            let load = |o: usize| _mm_loadu_si128(src.add(o).cast::<__m128i>());
            let store = |o: usize, v| _mm_storeu_si128(dst.add(o).cast::<__m128i>(), v);
            let front: [__m128i; K] = std::array::from_fn(|i| load(i * W16));
            let back: [__m128i; K] = std::array::from_fn(|i| load(len - (K - i) * W16));
            // Below the boundary: a move ending at it, or the bytes [0, c) (c < 16).
            let below = if c >= W16 {
                Edge::load(src.add(c - W16), W16)
            } else {
                Edge::load(src, c)
            };
            // Above it: a move starting at it, or the bytes [c, len) (len - c < 16).
            let above = Edge::load(src.add(c), (len - c).min(W16));
            let straddles = |o: usize| o < c && c < o + W16;
            for i in 0..K {
                if !straddles(i * W16) {
                    store(i * W16, front[i]);
                }
                let o = len - (K - i) * W16;
                if !straddles(o) {
                    store(o, back[i]);
                }
            }
            if c >= W16 {
                below.store(dst.add(c - W16), W16);
            } else {
                below.store(dst, c);
            }
            above.store(dst.add(c), (len - c).min(W16));
        }
    }

    /// A copy of `64 < len < 4096` bytes whose destination crosses a page boundary `c` bytes
    /// in (see `copy_across_page`): up to 256 bytes as `memcpy` does with 32-byte moves from
    /// both ends, beyond that the vector loops.
    ///
    /// # Safety
    /// AVX2 is available; `src` is valid for reads and `dst` for writes of `len` bytes, in
    /// `65..4096`; the ranges do not overlap; `0 < c < len`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn across_page_avx2(dst: *mut u8, src: *const u8, len: usize, c: usize) {
        // SAFETY: forwarded contract, with each callee's length range.
        unsafe {
            if len <= 4 * V {
                ends::<2>(dst, src, len, c)
            } else if len <= 8 * V {
                ends::<4>(dst, src, len, c)
            } else if (dst as usize).wrapping_sub(src as usize) & (super::PAGE - 1)
                >= super::PAGE / 2
            {
                forward_avx2(dst, src, len)
            } else {
                backward_avx2(dst, src, len)
            }
        }
    }

    /// `copy_across_page`'s pattern with 32-byte moves: `K` from each end, for
    /// `32 * K <= len <= 64 * K`, the destination's page boundary `c` bytes in.
    ///
    /// # Safety
    /// AVX2 is available; `src` is valid for reads and `dst` for writes of `len` bytes with
    /// `32 * K <= len <= 64 * K` and `len >= 64`; the ranges do not overlap; `0 < c < len`.
    #[target_feature(enable = "avx2")]
    #[inline(never)]
    unsafe fn ends<const K: usize>(dst: *mut u8, src: *const u8, len: usize, c: usize) {
        debug_assert!(len >= 2 * V && K * V <= len && len <= 2 * K * V && 0 < c && c < len);
        // SAFETY: every vector move is at an offset `o` with `o + V <= len` (`len >= K V`;
        // the boundary moves only where they fit); the edge moves stay inside `[0, c)` and
        // `[c, len)`.
        unsafe {
            let load = |o: usize| _mm256_loadu_si256(src.add(o).cast::<__m256i>());
            let store = |o: usize, v| _mm256_storeu_si256(dst.add(o).cast::<__m256i>(), v);
            let front: [__m256i; K] = std::array::from_fn(|i| load(i * V));
            let back: [__m256i; K] = std::array::from_fn(|i| load(len - (K - i) * V));
            // Below the boundary: a vector ending at it, or the bytes [0, c) (c < 32); above
            // it: a vector starting at it, or the bytes [c, len) (len - c < 32).
            let below = if c >= V {
                Ok(load(c - V))
            } else {
                Err(Edge::load(src, c))
            };
            let above = if c + V <= len {
                Ok(load(c))
            } else {
                Err(Edge::load(src.add(c), len - c))
            };
            let straddles = |o: usize| o < c && c < o + V;
            for i in 0..K {
                if !straddles(i * V) {
                    store(i * V, front[i]);
                }
                let o = len - (K - i) * V;
                if !straddles(o) {
                    store(o, back[i]);
                }
            }
            match below {
                Ok(v) => store(c - V, v),
                Err(edge) => edge.store(dst, c),
            }
            match above {
                Ok(v) => store(c, v),
                Err(edge) => edge.store(dst.add(c), len - c),
            }
        }
    }

    /// Copies `len >= 64` non-overlapping bytes from the top down: the bytes above the last
    /// 32-byte boundary of the destination, then aligned 32-byte stores four at a time, then
    /// one at a time, then the bytes below the first boundary. No store straddles a page
    /// boundary (about 10 ns each on AMD Zen 4): the stores are aligned, and the two ends are
    /// one unaligned 32-byte move each where that stays within a page, short moves inside the
    /// end's 32-byte block otherwise.
    ///
    /// # Safety
    /// AVX2 is available; `src` is valid for reads and `dst` for writes of `len >= 64` bytes;
    /// the ranges do not overlap.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn backward_avx2(dst: *mut u8, src: *const u8, len: usize) {
        debug_assert!(len >= 2 * V);
        let head = (V - (dst as usize & (V - 1))) & (V - 1);
        let tail = (dst as usize).wrapping_add(len) & (V - 1);
        // SAFETY: `head + tail <= len` (len >= 64); the ends cover `[0, head)` (or `[0, 32)`)
        // and `[len - tail, len)` (or `[len - 32, len)`); every vector offset `o` in the loops
        // satisfies `head <= o && o + V <= len - tail` and makes `dst + o` a multiple of 32
        // (both ends are); loads are unaligned.
        unsafe {
            let load = |o: usize| _mm256_loadu_si256(src.add(o).cast::<__m256i>());
            let store = |o: usize, v| _mm256_store_si256(dst.add(o).cast::<__m256i>(), v);
            // An end on a boundary is left to the aligned stores: a second store of the same
            // bytes would set a put's last word again after a PE polling it had seen it and
            // reset it (tests-sos sping hung so).
            if tail == 0 {
            } else if straddles(dst.add(len - V)) {
                short(dst.add(len - tail), src.add(len - tail), tail);
            } else {
                _mm256_storeu_si256(dst.add(len - V).cast::<__m256i>(), load(len - V));
            }
            let mut e = len - tail;
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
                short(dst, src, head);
            } else {
                _mm256_storeu_si256(dst.cast::<__m256i>(), load(0));
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
            let store = |o: usize, v| _mm256_store_si256(dst.add(o).cast::<__m256i>(), v);
            // As in `backward_avx2`: an end on a boundary is stored once, by the loop.
            if head == 0 {
            } else if straddles(dst) {
                short(dst, src, head);
            } else {
                _mm256_storeu_si256(dst.cast::<__m256i>(), load(0));
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
                short(dst.add(end), src.add(end), tail);
            } else {
                _mm256_storeu_si256(dst.add(len - V).cast::<__m256i>(), load(len - V));
            }
        }
    }
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
