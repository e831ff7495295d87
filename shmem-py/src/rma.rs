//! Remote memory access with NumPy arrays: `put`, `get`, their `_nbi` forms, the strided
//! `iput` and `iget`, and `quiet` and `fence`, with shmem4py's signatures.
//!
//! Every argument is checked before a byte moves (types, sizes, the PE, symmetry), and a bad
//! one raises on this PE only. A transfer to a peer mapped here is a copy made with the GIL held
//! (it cannot wait), but for large ones; one through UCX releases the GIL while it waits.

use crate::buf::{Buf, buf, same_kind};
use crate::ctx::{self, CtxEntry};
use crate::state::{self, NotSymmetricError, world};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use shmem_core::prelude::*;
use shmem_core::{Element, Shared, raw};
use std::sync::Mutex;

/// Copies of at least this many bytes release the GIL, so that other Python threads run while
/// the memory moves (below it, releasing and taking the GIL back costs more than it frees).
pub(crate) const DETACH_BYTES: usize = 64 * 1024;

/// A value moved into a closure that runs without the GIL. Raw pointers and the runtime's
/// located ranges are not `Send` by themselves.
pub(crate) struct Detached<T>(pub(crate) T);

// SAFETY: what is wrapped is used only inside the call that made it, on whichever thread runs
// the closure (`detach` runs it on the calling thread); the arrays it points into are held by the
// call's arguments until it returns.
unsafe impl<T> Send for Detached<T> {}

impl<T> Detached<T> {
    /// The value (taken as a whole, so that a closure captures the wrapper, not its fields).
    #[inline(always)]
    pub(crate) fn into_inner(self) -> T {
        self.0
    }
}

/// Runs `f(value)` with the GIL released, so that other Python threads run while it waits.
/// `detach` runs it on the calling thread: nothing crosses threads, so values that are not
/// `Send` (the `World`, raw pointers) may go in and out.
#[inline]
pub(crate) fn without_gil<T, R>(py: Python<'_>, value: T, f: impl FnOnce(T) -> R) -> R {
    let job = Detached((value, f));
    py.detach(move || {
        let (value, f) = job.into_inner();
        Detached(f(value))
    })
    .into_inner()
}

/// Arrays that a non-blocking transfer through UCX reads or writes, kept alive until the next
/// quiet (Python could otherwise free them while UCX uses their memory).
static PENDING: Mutex<Vec<Py<PyAny>>> = Mutex::new(Vec::new());

/// Lets go of the arrays kept for non-blocking transfers (after a quiet completed them).
pub(crate) fn release_pending() {
    let mut p = PENDING.lock().unwrap_or_else(|p| p.into_inner());
    if !p.is_empty() {
        p.clear();
    }
}

fn keep_pending(obj: &Bound<'_, PyAny>) {
    PENDING
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(obj.clone().unbind());
}

/// The number of elements to move: `size`, checked against both sides, or the smaller side.
#[inline]
fn count(op: &str, size: Option<usize>, target: usize, source: usize) -> PyResult<usize> {
    match size {
        None => Ok(target.min(source)),
        Some(n) if n <= target && n <= source => Ok(n),
        Some(n) => Err(PyValueError::new_err(format!(
            "{op}: size {n} is more than the target ({target} elements) or the source \
             ({source} elements) holds"
        ))),
    }
}

/// Why `len` bytes at `addr` on `pe` could not be located: the runtime is down, the PE is out
/// of range, or the bytes are not symmetric.
#[cold]
fn not_located(op: &str, what: &str, addr: *const u8, bytes: usize, pe: i64) -> PyErr {
    let w = match world(op) {
        Ok(w) => w,
        Err(e) => return e,
    };
    if let Err(e) = state::check_pe(op, pe, w.n_pes()) {
        return e;
    }
    not_symmetric(op, what, addr, bytes)
}

#[cold]
pub(crate) fn not_symmetric(op: &str, what: &str, addr: *const u8, bytes: usize) -> PyErr {
    NotSymmetricError::new_err(format!(
        "{op}: the {what} ({bytes} bytes at {addr:p}) is not symmetric: allocate it with \
         shmem.alloc, shmem.new_array (array, zeros, ...) or shmem_rs.sdo"
    ))
}

