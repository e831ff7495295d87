#!/usr/bin/env bash
# Runs the OpenSHMEM community's unit tests (tests-sos, unmodified, in ../shared/conformance)
# against this runtime through its C API: ../shared/conformance/run-tests-sos with
# target/release/shmemcc, target/release/shmemc++ and target/release/shmemrun.
#
#   bash scripts/conformance.sh [--np "2 4"] [--only "name ..."] [--timeout S] [--tcp]
#
# --tcp runs every job with UCX_TLS=tcp,self (every transfer through UCX instead of the direct
# shared-memory path). Needs `cargo build --release` first. Logs go to target/conformance/.
set -euo pipefail
cd "$(dirname "$0")/.."
rel=$PWD/target/release
suite=$PWD/../shared/conformance/run-tests-sos
[ -x "$rel/shmemcc" ] && [ -x "$rel/shmemrun" ] || {
    echo "conformance.sh: build first: cargo build --release" >&2
    exit 2
}
[ -f "$suite" ] || { echo "conformance.sh: $suite not found" >&2; exit 2; }
np="2 4" only="" limit=60 path=direct
while [ $# -gt 0 ]; do
    case $1 in
    --np) np=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --tcp) path=tcp; shift ;;
    *) echo "conformance.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
out=$PWD/target/conformance/$path
rm -rf "$out"
mkdir -p "$out"
args=(--cc "$rel/shmemcc" --cxx "$rel/shmemc++" --run "$rel/shmemrun -n {np}" --np "$np"
    --timeout "$limit" --out "$out")
[ -n "$only" ] && args+=(--only "$only")
if [ $path = tcp ]; then
    UCX_TLS=tcp,self bash "$suite" "${args[@]}"
else
    bash "$suite" "${args[@]}"
fi
