#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ (cargo-fuzz, libFuzzer, AddressSanitizer, nightly) for a
# bounded time each, one after the other, starting from its seed corpus in fuzz/corpus/<target>
# (read only: what a run finds goes to a scratch directory), with fuzz/dicts/<target>.dict
# where there is one. Fails on the first crash, panic,
# leak or timeout, leaving the input in fuzz/artifacts/<target>/ (add it to the corpus and turn it
# into a regression test once fixed; see README.md, "Fuzzing").
#
#   FUZZ_SECS=30 bash scripts/fuzz.sh [TARGET...]
#
# FUZZ_SECS: seconds per target (default 30). FUZZ_JOBS: how many targets run at once (default
# 1: one process, one core, so that the runs can share a machine; CI, which runs nothing else
# meanwhile, gives each of its 2 cores a target, which halves the wall time and leaves each
# target the same time on a core).
# Installs the nightly toolchain and cargo-fuzz if they are missing. Prints, per target, the
# number of inputs run (libFuzzer's `#N DONE` line).
set -euo pipefail
cd "$(dirname "$0")/.."

secs="${FUZZ_SECS:-30}"

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

cd fuzz
if [ $# -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi

start=$SECONDS
# `cargo fuzz build` takes one target or all of them.
if [ $# -eq 0 ]; then
    cargo +nightly fuzz build
else
    for t in "${targets[@]}"; do cargo +nightly fuzz build "$t"; done
fi
echo "fuzz: built in $((SECONDS - start)) s"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# One target's run: its log and its summary line go to the scratch directory; a crash, panic,
# leak or timeout prints the log's end and fails.
fuzz_one() {
    local t=$1 log="$scratch/$1.log" dict=() runs
    mkdir -p "$scratch/$t" "corpus/$t"
    echo "fuzz: $t for $secs s"
    # -max_total_time bounds the run; -timeout flags one input that runs for 10 s; -rss_limit_mb
    # an input that makes the process grow past 2 GiB.
    [ -f "dicts/$t.dict" ] && dict=(-dict="dicts/$t.dict")
    if ! cargo +nightly fuzz run "$t" "$scratch/$t" "corpus/$t" -- \
        -max_total_time="$secs" -timeout=10 "${dict[@]}" \
        -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
        tail -n 60 "$log"
        echo "fuzz: $t FAILED; the input is in fuzz/artifacts/$t/" >&2
        return 1
    fi
    runs=$(grep -Eo '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 | grep -Eo '[0-9]+' || true)
    [ -n "$runs" ] || runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" |
        grep -Eo '[0-9]+$' | tail -n 1 || true)
    echo "$t: ${runs:-?} inputs in $secs s" >"$scratch/$t.summary"
    echo "fuzz: $(cat "$scratch/$t.summary")"
}
fuzz_index() { fuzz_one "${targets[$1]}"; }

# FUZZ_JOBS targets at a time (scripts/lanes.sh); after a failure no other target starts.
. ../scripts/lanes.sh
status=0
run_lanes FUZZ_JOBS "${FUZZ_JOBS:-1}" 1 fuzz_index ${#targets[@]} || status=$?
echo "fuzz: done in $((SECONDS - start)) s"
for t in "${targets[@]}"; do
    [ -f "$scratch/$t.summary" ] && echo "fuzz:   $(cat "$scratch/$t.summary")"
done
exit $status