/// The `bytes` bytes at `addr` as a symmetric object of `E`s, or [`NotSymmetricError`].
#[inline]
pub(crate) fn sym_at<E: Element>(
    op: &str,
    what: &str,
    addr: *mut u8,
    len: usize,
) -> PyResult<SymSlice<'static, E>> {
    // SAFETY: the memory is a live NumPy array's (held by the caller); the slice is used only in
    // this call, through the runtime's raw-pointer paths, and no Rust reference is made over it.
    unsafe { raw::sym::<E>(addr.cast(), len) }
        .ok_or_else(|| not_symmetric(op, what, addr, len * size_of::<E>()))
}

/// Puts `bytes` bytes from `src` to `dst` (symmetric) on PE `pe` of the default context; the
/// fast path of every put.
#[inline]
fn put_default(
    py: Python<'_>,
    op: &str,
    dst: *mut u8,
    src: *const u8,
    bytes: usize,
    pe: i64,
) -> PyResult<()> {
    // SAFETY: `dst` and `src` are the live arrays of the call; `locate` checks the PE and the range.
    let Some(d) = (unsafe { raw::locate::<u8>(dst, bytes, pe as usize) }).filter(|_| pe >= 0)
    else {
        return Err(not_located(op, "target", dst, bytes, pe));
    };
    if d.is_plain() && bytes < DETACH_BYTES {
        // SAFETY: `src` holds `bytes` readable bytes (the source array, checked).
        unsafe { d.put(src) };
        return Ok(());
    }
    // SAFETY: as above.
    without_gil(py, (d, src), |(d, src)| unsafe { d.put(src) });
    Ok(())
}

/// Gets `bytes` bytes from `src` (symmetric) on PE `pe` into `dst`, on the default context.
#[inline]
fn get_default(
    py: Python<'_>,
    op: &str,
    dst: *mut u8,
    src: *mut u8,
    bytes: usize,
    pe: i64,
) -> PyResult<()> {
    // SAFETY: as in `put_default`.
    let Some(s) = (unsafe { raw::locate::<u8>(src, bytes, pe as usize) }).filter(|_| pe >= 0)
    else {
        return Err(not_located(op, "source", src, bytes, pe));
    };
    if s.is_plain() && bytes < DETACH_BYTES {
        // SAFETY: `dst` holds `bytes` writable bytes (the target array, checked).
        unsafe { s.get(dst) };
        return Ok(());
    }
    // SAFETY: as above.
    without_gil(py, (s, dst), |(s, dst)| unsafe { s.get(dst) });
    Ok(())
}

/// A put or get on a created context: the non-blocking transfer, then the context's quiet.
#[allow(clippy::too_many_arguments)]
fn rma_ctx(
    py: Python<'_>,
    op: &str,
    c: &'static CtxEntry,
    put: bool,
    remote: *mut u8,
    local: *mut u8,
    bytes: usize,
    pe: i64,
) -> PyResult<()> {
    let w = world(op)?;
    let wpe = c.pe(op, pe, w.n_pes())?;
    let what = if put { "target" } else { "source" };
    let slice = sym_at::<u8>(op, what, remote, bytes)?;
    without_gil(py, (slice, local), |(slice, local)| {
        // SAFETY: the local array is held by the call until the quiet below completes the
        // transfer; the range is checked by the runtime.
        unsafe {
            if put {
                raw::put_nbi::<u8, Shared>(Some(&c.ctx), &slice, wpe, local, bytes);
            } else {
                raw::get_nbi::<u8, Shared>(Some(&c.ctx), &slice, wpe, local, bytes);
            }
        }
        c.ctx.quiet();
    });
    Ok(())
}

