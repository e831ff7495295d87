"""Contexts, teams and collectives of ``shmem_rs.shmem`` (shmem4py's names and signatures).

``shmem_rs.shmem`` re-exports everything listed in ``__all__``. Contexts and teams are native
objects (``Ctx``, ``Team``); every collective is native, checks its arguments on the calling PE
before any member starts waiting, and releases the GIL while it waits.
"""

from __future__ import annotations

import enum as _enum
from typing import TYPE_CHECKING, Any, Optional, Union

from . import _native
from ._native import (
    CTX_DEFAULT,
    CTX_INVALID,
    TEAM_INVALID,
    TEAM_SHARED,
    TEAM_WORLD,
    Ctx,
    Team,
    alltoall,
    alltoalls,
    barrier_all,
    broadcast,
    collect,
    fcollect,
    sync,
    sync_all,
)

if TYPE_CHECKING:  # pragma: no cover
    from typing import Protocol

    from numpy.typing import NDArray

    class _Reduction(Protocol):
        """The signature of ``and_reduce`` ... ``prod_reduce``."""

        def __call__(
            self,
            target: NDArray[Any],
            source: NDArray[Any],
            size: Optional[int] = None,
            team: Optional[Team] = None,
        ) -> None: ...


__all__ = [
    "CTX",
    "CTX_PRIVATE",
    "CTX_SERIALIZED",
    "CTX_NOSTORE",
    "Ctx",
    "CTX_DEFAULT",
    "CTX_INVALID",
    "Team",
    "TEAM_WORLD",
    "TEAM_SHARED",
    "TEAM_INVALID",
    "barrier_all",
    "sync_all",
    "sync",
    "broadcast",
    "collect",
    "fcollect",
    "alltoall",
    "alltoalls",
    "OP",
    "OP_AND",
    "OP_OR",
    "OP_XOR",
    "OP_MAX",
    "OP_MIN",
    "OP_SUM",
    "OP_PROD",
    "reduce",
    "and_reduce",
    "or_reduce",
    "xor_reduce",
    "max_reduce",
    "min_reduce",
    "sum_reduce",
    "prod_reduce",
]


class CTX(_enum.IntFlag):
    """Context creation options (combine with ``|``; 0 for none).

    Attributes:
        PRIVATE: The context is used only by the thread that created it.
        SERIALIZED: The context is shareable but not used by several threads at once.
        NOSTORE: `quiet` and `fence` on the context need not complete or order stores.
    """

    PRIVATE = 1
    SERIALIZED = 2
    NOSTORE = 4


CTX_PRIVATE: CTX = CTX.PRIVATE
"""The context is used only by the thread that created it."""
CTX_SERIALIZED: CTX = CTX.SERIALIZED
"""The context is shareable but not used by several threads at once."""
CTX_NOSTORE: CTX = CTX.NOSTORE
"""`quiet` and `fence` on the context need not complete or order stores."""


class OP(str, _enum.Enum):
    """Reduction operation (a string: ``OP.SUM == 'sum'``).

    Attributes:
        AND: Bitwise AND (integer types).
        OR: Bitwise OR (integer types).
        XOR: Bitwise exclusive OR (integer types).
        MAX: Maximum (integer and real types).
        MIN: Minimum (integer and real types).
        SUM: Sum (integer, real and complex types).
        PROD: Product (integer, real and complex types).
    """

    AND = "and"
    OR = "or"
    XOR = "xor"
    MAX = "max"
    MIN = "min"
    SUM = "sum"
    PROD = "prod"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


OP_AND: OP = OP.AND
"""Bitwise AND reduction."""
OP_OR: OP = OP.OR
"""Bitwise OR reduction."""
OP_XOR: OP = OP.XOR
"""Bitwise exclusive OR reduction."""
OP_MAX: OP = OP.MAX
"""Maximum reduction."""
OP_MIN: OP = OP.MIN
"""Minimum reduction."""
OP_SUM: OP = OP.SUM
"""Sum reduction."""
OP_PROD: OP = OP.PROD
"""Product reduction."""


def reduce(
    target: NDArray[Any],
    source: NDArray[Any],
    op: Union[OP, str] = OP_SUM,
    size: Optional[int] = None,
    team: Optional[Team] = None,
) -> None:
    """Reduce ``source`` element-wise over the PEs of ``team`` into ``target`` on every PE.

    Args:
        target: Symmetric destination array of at least ``size`` elements.
        source: Symmetric source array of at least ``size`` elements (may be ``target``).
        op: The reduction (`OP`, or its name: 'and', 'or', 'xor', 'max', 'min', 'sum', 'prod').
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
    _native.reduce(target, source, op.value if isinstance(op, OP) else op, size, team)


def _named_reduce(name: str, what: str) -> _Reduction:
    def fn(
        target: NDArray[Any],
        source: NDArray[Any],
        size: Optional[int] = None,
        team: Optional[Team] = None,
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
