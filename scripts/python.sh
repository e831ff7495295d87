#!/usr/bin/env bash
# The Python package shmem_rs (shmem-py/), tested where its users run it:
#
#   1. a fresh virtual environment and the README's one command, `pip install ./shmem-py`
#      (no C compiler involved), then the test extras (pytest, cffi);
#   2. the package's pytest suite (shmem-py/tests/) as multi-PE jobs under the installed
#      `shmemrun`, at 1, 2 and 4 PEs, on the direct path and with UCX_TLS=tcp,self;
#   2b. the type stubs and annotations: mypy's stubtest compares the stubs of the extension
#      module (shmem_rs/_native.pyi, installed with the package) with the module itself, and
#      `mypy --strict` (shmem-py/pyproject.toml's [tool.mypy]) checks the package's modules
#      and stubs;
#   3. the same suite at 2 PEs under Open MPI's `mpirun` (the PMIx path), and
#      shmem-py/tests/mpi_check.py at 4 PEs with mpi4py imported before and after shmem_rs;
#   4. shmem4py 1.0's own test suite (from its source distribution), its import lines changed
#      to shmem_rs, under shmemrun at 1, 2 and 4 PEs, in a second environment with NumPy 1.x
#      (the package with "numpy<2": shmem4py 1.0's tests predate NumPy 2, and two of them,
#      test_rma's testGet and testGetNBI, fail under NumPy 2 in their own setup code,
#      `np.full(1, -1, dtype=<unsigned>)`, before any shmem call);
#   5. the examples in examples/python at 1, 3 and 4 PEs;
#   6. the package's suite at 2 PEs in the NumPy 1.x environment (the first has NumPy 2).
#
#   bash scripts/python.sh [STEP ...]     (steps: install pytest stubs mpirun shmem4py examples
#                                          numpy1;
#                                          default: all)
#
# Needs python3 with venv, PyPI (pip), Open MPI's mpirun and a C compiler for mpi4py's build
# (step 3 only). Environment: PY_VENV (default target/python/venv), PY_TIMEOUT (seconds per job,
# default 600). Prints one line per job; exits non-zero when one fails, after running the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$root/target/python
venv=${PY_VENV:-$work/venv}
limit=${PY_TIMEOUT:-600}
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(install pytest stubs mpirun shmem4py examples numpy1)
mkdir -p "$work"
status=0
want() { [[ " ${steps[*]} " == *" $1 "* ]]; }

# job NAME CMD...: runs one job with a time limit, its output to $work/NAME.log; one line.
job() {
    local name=$1 start rc=0
    shift
    start=$(date +%s)
    timeout -k 10 "$limit" "$@" >"$work/$name.log" 2>&1 || rc=$?
    local took=$(($(date +%s) - start))
    local summary
    # pytest's last line on one PE ("114 passed in 1.5s"), unittest's "Ran N tests", mypy's
    # and stubtest's verdicts.
    summary=$(grep -m1 -E '^=* *[0-9]+ (passed|failed|error)|^Ran [0-9]+ tests|^Success: no issues|^Found [0-9]+ errors? ' "$work/$name.log" |
        sed 's/=//g; s/^ *//; s/ *$//' || true)
    if [ $rc -eq 0 ]; then
        echo "python.sh: $name: PASS ${summary:+($summary) }in ${took} s"
    else
        echo "python.sh: $name: FAIL (rc=$rc) ${summary:+($summary) }in ${took} s (log $work/$name.log)"
        tail -n 25 "$work/$name.log" | sed 's/^/    /'
        status=1
    fi
}

