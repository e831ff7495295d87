#!/usr/bin/env bash
# Runs shmem4py's own test suite on this runtime. shmem4py is built exactly as the README says
# a user builds it ("Using it from C and Python"), in a virtual environment:
#
#   PATH=$PWD/target/release:$PATH pip install --no-cache-dir shmem4py "numpy<2"
#
# (shmem4py's build takes `oshcc` from PATH; shmem.h tells it what the library has), then the
# tests of the same version's source distribution run under shmemrun.
#
#   bash scripts/shmem4py.sh [NP ...]        (default: 1 2 4)
#
# Needs `cargo build --release` first, python3 with venv, and network access to PyPI (pip).
# Environment: SHMEM4PY_VENV (default target/shmem4py/venv), SHMEM4PY_TIMEOUT (seconds per PE
# count, default 600). Prints one line per PE count and exits non-zero when a run fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
rel=$root/target/release
[ -x "$rel/oshcc" ] && [ -x "$rel/shmemrun" ] || {
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
# Rebuilt against the current library every time: without shmem4py installed, the README's
# command builds it from PyPI. Nothing else is set: no CC, no CFLAGS, no OSHCC.
"$py" -m pip uninstall -q -y shmem4py >/dev/null 2>&1 || true
(
    export PATH="$rel:$PATH"
    "$venv/bin/pip" install -q --disable-pip-version-check --no-cache-dir shmem4py "numpy<2"
)
api=$("$py" -c 'import shmem4py.api as a; print(a.__file__)')
grep -q libshmem.so <<<"$(readelf -d "$api")" || {
    echo "shmem4py.sh: $api does not link libshmem.so" >&2
    exit 1
}
version=$("$py" -c 'import shmem4py; print(shmem4py.__version__)')
# The source distribution of that version: its tests live in it.
src=$work/shmem4py-$version
if [ ! -d "$src/test" ]; then
    "$py" -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: \
        "shmem4py==$version" -d "$work"
    tar -xzf "$work/shmem4py-$version.tar.gz" -C "$work"
fi
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
