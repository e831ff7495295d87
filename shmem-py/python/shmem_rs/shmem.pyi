"""Type stub of ``shmem_rs.shmem``: shmem4py's API on shmem-rs (the module is made by the
extension; see ``shmem.py``)."""

from typing import Any, List, NoReturn, Tuple

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

MAJOR_VERSION: int
MINOR_VERSION: int
VENDOR_STRING: str

def info_get_version() -> Tuple[int, int]:
    """Return the major and minor version of the library implementation."""

def info_get_name() -> str:
    """Return the name string of the library implementation."""

def init() -> None:
    """Start the runtime (nothing when it runs). Collective."""

def finalize() -> None:
    """End the runtime: complete this PE's operations, meet every PE, release the resources."""

def global_exit(status: int = 0) -> NoReturn:
    """End the whole program, every PE, with ``status``. Any PE can call it."""

def init_thread(requested: int = 3) -> THREAD:
    """Start the runtime with the thread level ``requested`` and return the level provided."""

def query_thread() -> THREAD:
    """Return the thread level the runtime provides."""

def pcontrol(level: int = 1) -> None:
    """Set the profiling level (0: off, 1: on, 2 and above: detailed)."""

#: A ``cffi.FFI()``, made when first asked for (cffi is needed only then).
ffi: Any

def __dir__() -> List[str]:
    """The module's names, those taken at first use included."""
