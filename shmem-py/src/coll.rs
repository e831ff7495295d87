//! The collectives of `shmem.*` with shmem4py's signatures: `broadcast`, `collect`, `fcollect`,
//! `alltoall`, `alltoalls` and `reduce` (whose `op` names the reduction), over a team (default:
//! the world team).
//!
//! Every argument is checked first, by what this PE alone knows and every member computes
//! alike (types, sizes, the root, the operation for the element type, symmetry), so that a bad
//! call raises on every PE that makes it before any member starts waiting. What only the
//! collective itself learns (the total of `collect`, members that disagree) ends the job with a
//! message, as in the Rust and C APIs. The source is copied before the collective starts (so
//! `target` may be `source`), except by `alltoall`, which reads it where it lies (and copies it
//! first only where it overlaps `target`); every wait releases the GIL.

use crate::buf::{Buf, Kind, buf, same_kind};
use crate::rma::{gather, sym_at};
use crate::team::{TeamEntry, team_arg};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use shmem_core::{Complex32, Complex64, Element, ReduceArith, ReduceBitwise, ReduceSum};

/// `size` elements (checked against `limit`, what the arrays hold), or `default`.
fn count(op: &str, size: Option<i64>, default: usize, limit: usize, what: &str) -> PyResult<usize> {
    match size {
        None => Ok(default),
        Some(n) if n < 0 => Err(PyValueError::new_err(format!("{op}: size {n} is negative"))),
        Some(n) if n as u64 <= limit as u64 => Ok(n as usize),
        Some(n) => Err(PyValueError::new_err(format!(
            "{op}: size {n} is more than {what} ({limit} elements)"
        ))),
    }
}

/// `NotSymmetricError` unless the `elems` elements of `b` lie in the symmetric heap.
fn check_symmetric(op: &str, what: &str, b: &Buf, elems: usize) -> PyResult<()> {
    let bytes = elems * b.kind.size;
    if shmem_core::raw::offset_of(b.ptr, bytes).is_none() {
        return Err(crate::rma::not_symmetric(op, what, b.ptr, bytes));
    }
    Ok(())
}

/// The checked arrays of a collective.
fn arrays(op: &str, target: &Bound<'_, PyAny>, source: &Bound<'_, PyAny>) -> PyResult<(Buf, Buf)> {
    let t = buf(op, "target", target, false)?;
    let s = buf(op, "source", source, true)?;
    same_kind(op, t.kind, s.kind)?;
    Ok((t, s))
}

/// Copies `bytes` bytes of `s` (read through raw pointers).
fn copy_bytes(s: &Buf, bytes: usize) -> Vec<u8> {
    gather::<u8>(s.ptr, 1, bytes)
}

/// Copy ``source`` on team PE ``root`` into ``target`` on every member of ``team`` (default:
/// every PE), ``size`` elements (default: as many as both arrays hold). Both arrays are
/// symmetric, of one element type. Collective.
#[pyfunction]
#[pyo3(signature = (target, source, root, size = None, team = None))]
pub(crate) fn broadcast(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    root: i64,
    size: Option<i64>,
    team: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    const OP: &str = "broadcast";
    let t_entry = team_arg(OP, team)?;
    let (t, s) = arrays(OP, target, source)?;
    let n = count(
        OP,
        size,
        t.len.min(s.len),
        t.len.min(s.len),
        "the target or the source holds",
    )?;
    let root = check_root(OP, root, t_entry)?;
    check_symmetric(OP, "target", &t, n)?;
    check_symmetric(OP, "source", &s, n)?;
    if n == 0 {
        return Ok(());
    }
    let bytes = n * t.kind.size;
    let dest = sym_at::<u8>(OP, "target", t.ptr, bytes)?;
    let src = copy_bytes(&s, bytes);
    t_entry.run(py, OP, (dest, src), |team, (dest, src)| {
        team.broadcast(&dest, &src, root)
    })
}

/// `root` as a PE of the team, or `IndexError` naming it and the team's size.
fn check_root(op: &str, root: i64, t: &TeamEntry) -> PyResult<usize> {
    match usize::try_from(root) {
        Ok(r) if r < t.n_pes() => Ok(r),
        _ => Err(pyo3::exceptions::PyIndexError::new_err(format!(
            "{op}: root {root} is out of range: the team has {} PEs (0..{})",
            t.n_pes(),
            t.n_pes()
        ))),
    }
}