py=$venv/bin/python
run=$venv/bin/shmemrun
if want install || [ ! -x "$run" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    echo "python.sh: pip install ./shmem-py in a fresh virtual environment ($venv)"
    start=$(date +%s)
    # The README's command, as a user runs it (output kept for the record).
    "$venv/bin/pip" install --disable-pip-version-check ./shmem-py >"$work/install.log" 2>&1 || {
        tail -n 30 "$work/install.log"
        echo "python.sh: pip install ./shmem-py failed" >&2
        exit 1
    }
    echo "python.sh: installed in $(($(date +%s) - start)) s: $(grep -E '^Successfully installed' "$work/install.log")"
    "$venv/bin/pip" install -q --disable-pip-version-check pytest cffi
fi
for cmd in shmemrun oshrun; do
    [ -x "$venv/bin/$cmd" ] || {
        echo "python.sh: the package did not install $cmd" >&2
        exit 1
    }
done

tests=(shmem-py/tests)
if want pytest; then
    for np in 1 2 4; do
        job "pytest.direct.np$np" "$run" -n "$np" "$py" -m pytest -q -p no:cacheprovider "${tests[@]}"
        job "pytest.tcp.np$np" env UCX_TLS=tcp,self "$run" -n "$np" "$py" -m pytest -q \
            -p no:cacheprovider "${tests[@]}"
    done
fi

if want stubs; then
    # mypy 1.18 and later know @disjoint_base (PEP 800), which stubtest asks of Ctx and Team.
    "$venv/bin/pip" install -q --disable-pip-version-check "mypy>=1.18" >"$work/mypy-install.log" 2>&1 || {
        tail -n 10 "$work/mypy-install.log"
        echo "python.sh: mypy did not install (log $work/mypy-install.log)"
        status=1
    }
    allow=()
    [ ! -f shmem-py/stubtest-allowlist.txt ] || allow=(--allowlist shmem-py/stubtest-allowlist.txt)
    # The installed module against the stubs installed with it (the wheel's copy).
    job stubs.stubtest "$py" -m mypy.stubtest shmem_rs._native shmem_rs.shmem ${allow[@]+"${allow[@]}"}
    # The sources; where a module has a stub (.pyi), mypy reads the stub.
    job stubs.mypy "$py" -m mypy --config-file shmem-py/pyproject.toml --cache-dir "$work/mypy-cache" \
        shmem-py/python/shmem_rs
fi

if want mpirun; then
    mpi=(mpirun --allow-run-as-root --oversubscribe)
    job pytest.mpirun.np2 "${mpi[@]}" -np 2 "$py" -m pytest -q -p no:cacheprovider "${tests[@]}"
    if ! "$py" -c 'import mpi4py' 2>/dev/null; then
        "$venv/bin/pip" install -q --disable-pip-version-check mpi4py >"$work/mpi4py.log" 2>&1 ||
            echo "python.sh: mpi4py did not install (log $work/mpi4py.log)"
    fi
    for order in before after; do
        job "mpi4py-$order.mpirun.np4" "${mpi[@]}" -np 4 "$py" shmem-py/tests/mpi_check.py "$order"
    done
fi

# The second environment, with NumPy 1.x.
v1=$work/venv-numpy1
numpy1_venv() {
    if [ ! -x "$v1/bin/shmemrun" ]; then
        python3 -m venv "$v1"
        "$v1/bin/pip" install -q --disable-pip-version-check ./shmem-py "numpy<2" pytest cffi \
            >"$work/install-numpy1.log" 2>&1
    elif want install; then
        "$v1/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps \
            ./shmem-py >"$work/install-numpy1.log" 2>&1
    fi
    echo "python.sh: $("$v1/bin/python" -c 'import numpy; print("NumPy", numpy.__version__)') in $v1"
}

if want shmem4py; then
    numpy1_venv
    version=1.0.0
    src=$work/shmem4py-$version
    if [ ! -d "$src/test" ]; then
        "$venv/bin/pip" download -q --disable-pip-version-check --no-deps --no-binary :all: \
            "shmem4py==$version" -d "$work"
        tar -xzf "$work/shmem4py-$version.tar.gz" -C "$work"
    fi
    # Its tests with their import lines changed, and nothing else.
    t4=$work/shmem4py-tests
    rm -rf "$t4"
    cp -r "$src/test" "$t4"
    sed -i -e 's/^from shmem4py import shmem$/from shmem_rs import shmem/' \
        -e 's/^from shmem4py import rc$/from shmem_rs import rc/' \
        -e 's/^from shmem4py.shmem import ffi$/from shmem_rs.shmem import ffi/' "$t4"/test_*.py
    if grep -n shmem4py "$t4"/test_*.py; then
        echo "python.sh: shmem4py's tests import it in a way this script does not change" >&2
        status=1
    fi
    for np in 1 2 4; do
        job "shmem4py-suite.np$np" bash -c "cd '$t4' && '$v1/bin/shmemrun' -n $np '$v1/bin/python' -m unittest discover -s . -p 'test_*.py'"
    done
fi

if want examples; then
    for ex in examples/python/*.py; do
        for np in 1 3 4; do
            job "example.$(basename "$ex" .py).np$np" "$run" -n "$np" "$py" "$ex"
        done
    done
fi

if want numpy1; then
    want shmem4py || numpy1_venv
    job pytest.numpy1.np2 "$v1/bin/shmemrun" -n 2 "$v1/bin/python" -m pytest -q -p no:cacheprovider "${tests[@]}"
fi
exit $status
