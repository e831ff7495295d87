#!/usr/bin/env bash
# `shmem!` against the hand-written call, timed side by side in one run. Built with loops aligned
# to 64 bytes (in a separate target directory) so that where the linker happens to place each
# loop does not masquerade as a difference between the two forms; `dsl-callgrind.sh` shows the
# instruction counts are the same.
#
# Prints dsl_overhead's output and writes its table to dsl.md in the results directory
# (benches/results/; TINY=1: target/bench-results/; RESULTS_DIR=... to choose), begun by a
# comment naming the script, the date, the machine and the arguments; a failed run leaves it as
# it was. benches/run.sh runs the same binary as its part 4 and writes dsl.md too.
#
# Usage: benches/dsl-overhead.sh [dsl_overhead args]   (default: --iters 200000 --reps 31;
#                                                       TINY=1: --iters 2000 --reps 3)
#        benches/dsl-overhead.sh --build    (only builds; prints the binary's path, for run.sh)
set -euo pipefail
# shellcheck source=benches/results-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/results-lib.sh"
results_init
cd "$(dirname "$0")/.."
RUSTFLAGS="-C llvm-args=-align-loops=64" CARGO_TARGET_DIR=target/aligned \
    cargo build --release -p shmem-benches --bin dsl_overhead >/dev/null
bin=target/aligned/release/dsl_overhead
if [[ ${1:-} == --build ]]; then
    echo "$bin"
    exit 0
fi
args=("$@")
if ((${#args[@]} == 0)); then
    if [[ ${TINY:-0} == 1 ]]; then
        args=(--iters 2000 --reps 3)
    else
        args=(--iters 200000 --reps 31)
    fi
fi
out=target/bench-results-dsl
mkdir -p "$out"
"$bin" "${args[@]}" | tee "$out/dsl.txt"
{
    echo "One PE, to its own heap (the CPU cost of the expansion, not the wire); the two forms in"
    echo "alternating loops (dsl_overhead ${args[*]}); ns per operation (medians), ratio of the"
    echo "medians and of the fastest loops. Built with loops aligned to 64 bytes"
    echo "(benches/dsl-overhead.sh)."
    echo
    results_dsl_table "$out/dsl.txt"
} >"$out/dsl.md"
results_write dsl.md benches/dsl-overhead.sh "dsl_overhead ${args[*]}" \
    "The CPU cost of the shmem! macro's expansion against the hand-written runtime call it stands for." \
    "$out/dsl.md"
