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
//! - **Streaming copies** ([`copy_streaming`]), which only the collectives ask for, where their
//!   data on this node is more than three quarters of the machine's last-level caches
//!   ([`outgrows_caches`]): the same vector loops with non-temporal stores (AVX2, a page or
//!   more), then a store fence.
//! - **Blocks beside other writers** ([`copy_block`]), which the all-to-all asks for: with
//!   AVX2 and two pages or more, the vector loops upwards to a page below the end, then the
//!   rest top down, so that the prefetcher does not run from the end of the block into the
//!   next one, which another core is writing.
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
//! # Parts, lowest first
//! - `log`: test builds record every store of the engine, so that a test can check the rule
//!   above on each; release builds record nothing;
//! - `moves`: the moves every path is built from: one load or store, a pair of them at both
//!   ends of a range, the fixed sets of moves loaded apart from being stored (`Moves`) and
//!   their use on both sides of a page boundary, and the short copy without vector registers;
//! - `x86` (x86-64 only): the SSE2 and AVX2 moves of short copies and of copies across a page
//!   boundary, and the AVX2 vector loops, backwards and forwards;
//! - this file: the plan of this CPU, which path each copy takes (by its length, where the
//!   destination's page ends, and the plan), and [`copy_bytes`] and [`copy_elem`], what the
//!   rest of the crate calls.
//!
//! The functions that are not inlined (`copy_short`, `copy_large`, the page-crossing paths,
//! `choose_plan`, and those of `x86`) live in this module and in `x86` only: rustc puts the
//! functions of each module in a codegen unit of their own before it merges the small ones,
//! and LLVM optimizes a unit as a whole (it drops length checks in `x86`'s functions when
//! their callers share their unit, for one). Moving them to other modules changes their
//! machine code, so measure a release build's before and after if you do.
//!
//! Part of the memory layer: uses nothing of the crate but the base layer's size parser (for
//! the cache sizes in sysfs); the transport and the collectives copy with it.

mod log;
mod moves;
#[cfg(target_arch = "x86_64")]
mod x86;

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

#[cfg(not(target_arch = "x86_64"))]
use moves::portable_short;
use moves::{PAGE, across_upto16, by_page};
#[cfg(target_arch = "x86_64")]
use x86::vector_by_distance;

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
            return unsafe { x86::backward_avx2::<false>(dst, src, len) };
        }
        Plan::VectorAll if in_window || len <= VECTOR_UPTO.load(Ordering::Relaxed) => {
            // SAFETY: as above.
            return unsafe { vector_by_distance::<false>(dst, src, len) };
        }
        _ => {}
    }
    let _ = in_window;
    log::libc(dst, len);
    // SAFETY: forwarded contract.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, len) }
}

/// Copies shorter than this take [`copy_bytes`] in [`copy_streaming`]: a page at least, so
/// that the non-temporal stores fill whole lines.
#[cfg(target_arch = "x86_64")]
const STREAM_MIN: usize = 4096;

/// Copies `len` bytes as [`copy_bytes`] does, but with non-temporal stores for the bulk where
/// the CPU has AVX2 and the copy is a page or more (the two ends, 64 bytes at most, are cached
/// stores, made last, the last element still by one store of its own): the lines go to memory
/// without first being read into this core's cache and without displacing what is there. A
/// store fence ends the copy, so a release store after it is seen after all of the bytes.
///
/// For copies whose data cannot stay in the caches anyway (a collective's sources and
/// destinations on this node together too large for them, [`outgrows_caches`]): there they
/// save the read of every destination line. Where the data fits, cached stores are two to
/// three times faster, except for lines that several other cores read next (a staged
/// broadcast's pieces, `coll::staged`): those they read sooner from memory than from the
/// writer's cache.
///
/// # Safety
/// As [`copy_bytes`].
#[inline(never)]
pub(crate) unsafe fn copy_streaming(dst: *mut u8, src: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    if len >= STREAM_MIN && plan() != Plan::Memcpy {
        // SAFETY: every plan but `Memcpy` has AVX2; the caller's contract, with len >= 64.
        // The loops go backwards where the destination lies less than half a page above the
        // source, so the aliasing window is covered too.
        return unsafe { vector_by_distance::<true>(dst, src, len) };
    }
    // SAFETY: forwarded contract.
    unsafe { copy_bytes(dst, src, len) }
}

