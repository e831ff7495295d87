//! Atomic memory operations on NumPy arrays: shmem4py's `atomic_*` functions, their fetching
//! `_nbi` forms and `atomic_op` / `atomic_fetch_op` / `atomic_fetch_op_nbi`.
//!
//! The target is a symmetric array of exactly one element whose type OpenSHMEM gives the
//! operation: fetch, set and swap take int32, int64, uint32, uint64, float32 and float64; the
//! others (add, inc, compare_swap, and, or, xor) only the four integer types. Every check runs
//! before the operation, and a bad argument raises on this PE only. An AMO on a peer mapped here
//! is one CPU atomic made with the GIL held; one through UCX (or on a created context) releases
//! the GIL while it waits. The fetching `_nbi` forms complete before they return, as OpenSHMEM
//! allows.

use crate::buf::{Buf, Kind, buf, same_kind};
use crate::ctx::{self, CtxEntry};
use crate::rma::{not_symmetric, sym_at, without_gil};
use crate::state::{self, world};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use shmem_core::{AmoBitwise, AmoExtended, Remote, raw};

/// One operation, by its OpenSHMEM name.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Op {
    Fetch,
    Set,
    Swap,
    CompareSwap,
    FetchInc,
    Inc,
    FetchAdd,
    Add,
    FetchAnd,
    And,
    FetchOr,
    Or,
    FetchXor,
    Xor,
}

impl Op {
    /// Whether float32 and float64 targets are allowed (OpenSHMEM's extended AMOs).
    fn extended(self) -> bool {
        matches!(self, Op::Fetch | Op::Set | Op::Swap)
    }

    fn bitwise(self) -> bool {
        matches!(
            self,
            Op::FetchAnd | Op::And | Op::FetchOr | Op::Or | Op::FetchXor | Op::Xor
        )
    }

    /// The operation named by `atomic_op` (`fetch`: `atomic_fetch_op`): an `AMO` value or its
    /// string (`"set"`, `"inc"`, `"add"`, `"and"`, `"or"`, `"xor"`, any case).
    fn parse(op: &str, name: &Bound<'_, PyAny>, fetch: bool) -> PyResult<Op> {
        let s = name.str()?.to_cow()?.to_ascii_lowercase();
        let s = s.strip_prefix("amo.").unwrap_or(&s);
        Ok(match (s, fetch) {
            ("set", false) => Op::Set,
            ("set", true) => Op::Swap,
            ("inc", false) => Op::Inc,
            ("inc", true) => Op::FetchInc,
            ("add", false) => Op::Add,
            ("add", true) => Op::FetchAdd,
            ("and", false) => Op::And,
            ("and", true) => Op::FetchAnd,
            ("or", false) => Op::Or,
            ("or", true) => Op::FetchOr,
            ("xor", false) => Op::Xor,
            ("xor", true) => Op::FetchXor,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "{op}: {s:?} is not an atomic operation (AMO_SET, AMO_INC, AMO_ADD, AMO_AND, \
                     AMO_OR, AMO_XOR)"
                )));
            }
        })
    }
}

/// A number type of the AMOs and waits, with its conversions from and to Python numbers.
pub(crate) trait Num: Copy + Sized {
    /// `v` as this type: an integer (wrapped to the width, as C converts) for the integer
    /// types, a float or integer for the float types.
    fn from_py(op: &str, what: &str, v: &Bound<'_, PyAny>) -> PyResult<Self>;
    /// The value as a Python `int` or `float`.
    fn to_py(self, py: Python<'_>) -> Py<PyAny>;
}

/// An integer argument as 64 bits: any Python integer (or object with `__index__`) from
/// `-2**63` to `2**64 - 1`.
#[inline]
fn int_bits(op: &str, what: &str, v: &Bound<'_, PyAny>) -> PyResult<u64> {
    if let Ok(i) = v.extract::<i64>() {
        return Ok(i as u64);
    }
    match v.extract::<u64>() {
        Ok(u) => Ok(u),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(v.py()) => Err(e),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{op}: {what} must be an integer, not {}",
            v.get_type().name()?
        ))),
    }
}

