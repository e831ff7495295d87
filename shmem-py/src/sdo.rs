//! PySHMEM's symmetric data objects: the native core of `shmem_rs.SymmetricArray`.
//!
//! An object is one block of the symmetric heap (from `state::alloc`) seen as an n-dimensional
//! C-order array of one NumPy number type. `x[pe, i, a:b:s] = src` is a put and `x[pe, ...]`
//! a get; the key is parsed here (ints, slices, any step), checked against the shape, and the
//! selection travels as one strided transfer of the runtime per row (one in all when the
//! selection collapses to a single stride), or as one contiguous put/get when the step is 1.
//! Negative steps are reversed locally and travel with a positive stride.
//!
//! Every check runs before a byte moves, and a failed one raises on this PE only (which goes
//! on). The Python class `shmem_rs.SymmetricArray` (`python/shmem_rs/_sdo.py`) derives from
//! [`SdoBase`] and adds the atomics, signals, waits and the context manager; the hot paths
//! (`__setitem__`, `__getitem__`) stay native.

use crate::buf::Kind;
use crate::rma::{DETACH_BYTES, by_size, not_symmetric, sym_at, without_gil};
use crate::state::{self, FreedError, world};
use numpy::npyffi::{PY_ARRAY_API, npy_intp};
use numpy::{PyArrayDescr, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyFloat, PyInt, PySlice, PyTuple};
use shmem_core::prelude::*;
use shmem_core::{Element, raw};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The element kinds a symmetric data object may hold: bool, signed and unsigned integers,
/// floating point and complex numbers.
const KINDS: &[u8] = b"biufc";

/// The native part of a symmetric data object: the heap block, its shape and element type, and
/// the NumPy view of this PE's copy. Not made directly: `shmem_rs.sdo(dtype, shape)` allocates
/// the block and makes a `shmem_rs.SymmetricArray` (a subclass of this class).
#[pyclass(subclass, frozen, module = "shmem_rs", name = "_SdoBase")]
pub(crate) struct SdoBase {
    /// The block's address on this PE; 0 once freed.
    addr: AtomicUsize,
    kind: Kind,
    dtype: Py<PyArrayDescr>,
    shape: Box<[usize]>,
    /// The distance, in elements, between neighbours along each dimension (C order).
    cstrides: Box<[usize]>,
    size: usize,
    /// `local`: a NumPy array over the block.
    local: Py<PyAny>,
}

/// One dimension of a selection kept in the result: the number of elements and the distance
/// between them, in elements (negative for a negative step).
#[derive(Clone, Copy, Debug)]
struct Dim {
    count: usize,
    stride: isize,
}

/// What a key selects: the PE, the first element (an offset in elements), the result's
/// dimensions (those given by slices, and those the key leaves out) and the number of elements.
struct Sel {
    pe: usize,
    addr: usize,
    first: usize,
    dims: Vec<Dim>,
    count: usize,
}

impl Sel {
    fn shape(&self) -> Vec<usize> {
        self.dims.iter().map(|d| d.count).collect()
    }
}

/// How a selection travels: rows of `n` elements `stride` apart (in the symmetric array), one
/// per combination of the `outer` dimensions (C order). Consecutive dimensions that continue
/// one another's stride are merged into the row.
struct Plan {
    n: usize,
    stride: isize,
    outer: Vec<Dim>,
}

fn plan(dims: &[Dim]) -> Plan {
    // Dimensions of one element do not change the order of the elements.
    let mut d: Vec<Dim> = dims.iter().copied().filter(|d| d.count != 1).collect();
    let Some(last) = d.pop() else {
        return Plan {
            n: 1,
            stride: 1,
            outer: Vec::new(),
        };
    };
    let (mut n, stride) = (last.count, last.stride);
    while let Some(prev) = d.last() {
        if prev.stride == stride * n as isize {
            n *= prev.count;
            d.pop();
        } else {
            break;
        }
    }
    Plan {
        n,
        stride,
        outer: d,
    }
}

