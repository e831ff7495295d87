"""Type stubs of ``shmem_rs._native``, the extension module (Rust, PyO3, abi3) under
``shmem_rs.shmem`` and ``shmem_rs.sdo``.

The module is built for the stable ABI, so the runtime shows no signatures: these stubs are
where editors and type checkers find them (checked against the module by
``python -m mypy.stubtest shmem_rs._native``). Arrays are NumPy arrays (contiguous, of one
element type per call); ``pe`` is a PE number (of the context's team when ``ctx`` is given).
Every call raises on the PE that erred, before anything moves: ``ShmemError`` before ``init``
or after ``finalize``, ``IndexError`` for a PE out of range, ``NotSymmetricError`` for an
array that must be on the symmetric heap and is not, ``TypeError`` for an element type the
operation does not take, ``ValueError`` for sizes.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, final, NoReturn, Optional, SupportsFloat, SupportsIndex, Union, overload

import numpy as np
from numpy.typing import NDArray
from typing_extensions import Self, TypeAlias, disjoint_base

__all__ = [
    "_SdoBase",
    "Block",
    "view",
    "ShmemError",
    "NotSymmetricError",
    "FreedError",
    "Ctx",
    "CTX_DEFAULT",
    "CTX_INVALID",
    "init",
    "finalize",
    "initialized",
    "finalized",
    "query_thread",
    "global_exit",
    "my_pe",
    "n_pes",
    "barrier_all",
    "sync_all",
    "alloc",
    "free",
    "block_len",
    "put",
    "get",
    "put_nbi",
    "get_nbi",
    "iput",
    "iget",
    "quiet",
    "fence",
    "launcher_main",
    "Team",
    "TEAM_WORLD",
    "TEAM_SHARED",
    "TEAM_INVALID",
    "sync",
    "broadcast",
    "collect",
    "fcollect",
    "alltoall",
    "alltoalls",
    "reduce",
    "VERSION",
    "VENDOR_STRING",
    "MAX_NAME_LEN",
    "pe_accessible",
    "addr_accessible",
    "ptr",
    "atomic_set",
    "atomic_inc",
    "atomic_add",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_fetch",
    "atomic_swap",
    "atomic_compare_swap",
    "atomic_fetch_inc",
    "atomic_fetch_add",
    "atomic_fetch_and",
    "atomic_fetch_or",
    "atomic_fetch_xor",
    "atomic_fetch_nbi",
    "atomic_swap_nbi",
    "atomic_compare_swap_nbi",
    "atomic_fetch_inc_nbi",
    "atomic_fetch_add_nbi",
    "atomic_fetch_and_nbi",
    "atomic_fetch_or_nbi",
    "atomic_fetch_xor_nbi",
    "atomic_op",
    "atomic_fetch_op",
    "atomic_fetch_op_nbi",
    "wait_until",
    "wait_until_all",
    "wait_until_any",
    "wait_until_some",
    "wait_until_all_vector",
    "wait_until_any_vector",
    "wait_until_some_vector",
    "test",
    "test_all",
    "test_any",
    "test_some",
    "test_all_vector",
    "test_any_vector",
    "test_some_vector",
    "signal_fetch",
    "signal_wait_until",
    "put_signal",
    "put_signal_nbi",
    "set_lock",
    "test_lock",
    "clear_lock",
]

# An integer operand: a Python int or anything with ``__index__`` (NumPy integers); wrapped to
# the element's width as C converts.
_Int: TypeAlias = SupportsIndex
# An operand of an operation that also takes float32/float64 targets (fetch, set, swap).
_Number: TypeAlias = Union[SupportsIndex, SupportsFloat]
# A comparison: a ``CMP`` value (0 to 5, an int), or ``"eq"``, ``"ne"``, ``"gt"``, ``"le"``,
# ``"lt"``, ``"ge"`` (any case) or ``"=="``, ``"!="``, ``">"``, ``"<="``, ``"<"``, ``">="``.
_Cmp: TypeAlias = Union[int, str]
_IntArray: TypeAlias = NDArray[np.integer[Any]]
_FloatArray: TypeAlias = NDArray[np.floating[Any]]

# --- exceptions

class ShmemError(RuntimeError):
    """The runtime's state does not allow the call: before `init`, after `finalize`."""