macro_rules! num_int {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[inline]
            fn from_py(op: &str, what: &str, v: &Bound<'_, PyAny>) -> PyResult<Self> {
                Ok(int_bits(op, what, v)? as $t)
            }
            #[inline]
            fn to_py(self, py: Python<'_>) -> Py<PyAny> {
                self.into_pyobject(py).map(|o| o.into_any().unbind()).unwrap_or_else(|e| match e {})
            }
        }
    )*};
}

num_int!(i16, u16, i32, u32, i64, u64);

macro_rules! num_float {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[inline]
            fn from_py(op: &str, what: &str, v: &Bound<'_, PyAny>) -> PyResult<Self> {
                match v.extract::<f64>() {
                    Ok(f) => Ok(f as $t),
                    Err(_) => Err(PyTypeError::new_err(format!(
                        "{op}: {what} must be a number, not {}",
                        v.get_type().name()?
                    ))),
                }
            }
            #[inline]
            fn to_py(self, py: Python<'_>) -> Py<PyAny> {
                (self as f64).into_pyobject(py).map(|o| o.into_any().unbind()).unwrap_or_else(|e| match e {})
            }
        }
    )*};
}

num_float!(f32, f64);

/// The element an AMO works on: the located word of the default context, or the word of a
/// created context.
enum Target<'a, E> {
    Word(raw::LocatedWord<E>),
    Remote(Remote<'a, E>),
}

macro_rules! target_ops {
    ($bound:ident: $($f:ident($($a:ident),*) -> $r:ty;)*) => {
        impl<E: $bound> Target<'_, E> {
            $(
                #[inline(always)]
                fn $f(self, $($a: E),*) -> $r {
                    match self {
                        Target::Word(w) => w.$f($($a),*),
                        Target::Remote(r) => r.$f($($a),*),
                    }
                }
            )*
        }
    };
}

target_ops!(AmoExtended:
    fetch() -> E;
    set(value) -> ();
    swap(value) -> E;
);
target_ops!(AmoBitwise:
    compare_swap(cond, value) -> E;
    fetch_inc() -> E;
    inc() -> ();
    fetch_add(value) -> E;
    add(value) -> ();
    fetch_and(value) -> E;
    and(value) -> ();
    fetch_or(value) -> E;
    or(value) -> ();
    fetch_xor(value) -> E;
    xor(value) -> ();
);

/// The operands of one AMO, converted to the target's type.
#[derive(Clone, Copy)]
struct Args<E> {
    value: E,
    cond: E,
}

/// Runs `op` on an integer target (every operation).
#[inline(always)]
fn run_int<E: AmoBitwise>(t: Target<'_, E>, op: Op, a: Args<E>) -> Option<E> {
    let v = a.value;
    match op {
        Op::Fetch => Some(t.fetch()),
        Op::Set => {
            t.set(v);
            None
        }
        Op::Swap => Some(t.swap(v)),
        Op::CompareSwap => Some(t.compare_swap(a.cond, v)),
        Op::FetchInc => Some(t.fetch_inc()),
        Op::Inc => {
            t.inc();
            None
        }
        Op::FetchAdd => Some(t.fetch_add(v)),
        Op::Add => {
            t.add(v);
            None
        }
        Op::FetchAnd => Some(t.fetch_and(v)),
        Op::And => {
            t.and(v);
            None
        }
        Op::FetchOr => Some(t.fetch_or(v)),
        Op::Or => {
            t.or(v);
            None
        }
        Op::FetchXor => Some(t.fetch_xor(v)),
        Op::Xor => {
            t.xor(v);
            None
        }
    }
}

/// Runs `op` on a float target (fetch, set and swap; the dtype check refused the others).
#[inline(always)]
fn run_float<E: AmoExtended>(t: Target<'_, E>, op: Op, a: Args<E>) -> Option<E> {
    match op {
        Op::Fetch => Some(t.fetch()),
        Op::Set => {
            t.set(a.value);
            None
        }
        _ => Some(t.swap(a.value)),
    }
}