/// The Python helper that converts a source NumPy's way (`_sdo._coerce`).
static COERCE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn coerce<'py>(py: Python<'py>) -> PyResult<&'py Bound<'py, PyAny>> {
    COERCE
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("shmem_rs._sdo")?.getattr("_coerce")?.unbind())
        })
        .map(|f| f.bind(py))
}

#[cold]
fn freed(op: &str) -> PyErr {
    FreedError::new_err(format!(
        "{op}: the symmetric data object was freed; allocate a new one with shmem_rs.sdo"
    ))
}

/// A value of at most 32 bytes, aligned for every element type: one element moved by value.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Scalar([u8; 32]);

/// Moves the selection between the object (`base`, `total` elements, on PE `pe`) and the local
/// C-order buffer `local` (the rows one after the other; one element when `bcast`, repeated
/// for every element of a put). Returns false when the runtime located nothing (not expected
/// after the checks: the object is a live heap block and the PE one of the job).
///
/// # Safety
/// `base` is the live block of `total` elements of `E`; every selected element lies in it;
/// `local` holds the selection's elements (one when `bcast`), readable, and writable for a get,
/// and stays alive and unaliased by Rust references during the call.
#[allow(clippy::too_many_arguments)]
unsafe fn transfer<E: Element>(
    slice: &SymSlice<'static, E>,
    put: bool,
    base: *mut u8,
    pe: usize,
    first: usize,
    p: &Plan,
    local: *mut u8,
    bcast: bool,
) -> bool {
    let size = size_of::<E>();
    let n = p.n;
    let mut idx = vec![0usize; p.outer.len()];
    let mut row = 0usize;
    loop {
        let mut off = first as isize;
        for (i, d) in idx.iter().zip(&p.outer) {
            off += *i as isize * d.stride;
        }
        // The row with a positive stride: reversed locally when its step is negative.
        let (o, st, rev) = if n == 1 {
            (off as usize, 1usize, false)
        } else if p.stride < 0 {
            (
                (off + (n as isize - 1) * p.stride) as usize,
                p.stride.unsigned_abs(),
                true,
            )
        } else {
            (off as usize, p.stride as usize, false)
        };
        let lp = if bcast {
            local
        } else {
            local.wrapping_add(row * n * size)
        };
        let at = |k: usize| -> *mut E {
            let k = if bcast {
                0
            } else if rev {
                n - 1 - k
            } else {
                k
            };
            lp.wrapping_add(k * size).cast::<E>()
        };
        // SAFETY: `o .. o + (n-1)*st` lies in the block (the caller's selection was checked).
        let located = unsafe { raw::locate::<E>(base.cast::<E>().wrapping_add(o), n, pe) };
        let Some(located) = located else {
            return false;
        };
        if put {
            if st == 1 && !rev && !bcast {
                // SAFETY: `lp` holds the row's `n` elements (the caller's buffer).
                unsafe { located.put(lp.cast::<E>()) };
            } else {
                // SAFETY: every `at(k)` is an element of the caller's buffer; read unaligned, as
                // NumPy data need not be aligned.
                let vals: Vec<E> = (0..n).map(|k| unsafe { at(k).read_unaligned() }).collect();
                if st == 1 {
                    // SAFETY: `vals` holds the `n` elements.
                    unsafe { located.put(vals.as_ptr()) };
                } else {
                    slice.iput(pe, o..o + (n - 1) * st + 1, st, &vals, 1);
                }
            }
        } else if st == 1 && !rev {
            // SAFETY: `lp` has room for the row's `n` elements (the caller's new array).
            unsafe { located.get(lp.cast::<E>()) };
        } else {
            let mut vals = vec![<E as zerocopy::FromZeros>::new_zeroed(); n];
            if st == 1 {
                // SAFETY: `vals` has room for the `n` elements.
                unsafe { located.get(vals.as_mut_ptr()) };
            } else {
                slice.iget(pe, o..o + (n - 1) * st + 1, st, &mut vals, 1);
            }
            for (k, v) in vals.into_iter().enumerate() {
                // SAFETY: as for the put's reads, into the caller's writable buffer.
                unsafe { at(k).write_unaligned(v) };
            }
        }
        row += 1;
        // The next row: the odometer over the outer dimensions, last one fastest.
        let mut d = idx.len();
        loop {
            if d == 0 {
                return true;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < p.outer[d].count {
                break;
            }
            idx[d] = 0;
        }
    }
}

impl SdoBase {
    /// The live block's address, or [`FreedError`].
    #[inline]
    fn live(&self, op: &str) -> PyResult<usize> {
        match self.addr.load(Ordering::Acquire) {
            0 => Err(freed(op)),
            a => Ok(a),
        }
    }

    /// Parses `key` (`pe`, or `(pe, i0, i1, ...)` with ints and slices) into a [`Sel`],
    /// raising `IndexError`/`TypeError` naming what is wrong.
    fn select(&self, op: &str, key: &Bound<'_, PyAny>) -> PyResult<Sel> {
        let addr = self.live(op)?;
        let (pe_obj, rest) = match key.cast::<PyTuple>() {
            Ok(t) => {
                if t.is_empty() {
                    return Err(PyIndexError::new_err(format!(
                        "{op}: the key names no PE: use x[pe, ...]"
                    )));
                }
                (t.get_item(0)?, Some(t))
            }
            Err(_) => (key.clone(), None),
        };
        let pe = pe_index(op, &pe_obj)?;
        let w = world(op)?;
        let pe = state::check_pe(op, pe, w.n_pes())?;
        let ndim = self.shape.len();
        let given = rest.as_ref().map_or(0, |t| t.len() - 1);
        if given > ndim {
            return Err(PyIndexError::new_err(format!(
                "{op}: too many indices: the object has {ndim} dimension{} (shape {}), the key \
                 gives {given} after the PE",
                if ndim == 1 { "" } else { "s" },
                shape_str(&self.shape)
            )));
        }
        let mut first = 0usize;
        let mut dims = Vec::with_capacity(ndim);
        let mut count = 1usize;
        for d in 0..ndim {
            let len = self.shape[d];
            let cs = self.cstrides[d];
            let item = match &rest {
                Some(t) if d < given => Some(t.get_item(d + 1)?),
                _ => None,
            };
            let Some(item) = item else {
                dims.push(Dim {
                    count: len,
                    stride: cs as isize,
                });
                count *= len;
                continue;
            };
            if let Ok(s) = item.cast::<PySlice>() {
                let (start, n, step) = slice_indices(op, s, d, len)?;
                if n > 0 {
                    first += start * cs;
                }
                dims.push(Dim {
                    count: n,
                    stride: step * cs as isize,
                });
                count *= n;
            } else {
                let i = index_in(op, &item, d, len)?;
                first += i * cs;
            }
        }
        Ok(Sel {
            pe,
            addr,
            first,
            dims,
            count,
        })
    }

    /// Runs the transfer of `sel` between the object and `local`, releasing the GIL when it
    /// goes through UCX or is large.
    fn run(
        &self,
        py: Python<'_>,
        op: &str,
        put: bool,
        sel: &Sel,
        local: *mut u8,
        bcast: bool,
    ) -> PyResult<()> {
        if sel.count == 0 {
            return Ok(());
        }
        let base = sel.addr as *mut u8;
        let size = self.kind.size;
        let p = plan(&sel.dims);
        if p.outer.is_empty() && (p.n == 1 || (p.stride == 1 && !bcast)) {
            // The fast path: one contiguous run (one element, or a step-1 selection), on a
            // mapped peer: one copy, with the GIL held.
            let bytes = p.n * size;
            let first = base.wrapping_add(sel.first * size);
            // SAFETY: the run lies in the live block (the selection was checked).
            if let Some(at) = unsafe { raw::locate::<u8>(first, bytes, sel.pe) }
                && at.is_plain()
                && bytes < DETACH_BYTES
            {
                // SAFETY: `local` holds the run's bytes (readable for a put, writable for a
                // get), outside the block's element range being written.
                unsafe { if put { at.put(local) } else { at.get(local) } }
                return Ok(());
            }
        }
        // SAFETY: the object is a live heap block of this size; `sel.pe` is a PE of the job.
        let plain = unsafe { raw::locate::<u8>(base, 1, sel.pe) }.is_some_and(|l| l.is_plain());
        let wait = !plain || sel.count * size >= DETACH_BYTES;
        // The element size is one of by_size!'s (checked when the object was made).
        let ok = by_size!(size, E => {
            let slice = sym_at::<E>(op, "object", base, self.size)?;
            let job = (slice, local);
            let go = |(slice, local): (SymSlice<'static, E>, *mut u8)| {
                // SAFETY: the selection was checked against the shape; `local` is the caller's
                // buffer of the selection (held by the call).
                unsafe { transfer::<E>(&slice, put, base, sel.pe, sel.first, &p, local, bcast) }
            };
            if wait { without_gil(py, job, go) } else { go(job) }
        }, _ => false);
        if ok {
            Ok(())
        } else {
            Err(not_symmetric(op, "object", base, self.size * size))
        }
    }

    /// The source of a put as a pointer to C-order elements of the object's type (one, to be
    /// repeated, when the second value is true), with what keeps them alive.
    fn source<'py>(
        &self,
        py: Python<'py>,
        op: &str,
        value: &Bound<'py, PyAny>,
        sel: &Sel,
        scalar: &mut Scalar,
    ) -> PyResult<(Option<Bound<'py, PyAny>>, *const u8, bool)> {
        if let Some(()) = scalar_fast(self.kind, value, scalar) {
            return Ok((None, scalar.0.as_ptr(), true));
        }
        if let Ok(a) = value.cast::<PyUntypedArray>()
            && let Some(ptr) = self.exact(a, Some(sel))
        {
            return Ok((Some(value.clone()), ptr, false));
        }
        let shape = PyTuple::new(py, sel.shape())?;
        let conv = coerce(py)?.call1((value, self.dtype.bind(py), shape, op))?;
        let Ok(a) = conv.cast::<PyUntypedArray>() else {
            return Err(PyTypeError::new_err(format!(
                "{op}: the source could not be converted"
            )));
        };
        let bcast = a.ndim() == 0;
        match self.exact(a, if bcast { None } else { Some(sel) }) {
            Some(ptr) => Ok((Some(conv.clone()), ptr, bcast)),
            None => Err(PyValueError::new_err(format!(
                "{op}: the source could not be converted to the selection's shape {}",
                shape_str(&sel.shape())
            ))),
        }
    }

    /// The data of `a` when it is a C-contiguous array of exactly the object's type (native
    /// byte order) and, with `sel`, of the selection's shape.
    fn exact(&self, a: &Bound<'_, PyUntypedArray>, sel: Option<&Sel>) -> Option<*const u8> {
        let d = a.dtype();
        if d.kind() != self.kind.kind
            || d.itemsize() != self.kind.size
            || d.is_native_byteorder() == Some(false)
            || !a.is_c_contiguous()
        {
            return None;
        }
        if let Some(sel) = sel {
            let shape = a.shape();
            if shape.len() != sel.dims.len()
                || shape.iter().zip(&sel.dims).any(|(s, d)| *s != d.count)
            {
                return None;
            }
        }
        Some(data_of(a).cast_const())
    }
}