/// Copies ``size`` elements (default: as many as both hold) of the local array ``source`` to the
/// symmetric array ``target`` on PE ``pe``. Both arrays are contiguous and of the same element
/// type. Returns when ``source`` may be reused; the data is at ``pe`` after `quiet`.
#[pyfunction]
#[pyo3(signature = (target, source, pe, size = None, ctx = None))]
pub(crate) fn put(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    pe: i64,
    size: Option<usize>,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    const OP: &str = "put";
    let t = buf(OP, "target", target, false)?;
    let s = buf(OP, "source", source, true)?;
    same_kind(OP, t.kind, s.kind)?;
    let bytes = count(OP, size, t.len, s.len)? * t.kind.size;
    match ctx::resolve(OP, ctx)? {
        None => put_default(py, OP, t.ptr, s.ptr, bytes, pe),
        Some(c) => rma_ctx(py, OP, c, true, t.ptr, s.ptr, bytes, pe),
    }
}

/// Copies ``size`` elements (default: as many as both hold) of the symmetric array ``source`` on
/// PE ``pe`` into the local array ``target``. Returns when the data is in ``target``.
#[pyfunction]
#[pyo3(signature = (target, source, pe, size = None, ctx = None))]
pub(crate) fn get(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    pe: i64,
    size: Option<usize>,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    const OP: &str = "get";
    let t = buf(OP, "target", target, false)?;
    let s = buf(OP, "source", source, true)?;
    same_kind(OP, t.kind, s.kind)?;
    let bytes = count(OP, size, t.len, s.len)? * t.kind.size;
    match ctx::resolve(OP, ctx)? {
        None => get_default(py, OP, t.ptr, s.ptr, bytes, pe),
        Some(c) => rma_ctx(py, OP, c, false, s.ptr, t.ptr, bytes, pe),
    }
}

/// The non-blocking transfer of `put_nbi` and `get_nbi`: complete at the next `quiet` of its
/// context. Through UCX the local array is kept alive until then.
#[allow(clippy::too_many_arguments)]
fn rma_nbi(
    op: &str,
    put: bool,
    local_obj: &Bound<'_, PyAny>,
    remote: Buf,
    local: Buf,
    size: Option<usize>,
    pe: i64,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let w = world(op)?;
    same_kind(op, remote.kind, local.kind)?;
    let bytes = count(op, size, remote.len, local.len)? * remote.kind.size;
    let c = ctx::resolve(op, ctx)?;
    let wpe = match c {
        None => state::check_pe(op, pe, w.n_pes())?,
        Some(c) => c.pe(op, pe, w.n_pes())?,
    };
    let what = if put { "target" } else { "source" };
    let slice = sym_at::<u8>(op, what, remote.ptr, bytes)?;
    // SAFETY: checked above (the range is symmetric, the PE is one of the job).
    let plain = unsafe { raw::locate::<u8>(remote.ptr, bytes, wpe) }.is_some_and(|l| l.is_plain());
    if !plain {
        keep_pending(local_obj);
    }
    let ctx = c.map(|c| &c.ctx);
    // SAFETY: the local array is kept alive until the quiet that completes the transfer (above,
    // when UCX carries it; a mapped peer's transfer is complete on return).
    unsafe {
        if put {
            raw::put_nbi::<u8, Shared>(ctx, &slice, wpe, local.ptr, bytes);
        } else {
            raw::get_nbi::<u8, Shared>(ctx, &slice, wpe, local.ptr, bytes);
        }
    }
    Ok(())
}

/// `put`, non-blocking: ``source`` may not be changed until the next `quiet` (of ``ctx``).
#[pyfunction]
#[pyo3(signature = (target, source, pe, size = None, ctx = None))]
pub(crate) fn put_nbi(
    target: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    pe: i64,
    size: Option<usize>,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let t = buf("put_nbi", "target", target, false)?;
    let s = buf("put_nbi", "source", source, true)?;
    rma_nbi("put_nbi", true, source, t, s, size, pe, ctx)
}

/// `get`, non-blocking: ``target`` holds the data after the next `quiet` (of ``ctx``).
#[pyfunction]
#[pyo3(signature = (target, source, pe, size = None, ctx = None))]
pub(crate) fn get_nbi(
    target: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    pe: i64,
    size: Option<usize>,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let t = buf("get_nbi", "target", target, false)?;
    let s = buf("get_nbi", "source", source, true)?;
    rma_nbi("get_nbi", false, target, s, t, size, pe, ctx)
}

