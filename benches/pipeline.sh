#!/usr/bin/env bash
# The point-to-point pipeline rows over tcp, ours against Open MPI's oshmem, side by side:
# put 8 B + fence (PE 0 to PE 1), the flag pipeline down the chain of all PEs (per row: wait for
# the left neighbour's flag, put a value, shmem_fence, put the flag to the right neighbour; the
# pattern of the Parallel Research Kernels' synch_p2p), and fcollect of 64 KiB per PE. See
# `run_pipeline` in benches/src/bin/latency.rs and benches/c/latency.c (mode `pipeline`).
#
# Jobs, their order rotated every round, at each PE count of NPES_LIST:
#   ours-tcp          latency.rs under shmemrun, UCX_TLS=tcp,self (everything through UCX)
#   c-ours-tcp        latency.c built with shmemcc, the same
#   oshmem-tcp        latency.c built with oshcc under oshrun, UCX_TLS=tcp,self and the same UCX
#                     settings as benches/run.sh's oshmem-tcp (its collectives are Open MPI's
#                     MPI ones, which go through shared memory whatever UCX_TLS says)
#   oshmem-tcp-basic  the same with --mca scoll basic: its collectives through its SPML (tcp),
#                     the like-for-like fcollect
#   ours-direct, oshmem   the same rows on one node's default paths, for reference
#
# Prints per row and PE count the median over rounds of each job's median, ns per operation
# (per row for the pipeline), ours-tcp / oshmem-tcp of those medians, the median of the
# per-round ratios ours-tcp / oshmem-tcp, and in how many rounds ours-tcp was the faster. (On
# this project's VM the 4-PE fcollect lands in one of two speeds, about 45 or 135 µs for ours,
# for minutes at a time, and oshmem's moves likewise: the per-round ratio pairs jobs that ran
# close together.)
#
# The table also goes to pipeline.md in the results directory (benches/results/; TINY=1:
# target/bench-results/; RESULTS_DIR=... to choose), begun by a comment naming the script, the
# date, the machine and the knobs; a run in which a job missed rows leaves it as it was (and
# exits non-zero). Raw CSVs: target/bench-results/pipeline/.
#
#   bash benches/pipeline.sh                 (ROUNDS=5 NPES_LIST="2 4" ITERS=20000 REPS=9)
#   TINY=1 bash benches/pipeline.sh          (a quick check: ROUNDS=1 NPES_LIST=2 ITERS=200 REPS=1)
set -euo pipefail
# shellcheck source=benches/results-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/results-lib.sh"
results_init
cd "$(dirname "$0")/.."
if [[ ${TINY:-0} == 1 ]]; then
    ROUNDS=${ROUNDS:-1} NPES_LIST=${NPES_LIST:-2} ITERS=${ITERS:-200} REPS=${REPS:-1}