/// Copies `len` bytes as [`copy_bytes`] does, into one block of a region whose neighbouring
/// blocks other cores write at the same time (an all-to-all's block of a member's `dest`):
/// with AVX2 and two pages or more, upwards up to the last page boundary at least a page
/// below the end, then the rest top down ([`copy_down`]), so that no upward stream of the
/// copy ends at the block's upper edge. There the hardware prefetcher runs on into the next
/// page, wherever that page is mapped in this process, and takes lines of the next block from
/// the core that is writing them, which then has to fetch them back.
///
/// Measured on the project's 2-vCPU EPYC, all-to-all, 8 PEs, 256 KiB per PE (32 KiB blocks),
/// us per call, medians of 24 alternating runs, PE k bound to CPU k mod 2, by the VM's state
/// (`benches/c/c2c.c`): where before the loop every PE had read one word of every page of
/// every other member's `dest` (as any collective over the whole of `dest` does: a
/// reduction's reads of the shares, an all-gather's puts), upwards only / this copy / no such
/// page ever mapped: 58.2 / 35.5 / 38.1 with the vCPUs apart, 42.9 / 38.2 / 38.2 with them
/// together. In the collective sweep's order (every case before the all-to-all, into the same
/// `dest`), unbound, see `coll::alltoall`. The all-gathers' puts (`fcollect`) measured within
/// the noise either way, and keep [`copy_bytes`].
///
/// Each byte is stored once, and the last element last (the top-down part stores its upper
/// end last).
///
/// # Safety
/// As [`copy_bytes`].
#[inline(never)]
pub(crate) unsafe fn copy_block(dst: *mut u8, src: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    if len >= 2 * PAGE && plan() != Plan::Memcpy {
        // The last page boundary at least a page below the end: above `dst` (len >= 2 pages),
        // at most `len - PAGE` bytes in.
        let end = dst as usize + len;
        let low = ((end - PAGE) & !(PAGE - 1)) - dst as usize;
        // SAFETY: the caller's contract, split at `low`.
        unsafe {
            copy_bytes(dst, src, low);
            return copy_down(dst.add(low), src.add(low), len - low);
        }
    }
    // SAFETY: forwarded contract.
    unsafe { copy_bytes(dst, src, len) }
}

/// Copies `len` bytes as [`copy_bytes`] does, but from the top down where the CPU has AVX2
/// and `len` is 64 bytes or more (`x86::backward_avx2`): no store straddles a page boundary,
/// and the last element is stored once, last.
///
/// # Safety
/// As [`copy_bytes`].
#[inline(never)]
unsafe fn copy_down(dst: *mut u8, src: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    if len >= 64 && plan() != Plan::Memcpy {
        // SAFETY: every plan but `Memcpy` has AVX2; the caller's contract, len >= 64.
        return unsafe { x86::backward_avx2::<false>(dst, src, len) };
    }
    // SAFETY: forwarded contract.
    unsafe { copy_bytes(dst, src, len) }
}

/// A kind of store for a large copy: [`copy_bytes`] or [`copy_streaming`], which have one
/// contract. Collectives choose it by rule (`outgrows_caches`, the staging area's team size)
/// or by measurement (`coll::stores`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stores {
    /// Ordinary stores ([`copy_bytes`]): the lines stay in this core's cache.
    Cached,
    /// Non-temporal stores ([`copy_streaming`]): the lines go to memory.
    Streaming,
}

impl Stores {
    /// Streaming stores where `stream` holds, else cached ones.
    pub(crate) fn streaming_if(stream: bool) -> Stores {
        if stream {
            Stores::Streaming
        } else {
            Stores::Cached
        }
    }

    /// The copy routine of this kind.
    pub(crate) fn copy(self) -> unsafe fn(*mut u8, *const u8, usize) {
        match self {
            Stores::Cached => copy_bytes,
            Stores::Streaming => copy_streaming,
        }
    }

    /// The copy routine of this kind for a block whose neighbours other cores write at the
    /// same time: [`copy_block`] or [`copy_streaming`] (whose stores bypass the caches).
    pub(crate) fn block_copy(self) -> unsafe fn(*mut u8, *const u8, usize) {
        match self {
            Stores::Cached => copy_block,
            Stores::Streaming => copy_streaming,
        }
    }
}

/// Whether lines that several other cores read next (a staged broadcast's pieces,
/// `coll::staged`) are better stored with streaming stores ([`copy_streaming`]), so that the
/// readers take them from memory: on AMD (the plan that uses the vector loops for every
/// distance), whose cores read a line that another core has just written slowly from that
/// core's cache, and several times more slowly where it sits on another die; not elsewhere,
/// where cached stores measured quicker (Intel: see `coll::staged`'s `stage_copy`).
pub(crate) fn readers_prefer_streaming() -> bool {
    plan() == Plan::VectorAll
}