/// Runs `$body` with `$E` the unsigned type (or array of them) of `$size` bytes (1, 2, 4, 8, 16
/// or 32), else evaluates `$other`: the element types of the strided paths (`rma.rs`, `sdo.rs`).
macro_rules! by_size {
    ($size:expr, $E:ident => $body:expr, _ => $other:expr) => {
        match $size {
            1 => {
                type $E = u8;
                $body
            }
            2 => {
                type $E = u16;
                $body
            }
            4 => {
                type $E = u32;
                $body
            }
            8 => {
                type $E = u64;
                $body
            }
            16 => {
                type $E = [u64; 2];
                $body
            }
            32 => {
                type $E = [u64; 4];
                $body
            }
            _ => $other,
        }
    };
}
pub(crate) use by_size;

/// `n` elements of `E` read from `at`, every `stride`-th, into a private vector (the memory may
/// be written meanwhile by another thread or PE, so it is read through raw pointers only).
/// Contiguous elements (`stride` 1) are one bulk copy. Byte by byte (a loop the compiler did not
/// vectorize), copying the 1 MiB source of `shmem.alltoall` took most of the call: 570-750 us
/// per call at 2 PEs, against 107-115 us with the bulk copy.
pub(crate) fn gather<E: Element>(at: *const u8, stride: usize, n: usize) -> Vec<E> {
    if stride == 1 {
        let mut v = Vec::<E>::with_capacity(n);
        // SAFETY: the caller's array holds `n` elements from `at` (its count was checked
        // against the array's length), any alignment; the vector has room for `n` elements,
        // which the copy initializes (every bit pattern is a value of an `Element`, as the
        // unaligned reads below also assume), apart from the array.
        unsafe {
            std::ptr::copy_nonoverlapping(at, v.as_mut_ptr().cast::<u8>(), n * size_of::<E>());
            v.set_len(n);
        }
        return v;
    }
    (0..n)
        .map(|i| {
            // SAFETY: element `i * stride` lies in the caller's array (its count was checked
            // against the array's length); unaligned reads, as NumPy arrays need not be aligned.
            unsafe { at.cast::<E>().add(i * stride).read_unaligned() }
        })
        .collect()
}

/// Writes `vals` to every `stride`-th element from `at` (raw writes, as [`gather`] reads;
/// contiguous elements in one bulk copy).
pub(crate) fn scatter<E: Element>(at: *mut u8, stride: usize, vals: &[E]) {
    if stride == 1 {
        // SAFETY: as in `gather`, for the writable target array, which holds `vals.len()`
        // elements from `at` and lies apart from `vals` (a private vector or slice).
        unsafe { std::ptr::copy_nonoverlapping(vals.as_ptr().cast::<u8>(), at, size_of_val(vals)) };
        return;
    }
    for (i, v) in vals.iter().enumerate() {
        // SAFETY: as in `gather`, for the writable target array.
        unsafe { at.cast::<E>().add(i * stride).write_unaligned(*v) }
    }
}

/// The number of elements a stride of `stride` selects from `len`.
#[inline]
fn strided_count(len: usize, stride: usize) -> usize {
    len.div_ceil(stride)
}

