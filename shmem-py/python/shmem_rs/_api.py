"""The Python-defined part of ``shmem_rs.shmem``: the symmetric heap's helpers (``alloc``,
``zeros``, ``array`` ...), ``ptr``, signals and locks, the reductions by name, and shmem4py's
cffi compatibility objects (``lib``, ``_getbuffer``, ``ffi``).

``shmem_rs.shmem`` takes these names from here at their first use (its module ``__getattr__``),
so that its import, part of every PE's start, reads one small module. Use them through
``shmem_rs.shmem``.
"""
# pylint: disable=too-many-lines,too-many-arguments,redefined-builtin

from typing import TYPE_CHECKING, Any, Literal, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native
from ._native import (
    FreedError,
    NotSymmetricError,
    Team,
    clear_lock,
    set_lock,
    sync_all,
    test_lock,
)

if TYPE_CHECKING:  # pragma: no cover
    from ._enums import OP

if TYPE_CHECKING:  # pragma: no cover
    from numpy.typing import ArrayLike, DTypeLike, NDArray

    from typing import Protocol

    class _Reduction(Protocol):
        """The signature of ``and_reduce`` ... ``prod_reduce``."""

        def __call__(
            self,
            target: "NDArray[Any]",
            source: "NDArray[Any]",
            size: "Optional[int]" = None,
            team: "Optional[Team]" = None,
        ) -> None: ...

    Number = Union[int, float, complex, np.number]
    SigAddr = NDArray[np.uint64]
    LockHandle = NDArray[np.int64]


# --- symmetric memory


def _view(addr: int, nbytes: int) -> memoryview:
    """The ``nbytes`` bytes of the heap block at ``addr`` as a writable memoryview of unsigned
    bytes (over a NumPy array whose ``base`` is the native ``Block`` naming the block)."""
    block = _native.view(addr, nbytes)
    assert block is not None
    return block.data  # a memoryview whose .obj is the array (its .base: the Block)


