#!/usr/bin/env bash
# The C API against the Rust API on the same runtime, for small operations: the C twin
# benches/c/latency.c (built with this tree's target/release/shmemcc -O2 -falign-loops=64, so
# on libshmem.so) against the Rust benchmark benches/src/bin/latency.rs (built with loops
# aligned to 64 bytes, as benches/run.sh builds it), both with their `small` option (only the
# one-sided 8-byte cases), 2 PEs under target/release/shmemrun. The two run ALTERNATING, one
# job after the other, ROUNDS times (the order swapped every round), so that the noise of a
# shared machine hits both alike.
#
# Prints one line per row (the 16 rows of the README's "C programs on this runtime" table: put
# + quiet, get, p + quiet, g, fetch_add, add + quiet, compare_swap, swap, 8 B, on the heap and
# on a global/static): Rust ns and C ns (the median over rounds of each job's median), and
# C/Rust, the median of the per-round ratios.
#
# With BASE=DIR (another checkout of this repository, e.g. a `git worktree add --detach DIR
# HEAD` of the commit to compare with), the same C program is also built with DIR's shmemcc
# (so on DIR's libshmem.so) and run under DIR's shmemrun in the same rounds (Rust, C, C base,
# rotated): the columns `C base` and `base/Rust` come next to the others, from one invocation.
#
# Without BASE the table also goes to c-twin.md in the results directory (benches/results/;
# TINY=1: target/bench-results/; RESULTS_DIR=... to choose), begun by a comment naming the
# script, the date, the machine and the knobs; a run in which a job failed leaves it as it was.
# With BASE (an A/B comparison) it is only printed.
#
# Usage: benches/c-twin.sh                  (from anywhere)
#        BASE=/path/to/checkout benches/c-twin.sh
#        TINY=1 benches/c-twin.sh           (a quick check: ROUNDS=1 ITERS=200 REPS=1)
# Knobs (environment): ROUNDS=5 ITERS=20000 REPS=15 JOB_TIMEOUT=300
#   NO_BUILD=1  use the binaries built by an earlier run (target/c-twin/)
# Raw CSVs: target/c-twin/NAME.ROUND.csv.
set -euo pipefail

# shellcheck source=benches/results-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/results-lib.sh"
results_init
cd "$(dirname "$0")/.."
if [[ ${TINY:-0} == 1 ]]; then
    ROUNDS=${ROUNDS:-1} ITERS=${ITERS:-200} REPS=${REPS:-1}
fi
ROUNDS=${ROUNDS:-5}
ITERS=${ITERS:-20000}
REPS=${REPS:-15}
JOB_TIMEOUT=${JOB_TIMEOUT:-300}
BASE=${BASE:-}
out=target/c-twin
mkdir -p "$out"

if [[ ${NO_BUILD:-0} != 1 ]]; then
    echo "== building" >&2
    bench_build
    RUSTFLAGS="-C llvm-args=-align-loops=64" CARGO_TARGET_DIR=target/aligned \
        cargo build --release -p shmem-benches --bin latency >&2
    target/release/shmemcc -O2 -falign-loops=64 -Wall -o "$out/latency-c" benches/c/latency.c
    if [[ -n $BASE ]]; then
        (cd "$BASE" && cargo build --release -p shmem-capi -p shmem-run >&2)
        # This tree's latency.c (it has `small`), on BASE's library.
        "$BASE/target/release/shmemcc" -O2 -falign-loops=64 -Wall -o "$out/latency-c-base" \
            benches/c/latency.c
    fi
fi

jobs=(rust c)
[[ -n $BASE ]] && jobs+=(base)
rm -f "$out"/*.csv

run_job() { # NAME ROUND
    local csv="$out/$1.$2.csv" t=(timeout -k 10 "$JOB_TIMEOUT")
    case $1 in
    rust) "${t[@]}" target/release/shmemrun -n 2 target/aligned/release/latency --csv --small \
        --iters "$ITERS" --reps "$REPS" >"$csv" ;;
    c) "${t[@]}" target/release/shmemrun -n 2 "$out/latency-c" csv small iters "$ITERS" \
        reps "$REPS" >"$csv" ;;
    base) "${t[@]}" "$BASE/target/release/shmemrun" -n 2 "$out/latency-c-base" csv small \
        iters "$ITERS" reps "$REPS" >"$csv" ;;
    esac
}

failed=0
for ((r = 1; r <= ROUNDS; r++)); do
    order=("${jobs[@]}")
    if ((r % 2 == 0)); then # reversed every other round
        order=()
        for ((k = ${#jobs[@]} - 1; k >= 0; k--)); do order+=("${jobs[k]}"); done
    fi
    echo "== round $r of $ROUNDS: ${order[*]}" >&2
    for j in "${order[@]}"; do
        if ! run_job "$j" "$r"; then
            echo "c-twin.sh: job $j round $r failed" >&2
            failed=$((failed + 1))
        fi
    done
done

echo "# C twin against Rust, 8 B, ns per operation (median over $ROUNDS rounds; ratios: median of"
echo "# the per-round ratios); $ITERS iterations x $REPS loops per job; $(date -u +%F' '%H:%M) UTC,"
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg)"
for f in "$out"/*.csv; do
    n=${f##*/}
    awk -F, -v job="${n%%.*}" -v round="$(echo "$n" | cut -d. -f2)" \
        'NF == 5 && $2 == 8 { print job "," round "," $1 "," $3 "," $4 }' "$f"