/// Why the element at `addr` could not be located on `pe`: the runtime is down, the PE is out
/// of range, the element is not symmetric, or it is not aligned for an atomic.
#[cold]
fn not_located(op: &str, what: &str, addr: *mut u8, size: usize, pe: i64) -> PyErr {
    let w = match world(op) {
        Ok(w) => w,
        Err(e) => return e,
    };
    if let Err(e) = state::check_pe(op, pe, w.n_pes()) {
        return e;
    }
    if raw::offset_of(addr, size).is_none() {
        return not_symmetric(op, what, addr, size);
    }
    misaligned(op, what, addr, size)
}

#[cold]
fn misaligned(op: &str, what: &str, addr: *mut u8, size: usize) -> PyErr {
    PyValueError::new_err(format!(
        "{op}: the {what} at {addr:p} is not aligned for a {size}-byte atomic"
    ))
}

/// One AMO of type `E` on the one-element symmetric array at `at`, on PE `pe` of context `c`
/// (`None`: the default context). `run` is the operation.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn amo_typed<E: AmoExtended + Num>(
    py: Python<'_>,
    op: &str,
    what: &str,
    at: *mut u8,
    pe: i64,
    c: Option<&'static CtxEntry>,
    args: Args<E>,
    run: impl FnOnce(Target<'_, E>, Args<E>) -> Option<E>,
) -> PyResult<Option<E>> {
    let size = size_of::<E>();
    match c {
        None => {
            // SAFETY: `at` is the element of a live NumPy array held by the caller; `locate`
            // checks the PE and that it lies in symmetric memory; no reference is made over it.
            let w = (unsafe { raw::locate::<E>(at.cast(), 1, pe as usize) })
                .filter(|_| pe >= 0)
                .and_then(|l| l.word());
            match w {
                Some(w) if w.is_plain() => Ok(run(Target::Word(w), args)),
                Some(w) => Ok(without_gil(py, (w, run), |(w, run)| {
                    run(Target::Word(w), args)
                })),
                None => Err(not_located(op, what, at, size, pe)),
            }
        }
        Some(c) => {
            let n = world(op)?.n_pes();
            let wpe = c.pe(op, pe, n)?;
            let s = sym_at::<E>(op, what, at, 1)?;
            if !(at as usize).is_multiple_of(size) {
                return Err(misaligned(op, what, at, size));
            }
            Ok(without_gil(py, (s, run), |(s, run)| {
                run(Target::Remote(c.ctx.at(&s, wpe, 0)), args)
            }))
        }
    }
}

/// `TypeError` naming the dtype and the types the operation takes.
#[cold]
fn bad_type(op: &str, what: &str, k: Kind, o: Op) -> PyErr {
    let takes = if o.extended() {
        "int32, int64, uint32, uint64, float32 or float64"
    } else {
        "int32, int64, uint32 or uint64"
    };
    let kind = if o.bitwise() {
        "bitwise"
    } else if o.extended() {
        "extended"
    } else {
        "standard"
    };
    PyTypeError::new_err(format!(
        "{op}: the {what} has dtype {k}, which the {kind} atomic operation does not support \
         (it takes {takes})"
    ))
}

#[cold]
fn not_one(op: &str, what: &str, len: usize) -> PyErr {
    PyValueError::new_err(format!(
        "{op}: the {what} has {len} elements; an atomic operation works on an array of exactly \
         one element"
    ))
}