/// The scalar fast path of a put: a Python int, float or bool written into `out` as the
/// object's type, when NumPy's `same_kind` casting allows it and the value fits; `None` sends
/// the value to the general conversion (which raises what NumPy would).
#[inline]
fn scalar_fast(kind: Kind, value: &Bound<'_, PyAny>, out: &mut Scalar) -> Option<()> {
    let b = &mut out.0;
    if value.is_exact_instance_of::<PyInt>() {
        match (kind.kind, kind.size) {
            (b'i', n) if n <= 8 => {
                let v: i64 = value.extract().ok()?;
                let bits = n * 8;
                if n < 8 && (v < -(1i64 << (bits - 1)) || v >= (1i64 << (bits - 1))) {
                    return None;
                }
                b[..n].copy_from_slice(&v.to_ne_bytes()[ne_range(n)]);
            }
            (b'u', n) if n <= 8 => {
                let v: u64 = value.extract().ok()?;
                if n < 8 && v >= (1u64 << (n * 8)) {
                    return None;
                }
                b[..n].copy_from_slice(&v.to_ne_bytes()[ne_range(n)]);
            }
            (b'f', 4 | 8) | (b'c', 8 | 16) => {
                let v: i64 = value.extract().ok()?;
                put_float(kind, v as f64, b);
            }
            _ => return None,
        }
        Some(())
    } else if value.is_exact_instance_of::<PyFloat>() {
        match (kind.kind, kind.size) {
            (b'f', 4 | 8) | (b'c', 8 | 16) => {
                let v: f64 = value.extract().ok()?;
                put_float(kind, v, b);
                Some(())
            }
            _ => None,
        }
    } else if value.is_exact_instance_of::<PyBool>() && kind.kind == b'b' {
        b[0] = u8::from(value.is_truthy().ok()?);
        Some(())
    } else {
        None
    }
}

