//! The copy plan of this CPU, chosen once at run time from what the CPU is (as glibc and UCX
//! choose their copy routines from CPUID): `memcpy` for long copies, the vector loops in the
//! aliasing window only, or (AMD) the vector loops at every distance up to [`VECTOR_MAX`]
//! ([`VECTOR_UPTO`] where the last-level cache is small). [`copy_large`] routes the copies of
//! at least [`VECTOR_MIN`](super::VECTOR_MIN) bytes by it; the short paths only ask it whether
//! AVX2 is there (every plan but [`Plan::Memcpy`]).

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use super::log;
use super::moves::PAGE;
#[cfg(target_arch = "x86_64")]
use super::x86::{self, vector_by_distance};

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
pub(super) enum Plan {
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
pub(super) fn plan() -> Plan {
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

/// Copies `len >= VECTOR_MIN` bytes as the plan says.
///
/// # Safety
/// As [`copy_bytes`](super::copy_bytes), and `len >= 64`.
#[inline(never)]
pub(super) unsafe fn copy_large(dst: *mut u8, src: *const u8, len: usize) {
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