class NotSymmetricError(ValueError):
    """An array that must be symmetric (on the symmetric heap) is not, or lies only partly in it."""

class FreedError(ValueError):
    """A symmetric object used after it was freed."""

# --- constants

#: The OpenSHMEM specification version the library implements: (major, minor).
VERSION: tuple[int, int]
#: The vendor's name and version of the library.
VENDOR_STRING: str
#: The longest name (``SHMEM_MAX_NAME_LEN``) of the library's strings.
MAX_NAME_LEN: int

# --- contexts

@disjoint_base
class Ctx:
    """A communication context: `CTX_DEFAULT`, `CTX_INVALID`, or one of `create` / `Team.create_ctx`."""

    # Comparisons are by the context named; the objects are not hashable.
    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(cls, ctx: Optional[Ctx] = None) -> Self:
        """``Ctx()`` and ``Ctx(None)`` are `CTX_INVALID`; ``Ctx(ctx)`` is the same context as ``ctx``."""
    @staticmethod
    def create(options: int = 0, team: Optional[Team] = None) -> Ctx:
        """Return a new context on ``team`` (default: the world) with ``options`` (`CTX` bits, or 0)."""
    def destroy(self) -> None:
        """Destroy the context (after completing its operations); the object becomes `CTX_INVALID`."""
    def get_team(self) -> Team:
        """Return the team the context was made from (`TEAM_WORLD` for `CTX_DEFAULT`)."""
    def fence(self) -> None:
        """Order this PE's puts on this context: those to a PE before it arrive before those after it."""
    def quiet(self) -> None:
        """Wait for completion of this PE's operations on this context (the GIL released)."""
    def __eq__(self, other: object, /) -> bool:
        """Whether ``other`` is a `Ctx` naming the same context."""
    def __ne__(self, other: object, /) -> bool:
        """Whether ``other`` is a `Ctx` naming another context."""
    def __bool__(self) -> bool:
        """False for `CTX_INVALID` (and a destroyed object), True otherwise."""
    def __enter__(self) -> Self:
        """The context itself (``with Ctx.create() as ctx:``)."""
    def __exit__(self, *args: object) -> None:
        """Destroy the context at the end of the ``with`` block."""

#: The default context (operations without ``ctx`` use it).
CTX_DEFAULT: Ctx
#: The invalid context (what a destroyed `Ctx` object becomes).
CTX_INVALID: Ctx

# --- teams

@disjoint_base
class Team:
    """A team of PEs: `TEAM_WORLD`, `TEAM_SHARED`, `TEAM_INVALID`, or one of `split_strided`."""

    # Comparisons are by the team named; the objects are not hashable.
    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(cls, team: Optional[Team] = None) -> Self:
        """``Team()`` and ``Team(None)`` are `TEAM_INVALID`; ``Team(team)`` is the same team as ``team``."""
    def destroy(self) -> None:
        """Destroy the team and its shareable contexts (collective); the object becomes `TEAM_INVALID`."""
    def split_strided(
        self,
        start: int = 0,
        stride: int = 1,
        size: Optional[int] = None,
        config: Optional[Mapping[str, int]] = None,
        **kwargs: int,
    ) -> Team:
        """Return a team of this team's PEs ``start, start + stride, ...`` (collective; others get `TEAM_INVALID`)."""
    def get_config(self) -> dict[str, int]:
        """Return the team's configuration: ``{'num_contexts': n}``."""
    def my_pe(self) -> int:
        """Return this PE's number in the team."""
    def n_pes(self) -> int:
        """Return the number of PEs in the team."""
    def translate_pe(self, pe: Optional[int] = None, team: Optional[Team] = None) -> int:
        """Return the number in ``team`` (default: the world) of this team's PE ``pe`` (default: this PE)."""
    def create_ctx(self, options: int = 0) -> Ctx:
        """Return a new context whose PE numbers are this team's, made with ``options`` (`CTX` bits)."""
    def sync(self) -> None:
        """Wait until every member of the team arrives (no completion of puts; the GIL released)."""
    def __eq__(self, other: object, /) -> bool:
        """Whether ``other`` is a `Team` naming the same team."""
    def __ne__(self, other: object, /) -> bool:
        """Whether ``other`` is a `Team` naming another team."""
    def __bool__(self) -> bool:
        """False for `TEAM_INVALID` (and a destroyed object), True otherwise."""
    def __enter__(self) -> Self:
        """The team itself (``with team.split_strided(...) as t:``)."""
    def __exit__(self, *args: object) -> None:
        """Destroy the team at the end of the ``with`` block."""