/// The bytes of an `n`-byte integer in a native-endian 8-byte one.
#[inline]
fn ne_range(n: usize) -> std::ops::Range<usize> {
    if cfg!(target_endian = "little") {
        0..n
    } else {
        8 - n..8
    }
}

/// `v` as a float32/float64, or as the real part of a complex64/complex128 (imaginary 0).
#[inline]
fn put_float(kind: Kind, v: f64, b: &mut [u8; 32]) {
    b.fill(0);
    match kind.size {
        4 | 8 if kind.kind == b'c' => b[..4].copy_from_slice(&(v as f32).to_ne_bytes()),
        4 => b[..4].copy_from_slice(&(v as f32).to_ne_bytes()),
        _ => b[..8].copy_from_slice(&v.to_ne_bytes()),
    }
}

/// The PE of a key: an int (or an object with `__index__`), possibly negative (then out of
/// range).
fn pe_index(op: &str, obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    if obj.is_instance_of::<PySlice>() || obj.is_instance_of::<PyFloat>() {
        return Err(PyTypeError::new_err(format!(
            "{op}: the first index is the PE (an int), not a {}",
            type_name(obj)
        )));
    }
    obj.extract::<i64>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{op}: the first index is the PE (an int), not a {}",
            type_name(obj)
        ))
    })
}

