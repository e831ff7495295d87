"""shmem4py's API on shmem-rs: ``from shmem_rs import shmem`` in place of
``from shmem4py import shmem``.

Importing this module starts the runtime (as ``shmem_rs.rc`` says), as shmem4py does.
"""

from __future__ import annotations

import ctypes as _ctypes
import enum as _enum

import numpy as np

from . import _native, _runtime
from ._native import Ctx, fence, get, get_nbi, iget, iput, put, put_nbi, quiet  # noqa: F401

# --- the heap


def _view(addr: int, nbytes: int) -> memoryview:
    buf = (_ctypes.c_ubyte * nbytes).from_address(addr)
    return memoryview(buf).cast("B")


def alloc(count, size=1, align=None, hints=None, clear=True) -> memoryview:
    """Return ``count * size`` bytes of the symmetric heap as a memoryview. Collective."""
    nbytes = int(count) * int(size)
    addr = _native.alloc(nbytes, align, int(hints or 0), bool(clear))
    return _view(addr, nbytes)


def free(mem) -> None:
    """Free symmetric memory from `alloc` (a memoryview, or an array made from one)."""
    if isinstance(mem, np.ndarray):
        mem = mem.base
        while isinstance(mem, np.ndarray):
            mem = mem.base
    if not isinstance(mem, memoryview):
        raise TypeError(f"free: expected symmetric memory, got {type(mem).__name__}")
    obj = mem.obj
    while isinstance(obj, memoryview):
        obj = obj.obj
    _native.free(_ctypes.addressof(obj))


def fromalloc(mem, shape=None, dtype=None, order="C"):
    """Return a NumPy array over symmetric memory from `alloc`."""
    dtype = np.dtype(dtype)
    if shape is None:
        shape = mem.nbytes // dtype.itemsize
    a = np.frombuffer(mem, dtype)
    return a.reshape(shape, order=order)


def new_array(shape, dtype=float, order="C", *, align=None, hints=None, clear=True):
    """A new symmetric array. Collective."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype="p"))
    return fromalloc(alloc(count, dtype.itemsize, align, hints, clear), shape, dtype, order)


def zeros(shape, dtype=float, order="C", *, align=None, hints=None):
    """A new symmetric array of zeros. Collective."""
    return new_array(shape, dtype, order, align=align, hints=hints)


def my_pe() -> int:
    """This PE's number."""
    return _native.my_pe()


def n_pes() -> int:
    """The number of PEs."""
    return _native.n_pes()


barrier_all = _native.barrier_all
sync_all = _native.sync_all

_runtime.init_from_rc()