/// Concatenate the ``source`` of every member of ``team`` (``size`` elements, default all of
/// it; the sizes may differ) in team order into ``target`` on every member. Both arrays are
/// symmetric. Collective. A ``target`` too short for the total (which only the collective
/// learns) ends the job with a message.
#[pyfunction]
#[pyo3(signature = (target, source, size = None, team = None))]
pub(crate) fn collect(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    size: Option<i64>,
    team: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    const OP: &str = "collect";
    let t_entry = team_arg(OP, team)?;
    let (t, s) = arrays(OP, target, source)?;
    let n = count(OP, size, s.len, s.len, "the source holds")?;
    if n > t.len {
        return Err(PyValueError::new_err(format!(
            "{OP}: size {n} is more than the target holds ({} elements)",
            t.len
        )));
    }
    check_symmetric(OP, "target", &t, t.len)?;
    check_symmetric(OP, "source", &s, n)?;
    let isz = t.kind.size;
    let dest = sym_at::<u8>(OP, "target", t.ptr, t.len * isz)?;
    let src = copy_bytes(&s, n * isz);
    t_entry.run(py, OP, (dest, src), |team, (dest, src)| {
        team.collect(&dest, &src);
    })
}

/// Concatenate the ``source`` of every member of ``team`` (``size`` elements each, the same on
/// every member; default: all of it) in team order into ``target`` on every member. Both
/// arrays are symmetric. Collective.
#[pyfunction]
#[pyo3(signature = (target, source, size = None, team = None))]
pub(crate) fn fcollect(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    size: Option<i64>,
    team: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    const OP: &str = "fcollect";
    let t_entry = team_arg(OP, team)?;
    let (t, s) = arrays(OP, target, source)?;
    let n = count(OP, size, s.len, s.len, "the source holds")?;
    let npes = t_entry.n_pes();
    let all = n.checked_mul(npes).filter(|&a| a <= t.len).ok_or_else(|| {
        PyValueError::new_err(format!(
            "{OP}: {n} elements from each of {npes} PEs are more than the target holds ({} \
             elements)",
            t.len
        ))
    })?;
    check_symmetric(OP, "target", &t, all)?;
    check_symmetric(OP, "source", &s, n)?;
    if n == 0 {
        return Ok(());
    }
    let isz = t.kind.size;
    let dest = sym_at::<u8>(OP, "target", t.ptr, all * isz)?;
    let src = copy_bytes(&s, n * isz);
    t_entry.run(py, OP, (dest, src), |team, (dest, src)| {
        team.fcollect(&dest, &src)
    })
}

/// The per-PE count of `alltoall(s)`: `size`, or what both arrays hold at their strides
/// divided among the members (which must divide it).
fn per_pe(op: &str, size: Option<i64>, tsize: usize, ssize: usize, npes: usize) -> PyResult<usize> {
    match size {
        None => {
            let m = tsize.min(ssize);
            if !m.is_multiple_of(npes) {
                return Err(PyValueError::new_err(format!(
                    "{op}: the arrays hold {m} elements (at their strides), not a multiple of \
                     the team's {npes} PEs; pass size"
                )));
            }
            Ok(m / npes)
        }
        Some(n) if n < 0 => Err(PyValueError::new_err(format!("{op}: size {n} is negative"))),
        Some(n) => {
            let n = n as usize;
            match n.checked_mul(npes) {
                Some(all) if all <= tsize && all <= ssize => Ok(n),
                _ => Err(PyValueError::new_err(format!(
                    "{op}: size {n} for each of {npes} PEs is more than the target ({tsize}) or \
                     the source ({ssize}) holds at its stride"
                ))),
            }
        }
    }
}

