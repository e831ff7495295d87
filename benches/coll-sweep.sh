#!/usr/bin/env bash
# Collectives from 8 B to 4 MiB per PE (benches/src/bin/coll_sweep.rs and its C twin
# benches/c/coll_sweep.c): ours in Rust, ours in C (coll_sweep.c built with this project's
# shmemcc) and Open MPI's oshmem (coll_sweep.c built with its oshcc), alternating run by run,
# at each PE count of NPES_LIST, on the direct path and over UCX_TLS=tcp,self (oshmem over tcp
# with run.sh's OSH_TCP_UCX settings, and once more with --mca btl self,tcp: its collectives are
# MPI's, whose data otherwise goes through shared memory). Writes coll-sweep.md to the results directory
# (benches/results-lib.sh; TINY=1: target/bench-results, small loops, sizes up to 64 KiB).
#
# Knobs: ROUNDS (runs of each program per PE count and path; the table takes the median of
# their medians), ITERS, REPS, MAX_BYTES, BUDGET, NPES_LIST, JOB_TIMEOUT.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/results-lib.sh"
results_init
cd "$results_root"
TINY=${TINY:-0}
if [[ $TINY == 1 ]]; then
    ROUNDS=${ROUNDS:-1} ITERS=${ITERS:-20} REPS=${REPS:-3} MAX_BYTES=${MAX_BYTES:-65536}
    BUDGET=${BUDGET:-1048576} NPES_LIST=${NPES_LIST:-2}
fi
ROUNDS=${ROUNDS:-3} ITERS=${ITERS:-2000} REPS=${REPS:-9} MAX_BYTES=${MAX_BYTES:-4194304}
BUDGET=${BUDGET:-67108864} NPES_LIST=${NPES_LIST:-"2 4 8"} JOB_TIMEOUT=${JOB_TIMEOUT:-900}
export SHMEM_SYMMETRIC_SIZE=${SHMEM_SYMMETRIC_SIZE:-512M}

cargo build --release -p shmem-benches --bin coll_sweep >&2
# shmem-capi's build script writes target/release/shmemcc (and libshmem.so).
cargo build --release -p shmem-run -p shmem-capi >&2
out=target/c-bench
mkdir -p "$out"
oshcc -O2 -Wall -o "$out/coll_sweep" benches/c/coll_sweep.c
target/release/shmemcc -O2 -Wall -o "$out/coll_sweep-ours" benches/c/coll_sweep.c
OSH_TCP_UCX=(-x UCX_TLS=tcp,self -x UCX_TCP_TX_SEG_SIZE=256k -x UCX_TCP_RX_SEG_SIZE=256k
    -x UCX_MAX_RNDV_LANES=1)
raw=target/bench-results/coll-sweep
rm -rf "$raw"
mkdir -p "$raw"
t=(timeout -k 10 "$JOB_TIMEOUT")
for n in $NPES_LIST; do
    osh=(oshrun --allow-run-as-root --oversubscribe -np "$n" -x SHMEM_SYMMETRIC_SIZE)
    for path in direct tcp; do
        env_ours=()
        osh_extra=()
        if [[ $path == tcp ]]; then
            env_ours=(UCX_TLS=tcp,self)
            osh_extra=("${OSH_TCP_UCX[@]}")
        fi
        for r in $(seq 1 "$ROUNDS"); do
            echo "== $n PEs, $path, round $r" >&2
            env "${env_ours[@]}" "${t[@]}" target/release/shmemrun -n "$n" \
                target/release/coll_sweep --iters "$ITERS" --reps "$REPS" \
                --max-bytes "$MAX_BYTES" --budget "$BUDGET" >"$raw/rust.$n.$path.$r.csv" ||
                echo "coll-sweep.sh: rust $n $path $r failed" >&2
            env "${env_ours[@]}" "${t[@]}" target/release/shmemrun -n "$n" \
                "$out/coll_sweep-ours" iters "$ITERS" reps "$REPS" max_bytes "$MAX_BYTES" \
                budget "$BUDGET" >"$raw/c.$n.$path.$r.csv" ||
                echo "coll-sweep.sh: c $n $path $r failed" >&2
            # oshmem segfaults in shmem_finalize here (FINDINGS.md): its rows are printed before.
            "${t[@]}" "${osh[@]}" "${osh_extra[@]}" "$out/coll_sweep" iters "$ITERS" \
                reps "$REPS" max_bytes "$MAX_BYTES" budget "$BUDGET" 2>/dev/null |
                grep -E '^[a-z_0-9]+,[0-9]+,[0-9]+,' >"$raw/oshmem.$n.$path.$r.csv" || true
            # oshmem's collectives are Open MPI's MPI collectives (scoll/mpi), which on one node
            # move their data through shared memory (btl/vader) whatever UCX_TLS says: over
            # tcp, a second oshmem column with --mca btl self,tcp moves it over TCP as ours does.
            if [[ $path == tcp ]]; then
                "${t[@]}" "${osh[@]}" "${osh_extra[@]}" --mca btl self,tcp "$out/coll_sweep" \
                    iters "$ITERS" reps "$REPS" max_bytes "$MAX_BYTES" budget "$BUDGET" \
                    2>/dev/null | grep -E '^[a-z_0-9]+,[0-9]+,[0-9]+,' \
                    >"$raw/oshtcp.$n.$path.$r.csv" || true
            fi
        done
    done
