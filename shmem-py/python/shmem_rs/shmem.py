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

import os as _os
from typing import TYPE_CHECKING, Any, List, NoReturn, Tuple

from . import _native
from . import finalize as _rt_finalize
from . import init as _rt_init
# The native calls (``shmem_rs._native``), taken from it at their first use (see
# ``__getattr__``); after that a call finds them here directly, with no Python layer.
if TYPE_CHECKING:  # pragma: no cover
    from ._native import (
        CTX_DEFAULT as CTX_DEFAULT,
        CTX_INVALID as CTX_INVALID,
        Ctx as Ctx,
        FreedError as FreedError,
        NotSymmetricError as NotSymmetricError,
        ShmemError as ShmemError,
        TEAM_INVALID as TEAM_INVALID,
        TEAM_SHARED as TEAM_SHARED,
        TEAM_WORLD as TEAM_WORLD,
        Team as Team,
        addr_accessible as addr_accessible,
        alltoall as alltoall,
        alltoalls as alltoalls,
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
        broadcast as broadcast,
        clear_lock as clear_lock,
        collect as collect,
        fcollect as fcollect,
        fence as fence,
        get as get,
        get_nbi as get_nbi,
        iget as iget,
        iput as iput,
        my_pe as my_pe,
        n_pes as n_pes,
        pe_accessible as pe_accessible,
        put as put,
        put_nbi as put_nbi,
        put_signal as put_signal,
        put_signal_nbi as put_signal_nbi,
        quiet as quiet,
        set_lock as set_lock,
        signal_fetch as signal_fetch,
        signal_wait_until as signal_wait_until,
        sync as sync,
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

if TYPE_CHECKING:  # pragma: no cover
    from ._enums import (
        THREAD as THREAD,
        MALLOC as MALLOC,
        AMO as AMO,
        SIGNAL as SIGNAL,
        CMP as CMP,
        CTX as CTX,
        OP as OP,
        THREAD_SINGLE as THREAD_SINGLE,
        THREAD_FUNNELED as THREAD_FUNNELED,
        THREAD_SERIALIZED as THREAD_SERIALIZED,
        THREAD_MULTIPLE as THREAD_MULTIPLE,
        MALLOC_ATOMICS_REMOTE as MALLOC_ATOMICS_REMOTE,
        MALLOC_SIGNAL_REMOTE as MALLOC_SIGNAL_REMOTE,
        AMO_SET as AMO_SET,
        AMO_INC as AMO_INC,
        AMO_ADD as AMO_ADD,
        AMO_AND as AMO_AND,
        AMO_OR as AMO_OR,
        AMO_XOR as AMO_XOR,
        SIGNAL_SET as SIGNAL_SET,
        SIGNAL_ADD as SIGNAL_ADD,
        CMP_EQ as CMP_EQ,
        CMP_NE as CMP_NE,
        CMP_GT as CMP_GT,
        CMP_LE as CMP_LE,
        CMP_LT as CMP_LT,
        CMP_GE as CMP_GE,
        CTX_PRIVATE as CTX_PRIVATE,
        CTX_SERIALIZED as CTX_SERIALIZED,
        CTX_NOSTORE as CTX_NOSTORE,
        OP_AND as OP_AND,
        OP_OR as OP_OR,
        OP_XOR as OP_XOR,
        OP_MAX as OP_MAX,
        OP_MIN as OP_MIN,
        OP_SUM as OP_SUM,
        OP_PROD as OP_PROD,
    )

if TYPE_CHECKING:  # pragma: no cover
    from ._api import (
        alloc as alloc,
        free as free,
        fromalloc as fromalloc,
        new_array as new_array,
        del_array as del_array,
        array as array,
        empty as empty,
        zeros as zeros,
        ones as ones,
        full as full,
        ptr as ptr,
        new_signal as new_signal,
        del_signal as del_signal,
        new_lock as new_lock,
        del_lock as del_lock,
        Lock as Lock,
        lib as lib,
        reduce as reduce,
        and_reduce as and_reduce,
        or_reduce as or_reduce,
        xor_reduce as xor_reduce,
        max_reduce as max_reduce,
        min_reduce as min_reduce,
        sum_reduce as sum_reduce,
        prod_reduce as prod_reduce,
        _getbuffer as _getbuffer,
    )


# --- library information


#: The major version of the OpenSHMEM specification the library implements.
MAJOR_VERSION: int = int(_native.VERSION[0])
#: The minor version of the OpenSHMEM specification the library implements.
MINOR_VERSION: int = int(_native.VERSION[1])
#: The vendor's name and version of the library.
VENDOR_STRING: str = str(_native.VENDOR_STRING)


def info_get_version() -> "Tuple[int, int]":
    """Return the major and minor version of the library implementation."""
    return (MAJOR_VERSION, MINOR_VERSION)


def info_get_name() -> str:
    """Return the name string of the library implementation."""
    return VENDOR_STRING


# --- starting and ending


def init() -> None:
    """Start the runtime (nothing when it runs). Collective.

    Every PE calls this routine, or `init_thread`, before any other OpenSHMEM routine (importing
    this module does it, unless ``rc.initialize`` is false), and `finalize` at the end (done at
    exit unless ``rc.finalize`` is false). The rendezvous releases the GIL while it waits.
    """
    _rt_init(3)


def finalize() -> None:
    """End the runtime: complete this PE's operations, meet every PE, release the resources.

    Collective. Only the OpenSHMEM part of the program ends: the process goes on, but may make
    no OpenSHMEM call after it (the runtime cannot restart). Nothing when it does not run.
    """
    _rt_finalize()


def global_exit(status: int = 0) -> NoReturn:  # pragma: no cover
    """End the whole program, every PE, with ``status``. Any PE can call it.

    Args:
        status: The exit status of the program.
    """
    _native.global_exit(int(status))
    raise SystemExit(status)


def init_thread(requested: int = 3) -> "THREAD":
    """Start the runtime with the thread level ``requested`` and return the level provided.

    Either `init` or `init_thread` starts the program.

    Args:
        requested: The thread level the program needs (a `THREAD`; default
            ``THREAD_MULTIPLE``).

    Returns:
        The thread level provided (the one requested).
    """
    from ._enums import THREAD

    return THREAD(_rt_init(int(requested)))


def query_thread() -> "THREAD":
    """Return the thread level the runtime provides."""
    from ._enums import THREAD

    return THREAD(_native.query_thread())


def pcontrol(level: int = 1) -> None:
    """Set the profiling level (0: off, 1: on, 2 and above: detailed).

    The runtime has no profiling interface to control: the call checks ``level`` and returns.

    Args:
        level: The profiling level.
    """
    int(level)


#: The names of ``shmem_rs._native`` offered here, taken from it at their first use.
_NATIVE = frozenset(
    (
        "CTX_DEFAULT",
        "CTX_INVALID",
        "Ctx",
        "FreedError",
        "NotSymmetricError",
        "ShmemError",
        "TEAM_INVALID",
        "TEAM_SHARED",
        "TEAM_WORLD",
        "Team",
        "addr_accessible",
        "alltoall",
        "alltoalls",
        "atomic_add",
        "atomic_and",
        "atomic_compare_swap",
        "atomic_compare_swap_nbi",
        "atomic_fetch",
        "atomic_fetch_add",
        "atomic_fetch_add_nbi",
        "atomic_fetch_and",
        "atomic_fetch_and_nbi",
        "atomic_fetch_inc",
        "atomic_fetch_inc_nbi",
        "atomic_fetch_nbi",
        "atomic_fetch_op",
        "atomic_fetch_op_nbi",
        "atomic_fetch_or",
        "atomic_fetch_or_nbi",
        "atomic_fetch_xor",
        "atomic_fetch_xor_nbi",
        "atomic_inc",
        "atomic_op",
        "atomic_or",
        "atomic_set",
        "atomic_swap",
        "atomic_swap_nbi",
        "atomic_xor",
        "barrier_all",
        "broadcast",
        "clear_lock",
        "collect",
        "fcollect",
        "fence",
        "get",
        "get_nbi",
        "iget",
        "iput",
        "my_pe",
        "n_pes",
        "pe_accessible",
        "put",
        "put_nbi",
        "put_signal",
        "put_signal_nbi",
        "quiet",
        "set_lock",
        "signal_fetch",
        "signal_wait_until",
        "sync",
        "sync_all",
        "test",
        "test_all",
        "test_all_vector",
        "test_any",
        "test_any_vector",
        "test_lock",
        "test_some",
        "test_some_vector",
        "wait_until",
        "wait_until_all",
        "wait_until_all_vector",
        "wait_until_any",
        "wait_until_any_vector",
        "wait_until_some",
        "wait_until_some_vector",
    )
)

#: The names of ``shmem_rs._enums``, made at their first use (see that module).
_ENUMS = frozenset(
    (
        "THREAD",
        "MALLOC",
        "AMO",
        "SIGNAL",
        "CMP",
        "CTX",
        "OP",
        "THREAD_SINGLE",
        "THREAD_FUNNELED",
        "THREAD_SERIALIZED",
        "THREAD_MULTIPLE",
        "MALLOC_ATOMICS_REMOTE",
        "MALLOC_SIGNAL_REMOTE",
        "AMO_SET",
        "AMO_INC",
        "AMO_ADD",
        "AMO_AND",
        "AMO_OR",
        "AMO_XOR",
        "SIGNAL_SET",
        "SIGNAL_ADD",
        "CMP_EQ",
        "CMP_NE",
        "CMP_GT",
        "CMP_LE",
        "CMP_LT",
        "CMP_GE",
        "CTX_PRIVATE",
        "CTX_SERIALIZED",
        "CTX_NOSTORE",
        "OP_AND",
        "OP_OR",
        "OP_XOR",
        "OP_MAX",
        "OP_MIN",
        "OP_SUM",
        "OP_PROD",
    )
)

#: The names of ``shmem_rs._api``, imported at the first use of one of them.
_API = frozenset(
    (
        "alloc",
        "free",
        "fromalloc",
        "new_array",
        "del_array",
        "array",
        "empty",
        "zeros",
        "ones",
        "full",
        "ptr",
        "new_signal",
        "del_signal",
        "new_lock",
        "del_lock",
        "Lock",
        "lib",
        "reduce",
        "and_reduce",
        "or_reduce",
        "xor_reduce",
        "max_reduce",
        "min_reduce",
        "sum_reduce",
        "prod_reduce",
        "_getbuffer",
    )
)


def __getattr__(name: str) -> Any:
    """The names not made at import, at their first use: the native calls, classes and
    constants (``shmem_rs._native``), the enumerations and their constants
    (``CMP``, ``CMP_EQ``, ..., from ``shmem_rs._enums``), the heap's helpers, ``ptr``, signals,
    locks, the reductions and the compatibility objects (``shmem_rs._api``), and ``ffi``, a
    ``cffi.FFI()`` made when first asked for (cffi is needed only then)."""
    # pylint: disable=import-outside-toplevel
    if name in _NATIVE:
        value = getattr(_native, name)
    elif name in _ENUMS:
        from . import _enums

        value = getattr(_enums, name)
    elif name in _API:
        from . import _api

        value = getattr(_api, name)
    elif name == "ffi":
        from ._api import _ffi

        return _ffi()
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> "List[str]":
    """The module's names, those taken at first use included."""
    return sorted(set(globals()) | _NATIVE | _ENUMS | _API | {"ffi"})


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
            from ._enums import THREAD

            level = getattr(THREAD, str(rc.thread_level).upper(), None)
            if level is None:
                raise ValueError(
                    f"rc.thread_level {rc.thread_level!r} is not one of "
                    "'single', 'funneled', 'serialized', 'multiple'"
                )
            init_thread(level)
        else:
            init()


_initialize()
