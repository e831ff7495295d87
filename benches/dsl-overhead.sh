#!/usr/bin/env bash
# `shmem!` against the hand-written call, timed side by side in one run. Built with loops aligned
# to 64 bytes (in a separate target directory) so that where the linker happens to place each
# loop does not masquerade as a difference between the two forms; `dsl-callgrind.sh` shows the
# instruction counts are the same.
#
# Usage: benches/dsl-overhead.sh [dsl_overhead args, e.g. --iters 200000 --reps 31]
#        benches/dsl-overhead.sh --build    (only builds; prints the binary's path, for run.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
RUSTFLAGS="-C llvm-args=-align-loops=64" CARGO_TARGET_DIR=target/aligned \
    cargo build --release -p shmem-benches --bin dsl_overhead >/dev/null
bin=target/aligned/release/dsl_overhead
if [[ ${1:-} == --build ]]; then
    echo "$bin"
    exit 0
fi
exec "$bin" "$@"
