//! Address-based access for foreign-language layers: the OpenSHMEM C API (`shmem-capi`) is
//! built on this module. Rust programs use the typed API instead.
//!
//! C names symmetric objects by address: a pointer into the symmetric heap, or to a global or
//! static variable. [`sym`] turns such an address into a [`SymSlice`], after which every typed
//! operation of this crate applies (RMA, atomics, waits, signals, collectives, contexts), with
//! its checks. What the typed API expresses with scopes and borrows (non-blocking transfers
//! complete at the next quiet) is here an `unsafe fn` whose caller keeps the buffers valid, as
//! the C standard asks of its users.
//!
//! Global and static variables of a C program are symmetric only when the layer calls
//! [`enable_data_segment`] before `init`: the program's `.data` and `.bss` are then moved into
//! shared memory at the same addresses and registered with UCX.
//!
//! ```
//! use shmem_core::prelude::*;
//! let world = shmem_core::init()?;
//! let a = world.alloc::<u64>(4);
//! let addr = a.peer_slice(world.my_pe()).map(|v| v.as_ptr()).unwrap_or(std::ptr::null_mut());
//! // The address of element 1, as a C program would pass it:
//! // SAFETY: elements 1 and 2 of `a`, which lives until the end of this example.
//! let one = unsafe { shmem_core::raw::sym::<u64>(addr.wrapping_add(1), 2) }.expect("symmetric");
//! one.put(world.my_pe(), .., &[7, 8]);
//! world.quiet();
//! assert_eq!((a.local_get(1), a.local_get(2)), (7, 8));
//! assert!(shmem_core::raw::offset_of((&0u64 as *const u64).cast(), 8).is_none()); // a local is not
//! # Ok::<(), shmem_core::Error>(())
//! ```

// The parts, lowest first: `located.rs` (`locate` and `Located`, the fast path's elements and
// their RMA), `nbi.rs` (`put_nbi` and `get_nbi`), `word.rs` (`LocatedWord`, the fast path's
// atomics). This file keeps what names symmetric memory by address in the general path.
#[cfg(not(doc_examples_check))]
mod located;
#[cfg(doc_examples_check)]
pub mod located;
#[cfg(not(doc_examples_check))]
mod nbi;
#[cfg(doc_examples_check)]
pub mod nbi;
#[cfg(not(doc_examples_check))]
mod word;
#[cfg(doc_examples_check)]
pub mod word;

pub use located::{Located, locate};
pub use nbi::{get_nbi, put_nbi};
pub use word::LocatedWord;

use crate::element::Element;
use crate::mem::dataseg::DATA_OFFSET;
use crate::object::view::SymSlice;
use crate::ops::lock::LockRef;
use crate::ops::rma::SymmetricArray;
use crate::transport::{Transport, transport};
use located::translate_in;

/// Asks the next `init` to make the main program's global and static variables (`.data` and
/// `.bss`) symmetric. Call it before `init`, from the only thread of the program: the segment is
/// moved into shared memory in place while `init` starts, and a write by another thread during
/// that moment would be lost.
///
/// # Examples
///
/// Not run here: a test harness does not promise that the example has the program to itself.
///
/// ```no_run
/// use shmem_core::SymmetricArray;
/// // A global variable, as C programs have them: symmetric once the data segment is.
/// static mut STEPS: u64 = 0;
///
/// shmem_core::raw::enable_data_segment();
/// let world = shmem_core::init()?;
/// // SAFETY: STEPS is symmetric on every PE (the same program), and no Rust reference to it is
/// // taken while the view is used.
/// let steps = unsafe { shmem_core::raw::sym(&raw const STEPS, 1) }.expect("in the data segment");
/// steps.p((world.my_pe() + 1) % world.n_pes(), 0, 1);
/// world.barrier_all();
/// assert_eq!(steps.local_get(0), 1);
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub fn enable_data_segment() {
    crate::mem::dataseg::want();
}