/// Whether a collective whose data on this node (every member's source and destination
/// together) is `node_bytes` bytes outgrows the machine's last-level caches ([`cache_bytes`]),
/// so that its large copies should stream ([`copy_streaming`]): nothing it writes could stay in
/// the caches until its next use anyway, and streaming stores save reading each destination
/// line before overwriting it. The all-to-all and the all-gathers' puts ask this one rule.
///
/// "Outgrows" means more than three quarters of the caches, the fraction at which UCX's
/// copies switch to non-temporal stores on AMD by default (as glibc 2.34-2.36's `memcpy`
/// did): the caches also hold the program's other data, code and the other processes' lines,
/// so an exchange as large as the caches no longer stays in them. (Where sysfs does not say,
/// three quarters of `usize::MAX` is still more than any node holds.)
pub(crate) fn outgrows_caches(node_bytes: usize) -> bool {
    node_bytes > cache_bytes() / 4 * 3
}

/// The last-level caches of this machine, all of them together, in bytes (32 MiB on this
/// project's 2-vCPU EPYC): the largest level that the first CPU's cache directories in sysfs
/// list, times the number of distinct caches of that level (by the CPUs that share each).
/// `usize::MAX` where sysfs does not say (so nothing is ever larger). Read once.
///
/// (glibc's figure, `sysconf(_SC_LEVEL3_CACHE_SIZE)`, comes from CPUID, which virtual
/// machines often fill in for the whole host: 320 MiB on that EPYC.)
fn cache_bytes() -> usize {
    static CACHE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CACHE.get_or_init(|| read_cache_bytes(std::path::Path::new("/sys/devices/system/cpu")))
}