fi
rounds=${ROUNDS:-5}
NPES_LIST=${NPES_LIST:-2 4}
read -r -a npes_list <<<"$NPES_LIST"
iters=${ITERS:-20000}
reps=${REPS:-9}
jobs=(ours-tcp c-ours-tcp oshmem-tcp oshmem-tcp-basic ours-direct oshmem)
out=target/bench-results/pipeline
mkdir -p "$out"
rm -f "$out"/*.csv
if ! command -v oshrun >/dev/null || ! echo '#include <shmem.h>' | oshcc -E -x c - >/dev/null 2>&1; then
    echo "pipeline.sh: Open MPI's OpenSHMEM (oshcc, oshrun, shmem.h) is needed; install it first:" >&2
    echo "    sudo apt-get install -y openmpi-bin libopenmpi-dev" >&2
    exit 1
fi
# The C library (libshmem.so, which the C twin on ours loads) and shmemrun, then the Rust twin.
bench_build -q
oshcc -O2 -falign-loops=64 -Wall -o "$out/latency-oshmem" benches/c/latency.c
target/release/shmemcc -O2 -falign-loops=64 -Wall -o "$out/latency-ours" benches/c/latency.c
tcp_ucx=(-x UCX_TLS=tcp,self -x UCX_TCP_TX_SEG_SIZE=256k -x UCX_TCP_RX_SEG_SIZE=256k
    -x UCX_MAX_RNDV_LANES=1)
run() {
    local job=$1 n=$2 csv=$3
    local osh=(oshrun --allow-run-as-root --oversubscribe -np "$n")
    local t=(timeout -k 10 600)
    local args=(iters "$iters" reps "$reps" csv pipeline)
    case $job in
    ours-tcp) UCX_TLS=tcp,self "${t[@]}" target/release/shmemrun -n "$n" target/release/latency \
        --pipeline --csv --iters "$iters" --reps "$reps" ;;
    c-ours-tcp) UCX_TLS=tcp,self "${t[@]}" target/release/shmemrun -n "$n" "$out/latency-ours" \
        "${args[@]}" ;;
    oshmem-tcp) "${t[@]}" "${osh[@]}" "${tcp_ucx[@]}" "$out/latency-oshmem" "${args[@]}" ;;
    oshmem-tcp-basic) "${t[@]}" "${osh[@]}" --mca scoll basic "${tcp_ucx[@]}" \
        "$out/latency-oshmem" "${args[@]}" ;;
    ours-direct) "${t[@]}" target/release/shmemrun -n "$n" target/release/latency --pipeline \
        --csv --iters "$iters" --reps "$reps" ;;
    oshmem) "${t[@]}" "${osh[@]}" "$out/latency-oshmem" "${args[@]}" ;;
    esac >"$csv" 2>"$csv.log" || true # oshmem 4.1.4 segfaults in shmem_finalize: rows count
}
missing=0
for n in "${npes_list[@]}"; do
    for ((r = 0; r < rounds; r++)); do
        for ((j = 0; j < ${#jobs[@]}; j++)); do
            job=${jobs[$(((j + r) % ${#jobs[@]}))]}
            run "$job" "$n" "$out/$job.$n.$r.csv"
            rows=$(grep -c '^[^,]*,[0-9]*,heap,' "$out/$job.$n.$r.csv" || true)
            if [ "$rows" != 3 ]; then
                echo "pipeline.sh: $job at $n PEs, round $r: $rows of 3 rows (see $out/$job.$n.$r.csv.log)" >&2
                missing=$((missing + 1))
            fi
        done
    done
done
python3 - "$out" "$rounds" "${npes_list[@]}" <<'EOF' | tee "$out/table.md"
import csv, glob, statistics, sys
out, rounds, npes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
jobs = ["ours-tcp", "c-ours-tcp", "oshmem-tcp", "oshmem-tcp-basic", "ours-direct", "oshmem"]
cases = ["put 8 B + fence", "flag pipeline (per row)", "fcollect"]
print("| PEs | case | " + " | ".join(jobs) + " | ours-tcp / oshmem-tcp | ours-tcp / oshmem-tcp-basic "
      "| ours-tcp / oshmem-tcp per round | rounds ours-tcp was faster |")
print("|---:|---|" + "---:|" * (len(jobs) + 4))
def job_median(job, n, r, case):
    try:
        for row in csv.reader(open(f"{out}/{job}.{n}.{r}.csv")):
            if len(row) == 5 and row[0] == case and row[2] == "heap":
                return float(row[3])
    except FileNotFoundError:
        pass
    return None
for n in npes:
    for case in cases:
        runs = {j: [job_median(j, n, r, case) for r in range(rounds)] for j in jobs}
        med = {j: statistics.median(v for v in runs[j] if v) if any(runs[j]) else None
               for j in jobs}
        cells = [f"{med[j]:,.0f}" if med[j] else "-" for j in jobs]
        def ratio(a, b):
            return f"{med[a] / med[b]:.2f}" if med[a] and med[b] else "-"
        # The two jobs of a round ran minutes apart at most: the machine's slow and fast
        # spells (which last minutes here) hit a round's jobs alike more often than not.
        pairs = [(a, b) for a, b in zip(runs["ours-tcp"], runs["oshmem-tcp"]) if a and b]
        per_round = f"{statistics.median(a / b for a, b in pairs):.2f}" if pairs else "-"
        faster = f"{sum(a < b for a, b in pairs)} of {len(pairs)}"
        print(f"| {n} | {case} | " + " | ".join(cells) + f" | {ratio('ours-tcp', 'oshmem-tcp')} "
              f"| {ratio('ours-tcp', 'oshmem-tcp-basic')} | {per_round} | {faster} |")
EOF
if ((missing > 0)); then
    echo "pipeline.sh: FAILED: $missing jobs missed rows; pipeline.md in $RESULTS_DIR is left as it was" >&2
    exit 1
fi
{
    echo "Over UCX_TLS=tcp,self on one host, ours (latency.rs and the C twin latency.c built with"
    echo "shmemcc, under shmemrun) against Open MPI's OpenSHMEM (latency.c built with oshcc, under"
    echo "oshrun with the UCX settings ours gets: 256 KiB TCP segments, one rendezvous lane); the"
    echo "columns ours-direct and oshmem are the same rows on one node's default paths, for"
    echo "reference. Rows: put 8 B + shmem_fence in a loop, PE 0 to PE 1; the flag pipeline of the"
    echo "Parallel Research Kernels' synch_p2p pattern down the chain of all PEs (per row: wait for"
    echo "the left neighbour's flag, put a value, fence, put the flag to the right neighbour), time"
    echo "per row; fcollect of 64 KiB per PE. oshmem-tcp's collectives are Open MPI's MPI ones,"
    echo "which move data through shared memory whatever UCX_TLS says; oshmem-tcp-basic (--mca scoll"
    echo "basic) sends them through its UCX layer, the like-for-like fcollect. ns per operation (per"
    echo "row for the pipeline): the median over $rounds rounds of each job's median of $reps loops x"
    echo "$iters operations, the jobs' order rotated every round; the last columns: the ratio of the"
    echo "medians, the median of the per-round ratios ours-tcp / oshmem-tcp (the two jobs of a round"
    echo "ran close together, so the machine's slow and fast spells fall on both), and in how many"
    echo "rounds ours-tcp was the faster."
    echo
    cat "$out/table.md"
} >"$out/pipeline.md"
results_write pipeline.md benches/pipeline.sh \
    "ROUNDS=$rounds NPES_LIST=\"$NPES_LIST\" ITERS=$iters REPS=$reps" \
    "Point-to-point pipeline rows over tcp (put + fence, a flag pipeline, a large fcollect), ours against Open MPI's OpenSHMEM over the same transport." \
    "$out/pipeline.md"
