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
//! # What it does
//! The plan is chosen once, at run time, from what the CPU is (as glibc and UCX choose their
//! copy routines from CPUID):
//! - **Aliasing window, any x86-64 with AVX2.** Copies of at least [`VECTOR_MIN`] bytes whose
//!   distance modulo 4096 is in `1..64` go *backwards* with 32-byte vector loads and aligned
//!   stores: going down, a load never has the page offset of a store still in flight, so
//!   nothing stalls. Intel CPUs have the same 4 KiB aliasing penalty for loads behind stores,
//!   so this serves them too.
//! - **AMD (Zen) with AVX2, other distances.** Copies from [`VECTOR_MIN`] up to [`VECTOR_MAX`]
//!   bytes also take the vector loops (backwards, or forwards when the destination lies less
//!   than 64 bytes below the source): measured here they beat `rep movsb` by about 15% at 1-8
//!   KiB (4 KiB: 35 ns against 41 ns) and tie with it above. Larger copies are memory-bound
//!   and stay with glibc, which switches to non-temporal stores for very large ones.
//! - **Everything else** (short copies, other CPUs and architectures) is `memcpy`, whose short
//!   copies are vector moves with no cliff.
//!
//! Copies in a tight loop between the *same* two buffers where the destination lies just
//! *below* the source (distance `4096 - n .. 4096`, sizes up to ~2 KiB) still pay a few
//! nanoseconds, in memcpy as here: one copy's loads meet the previous copy's stores, which
//! have not yet left the store buffer. `benches/run.sh`'s sweep shows it.

use std::sync::atomic::{AtomicU8, Ordering};

/// Copies at least this long take the vector loops where the plan says so; shorter ones are
/// glibc's vector moves, which have no cliff (measured: 1 KiB and 2 KiB copies take the same
/// time at every distance).
pub(crate) const VECTOR_MIN: usize = 1024;