def _address(a: Any, op: str) -> "Tuple[int, int]":
    """The address and size in bytes of the contiguous NumPy array ``a``."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{op}: expected a NumPy array, got {type(a).__name__}")
    if not (a.flags.c_contiguous or a.flags.f_contiguous):
        raise ValueError(f"{op}: the array is not contiguous")
    return a.__array_interface__["data"][0], a.nbytes


def alloc(
    count: int,
    size: int = 1,
    align: "Optional[int]" = None,
    hints: "Optional[int]" = None,
    clear: bool = True,
) -> memoryview:
    """Return memory allocated from the symmetric heap, as a memoryview of bytes. Collective.

    The memory stays allocated until `free` (or `finalize`): it is not freed when the
    memoryview is garbage-collected, as freeing is a collective call.

    Args:
        count: Number of elements to allocate.
        size: Size of each element in bytes.
        align: Byte alignment of the block (a power of two; default: the heap's).
        hints: A combination of `MALLOC` flags (every block supports remote atomics and
            signals, so they change nothing).
        clear: If `True`, the memory is cleared to zero.
    """
    count, size = int(count), int(size)
    if count < 0 or size < 0:
        raise ValueError(f"alloc: count ({count}) and size ({size}) must not be negative")
    nbytes = count * size
    addr = _native.alloc(nbytes, align, int(hints or 0), bool(clear))
    return _view(addr, nbytes)


def _block_of(mem: Any) -> "Optional[int]":
    """The address of the heap block under ``mem`` (a memoryview of `alloc` or an array made
    from one), or None."""
    while isinstance(mem, (np.ndarray, memoryview)):
        mem = mem.base if isinstance(mem, np.ndarray) else mem.obj
    if isinstance(mem, _native.Block):
        return int(mem.addr)
    return None


def free(mem: "Union[memoryview, NDArray[Any]]") -> None:
    """Deallocate the symmetric memory ``mem``. Collective.

    Args:
        mem: A memoryview of `alloc`, or an array of `new_array` (`array`, `zeros`, ...).

    Raises:
        KeyError: ``mem`` was freed already.
        NotSymmetricError: ``mem`` is not memory of the symmetric heap.
    """
    addr = _block_of(mem)
    if addr is None:
        raise NotSymmetricError(
            f"free: a {type(mem).__name__} that is not memory of shmem.alloc or shmem.new_array"
        )
    _native.free(addr)


def fromalloc(
    mem: memoryview,
    shape: "Optional[Union[int, Sequence[int]]]" = None,
    dtype: "Optional[DTypeLike]" = None,
    order: "Literal['C', 'F']" = "C",
) -> "NDArray[Any]":
    """Return a NumPy array over memory of `alloc`.

    Args:
        mem: The memory, from `alloc`.
        shape: The shape of the array (default: as many elements as the memory holds).
        dtype: The data type of the array (default: float64).
        order: ``'C'`` (row major) or ``'F'`` (column major).
    """
    if not isinstance(mem, memoryview):
        raise TypeError(
            f"fromalloc: expected a memoryview of shmem.alloc, got {type(mem).__name__}"
        )
    dtype = np.dtype(dtype)
    if shape is None:
        shape = mem.nbytes // dtype.itemsize
    a: "NDArray[Any]" = np.ndarray(shape, dtype, buffer=mem, order=order)
    return a


def new_array(
    shape: "Union[int, Sequence[int]]",
    dtype: "DTypeLike" = float,
    order: "Literal['C', 'F']" = "C",
    *,
    align: "Optional[int]" = None,
    hints: "Optional[int]" = None,
    clear: bool = True,
) -> "NDArray[Any]":
    """Return a new NumPy array allocated in the symmetric memory. Collective.

    Args:
        shape: The shape of the array.
        dtype: The data type of the array.
        order: ``'C'`` (row major) or ``'F'`` (column major).
        align: Byte alignment of the block. Keyword argument only.
        hints: A combination of `MALLOC` flags. Keyword argument only.
        clear: If `True`, the array is cleared to zero. Keyword argument only.
    """
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype="p"))
    mem = alloc(count, dtype.itemsize, align, hints, clear)
    return fromalloc(mem, shape, dtype, order)


def del_array(a: "NDArray[Any]") -> None:
    """Delete an array of `new_array` (`free`). Collective.

    Args:
        a: The array to delete.
    """
    if not isinstance(a, np.ndarray):
        raise TypeError(f"del_array: expected a NumPy array, got {type(a).__name__}")
    free(a)


def _sym_like(
    tmp: "NDArray[Any]", align: "Optional[int]", hints: "Optional[int]"
) -> "NDArray[Any]":
    """A symmetric array of ``tmp``'s shape, dtype and memory layout (not initialized)."""
    mem = alloc(tmp.size, tmp.dtype.itemsize, align, hints, False)
    a: "NDArray[Any]" = np.ndarray(tmp.shape, tmp.dtype, buffer=mem, strides=tmp.strides)
    return a


def array(
    obj: Any,
    dtype: "Optional[DTypeLike]" = None,
    *,
    order: "Literal['K', 'A', 'C', 'F']" = "K",
    align: "Optional[int]" = None,
    hints: "Optional[int]" = None,
) -> "NDArray[Any]":
    """Return a new symmetric NumPy array holding ``obj``. Collective.

    Args:
        obj: What to fill the array with (anything `numpy.array` takes).
        dtype: The data type of the array (default: ``obj``'s).
        order: The memory layout, as `numpy.array` has it. Keyword argument only.
        align: Byte alignment of the block. Keyword argument only.
        hints: A combination of `MALLOC` flags. Keyword argument only.
    """
    tmp = np.asarray(obj, dtype=dtype, order=order)
    if not (tmp.flags.c_contiguous or tmp.flags.f_contiguous):
        tmp = np.array(tmp, order="K", copy=True)
    a = _sym_like(tmp, align, hints)
    np.copyto(a, tmp, casting="no")
    sync_all()
    return a


def empty(
    shape: "Union[int, Sequence[int]]",
    dtype: "DTypeLike" = float,
    order: "Literal['C', 'F']" = "C",
    *,
    align: "Optional[int]" = None,
    hints: "Optional[int]" = None,
) -> "NDArray[Any]":
    """Return a new symmetric NumPy array, not initialized. Collective.

    Args:
        shape: The shape of the array.
        dtype: The data type of the array.
        order: ``'C'`` (row major) or ``'F'`` (column major).
        align: Byte alignment of the block. Keyword argument only.
        hints: A combination of `MALLOC` flags. Keyword argument only.
    """
    return new_array(shape, dtype, order, align=align, hints=hints, clear=False)


def zeros(
    shape: "Union[int, Sequence[int]]",
    dtype: "DTypeLike" = float,
    order: "Literal['C', 'F']" = "C",
    *,
    align: "Optional[int]" = None,
    hints: "Optional[int]" = None,
) -> "NDArray[Any]":
    """Return a new symmetric NumPy array of zeros. Collective.

    Args:
        shape: The shape of the array.
        dtype: The data type of the array.
        order: ``'C'`` (row major) or ``'F'`` (column major).
        align: Byte alignment of the block. Keyword argument only.
        hints: A combination of `MALLOC` flags. Keyword argument only.
    """
    return new_array(shape, dtype, order, align=align, hints=hints, clear=True)


def ones(
    shape: "Union[int, Sequence[int]]",
    dtype: "DTypeLike" = float,
    order: "Literal['C', 'F']" = "C",
    *,
    align: "Optional[int]" = None,
    hints: "Optional[int]" = None,
) -> "NDArray[Any]":
    """Return a new symmetric NumPy array of ones. Collective.

    Args:
        shape: The shape of the array.
        dtype: The data type of the array.
        order: ``'C'`` (row major) or ``'F'`` (column major).
        align: Byte alignment of the block. Keyword argument only.
        hints: A combination of `MALLOC` flags. Keyword argument only.
    """
    a = new_array(shape, dtype, order, align=align, hints=hints, clear=False)
    np.copyto(a, 1, casting="unsafe")
    sync_all()
    return a


def full(
    shape: "Union[int, Sequence[int]]",
    fill_value: "ArrayLike",
    dtype: "Optional[DTypeLike]" = None,
    order: "Literal['C', 'F']" = "C",
    *,
    align: "Optional[int]" = None,
    hints: "Optional[int]" = None,
) -> "NDArray[Any]":
    """Return a new symmetric NumPy array filled with ``fill_value``. Collective.

    Args:
        shape: The shape of the array.
        fill_value: The value of every element.
        dtype: The data type of the array (default: ``fill_value``'s).
        order: ``'C'`` (row major) or ``'F'`` (column major).
        align: Byte alignment of the block. Keyword argument only.
        hints: A combination of `MALLOC` flags. Keyword argument only.
    """
    if dtype is None:
        dtype = np.array(fill_value).dtype
    a = new_array(shape, dtype, order, align=align, hints=hints, clear=False)
    # Converted as C converts (wrapping an out-of-range integer), as NumPy 1 did.
    np.copyto(a, np.asarray(fill_value).astype(a.dtype, casting="unsafe"), casting="unsafe")
    sync_all()
    return a


def ptr(target: "NDArray[Any]", pe: int) -> "Optional[NDArray[Any]]":
    """Return a NumPy view of PE ``pe``'s copy of the symmetric array ``target``.

    Loads and stores through the view reach the peer's memory directly.

    Args:
        target: The symmetric array.
        pe: The PE whose copy to view.

    Returns:
        The view when that copy is mapped into this process (a PE on this node, reached
        through shared memory), else `None`.

    Raises:
        IndexError: ``pe`` is not a PE of the job.
        NotSymmetricError: ``target`` is not symmetric.
    """
    addr, nbytes = _address(target, "ptr")
    peer = _native.view(addr, nbytes, pe)
    if peer is None:
        return None
    a: "NDArray[Any]" = np.ndarray(
        target.shape, target.dtype, buffer=peer.data, strides=target.strides
    )
    a.flags.writeable = target.flags.writeable
    return a


# --- atomic memory operations


# --- signals


def new_signal() -> "SigAddr":
    """Create a signal data object: a symmetric uint64 array of one element, zero. Collective.

    ``signal[0]`` reads and writes it locally; `signal_fetch` reads it atomically.
    """
    return zeros(1, np.uint64, hints=2)  # MALLOC_SIGNAL_REMOTE


def del_signal(signal: "SigAddr") -> None:
    """Delete a signal data object of `new_signal`. Collective.

    Args:
        signal: The signal data object to delete.
    """
    free(signal)


# --- point-to-point synchronization


# --- locks


def new_lock() -> "LockHandle":
    """Create a lock: a symmetric int64 array of one element, zero (free). Collective."""
    return zeros(1, np.int64)


def del_lock(lock: "LockHandle") -> None:
    """Delete a lock of `new_lock`. Collective.

    Args:
        lock: The lock to delete.
    """
    free(lock)


class Lock:
    """A distributed lock: one PE at a time holds it. `new_lock` made into an object, usable as
    a context manager (``with lock: ...``)."""

    _lock: "Optional[LockHandle]"

    def __init__(self) -> None:
        """Create the lock. Collective."""
        self._lock = None
        self._lock = new_lock()

    def _handle(self) -> "LockHandle":
        lock = self._lock
        if lock is None:
            raise FreedError("Lock: the lock was destroyed")
        return lock

    def destroy(self) -> None:
        """Destroy the lock (collective; nothing the second time)."""
        lock, self._lock = self._lock, None
        if lock is not None:
            del_lock(lock)

    def acquire(self, blocking: bool = True) -> bool:
        """Acquire the lock.

        Args:
            blocking: `True` to wait until the lock is acquired (the GIL is released while
                waiting).

        Returns:
            `True` when the lock was acquired; with ``blocking`` false, `False` when another PE
            holds it.
        """
        lock = self._handle()
        if blocking:
            set_lock(lock)
            return True
        return not test_lock(lock)

    def release(self) -> None:
        """Release the lock, after completing this PE's operations (a `quiet`), so that the
        next holder sees what this PE wrote while holding it."""
        clear_lock(self._handle())

    def __enter__(self) -> "Lock":
        self.acquire()
        return self

    def __exit__(self, *args: Any) -> None:
        self.release()


# --- compatibility with shmem4py's cffi objects

_ctypes_of = {
    # dtype.char: (shmem4py's type name, C type of cffi)
    "b": ("schar", "signed char"),
    "h": ("short", "short"),
    "i": ("int", "int"),
    "l": ("long", "long"),
    "q": ("longlong", "long long"),
    "B": ("uchar", "unsigned char"),
    "H": ("ushort", "unsigned short"),
    "I": ("uint", "unsigned int"),
    "L": ("ulong", "unsigned long"),
    "Q": ("ulonglong", "unsigned long long"),
    "f": ("float", "float"),
    "d": ("double", "double"),
    "g": ("longdouble", "long double"),
    "F": ("complexf", "float _Complex"),
    "D": ("complexd", "double _Complex"),
    "S": ("char", "char"),
}


class _Lib:
    """The C constants of the library, as shmem4py's ``lib`` has them (``SHMEM_*``)."""

    SHMEM_MAJOR_VERSION = int(_native.VERSION[0])
    SHMEM_MINOR_VERSION = int(_native.VERSION[1])
    SHMEM_MAX_NAME_LEN = int(_native.MAX_NAME_LEN)
    SHMEM_VENDOR_STRING = str(_native.VENDOR_STRING)
    SHMEM_THREAD_SINGLE = 0
    SHMEM_THREAD_FUNNELED = 1
    SHMEM_THREAD_SERIALIZED = 2
    SHMEM_THREAD_MULTIPLE = 3
    SHMEM_CMP_EQ = 0
    SHMEM_CMP_NE = 1
    SHMEM_CMP_GT = 2
    SHMEM_CMP_LE = 3
    SHMEM_CMP_LT = 4
    SHMEM_CMP_GE = 5
    SHMEM_SIGNAL_SET = 0
    SHMEM_SIGNAL_ADD = 1
    SHMEM_CTX_PRIVATE = 1
    SHMEM_CTX_SERIALIZED = 2
    SHMEM_CTX_NOSTORE = 4
    SHMEM_MALLOC_ATOMICS_REMOTE = 1
    SHMEM_MALLOC_SIGNAL_REMOTE = 2
    SHMEM_TEAM_NUM_CONTEXTS = 1
    SHMEM_SYNC_VALUE = 0
    SHMEM_SYNC_SIZE = 4
    SHMEM_BCAST_SYNC_SIZE = 4
    SHMEM_REDUCE_SYNC_SIZE = 4
    SHMEM_BARRIER_SYNC_SIZE = 4
    SHMEM_COLLECT_SYNC_SIZE = 4
    SHMEM_ALLTOALL_SYNC_SIZE = 4
    SHMEM_ALLTOALLS_SYNC_SIZE = 4
    SHMEM_REDUCE_MIN_WRKDATA_SIZE = 1

    def __repr__(self) -> str:
        return f"<{__name__}.lib>"


#: The library's C constants (``lib.SHMEM_CMP_EQ``, ``lib.SHMEM_TEAM_NUM_CONTEXTS``, ...).
lib = _Lib()


def _getbuffer(obj: "NDArray[Any]", readonly: bool = False) -> "Tuple[Any, int, str]":
    """The contiguous NumPy array ``obj`` as shmem4py's ``_getbuffer`` has it: a cffi pointer to
    its data, its number of elements and its type's name (``'double'``, ``'int'``, ...).

    Needs cffi (the package's extra ``cffi``).

    Raises:
        TypeError: ``obj`` is not a NumPy array, or its dtype has no C type.
        ValueError: ``obj`` is read-only (unless ``readonly``) or not contiguous.
    """
    if not isinstance(obj, np.ndarray):
        raise TypeError(f"_getbuffer: a {type(obj).__name__} is not a NumPy array")
    flags = obj.flags
    if not readonly and not flags.writeable:
        raise ValueError("_getbuffer: the array is read-only")
    if not flags.c_contiguous:
        if not flags.f_contiguous:
            raise ValueError("_getbuffer: the array is not contiguous")
        obj = obj.T
    char: str = obj.dtype.char
    if char == "S" and obj.dtype.itemsize != 1:
        char = "?S"
    names = _ctypes_of.get(char)
    if names is None:
        raise TypeError(f"_getbuffer: dtype {obj.dtype} has no C type")
    name, ctype = names
    ffi = _ffi()
    cdata = ffi.from_buffer(f"{ctype}[]", obj)
    return (cdata, obj.size, name)


_the_ffi: Any = None


def _ffi() -> Any:
    """The module's ``cffi.FFI`` (made at first use)."""
    global _the_ffi  # noqa: PLW0603
    if _the_ffi is None:
        try:
            import cffi  # pylint: disable=import-outside-toplevel
        except ImportError as e:  # pragma: no cover
            raise ImportError(
                "shmem_rs.shmem.ffi needs cffi: pip install 'shmem-rs[cffi]'"
            ) from e
        _the_ffi = cffi.FFI()
    return _the_ffi


# --- collectives (contexts and teams are native: ``Ctx``, ``Team``)


def reduce(
    target: "NDArray[Any]",
    source: "NDArray[Any]",
    op: "Union[OP, str]" = "sum",
    size: "Optional[int]" = None,
    team: "Optional[Team]" = None,
) -> None:
    """Reduce ``source`` element-wise over the PEs of ``team`` into ``target`` on every PE.

    Args:
        target: Symmetric destination array of at least ``size`` elements.
        source: Symmetric source array of at least ``size`` elements (may be ``target``).
        op: The reduction (`OP`, or its name: 'and', 'or', 'xor', 'max', 'min', 'sum', 'prod';
            default ``OP_SUM``).
        size: The number of elements to reduce (default: as many as both arrays hold).
        team: The team over which to reduce (default: every PE).

    Raises:
        TypeError: the element type has no such reduction in OpenSHMEM (bitwise reductions
            take integer types, max and min integer and real types, sum and prod integer,
            real and complex types), or the arrays' types differ.
        ValueError: ``size`` exceeds an array, or ``op`` is not a reduction.
        NotSymmetricError: an array is not on the symmetric heap.
        RuntimeError: the team is invalid or destroyed.
    """
    if not isinstance(op, str):
        raise TypeError(f"reduce: op must be an OP or its name, not {type(op).__name__}")
    # An OP is a str whose text is its value ('sum', ...).
    _native.reduce(target, source, str.__str__(op), size, team)


def _named_reduce(name: str, what: str) -> "_Reduction":
    def fn(
        target: "NDArray[Any]",
        source: "NDArray[Any]",
        size: "Optional[int]" = None,
        team: "Optional[Team]" = None,
    ) -> None:
        _native.reduce(target, source, name, size, team)

    fn.__name__ = fn.__qualname__ = f"{name}_reduce"
    fn.__module__ = __name__
    fn.__doc__ = f"""Perform a {what} reduction across the PEs of ``team``.

    Args:
        target: Symmetric destination array of at least ``size`` elements, where the
            result is stored on every PE.
        source: Symmetric source array of at least ``size`` elements (may be ``target``).
        size: The number of elements to reduce (default: as many as both arrays hold).
        team: The team over which to reduce (default: every PE).

    Raises as `reduce` does.
    """
    return fn


and_reduce = _named_reduce("and", "bitwise AND")
or_reduce = _named_reduce("or", "bitwise OR")
xor_reduce = _named_reduce("xor", "bitwise exclusive OR (XOR)")
max_reduce = _named_reduce("max", "maximum-value")
min_reduce = _named_reduce("min", "minimum-value")
sum_reduce = _named_reduce("sum", "sum")
prod_reduce = _named_reduce("prod", "product")
