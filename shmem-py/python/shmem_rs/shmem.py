"""OpenSHMEM for Python on shmem-rs, with shmem4py's API.

``from shmem_rs import shmem`` in place of ``from shmem4py import shmem``: the same functions,
classes, enumerations and constants, with the same signatures, defaults and results, over
NumPy arrays on the symmetric heap. The calls are native (``shmem_rs._native``); this module
adds the enumerations, the allocation helpers and the compatibility objects (``ffi``, ``lib``).

Bad input raises on the PE that made the call, which goes on; nothing is transferred:
``IndexError`` for a PE out of range, ``NotSymmetricError`` (a ``ValueError``) for an array
that must be symmetric and is not, ``TypeError`` for a dtype the operation does not take,
``ValueError`` for sizes. Importing this module starts the runtime, as ``shmem_rs.rc`` says
(``rc.initialize``, ``rc.threads``, ``rc.thread_level``, ``rc.finalize``; the environment's
``SHMEM4PY_RC_<NAME>`` or ``SHMEM_RS_RC_<NAME>`` override them).
"""
# pylint: disable=too-many-lines,too-many-arguments,redefined-builtin

from __future__ import annotations

import enum as _enum
import os as _os
import sys
from typing import TYPE_CHECKING, Any, List, Literal, NoReturn, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native, _runtime
# Re-exported (``X as X``: explicitly, for type checkers): native, no Python layer on the hot
# paths.
from ._native import (  # noqa: F401
    CTX_DEFAULT as CTX_DEFAULT,
    CTX_INVALID as CTX_INVALID,
    Ctx as Ctx,
    FreedError as FreedError,
    NotSymmetricError as NotSymmetricError,
    ShmemError as ShmemError,
    atomic_add as atomic_add,
    atomic_and as atomic_and,
    atomic_compare_swap as atomic_compare_swap,
    atomic_compare_swap_nbi as atomic_compare_swap_nbi,
    atomic_fetch as atomic_fetch,
    atomic_fetch_add as atomic_fetch_add,
    atomic_fetch_add_nbi as atomic_fetch_add_nbi,
    atomic_fetch_and as atomic_fetch_and,
    atomic_fetch_and_nbi as atomic_fetch_and_nbi,
    atomic_fetch_inc as atomic_fetch_inc,
    atomic_fetch_inc_nbi as atomic_fetch_inc_nbi,
    atomic_fetch_nbi as atomic_fetch_nbi,
    atomic_fetch_op as atomic_fetch_op,
    atomic_fetch_op_nbi as atomic_fetch_op_nbi,
    atomic_fetch_or as atomic_fetch_or,
    atomic_fetch_or_nbi as atomic_fetch_or_nbi,
    atomic_fetch_xor as atomic_fetch_xor,
    atomic_fetch_xor_nbi as atomic_fetch_xor_nbi,
    atomic_inc as atomic_inc,
    atomic_op as atomic_op,
    atomic_or as atomic_or,
    atomic_set as atomic_set,
    atomic_swap as atomic_swap,
    atomic_swap_nbi as atomic_swap_nbi,
    atomic_xor as atomic_xor,
    barrier_all as barrier_all,
    clear_lock as clear_lock,
    fence as fence,
    get as get,
    get_nbi as get_nbi,
    iget as iget,
    iput as iput,
    my_pe as my_pe,
    n_pes as n_pes,
    pe_accessible as pe_accessible,
    addr_accessible as addr_accessible,
    put as put,
    put_nbi as put_nbi,
    put_signal as put_signal,
    put_signal_nbi as put_signal_nbi,
    quiet as quiet,
    set_lock as set_lock,
    signal_fetch as signal_fetch,
    signal_wait_until as signal_wait_until,
    sync_all as sync_all,
    test as test,
    test_all as test_all,
    test_all_vector as test_all_vector,
    test_any as test_any,
    test_any_vector as test_any_vector,
    test_lock as test_lock,
    test_some as test_some,
    test_some_vector as test_some_vector,
    wait_until as wait_until,
    wait_until_all as wait_until_all,
    wait_until_all_vector as wait_until_all_vector,
    wait_until_any as wait_until_any,
    wait_until_any_vector as wait_until_any_vector,
    wait_until_some as wait_until_some,
    wait_until_some_vector as wait_until_some_vector,
)

# `sys.version_info` by that name, as type checkers read version checks (`sys` is deleted after).
if sys.version_info >= (3, 11):
    from enum import StrEnum as _StrEnum
else:  # pragma: no cover

    class _StrEnum(str, _enum.Enum):
        """A string enumeration whose ``str`` is its value (``enum.StrEnum`` of 3.11)."""

        __str__ = str.__str__