done

body=$(mktemp)
# The median over rounds of each run's median, per program, case, size, PEs and path.
for f in "$raw"/*.csv; do
    b=${f##*/}
    IFS=. read -r prog n path _ <<<"$b"
    sed "s/^/$prog,$path,/" "$f"
done | awk -F, '
    { key = $3 "," $4 "," $5 "," $2; v[key, $1] = v[key, $1] " " $6; keys[key] = 1 }
    function med(s,   a, k, i, j, t) { k = split(s, a, " "); if (!k) return "";
        for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
    function ratio(a, b) { return (a != "" && b != "" && b > 0) ? sprintf("%.2f", a / b) : "" }
    END {
        print "| case | size (B) | PEs | path | ours Rust (ns) | ours C (ns) | oshmem (ns) | Rust / oshmem | C / oshmem | oshmem, btl tcp (ns) | Rust / oshmem btl tcp |"
        print "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"
        for (key in keys) {
            split(key, p, ",")
            if (p[1] == "memcpy") continue
            r = med(v[key, "rust"]); c = med(v[key, "c"]); o = med(v[key, "oshmem"]); t = med(v[key, "oshtcp"])
            printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p[1], p[2], p[3], p[4], r, c, o, ratio(r, o), ratio(c, o), t, ratio(r, t)
        }
    }' | { read -r h1; read -r h2; echo "$h1"; echo "$h2"; sort -t'|' -k2,2 -k4,4n -k5,5 -k3,3n; } >"$body"
# The memory bound of the large reductions and broadcasts on the direct path: what the bytes each
# PE must read and write cost at the copy rate that all PEs copying at once get on this node
# (coll_sweep's memcpy case, same run). A memcpy of X bytes reads X and writes X. Each member of
# a reduction of B bytes over n PEs (data moved once: its share of every member's source, then
# the other shares of the result) reads B + B(n-1)/n and writes B: (3n-1)/(2n) memcpys of B.
# Each non-root member of a broadcast copies B: one memcpy of B. With more PEs than cores, a
# core moves n / cores members' data in turn.
cores=$(nproc)
{
    echo
    echo "Direct path against the memory bound: bound = memcpy of the size (every PE copying at"
    echo "once, the Rust run of the same job) times the bytes each member must move, in memcpys"
    echo "(reductions: (3n-1)/(2n) for n PEs; broadcast: 1), times the PEs that share a core"
    echo "(n / $cores cores when n > $cores: a core then moves that many members' data one after"
    echo "the other, which the memcpy loop, timed call by call, does not show); the ratios are"
    echo "time / bound (the goal: at most 2). Ours from Rust reduces private sources, which adds"
    echo "a copy of (n-1)/n of the source; C and oshmem reduce symmetric ones."
    echo
    echo "| case | size (B) | PEs | memcpy (ns) | memcpys × PEs per core | bound (ns) | ours Rust / bound | ours C / bound | oshmem / bound |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    for f in "$raw"/*.direct.*.csv; do
        b=${f##*/}
        IFS=. read -r prog _ <<<"$b"
        sed "s/^/$prog,/" "$f"
    done | awk -F, -v cores="$cores" '
        { key = $2 "," $3 "," $4; v[key, $1] = v[key, $1] " " $5; keys[key] = 1 }
        function med(s,   a, k, i, j, t) { k = split(s, a, " "); if (!k) return "";
            for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
        function ratio(a, b) { return (a != "" && b != "" && b > 0) ? sprintf("%.2f", a / b) : "" }
        END {
            for (key in keys) {
                split(key, p, ",")
                if (p[2] < 1048576 || p[1] == "memcpy" || p[1] == "fcollect" || p[1] == "alltoall") continue
                m = med(v["memcpy," p[2] "," p[3], "rust"])
                if (m == "") continue
                n = p[3]; f = (p[1] == "broadcast") ? 1 : (3 * n - 1) / (2 * n)
                if (n > cores) f = f * n / cores
                bound = m * f
                printf "| %s | %s | %s | %.0f | %.3f | %.0f | %s | %s | %s |\n", p[1], p[2], n, m, f, bound,
                    ratio(med(v[key, "rust"]), bound), ratio(med(v[key, "c"]), bound), ratio(med(v[key, "oshmem"]), bound)
            }
        }' | sort -t'|' -k2,2 -k4,4n -k3,3n
} >>"$body"
results_write coll-sweep.md benches/coll-sweep.sh \
    "ROUNDS=$ROUNDS ITERS=$ITERS REPS=$REPS MAX_BYTES=$MAX_BYTES BUDGET=$BUDGET NPES_LIST=\"$NPES_LIST\" TINY=$TINY" \
    "Collectives over all PEs from 8 B to 4 MiB per PE (OSU-style timing: each call after an untimed barrier_all, the mean over PEs of each PE's mean; the median over rounds of each run's median): ours from Rust (private sources), ours from C and Open MPI's oshmem (the same C program, symmetric sources). Over tcp, oshmem's collectives still move their data through shared memory (they are Open MPI's MPI collectives, over btl/vader on one node; UCX_TLS reaches only its RMA); the column \"oshmem, btl tcp\" runs it with --mca btl self,tcp, so that its collective data goes over TCP as ours does." \
    "$body"
rm -f "$body"
