//! Non-blocking RMA by address: [`put_nbi`] and [`get_nbi`], on a context's route or the
//! runtime's, complete at that route's next quiet. The caller keeps the local buffer valid
//! until then (the typed API's `NbiScope` borrows it instead).

use crate::element::Element;
use crate::object::bounds::checked_offset;
use crate::object::sealed::Placed;
use crate::object::view::SymSlice;
use crate::ops::ctx::{Ctx, CtxMode};
use crate::transport::rma::{Completion, Dir};

/// `shmem_put_nbi` (with `ctx`: `shmem_ctx_put_nbi`): starts copying `src.len()` elements into
/// elements `at..` of `dest` on PE `pe`; complete at the next quiet of the route (the context's,
/// or the runtime's for `None`). Checks the PE and the range before any byte moves.
///
/// # Safety
/// `src` points to `len` readable elements that stay valid and unchanged until that quiet.
///
/// # Examples
///
/// ```
/// use shmem_core::{Shared, SymmetricArray, raw};
/// let world = shmem_core::init()?;
/// let a = world.alloc::<u64>(4);
/// let src = [1u64, 2, 3, 4];
/// // SAFETY: `src` lives and stays unchanged until the quiet below.
/// unsafe { raw::put_nbi::<u64, Shared>(None, &a.slice(..), world.my_pe(), src.as_ptr(), 4) };
/// world.quiet();
/// assert_eq!(a.local_get(3), 4);
/// # Ok::<(), shmem_core::Error>(())
/// ```
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
///
/// # Examples
///
/// ```
/// use shmem_core::{CtxOptions, Private, SymmetricArray, raw};
/// let world = shmem_core::init()?;
/// let a = world.alloc::<u64>(4);
/// a.local_write(.., &[5, 6, 7, 8]);
/// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
/// let mut back = [0u64; 4];
/// // SAFETY: nothing reads or writes `back` until the context's quiet below.
/// unsafe { raw::get_nbi(Some(&ctx), &a.slice(..), world.my_pe(), back.as_mut_ptr(), 4) };
/// ctx.quiet();
/// assert_eq!(back, [5, 6, 7, 8]);
/// # Ok::<(), shmem_core::Error>(())
/// ```
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