/// An int index into dimension `d` of length `len` (negative counts from the end), or
/// `IndexError` naming it and the length.
fn index_in(op: &str, item: &Bound<'_, PyAny>, d: usize, len: usize) -> PyResult<usize> {
    if item.is_instance_of::<PyFloat>() || item.is_instance_of::<PyBool>() {
        return Err(bad_index(op, item));
    }
    let i: i64 = item.extract().map_err(|_| bad_index(op, item))?;
    let j = if i < 0 { i + len as i64 } else { i };
    if j < 0 || j >= len as i64 {
        return Err(PyIndexError::new_err(format!(
            "{op}: index {i} is out of bounds for dimension {d} of length {len}"
        )));
    }
    Ok(j as usize)
}

#[cold]
fn bad_index(op: &str, item: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!(
        "{op}: an index after the PE is an int or a slice, not a {}",
        type_name(item)
    ))
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// A slice of dimension `d` of length `len`: the first index, the number of elements and the
/// step. A bound given outside the dimension raises `IndexError` (NumPy would clip it): one
/// outside `-len ..= len`, or with a negative step a start outside `-len .. len` or a stop
/// outside `-len-1 .. len`. A step of 0 raises `ValueError`.
fn slice_indices(
    op: &str,
    s: &Bound<'_, PySlice>,
    d: usize,
    len: usize,
) -> PyResult<(usize, usize, isize)> {
    let (mut start, mut stop, mut step) = (0isize, 0isize, 0isize);
    // SAFETY: `s` is a live slice object; the outputs are locals.
    if unsafe { pyo3::ffi::PySlice_Unpack(s.as_ptr(), &mut start, &mut stop, &mut step) } < 0 {
        return Err(PyErr::fetch(s.py()));
    }
    let l = len as isize;
    // An omitted bound unpacks to isize::MAX or isize::MIN. A bound given lies in `-len ..=
    // len`; with a negative step, the start is an element (`..len`), and the stop may be
    // `-len-1` (through element 0).
    let out =
        |b: isize, lo: isize, hi: isize| b != isize::MAX && b != isize::MIN && (b < lo || b > hi);
    let bad = if step > 0 {
        out(start, -l, l) || out(stop, -l, l)
    } else {
        out(start, -l, l - 1) || out(stop, -l - 1, l - 1)
    };
    if bad {
        let repr = s.repr().map(|r| r.to_string()).unwrap_or_default();
        return Err(PyIndexError::new_err(format!(
            "{op}: {repr} is out of bounds for dimension {d} of length {len}"
        )));
    }
    // SAFETY: plain integers.
    let n = unsafe { pyo3::ffi::PySlice_AdjustIndices(l, &mut start, &mut stop, step) };
    Ok((start.max(0) as usize, n.max(0) as usize, step))
}