/// Converts the operands and runs `o` with the element type of `t`; the prior value (as a
/// Python number) for fetching operations, stored into `fetch` when given.
#[allow(clippy::too_many_arguments)]
fn dispatch(
    py: Python<'_>,
    op: &str,
    what: &str,
    o: Op,
    t: Buf,
    value: Option<&Bound<'_, PyAny>>,
    cond: Option<&Bound<'_, PyAny>>,
    pe: i64,
    ctx: Option<&Bound<'_, PyAny>>,
    fetch: Option<Buf>,
) -> PyResult<Py<PyAny>> {
    if t.len != 1 {
        return Err(not_one(op, what, t.len));
    }
    if let Some(f) = fetch {
        if f.len != 1 {
            return Err(not_one(op, "fetch array", f.len));
        }
        same_kind(op, t.kind, f.kind)?;
    }
    let c = ctx::resolve(op, ctx)?;
    macro_rules! go {
        ($E:ty, $run:ident) => {{
            let conv = |v: Option<&Bound<'_, PyAny>>, name: &str| -> PyResult<$E> {
                match v {
                    Some(v) => <$E as Num>::from_py(op, name, v),
                    None => Ok(<$E>::default()),
                }
            };
            let needs_value = !matches!(o, Op::Fetch | Op::Inc | Op::FetchInc);
            if needs_value && value.is_none() {
                return Err(PyTypeError::new_err(format!("{op}: a value is required")));
            }
            let args = Args {
                value: conv(value, "value")?,
                cond: conv(cond, "cond")?,
            };
            let r = amo_typed::<$E>(py, op, what, t.ptr, pe, c, args, |t, a| $run(t, o, a))?;
            match (r, fetch) {
                (Some(v), Some(f)) => {
                    // SAFETY: `f` is a writable one-element array of this type (checked), held
                    // by the caller; an unaligned write, as NumPy arrays need not be aligned.
                    unsafe { f.ptr.cast::<$E>().write_unaligned(v) };
                    Ok(py.None())
                }
                (Some(v), None) => Ok(v.to_py(py)),
                (None, _) => Ok(py.None()),
            }
        }};
    }
    match (t.kind.kind, t.kind.size) {
        (b'i', 4) => go!(i32, run_int),
        (b'i', 8) => go!(i64, run_int),
        (b'u', 4) => go!(u32, run_int),
        (b'u', 8) => go!(u64, run_int),
        (b'f', 4) if o.extended() => go!(f32, run_float),
        (b'f', 8) if o.extended() => go!(f64, run_float),
        _ => Err(bad_type(op, what, t.kind, o)),
    }
}

/// A blocking AMO: the target (read-only allowed for `atomic_fetch`) and its operands.
#[inline]
#[allow(clippy::too_many_arguments)]
fn amo(
    py: Python<'_>,
    op: &str,
    o: Op,
    target: &Bound<'_, PyAny>,
    value: Option<&Bound<'_, PyAny>>,
    cond: Option<&Bound<'_, PyAny>>,
    pe: i64,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let what = if o == Op::Fetch { "source" } else { "target" };
    let t = buf(op, what, target, o == Op::Fetch)?;
    dispatch(py, op, what, o, t, value, cond, pe, ctx, None)
}

/// A fetching non-blocking AMO: the result goes to the local one-element array `fetch`.
#[inline]
#[allow(clippy::too_many_arguments)]
fn amo_nbi(
    py: Python<'_>,
    op: &str,
    o: Op,
    fetch: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    value: Option<&Bound<'_, PyAny>>,
    cond: Option<&Bound<'_, PyAny>>,
    pe: i64,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let what = if o == Op::Fetch { "source" } else { "target" };
    let f = buf(op, "fetch array", fetch, false)?;
    let t = buf(op, what, target, o == Op::Fetch)?;
    dispatch(py, op, what, o, t, value, cond, pe, ctx, Some(f)).map(drop)
}

/// Writes ``value`` into ``target`` (a symmetric array of one element) on PE ``pe``.
#[pyfunction]
#[pyo3(signature = (target, value, pe, ctx = None))]
pub(crate) fn atomic_set(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
    pe: i64,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    amo(
        py,
        "atomic_set",
        Op::Set,
        target,
        Some(value),
        None,
        pe,
        ctx,
    )
}