/// Send block ``j`` (``size`` elements; default: an equal share of what the arrays hold) of
/// ``source`` to team PE ``j``, into block ``my_pe`` of its ``target``. Both arrays are
/// symmetric. Collective.
#[pyfunction]
#[pyo3(signature = (target, source, size = None, team = None))]
pub(crate) fn alltoall(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    size: Option<i64>,
    team: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    const OP: &str = "alltoall";
    let t_entry = team_arg(OP, team)?;
    let (t, s) = arrays(OP, target, source)?;
    let npes = t_entry.n_pes();
    let n = per_pe(OP, size, t.len, s.len, npes)?;
    let all = n * npes;
    check_symmetric(OP, "target", &t, all)?;
    check_symmetric(OP, "source", &s, all)?;
    if n == 0 {
        return Ok(());
    }
    let isz = t.kind.size;
    let dest = sym_at::<u8>(OP, "target", t.ptr, all * isz)?;
    // The source is read where it lies (a source that overlaps the target is copied first):
    // with a private copy first, 1 MiB per PE at 2 PEs took 107-115 us a call, without it 42-46.
    let src = sym_at::<u8>(OP, "source", s.ptr, all * isz)?;
    t_entry.run(py, OP, (dest, src), |team, (dest, src)| {
        team.alltoall_symmetric(&dest, &src)
    })
}

/// `alltoall` with strides: element ``i`` of the block for team PE ``j`` is element
/// ``(j*size + i)*sst`` of ``source`` and lands at element ``(my_pe*size + i)*tst`` of PE
/// ``j``'s ``target``. ``size`` defaults to an equal share of what both arrays hold at their
/// strides. Both arrays are symmetric. Collective.
#[pyfunction]
#[pyo3(signature = (target, source, tst = 1, sst = 1, size = None, team = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn alltoalls(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    tst: i64,
    sst: i64,
    size: Option<i64>,
    team: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    const OP: &str = "alltoalls";
    let t_entry = team_arg(OP, team)?;
    let (t, s) = arrays(OP, target, source)?;
    if tst < 1 || sst < 1 {
        return Err(PyValueError::new_err(format!(
            "{OP}: strides must be positive (tst={tst}, sst={sst})"
        )));
    }
    let (tst, sst) = (tst as usize, sst as usize);
    let npes = t_entry.n_pes();
    let n = per_pe(OP, size, t.len.div_ceil(tst), s.len.div_ceil(sst), npes)?;
    let span = |stride: usize| {
        if n == 0 {
            0
        } else {
            (n * npes - 1) * stride + 1
        }
    };
    let (tspan, sspan) = (span(tst), span(sst));
    check_symmetric(OP, "target", &t, tspan)?;
    check_symmetric(OP, "source", &s, sspan)?;
    macro_rules! go {
        ($E:ty) => {{
            let dest = sym_at::<$E>(OP, "target", t.ptr, tspan)?;
            let src = gather::<$E>(s.ptr, 1, sspan);
            t_entry.run(py, OP, (dest, src), |team, (dest, src)| {
                team.alltoalls(&dest, tst, &src, sst, n)
            })
        }};
    }
    match t.kind.size {
        1 => go!(u8),
        2 => go!(u16),
        4 => go!(u32),
        8 => go!(u64),
        16 => go!([u64; 2]),
        32 => go!([u64; 4]),
        k => Err(PyTypeError::new_err(format!(
            "{OP}: elements of {k} bytes are not supported"
        ))),
    }
}

/// The reductions, as `reduce`'s `op` names them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    And,
    Or,
    Xor,
    Max,
    Min,
    Sum,
    Prod,
}

impl Op {
    fn parse(s: &str) -> Option<Op> {
        Some(match s.to_ascii_lowercase().as_str() {
            "and" => Op::And,
            "or" => Op::Or,
            "xor" => Op::Xor,
            "max" => Op::Max,
            "min" => Op::Min,
            "sum" => Op::Sum,
            "prod" => Op::Prod,
            _ => return None,
        })
    }
    fn name(self) -> &'static str {
        match self {
            Op::And => "and",
            Op::Or => "or",
            Op::Xor => "xor",
            Op::Max => "max",
            Op::Min => "min",
            Op::Sum => "sum",
            Op::Prod => "prod",
        }
    }
}

/// What a reduction runs on: the team, the target and the copied source.
struct Job<'a> {
    py: Python<'a>,
    op: &'a str,
    team: &'static TeamEntry,
    t: Buf,
    s: Buf,
    n: usize,
}

