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

# The package's import is part of every PE's start (benches/python-init.sh): one module file
# here and one for ``shmem_rs.shmem``, nothing else; ``sdo`` and the enumerations come at their
# first use. Types are in ``__init__.pyi``.

import os as _os
import sys as _sys

# The extension's libraries (UCX's, PMIx's) bind their symbols when first called, as a program
# linked with them does, instead of all of them now (Python's default, RTLD_NOW, resolved
# thousands of symbols that a job never calls: 0.3 ms per PE).
_flags = _sys.getdlopenflags()
_sys.setdlopenflags((_flags & ~_os.RTLD_NOW) | _os.RTLD_LAZY)
try:
    from . import _native
finally:
    _sys.setdlopenflags(_flags)
del _flags

#: The exception classes, made (by ``_native``) at their first use.
_ERRORS = frozenset(("ShmemError", "NotSymmetricError", "FreedError"))

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

    initialize = True
    threads = False
    thread_level = "multiple"
    finalize = None

    def __init__(self, **kwargs):
        self(**kwargs)

    def __setattr__(self, name, value):
        if not hasattr(self, name):
            raise TypeError(f"object has no attribute {name!r}")
        super().__setattr__(name, value)

    def __call__(self, **kwargs):
        for key in kwargs:
            if not hasattr(self, key):
                raise TypeError(f"unexpected argument {key!r}")
        for key, value in kwargs.items():
            setattr(self, key, value)

    def __repr__(self):
        return f"<{__name__}.rc>"


rc = Rc()
_sys.modules[__name__ + ".rc"] = rc

_finalize_at_exit = False


def init(thread_level=3):
    """Start the runtime (nothing when it runs) and return the thread level provided.

    Joins the job of ``shmemrun`` (or of ``mpirun``, through PMIx); a program started alone is
    a job of one PE. The rendezvous releases the GIL while it waits for the other PEs. The
    runtime is finalized at exit unless ``rc.finalize`` is false.
    """
    global _finalize_at_exit  # noqa: PLW0603
    if _native.initialized():
        return _native.query_thread()
    level = _native.init(thread_level)
    if (rc.finalize is None or rc.finalize) and not _finalize_at_exit:
        import atexit  # pylint: disable=import-outside-toplevel

        atexit.register(finalize)
        _finalize_at_exit = True
    return level


def _ensure():
    """Start the runtime if it does not run yet (for the first call that needs it)."""
    if not _native.initialized():
        init()


def finalize():
    """End the runtime: quiet, a barrier, then the runtime's finalize. Idempotent."""
    _native.finalize()


def my_pe():
    """This PE's number (0 .. n_pes()-1)."""
    _ensure()
    return _native.my_pe()


def n_pes():
    """The number of PEs in the job."""
    _ensure()
    return _native.n_pes()


def barrier_all():
    """Wait until every PE arrives, after completing this PE's puts (GIL released)."""
    _ensure()
    _native.barrier_all()


def _shmem():
    """``shmem_rs.shmem`` (made by the extension, see ``shmem.py``), registered and, the first
    time, with the runtime started as ``rc`` (and the environment) says."""
    module = globals().get("shmem")
    if module is not None:
        return module
    module = _native._shmem_module()
    for name in ("initialize", "threads", "thread_level", "finalize"):
        value = _os.environ.get("SHMEM_RS_RC_" + name.upper()) or _os.environ.get(
            "SHMEM4PY_RC_" + name.upper()
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
            from ._enums import THREAD  # pylint: disable=import-outside-toplevel

            level = getattr(THREAD, str(rc.thread_level).upper(), None)
            if level is None:
                raise ValueError(
                    f"rc.thread_level {rc.thread_level!r} is not one of "
                    "'single', 'funneled', 'serialized', 'multiple'"
                )
            init(int(level))
        else:
            init()
    globals()["shmem"] = module
    _sys.modules[__name__ + ".shmem"] = module
    return module


def __getattr__(name):
    """``shmem`` (see ``_shmem``), the exception classes (``shmem_rs._native``), ``sdo`` and
    ``SymmetricArray`` (``shmem_rs._sdo``), made or imported at their first use."""
    if name == "shmem":
        return _shmem()
    if name in _ERRORS:
        value = getattr(_native, name)
        globals()[name] = value
        return value
    if name in ("sdo", "SymmetricArray"):
        from . import _sdo  # pylint: disable=import-outside-toplevel

        value = getattr(_sdo, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    """The module's names, those imported at first use included."""
    return sorted(set(globals()) | _ERRORS | {"shmem", "sdo", "SymmetricArray"})