#: Every PE of the job.
TEAM_WORLD: Team
#: The PEs that share memory with this one (this node's).
TEAM_SHARED: Team
#: The invalid team (what PEs outside a split get, and a destroyed `Team` object becomes).
TEAM_INVALID: Team

# --- starting and ending

def init(requested: int = 3) -> int:
    """Start the runtime (nothing when it runs) with thread level ``requested`` (0 to 3); return the level provided."""

def finalize() -> None:
    """End the runtime: quiet, then the runtime's finalize (a barrier); nothing when it does not run."""

def initialized() -> bool:
    """Whether the runtime is running."""

def finalized() -> bool:
    """Whether `finalize` has run."""

def query_thread() -> int:
    """The thread level given to `init`."""

def global_exit(status: int = 0) -> NoReturn:
    """End the whole job with ``status`` (every PE), without finalizing."""

def my_pe() -> int:
    """This PE's number."""

def n_pes() -> int:
    """The number of PEs of the job."""

def barrier_all() -> None:
    """Wait until every PE arrives, after completing this PE's puts (the GIL released)."""

def sync_all() -> None:
    """Wait until every PE arrives (no completion of puts; the GIL released)."""

def sync(team: Optional[Team] = None) -> None:
    """Wait until every member of ``team`` (default: every PE) arrives."""

# --- the symmetric heap

def alloc(nbytes: int, align: Optional[int] = None, hints: int = 0, clear: bool = True) -> int:
    """Allocate ``nbytes`` bytes of the symmetric heap (collective) aligned to ``align``; return the address."""

def free(addr: int) -> None:
    """Free the heap block at ``addr`` (collective); `KeyError` when it is not a live block of `alloc`."""

def block_len(addr: int) -> Optional[int]:
    """The length in bytes of the live heap block at ``addr``, or None when there is none."""

# --- RMA

def put(
    target: NDArray[Any],
    source: NDArray[Any],
    pe: int,
    size: Optional[int] = None,
    ctx: Optional[Ctx] = None,
) -> None:
    """Copy ``size`` elements (default: as many as both hold) of local ``source`` to symmetric ``target`` on ``pe``."""

def get(
    target: NDArray[Any],
    source: NDArray[Any],
    pe: int,
    size: Optional[int] = None,
    ctx: Optional[Ctx] = None,
) -> None:
    """Copy ``size`` elements (default: as many as both hold) of symmetric ``source`` on ``pe`` into local ``target``."""

def put_nbi(
    target: NDArray[Any],
    source: NDArray[Any],
    pe: int,
    size: Optional[int] = None,
    ctx: Optional[Ctx] = None,
) -> None:
    """`put`, non-blocking: ``source`` may not be changed until the next `quiet` (of ``ctx``)."""

def get_nbi(
    target: NDArray[Any],
    source: NDArray[Any],
    pe: int,
    size: Optional[int] = None,
    ctx: Optional[Ctx] = None,
) -> None:
    """`get`, non-blocking: ``target`` holds the data after the next `quiet` (of ``ctx``)."""

def iput(
    target: NDArray[Any],
    source: NDArray[Any],
    pe: int,
    tst: int = 1,
    sst: int = 1,
    size: Optional[int] = None,
    ctx: Optional[Ctx] = None,
) -> None:
    """Strided put: element ``i*tst`` of ``target`` on ``pe`` gets element ``i*sst`` of ``source``."""

def iget(
    target: NDArray[Any],
    source: NDArray[Any],
    pe: int,
    tst: int = 1,
    sst: int = 1,
    size: Optional[int] = None,
    ctx: Optional[Ctx] = None,
) -> None:
    """Strided get: element ``i*tst`` of local ``target`` gets element ``i*sst`` of ``source`` on ``pe``."""

