//! The process-wide state of the Python package: the `World` (started by `init`, ended by
//! `finalize`), the table of live heap blocks, the exception classes, and the checks that turn
//! Python's PE numbers and arrays into values of `shmem-core`, raising a Python exception on the
//! PE that erred (which goes on) before anything moves.

use pyo3::exceptions::{PyIndexError, PyMemoryError, PyValueError};
use pyo3::prelude::*;
use shmem_core::prelude::*;
use shmem_core::{MallocHints, ThreadLevel, raw};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard};

pyo3::create_exception!(
    shmem_rs,
    ShmemError,
    pyo3::exceptions::PyRuntimeError,
    "The runtime's state does not allow the call: before `init`, after `finalize`."
);
pyo3::create_exception!(
    shmem_rs,
    NotSymmetricError,
    PyValueError,
    "An array that must be symmetric (on the symmetric heap) is not, or lies only partly in it."
);
pyo3::create_exception!(
    shmem_rs,
    FreedError,
    PyValueError,
    "A symmetric object used after it was freed."
);

/// The `World`, leaked by `init` (dropped in place by `finalize`, its memory kept).
static WORLD: AtomicPtr<World> = AtomicPtr::new(std::ptr::null_mut());
static FINALIZED: AtomicBool = AtomicBool::new(false);
/// The thread level `init_thread` was given (`THREAD_*` numbering: 0..=3).
static LEVEL: AtomicU8 = AtomicU8::new(3);

/// The live heap blocks by address (the blocks of `alloc`, which Python frees by address).
struct Heap(BTreeMap<usize, SymArray<'static, u8>>);

// SAFETY: a heap block (`SymArray`, !Send because its collective free belongs to the program's
// collective calls) is allocated and freed only by the collective calls `alloc` and `free`, which
// the program makes in the same order on every PE and one at a time (the GIL is held from the
// table's lock to the end of the call); the table only moves blocks between those calls.
unsafe impl Send for Heap {}

static HEAP: Mutex<Heap> = Mutex::new(Heap(BTreeMap::new()));

fn heap() -> MutexGuard<'static, Heap> {
    HEAP.lock().unwrap_or_else(|p| p.into_inner())
}

/// The running `World`, or `ShmemError` naming `op` before `init` or after `finalize`.
#[inline]
pub(crate) fn world(op: &str) -> PyResult<&'static World> {
    let p = WORLD.load(Ordering::Acquire);
    if p.is_null() {
        return Err(not_running(op));
    }
    // SAFETY: a non-null pointer is the World leaked by `init`; `finalize` clears the pointer
    // before dropping it in place (its memory stays allocated).
    Ok(unsafe { &*p })
}

#[cold]
fn not_running(op: &str) -> PyErr {
    if FINALIZED.load(Ordering::Acquire) {
        ShmemError::new_err(format!(
            "{op}: called after finalize; the runtime cannot restart"
        ))
    } else {
        ShmemError::new_err(format!("{op}: called before init"))
    }
}

/// Whether the runtime is running.
#[pyfunction]
pub(crate) fn initialized() -> bool {
    !WORLD.load(Ordering::Acquire).is_null()
}

/// Whether `finalize` has run.
#[pyfunction]
pub(crate) fn finalized() -> bool {
    FINALIZED.load(Ordering::Acquire)
}

/// Starts the runtime (does nothing when it runs) with thread level `requested` (0: single, 1:
/// funneled, 2: serialized, 3: multiple) and returns the level provided. Joins the job of the
/// launcher (`shmemrun`, or PMIx under `mpirun`), or runs as a job of one PE without one.
#[pyfunction]
#[pyo3(signature = (requested = 3))]
pub(crate) fn init(py: Python<'_>, requested: i32) -> PyResult<i32> {
    if initialized() {
        return Ok(LEVEL.load(Ordering::Acquire) as i32);
    }
    if FINALIZED.load(Ordering::Acquire) {
        return Err(not_running("init"));
    }
    let level = match requested {
        0 => ThreadLevel::Single,
        1 => ThreadLevel::Funneled,
        2 => ThreadLevel::Serialized,
        3 => ThreadLevel::Multiple,
        _ => {
            return Err(PyValueError::new_err(format!(
                "init_thread: thread level {requested} is not one of THREAD_SINGLE (0), \
                 THREAD_FUNNELED (1), THREAD_SERIALIZED (2), THREAD_MULTIPLE (3)"
            )));
        }
    };
    // The rendezvous waits for the other PEs: other Python threads run meanwhile.
    let started = crate::rma::without_gil(py, level, shmem_core::init_thread);
    let (world, _) = started.map_err(|e| ShmemError::new_err(format!("init: {e}")))?;
    LEVEL.store(requested as u8, Ordering::Release);
    let w = Box::into_raw(Box::new(world));
    WORLD.store(w, Ordering::Release);
    end_job_on_panic();
    // SAFETY: just leaked; dropped in place only by `finalize` (its memory kept).
    crate::team::at_init(unsafe { &*w });
    Ok(requested)
}