impl Job<'_> {
    fn run<E: Element>(
        self,
        f: impl FnOnce(&shmem_core::Team<'static>, &shmem_core::SymSlice<'static, E>, &[E]),
    ) -> PyResult<()> {
        let dest = sym_at::<E>(self.op, "target", self.t.ptr, self.n)?;
        let src = gather::<E>(self.s.ptr, 1, self.n);
        self.team
            .run(self.py, self.op, (dest, src), |team, (dest, src)| {
                f(team, &dest, &src)
            })
    }
    fn bitwise<E: ReduceBitwise>(self, op: Op) -> PyResult<()> {
        self.run::<E>(|t, d, s| match op {
            Op::And => t.and_reduce(d, s),
            Op::Or => t.or_reduce(d, s),
            _ => t.xor_reduce(d, s),
        })
    }
    fn arith<E: ReduceArith>(self, op: Op) -> PyResult<()> {
        self.run::<E>(|t, d, s| match op {
            Op::Max => t.max_reduce(d, s),
            Op::Min => t.min_reduce(d, s),
            Op::Sum => t.sum_reduce(d, s),
            _ => t.prod_reduce(d, s),
        })
    }
    fn sum<E: ReduceSum>(self, op: Op) -> PyResult<()> {
        self.run::<E>(|t, d, s| match op {
            Op::Sum => t.sum_reduce(d, s),
            _ => t.prod_reduce(d, s),
        })
    }
}

/// Whether OpenSHMEM has reduction `op` on element type `k` (bitwise: integers; max, min:
/// integers and reals; sum, prod: integers, reals and complex).
fn supported(op: Op, k: Kind) -> bool {
    let int = matches!(k.kind, b'i' | b'u') && matches!(k.size, 1 | 2 | 4 | 8);
    let real = k.kind == b'f' && (matches!(k.size, 4 | 8) || (k.size == 16 && long_double()));
    let complex = k.kind == b'c' && matches!(k.size, 8 | 16);
    match op {
        Op::And | Op::Or | Op::Xor => int,
        Op::Max | Op::Min => int || real,
        Op::Sum | Op::Prod => int || real || complex,
    }
}

/// Whether 16-byte reals (NumPy's `longdouble` on x86-64: x87 extended precision) reduce here.
const fn long_double() -> bool {
    cfg!(target_arch = "x86_64")
}

/// Reduce ``source`` element-wise over the members of ``team`` (default: every PE) with
/// ``op`` (`OP` or its name: ``'and'``, ``'or'``, ``'xor'``, ``'max'``, ``'min'``,
/// ``'sum'``, ``'prod'``) into ``target`` on every member, ``size`` elements (default: as many
/// as both hold). Both arrays are symmetric. `TypeError` for an element type that has no such
/// reduction in OpenSHMEM. Collective.
#[pyfunction]
#[pyo3(signature = (target, source, op = "sum", size = None, team = None))]
pub(crate) fn reduce(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    op: &str,
    size: Option<i64>,
    team: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let Some(o) = Op::parse(op) else {
        return Err(PyValueError::new_err(format!(
            "reduce: unknown operation {op:?}: use one of 'and', 'or', 'xor', 'max', 'min', \
             'sum', 'prod' (OP)"
        )));
    };
    let name = format!("{}_reduce", o.name());
    let opn = name.as_str();
    let t_entry = team_arg(opn, team)?;
    let (t, s) = arrays(opn, target, source)?;
    if !supported(o, t.kind) {
        return Err(PyTypeError::new_err(format!(
            "{opn}: dtype {} has no '{}' reduction (OpenSHMEM reduces: and, or, xor on integer \
             types; max, min on integer and real types; sum, prod on integer, real and complex \
             types)",
            t.kind,
            o.name()
        )));
    }
    let lim = t.len.min(s.len);
    let n = count(opn, size, lim, lim, "the target or the source holds")?;
    check_symmetric(opn, "target", &t, n)?;
    check_symmetric(opn, "source", &s, n)?;
    if n == 0 {
        return Ok(());
    }
    let job = Job {
        py,
        op: opn,
        team: t_entry,
        t,
        s,
        n,
    };
    macro_rules! ints {
        ($I:ty, $U:ty) => {
            match (t.kind.kind, o) {
                (b'i', Op::And | Op::Or | Op::Xor) => job.bitwise::<$I>(o),
                (b'i', _) => job.arith::<$I>(o),
                (_, Op::And | Op::Or | Op::Xor) => job.bitwise::<$U>(o),
                _ => job.arith::<$U>(o),
            }
        };
    }
    match (t.kind.kind, t.kind.size) {
        (b'i' | b'u', 1) => ints!(i8, u8),
        (b'i' | b'u', 2) => ints!(i16, u16),
        (b'i' | b'u', 4) => ints!(i32, u32),
        (b'i' | b'u', 8) => ints!(i64, u64),
        (b'f', 4) => job.arith::<f32>(o),
        (b'f', 8) => job.arith::<f64>(o),
        #[cfg(target_arch = "x86_64")]
        (b'f', 16) => job.arith::<x87::LongDouble>(o),
        (b'c', 8) => job.sum::<Complex32>(o),
        (b'c', 16) => job.sum::<Complex64>(o),
        _ => Err(PyTypeError::new_err(format!(
            "{opn}: dtype {} has no '{}' reduction",
            t.kind,
            o.name()
        ))),
    }
}

