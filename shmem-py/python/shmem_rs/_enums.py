"""The enumerations of ``shmem_rs.shmem`` (shmem4py's ``THREAD``, ``MALLOC``, ``AMO``,
``SIGNAL``, ``CMP``, ``CTX`` and ``OP``, and their ``NAME_MEMBER`` constants).

Making an enumeration class costs a tenth of a millisecond or more, several times the rest of
``shmem_rs.shmem``'s import: this module is imported at the first use of one of these names
(``shmem_rs.shmem``'s module ``__getattr__``), not at ``import shmem_rs.shmem``.
"""

import enum as _enum
import sys

# `sys.version_info` by that name, as type checkers read version checks (`sys` is deleted after).
if sys.version_info >= (3, 11):
    from enum import StrEnum as _StrEnum
else:  # pragma: no cover

    class _StrEnum(str, _enum.Enum):
        """A string enumeration whose ``str`` is its value (``enum.StrEnum`` of 3.11)."""

        __str__ = str.__str__

del sys


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
