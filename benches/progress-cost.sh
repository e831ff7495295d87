#!/usr/bin/env bash
# What a default-on feature costs the latency rows: benches/src/bin/latency.rs over
# UCX_TLS=tcp,self at 2 PEs on one host, with SWITCH=off and with SWITCH unset (the default),
# the two jobs alternating round by round (the order swapped every round). SWITCH is
# SHMEM_PROGRESS_THREAD (default auto, which starts the thread there) unless set, e.g.
# SWITCH=SHMEM_COALESCE for the puts' batches. Prints per row the median over rounds of each
# job's median (ns per operation), the ratio default / off, and in how many rounds the default
# was the faster; then the median of the ratios over all rows and over the rows that differ
# only by timing (not the put_nbi stream, which batches change by design). Raw CSVs:
# target/bench-results/progress-cost/ (or .../coalesce-cost/ for SHMEM_COALESCE).
#
#   bash benches/progress-cost.sh                            (ROUNDS=6 ITERS=2000 REPS=7)
#   SWITCH=SHMEM_COALESCE ROUNDS=10 bash benches/progress-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-6}
iters=${ITERS:-2000}
reps=${REPS:-7}
switch=${SWITCH:-SHMEM_PROGRESS_THREAD}
case $switch in
SHMEM_PROGRESS_THREAD) out=target/bench-results/progress-cost ;;
SHMEM_COALESCE) out=target/bench-results/coalesce-cost ;;
*) echo "progress-cost.sh: SWITCH must be SHMEM_PROGRESS_THREAD or SHMEM_COALESCE" >&2; exit 2 ;;
esac
mkdir -p "$out"
rm -f "$out"/*.csv
cargo build --release -q --workspace --bin latency --bin shmemrun
for ((r = 0; r < rounds; r++)); do
    for mode in $([ $((r % 2)) = 0 ] && echo "off default" || echo "default off"); do
        env -u SHMEM_PROGRESS_THREAD -u SHMEM_COALESCE \
            $([ "$mode" = off ] && echo "$switch=off") UCX_TLS=tcp,self timeout -k 10 900 \
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
runs = {m: [rows(m, r) for r in range(rounds)] for m in ("off", "default")}
keys = [k for k in runs["off"][0] if all(k in d for m in runs for d in runs[m])]
print("| case | size | variant | off (ns) | default (ns) | default / off | rounds the default was faster |")
print("|---|---:|---|---:|---:|---:|---:|")
ratios = []
for k in keys:
    off = statistics.median(d[k] for d in runs["off"])
    on = statistics.median(d[k] for d in runs["default"])
    faster = sum(a[k] < b[k] for a, b in zip(runs["default"], runs["off"]))
    ratios.append((k, on / off))
    print(f"| {k[0]} | {k[1]} | {k[2]} | {off:,.0f} | {on:,.0f} | {on / off:.2f} | {faster} of {rounds} |")
def summary(label, rs):
    if len(rs) >= 2:
        q = statistics.quantiles(rs, n=4)
        print(f"{label}: {len(rs)} rows; median of the ratios {statistics.median(rs):.3f}; "
              f"quartiles {q[0]:.3f} - {q[2]:.3f}")
print()
summary("all rows", [r for _, r in ratios])
summary("all but the put_nbi stream", [r for k, r in ratios if "nbi" not in k[0]])
EOF