/// Keeps `bytes_per_pe` bytes per PE of the symmetric heap for the layer's own blocks (such as
/// one word per PE of scratch space): `init` maps that much (times the number of PEs, rounded up
/// to whole cache lines) on top of `SHMEM_SYMMETRIC_SIZE`, so that the program can still
/// allocate all of `SHMEM_SYMMETRIC_SIZE` in one block. Calls add up; only calls before `init`
/// count.
///
/// ```
/// shmem_core::raw::reserve_heap_per_pe(8);
/// let world = shmem_core::init()?;
/// let scratch = world.alloc::<u64>(world.n_pes()); // from the reserve
/// let all = world.try_alloc::<u8>(256 << 20); // the default SHMEM_SYMMETRIC_SIZE, whole
/// assert!(all.is_ok() || std::env::var_os("SHMEM_SYMMETRIC_SIZE").is_some());
/// # drop((scratch, all));
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub fn reserve_heap_per_pe(bytes_per_pe: usize) {
    crate::config::reserve_heap_per_pe(bytes_per_pe);
}

/// Writes `msg` and a newline to stderr in one write, so that the messages of PEs sharing a
/// terminal or pipe never mix mid-line (`eprintln!` writes in pieces). For the layer's
/// warnings, which start with `shmem: ` like the runtime's.
///
/// ```
/// shmem_core::raw::eprint_line(format_args!("shmem: example: {} is just a warning", 42));
/// ```
pub fn eprint_line(msg: std::fmt::Arguments<'_>) {
    crate::error::eprint_line(msg);
}

/// The runtime's offset of `bytes` bytes at `addr` in this PE's symmetric memory (the statics
/// and the heap, or the data segment), or `None` when they are not all inside one of them (the
/// start of the heap mapping, before the statics, is not symmetric memory: the runtime keeps
/// its own words elsewhere). Panics before `init`.
///
/// # Examples
///
/// ```
/// use shmem_core::raw;
/// let world = shmem_core::init()?;
/// let a = world.alloc::<u64>(4);
/// let base = raw::local_addr(&a);
/// let start = raw::offset_of(base.cast(), 32).expect("all of `a` is symmetric");
/// assert_eq!(raw::offset_of(base.wrapping_add(1).cast(), 8), Some(start + 8));
/// let local = [0u64; 4];
/// assert_eq!(raw::offset_of(local.as_ptr().cast(), 32), None); // a local is not symmetric
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[track_caller]
pub fn offset_of(addr: *const u8, bytes: usize) -> Option<usize> {
    translate(transport(), addr, bytes)
}

/// [`offset_of`] in the transport `tp`: a subtract and a compare against the heap's bounds, the
/// data segment as the second case.
#[inline(always)]
fn translate(tp: &Transport, addr: *const u8, bytes: usize) -> Option<usize> {
    translate_in(tp, addr, bytes).map(|(data, at)| if data { DATA_OFFSET + at } else { at })
}

/// `shmem_quiet` of the default context ([`World::quiet`](crate::World::quiet)) when it is one
/// fence: the runtime is live and no peer is reached through UCX (a put to a mapped peer is
/// complete when its stores are, and the fence orders them before what follows). Returns
/// whether it did so; `false`, having done nothing, before `init`, after finalize or in a job
/// with UCX peers, for a foreign layer's general path.
///
/// ```
/// let world = shmem_core::init()?;
/// if !shmem_core::raw::quiet_if_plain() {
///     world.quiet();
/// }
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[inline(always)]
pub fn quiet_if_plain() -> bool {
    let Some(tp) = crate::transport::try_live_transport() else {
        return false;
    };
    if tp.any_ucx() {
        return false;
    }
    // What `Transport::quiet` does after its checks when no peer is reached through UCX.
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    true
}