del sys


if TYPE_CHECKING:  # pragma: no cover
    from numpy.typing import ArrayLike, DTypeLike, NDArray

    Number = Union[int, float, complex, np.number]
    SigAddr = NDArray[np.uint64]
    LockHandle = NDArray[np.int64]


# --- library information


#: The major version of the OpenSHMEM specification the library implements.
MAJOR_VERSION: int = int(_native.VERSION[0])
#: The minor version of the OpenSHMEM specification the library implements.
MINOR_VERSION: int = int(_native.VERSION[1])
#: The vendor's name and version of the library.
VENDOR_STRING: str = str(_native.VENDOR_STRING)


def info_get_version() -> Tuple[int, int]:
    """Return the major and minor version of the library implementation."""
    return (MAJOR_VERSION, MINOR_VERSION)


def info_get_name() -> str:
    """Return the name string of the library implementation."""
    return VENDOR_STRING


# --- starting and ending


class THREAD(_enum.IntEnum):
    """Threading support levels.

    Attributes:
        SINGLE: A single-threaded program.
        FUNNELED: Only the main thread makes OpenSHMEM calls.
        SERIALIZED: Threads make OpenSHMEM calls, but never concurrently.
        MULTIPLE: Any thread may make OpenSHMEM calls at any time.
    """

    SINGLE = 0
    FUNNELED = 1
    SERIALIZED = 2
    MULTIPLE = 3


THREAD_SINGLE: THREAD = THREAD.SINGLE
THREAD_FUNNELED: THREAD = THREAD.FUNNELED
THREAD_SERIALIZED: THREAD = THREAD.SERIALIZED
THREAD_MULTIPLE: THREAD = THREAD.MULTIPLE


def init() -> None:
    """Start the runtime (nothing when it runs). Collective.

    Every PE calls this routine, or `init_thread`, before any other OpenSHMEM routine (importing
    this module does it, unless ``rc.initialize`` is false), and `finalize` at the end (done at
    exit unless ``rc.finalize`` is false). The rendezvous releases the GIL while it waits.
    """
    _runtime.init(int(THREAD_MULTIPLE))


def finalize() -> None:
    """End the runtime: complete this PE's operations, meet every PE, release the resources.

    Collective. Only the OpenSHMEM part of the program ends: the process goes on, but may make
    no OpenSHMEM call after it (the runtime cannot restart). Nothing when it does not run.
    """
    _runtime.finalize()


def global_exit(status: int = 0) -> NoReturn:  # pragma: no cover
    """End the whole program, every PE, with ``status``. Any PE can call it.

    Args:
        status: The exit status of the program.
    """
    _native.global_exit(int(status))
    raise SystemExit(status)


def init_thread(requested: THREAD = THREAD_MULTIPLE) -> THREAD:
    """Start the runtime with the thread level ``requested`` and return the level provided.

    Either `init` or `init_thread` starts the program.

    Args:
        requested: The thread level the program needs.

    Returns:
        The thread level provided (the one requested).
    """
    return THREAD(_runtime.init(int(requested)))


def query_thread() -> THREAD:
    """Return the thread level the runtime provides."""
    return THREAD(_native.query_thread())


def pcontrol(level: int = 1) -> None:
    """Set the profiling level (0: off, 1: on, 2 and above: detailed).

    The runtime has no profiling interface to control: the call checks ``level`` and returns.

    Args:
        level: The profiling level.
    """
    int(level)


# --- symmetric memory


class MALLOC(_enum.IntFlag):
    """Memory allocation hints.

    Attributes:
        ATOMICS_REMOTE: The memory will hold variables of atomic operations.
        SIGNAL_REMOTE: The memory will hold signal variables.
    """

    ATOMICS_REMOTE = 1
    SIGNAL_REMOTE = 2


MALLOC_ATOMICS_REMOTE: MALLOC = MALLOC.ATOMICS_REMOTE
MALLOC_SIGNAL_REMOTE: MALLOC = MALLOC.SIGNAL_REMOTE


def _view(addr: int, nbytes: int) -> memoryview:
    """The ``nbytes`` bytes of the heap block at ``addr`` as a writable memoryview of unsigned
    bytes (over a NumPy array whose ``base`` is the native ``Block`` naming the block)."""
    block = _native.view(addr, nbytes)
    assert block is not None
    return block.data  # a memoryview whose .obj is the array (its .base: the Block)


