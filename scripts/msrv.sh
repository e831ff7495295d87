#!/usr/bin/env bash
# Checks that the workspace builds with its declared minimum Rust version: reads `rust-version`
# from the manifests (the highest one, should a crate ask for more than the workspace's), installs
# that toolchain if it is missing, and type-checks every crate and target with it. Builds into
# target/msrv so that the normal build's artifacts stay untouched.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$SECONDS
msrv=$(cargo metadata --no-deps --format-version 1 |
    grep -o '"rust_version":"[^"]*"' | cut -d'"' -f4 | sort -V | tail -n 1)
if [ -z "$msrv" ]; then
    echo "msrv: no rust-version in the manifests ([workspace.package] in Cargo.toml)" >&2
    exit 1
fi
if ! cargo "+$msrv" --version >/dev/null 2>&1; then
    rustup toolchain install "$msrv" --profile minimal
fi
echo "msrv: checking the workspace with Rust $msrv ($(cargo "+$msrv" --version))"
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/msrv" \
    cargo "+$msrv" check --workspace --all-targets
echo "msrv: Rust $msrv builds the workspace ($((SECONDS - start)) s)"
