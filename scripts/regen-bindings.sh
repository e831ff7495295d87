#!/usr/bin/env bash
# Regenerates the checked-in UCX and PMIx bindings (shmem-ucx/src/bindings/ucx.rs,
# shmem-pmix/src/bindings/pmix.rs) that builds with DOCS_RS set use in place of bindgen.
#
# The copies are the build scripts' own output: this builds shmem-ucx and shmem-pmix normally
# (pkg-config and bindgen on this machine's headers, with exactly the build scripts' settings),
# asks cargo where each build script wrote its bindings (OUT_DIR) and copies them into the crate
# with a header naming the library version they came from. Run it after changing a build
# script's allowlists or when moving to newer headers, and commit the result. Needs the
# development headers (libucx-dev, libpmix-dev), pkg-config and libclang; builds into
# target/regen-bindings.
set -euo pipefail
cd "$(dirname "$0")/.."

# Unset so that this build runs bindgen even when called from a docs.rs-like environment.
unset DOCS_RS

messages=$(cargo build -p shmem-ucx -p shmem-pmix --lib \
    --message-format=json)

# The OUT_DIR of a package's build script, from cargo's `build-script-executed` message.
out_dir() {
    local id
    id=$(cargo pkgid "$1")
    jq -r --arg id "$id" 'select(.reason == "build-script-executed" and .package_id == $id)
        | .out_dir' <<<"$messages" | tail -n 1
}

# copy PACKAGE GENERATED DEST PKG_CONFIG_NAME
copy() {
    local dir src dest version
    dir=$(out_dir "$1")
    if [ -z "$dir" ] || [ ! -f "$dir/$2" ]; then
        echo "regen-bindings: no $2 from $1's build script (OUT_DIR '$dir')" >&2
        exit 1
    fi
    src="$dir/$2"
    dest="$1/$3"
    version=$(pkg-config --modversion "$4")
    mkdir -p "$(dirname "$dest")"
    {
        echo "// Checked-in bindings for DOCS_RS builds only (see build.rs): $1's build script's"
        echo "// bindgen output for $4 $version. Regenerate with scripts/regen-bindings.sh."
        cat "$src"
    } >"$dest.tmp"
    mv "$dest.tmp" "$dest"
    echo "regen-bindings: $dest from $4 $version ($(wc -l <"$dest") lines)"
}

copy shmem-ucx ucp.rs src/bindings/ucx.rs ucx
copy shmem-pmix pmix.rs src/bindings/pmix.rs pmix