done | awk -F, -v base="$BASE" '
    function median(key,    n, i, j, t, a) {
        n = cnt[key]
        for (i = 1; i <= n; i++) a[i] = v[key, i]
        for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j > 0 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        if (n == 0) return -1
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function add(key, x) { v[key, ++cnt[key]] = x }
    {
        obj = ($4 == "static") ? "global" : "heap"
        if (($3 == "put + quiet" || $3 == "get") && $4 != "aligned" && $4 != "static") next
        if ($4 != "aligned" && $4 != "heap" && $4 != "static") next
        row = $3 SUBSEP obj
        val[$1, row, $2] = $5
        rows[row] = 1
        rounds[$2] = 1
    }
    END {
        n = split("put + quiet,get,p + quiet,g,fetch_add,add + quiet,compare_swap,swap", ops, ",")
        hdr = sprintf("| %-13s | %-6s | %8s | %8s | %6s |", "case (8 B)", "object", "Rust ns", "C ns", "C/Rust")
        sep = "|---------------|--------|---------:|---------:|-------:|"
        if (base != "") { hdr = hdr sprintf(" %9s | %9s |", "C base ns", "base/Rust"); sep = sep "----------:|----------:|" }
        print hdr; print sep
        split("heap global", objs, " ")
        for (o = 1; o <= 2; o++) for (k = 1; k <= n; k++) {
            row = ops[k] SUBSEP objs[o]
            for (r in rounds) {
                if ((("rust", row, r) in val)) add("rust" SUBSEP row, val["rust", row, r])
                if ((("c", row, r) in val)) add("c" SUBSEP row, val["c", row, r])
                if ((("base", row, r) in val)) add("base" SUBSEP row, val["base", row, r])
                if ((("rust", row, r) in val) && (("c", row, r) in val)) add("cr" SUBSEP row, val["c", row, r] / val["rust", row, r])
                if ((("rust", row, r) in val) && (("base", row, r) in val)) add("br" SUBSEP row, val["base", row, r] / val["rust", row, r])
            }
            line = sprintf("| %-13s | %-6s | %8.1f | %8.1f | %6.2f |", ops[k], objs[o], median("rust" SUBSEP row), median("c" SUBSEP row), median("cr" SUBSEP row))
            if (base != "") line = line sprintf(" %9.1f | %9.2f |", median("base" SUBSEP row), median("br" SUBSEP row))
            print line
        }
    }' | tee "$out/table.md"
if [[ -n $BASE ]]; then
    exit 0
fi
if ((failed > 0)); then
    echo "c-twin.sh: FAILED: $failed jobs failed; c-twin.md in $RESULTS_DIR is left as it was" >&2
    exit 1
fi
{
    echo "benches/c/latency.c built with this project's shmemcc (-O2 -falign-loops=64; on"
    echo "libshmem.so, the OpenSHMEM C API over shmem-core) against the Rust benchmark"
    echo "benches/src/bin/latency.rs (loops aligned to 64 bytes), both with their \`small\` option:"
    echo "the one-sided 8-byte operations, on the heap and on a global (C) / static (Rust), 2 PEs"
    echo "under shmemrun. The two alternate job by job, the order swapped every round. ns per"
    echo "operation: the median over $ROUNDS rounds of each job's median of $REPS loops x $ITERS"
    echo "operations; C/Rust: the median of the per-round ratios. Load average at the end of the"
    echo "run: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo
    cat "$out/table.md"
} >"$out/c-twin.md"
results_write c-twin.md benches/c-twin.sh "ROUNDS=$ROUNDS ITERS=$ITERS REPS=$REPS" \
    "The cost of a small operation through this runtime's C API against the same operation through its Rust API." \
    "$out/c-twin.md"