/// Increments ``target`` (a symmetric array of one integer) on PE ``pe``.
#[pyfunction]
#[pyo3(signature = (target, pe, ctx = None))]
pub(crate) fn atomic_inc(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    pe: i64,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    amo(py, "atomic_inc", Op::Inc, target, None, None, pe, ctx)
}

/// Generates the AMOs that take a target, a value, a PE and a context.
macro_rules! amo_value_fns {
    ($($name:ident => $op:ident, $doc:literal;)*) => {$(
        #[doc = $doc]
        #[pyfunction]
        #[pyo3(signature = (target, value, pe, ctx = None))]
        pub(crate) fn $name(
            py: Python<'_>,
            target: &Bound<'_, PyAny>,
            value: &Bound<'_, PyAny>,
            pe: i64,
            ctx: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Py<PyAny>> {
            amo(py, stringify!($name), Op::$op, target, Some(value), None, pe, ctx)
        }
    )*};
}

amo_value_fns! {
    atomic_add => Add, "Adds ``value`` to ``target`` (a symmetric array of one integer) on PE ``pe``.";
    atomic_and => And, "Bitwise-ANDs ``value`` into ``target`` on PE ``pe``.";
    atomic_or => Or, "Bitwise-ORs ``value`` into ``target`` on PE ``pe``.";
    atomic_xor => Xor, "Bitwise-XORs ``value`` into ``target`` on PE ``pe``.";
    atomic_swap => Swap, "Writes ``value`` into ``target`` on PE ``pe`` and returns the prior value.";
    atomic_fetch_add => FetchAdd, "Adds ``value`` to ``target`` on PE ``pe`` and returns the prior value.";
    atomic_fetch_and => FetchAnd, "Bitwise-ANDs ``value`` into ``target`` on PE ``pe`` and returns the prior value.";
    atomic_fetch_or => FetchOr, "Bitwise-ORs ``value`` into ``target`` on PE ``pe`` and returns the prior value.";
    atomic_fetch_xor => FetchXor, "Bitwise-XORs ``value`` into ``target`` on PE ``pe`` and returns the prior value.";
}

/// Returns the value of ``source`` (a symmetric array of one element) on PE ``pe``.
#[pyfunction]
#[pyo3(signature = (source, pe, ctx = None))]
pub(crate) fn atomic_fetch(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    pe: i64,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    amo(py, "atomic_fetch", Op::Fetch, source, None, None, pe, ctx)
}

/// Writes ``value`` into ``target`` on PE ``pe`` if it equals ``cond``; returns the prior value.
#[pyfunction]
#[pyo3(signature = (target, cond, value, pe, ctx = None))]
pub(crate) fn atomic_compare_swap(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    cond: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
    pe: i64,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let op = "atomic_compare_swap";
    amo(
        py,
        op,
        Op::CompareSwap,
        target,
        Some(value),
        Some(cond),
        pe,
        ctx,
    )
}

/// Increments ``target`` on PE ``pe`` and returns the prior value.
#[pyfunction]
#[pyo3(signature = (target, pe, ctx = None))]
pub(crate) fn atomic_fetch_inc(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    pe: i64,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    amo(
        py,
        "atomic_fetch_inc",
        Op::FetchInc,
        target,
        None,
        None,
        pe,
        ctx,
    )
}

/// Fetches ``source`` on PE ``pe`` into the local one-element array ``fetch`` (complete at
/// the next `quiet`; here already on return).
#[pyfunction]
#[pyo3(signature = (fetch, source, pe, ctx = None))]
pub(crate) fn atomic_fetch_nbi(
    py: Python<'_>,
    fetch: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    pe: i64,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let op = "atomic_fetch_nbi";
    amo_nbi(py, op, Op::Fetch, fetch, source, None, None, pe, ctx)
}

/// `atomic_compare_swap`, its prior value stored into ``fetch``.
#[pyfunction]
#[pyo3(signature = (fetch, target, cond, value, pe, ctx = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn atomic_compare_swap_nbi(
    py: Python<'_>,
    fetch: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    cond: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
    pe: i64,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let op = "atomic_compare_swap_nbi";
    amo_nbi(
        py,
        op,
        Op::CompareSwap,
        fetch,
        target,
        Some(value),
        Some(cond),
        pe,
        ctx,
    )
}