/// The strided transfer of `iput` (`put`) or `iget`: `n` elements, `remote_stride` apart in
/// the symmetric array, `local_stride` apart in the local one, as one strided operation of the
/// runtime (packed into one message through UCX).
#[allow(clippy::too_many_arguments)]
pub(crate) fn strided<E: Element>(
    py: Python<'_>,
    op: &str,
    put: bool,
    c: Option<&'static CtxEntry>,
    remote: *mut u8,
    remote_stride: usize,
    local: *mut u8,
    local_stride: usize,
    n: usize,
    pe: usize,
) -> PyResult<()> {
    if n == 0 {
        return Ok(());
    }
    let span = (n - 1) * remote_stride + 1;
    let what = if put { "target" } else { "source" };
    let slice = sym_at::<E>(op, what, remote, span)?;
    // A mapped peer's transfer is a few copies: kept under the GIL when small.
    // SAFETY: checked above (symmetric; `pe` is a PE of the job).
    let plain = unsafe { raw::locate::<u8>(remote, 1, pe) }.is_some_and(|l| l.is_plain());
    let wait = !plain || n * size_of::<E>() >= DETACH_BYTES;
    let run = move || {
        if put {
            let vals = gather::<E>(local, local_stride, n);
            match c {
                None => slice.iput(pe, 0..span, remote_stride, &vals, 1),
                Some(c) => c.ctx.iput(&slice, pe, 0..span, remote_stride, &vals, 1),
            }
        } else {
            let mut vals = vec![<E as zerocopy::FromZeros>::new_zeroed(); n];
            match c {
                None => slice.iget(pe, 0..span, remote_stride, &mut vals, 1),
                Some(c) => c.ctx.iget(&slice, pe, 0..span, remote_stride, &mut vals, 1),
            }
            scatter(local, local_stride, &vals);
        }
    };
    if wait {
        without_gil(py, (), |()| run());
    } else {
        run();
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn irma(
    py: Python<'_>,
    op: &str,
    put: bool,
    target: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    pe: i64,
    tst: usize,
    sst: usize,
    size: Option<usize>,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    if tst == 0 || sst == 0 {
        return Err(PyValueError::new_err(format!(
            "{op}: strides must be positive (tst={tst}, sst={sst})"
        )));
    }
    let t = buf(op, "target", target, false)?;
    let s = buf(op, "source", source, true)?;
    same_kind(op, t.kind, s.kind)?;
    let n = count(
        op,
        size,
        strided_count(t.len, tst),
        strided_count(s.len, sst),
    )?;
    let w = world(op)?;
    let c = ctx::resolve(op, ctx)?;
    let wpe = match c {
        None => state::check_pe(op, pe, w.n_pes())?,
        Some(c) => c.pe(op, pe, w.n_pes())?,
    };
    let (remote, rst, local, lst) = if put {
        (t.ptr, tst, s.ptr, sst)
    } else {
        (s.ptr, sst, t.ptr, tst)
    };
    let size = t.kind.size;
    by_size!(size, E => strided::<E>(py, op, put, c, remote, rst, local, lst, n, wpe), _ => {
        Err(PyTypeError::new_err(format!("{op}: elements of {size} bytes are not supported")))
    })
}

/// Strided put: element ``i*tst`` of ``target`` on PE ``pe`` gets element ``i*sst`` of
/// ``source``, for ``size`` elements (default: as many as both strides select).
#[pyfunction]
#[pyo3(signature = (target, source, pe, tst = 1, sst = 1, size = None, ctx = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn iput(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    pe: i64,
    tst: usize,
    sst: usize,
    size: Option<usize>,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    irma(py, "iput", true, target, source, pe, tst, sst, size, ctx)
}

/// Strided get: element ``i*tst`` of the local ``target`` gets element ``i*sst`` of ``source``
/// on PE ``pe``, for ``size`` elements (default: as many as both strides select).
#[pyfunction]
#[pyo3(signature = (target, source, pe, tst = 1, sst = 1, size = None, ctx = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn iget(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    pe: i64,
    tst: usize,
    sst: usize,
    size: Option<usize>,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    irma(py, "iget", false, target, source, pe, tst, sst, size, ctx)
}

/// Waits for completion of this PE's operations on the context (default: the default context):
/// puts are then visible at their targets, non-blocking gets have their data.
#[pyfunction]
#[pyo3(signature = (ctx = None))]
pub(crate) fn quiet(py: Python<'_>, ctx: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    match ctx::resolve("quiet", ctx)? {
        None => {
            if !raw::quiet_if_plain() {
                let w = world("quiet")?;
                without_gil(py, w, |w| w.quiet());
                release_pending();
            }
        }
        Some(c) => {
            py.detach(|| c.ctx.quiet());
            release_pending();
        }
    }
    Ok(())
}

/// Orders this PE's puts to each PE on the context: those before it are delivered before those
/// after it.
#[pyfunction]
#[pyo3(signature = (ctx = None))]
pub(crate) fn fence(ctx: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    match ctx::resolve("fence", ctx)? {
        None => world("fence")?.fence(),
        Some(c) => c.ctx.fence(),
    }
    Ok(())
}
