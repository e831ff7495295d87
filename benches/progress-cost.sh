#!/usr/bin/env bash
# What the progress thread costs the latency rows: benches/src/bin/latency.rs over
# UCX_TLS=tcp,self at 2 PEs on one host, with SHMEM_PROGRESS_THREAD=off and with the default
# (auto, which starts the thread there), the two jobs alternating round by round (the order
# swapped every round). Prints per row the median over rounds of each job's median (ns per
# operation), the ratio thread / no thread, and how many rounds the thread was the faster; then
# the median of the ratios over all rows. Raw CSVs: target/bench-results/progress-cost/.
#
#   bash benches/progress-cost.sh             (ROUNDS=6 ITERS=2000 REPS=7)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-6}
iters=${ITERS:-2000}
reps=${REPS:-7}
out=target/bench-results/progress-cost
mkdir -p "$out"
rm -f "$out"/*.csv
cargo build --release -q -p shmem-benches -p shmem-run --bin latency --bin shmemrun
for ((r = 0; r < rounds; r++)); do
    for mode in $([ $((r % 2)) = 0 ] && echo "off auto" || echo "auto off"); do
        SHMEM_PROGRESS_THREAD=$mode UCX_TLS=tcp,self timeout -k 10 900 \
            target/release/shmemrun -n 2 target/release/latency --csv --iters "$iters" \
            --reps "$reps" >"$out/$mode.$r.csv" 2>"$out/$mode.$r.log" ||
            echo "progress-cost.sh: the $mode job of round $r failed (see $out/$mode.$r.log)" >&2
    done
done
python3 - "$out" "$rounds" <<'EOF'
import csv, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def rows(mode, r):
    try:
        return {(x[0], x[1], x[2]): float(x[3]) for x in csv.reader(open(f"{out}/{mode}.{r}.csv"))
                if len(x) == 5 and x[0] != "case"}
    except FileNotFoundError:
        return {}
runs = {m: [rows(m, r) for r in range(rounds)] for m in ("off", "auto")}
keys = [k for k in runs["off"][0] if all(k in d for m in runs for d in runs[m])]
print("| case | size | variant | no thread (ns) | thread (ns) | thread / no thread | rounds the thread was faster |")
print("|---|---:|---|---:|---:|---:|---:|")
ratios = []
for k in keys:
    off = statistics.median(d[k] for d in runs["off"])
    on = statistics.median(d[k] for d in runs["auto"])
    faster = sum(a[k] < b[k] for a, b in zip(runs["auto"], runs["off"]))
    ratios.append(on / off)
    print(f"| {k[0]} | {k[1]} | {k[2]} | {off:,.0f} | {on:,.0f} | {on / off:.2f} | {faster} of {rounds} |")
if ratios:
    print(f"\nrows: {len(ratios)}; median of the ratios {statistics.median(ratios):.3f}; "
          f"quartiles {statistics.quantiles(ratios, n=4)[0]:.3f} - {statistics.quantiles(ratios, n=4)[2]:.3f}")
EOF