/// `atomic_fetch_inc`, its prior value stored into ``fetch``.
#[pyfunction]
#[pyo3(signature = (fetch, target, pe, ctx = None))]
pub(crate) fn atomic_fetch_inc_nbi(
    py: Python<'_>,
    fetch: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    pe: i64,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let op = "atomic_fetch_inc_nbi";
    amo_nbi(py, op, Op::FetchInc, fetch, target, None, None, pe, ctx)
}

/// Generates the fetching `_nbi` AMOs that take a value.
macro_rules! amo_nbi_fns {
    ($($name:ident => $op:ident, $doc:literal;)*) => {$(
        #[doc = $doc]
        #[pyfunction]
        #[pyo3(signature = (fetch, target, value, pe, ctx = None))]
        pub(crate) fn $name(
            py: Python<'_>,
            fetch: &Bound<'_, PyAny>,
            target: &Bound<'_, PyAny>,
            value: &Bound<'_, PyAny>,
            pe: i64,
            ctx: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<()> {
            amo_nbi(py, stringify!($name), Op::$op, fetch, target, Some(value), None, pe, ctx)
        }
    )*};
}

amo_nbi_fns! {
    atomic_swap_nbi => Swap, "`atomic_swap`, its prior value stored into ``fetch``.";
    atomic_fetch_add_nbi => FetchAdd, "`atomic_fetch_add`, its prior value stored into ``fetch``.";
    atomic_fetch_and_nbi => FetchAnd, "`atomic_fetch_and`, its prior value stored into ``fetch``.";
    atomic_fetch_or_nbi => FetchOr, "`atomic_fetch_or`, its prior value stored into ``fetch``.";
    atomic_fetch_xor_nbi => FetchXor, "`atomic_fetch_xor`, its prior value stored into ``fetch``.";
}

/// Runs the operation ``op`` (an `AMO`: set, inc, add, and, or, xor) with ``value`` on
/// ``target`` on PE ``pe`` (``value`` is ignored for inc).
#[pyfunction]
#[pyo3(signature = (target, value, op, pe, ctx = None))]
pub(crate) fn atomic_op(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    value: Option<&Bound<'_, PyAny>>,
    op: &Bound<'_, PyAny>,
    pe: i64,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let o = Op::parse("atomic_op", op, false)?;
    let value = if o == Op::Inc { None } else { value };
    amo(py, "atomic_op", o, target, value, None, pe, ctx)
}

/// `atomic_op` that returns the prior value of ``target``.
#[pyfunction]
#[pyo3(signature = (target, value, op, pe, ctx = None))]
pub(crate) fn atomic_fetch_op(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    value: Option<&Bound<'_, PyAny>>,
    op: &Bound<'_, PyAny>,
    pe: i64,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let o = Op::parse("atomic_fetch_op", op, true)?;
    let value = if o == Op::FetchInc { None } else { value };
    amo(py, "atomic_fetch_op", o, target, value, None, pe, ctx)
}

/// `atomic_fetch_op`, its prior value stored into the local one-element array ``fetch``.
#[pyfunction]
#[pyo3(signature = (fetch, target, value, op, pe, ctx = None))]
pub(crate) fn atomic_fetch_op_nbi(
    py: Python<'_>,
    fetch: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    value: Option<&Bound<'_, PyAny>>,
    op: &Bound<'_, PyAny>,
    pe: i64,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let o = Op::parse("atomic_fetch_op_nbi", op, true)?;
    let value = if o == Op::FetchInc { None } else { value };
    amo_nbi(
        py,
        "atomic_fetch_op_nbi",
        o,
        fetch,
        target,
        value,
        None,
        pe,
        ctx,
    )
}
