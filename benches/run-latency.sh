#!/usr/bin/env bash
# Runs the 8-byte RMA latency benchmark on shmem-core (direct shared memory and UCX over tcp)
# and on Open MPI's OpenSHMEM (oshmem), alternating them for several rounds so that machine noise
# hits all three alike, then prints the median over rounds of each run's median.
#
# Usage: benches/run-latency.sh            (from anywhere; works in the workspace root)
# Knobs (environment):
#   ROUNDS=3                   rounds of (ours direct, ours UCX, oshmem), order rotated per round
#   ITERS=20000 REPS=15        loop size and loop count for ours direct and for oshmem
#   UCX_ITERS=2000 UCX_REPS=9  the same for ours over UCX_TLS=tcp,self (~20 us per op here)
#   OSHRUN_FLAGS="..."         extra flags for oshrun (e.g. --mca ... settings)
#   JOB_TIMEOUT=120            seconds before a single job is killed
# Needs: cargo, and oshcc/oshrun from the Debian packages openmpi-bin and libopenmpi-dev.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-20000}
REPS=${REPS:-15}
UCX_ITERS=${UCX_ITERS:-2000}
UCX_REPS=${UCX_REPS:-9}
JOB_TIMEOUT=${JOB_TIMEOUT:-120}
read -r -a EXTRA_OSHRUN <<<"${OSHRUN_FLAGS:-}"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

for tool in oshcc oshrun; do
    if ! command -v "$tool" >/dev/null; then
        echo "run-latency: '$tool' not found; install Open MPI's OpenSHMEM first:" >&2
        echo "    sudo apt-get install -y openmpi-bin libopenmpi-dev" >&2
        exit 1
    fi
done

echo "== building" >&2
cargo build --release -p shmem-benches -p shmem-core >&2
out_dir=target/c-bench
mkdir -p "$out_dir"
oshcc -O2 -Wall -o "$out_dir/latency" benches/c/latency.c

results=$(mktemp -d "${TMPDIR:-/tmp}/shmem-latency.XXXXXX")
trap 'rm -rf "$results"' EXIT

shmemrun=target/release/shmemrun
ours=target/release/latency
oshrun_cmd=(oshrun --allow-run-as-root --oversubscribe -np 2 "${EXTRA_OSHRUN[@]}")

# run_job NAME ROUND: runs one job, its CSV to $results/NAME.ROUND.csv; never fails the script.
run_job() {
    local name=$1 round=$2 rc=0
    local csv="$results/$name.$round.csv" log="$results/$name.$round.log"
    case $name in
    direct)
        timeout "$JOB_TIMEOUT" "$shmemrun" -n 2 "$ours" --csv --iters "$ITERS" --reps "$REPS" \
            >"$csv" 2>"$log" || rc=$?
        ;;
    ucx)
        UCX_TLS=tcp,self timeout "$JOB_TIMEOUT" "$shmemrun" -n 2 "$ours" --csv \
            --iters "$UCX_ITERS" --reps "$UCX_REPS" >"$csv" 2>"$log" || rc=$?
        ;;
    oshmem)
        # oshmem 4.1.4 segfaults in shmem_finalize on every run here, after the results are out:
        # a non-zero status is expected, only missing rows count as a failure.
        timeout "$JOB_TIMEOUT" "${oshrun_cmd[@]}" "$out_dir/latency" csv iters "$ITERS" \
            reps "$REPS" >"$csv" 2>"$log" || rc=$?
        ;;
    esac
    local rows
    rows=$(grep -c '^[^,]*,[^,]*,[0-9.]*,[0-9.]*$' "$csv" || true)
    if [[ $rc -eq 124 ]]; then
        echo "   $name: timed out after ${JOB_TIMEOUT}s (log: see below)" >&2
    fi
    if [[ $rows -ne 8 ]]; then
        echo "   $name (round $round): exit status $rc, $rows of 8 result rows; log tail:" >&2
        tail -n 5 "$log" | sed 's/^/      /' >&2
    else
        echo "   $name: ok (exit status $rc)" >&2
    fi
}

jobs=(direct ucx oshmem)
for ((round = 1; round <= ROUNDS; round++)); do
    echo "== round $round of $ROUNDS" >&2
    for ((k = 0; k < ${#jobs[@]}; k++)); do
        run_job "${jobs[(k + round - 1) % ${#jobs[@]}]}" "$round"
    done
done

echo
echo "8-byte RMA latency, 2 PEs on one node, ns per operation: median over $ROUNDS rounds of each"
echo "run's median (direct and oshmem: $REPS loops x $ITERS ops; UCX: $UCX_REPS loops x $UCX_ITERS ops)."
echo "ours direct = shmem-core, on-node load/store; ours UCX = shmem-core with UCX_TLS=tcp,self;"
echo "oshmem = Open MPI's OpenSHMEM (static row = file-scope static long[], its data segment)."
echo
# Inputs: lines "impl,case,variant,median_ns" gathered from every run.
for f in "$results"/*.csv; do
    impl=$(basename "$f" | cut -d. -f1)
    grep '^[^,]*,[^,]*,[0-9.]*,[0-9.]*$' "$f" | sed "s/^/$impl,/" || true
done | awk -F, '
function median(key,    n, i, j, t, v) {
    n = cnt[key]
    if (n == 0) return -1
    for (i = 1; i <= n; i++) v[i] = val[key, i]
    for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function fmt(x) { return x < 0 ? "n/a" : sprintf("%.1f", x) }
{
    key = $1 SUBSEP $2 SUBSEP $3
    val[key, ++cnt[key]] = $4 + 0
    row = $2 SUBSEP $3
    if (!(row in seen)) { seen[row] = 1; order[++nrows] = row; rc[nrows] = $2; rv[nrows] = $3 }
}
END {
    printf "| %-15s | %-7s | %12s | %12s | %12s | %13s |\n", "case", "variant", "ours direct", "ours UCX", "oshmem", "direct/oshmem"
    printf "|-----------------|---------|--------------|--------------|--------------|---------------|\n"
    # Heap rows first, then static, in the order the benchmarks print the cases.
    for (pass = 1; pass <= 2; pass++)
        for (r = 1; r <= nrows; r++) {
            if ((pass == 1) != (rv[r] == "heap")) continue
            d = median("direct" SUBSEP order[r]); u = median("ucx" SUBSEP order[r]); o = median("oshmem" SUBSEP order[r])
            ratio = (d < 0 || o <= 0) ? "n/a" : sprintf("%.3f", d / o)
            printf "| %-15s | %-7s | %12s | %12s | %12s | %13s |\n", rc[r], rv[r], fmt(d), fmt(u), fmt(o), ratio
        }
}'
