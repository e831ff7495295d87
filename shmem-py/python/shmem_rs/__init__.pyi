"""Type stub of ``shmem_rs``: the package's public names (``shmem_rs.shmem`` has its own)."""

from typing import Optional

from ._sdo import SymmetricArray as SymmetricArray
from ._sdo import sdo as sdo

__version__: str
__all__ = [
    "rc",
    "Rc",
    "ShmemError",
    "NotSymmetricError",
    "FreedError",
    "init",
    "finalize",
    "my_pe",
    "n_pes",
    "barrier_all",
    "sdo",
    "SymmetricArray",
]

class Rc:
    """Runtime configuration, read when the runtime starts (as ``shmem4py.rc``)."""

    initialize: bool
    threads: bool
    thread_level: str
    finalize: Optional[bool]
    def __init__(self, **kwargs: object) -> None: ...
    def __call__(self, **kwargs: object) -> None: ...

rc: Rc

class ShmemError(RuntimeError):
    """The runtime's state does not allow the call: before ``init``, after ``finalize``."""

class NotSymmetricError(ValueError):
    """An array that must be symmetric (on the symmetric heap) is not."""

class FreedError(ValueError):
    """A symmetric object used after it was freed."""

def init(thread_level: int = 3) -> int:
    """Start the runtime (nothing when it runs); return the thread level provided."""
def finalize() -> None:
    """End the runtime. Idempotent."""
def my_pe() -> int:
    """This PE's number."""
def n_pes() -> int:
    """The number of PEs."""
def barrier_all() -> None:
    """Wait until every PE arrives, after completing this PE's puts."""
def _ensure() -> None:
    """Start the runtime if it does not run yet (the package's modules use it)."""
