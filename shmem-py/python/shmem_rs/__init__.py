"""OpenSHMEM for Python on shmem-rs.

Two ways in, over one runtime:

* ``from shmem_rs import shmem``: shmem4py's API (``shmem.put``, ``shmem.zeros``,
  ``shmem.barrier_all`` ...), so that a shmem4py program runs by changing its import;
* ``shmem_rs.sdo(dtype, shape)``: PySHMEM's symmetric data objects, with slice syntax:
  ``x[pe, a:b:s] = src`` is a strided put and ``x[pe, a:b:s]`` a strided get.

Importing ``shmem_rs`` starts nothing; importing ``shmem_rs.shmem`` (or the first call that
needs the runtime) starts it, as ``rc`` says. Run programs with ``shmemrun -n 4 python prog.py``
(installed with the package), or ``mpirun``.
"""

from __future__ import annotations

from typing import Any, Optional

from ._native import FreedError, NotSymmetricError, ShmemError

__version__ = "0.1.0"

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
    """Runtime configuration, read when the runtime starts (as ``shmem4py.rc``).

    Attributes
    ----------
    initialize : bool
        Start the runtime when ``shmem_rs.shmem`` is imported (default: True).
    threads : bool
        Ask for a thread level when starting (default: False).
    thread_level : {"multiple", "serialized", "funneled", "single"}
        The thread level asked for with ``threads`` (default: "multiple").
    finalize : None or bool
        Finalize at interpreter exit (default None: when the package started the runtime).
    """

    initialize: bool = True
    threads: bool = False
    thread_level: str = "multiple"
    finalize: Optional[bool] = None

    def __init__(self, **kwargs: Any) -> None:
        self(**kwargs)

    def __setattr__(self, name: str, value: Any) -> None:
        if not hasattr(self, name):
            raise TypeError(f"object has no attribute {name!r}")
        super().__setattr__(name, value)

    def __call__(self, **kwargs: Any) -> None:
        for key in kwargs:
            if not hasattr(self, key):
                raise TypeError(f"unexpected argument {key!r}")
        for key, value in kwargs.items():
            setattr(self, key, value)

    def __repr__(self) -> str:
        return f"<{__name__}.rc>"


rc = Rc()
__import__("sys").modules[__name__ + ".rc"] = rc

from ._runtime import barrier_all, finalize, init, my_pe, n_pes  # noqa: E402
from ._sdo import SymmetricArray, sdo  # noqa: E402