/// The first byte of the array `a`'s data, read from its header.
#[inline]
fn data_of(a: &Bound<'_, PyUntypedArray>) -> *mut u8 {
    // SAFETY: the header of the live array `a` (held by the caller), read with the GIL held.
    unsafe { (*numpy::npyffi::_PyArray_GET_ITEM_DATA(a.as_array_ptr())).data }.cast()
}

fn shape_str(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[pymethods]
impl SdoBase {
    /// Wraps the heap block at ``addr`` (from ``_native.alloc``) whose C-order NumPy view is
    /// ``local``. Used by ``shmem_rs.sdo``; raises ``ValueError`` when ``local`` is not a view
    /// of a live block at ``addr``.
    #[new]
    fn new(addr: usize, local: &Bound<'_, PyAny>) -> PyResult<Self> {
        let a = local.cast::<PyUntypedArray>().map_err(|_| {
            PyTypeError::new_err("SymmetricArray: local must be a NumPy array over the block")
        })?;
        let d = a.dtype();
        let kind = Kind {
            kind: d.kind(),
            size: d.itemsize(),
        };
        if !KINDS.contains(&kind.kind)
            || !matches!(kind.size, 1 | 2 | 4 | 8 | 16 | 32)
            || d.is_native_byteorder() == Some(false)
        {
            return Err(PyTypeError::new_err(format!(
                "SymmetricArray: dtype {} is not supported: use a bool, integer, float or \
                 complex type in native byte order",
                d.str().map(|s| s.to_string()).unwrap_or_default()
            )));
        }
        if !a.is_c_contiguous() {
            return Err(PyValueError::new_err(
                "SymmetricArray: local must be C-contiguous",
            ));
        }
        let shape: Box<[usize]> = a.shape().into();
        let size: usize = shape.iter().product();
        let data = data_of(a) as usize;
        let block = state::block_len(addr);
        if data != addr || block.is_none_or(|b| b < size * kind.size) {
            return Err(PyValueError::new_err(format!(
                "SymmetricArray: local is not a view of the live heap block at {addr:#x}"
            )));
        }
        let mut cstrides = vec![1usize; shape.len()];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            cstrides[d] = cstrides[d + 1] * shape[d + 1];
        }
        Ok(SdoBase {
            addr: AtomicUsize::new(addr),
            kind,
            dtype: d.unbind(),
            shape,
            cstrides: cstrides.into(),
            size,
            local: local.clone().unbind(),
        })
    }

    /// ``x[pe, ...]``: a get from PE ``pe``. A selection with a slice (or a dimension the key
    /// leaves out) gives a new C-order NumPy array of its shape; one element (ints only) gives
    /// a NumPy scalar of the object's type. Returns when the data is here.
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        const OP: &str = "SymmetricArray get";
        let sel = self.select(OP, key)?;
        let descr = self.dtype.bind(py).as_dtype_ptr();
        if sel.dims.is_empty() {
            let mut v = Scalar([0; 32]);
            self.run(py, OP, false, &sel, v.0.as_mut_ptr(), false)?;
            // SAFETY: `v` holds one element of the type `descr` describes; NumPy copies it.
            let obj = unsafe {
                PY_ARRAY_API.PyArray_Scalar(
                    py,
                    v.0.as_mut_ptr().cast(),
                    descr,
                    std::ptr::null_mut(),
                )
            };
            // SAFETY: a new reference, or null with an exception set.
            return unsafe { Bound::from_owned_ptr_or_err(py, obj) }.map(Bound::unbind);
        }
        let mut dims: Vec<npy_intp> = sel.dims.iter().map(|d| d.count as npy_intp).collect();
        // SAFETY: `PyArray_Empty` steals a reference to the descriptor: one is added first.
        let arr = unsafe {
            pyo3::ffi::Py_INCREF(descr.cast());
            PY_ARRAY_API.PyArray_Empty(py, dims.len() as i32, dims.as_mut_ptr(), descr, 0)
        };
        // SAFETY: a new reference, or null with an exception set.
        let arr = unsafe { Bound::from_owned_ptr_or_err(py, arr) }?;
        let a = arr.cast::<PyUntypedArray>()?;
        let data = data_of(a);
        self.run(py, OP, false, &sel, data, false)?;
        Ok(arr.unbind())
    }

    /// ``x[pe, ...] = src``: a put to PE ``pe``. ``src`` is converted as NumPy's ``same_kind``
    /// casting allows (``TypeError`` otherwise) and broadcast to the selection's shape
    /// (``ValueError`` when it cannot be). Returns when ``src`` may be reused; the data is at
    /// ``pe`` after ``shmem.quiet()`` (or a barrier).
    fn __setitem__(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        const OP: &str = "SymmetricArray put";
        let sel = self.select(OP, key)?;
        let mut scalar = Scalar([0; 32]);
        let (_keep, ptr, bcast) = self.source(py, OP, value, &sel, &mut scalar)?;
        self.run(py, OP, true, &sel, ptr.cast_mut(), bcast)
    }

    /// Frees the object, collectively (every PE calls it, in the same order as other
    /// collectives); using it afterwards raises ``FreedError``, as does freeing it twice.
    fn free(&self, py: Python<'_>) -> PyResult<()> {
        let addr = self.addr.swap(0, Ordering::AcqRel);
        if addr == 0 {
            return Err(freed("free"));
        }
        state::free(py, addr)
    }

    /// Whether the object was freed.
    #[getter]
    fn freed(&self) -> bool {
        self.addr.load(Ordering::Acquire) == 0
    }

    /// This PE's copy as a NumPy array over the heap memory (a view, not a copy).
    #[getter]
    fn local(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.live("local")?;
        Ok(self.local.clone_ref(py))
    }

    /// The NumPy element type.
    #[getter]
    fn dtype(&self, py: Python<'_>) -> Py<PyArrayDescr> {
        self.dtype.clone_ref(py)
    }

    /// The shape (a tuple of ints).
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.shape.iter())
    }

    /// The number of dimensions.
    #[getter]
    fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements.
    #[getter]
    fn size(&self) -> usize {
        self.size
    }

    /// The size of one element in bytes.
    #[getter]
    fn itemsize(&self) -> usize {
        self.kind.size
    }

    /// The number of bytes of each PE's copy.
    #[getter]
    fn nbytes(&self) -> usize {
        self.size * self.kind.size
    }

    /// The length of the first dimension (``TypeError`` for a 0-dimensional object).
    fn __len__(&self) -> PyResult<usize> {
        self.shape
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("len() of a 0-dimensional SymmetricArray"))
    }
}