def quiet(ctx: Optional[Ctx] = None) -> None:
    """Wait for completion of this PE's operations on ``ctx`` (default: the default context)."""

def fence(ctx: Optional[Ctx] = None) -> None:
    """Order this PE's puts to each PE on ``ctx``: those before it arrive before those after it."""

# --- collectives

def broadcast(
    target: NDArray[Any],
    source: NDArray[Any],
    root: int,
    size: Optional[int] = None,
    team: Optional[Team] = None,
) -> None:
    """Copy ``source`` on team PE ``root`` into ``target`` on every member of ``team``. Collective."""

def collect(
    target: NDArray[Any],
    source: NDArray[Any],
    size: Optional[int] = None,
    team: Optional[Team] = None,
) -> None:
    """Concatenate every member's ``source`` (sizes may differ) in team order into ``target``. Collective."""

def fcollect(
    target: NDArray[Any],
    source: NDArray[Any],
    size: Optional[int] = None,
    team: Optional[Team] = None,
) -> None:
    """Concatenate every member's ``source`` (``size`` elements each) in team order into ``target``. Collective."""

def alltoall(
    target: NDArray[Any],
    source: NDArray[Any],
    size: Optional[int] = None,
    team: Optional[Team] = None,
) -> None:
    """Send block ``j`` of ``source`` to team PE ``j``, into block ``my_pe`` of its ``target``. Collective."""

def alltoalls(
    target: NDArray[Any],
    source: NDArray[Any],
    tst: int = 1,
    sst: int = 1,
    size: Optional[int] = None,
    team: Optional[Team] = None,
) -> None:
    """`alltoall` with strides ``tst`` (target) and ``sst`` (source). Collective."""

def reduce(
    target: NDArray[Any],
    source: NDArray[Any],
    op: str = "sum",
    size: Optional[int] = None,
    team: Optional[Team] = None,
) -> None:
    """Reduce ``source`` element-wise over ``team`` with ``op`` ('and', 'or', 'xor', 'max', 'min', 'sum', 'prod')."""

# --- queries

def pe_accessible(pe: int) -> bool:
    """Whether PE ``pe`` is a PE of the job that this PE can reach."""

def addr_accessible(addr: NDArray[Any], pe: int) -> bool:
    """Whether the array ``addr`` is symmetric (so PE ``pe`` can access it) and ``pe`` reachable."""

def ptr(address: int, nbytes: int, pe: int) -> Optional[int]:
    """The address of PE ``pe``'s copy of the symmetric bytes at ``address`` when mapped here, else None."""

# --- atomic memory operations (the target: a symmetric array of exactly one element)

def atomic_set(
    target: NDArray[Any], value: _Number, pe: int, ctx: Optional[Ctx] = None
) -> None:
    """Write ``value`` into ``target`` on PE ``pe``."""

def atomic_inc(target: NDArray[Any], pe: int, ctx: Optional[Ctx] = None) -> None:
    """Increment ``target`` (an integer) on PE ``pe``."""

def atomic_add(target: NDArray[Any], value: _Int, pe: int, ctx: Optional[Ctx] = None) -> None:
    """Add ``value`` to ``target`` (an integer) on PE ``pe``."""

def atomic_and(target: NDArray[Any], value: _Int, pe: int, ctx: Optional[Ctx] = None) -> None:
    """Bitwise-AND ``value`` into ``target`` on PE ``pe``."""

def atomic_or(target: NDArray[Any], value: _Int, pe: int, ctx: Optional[Ctx] = None) -> None:
    """Bitwise-OR ``value`` into ``target`` on PE ``pe``."""

def atomic_xor(target: NDArray[Any], value: _Int, pe: int, ctx: Optional[Ctx] = None) -> None:
    """Bitwise-XOR ``value`` into ``target`` on PE ``pe``."""

@overload
def atomic_fetch(source: _IntArray, pe: int, ctx: Optional[Ctx] = None) -> int: ...
@overload
def atomic_fetch(source: _FloatArray, pe: int, ctx: Optional[Ctx] = None) -> float: ...
@overload
def atomic_fetch(source: NDArray[Any], pe: int, ctx: Optional[Ctx] = None) -> Union[int, float]:
    """Return the value of ``source`` on PE ``pe`` (an int, or a float for a float array)."""

