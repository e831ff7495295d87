"""What ``import shmem_rs`` and ``from shmem_rs import shmem`` load, and the names they give.

The import is part of every PE's start (benches/python-init.sh): it reads the package's
``__init__`` and the extension, and nothing else of the package. ``shmem_rs.shmem`` is made by
the extension (its stand-in ``shmem.py`` is read only for ``import shmem_rs.shmem``); the
extension's functions, classes and exceptions are made at their first use; the enumerations
(``shmem_rs._enums``), the Python-defined functions (``shmem_rs._api``) and the symmetric data
objects (``shmem_rs._sdo``) come at the first use of one of their names.

Run: ``shmemrun -n 2 python -m pytest -q -p no:cacheprovider shmem-py/tests/test_module.py``.
"""

import ast
import os
import subprocess
import sys
from pathlib import Path

import shmem_rs
from shmem_rs import _api, _enums, _native, shmem

PACKAGE = Path(shmem_rs.__file__).parent


def _public_top_level(module) -> set:
    """The names a module's source defines at its top level (functions, classes, variables),
    those starting with an underscore left out."""
    tree = ast.parse(Path(module.__file__).read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_")}


def test_every_name_taken_at_first_use_is_there():
    # What the lazy tables of shmem_rs.shmem name is all that the two modules define.
    api = _public_top_level(_api) | {"_getbuffer"}
    assert set(shmem._API) == api
    enums = _public_top_level(_enums)
    assert set(shmem._ENUMS) == enums
    listed = dir(shmem)
    for name in sorted(api | enums):
        assert getattr(shmem, name) is getattr(_api if name in api else _enums, name), name
        assert name in listed, name
    assert {"sdo", "SymmetricArray"} <= set(dir(shmem_rs))
    assert shmem_rs.sdo is shmem_rs._sdo.sdo
    for module, name in ((shmem, "no_such_name"), (shmem_rs, "no_such_name")):
        try:
            getattr(module, name)
        except AttributeError as e:
            assert name in str(e) and module.__name__ in str(e)
        else:
            raise AssertionError(f"{module.__name__}.{name} exists")


def test_the_extension_makes_every_name_of_its_stub_at_first_use():
    # The stub's __all__ is what the module offers, and what its __getattr__ makes.
    tree = ast.parse(PACKAGE.joinpath("_native.pyi").read_text())
    stub_all = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__"
    )
    assert sorted(_native.__all__) == sorted(stub_all)
    listed = dir(_native)
    for name in stub_all:
        first = getattr(_native, name)
        assert getattr(_native, name) is first, name  # kept: constants stay one object
        assert name in listed, name
    # What shmem_rs.shmem takes from it is the same object.
    assert shmem._NATIVE <= set(stub_all)
    for name in sorted(shmem._NATIVE):
        assert getattr(shmem, name) is getattr(_native, name), name
    assert shmem.TEAM_WORLD is _native.TEAM_WORLD and shmem.CTX_DEFAULT is _native.CTX_DEFAULT
    assert shmem_rs.ShmemError is _native.ShmemError
    try:
        _native.no_such_name  # noqa: B018  pylint: disable=pointless-statement
    except AttributeError as e:
        assert "no_such_name" in str(e) and "shmem_rs._native" in str(e)
    else:
        raise AssertionError("_native.no_such_name exists")


def _fresh_python(code: str) -> "subprocess.CompletedProcess[str]":
    """Runs ``code`` in a Python of its own, a job of one PE (the variables of this job's
    launcher left out), and checks that it succeeded."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SHMEM_", "PMIX_", "OMPI_", "PMI_"))
    }
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out


def test_the_import_reads_one_module_of_the_package():
    code = (
        "import sys, numpy\n"
        "before = set(sys.modules)\n"
        "import shmem_rs\n"
        "shmem_rs.init()\n"
        "from shmem_rs import shmem\n"
        "print(sorted(n for n in vars(shmem_rs._native) if not n.startswith('__')))\n"
        "print(repr(getattr(sys.modules['shmem_rs.shmem'], '__file__', None)))\n"
        "print(sorted(set(sys.modules) - before))\n"
    )
    out = _fresh_python(code)
    lines = out.stdout.strip().splitlines()
    loaded = ast.literal_eval(lines[-1])
    # Of the extension's names, the start made only the constants and what init() called.
    made = ast.literal_eval(lines[-3])
    # shmem_rs.shmem is the extension's module: no file of the package was read for it.
    assert lines[-2] == "None", lines[-2]
    assert set(made) <= {
        "MAX_NAME_LEN",
        "VENDOR_STRING",
        "VERSION",
        "init",
        "initialized",
        "query_thread",
        "_shmem_module",
    }, made
    assert [m for m in loaded if m.startswith("shmem_rs")] == [
        "shmem_rs",
        "shmem_rs._native",
        "shmem_rs.rc",
        "shmem_rs.shmem",
    ], loaded
    # Nor anything of the standard library a start does not need (atexit is built in).
    assert set(loaded) - {"shmem_rs", "shmem_rs._native", "shmem_rs.rc", "shmem_rs.shmem"} <= {
        "atexit"
    }, loaded
    assert PACKAGE.joinpath("_api.py").exists()


def test_import_statement_gives_the_same_module():
    # ``import shmem_rs.shmem`` reads the stand-in, which replaces itself with the extension's
    # module: the same object as ``from shmem_rs import shmem``, with the runtime started.
    code = (
        "import sys\n"
        "import shmem_rs.shmem\n"
        "m = sys.modules['shmem_rs.shmem']\n"
        "from shmem_rs import shmem\n"
        "import shmem_rs.shmem as again\n"
        "print(m is shmem is again is shmem_rs.shmem, shmem.my_pe(), shmem.n_pes())\n"
    )
    out = _fresh_python(code)
    assert out.stdout.split() == ["True", "0", "1"], out.stdout
    assert shmem.__name__ == "shmem_rs.shmem" and shmem.__doc__.startswith("OpenSHMEM for Python")
