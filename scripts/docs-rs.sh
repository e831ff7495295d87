#!/usr/bin/env bash
# Proves that docs.rs can document every published crate of the workspace: builds each one's
# documentation the way a docs.rs builder does, on a machine that lacks what such a builder
# lacks.
#
# What it checks:
# 1. Inside a private mount namespace (`unshare --mount`, as root), it hides UCX's and PMIx's
#    development headers (/usr/include/{ucp,ucs,uct,ucm}, /usr/include/pmix*, the include
#    directories pkg-config names for ucx and pmix), the directories of their pkg-config files
#    (and sets PKG_CONFIG_LIBDIR and PKG_CONFIG_PATH to /nonexistent), and every libclang
#    (/usr/lib/llvm-*, and /dev/null over each libclang*.so* that ldconfig or the usual library
#    directories still name; LIBCLANG_PATH=/nonexistent). It then checks that they are gone:
#    pkg-config finds neither library, the C preprocessor finds neither header, and no libclang
#    is a loadable file. What is already absent is skipped: a machine without the headers passes
#    too. Without root or `unshare` it says so and goes on with the environment variables alone.
# 2. For each published crate (from `cargo metadata`), `DOCS_RS=1 cargo doc --no-deps -p <crate>`
#    with the crate's [package.metadata.docs.rs] features and rustdoc-args and with
#    RUSTDOCFLAGS="-D warnings" (so a broken intra-doc link or missing docs fail it), into
#    target/docs-rs. `--cfg docsrs` runs on the stable toolchain here: nothing may use a
#    nightly-only feature under it.
# 3. That the DOCS_RS builds of shmem-ucx and shmem-pmix never ran pkg-config or bindgen: their
#    build scripts printed no link directives, and the bindings they left in OUT_DIR are byte for
#    byte the checked-in copies (src/bindings/*.rs; a bindgen run would have written its own).
# Fails on the first error. The crates' normal builds still run bindgen on the system headers
# (see shmem-ucx/build.rs); scripts/regen-bindings.sh refreshes the checked-in copies.
set -euo pipefail
cd "$(dirname "$0")/.."