def _address(a: Any, op: str) -> Tuple[int, int]:
    """The address and size in bytes of the contiguous NumPy array ``a``."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{op}: expected a NumPy array, got {type(a).__name__}")
    if not (a.flags.c_contiguous or a.flags.f_contiguous):
        raise ValueError(f"{op}: the array is not contiguous")
    return a.__array_interface__["data"][0], a.nbytes


def alloc(
    count: int,
    size: int = 1,
    align: Optional[int] = None,
    hints: Optional[int] = None,
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


def _block_of(mem: Any) -> Optional[int]:
    """The address of the heap block under ``mem`` (a memoryview of `alloc` or an array made
    from one), or None."""
    while isinstance(mem, (np.ndarray, memoryview)):
        mem = mem.base if isinstance(mem, np.ndarray) else mem.obj
    if isinstance(mem, _native.Block):
        return int(mem.addr)
    return None


def free(mem: Union[memoryview, NDArray[Any]]) -> None:
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
    shape: Optional[Union[int, Sequence[int]]] = None,
    dtype: Optional[DTypeLike] = None,
    order: Literal["C", "F"] = "C",
) -> NDArray[Any]:
    """Return a NumPy array over memory of `alloc`.

    Args:
        mem: The memory, from `alloc`.
        shape: The shape of the array (default: as many elements as the memory holds).
        dtype: The data type of the array (default: float64).
        order: ``'C'`` (row major) or ``'F'`` (column major).
    """
    if not isinstance(mem, memoryview):
        raise TypeError(f"fromalloc: expected a memoryview of shmem.alloc, got {type(mem).__name__}")
    dtype = np.dtype(dtype)
    if shape is None:
        shape = mem.nbytes // dtype.itemsize
    a: NDArray[Any] = np.ndarray(shape, dtype, buffer=mem, order=order)
    return a


def new_array(
    shape: Union[int, Sequence[int]],
    dtype: DTypeLike = float,
    order: Literal["C", "F"] = "C",
    *,
    align: Optional[int] = None,
    hints: Optional[int] = None,
    clear: bool = True,
) -> NDArray[Any]:
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


def del_array(a: NDArray[Any]) -> None:
    """Delete an array of `new_array` (`free`). Collective.

    Args:
        a: The array to delete.
    """
    if not isinstance(a, np.ndarray):
        raise TypeError(f"del_array: expected a NumPy array, got {type(a).__name__}")
    free(a)


def _sym_like(tmp: NDArray[Any], align: Optional[int], hints: Optional[int]) -> NDArray[Any]:
    """A symmetric array of ``tmp``'s shape, dtype and memory layout (not initialized)."""
    mem = alloc(tmp.size, tmp.dtype.itemsize, align, hints, False)
    a: NDArray[Any] = np.ndarray(tmp.shape, tmp.dtype, buffer=mem, strides=tmp.strides)
    return a


def array(
    obj: Any,
    dtype: Optional[DTypeLike] = None,
    *,
    order: Literal["K", "A", "C", "F"] = "K",
    align: Optional[int] = None,
    hints: Optional[int] = None,
) -> NDArray[Any]:
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
    shape: Union[int, Sequence[int]],
    dtype: DTypeLike = float,
    order: Literal["C", "F"] = "C",
    *,
    align: Optional[int] = None,
    hints: Optional[int] = None,
) -> NDArray[Any]:
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
    shape: Union[int, Sequence[int]],
    dtype: DTypeLike = float,
    order: Literal["C", "F"] = "C",
    *,
    align: Optional[int] = None,
    hints: Optional[int] = None,
) -> NDArray[Any]:
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
    shape: Union[int, Sequence[int]],
    dtype: DTypeLike = float,
    order: Literal["C", "F"] = "C",
    *,
    align: Optional[int] = None,
    hints: Optional[int] = None,
) -> NDArray[Any]:
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
    shape: Union[int, Sequence[int]],
    fill_value: ArrayLike,
    dtype: Optional[DTypeLike] = None,
    order: Literal["C", "F"] = "C",
    *,
    align: Optional[int] = None,
    hints: Optional[int] = None,
) -> NDArray[Any]:
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


def ptr(target: NDArray[Any], pe: int) -> Optional[NDArray[Any]]:
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
    a: NDArray[Any] = np.ndarray(
        target.shape, target.dtype, buffer=peer.data, strides=target.strides
    )
    a.flags.writeable = target.flags.writeable
    return a


# --- atomic memory operations


class AMO(_StrEnum):
    """Atomic memory operations (of `atomic_op`, `atomic_fetch_op`, `atomic_fetch_op_nbi`).

    Attributes:
        SET: Set.
        INC: Increment.
        ADD: Add.
        AND: Bitwise AND.
        OR: Bitwise OR.
        XOR: Bitwise XOR.
    """

    SET = "set"
    INC = "inc"
    ADD = "add"
    AND = "and"
    OR = "or"
    XOR = "xor"


