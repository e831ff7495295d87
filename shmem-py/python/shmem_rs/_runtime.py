"""Starting and ending the runtime, shared by ``shmem_rs.shmem`` and ``shmem_rs.sdo``."""

from __future__ import annotations

import atexit

from . import _native

_THREAD_LEVELS = {"single": 0, "funneled": 1, "serialized": 2, "multiple": 3}
_finalize_at_exit = False


def init(thread_level: int = 3) -> int:
    """Start the runtime (nothing when it runs) and return the thread level provided.

    Joins the job of ``shmemrun`` (or of ``mpirun``, through PMIx); a program started alone is
    a job of one PE. The rendezvous releases the GIL while it waits for the other PEs.
    """
    global _finalize_at_exit
    if _native.initialized():
        return _native.query_thread()
    level = _native.init(thread_level)
    from . import rc

    if rc.finalize is None or rc.finalize:
        if not _finalize_at_exit:
            atexit.register(finalize)
            _finalize_at_exit = True
    return level


def init_from_rc() -> None:
    """Start the runtime as ``shmem_rs.rc`` asks (at the import of ``shmem_rs.shmem``)."""
    from . import rc

    if not rc.initialize or _native.initialized():
        return
    if rc.threads:
        level = _THREAD_LEVELS.get(str(rc.thread_level).lower())
        if level is None:
            raise ValueError(
                f"rc.thread_level {rc.thread_level!r} is not one of {sorted(_THREAD_LEVELS)}"
            )
        init(level)
    else:
        init(0)


def ensure() -> None:
    """Start the runtime if it does not run yet (for the first call that needs it)."""
    if not _native.initialized():
        init()


def finalize() -> None:
    """End the runtime: quiet, a barrier, then the runtime's finalize. Idempotent."""
    _native.finalize()


def my_pe() -> int:
    """This PE's number (0 .. n_pes()-1)."""
    ensure()
    return _native.my_pe()


def n_pes() -> int:
    """The number of PEs in the job."""
    ensure()
    return _native.n_pes()


def barrier_all() -> None:
    """Wait until every PE arrives, after completing this PE's puts (GIL released)."""
    ensure()
    _native.barrier_all()