# The published crates: every workspace member without `publish = false` (cargo metadata says
# `"publish": null` for those), so that a new crate is covered without a change here.
mapfile -t crates < <(cargo metadata --no-deps --format-version 1 |
    python3 -c 'import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["publish"] is None:
        print(p["name"])')
[ "${#crates[@]}" -gt 0 ] || { echo "docs-rs: cargo metadata lists no published crate" >&2; exit 1; }

say() { echo "docs-rs: $*"; }

# Step 1: re-run this script in a private mount namespace, where the hiding mounts stay.
if [ -z "${DOCS_RS_SCRIPT_INSIDE:-}" ]; then
    start=$SECONDS
    if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null &&
        unshare --mount --propagation private true 2>/dev/null; then
        DOCS_RS_SCRIPT_INSIDE=namespace unshare --mount --propagation private \
            bash "$0" "$@"
    else
        say "WARNING: not root or no unshare: the headers, pkg-config files and libclang stay" \
            "visible; only the environment variables hide them" >&2
        DOCS_RS_SCRIPT_INSIDE=plain bash "$0" "$@"
    fi
    say "all ${#crates[@]} published crates document as on docs.rs ($((SECONDS - start)) s)"
    exit 0
fi

# Collected before hiding: where pkg-config says the headers and .pc files are.
inc_dirs=()
pc_dirs=()
if command -v pkg-config >/dev/null; then
    for lib in ucx pmix; do
        if pkg-config --exists "$lib" 2>/dev/null; then
            for flag in $(pkg-config --cflags-only-I "$lib"); do
                dir=${flag#-I}
                # /usr/include itself stays: only the libraries' own directories go.
                if [ "$dir" != /usr/include ]; then inc_dirs+=("$dir"); fi
            done
            pc_dirs+=("$(pkg-config --variable=pcfiledir "$lib")")
        fi
    done
fi

hidden=0
# hide PATH: an empty tmpfs over a directory, /dev/null over a file; absent paths are skipped.
hide() {
    local path=$1
    if [ -d "$path" ]; then
        mount -t tmpfs -o ro,size=4k docs-rs-hidden "$path"
    elif [ -e "$path" ]; then
        mount --bind /dev/null "$path"
    else
        return 0
    fi
    hidden=$((hidden + 1))
}

# libclang candidates: what ldconfig knows, plus the usual directories.
libclang_files() {
    {
        ldconfig -p 2>/dev/null | awk '/libclang/ { print $NF }'
        compgen -G '/usr/lib/llvm-*/lib/libclang*.so*' || true
        compgen -G '/usr/lib/*/libclang*.so*' || true
        compgen -G '/usr/lib/libclang*.so*' || true
        compgen -G '/usr/lib64/libclang*.so*' || true
        compgen -G '/usr/local/lib/libclang*.so*' || true
        compgen -G '/usr/local/lib/*/libclang*.so*' || true
    } | sort -u
}

if [ "$DOCS_RS_SCRIPT_INSIDE" = namespace ]; then
    for d in /usr/include/ucp /usr/include/ucs /usr/include/uct /usr/include/ucm \
        /usr/include/pmix* /usr/local/include/ucp /usr/local/include/ucs \
        /usr/local/include/uct /usr/local/include/pmix* "${inc_dirs[@]}" "${pc_dirs[@]}" \
        /usr/lib/llvm-*; do
        hide "$d"
    done
    # What is left of libclang after the llvm directories went: files outside them.
    while read -r f; do
        if [ -s "$f" ]; then hide "$f"; fi
    done < <(libclang_files)
    say "hid $hidden paths (headers, pkg-config files, libclang) in a private mount namespace"
fi
export PKG_CONFIG_LIBDIR=/nonexistent PKG_CONFIG_PATH=/nonexistent LIBCLANG_PATH=/nonexistent
unset PKG_CONFIG_SYSROOT_DIR CLANG_PATH BINDGEN_EXTRA_CLANG_ARGS

# The proof that they are gone (what remains visible fails here, before any build).
fail() {
    say "FAIL: $*" >&2
    exit 1
}
if [ "$DOCS_RS_SCRIPT_INSIDE" = namespace ]; then
    for lib in ucx pmix; do
        if command -v pkg-config >/dev/null &&
            env -u PKG_CONFIG_LIBDIR -u PKG_CONFIG_PATH pkg-config --exists "$lib"; then
            fail "pkg-config still finds $lib"
        fi
    done
    if command -v cc >/dev/null; then
        for h in ucp/api/ucp.h pmix.h; do
            inc=()
            for d in "${inc_dirs[@]}"; do inc+=("-I$d"); done
            if printf '#include <%s>\n' "$h" | cc -E -x c "${inc[@]}" - >/dev/null 2>&1; then
                fail "the C preprocessor still finds <$h>"
            fi
        done
    fi
    while read -r f; do
        if [ -s "$f" ]; then fail "libclang is still a loadable file: $f"; fi
    done < <(libclang_files)
    if command -v llvm-config >/dev/null && llvm-config --libdir >/dev/null 2>&1; then
        fail "llvm-config still runs ($(command -v llvm-config))"
    fi
    say "checked: no ucx/pmix for pkg-config, no <ucp/api/ucp.h> or <pmix.h>, no libclang"
fi

# Step 2: the documentation of each crate, as docs.rs builds it.
target="${CARGO_TARGET_DIR:-target}/docs-rs"
metadata=$(cargo metadata --no-deps --format-version 1)
messages=$(mktemp)
trap 'rm -f "$messages"' EXIT
for crate in "${crates[@]}"; do
    t0=$SECONDS
    # [package.metadata.docs.rs]: features and rustdoc-args.
    docs=$(jq -c --arg c "$crate" \
        '.packages[] | select(.name == $c) | .metadata.docs.rs // {}' <<<"$metadata")
    args=()
    if [ "$(jq -r '."all-features" // false' <<<"$docs")" = true ]; then
        args+=(--all-features)
    fi
    if [ "$(jq -r '."no-default-features" // false' <<<"$docs")" = true ]; then
        args+=(--no-default-features)
    fi
    features=$(jq -r '(.features // []) | join(",")' <<<"$docs")
    if [ -n "$features" ]; then args+=(--features "$features"); fi
    rustdoc_args=$(jq -r '(."rustdoc-args" // []) | join(" ")' <<<"$docs")
    DOCS_RS=1 RUSTDOCFLAGS="-D warnings $rustdoc_args" CARGO_TARGET_DIR="$target" \
        cargo doc --no-deps -p "$crate" "${args[@]}" --message-format=json-render-diagnostics \
        >>"$messages"
    say "$crate documented (${args[*]:-default features}; rustdoc $rustdoc_args) in" \
        "$((SECONDS - t0)) s"
done

# Step 3: the bindings came from the checked-in copies, with nothing linked.
check_bindings() {
    local crate=$1 generated=$2 checked_in=$3 id runs
    id=$(cargo pkgid "$crate")
    runs=$(jq -c --arg id "$id" \
        'select(.reason == "build-script-executed" and .package_id == $id)' "$messages")
    [ -n "$runs" ] || fail "no build-script run of $crate in cargo's messages"
    while read -r run; do
        [ "$(jq -r '(.linked_libs + .linked_paths) | length' <<<"$run")" = 0 ] ||
            fail "$crate's build script printed link directives: it did not take the DOCS_RS path"
        out=$(jq -r .out_dir <<<"$run")
        cmp -s "$out/$generated" "$crate/$checked_in" ||
            fail "$out/$generated is not $crate/$checked_in: bindgen ran instead of the copy"
    done <<<"$runs"
    say "$crate: bindings are the checked-in $checked_in; no pkg-config, bindgen or linking"
}
check_bindings shmem-ucx ucp.rs src/bindings/ucx.rs
check_bindings shmem-pmix pmix.rs src/bindings/pmix.rs
