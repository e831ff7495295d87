"""PySHMEM's symmetric data objects: ``shmem_rs.sdo(dtype, shape)``.

A symmetric data object is an n-dimensional array (C order) of one NumPy number type, allocated
collectively on the symmetric heap: every PE holds a copy of the same shape and type. Indexing
names the PE first::

    x = shmem_rs.sdo(np.float64, (4, 8))   # collective
    x[pe, 1, 0:8:2] = src                  # put: one strided transfer
    row = x[pe, 2]                         # get: a new NumPy array of shape (8,)
    v = x[pe, 3, 7]                        # get one element: a NumPy scalar
    x.local[...]                           # this PE's copy, a NumPy view of the heap memory
    shmem_rs.barrier_all()
    x.free()                               # collective (or: ``with shmem_rs.sdo(...) as x:``)

After the PE come ints and slices (any step, negative too, omitted bounds), one per dimension
at most; dimensions left out are taken whole. A put returns when the source may be reused and
is visible at the target PE after ``shmem.quiet()`` or a barrier; a get returns with the data.
Bad input raises on the PE that made the call (which goes on, nothing transferred): a PE out
of range or an index out of bounds ``IndexError``, a source of the wrong kind ``TypeError``,
of the wrong shape ``ValueError``, a freed object ``shmem_rs.FreedError``.

Atomics, signals and waits on one element are methods with shmem4py's names and its argument
order, the element coming after shmem4py's arguments (before ``ctx``)::

    x.atomic_fetch_add(value, pe, index=0, ctx=None)    # shmem.atomic_fetch_add(target, value, pe)
    x.atomic_compare_swap(cond, value, pe, index=0, ctx=None)
    x.wait_until(cmp, value, index=0)                   # on this PE's element

``index`` is an int (a flat index for a 1-D object) or a tuple with one int per dimension.
"""

from __future__ import annotations

import operator as _operator

import numpy as np

from . import _ensure, _native

__all__ = ["SymmetricArray", "sdo"]

_ORDER = "biufc"  # bool < integers < floating < complex: what same_kind lets a scalar become


def _shape_str(shape) -> str:
    return str(tuple(int(n) for n in shape))


def _c_order(a: np.ndarray) -> np.ndarray:
    """``a`` in C order (``np.ascontiguousarray`` would make a 0-d array 1-d)."""
    return a if a.flags.c_contiguous else a.copy(order="C")


def _coerce(value, dtype, shape, op="SymmetricArray put"):
    """Convert a put's source to a C-order array of ``dtype`` and ``shape`` (a 0-d array for a
    value to repeat), as NumPy's ``same_kind`` casting allows: ``TypeError`` naming both types
    otherwise, ``ValueError`` naming both shapes when it does not broadcast to ``shape``."""
    if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
        # A Python number is "weak", as in NumPy: it may become any type of its kind or above.
        kind = "b" if isinstance(value, bool) else type(value).__name__[0]
        kind = {"b": "b", "i": "i", "f": "f", "c": "c"}[kind]
        target = "i" if dtype.kind == "u" else dtype.kind
        if _ORDER.index(kind) > _ORDER.index(target):
            raise TypeError(
                f"{op}: cannot cast a Python {type(value).__name__} to {dtype} "
                f"(NumPy's same_kind casting)"
            )
        if kind in "bi" and dtype.kind in "iu":
            # NumPy 2 raises OverflowError for a Python int out of the type's range; NumPy 1
            # wraps it (with a warning): raise under both.
            info = np.iinfo(dtype)
            if not info.min <= value <= info.max:
                raise OverflowError(
                    f"{op}: Python integer {value} out of bounds for {dtype} "
                    f"({info.min}..{info.max})"
                )
        src = np.array(value, dtype=dtype)
    else:
        src = np.asarray(value)
        if src.dtype != dtype:
            if not np.can_cast(src.dtype, dtype, casting="same_kind"):
                raise TypeError(
                    f"{op}: cannot cast the source's dtype {src.dtype} to the object's dtype "
                    f"{dtype} (NumPy's same_kind casting)"
                )
            src = src.astype(dtype, casting="same_kind")
    shape = tuple(shape)
    if src.shape == shape:
        return _c_order(src)
    if src.size == 1:
        return _c_order(src.reshape(()))
    try:
        return _c_order(np.broadcast_to(src, shape))
    except ValueError:
        raise ValueError(
            f"{op}: the source's shape {_shape_str(src.shape)} does not match the selection's "
            f"shape {_shape_str(shape)}"
        ) from None


