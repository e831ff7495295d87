#!/usr/bin/env bash
# Checks that every published crate of the workspace (those without `publish = false`) can be
# published: `cargo publish --workspace --dry-run` packages each one in dependency order and
# verifies it by building the packaged copy alone, with the workspace's other packaged crates
# standing in for the unpublished ones (a file outside a crate, a path dependency without a
# version or a missing manifest field fails here). Before that, it checks that the files a
# published build needs are in the packages: the checked-in bindings that docs.rs builds use
# (scripts/docs-rs.sh) and each crate's README.
#
# The verification builds for real, so it needs the UCX and PMIx development headers and
# libclang (scripts/install-deps.sh), and it reads the crates.io index. Uncommitted changes are
# packaged as they are (--allow-dirty). Verifies in target/publish-dry-run.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$SECONDS
say() { echo "publish-dry-run: $*"; }

# need CRATE FILE...: each FILE is in CRATE's package.
need() {
    local crate=$1 list f
    shift
    list=$(cargo package --list --allow-dirty -p "$crate")
    for f in "$@"; do
        if ! grep -qxF "$f" <<<"$list"; then
            say "FAIL: $f is not in the $crate package" >&2
            exit 1
        fi
    done
}
need shmem-ucx src/bindings/ucx.rs build.rs wrapper.h README.md
need shmem-pmix src/bindings/pmix.rs build.rs wrapper.h README.md
for crate in shmem-core shmem-syntax shmem-macros shmem-run shmem-capi; do
    need "$crate" README.md
done
say "the packages hold the checked-in bindings and the READMEs"

# Cargo unpacks each verified package from its temporary local registry into
# $CARGO_HOME/registry/src/-<hash of the registry's path>/<crate>-<version> and, when that folder
# is already there from an earlier dry run of the same checkout path, builds the old copy instead
# (it is not checked against the new tarball). Remove those unpacked copies of our own crates so
# that what is verified is what was just packaged.
cargo_home=${CARGO_HOME:-$HOME/.cargo}
for crate in $(cargo metadata --no-deps --format-version 1 |
    python3 -c 'import json, sys; print(" ".join(p["name"] for p in json.load(sys.stdin)["packages"]))'); do
    rm -rf "$cargo_home"/registry/src/-*/"$crate"-[0-9]*
done
# For the same reason the build folder starts empty: cargo takes a registry crate of an unchanged
# version for unchanged and would link the old build of it.
rm -rf target/publish-dry-run

# A target directory of its own: the packaged shmem-capi's build script writes the compiler
# wrappers into its profile directory, which in the workspace's target/ would then point at the
# packaged copy's headers.
CARGO_TARGET_DIR=target/publish-dry-run cargo publish --workspace --dry-run --allow-dirty
say "every published crate packages and builds alone ($((SECONDS - start)) s)"
