#!/usr/bin/env bash
# Runs the latency benchmark (RMA at 8 B to 1 MiB, strided, atomics, ping-pong, put_nbi rate,
# collectives) on shmem-core (direct shared memory, and UCX over tcp for the 8-byte put/get/p/g
# cases only: the full set takes minutes there) and on Open MPI's OpenSHMEM (oshmem), alternating
# them for several rounds so that machine noise hits all three alike, then prints the median over
# rounds of each run's median, and draws benches/latency.png (put/get latency vs size, log-log)
# when the plotters-based latency_plot builds.
#
# Usage: benches/run-latency.sh            (from anywhere; works in the workspace root)
# Knobs (environment):
#   ROUNDS=3                   rounds of (ours direct, ours UCX, oshmem), order rotated per round
#   ITERS=20000 REPS=15        loop size and loop count for ours direct and for oshmem
#   UCX_ITERS=2000 UCX_REPS=9  the same for ours over UCX_TLS=tcp,self (~20 us per op here)
#   OSHRUN_FLAGS="..."         extra flags for oshrun (e.g. --mca ... settings)
#   JOB_TIMEOUT=120            seconds before a single job is killed
#   PLOT=1                     0 skips benches/latency.png
# Needs: cargo, and oshcc/oshrun from the Debian packages openmpi-bin and libopenmpi-dev.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-20000}
REPS=${REPS:-15}
UCX_ITERS=${UCX_ITERS:-2000}
UCX_REPS=${UCX_REPS:-9}
JOB_TIMEOUT=${JOB_TIMEOUT:-120}
PLOT=${PLOT:-1}
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
plot_bin=
if [[ $PLOT != 0 ]]; then
    if cargo build --release -p shmem-benches --features plot --bin latency_plot >&2; then
        plot_bin=target/release/latency_plot
    else
        echo "run-latency: latency_plot did not build; no plot" >&2
    fi
fi
out_dir=target/c-bench
mkdir -p "$out_dir"
oshcc -O2 -Wall -o "$out_dir/latency" benches/c/latency.c

results=$(mktemp -d "${TMPDIR:-/tmp}/shmem-latency.XXXXXX")
trap 'rm -rf "$results"' EXIT

shmemrun=target/release/shmemrun
ours=target/release/latency
oshrun_cmd=(oshrun --allow-run-as-root --oversubscribe -np 2 "${EXTRA_OSHRUN[@]}")

# A result line: case,size,variant,median_ns,min_ns.
row_re='^[^,]*,[0-9]*,[^,]*,[0-9.]*,[0-9.]*$'

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
            --iters "$UCX_ITERS" --reps "$UCX_REPS" --basic >"$csv" 2>"$log" || rc=$?
        ;;
    oshmem)
        # oshmem 4.1.4 segfaults in shmem_finalize on every run here, after the results are out:
        # a non-zero status is expected, only missing rows count as a failure.
        timeout "$JOB_TIMEOUT" "${oshrun_cmd[@]}" "$out_dir/latency" csv iters "$ITERS" \
            reps "$REPS" >"$csv" 2>"$log" || rc=$?
        ;;
    esac
    # Rows expected: ours 40 (UCX --basic: 8); oshmem 39 (OpenSHMEM 1.4 has no put_signal).
    local rows want
    case $name in direct) want=40 ;; ucx) want=8 ;; oshmem) want=39 ;; esac
    rows=$(grep -c "$row_re" "$csv" || true)
    if [[ $rc -eq 124 ]]; then
        echo "   $name: timed out after ${JOB_TIMEOUT}s (log: see below)" >&2
    fi
    if [[ $rows -ne $want ]]; then
        echo "   $name (round $round): exit status $rc, $rows of $want result rows; log tail:" >&2
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
echo "Latency, 2 PEs on one node, ns per operation: median over $ROUNDS rounds of each run's median"
echo "(direct and oshmem: $REPS loops x $ITERS ops, fewer above 4 KiB, ITERS/2 for ping-pong,"
echo "ITERS/4 for collectives; UCX: $UCX_REPS loops x $UCX_ITERS ops, 8-byte put/get/p/g only)."
echo "ours direct = shmem-core, on-node load/store; ours UCX = shmem-core with UCX_TLS=tcp,self;"
echo "oshmem = Open MPI's OpenSHMEM 4.1.4 (static = file-scope static long[], its data segment;"
echo "its collectives are the OpenSHMEM 1.4 active-set calls; it has no put_signal). size: bytes"
echo "per operation (per PE for collectives); ping-pong rows are half a round trip; the put_nbi"
echo "row is ns per put in windows of 64 (1e9 / message rate)."
echo
# Inputs: lines "impl,case,size,variant,median_ns" gathered from every run.
table=$(for f in "$results"/*.csv; do
    impl=$(basename "$f" | cut -d. -f1)
    grep "$row_re" "$f" | sed "s/^/$impl,/" || true
done | awk -F, -v plotfile="$results/plot.csv" '
function median(key,    n, i, j, t, v) {
    n = cnt[key]
    if (n == 0) return -1
    for (i = 1; i <= n; i++) v[i] = val[key, i]
    for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function fmt(x) { return x < 0 ? "n/a" : sprintf("%.1f", x) }
function hsize(b) { return b >= 1048576 ? (b / 1048576) " MiB" : b >= 1024 ? (b / 1024) " KiB" : b " B" }
{
    key = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
    val[key, ++cnt[key]] = $5 + 0
    row = $2 SUBSEP $3 SUBSEP $4
    if (!(row in seen)) { seen[row] = 1; order[++nrows] = row; rc[nrows] = $2; rs[nrows] = $3; rv[nrows] = $4 }
}
END {
    printf "| %-28s | %7s | %-7s | %12s | %12s | %12s | %13s |\n", "case", "size", "variant", "ours direct", "ours UCX", "oshmem", "direct/oshmem"
    printf "|------------------------------|---------|---------|--------------|--------------|--------------|---------------|\n"
    # Rows in the order the benchmarks print them (ours first seen wins: heap, static, then the rest).
    for (r = 1; r <= nrows; r++) {
        d = median("direct" SUBSEP order[r]); u = median("ucx" SUBSEP order[r]); o = median("oshmem" SUBSEP order[r])
        ratio = (d < 0 || o <= 0) ? "n/a" : sprintf("%.3f", d / o)
        printf "| %-28s | %7s | %-7s | %12s | %12s | %12s | %13s |\n", rc[r], hsize(rs[r]), rv[r], fmt(d), fmt(u), fmt(o), ratio
        if (rv[r] == "heap" && (rc[r] == "put + quiet" || rc[r] == "get"))
            printf "%s,%s,%s,%s\n", rc[r], rs[r], d, o > plotfile
    }
}')
# The direct run is read first (file names sort "direct" < "oshmem" < "ucx"), so its order rules.
echo "$table"
if [[ -n $plot_bin && -s $results/plot.csv ]]; then
    if "$plot_bin" benches/latency.png <"$results/plot.csv"; then
        echo
        echo "plot: benches/latency.png"
    fi
fi
