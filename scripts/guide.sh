#!/usr/bin/env bash
# The guide (docs/, an mdBook): builds it and runs the commands of its "Getting started".
#
#   bash scripts/guide.sh            # install mdbook if missing, build the book, run the chapter
#   bash scripts/guide.sh --book     # only the book
#
# 1. Installs mdbook $MDBOOK_VERSION with cargo when `mdbook --version` is another or missing.
# 2. Builds the book (`mdbook build docs`, into docs/book/) and fails on any warning or error
#    mdbook prints (a broken link, a missing chapter: book.toml has create-missing = false).
# 3. Runs every ```sh block of docs/src/getting-started.md, in order, in one bash with
#    `set -euo pipefail`, in a scratch directory where this checkout is `shmem-rs` (a symlink),
#    printing each block before it runs. The ```rust block after the comment
#    `<!-- guide.sh writes FILE -->` is written, as the page shows it, into FILE (relative to
#    the directory the commands before it left) at that point of the sequence: the chapter's
#    program is the text that is compiled and run. Builds reuse this workspace's: the commands
#    run with CARGO_TARGET_DIR=target/ of this checkout, and each crate the commands make in the
#    scratch directory gets its `target` as a symlink to it, so `target/debug/NAME` in the
#    chapter is where cargo put NAME. The scratch directory is ${TMPDIR:-/tmp}/shmem-guide-N
#    (N from this checkout's path), made anew by each run and removed at its end. `cargo
#    install` goes into the scratch directory (CARGO_INSTALL_ROOT, first on PATH), not
#    ~/.cargo. The toolchain is the one rust-toolchain.toml pins (RUSTUP_TOOLCHAIN), as for the
#    workspace.
#
# The Rust blocks of every chapter are compiled by `cargo test -p shmem-guide --doc` (docs/).
# Prints how long each step took; exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
MDBOOK_VERSION=${MDBOOK_VERSION:-0.5.4}
only_book=0
[ "${1:-}" = "--book" ] && only_book=1

step() { printf '\nguide.sh: %s\n' "$*"; }
t0=$SECONDS

# 1. mdbook. Without the default features `serve` and `watch` (a web server and a file
# watcher, which a build does not use) it builds in half the time.
have=$(mdbook --version 2>/dev/null || true)
if [ "$have" != "mdbook v$MDBOOK_VERSION" ]; then
    step "installing mdbook $MDBOOK_VERSION (found: ${have:-none})"
    t=$SECONDS
    cargo install mdbook --locked --version "$MDBOOK_VERSION" --no-default-features \
        --features search
    step "mdbook installed in $((SECONDS - t)) s"
fi

# 2. The book.
step "mdbook build docs"
t=$SECONDS
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! mdbook build docs >"$log" 2>&1; then
    cat "$log"
    echo "guide.sh: mdbook build failed" >&2
    exit 1
fi
cat "$log"
if grep -Eq '(^|[^A-Za-z])(WARN|ERROR)([^A-Za-z]|$)' "$log"; then
    echo "guide.sh: mdbook printed warnings (above): fix them" >&2
    exit 1
fi
step "book built in $((SECONDS - t)) s: docs/book/index.html"
[ "$only_book" = 1 ] && exit 0

# 3. The commands of "Getting started".
chapter=docs/src/getting-started.md
# A fixed place per checkout: cargo tells packages apart by their path, so the same path in the
# next run lets it reuse what this one built of the checkout's crates.
scratch=${TMPDIR:-/tmp}/shmem-guide-$(printf '%s' "$root" | cksum | cut -d' ' -f1)
rm -rf "$scratch"
mkdir -p "$scratch"
trap 'rm -f "$log"; rm -rf "$scratch"' EXIT
ln -s "$root" "$scratch/shmem-rs"
mkdir -p "$scratch/.install/bin"
script=$scratch/.getting-started.sh
awk -v chapter="$chapter" '
    function fail(msg) { printf "guide.sh: %s:%d: %s\n", chapter, NR, msg > "/dev/stderr"; bad = 1; exit 1 }
    /^<!-- guide\.sh writes [^ ]+ -->$/ { file = $4; next }
    !in_block && /^```/ {
        info = substr($0, 4)
        if (info == "sh") { in_block = "sh"; n++; body = ""; next }
        if (file != "" && info ~ /^rust/) { in_block = "file"; body = ""; next }
        in_block = "other"; next
    }
    in_block && /^```$/ {
        if (in_block == "sh") {
            printf "__guide_show %d <<'\''__GUIDE_BLOCK__'\''\n%s__GUIDE_BLOCK__\n%s\n", n, body, body
        } else if (in_block == "file") {
            printf "echo \"guide.sh: writing %s (the chapter'\''s program)\"\n", file
            printf "cat > %s <<'\''__GUIDE_FILE__'\''\n%s__GUIDE_FILE__\n", file, body
            file = ""
        }
        in_block = ""; next
    }
    in_block == "file" && /^#( |$)/ { fail("hidden line in the block guide.sh writes: the page would not show it") }
    in_block == "sh" || in_block == "file" { body = body $0 "\n" }
    END { if (!bad && file != "") fail("no ```rust block after the guide.sh marker") }
' "$chapter" >"$script.body"
blocks=$(grep -c '^__guide_show ' "$script.body" || true)
[ "$blocks" -gt 0 ] || { echo "guide.sh: no \`\`\`sh block in $chapter" >&2; exit 1; }
{
    cat <<'EOF'
set -euo pipefail
__guide_show() { printf '\n--- guide.sh: block %s of getting-started.md ---\n' "$1"; sed 's/^/$ /'; }
# Each crate made in the scratch directory builds into the workspace's target directory.
__guide_link() {
    local d
    for d in "$GUIDE_SCRATCH"/*/; do
        d=${d%/}
        if [ ! -L "$d" ] && [ -f "$d/Cargo.toml" ] && [ ! -e "$d/target" ]; then
            ln -s "$CARGO_TARGET_DIR" "$d/target"
        fi
    done
    return 0
}
trap __guide_link DEBUG
EOF
    cat "$script.body"
} >"$script"

toolchain=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)
step "running the $blocks shell blocks of $chapter in $scratch"
t=$SECONDS
(
    cd "$scratch"
    export GUIDE_SCRATCH=$scratch
    export CARGO_TARGET_DIR=$root/target
    export CARGO_INSTALL_ROOT=$scratch/.install
    export PATH=$scratch/.install/bin:$PATH
    [ -n "$toolchain" ] && export RUSTUP_TOOLCHAIN=$toolchain
    bash "$script"
) || {
    echo "guide.sh: a command of $chapter failed (the last block printed above)" >&2
    exit 1
}
step "getting-started.md: $blocks blocks ran in $((SECONDS - t)) s (all of guide.sh: $((SECONDS - t0)) s)"