/// NumPy's `longdouble` on x86-64: the x87 80-bit extended format in 16 bytes, reduced with the
/// x87 unit's own arithmetic (the results NumPy computes).
#[cfg(target_arch = "x86_64")]
mod x87 {
    use shmem_core::{ReduceArith, ReduceSum};
    use std::arch::asm;
    use std::cmp::Ordering;

    /// One `longdouble`: 16 bytes, the value in the first 10.
    #[shmem_core::element]
    pub(crate) struct LongDouble {
        bytes: [u8; 16],
    }

    /// `a + b` (`mul`: `a * b`) in extended precision; the padding bytes are zero.
    fn arith(a: &LongDouble, b: &LongDouble, mul: bool) -> LongDouble {
        let mut out = LongDouble { bytes: [0; 16] };
        let (pa, pb, po) = (a.bytes.as_ptr(), b.bytes.as_ptr(), out.bytes.as_mut_ptr());
        // SAFETY: the three pointers each address 16 bytes (10 are read or written); two values
        // are loaded onto the x87 stack and both are popped (the stack ends empty, as the ABI
        // wants); the x87 registers used are declared clobbered.
        unsafe {
            if mul {
                asm!(
                    "fld tbyte ptr [{a}]",
                    "fld tbyte ptr [{b}]",
                    "fmulp st(1), st",
                    "fstp tbyte ptr [{o}]",
                    a = in(reg) pa, b = in(reg) pb, o = in(reg) po,
                    out("st(0)") _, out("st(1)") _,
                    options(nostack),
                );
            } else {
                asm!(
                    "fld tbyte ptr [{a}]",
                    "fld tbyte ptr [{b}]",
                    "faddp st(1), st",
                    "fstp tbyte ptr [{o}]",
                    a = in(reg) pa, b = in(reg) pb, o = in(reg) po,
                    out("st(0)") _, out("st(1)") _,
                    options(nostack),
                );
            }
        }
        out
    }

    /// How `a` compares with `b` (`None` when either is a NaN).
    fn compare(a: &LongDouble, b: &LongDouble) -> Option<Ordering> {
        let (above, below, parity): (u8, u8, u8);
        // SAFETY: both pointers address 16 bytes; two values are loaded and both popped; the
        // x87 registers used are declared clobbered. `fcomip` sets ZF, PF, CF like an unsigned
        // comparison of st(0) (= a) with st(1) (= b), PF when unordered.
        unsafe {
            asm!(
                "fld tbyte ptr [{b}]",
                "fld tbyte ptr [{a}]",
                "fcomip st, st(1)",
                "fstp st(0)",
                "seta {above}",
                "setb {below}",
                "setp {parity}",
                a = in(reg) a.bytes.as_ptr(), b = in(reg) b.bytes.as_ptr(),
                above = out(reg_byte) above, below = out(reg_byte) below,
                parity = out(reg_byte) parity,
                out("st(0)") _, out("st(1)") _,
                options(nostack),
            );
        }
        match (parity != 0, above != 0, below != 0) {
            (true, _, _) => None,
            (_, true, _) => Some(Ordering::Greater),
            (_, _, true) => Some(Ordering::Less),
            _ => Some(Ordering::Equal),
        }
    }

    impl PartialEq for LongDouble {
        fn eq(&self, other: &Self) -> bool {
            compare(self, other) == Some(Ordering::Equal)
        }
    }

    impl PartialOrd for LongDouble {
        fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
            compare(self, other)
        }
    }

    impl ReduceSum for LongDouble {
        fn sum(a: Self, b: Self) -> Self {
            arith(&a, &b, false)
        }
        fn prod(a: Self, b: Self) -> Self {
            arith(&a, &b, true)
        }
    }

    impl ReduceArith for LongDouble {}
}
