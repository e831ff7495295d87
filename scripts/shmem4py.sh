#!/usr/bin/env bash
# Runs shmem4py's own test suite on this runtime: builds PyPI shmem4py 1.0.0 from source with
# this project's C compiler wrapper (target/release/shmemcc, so that it links libshmem.so) in a
# virtual environment, then runs the tests of its source distribution under shmemrun.
#
#   bash scripts/shmem4py.sh [NP ...]        (default: 1 2 4)
#
# Needs `cargo build --release` first, python3 with venv, network access to PyPI (pip) or a
# pip cache. Environment: SHMEM4PY_VENV (default target/shmem4py/venv), SHMEM4PY_TIMEOUT
# (seconds per PE count, default 600). Prints one line per PE count and exits non-zero when a
# run fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
rel=$root/target/release
[ -x "$rel/shmemcc" ] && [ -x "$rel/shmemrun" ] || {
    echo "shmem4py.sh: build first: cargo build --release" >&2
    exit 2
}
nps=("$@")
[ ${#nps[@]} -gt 0 ] || nps=(1 2 4)
work=$root/target/shmem4py
venv=${SHMEM4PY_VENV:-$work/venv}
limit=${SHMEM4PY_TIMEOUT:-600}
mkdir -p "$work"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
py=$venv/bin/python
# shmem4py 1.0.0 predates NumPy 2 (copy=False and integer-overflow semantics changed there).
"$py" -m pip install -q --disable-pip-version-check setuptools wheel cffi "numpy<2"
# The source distribution: the package is built from it, and its tests live in it.
src=$work/shmem4py-1.0.0
if [ ! -d "$src/test" ]; then
    "$py" -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: \
        shmem4py==1.0.0 -d "$work"
    tar -xzf "$work/shmem4py-1.0.0.tar.gz" -C "$work"
fi
# shmem4py recognizes the implementations it knows by their headers' own macros and otherwise
# defines fallbacks for OpenSHMEM 1.5 calls it assumes missing, which clash with this library's
# real ones. Its PySHMEM_HAVE_* switches say what the library has: every OpenSHMEM 1.5 feature
# it probes (the list it uses for Sandia OpenSHMEM).
have=""
for f in shmem_malloc_with_hints shmem_team_t SHMEM_CTX_INVALID shmem_amo_nbi shmem_put_signal \
    shmem_signal_fetch shmem_signal_wait_until shmem_broadcast shmem_collect shmem_fcollect \
    shmem_alltoall shmem_alltoalls shmem_broadcastmem shmem_collectmem shmem_fcollectmem \
    shmem_alltoallmem shmem_alltoallsmem shmem_reduce shmem_wait_test_many shmem_pcontrol; do
    have="$have -DPySHMEM_HAVE_$f=1"
done
# Rebuild against the current library every time (the wrapper is all it needs).
OSHCC=$rel/shmemcc CC=$rel/shmemcc CFLAGS="${CFLAGS:-} $have" "$py" -m pip install -q \
    --disable-pip-version-check --no-build-isolation --force-reinstall --no-deps "$src"
status=0
for np in "${nps[@]}"; do
    log=$work/test.np$np.log
    start=$(date +%s)
    # From the test folder, so that `import shmem4py` finds the installed package.
    if (cd "$src/test" && timeout -k 10 "$limit" "$rel/shmemrun" -n "$np" "$py" -m unittest \
        discover -s . -p 'test_*.py') >"$log" 2>&1; then
        result=PASS
    else
        result="FAIL (rc=$?)"
        status=1
    fi
    ran=$(grep -m1 -oE '^Ran [0-9]+ tests' "$log" || echo "Ran ? tests")
    echo "shmem4py np=$np: $result, ${ran#Ran }, $(($(date +%s) - start)) s (log $log)"
    [ "$result" = PASS ] || tail -n 15 "$log" | sed 's/^/    /'
done
exit $status