/// [`cache_bytes`] read from a sysfs CPU directory `cpus`.
fn read_cache_bytes(cpus: &std::path::Path) -> usize {
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).ok();
    // The index of the first CPU's largest cache level.
    let Ok(entries) = std::fs::read_dir(cpus.join("cpu0/cache")) else {
        return usize::MAX;
    };
    let Some((_, index)) = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.starts_with("index").then_some(())?;
            let level: u32 = read(e.path().join("level"))?.trim().parse().ok()?;
            Some((level, name))
        })
        .max()
    else {
        return usize::MAX;
    };
    let Ok(cpu_dirs) = std::fs::read_dir(cpus) else {
        return usize::MAX;
    };
    let mut seen = std::collections::HashSet::new();
    let mut total = 0usize;
    for d in cpu_dirs.flatten() {
        let name = d.file_name();
        let is_cpu = name
            .to_str()
            .and_then(|n| n.strip_prefix("cpu"))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        let cache = d.path().join("cache").join(&index);
        if !is_cpu {
            continue;
        }
        let (Some(shared), Some(size)) = (
            read(cache.join("shared_cpu_list")),
            read(cache.join("size")).and_then(|s| crate::config::parse_size(&s)),
        ) else {
            continue;
        };
        if seen.insert(shared.trim().to_owned()) {
            total = total.saturating_add(size);
        }
    }
    if total == 0 { usize::MAX } else { total }
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
    use super::moves::portable_short;
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
    /// path (`portable_short`, other architectures) is checked up to 64 bytes the same way, and
    /// [`copy_streaming`], [`copy_block`] and [`copy_down`] at every length.
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
                    for how in ["engine", "portable", "streaming", "block", "down"] {
                        if how == "portable" && len > 64 {
                            continue;
                        }
                        dst_buf[d_at..d_at + len].fill(0);
                        let dst = dst_buf[d_at..].as_mut_ptr();
                        // SAFETY: both buffers hold `len` bytes at these places (five pages
                        // long, places at most two pages in) and do not overlap.
                        let stores = log::record(|| unsafe {
                            match how {
                                "portable" => {
                                    by_page(dst, src, len, |d, s, n| portable_short(d, s, n))
                                }
                                "streaming" => copy_streaming(dst, src, len),
                                "block" => copy_block(dst, src, len),
                                "down" => copy_down(dst, src, len),
                                _ => copy_bytes(dst, src, len),
                            }
                        });
                        let what =
                            format!("len {len}, source at {so}, destination at {doff}, {how}");
                        assert_eq!(
                            &dst_buf[d_at..d_at + len],
                            &src_buf[s_at..s_at + len],
                            "{what}"
                        );
                        // `copy_block`'s part below its split may be left to glibc (long copies
                        // where the plan leaves them to it): the rest is the engine's own.
                        let (d, l, st) = match stores.first() {
                            Some(head) if how == "block" && head.libc && stores.len() > 1 => {
                                assert_eq!(head.at, dst as usize, "{what}: {stores:?}");
                                (head.at + head.len, len - head.len, &stores[1..])
                            }
                            _ => (dst as usize, len, &stores[..]),
                        };
                        check_stores(d, l, st, &what);
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

    /// Every length from 0 to 9000 bytes (the short moves, the vector loops' head, body and
    /// tail at every residue, across one and two page boundaries) and longer ones around
    /// three and four pages, at odd and aligned source and destination offsets in both loop
    /// directions, with cached stores, streaming, [`copy_block`] (whose split point moves
    /// with the destination's end) and [`copy_down`]: exactly the bytes arrive, and the bytes
    /// on either side of the destination stay as they were.
    #[test]
    fn copies_exactly_at_every_length_to_9000_and_longer() {
        const PAGE: usize = 4096;
        const MAX: usize = 17000;
        let mut src_buf = vec![0u8; MAX + 3 * PAGE];
        let mut dst_buf = vec![0u8; MAX + 3 * PAGE];
        for (i, b) in src_buf.iter_mut().enumerate() {
            *b = (i * 131 + 7) as u8;
        }
        let place = |base: usize, off: usize| PAGE + (off + PAGE - base % PAGE) % PAGE;
        let (sbase, dbase) = (src_buf.as_ptr() as usize, dst_buf.as_ptr() as usize);
        // (source page offset, destination page offset): aligned, odd on either side, and
        // distances (destination - source) in the aliasing window, below and above half a page.
        let mut pairs = vec![
            (0usize, 0usize),
            (1, 7),
            (3, 4093),
            (2053, 5),
            (16, 0),
            (0, 2080),
        ];
        let mut lens: Vec<usize> = (0..=9000).collect();
        lens.extend((3 * PAGE - 70..3 * PAGE + 70).chain(4 * PAGE - 3..=4 * PAGE + 3));
        lens.push(MAX);
        if cfg!(miri) {
            pairs.truncate(2);
            lens = (0..=9000).step_by(97).chain([3 * PAGE + 1, MAX]).collect();
        }
        for &(so, doff) in &pairs {
            let (s_at, d_at) = (place(sbase, so), place(dbase, doff));
            for &len in &lens {
                for how in ["cached", "streaming", "block", "down"] {
                    dst_buf[d_at - 1..d_at + len + 1].fill(0xEE);
                    let src = src_buf[s_at..].as_ptr();
                    let dst = dst_buf[d_at..].as_mut_ptr();
                    // SAFETY: both buffers hold `len` bytes at these places (at most two pages
                    // in, `MAX` plus three pages long) and do not overlap.
                    unsafe {
                        match how {
                            "streaming" => copy_streaming(dst, src, len),
                            "block" => copy_block(dst, src, len),
                            "down" => copy_down(dst, src, len),
                            _ => copy_bytes(dst, src, len),
                        }
                    };
                    let what = format!("len {len}, source at {so}, destination at {doff}, {how}");
                    assert!(
                        dst_buf[d_at..d_at + len] == src_buf[s_at..s_at + len],
                        "bytes differ: {what}"
                    );
                    assert_eq!(dst_buf[d_at - 1], 0xEE, "byte before, {what}");
                    assert_eq!(dst_buf[d_at + len], 0xEE, "byte after, {what}");
                }
            }
        }
    }

    /// The caches read from a sysfs tree: the largest level of the first CPU, once per
    /// distinct set of CPUs sharing it; `usize::MAX` where the tree says nothing usable.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "reads and writes files, which Miri's isolation forbids"
    )]
    fn cache_bytes_from_sysfs() {
        let root = std::env::temp_dir().join(format!("shmem-cache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let put = |cpu: usize, index: usize, level: &str, size: &str, shared: &str| {
            let d = root.join(format!("cpu{cpu}/cache/index{index}"));
            std::fs::create_dir_all(&d).expect("temp dir");
            std::fs::write(d.join("level"), level).expect("temp file");
            std::fs::write(d.join("size"), size).expect("temp file");
            std::fs::write(d.join("shared_cpu_list"), shared).expect("temp file");
        };
        assert_eq!(read_cache_bytes(&root), usize::MAX, "no tree");
        // Four CPUs, two L3s of 32 MiB (CPUs 0-1 and 2-3), a private L2 each.
        for cpu in 0..4 {
            put(cpu, 2, "2\n", "1024K\n", &format!("{cpu}\n"));
            let shared = if cpu < 2 { "0-1\n" } else { "2-3\n" };
            put(cpu, 3, "3\n", "32768K\n", shared);
        }
        // Not CPUs: ignored.
        std::fs::create_dir_all(root.join("cpufreq")).expect("temp dir");
        std::fs::create_dir_all(root.join("cpuidle")).expect("temp dir");
        assert_eq!(read_cache_bytes(&root), 64 << 20);
        // A size that does not parse leaves that CPU out, not the others.
        put(3, 3, "3\n", "lots\n", "3\n");
        assert_eq!(read_cache_bytes(&root), 64 << 20);
        std::fs::remove_dir_all(&root).expect("temp dir");
        // The machine's own answer is some size (or none known).
        assert!(cache_bytes() > 0);
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