AMO_SET: AMO = AMO.SET
AMO_INC: AMO = AMO.INC
AMO_ADD: AMO = AMO.ADD
AMO_AND: AMO = AMO.AND
AMO_OR: AMO = AMO.OR
AMO_XOR: AMO = AMO.XOR


# --- signals


class SIGNAL(_enum.IntEnum):
    """Signal operations of `put_signal` and `put_signal_nbi`.

    Attributes:
        SET: The signal is set to the value (an atomic set of an unsigned 64-bit word).
        ADD: The value is added to the signal (an atomic add).
    """

    SET = 0
    ADD = 1


SIGNAL_SET: SIGNAL = SIGNAL.SET
SIGNAL_ADD: SIGNAL = SIGNAL.ADD


def new_signal() -> SigAddr:
    """Create a signal data object: a symmetric uint64 array of one element, zero. Collective.

    ``signal[0]`` reads and writes it locally; `signal_fetch` reads it atomically.
    """
    return zeros(1, np.uint64, hints=MALLOC_SIGNAL_REMOTE)


def del_signal(signal: SigAddr) -> None:
    """Delete a signal data object of `new_signal`. Collective.

    Args:
        signal: The signal data object to delete.
    """
    free(signal)


# --- point-to-point synchronization


class CMP(_enum.IntEnum):
    """Comparison operators of the waits and tests (which also take ``'eq'`` ... ``'ge'`` and
    ``'=='``, ``'!='``, ``'>'``, ``'<='``, ``'<'``, ``'>='``).

    Attributes:
        EQ: Equal to.
        NE: Not equal to.
        GT: Greater than.
        LE: Less than or equal to.
        LT: Less than.
        GE: Greater than or equal to.
    """

    EQ = 0
    NE = 1
    GT = 2
    LE = 3
    LT = 4
    GE = 5


CMP_EQ: CMP = CMP.EQ
CMP_NE: CMP = CMP.NE
CMP_GT: CMP = CMP.GT
CMP_LE: CMP = CMP.LE
CMP_LT: CMP = CMP.LT
CMP_GE: CMP = CMP.GE


# --- locks


def new_lock() -> LockHandle:
    """Create a lock: a symmetric int64 array of one element, zero (free). Collective."""
    return zeros(1, np.int64)


def del_lock(lock: LockHandle) -> None:
    """Delete a lock of `new_lock`. Collective.

    Args:
        lock: The lock to delete.
    """
    free(lock)


class Lock:
    """A distributed lock: one PE at a time holds it. `new_lock` made into an object, usable as
    a context manager (``with lock: ...``)."""

    _lock: Optional[LockHandle]

    def __init__(self) -> None:
        """Create the lock. Collective."""
        self._lock = None
        self._lock = new_lock()

    def _handle(self) -> LockHandle:
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

    def __enter__(self) -> Lock:
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

    SHMEM_MAJOR_VERSION = MAJOR_VERSION
    SHMEM_MINOR_VERSION = MINOR_VERSION
    SHMEM_MAX_NAME_LEN = int(_native.MAX_NAME_LEN)
    SHMEM_VENDOR_STRING = VENDOR_STRING
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


def _getbuffer(obj: NDArray[Any], readonly: bool = False) -> Tuple[Any, int, str]:
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


def __getattr__(name: str) -> Any:
    """``ffi``: a ``cffi.FFI()``, made when first asked for (cffi is needed only then)."""
    if name == "ffi":
        return _ffi()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --- the runtime's start at import


def _initialize() -> None:
    """Start the runtime as ``shmem_rs.rc`` (and the environment) says."""
    from . import rc  # pylint: disable=import-outside-toplevel

    for name in ("initialize", "threads", "thread_level", "finalize"):
        value = _os.getenv(f"SHMEM_RS_RC_{name.upper()}") or _os.getenv(
            f"SHMEM4PY_RC_{name.upper()}"
        )
        if value:
            low = value.lower()
            if low in ("true", "yes", "on", "y", "1"):
                setattr(rc, name, True)
            elif low in ("false", "no", "off", "n", "0"):
                setattr(rc, name, False)
            else:
                setattr(rc, name, low)
    if rc.initialize:
        if rc.finalize is None:
            rc.finalize = True
        if rc.threads:
            level = getattr(THREAD, str(rc.thread_level).upper(), None)
            if level is None:
                raise ValueError(
                    f"rc.thread_level {rc.thread_level!r} is not one of "
                    "'single', 'funneled', 'serialized', 'multiple'"
                )
            init_thread(level)
        else:
            init()


try:
    from ._coll import *  # noqa: F401,F403
except ImportError:
    pass

_initialize()