/// On AMD, copies up to this long take the vector loops at every distance.
pub(crate) const VECTOR_MAX: usize = 1 << 20;

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
        Plan::VectorAll
    } else {
        Plan::VectorAliasing
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> Plan {
    Plan::Memcpy
}

/// Copies `len` bytes from `src` to `dst`, without the 4 KiB-aliasing cliff of `rep movsb`.
///
/// # Safety
/// As [`std::ptr::copy_nonoverlapping`]: `src` is valid for reads and `dst` for writes of
/// `len` bytes, and the two ranges do not overlap.
#[inline(always)]
pub(crate) unsafe fn copy_bytes(dst: *mut u8, src: *const u8, len: usize) {
    if len >= VECTOR_MIN {
        // SAFETY: forwarded contract; `len >= VECTOR_MIN >= 64`.
        unsafe { copy_large(dst, src, len) }
    } else {
        // SAFETY: forwarded contract.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, len) }
    }
}

/// Copies `len >= VECTOR_MIN` bytes as the plan says.
///
/// # Safety
/// As [`copy_bytes`], and `len >= 64`.
#[inline(never)]
unsafe fn copy_large(dst: *mut u8, src: *const u8, len: usize) {
    let distance = (dst as usize).wrapping_sub(src as usize) & 4095;
    let in_window = distance.wrapping_sub(1) < ALIAS_WINDOW;
    #[cfg(target_arch = "x86_64")]
    match plan() {
        Plan::VectorAliasing if in_window => {
            // SAFETY: the plan exists only with AVX2; the caller's contract, len >= 64.
            return unsafe { x86::backward_avx2(dst, src, len) };
        }
        Plan::VectorAll if in_window || len <= VECTOR_MAX => {
            // The destination just below the source: forwards (backwards, each load would
            // meet the store just made 1-63 bytes above it).
            // SAFETY: as above.
            return unsafe {
                if distance > 4096 - 64 {
                    x86::forward_avx2(dst, src, len)
                } else {
                    x86::backward_avx2(dst, src, len)
                }
            };
        }
        _ => {}
    }
    let _ = in_window;
    // SAFETY: forwarded contract.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, len) }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_store_si256, _mm256_storeu_si256};

    /// Copies `len >= 64` non-overlapping bytes from the top down: the last 32 bytes first
    /// (unaligned), then 32-byte-aligned stores of the destination four at a time, then the
    /// rest, then the first 32 bytes (unaligned; it may rewrite bytes already written, with
    /// the same values). The first vector is loaded last so that, in a loop of copies, the
    /// first loads never meet the previous copy's most recent stores.
    ///
    /// # Safety
    /// AVX2 is available; `src` is valid for reads and `dst` for writes of `len >= 64` bytes;
    /// the ranges do not overlap.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn backward_avx2(dst: *mut u8, src: *const u8, len: usize) {
        const V: usize = 32;
        debug_assert!(len >= 2 * V);
        // SAFETY: every offset `o` loaded or stored below satisfies
        // `0 <= o && o + V <= len`, so all accesses stay inside the two ranges; stores through
        // `_mm256_store_si256` are at `dst + e` with `e` chosen so that the address is 32-byte
        // aligned; loads are unaligned.
        unsafe {
            let load = |o: usize| _mm256_loadu_si256(src.add(o).cast::<__m256i>());
            _mm256_storeu_si256(dst.add(len - V).cast::<__m256i>(), load(len - V));
            // The aligned end: dst + e is a multiple of 32 and e > len - 32 >= 32.
            let mut e = len - ((dst as usize).wrapping_add(len) & (V - 1));
            while e >= 5 * V {
                e -= 4 * V;
                let (a, b, c, d) = (load(e + 3 * V), load(e + 2 * V), load(e + V), load(e));
                _mm256_store_si256(dst.add(e + 3 * V).cast::<__m256i>(), a);
                _mm256_store_si256(dst.add(e + 2 * V).cast::<__m256i>(), b);
                _mm256_store_si256(dst.add(e + V).cast::<__m256i>(), c);
                _mm256_store_si256(dst.add(e).cast::<__m256i>(), d);
            }
            while e >= 2 * V {
                e -= V;
                _mm256_store_si256(dst.add(e).cast::<__m256i>(), load(e));
            }
            // Now 32 <= e < 64: bytes [0, e) are left; [e - 32, e) and [0, 32) cover them.
            if e > V {
                _mm256_storeu_si256(dst.add(e - V).cast::<__m256i>(), load(e - V));
            }
            _mm256_storeu_si256(dst.cast::<__m256i>(), load(0));
        }
    }

    /// Copies `len >= 64` non-overlapping bytes from the bottom up: the first 32 bytes
    /// (unaligned), then 32-byte-aligned stores four at a time, then the rest, then the last
    /// 32 bytes (unaligned; they may rewrite bytes already written, with the same values).
    ///
    /// # Safety
    /// As [`backward_avx2`].
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn forward_avx2(dst: *mut u8, src: *const u8, len: usize) {
        const V: usize = 32;
        debug_assert!(len >= 2 * V);
        // SAFETY: every offset `o` loaded or stored below satisfies `o + V <= len`; the
        // aligned stores are at `dst + s` with `s` chosen so that the address is a multiple
        // of 32; loads are unaligned.
        unsafe {
            let load = |o: usize| _mm256_loadu_si256(src.add(o).cast::<__m256i>());
            _mm256_storeu_si256(dst.cast::<__m256i>(), load(0));
            // The first aligned destination offset: 0 < s <= 32.
            let mut s = V - (dst as usize & (V - 1));
            while s + 5 * V <= len {
                let (a, b, c, d) = (load(s), load(s + V), load(s + 2 * V), load(s + 3 * V));
                _mm256_store_si256(dst.add(s).cast::<__m256i>(), a);
                _mm256_store_si256(dst.add(s + V).cast::<__m256i>(), b);
                _mm256_store_si256(dst.add(s + 2 * V).cast::<__m256i>(), c);
                _mm256_store_si256(dst.add(s + 3 * V).cast::<__m256i>(), d);
                s += 4 * V;
            }
            while s + 2 * V <= len {
                _mm256_store_si256(dst.add(s).cast::<__m256i>(), load(s));
                s += V;
            }
            // Now len - 64 < s: bytes [s, len) are left; [s, s + 32) if it fits, and
            // [len - 32, len), cover them.
            if s + V <= len {
                _mm256_storeu_si256(dst.add(s).cast::<__m256i>(), load(s));
            }
            _mm256_storeu_si256(dst.add(len - V).cast::<__m256i>(), load(len - V));
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

    /// Every length around the loop's edges, every distance in and around the window, two
    /// source alignments: the bytes arrive and nothing around the destination changes.
    #[test]
    fn copies_exactly_at_every_distance() {
        let mut src_buf = vec![0u8; 3 * 4096 + 8192];
        let mut dst_buf = vec![0u8; 3 * 4096 + 8192];
        for (i, b) in src_buf.iter_mut().enumerate() {
            *b = (i * 131 + 7) as u8;
        }
        let lens = [
            0usize, 1, 63, 64, 65, 127, 128, 129, 1023, 1024, 1025, 1057, 4096, 4099,
        ];
        for src_off in [0usize, 3] {
            let src = src_buf[src_off..].as_ptr();
            for distance in [
                0usize, 1, 5, 31, 32, 33, 62, 63, 64, 65, 2048, 4031, 4032, 4033, 4064, 4095,
            ] {
                // Place the destination so that (dst - src) mod 4096 == distance.
                let base = dst_buf.as_ptr() as usize;
                let want = (src as usize + distance) & 4095;
                let at = (want + 2 * 4096 - 1 - (base & 4095)) & 4095;
                for &len in &lens {
                    dst_buf.fill(0xEE);
                    let dst = dst_buf[at + 1..].as_mut_ptr();
                    // SAFETY: both buffers hold `len` bytes at these places and do not overlap.
                    unsafe { copy_bytes(dst, src, len) };
                    let got = &dst_buf[at + 1..at + 1 + len];
                    assert_eq!(got, &src_buf[src_off..src_off + len], "{len} {distance}");
                    assert_eq!(dst_buf[at], 0xEE, "byte before, {len} {distance}");
                    assert_eq!(dst_buf[at + 1 + len], 0xEE, "byte after, {len} {distance}");
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
