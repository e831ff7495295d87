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

use crate::element::Element;
use crate::mem::dataseg::DATA_OFFSET;
use crate::object::bounds::checked_offset;
use crate::object::sealed::Placed;
use crate::object::view::SymSlice;
use crate::ops::ctx::{Ctx, CtxMode};
use crate::ops::lock::LockRef;
use crate::ops::rma::SymmetricArray;
use crate::transport::rma::{Completion, Dir};
use crate::transport::transport;

/// Asks the next `init` to make the main program's global and static variables (`.data` and
/// `.bss`) symmetric. Call it before `init`, from the only thread of the program: the segment is
/// moved into shared memory in place while `init` starts, and a write by another thread during
/// that moment would be lost.
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
#[track_caller]
pub fn offset_of(addr: *const u8, bytes: usize) -> Option<usize> {
    let tp = transport();
    let a = addr as usize;
    let heap = tp.base() as usize;
    let (data, data_len) = tp.data_segment();
    let (offset, limit) =
        if a >= heap && a - heap >= tp.layout.statics && a - heap < tp.layout.total {
            (a - heap, tp.layout.total)
        } else if !data.is_null() && a >= data as usize && a - (data as usize) < data_len {
            (a - data as usize, data_len)
        } else {
            return None;
        };
    let end = offset.checked_add(bytes)?;
    if end > limit {
        return None;
    }
    Some(if limit == tp.layout.total {
        offset
    } else {
        DATA_OFFSET + offset
    })
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
#[track_caller]
pub unsafe fn sym<E: Element>(addr: *const E, len: usize) -> Option<SymSlice<'static, E>> {
    let bytes = len.checked_mul(size_of::<E>())?;
    let offset = offset_of(addr.cast(), bytes)?;
    Some(SymSlice::from_offset(transport(), offset, len))
}

/// The address of this PE's copy of `obj` (the inverse of [`sym`]).
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
#[track_caller]
pub unsafe fn lock_at(addr: *const i64) -> Option<LockRef<'static>> {
    if !(addr as usize).is_multiple_of(8) {
        return None;
    }
    let offset = offset_of(addr.cast(), 8)?;
    Some(LockRef::at_offset(transport(), offset))
}

/// `shmem_put_nbi` (with `ctx`: `shmem_ctx_put_nbi`): starts copying `src.len()` elements into
/// elements `at..` of `dest` on PE `pe`; complete at the next quiet of the route (the context's,
/// or the runtime's for `None`). Checks the PE and the range before any byte moves.
///
/// # Safety
/// `src` points to `len` readable elements that stay valid and unchanged until that quiet.
#[track_caller]
pub unsafe fn put_nbi<E: Element, M: CtxMode>(
    ctx: Option<&Ctx<'_, M>>,
    dest: &SymSlice<'_, E>,
    pe: usize,
    src: *const E,
    len: usize,
) {
    // SAFETY: forwarded contract; a put only reads `src`.
    unsafe { nbi(ctx, dest, pe, Dir::Put, src.cast_mut(), len) }
}

/// `shmem_get_nbi` (with `ctx`: `shmem_ctx_get_nbi`): starts copying `len` elements of `src`
/// on PE `pe` into `dst`; `dst` holds them after the next quiet of the route. Checks the PE and
/// the range before any byte moves.
///
/// # Safety
/// `dst` points to `len` writable elements that stay valid, and that nothing else reads or
/// writes, until that quiet.
#[track_caller]
pub unsafe fn get_nbi<E: Element, M: CtxMode>(
    ctx: Option<&Ctx<'_, M>>,
    src: &SymSlice<'_, E>,
    pe: usize,
    dst: *mut E,
    len: usize,
) {
    // SAFETY: forwarded contract.
    unsafe { nbi(ctx, src, pe, Dir::Get, dst, len) }
}

/// The one non-blocking transfer of this module.
///
/// # Safety
/// As [`put_nbi`] and [`get_nbi`].
#[track_caller]
unsafe fn nbi<E: Element, M: CtxMode>(
    ctx: Option<&Ctx<'_, M>>,
    obj: &SymSlice<'_, E>,
    pe: usize,
    dir: Dir,
    local: *mut E,
    len: usize,
) {
    let op = match dir {
        Dir::Put => "put_nbi",
        Dir::Get => "get_nbi",
    };
    let at = checked_offset(obj, &(0..len), len, op, "local buffer");
    let tp = obj.__transport();
    let peer = match ctx {
        Some(c) => c.peer(pe),
        None => tp.peer(pe),
    };
    // SAFETY: the range lies inside the object (checked); the caller keeps `local` valid until
    // the quiet that completes the transfer.
    unsafe {
        tp.rma(
            peer,
            dir,
            Completion::Nbi,
            at,
            local.cast(),
            len * size_of::<E>(),
        )
    }
}