/// The thread level given to `init`.
#[pyfunction]
pub(crate) fn query_thread() -> PyResult<i32> {
    world("query_thread")?;
    Ok(LEVEL.load(Ordering::Acquire) as i32)
}

/// Ends the runtime: quiet, then the runtime's finalize (a barrier). Heap blocks still live are
/// released with the heap. Does nothing when the runtime does not run.
#[pyfunction]
pub(crate) fn finalize(py: Python<'_>) {
    let p = WORLD.swap(std::ptr::null_mut(), Ordering::AcqRel);
    if p.is_null() {
        return;
    }
    FINALIZED.store(true, Ordering::Release);
    crate::on_finalize();
    // Freeing a block is collective: the runtime's finalize releases the whole heap instead.
    for (_, a) in std::mem::take(&mut heap().0) {
        std::mem::forget(a);
    }
    // SAFETY: `p` came from Box::into_raw in `init` and was taken out of WORLD above, so this is
    // the one drop; the World is dropped in place and its memory kept, so references made from
    // it earlier never dangle (using them after finalize is refused by `world`).
    crate::rma::without_gil(py, p, |p| unsafe {
        (*p).quiet();
        std::ptr::drop_in_place(p)
    });
}

/// Ends the whole job with `status` (every PE), without finalizing.
#[pyfunction]
#[pyo3(signature = (status = 0))]
pub(crate) fn global_exit(status: i32) -> PyResult<()> {
    world("global_exit")?.global_exit(status)
}

/// A panic of the runtime (a check that found the job in a state it cannot recover from: a
/// collective whose members disagree, a peer gone) ends the whole job, naming the PE, as in the
/// Rust and C APIs; the message is one line written whole.
fn end_job_on_panic() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("a panic without a message");
        let msg = msg.strip_prefix("shmem: ").unwrap_or(msg);
        let at = info
            .location()
            .map(|l| format!(" (at {l})"))
            .unwrap_or_default();
        raw::eprint_line(format_args!("shmem: {msg}{at}"));
        let p = WORLD.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: a non-null pointer is the live World leaked by `init`.
            unsafe { &*p }.global_exit(1);
        }
        std::process::exit(1)
    }));
}

/// This PE's number.
#[pyfunction]
pub(crate) fn my_pe() -> PyResult<usize> {
    Ok(world("my_pe")?.my_pe())
}

/// The number of PEs of the job.
#[pyfunction]
pub(crate) fn n_pes() -> PyResult<usize> {
    Ok(world("n_pes")?.n_pes())
}

/// `pe` as a PE of the job, or `IndexError` naming it and the job's size.
#[inline]
pub(crate) fn check_pe(op: &str, pe: i64, n: usize) -> PyResult<usize> {
    match usize::try_from(pe) {
        Ok(p) if p < n => Ok(p),
        _ => Err(pe_out_of_range(op, pe, n)),
    }
}

#[cold]
pub(crate) fn pe_out_of_range(op: &str, pe: i64, n: usize) -> PyErr {
    PyIndexError::new_err(format!(
        "{op}: PE {pe} is out of range: the job has {n} PEs (0..{n})"
    ))
}

/// Allocates `nbytes` bytes of the symmetric heap, collectively, aligned to `align` (a power of
/// two; `None` or 0: the heap's alignment), zeroed when `clear`; returns the address. A block of
/// 0 bytes still gets an address of its own (one byte is taken). `MemoryError` when the heap
/// cannot hold it, `ValueError` for a bad alignment (raised on every PE alike: all pass the same
/// arguments to a collective call).
#[pyfunction]
#[pyo3(signature = (nbytes, align = None, hints = 0, clear = true))]
pub(crate) fn alloc(
    py: Python<'_>,
    nbytes: usize,
    align: Option<usize>,
    hints: u64,
    clear: bool,
) -> PyResult<usize> {
    let w = world("alloc")?;
    let align = align.unwrap_or(0);
    if align != 0 && !align.is_power_of_two() {
        return Err(PyValueError::new_err(format!(
            "alloc: alignment {align} is not a power of two"
        )));
    }
    let hints = MallocHints::from_bits(hints).ok_or_else(|| {
        PyValueError::new_err(format!(
            "alloc: hints {hints:#x} are not a combination of MALLOC_ATOMICS_REMOTE (1) and \
             MALLOC_SIGNAL_REMOTE (2)"
        ))
    })?;
    let _ = hints; // every block supports remote atomics and signals
    let len = nbytes.max(1);
    // Allocation is collective (the heaps stay in step): other threads run meanwhile.
    let block = crate::rma::without_gil(py, w, |w| {
        if align > 1 {
            w.try_alloc_aligned::<u8>(len, align)
        } else {
            w.try_alloc::<u8>(len)
        }
    });
    let block =
        block.map_err(|e| PyMemoryError::new_err(format!("alloc of {nbytes} bytes: {e}")))?;
    let addr = raw::local_addr(&block);
    // The runtime hands out zeroed memory, so `clear=False` (which allows garbage) costs the same.
    let _ = clear;
    heap().0.insert(addr as usize, block);
    Ok(addr as usize)
}

