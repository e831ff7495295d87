#!/usr/bin/env bash
# `shmem!` against the hand-written call, timed side by side in one run. Built with loops aligned
# to 64 bytes (in a separate target directory) so that where the linker happens to place each
# loop does not masquerade as a difference between the two forms; `dsl-callgrind.sh` shows the
# instruction counts are the same.
set -euo pipefail
cd "$(dirname "$0")/.."
RUSTFLAGS="-C llvm-args=-align-loops=64" CARGO_TARGET_DIR=target/aligned \
    cargo build --release -p shmem-benches --bin dsl_overhead >/dev/null
exec target/aligned/release/dsl_overhead "$@"