@overload
def atomic_swap(target: _IntArray, value: _Number, pe: int, ctx: Optional[Ctx] = None) -> int: ...
@overload
def atomic_swap(
    target: _FloatArray, value: _Number, pe: int, ctx: Optional[Ctx] = None
) -> float: ...
@overload
def atomic_swap(
    target: NDArray[Any], value: _Number, pe: int, ctx: Optional[Ctx] = None
) -> Union[int, float]:
    """Write ``value`` into ``target`` on PE ``pe`` and return the prior value."""

def atomic_compare_swap(
    target: NDArray[Any], cond: _Int, value: _Int, pe: int, ctx: Optional[Ctx] = None
) -> int:
    """Write ``value`` into ``target`` on PE ``pe`` if it equals ``cond``; return the prior value."""

def atomic_fetch_inc(target: NDArray[Any], pe: int, ctx: Optional[Ctx] = None) -> int:
    """Increment ``target`` on PE ``pe`` and return the prior value."""

def atomic_fetch_add(
    target: NDArray[Any], value: _Int, pe: int, ctx: Optional[Ctx] = None
) -> int:
    """Add ``value`` to ``target`` on PE ``pe`` and return the prior value."""

def atomic_fetch_and(
    target: NDArray[Any], value: _Int, pe: int, ctx: Optional[Ctx] = None
) -> int:
    """Bitwise-AND ``value`` into ``target`` on PE ``pe`` and return the prior value."""

def atomic_fetch_or(
    target: NDArray[Any], value: _Int, pe: int, ctx: Optional[Ctx] = None
) -> int:
    """Bitwise-OR ``value`` into ``target`` on PE ``pe`` and return the prior value."""

def atomic_fetch_xor(
    target: NDArray[Any], value: _Int, pe: int, ctx: Optional[Ctx] = None
) -> int:
    """Bitwise-XOR ``value`` into ``target`` on PE ``pe`` and return the prior value."""

def atomic_fetch_nbi(
    fetch: NDArray[Any], source: NDArray[Any], pe: int, ctx: Optional[Ctx] = None
) -> None:
    """Fetch ``source`` on PE ``pe`` into the local one-element array ``fetch``."""

def atomic_swap_nbi(
    fetch: NDArray[Any],
    target: NDArray[Any],
    value: _Number,
    pe: int,
    ctx: Optional[Ctx] = None,
) -> None:
    """`atomic_swap`, its prior value stored into ``fetch``."""

def atomic_compare_swap_nbi(
    fetch: NDArray[Any],
    target: NDArray[Any],
    cond: _Int,
    value: _Int,
    pe: int,
    ctx: Optional[Ctx] = None,
) -> None:
    """`atomic_compare_swap`, its prior value stored into ``fetch``."""

def atomic_fetch_inc_nbi(
    fetch: NDArray[Any], target: NDArray[Any], pe: int, ctx: Optional[Ctx] = None
) -> None:
    """`atomic_fetch_inc`, its prior value stored into ``fetch``."""

def atomic_fetch_add_nbi(
    fetch: NDArray[Any], target: NDArray[Any], value: _Int, pe: int, ctx: Optional[Ctx] = None
) -> None:
    """`atomic_fetch_add`, its prior value stored into ``fetch``."""

def atomic_fetch_and_nbi(
    fetch: NDArray[Any], target: NDArray[Any], value: _Int, pe: int, ctx: Optional[Ctx] = None
) -> None:
    """`atomic_fetch_and`, its prior value stored into ``fetch``."""

def atomic_fetch_or_nbi(
    fetch: NDArray[Any], target: NDArray[Any], value: _Int, pe: int, ctx: Optional[Ctx] = None
) -> None:
    """`atomic_fetch_or`, its prior value stored into ``fetch``."""

def atomic_fetch_xor_nbi(
    fetch: NDArray[Any], target: NDArray[Any], value: _Int, pe: int, ctx: Optional[Ctx] = None
) -> None:
    """`atomic_fetch_xor`, its prior value stored into ``fetch``."""

