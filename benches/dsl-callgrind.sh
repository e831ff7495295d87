#!/usr/bin/env bash
# Instructions per operation of `shmem!` and of the hand-written call, counted by callgrind:
# (instructions with N operations - instructions with 0 operations) / N, per form.
# Needs valgrind (apt-get install valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "install valgrind: apt-get install -y valgrind" >&2; exit 1; }
cargo build --release --workspace --bin dsl_overhead >/dev/null
n=${N:-200000}
count() { # form iters case -> total instructions
    local out
    out=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file="$out" target/release/dsl_overhead --only "$1" --iters "$2" --case "$3" >/dev/null 2>&1
    callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
    rm -f "$out"
}
names=("put 8 x u64" "p u64" "g u64" "iput 16 x stride 2" "atomic add u64")
printf '%-22s %12s %12s %8s\n' case "shmem! Ir" "call Ir" ratio
for c in 0 1 2 3 4; do
    base_dsl=$(count dsl 0 $c); full_dsl=$(count dsl "$n" $c)
    base_call=$(count call 0 $c); full_call=$(count call "$n" $c)
    awk -v name="${names[$c]}" -v bd="$base_dsl" -v fd="$full_dsl" -v bc="$base_call" -v fc="$full_call" -v n="$n" 'BEGIN {
        d = (fd - bd) / n; c = (fc - bc) / n
        printf "%-22s %12.2f %12.2f %8.4f\n", name, d, c, d / c
    }'
done