/// The `len` elements of `E` at `addr` in this PE's symmetric memory as a symmetric object, or
/// `None` when they do not all lie in the symmetric heap or (with [`enable_data_segment`]) the
/// data segment. Every PE that passes the address of the same object gets the same object.
/// The address need not be aligned for `E` (typed operations copy bytes; atomics and waits check
/// alignment themselves).
///
/// # Safety
/// The returned object has no lifetime to tie it to what lives at `addr`, and other PEs write
/// through it. The caller makes sure that, while it or anything made from it is used, the bytes
/// are an object meant to be symmetric on every PE (a heap block that is not freed, a global
/// that the program treats as symmetric), and that no Rust reference (`&T` without interior
/// mutability, `&mut T`) covers them: as C's rules for symmetric objects ask of C programs.
///
/// # Examples
///
/// ```
/// use shmem_core::{SymmetricArray, raw};
/// let world = shmem_core::init()?;
/// let a = world.alloc::<f32>(4);
/// // The address of element 1, as a C caller passes `&a[1]`.
/// let at1 = raw::local_addr(&a).wrapping_add(1);
/// // SAFETY: elements 1..4 of `a`, which lives until the end of this example.
/// let tail = unsafe { raw::sym(at1, 3) }.expect("symmetric");
/// tail.p(world.my_pe(), 0, 1.5);
/// world.quiet();
/// assert_eq!(a.local_get(1), 1.5);
/// let local = [0f32; 4];
/// // SAFETY: nothing is made (a local array is not symmetric).
/// assert!(unsafe { raw::sym(local.as_ptr(), 4) }.is_none());
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[track_caller]
pub unsafe fn sym<E: Element>(addr: *const E, len: usize) -> Option<SymSlice<'static, E>> {
    let bytes = len.checked_mul(size_of::<E>())?;
    let offset = offset_of(addr.cast(), bytes)?;
    Some(SymSlice::from_offset(transport(), offset, len))
}

/// The address of this PE's copy of `obj` (the inverse of [`sym`]).
///
/// # Examples
///
/// ```
/// use shmem_core::{SymmetricArray, raw};
/// let world = shmem_core::init()?;
/// let a = world.alloc::<u32>(2);
/// a.local_set(1, 9);
/// let p = raw::local_addr(&a);
/// // SAFETY: element 1 of this PE's copy of `a`, which no PE writes meanwhile.
/// assert_eq!(unsafe { p.add(1).read() }, 9);
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[track_caller]
pub fn local_addr<E: Element, A: SymmetricArray<E> + ?Sized>(obj: &A) -> *mut E {
    obj.__transport().local(obj.__heap_offset()).cast()
}

/// The lock whose word is the 8 bytes at `addr` (a C `long` in symmetric memory, zero when
/// unlocked), or `None` when they are not symmetric or not 8-byte aligned.
///
/// # Safety
/// As [`sym`]: the word stays a symmetric lock word, covered by no Rust reference, while the
/// lock is used.
///
/// # Examples
///
/// ```
/// use shmem_core::raw;
/// let world = shmem_core::init()?;
/// let word = world.alloc::<i64>(1); // a C `long` lock: zero is unlocked
/// // SAFETY: `word` stays a lock word, covered by no reference, until the end of this example.
/// let lock = unsafe { raw::lock_at(raw::local_addr(&word)) }.expect("symmetric and aligned");
/// {
///     let _held = lock.lock();
///     // ... the critical section ...
/// }
/// world.barrier_all();
/// let local = 0i64;
/// // SAFETY: nothing is made (a local is not symmetric).
/// assert!(unsafe { raw::lock_at(&raw const local) }.is_none());
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[track_caller]
pub unsafe fn lock_at(addr: *const i64) -> Option<LockRef<'static>> {
    if !(addr as usize).is_multiple_of(8) {
        return None;
    }
    let offset = offset_of(addr.cast(), 8)?;
    Some(LockRef::at_offset(transport(), offset))
}