/// Frees the heap block at `addr`, collectively (a quiet first, so that this PE's puts into it
/// are complete). `KeyError` when `addr` is not the address of a live block of `alloc`.
#[pyfunction]
pub(crate) fn free(py: Python<'_>, addr: usize) -> PyResult<()> {
    let w = world("free")?;
    let block = heap().0.remove(&addr);
    match block {
        Some(a) => {
            crate::rma::without_gil(py, (w, a), |(w, a)| {
                w.quiet();
                drop(a)
            });
            Ok(())
        }
        None => Err(pyo3::exceptions::PyKeyError::new_err(format!(
            "free: {addr:#x} is not the address of a live block of the symmetric heap"
        ))),
    }
}

/// Whether `addr` is the address of a live heap block, and its length in bytes.
#[pyfunction]
pub(crate) fn block_len(addr: usize) -> Option<usize> {
    heap().0.get(&addr).map(|a| a.len())
}

/// Waits until every PE arrives, after completing this PE's puts (the GIL is released).
#[pyfunction]
pub(crate) fn barrier_all(py: Python<'_>) -> PyResult<()> {
    let w = world("barrier_all")?;
    crate::rma::without_gil(py, w, |w| w.barrier_all());
    crate::rma::release_pending();
    Ok(())
}

/// Waits until every PE arrives (no completion of puts; the GIL is released).
#[pyfunction]
pub(crate) fn sync_all(py: Python<'_>) -> PyResult<()> {
    let w = world("sync_all")?;
    crate::rma::without_gil(py, w, |w| w.sync_all());
    Ok(())
}

/// The owner of a NumPy view of a heap block (the view's `base`): its address and size, by
/// which `free` finds the block again. It owns nothing: the block lives until `free` or
/// `finalize`, and the heap stays mapped after that, so a view never points at unmapped memory.
#[pyclass(module = "shmem_rs._native", name = "Block", frozen)]
pub(crate) struct Block {
    /// The block's address.
    #[pyo3(get)]
    addr: usize,
    /// The view's size in bytes.
    #[pyo3(get)]
    nbytes: usize,
}

/// A writable one-dimensional `uint8` NumPy array over `nbytes` bytes, whose `base` is a
/// [`Block`] naming them: without `pe`, the bytes at `addr`, a live block of `alloc`
/// (`ValueError` otherwise); with `pe`, PE `pe`'s copy of the symmetric bytes at `addr` when
/// it is mapped into this process (`None` when it is not; `IndexError`, `NotSymmetricError` as
/// `ptr`).
#[pyfunction]
#[pyo3(signature = (addr, nbytes, pe = None))]
pub(crate) fn view(
    py: Python<'_>,
    addr: usize,
    nbytes: usize,
    pe: Option<i64>,
) -> PyResult<Option<Py<PyAny>>> {
    use numpy::npyffi::{NPY_ARRAY_CARRAY, NPY_TYPES, NpyTypes, PY_ARRAY_API, get_type_object};
    let addr = match pe {
        None => match block_len(addr) {
            Some(len) if nbytes <= len => addr,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "view: {addr:#x} is not a live block of the symmetric heap of at least \
                     {nbytes} bytes"
                )));
            }
        },
        Some(pe) => match crate::query::ptr(addr, nbytes, pe)? {
            Some(at) => at,
            None => return Ok(None),
        },
    };
    let owner = Bound::new(py, Block { addr, nbytes })?;
    let mut dims = [nbytes as numpy::npyffi::npy_intp];
    // SAFETY: the NumPy C API with the GIL held: a new array of `nbytes` uint8 over symmetric
    // memory (a live block, or a peer's copy mapped here: checked above; the heap stays mapped
    // until the process ends), which it does not own; `PyArray_NewFromDescr`
    // steals the descriptor's reference (a new one from `PyArray_DescrFromType`).
    let arr = unsafe {
        let descr = PY_ARRAY_API.PyArray_DescrFromType(py, NPY_TYPES::NPY_UBYTE as i32);
        PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            get_type_object(py, NpyTypes::PyArray_Type),
            descr,
            1,
            dims.as_mut_ptr(),
            std::ptr::null_mut(),
            addr as *mut std::ffi::c_void,
            NPY_ARRAY_CARRAY,
            std::ptr::null_mut(),
        )
    };
    // SAFETY: a new reference, or null with an exception set.
    let arr = unsafe { Bound::from_owned_ptr_or_err(py, arr) }?;
    // SAFETY: `arr` is the array just made; `PyArray_SetBaseObject` steals the reference to the
    // owner given to it (hence `into_ptr`), and fails only with an exception set.
    let rc =
        unsafe { PY_ARRAY_API.PyArray_SetBaseObject(py, arr.as_ptr().cast(), owner.into_ptr()) };
    if rc != 0 {
        return Err(PyErr::fetch(py));
    }
    Ok(Some(arr.unbind()))
}