def atomic_op(
    target: NDArray[Any], value: Optional[_Number], op: str, pe: int, ctx: Optional[Ctx] = None
) -> None:
    """Run ``op`` (an `AMO` or its name: set, inc, add, and, or, xor) with ``value`` on ``target`` on ``pe``."""

@overload
def atomic_fetch_op(
    target: _IntArray, value: Optional[_Number], op: str, pe: int, ctx: Optional[Ctx] = None
) -> int: ...
@overload
def atomic_fetch_op(
    target: _FloatArray, value: Optional[_Number], op: str, pe: int, ctx: Optional[Ctx] = None
) -> float: ...
@overload
def atomic_fetch_op(
    target: NDArray[Any], value: Optional[_Number], op: str, pe: int, ctx: Optional[Ctx] = None
) -> Union[int, float]:
    """`atomic_op` that returns the prior value of ``target``."""

def atomic_fetch_op_nbi(
    fetch: NDArray[Any],
    target: NDArray[Any],
    value: Optional[_Number],
    op: str,
    pe: int,
    ctx: Optional[Ctx] = None,
) -> None:
    """`atomic_fetch_op`, its prior value stored into the local one-element array ``fetch``."""

# --- point-to-point synchronization (the variables: symmetric integer arrays)

def wait_until(ivar: NDArray[Any], cmp: _Cmp, value: _Int) -> None:
    """Wait until ``ivar`` (one integer) satisfies ``ivar cmp value`` (the GIL released)."""

def wait_until_all(
    ivars: NDArray[Any], cmp: _Cmp, value: _Int, status: Optional[Iterable[int]] = None
) -> None:
    """Wait until every variable of ``ivars`` not excluded by ``status`` satisfies ``cmp value``."""

def wait_until_any(
    ivars: NDArray[Any], cmp: _Cmp, value: _Int, status: Optional[Iterable[int]] = None
) -> Optional[int]:
    """Wait until some variable satisfies ``cmp value``; return its index (None when all are excluded)."""

def wait_until_some(
    ivars: NDArray[Any], cmp: _Cmp, value: _Int, status: Optional[Iterable[int]] = None
) -> list[int]:
    """Wait until at least one variable satisfies ``cmp value``; return the indices of those that do."""

def wait_until_all_vector(
    ivars: NDArray[Any],
    cmp: _Cmp,
    values: Iterable[_Int],
    status: Optional[Iterable[int]] = None,
) -> None:
    """`wait_until_all` with one comparison value per variable (``values[i]``)."""

def wait_until_any_vector(
    ivars: NDArray[Any],
    cmp: _Cmp,
    values: Iterable[_Int],
    status: Optional[Iterable[int]] = None,
) -> Optional[int]:
    """`wait_until_any` with one comparison value per variable (``values[i]``)."""

def wait_until_some_vector(
    ivars: NDArray[Any],
    cmp: _Cmp,
    values: Iterable[_Int],
    status: Optional[Iterable[int]] = None,
) -> list[int]:
    """`wait_until_some` with one comparison value per variable (``values[i]``)."""

def test(ivar: NDArray[Any], cmp: _Cmp, value: _Int) -> bool:
    """Whether ``ivar`` (one integer) satisfies ``ivar cmp value`` now."""

def test_all(
    ivars: NDArray[Any], cmp: _Cmp, value: _Int, status: Optional[Iterable[int]] = None
) -> bool:
    """Whether every variable of ``ivars`` not excluded by ``status`` satisfies ``cmp value``."""

def test_any(
    ivars: NDArray[Any], cmp: _Cmp, value: _Int, status: Optional[Iterable[int]] = None
) -> Optional[int]:
    """The index of a variable of ``ivars`` that satisfies ``cmp value``, or None."""

def test_some(
    ivars: NDArray[Any], cmp: _Cmp, value: _Int, status: Optional[Iterable[int]] = None
) -> list[int]:
    """The indices of the variables of ``ivars`` that satisfy ``cmp value``."""

def test_all_vector(
    ivars: NDArray[Any],
    cmp: _Cmp,
    values: Iterable[_Int],
    status: Optional[Iterable[int]] = None,
) -> bool:
    """`test_all` with one comparison value per variable (``values[i]``)."""

