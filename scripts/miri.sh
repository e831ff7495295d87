#!/usr/bin/env bash
# Runs under Miri the unit tests that call no foreign code (no UCX, no PMIx): pure Rust whose
# unsafe code and integer/pointer arithmetic Miri checks for undefined behaviour.
#
# Miri interprets Rust only, so each entry below must pick tests that never reach an `extern`
# function or a linkme section (`#[symmetric]` statics): those stop Miri with "unsupported
# operation". Build scripts (bindgen) run natively, as in a normal build, and nothing is linked,
# so the packages that bind UCX and PMIx still build.
#
# Installs the nightly toolchain with Miri if it is missing, builds Miri's sysroot once (cached in
# ~/.cache/miri), and builds into target/miri.
set -euo pipefail
cd "$(dirname "$0")/.."

# What runs: "package | arguments of `cargo miri test -p package`", the longest first. Add a
# line to cover more; a package that does not exist (yet) is skipped with a message, a filter
# that matches no test is reported.
TESTS=(
    # The macros' syntax: token scanning, parsing, checks, expansion, the error collector (the
    # longest entry: about 110 s here).
    "shmem-syntax | --lib"
    # The direct path's copy engine: every short length, at page offsets that put a page
    # boundary inside the source or the destination (Miri's CPU has no AVX2, so this covers
    # the SSE2 and memcpy paths; about 90 s).
    "shmem-core   | --lib mem::copy::"
    # The symmetric-heap allocator (first fit, alignment, coalescing).
    "shmem-core   | --lib mem::allocator::"
    # The heap layout: regions, page rounding, overflow, placement of statics on cache lines.
    # (The linkme list of statics itself cannot be read under Miri: extern static
    # `__start_linkme_...` is unsupported.)
    "shmem-core   | --lib mem::layout::"
    # The start-up record each PE publishes (encode, decode of truncated and foreign bytes).
    "shmem-core   | --lib runtime::peer_info::"
    # Parsing of the SHMEM_* settings.
    "shmem-core   | --lib config::"
    # The active-message protocol's checks and writes (strided puts and gets, puts with signal,
    # batches, the acknowledgement counts), on a receiving PE's own memory (`FuzzPe`).
    "shmem-core   | --lib transport::am::"
    # The launch protocol: frames and messages (encode, decode of malformed input), and the
    # parsing of the environment the launcher gives its PEs.
    "shmem-launch | --lib wire"
    "shmem-launch | --lib tests::environment_is_parsed_and_checked"
    # shmem-ucx's status-pointer decoding and the process-wide wait hook (no UCX call).
    "shmem-ucx    | --lib request::"
    # shmem-pmix's key checks, rank lists and info construction; the error-text test asks
    # PMIx for its message (PMIx_Error_string), so it stays out.
    "shmem-pmix   | --lib -- --skip error_text_comes_from_pmix"
)

# Not run: shmem-macros (only the proc-macro entry points over shmem-syntax; Miri does not run
# unit tests of proc-macro crates), and everything that
# calls UCX, PMIx or the OS beyond memory and threads (the bootstrap's socket tests, the
# integration tests).

# Strict provenance: a pointer made from a bare integer is an error, not a warning. Isolation
# stays on (no test needs the host's clock, environment or files).
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-strict-provenance}"
export RUST_BACKTRACE="${RUST_BACKTRACE:-0}"

start=$SECONDS
if ! cargo +nightly miri --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal --component miri,rust-src
fi
# An existing nightly may have Miri without the standard library's source it builds from.
if ! rustup component list --toolchain nightly --installed 2>/dev/null | grep -q '^rust-src'; then
    rustup component add --toolchain nightly rust-src
fi
cargo +nightly miri setup
echo "miri: toolchain and sysroot ready after $((SECONDS - start)) s"

# The entries go to MIRI_JOBS lanes (default 1; CI runs 2, one per core: Miri interprets a
# test binary on one thread), the longest first so that the lanes end together
# (scripts/lanes.sh). Each entry's output is printed whole once it ends. The lanes share
# target/miri: cargo builds under a lock and releases it before it runs the tests.
. scripts/lanes.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One entry: its output, then a line saying how it went, printed under the lock; a failure
# leaves a file naming it and fails.
run_entry() {
    local i=$1 pkg args t log ran
    pkg=$(echo "${TESTS[i]%%|*}" | xargs)
    read -r -a args <<<"${TESTS[i]#*|}"
    log="$work/$i.log"
    if ! cargo pkgid -p "$pkg" >/dev/null 2>&1; then
        echo "miri: skipped $pkg ${args[*]}: no package $pkg in this workspace (yet)" >"$log"
    else
        t=$SECONDS
        echo "miri: $pkg ${args[*]}" >"$log"
        # Miri ignores optimizations (and warns of them): the runtime's dev opt-level
        # (Cargo.toml) is put back to 0 here.
        if cargo +nightly miri test --config "profile.dev.package.shmem-core.opt-level=0" \
            -p "$pkg" "${args[@]}" >>"$log" 2>&1; then
            ran=$(grep -Eo '^test result: ok\. [0-9]+ passed' "$log" |
                awk '{s += $4} END {print s + 0}')
            if [ "$ran" -eq 0 ]; then
                echo "miri: note: $pkg ${args[*]} matches no test yet" >>"$log"
            fi
            echo "miri: $pkg ${args[*]}: $ran tests passed in $((SECONDS - t)) s" >>"$log"
        else
            echo "miri: $pkg ${args[*]}: FAILED after $((SECONDS - t)) s" >>"$log"
            echo "$pkg ${args[*]}" >"$work/$i.failed"
        fi
    fi
    (
        flock 9
        cat "$log"
    ) 9>"$work/print.lock"
    [ ! -e "$work/$i.failed" ]
}

rc=0
run_lanes MIRI_JOBS "${MIRI_JOBS:-1}" 0 run_entry ${#TESTS[@]} || rc=$?
[ "$rc" -ne 2 ] || exit 2

echo "miri: done in $((SECONDS - start)) s"
failed=()
for ((i = 0; i < ${#TESTS[@]}; i++)); do
    [ -f "$work/$i.failed" ] && failed+=("$(cat "$work/$i.failed")")
done
if [ ${#failed[@]} -ne 0 ]; then
    printf 'miri: FAILED: %s\n' "${failed[@]}" >&2
    exit 1
fi
