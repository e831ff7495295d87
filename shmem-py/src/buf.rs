//! NumPy arrays as the runtime sees them: an address, a number of elements, an element size and
//! a type, read from the array's own header (no buffer export, no copy). Only raw pointers are
//! made from them: the memory may be written by another PE (a symmetric array) or another
//! thread while a call runs, so no Rust reference ever covers it.

use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// `NPY_ARRAY_C_CONTIGUOUS`, `NPY_ARRAY_F_CONTIGUOUS` and `NPY_ARRAY_WRITEABLE` (numpy's
/// `ndarraytypes.h`; the same values in NumPy 1 and 2).
const C_CONTIGUOUS: i32 = 0x0001;
const F_CONTIGUOUS: i32 = 0x0002;
const WRITEABLE: i32 = 0x0400;

/// The element type of an array, as the operations tell types apart: NumPy's kind character
/// (`i`, `u`, `f`, `c`, `b`, ...) and the element size in bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Kind {
    pub(crate) kind: u8,
    pub(crate) size: usize,
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            b'i' => write!(f, "int{}", self.size * 8),
            b'u' => write!(f, "uint{}", self.size * 8),
            b'f' => write!(f, "float{}", self.size * 8),
            b'c' => write!(f, "complex{}", self.size * 8),
            b'b' => write!(f, "bool"),
            k => write!(f, "'{}'{}", k as char, self.size),
        }
    }
}

/// A contiguous NumPy array (C or Fortran order): its first byte, its number of elements and
/// their type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Buf {
    pub(crate) ptr: *mut u8,
    pub(crate) len: usize,
    pub(crate) kind: Kind,
}

/// The array `obj` as a [`Buf`], for `op`'s argument `what`: `TypeError` when it is not a NumPy
/// array (or holds Python objects), `ValueError` when it is not contiguous or, unless
/// `readonly`, not writeable.
#[inline]
pub(crate) fn buf(op: &str, what: &str, obj: &Bound<'_, PyAny>, readonly: bool) -> PyResult<Buf> {
    let Ok(a) = obj.cast::<PyUntypedArray>() else {
        return Err(not_an_array(op, what, obj));
    };
    let raw = a.as_array_ptr();
    // SAFETY: `raw` is the header of the live array `a` (held by the caller for the call), read
    // with the GIL held.
    let (flags, data) = unsafe {
        let f = numpy::npyffi::_PyArray_GET_ITEM_DATA(raw);
        ((*f).flags, (*f).data)
    };
    if flags & (C_CONTIGUOUS | F_CONTIGUOUS) == 0 {
        return Err(PyValueError::new_err(format!(
            "{op}: {what} is not contiguous (strides {:?}); pass a contiguous array (np.ascontiguousarray)",
            a.strides()
        )));
    }
    if !readonly && flags & WRITEABLE == 0 {
        return Err(PyValueError::new_err(format!("{op}: {what} is read-only")));
    }
    let d = a.dtype();
    if d.has_object() || d.has_fields() || d.has_subarray() {
        return Err(PyTypeError::new_err(format!(
            "{op}: {what} has dtype {}, which is not a plain number type",
            d.str().map(|s| s.to_string()).unwrap_or_default()
        )));
    }
    Ok(Buf {
        ptr: data.cast(),
        len: a.len_total(),
        kind: Kind {
            kind: d.kind(),
            size: d.itemsize(),
        },
    })
}

#[cold]
fn not_an_array(op: &str, what: &str, obj: &Bound<'_, PyAny>) -> PyErr {
    let ty = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    PyTypeError::new_err(format!("{op}: {what} is a {ty}, not a NumPy array"))
}

/// The number of elements of `a` (the product of its shape).
trait LenTotal {
    fn len_total(&self) -> usize;
}

impl LenTotal for Bound<'_, PyUntypedArray> {
    #[inline]
    fn len_total(&self) -> usize {
        self.shape().iter().product()
    }
}

/// `TypeError` naming both types when `a` and `b` differ.
#[inline]
pub(crate) fn same_kind(op: &str, a: Kind, b: Kind) -> PyResult<()> {
    if a == b {
        Ok(())
    } else {
        Err(PyTypeError::new_err(format!(
            "{op}: the arrays have different element types: target {a}, source {b}"
        )))
    }
}