def _element(x: "SymmetricArray", index, op: str) -> np.ndarray:
    """Element ``index`` of ``x`` as a 1-element view of ``x.local`` (what shmem4py's atomics
    take as a target)."""
    flat = x.local.reshape(-1)
    if isinstance(index, tuple):
        if len(index) != x.ndim:
            raise IndexError(
                f"{op}: index {index} needs {x.ndim} ints for shape {_shape_str(x.shape)}"
            )
        k = 0
        for d, (i, n) in enumerate(zip(index, x.shape)):
            i = _operator.index(i)
            if not -n <= i < n:
                raise IndexError(
                    f"{op}: index {i} is out of bounds for dimension {d} of length {n}"
                )
            k = k * n + (i % n if n else 0)
    else:
        k = _operator.index(index)
        n = flat.size
        if not -n <= k < n:
            raise IndexError(f"{op}: index {k} is out of bounds for an object of {n} elements")
        k %= n
    return flat[k : k + 1]


class SymmetricArray(_native._SdoBase):
    """A symmetric data object: an n-dimensional array (C order) of one NumPy number type on
    the symmetric heap of every PE. Made by ``shmem_rs.sdo(dtype, shape)``.

    ``x[pe, i, a:b:s] = src`` puts to PE ``pe``; ``x[pe, i, a:b:s]`` gets from it (a new NumPy
    array, or a NumPy scalar for one element). Each slice travels as one strided transfer (a
    contiguous one for step 1). ``x.local`` is this PE's copy (a NumPy view). ``x.free()``
    frees it collectively; ``with shmem_rs.sdo(...) as x:`` frees it at the end of the block.

    Attributes: ``dtype``, ``shape``, ``ndim``, ``size``, ``itemsize``, ``nbytes``,
    ``freed``, ``local``; ``len(x)`` is the first dimension's length.

    The atomic, signal and wait methods act on one element ``index`` (an int, a flat index for
    1-D objects, or a tuple with one int per dimension; default 0) and take shmem4py's
    arguments in shmem4py's order, without the target: ``x.atomic_fetch_add(value, pe,
    index=0, ctx=None)`` is ``shmem.atomic_fetch_add(x.local.reshape(-1)[index:index+1],
    value, pe, ctx)``.
    """

    __slots__ = ()

    # --- the object

    def __repr__(self) -> str:
        state = "freed" if self.freed else f"on {_native.n_pes()} PEs"
        return f"SymmetricArray(dtype={self.dtype}, shape={_shape_str(self.shape)}, {state})"

    def __enter__(self) -> "SymmetricArray":
        return self

    def __exit__(self, *exc) -> None:
        if not self.freed:
            self.free()

    def __iter__(self):
        raise TypeError(
            "a SymmetricArray is not iterable: index it with the PE first (x[pe, ...]) or "
            "iterate over x.local"
        )

    def _at(self, index, op: str) -> np.ndarray:
        return _element(self, index, op)

    # --- atomics (shmem4py's names; the element after shmem4py's arguments)

    def atomic_fetch(self, pe: int, index=0, ctx=None):
        """Return element ``index`` of PE ``pe``, atomically."""
        from . import shmem as _shmem

        return _shmem.atomic_fetch(self._at(index, "atomic_fetch"), pe, ctx)

    def atomic_set(self, value, pe: int, index=0, ctx=None) -> None:
        """Write ``value`` into element ``index`` of PE ``pe``, atomically."""
        from . import shmem as _shmem

        _shmem.atomic_set(self._at(index, "atomic_set"), value, pe, ctx)

    def atomic_swap(self, value, pe: int, index=0, ctx=None):
        """Write ``value`` into element ``index`` of PE ``pe`` and return the old value."""
        from . import shmem as _shmem

        return _shmem.atomic_swap(self._at(index, "atomic_swap"), value, pe, ctx)

    def atomic_compare_swap(self, cond, value, pe: int, index=0, ctx=None):
        """Write ``value`` into element ``index`` of PE ``pe`` if it equals ``cond``; return
        the old value."""
        from . import shmem as _shmem

        return _shmem.atomic_compare_swap(
            self._at(index, "atomic_compare_swap"), cond, value, pe, ctx
        )

    def atomic_inc(self, pe: int, index=0, ctx=None) -> None:
        """Add 1 to element ``index`` of PE ``pe``, atomically."""
        from . import shmem as _shmem

        _shmem.atomic_inc(self._at(index, "atomic_inc"), pe, ctx)

    def atomic_fetch_inc(self, pe: int, index=0, ctx=None):
        """Add 1 to element ``index`` of PE ``pe`` and return the old value."""
        from . import shmem as _shmem

        return _shmem.atomic_fetch_inc(self._at(index, "atomic_fetch_inc"), pe, ctx)

    def atomic_add(self, value, pe: int, index=0, ctx=None) -> None:
        """Add ``value`` to element ``index`` of PE ``pe``, atomically."""
        from . import shmem as _shmem

        _shmem.atomic_add(self._at(index, "atomic_add"), value, pe, ctx)

    def atomic_fetch_add(self, value, pe: int, index=0, ctx=None):
        """Add ``value`` to element ``index`` of PE ``pe`` and return the old value."""
        from . import shmem as _shmem

        return _shmem.atomic_fetch_add(self._at(index, "atomic_fetch_add"), value, pe, ctx)

    def atomic_and(self, value, pe: int, index=0, ctx=None) -> None:
        """Bitwise-and ``value`` into element ``index`` of PE ``pe``, atomically."""
        from . import shmem as _shmem

        _shmem.atomic_and(self._at(index, "atomic_and"), value, pe, ctx)

    def atomic_fetch_and(self, value, pe: int, index=0, ctx=None):
        """Bitwise-and ``value`` into element ``index`` of PE ``pe``; return the old value."""
        from . import shmem as _shmem

        return _shmem.atomic_fetch_and(self._at(index, "atomic_fetch_and"), value, pe, ctx)

    def atomic_or(self, value, pe: int, index=0, ctx=None) -> None:
        """Bitwise-or ``value`` into element ``index`` of PE ``pe``, atomically."""
        from . import shmem as _shmem

        _shmem.atomic_or(self._at(index, "atomic_or"), value, pe, ctx)

    def atomic_fetch_or(self, value, pe: int, index=0, ctx=None):
        """Bitwise-or ``value`` into element ``index`` of PE ``pe``; return the old value."""
        from . import shmem as _shmem

        return _shmem.atomic_fetch_or(self._at(index, "atomic_fetch_or"), value, pe, ctx)

    def atomic_xor(self, value, pe: int, index=0, ctx=None) -> None:
        """Bitwise-xor ``value`` into element ``index`` of PE ``pe``, atomically."""
        from . import shmem as _shmem

        _shmem.atomic_xor(self._at(index, "atomic_xor"), value, pe, ctx)

    def atomic_fetch_xor(self, value, pe: int, index=0, ctx=None):
        """Bitwise-xor ``value`` into element ``index`` of PE ``pe``; return the old value."""
        from . import shmem as _shmem

        return _shmem.atomic_fetch_xor(self._at(index, "atomic_fetch_xor"), value, pe, ctx)

    def atomic_op(self, value, op, pe: int, index=0, ctx=None) -> None:
        """Apply ``op`` (a ``shmem.AMO``) with ``value`` to element ``index`` of PE ``pe``."""
        from . import shmem as _shmem

        _shmem.atomic_op(self._at(index, "atomic_op"), value, op, pe, ctx)

    def atomic_fetch_op(self, value, op, pe: int, index=0, ctx=None):
        """Apply ``op`` (a ``shmem.AMO``) with ``value`` to element ``index`` of PE ``pe``;
        return the old value."""
        from . import shmem as _shmem

        return _shmem.atomic_fetch_op(self._at(index, "atomic_fetch_op"), value, op, pe, ctx)

    # --- signals and waits

    def put_signal(self, source, pe: int, signal, value, sigop, index=0, sig_index=0,
                   ctx=None) -> None:
        """Put ``source`` (converted as for ``x[pe, ...] = source``) into this object on PE
        ``pe``, from element ``index`` on (C order), then update element ``sig_index`` of
        ``signal`` (a ``uint64`` SymmetricArray) on ``pe`` with ``value`` as ``sigop``
        (``shmem.SIGNAL_SET`` or ``shmem.SIGNAL_ADD``) once the data is there."""
        from . import shmem as _shmem

        flat = self.local.reshape(-1)
        start = int(self._at(index, "put_signal").__array_interface__["data"][0]
                    - flat.__array_interface__["data"][0]) // self.itemsize
        src = _coerce(source, self.dtype, np.shape(source), "put_signal").reshape(-1)
        if start + src.size > flat.size:
            raise ValueError(
                f"put_signal: {src.size} elements from element {start} run past the end "
                f"of the object ({flat.size} elements)"
            )
        _shmem.put_signal(flat[start:start + src.size], src, pe,
                          signal._at(sig_index, "put_signal"), value, sigop, ctx=ctx)

    def signal_fetch(self, index=0) -> int:
        """Return this PE's element ``index`` (a signal word, ``uint64``), atomically."""
        from . import shmem as _shmem

        return _shmem.signal_fetch(self._at(index, "signal_fetch"))

    def signal_wait_until(self, cmp, value, index=0) -> int:
        """Wait until this PE's element ``index`` (a signal word) satisfies ``cmp`` against
        ``value`` (``shmem.CMP``); return its value."""
        from . import shmem as _shmem

        return _shmem.signal_wait_until(self._at(index, "signal_wait_until"), cmp, value)

    def wait_until(self, cmp, value, index=0) -> None:
        """Wait until this PE's element ``index`` satisfies ``cmp`` against ``value``."""
        from . import shmem as _shmem

        _shmem.wait_until(self._at(index, "wait_until"), cmp, value)

    def test(self, cmp, value, index=0) -> bool:
        """Whether this PE's element ``index`` satisfies ``cmp`` against ``value`` now."""
        from . import shmem as _shmem

        return _shmem.test(self._at(index, "test"), cmp, value)


def sdo(dtype, shape=()) -> SymmetricArray:
    """Allocate a symmetric data object, collectively: every PE calls it with the same ``dtype``
    (a NumPy number type: bool, int8..int64, uint8..uint64, float16..float64, complex64,
    complex128) and ``shape`` (an int or a tuple of ints), zero-filled. Returns a
    `SymmetricArray`; free it with ``x.free()`` (collective) or use ``with``."""
    dtype = np.dtype(dtype)
    if dtype.kind not in _ORDER or not dtype.isnative or dtype.itemsize not in (1, 2, 4, 8, 16, 32):
        raise TypeError(
            f"sdo: dtype {dtype} is not supported: use a bool, integer, float or complex type"
        )
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(_operator.index(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"sdo: negative dimensions in shape {shape}")
    size = 1
    for n in shape:
        size *= n
    _ensure()
    nbytes = size * dtype.itemsize
    addr = _native.alloc(nbytes, None, 0, True)
    try:
        mem = _native.view(addr, max(nbytes, 1))
        assert mem is not None
        local = mem[:nbytes].view(dtype).reshape(shape)
        return SymmetricArray(addr, local)
    except BaseException:
        _native.free(addr)
        raise