def test_any_vector(
    ivars: NDArray[Any],
    cmp: _Cmp,
    values: Iterable[_Int],
    status: Optional[Iterable[int]] = None,
) -> Optional[int]:
    """`test_any` with one comparison value per variable (``values[i]``)."""

def test_some_vector(
    ivars: NDArray[Any],
    cmp: _Cmp,
    values: Iterable[_Int],
    status: Optional[Iterable[int]] = None,
) -> list[int]:
    """`test_some` with one comparison value per variable (``values[i]``)."""

# --- signals (a signal: a symmetric uint64 array of `new_signal`)

def signal_fetch(signal: NDArray[Any]) -> int:
    """This PE's value of the signal ``signal``."""

def signal_wait_until(signal: NDArray[Any], cmp: _Cmp, value: _Int) -> int:
    """Wait until this PE's signal satisfies ``signal cmp value`` and return its value."""

def put_signal(
    target: NDArray[Any],
    source: NDArray[Any],
    pe: int,
    signal: NDArray[Any],
    value: _Int,
    sigop: int,
    size: Optional[int] = None,
    ctx: Optional[Ctx] = None,
) -> None:
    """Copy ``source`` to ``target`` on ``pe``, then update ``signal`` there with ``value`` (``sigop``: SET 0, ADD 1)."""

def put_signal_nbi(
    target: NDArray[Any],
    source: NDArray[Any],
    pe: int,
    signal: NDArray[Any],
    value: _Int,
    sigop: int,
    size: Optional[int] = None,
    ctx: Optional[Ctx] = None,
) -> None:
    """`put_signal`, non-blocking: complete at the next `quiet`."""

# --- locks (a lock: a symmetric int64 array of one element, of `new_lock`)

def set_lock(lock: NDArray[Any]) -> None:
    """Wait until this PE holds ``lock`` (the GIL released while it waits)."""

def test_lock(lock: NDArray[Any]) -> bool:
    """Take ``lock`` if it is free: False when this call took it, True when it was held."""

def clear_lock(lock: NDArray[Any]) -> None:
    """Release ``lock``, held by this PE, after a quiet."""

# --- the launcher

def launcher_main(args: Sequence[str]) -> NoReturn:
    """Run the launcher (``shmemrun``) with the command line ``args`` and exit with the job's status."""

# --- symmetric data objects (the native base of shmem_rs.SymmetricArray)

@disjoint_base
class _SdoBase:
    """The native part of `shmem_rs.SymmetricArray`: the heap block, the key parsing and the transfers."""

    def __new__(cls, addr: int, local: NDArray[Any]) -> Self: ...
    def __getitem__(self, key: Any, /) -> Any:
        """``x[pe, ...]``: a get from PE ``pe`` (a new array, or a scalar for one element)."""
    def __setitem__(self, key: Any, value: Any, /) -> None:
        """``x[pe, ...] = src``: a put to PE ``pe`` (``same_kind`` casting, broadcasting)."""
    def __len__(self) -> int:
        """The length of the first dimension."""
    def free(self) -> None:
        """Free the object, collectively."""
    @property
    def freed(self) -> bool:
        """Whether the object was freed."""
    @property
    def local(self) -> NDArray[Any]:
        """This PE's copy, a NumPy view of the heap memory."""
    @property
    def dtype(self) -> np.dtype[Any]:
        """The NumPy element type."""
    @property
    def shape(self) -> tuple[int, ...]:
        """The shape."""
    @property
    def ndim(self) -> int:
        """The number of dimensions."""
    @property
    def size(self) -> int:
        """The number of elements."""
    @property
    def itemsize(self) -> int:
        """The size of one element in bytes."""
    @property
    def nbytes(self) -> int:
        """The number of bytes of each PE's copy."""

# --- views of heap blocks

@final
class Block:
    """The ``base`` of a NumPy view of a heap block (`view`): the block's address and the view's size."""

    @property
    def addr(self) -> int:
        """The block's address."""
    @property
    def nbytes(self) -> int:
        """The view's size in bytes."""

def view(addr: int, nbytes: int, pe: Optional[int] = None) -> Optional[NDArray[np.uint8]]:
    """A writable uint8 array over ``nbytes`` bytes of the heap block at ``addr``, or with ``pe`` of PE ``pe``'s mapped copy (None when not mapped)."""
