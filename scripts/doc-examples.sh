#!/usr/bin/env bash
# Fails if a public item of shmem-core has no code example in its documentation.
#
# The check is rustdoc's lint `missing_doc_code_examples`, which is nightly-only: with
# `--cfg doc_examples_check`, shmem-core's lib.rs enables the lint's feature and denies the lint,
# and makes the modules that hold the public API public (each is declared twice in its parent,
# private and `#[cfg(doc_examples_check)] pub`), because the lint looks only at items public under
# their own path, not at re-exports. The lint leaves out constants,
# statics, type aliases, modules, fields, variants and trait impls; their examples (where the
# crate has them) are not checked here. `cargo test -p shmem-core --doc` runs the examples.
#
# Installs the nightly toolchain (minimal profile, nothing else) if it is missing. Builds into
# target/doc-examples, so that the normal documentation in target/doc is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo +nightly --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
# Links from module docs to items that stay private (in normal builds the modules are private
# too, so the links are fine there) are allowed.
RUSTDOCFLAGS="--cfg doc_examples_check -A rustdoc::private_intra_doc_links" \
    CARGO_TARGET_DIR=target/doc-examples \
    cargo +nightly doc -p shmem-core --no-deps 2>&1 | tee "$log" || status=$?

missing=$(grep -c 'missing code example in this documentation' "$log" || true)
if [ "$status" -ne 0 ] || [ "$missing" -ne 0 ]; then
    echo "doc-examples: $missing public item(s) of shmem-core without an example (see above)" >&2
    exit 1
fi
echo "doc-examples: every public item of shmem-core that the lint checks has an example"
