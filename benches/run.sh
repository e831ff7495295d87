#!/usr/bin/env bash
# The benchmark suite: shmem-core against Open MPI's OpenSHMEM (oshmem), side by side, in one
# command. Five parts, each alternating the implementations round by round so that machine noise
# hits them alike:
#   1. latency (benches/src/bin/latency.rs and its C twin benches/c/latency.c: RMA at 8 B to
#      1 MiB between page-aligned buffers (variant aligned) and at 8 B to 4 MiB from a Vec /
#      malloc'd buffer as users allocate them (vec, and vec odd: odd offsets on both sides),
#      strided, atomics, ping-pong, put_nbi rate, collectives) at 2 PEs: ours on the
#      direct shared-memory path, ours with every transfer through UCX over tcp
#      (UCX_TLS=tcp,self; smaller loops, ~10-30 us per op there), oshmem, and oshmem over the
#      same transport as ours UCX (oshmem-tcp: oshrun -x UCX_TLS=tcp,self and the UCX settings
#      ours gets, the same loops),
#      its collectives once more with its own OpenSHMEM collectives over that transport instead
#      of Open MPI's shared-memory ones (oshmem-tcp-basic: --mca scoll basic, collectives only),
#      and the C twin on this runtime (c-ours: latency.c built with shmemcc, under shmemrun);
#      in each tcp round also the kernel's TCP round trip on loopback with no library
#      (tcp-floor: benches/c/tcp_rtt.c), the floor under the tcp gets and atomics;
#   2. the collectives alone at every PE count of NPES_LIST other than 2 (2 comes from part 1):
#      ours direct and oshmem;
#   3. bandwidth: a 256 KiB put + quiet against a local 256 KiB memcpy, on PE 0 (ours, oshmem);
#   3b. copy sweep (benches/src/bin/copy_sweep.rs, C twin benches/c/copy_sweep.c) at 2 PEs, ours
#      direct and oshmem: put + quiet, get and a local memcpy at 256 B to 4 MiB against
#      d = (dst - src) mod 4096 (glibc's memcpy stalls at d in 1..~31 on AMD EPYC); a table per
#      size and op (best, worst and where, ours/oshmem) and the heat map copy_sweep.png
#      (sweep_plot);
#   4. shmem! against the hand-written runtime call (benches/dsl-overhead.sh's aligned build);
#   5. across hosts (benches/hosts.sh, needs root: network namespaces 10.231.42.1 to .8 joined
#      by a bridge, made by scripts/netns-hosts.sh): latency with one PE on each of two hosts
#      against ucx_perftest (package ucx-utils) over the same link, the collectives on 2, 4 and
#      8 hosts x 2 PEs, and heat (examples) on one host x 4, 8 and 16 PEs against 2, 4 and 8
#      hosts x 2 PEs; without root or `ip netns` it is SKIPPED (a failure with
#      SHMEM_TEST_REQUIRE_ROOT=1). Its own knobs (PERF_ITERS, HEAT_ITERS, ...): see hosts.sh.
#   6. Python (benches/python.sh): put/get/p/g/fetch_add/slices/collectives at 2 PEs from
#      shmem_rs (this project's package) against shmem4py built on ours and on oshmem, both
#      paths; and (benches/python-init.sh) import + init from Python against Rust's start.
# Prints the latency table, the collectives table (ours, oshmem, ratio per PE count), the
# bandwidth lines, the copy-sweep table and the DSL/call table, and writes them, one Markdown
# file per table family, to the results directory (benches/results/; TINY=1:
# target/bench-results/; RESULTS_DIR=... to choose): latency.md (with the tcp summary),
# c-latency.md (the C twin on this runtime), collectives.md, bandwidth.md, copy-sweep.md, dsl.md,
# and the plots latency.png (put/get latency vs size, log-log, aligned buffers) and
# copy_sweep.png (latency_plot and sweep_plot, plotters-based); each file begins with a comment
# naming this script, the date, the commit, the machine and the knobs (benches/results-lib.sh).
# Part 5 (hosts.sh) writes hosts.md and part 6 (python.sh) python.md themselves. These files are
# written only when every job of parts 1 to 4 produced all its rows (else the tables stay in
# target/bench-results/md/); then benches/headline.sh rebuilds headline.md and, when the
# results directory is benches/results/, the README's headline table. Raw CSVs of every run
# (with minima): target/bench-results/. Exits non-zero if any job did not produce all its rows.
#
# Usage: benches/run.sh                 (from anywhere)
#        TINY=1 benches/run.sh          (CI: every job type, minimal loops, well under a minute
#                                        after the build; PE counts 2 and 3; the result files go
#                                        to target/bench-results/, never to benches/results/)
# Knobs (environment; TINY=1 changes the defaults, explicit values still win):
#   ROUNDS=3                   rounds of each part, order of the implementations rotated per round
#   PAIR_ROUNDS=5              rounds of the direct latency pair (ours direct, oshmem), which
#                              alternate order round by round; their ratio is the median of the
#                              rounds' ratios
#   TCP_ROUNDS=7               the same for the like-for-like tcp pair (ours UCX, oshmem tcp)
#   ITERS=20000 REPS=15        loop size and loop count for ours direct and oshmem (part 1 and 3)
#   UCX_ITERS=2000 UCX_REPS=9  the same for ours over UCX_TLS=tcp,self
#   COLL_ITERS=8000 COLL_REPS=REPS   the same for part 2 (collective loops are a quarter)
#   NPES_LIST="2 4 8"          PE counts of the collectives table
#   DSL_ITERS=200000 DSL_REPS=31     shmem!/call benchmark
#   SWEEP_BYTES=2097152 SWEEP_REPS=9 copy sweep: bytes per timed loop, loops per point
#   OSHRUN_FLAGS="..."         extra flags for oshrun (e.g. --mca ... settings)
#   JOB_TIMEOUT=300            seconds before a single job is killed
#   PLOT=1                     0 skips the plots (latency.png, copy_sweep.png)
#   RESULTS_DIR=benches/results   where the result files go (TINY: target/bench-results)
#   MSG_RATE=1                 run benches/msg-rate.sh (msg-rate.md, msg_rate.png); 0 skips it
#   PYTHON=1                   0 skips part 6 (Python: benches/python.sh, which builds shmem4py
#                              for ours and oshmem from PyPI when missing; TINY: only those built)
# Needs: cargo, and oshcc/oshrun from the Debian packages openmpi-bin and libopenmpi-dev.
set -euo pipefail

TINY=${TINY:-0}
if [[ $TINY == 1 ]]; then
    ROUNDS=${ROUNDS:-1}
    TCP_ROUNDS=${TCP_ROUNDS:-1}
    PAIR_ROUNDS=${PAIR_ROUNDS:-1}
    ITERS=${ITERS:-40}
    REPS=${REPS:-2}
    UCX_ITERS=${UCX_ITERS:-20}
    UCX_REPS=${UCX_REPS:-1}
    COLL_ITERS=${COLL_ITERS:-40}
    COLL_REPS=${COLL_REPS:-2}
    NPES_LIST=${NPES_LIST:-2 3}
    DSL_ITERS=${DSL_ITERS:-2000}
    DSL_REPS=${DSL_REPS:-3}
    SWEEP_BYTES=${SWEEP_BYTES:-65536}
    SWEEP_REPS=${SWEEP_REPS:-1}
    JOB_TIMEOUT=${JOB_TIMEOUT:-60}
else
    ROUNDS=${ROUNDS:-3}
    TCP_ROUNDS=${TCP_ROUNDS:-7}
    PAIR_ROUNDS=${PAIR_ROUNDS:-5}
    ITERS=${ITERS:-20000}
    REPS=${REPS:-15}
    UCX_ITERS=${UCX_ITERS:-2000}
    UCX_REPS=${UCX_REPS:-9}
    COLL_ITERS=${COLL_ITERS:-8000}
    COLL_REPS=${COLL_REPS:-$REPS}
    NPES_LIST=${NPES_LIST:-2 4 8}
    DSL_ITERS=${DSL_ITERS:-200000}
    DSL_REPS=${DSL_REPS:-31}
    SWEEP_BYTES=${SWEEP_BYTES:-2097152}
    SWEEP_REPS=${SWEEP_REPS:-9}
    JOB_TIMEOUT=${JOB_TIMEOUT:-300}
fi
PLOT=${PLOT:-1}
PYTHON=${PYTHON:-1}
read -r -a EXTRA_OSHRUN <<<"${OSHRUN_FLAGS:-}"
read -r -a NPES <<<"$NPES_LIST"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The result files' directory (RESULTS_DIR, exported for hosts.sh and python.sh), resolved
# before the cd: a relative RESULTS_DIR is taken from where the script was started.
# shellcheck source=benches/results-lib.sh
source "$root/benches/results-lib.sh"
results_init
cd "$root"

for tool in oshcc oshrun; do
    if ! command -v "$tool" >/dev/null; then
        echo "run.sh: '$tool' not found; install Open MPI's OpenSHMEM first:" >&2
        echo "    sudo apt-get install -y openmpi-bin libopenmpi-dev" >&2
        exit 1
    fi
done
for n in "${NPES[@]}"; do
    if ! [[ $n =~ ^[0-9]+$ ]] || ((n < 2)); then
        echo "run.sh: NPES_LIST must hold PE counts of 2 or more, got '$NPES_LIST'" >&2
        exit 1
    fi
done

echo "== building" >&2
bench_build
plot_bin=
sweep_plot_bin=
if [[ $PLOT != 0 ]]; then
    if bench_build --features shmem-benches/plot --bin latency_plot --bin sweep_plot; then
        plot_bin=target/release/latency_plot
        sweep_plot_bin=target/release/sweep_plot
    else
        echo "run.sh: latency_plot/sweep_plot did not build; no plots" >&2
    fi
fi
# Both twins are built with loops aligned to 64 bytes: where the linker happens to place a hot
# loop otherwise moves single rows by tens of percent (seen: a 16-element iput at 10 or 44 ns
# depending on unrelated code), which must not pass for a difference between implementations.
RUSTFLAGS="-C llvm-args=-align-loops=64" CARGO_TARGET_DIR=target/aligned \
    cargo build --release -p shmem-benches --bin latency >&2
dsl_bin=$(bash benches/dsl-overhead.sh --build)
out_dir=target/c-bench
mkdir -p "$out_dir"
oshcc -O2 -falign-loops=64 -Wall -o "$out_dir/latency" benches/c/latency.c
oshcc -O2 -falign-loops=64 -Wall -o "$out_dir/copy_sweep" benches/c/copy_sweep.c
# The same C program on this runtime, through its C API (libshmem.so, shmemcc, built above).
target/release/shmemcc -O2 -falign-loops=64 -Wall -o "$out_dir/latency-ours" benches/c/latency.c
# The kernel's TCP round trip over loopback, no library: the floor of the tcp table's gets and
# atomics.
"${CC:-cc}" -O2 -Wall -o "$out_dir/tcp_rtt" benches/c/tcp_rtt.c

# Raw results of this run: NAME.NPES.ROUND.csv and .log per job.
results=target/bench-results
rm -rf "$results"
mkdir -p "$results"

shmemrun=target/release/shmemrun
ours=target/aligned/release/latency

# Result rows each latency job prints (ours: latency.rs; oshmem: latency.c, which has no
# put_signal).
# 40 / 39 rows, plus 28 user-shaped put/get rows (vec, vec odd).
LAT_ROWS_OURS=69
LAT_ROWS_OSHMEM=67
# Rows of a copy sweep job (ours: copy_sweep.rs, oshmem: copy_sweep.c): 3 ops x 7 sizes x
# 21 distances x 3 source alignments (3 ops x 7 sizes x 63); a line
# op,size,d,src_align,median_ns,min_ns.
SWEEP_ROWS=1323
sweep_re='^(put|get|memcpy),[0-9]+,[0-9]+,[0-9]+,[0-9.]+,[0-9.]+$'

# The UCX settings of the oshmem-tcp jobs: the transport of the `ucx` job, and the settings our
# PEs get on top of UCX's defaults (shmemrun: 256 KiB TCP segments, UCX's 8 KiB made a 1 MiB put
# 2.5x slower; the runtime: one rendezvous lane), so that the tcp columns compare the two
# implementations and not their launchers' defaults.
OSH_TCP_UCX=(-x UCX_TLS=tcp,self -x UCX_TCP_TX_SEG_SIZE=256k -x UCX_TCP_RX_SEG_SIZE=256k
    -x UCX_MAX_RNDV_LANES=1)

# A result line: case,size,variant,median_ns,min_ns.
row_re='^[^,]*,[0-9]*,[^,]*,[0-9.]*,[0-9.]*$'
problems=()

# check_rows NAME WANT CSV LOG RC: counts the result rows of one job, records a problem when
# they are not all there.
check_rows() {
    local name=$1 want=$2 csv=$3 log=$4 rc=$5 re=${6:-$row_re} rows
    rows=$(grep -cE "$re" "$csv" || true)
    if [[ $rows -ne $want ]]; then
        if [[ $rc -eq 124 || $rc -eq 137 ]]; then
            echo "   $name: timed out after ${JOB_TIMEOUT}s" >&2
        fi
        echo "   $name: exit status $rc, $rows of $want result rows; log tail:" >&2
        tail -n 5 "$log" | sed 's/^/      /' >&2
        problems+=("$name: $rows of $want rows (exit status $rc; log $log)")
    elif [[ $rc -eq 124 || $rc -eq 137 ]]; then
        echo "   $name: ok (all rows; then killed at the ${JOB_TIMEOUT}s time limit)" >&2
    else
        echo "   $name: ok (exit status $rc)" >&2
    fi
}

# run_job NAME NPES ROUND: runs one job, its CSV to $results/NAME.NPES.ROUND.csv; a failed job
# is recorded in `problems`, it does not stop the script.
run_job() {
    local name=$1 n=$2 round=$3 rc=0 want re=$row_re
    local csv="$results/$name.$n.$round.csv" log="$results/$name.$n.$round.log"
    local t=(timeout -k 10 "$JOB_TIMEOUT")
    local osh=(oshrun --allow-run-as-root --oversubscribe -np "$n" "${EXTRA_OSHRUN[@]}")
    # oshmem 4.1.4 segfaults in shmem_finalize on every run here, after the results are out: a
    # non-zero status is expected from it, only missing rows count as a failure.
    case $name in
    direct)
        want=$LAT_ROWS_OURS
        "${t[@]}" "$shmemrun" -n "$n" "$ours" --csv --iters "$ITERS" --reps "$REPS" \
            >"$csv" 2>"$log" || rc=$?
        ;;
    ucx)
        want=$LAT_ROWS_OURS
        UCX_TLS=tcp,self "${t[@]}" "$shmemrun" -n "$n" "$ours" --csv \
            --iters "$UCX_ITERS" --reps "$UCX_REPS" >"$csv" 2>"$log" || rc=$?
        ;;
    oshmem)
        want=$LAT_ROWS_OSHMEM
        "${t[@]}" "${osh[@]}" "$out_dir/latency" csv iters "$ITERS" reps "$REPS" \
            >"$csv" 2>"$log" || rc=$?
        ;;
    c-ours)
        # benches/c/latency.c built with shmemcc: a C program on this runtime's C API.
        want=$LAT_ROWS_OSHMEM
        "${t[@]}" "$shmemrun" -n "$n" "$out_dir/latency-ours" csv iters "$ITERS" reps "$REPS" \
            >"$csv" 2>"$log" || rc=$?
        ;;
    oshmem-tcp)
        # oshmem over the same transport as `ucx` (its log, with UCX_LOG_LEVEL=info, shows
        # "ep_cfg[1]: rma_am(tcp/lo) amo_am(tcp/lo)"), with the same loops and the same UCX
        # settings as ours gets ($OSH_TCP_UCX).
        want=$LAT_ROWS_OSHMEM
        "${t[@]}" "${osh[@]}" "${OSH_TCP_UCX[@]}" "$out_dir/latency" csv iters "$UCX_ITERS" \
            reps "$UCX_REPS" >"$csv" 2>"$log" || rc=$?
        ;;
    tcp-floor)
        # benches/c/tcp_rtt.c: two processes, 8 B each way over TCP on loopback, busy-polling.
        want=1
        "${t[@]}" "$out_dir/tcp_rtt" iters "$UCX_ITERS" reps "$UCX_REPS" >"$csv" 2>"$log" ||
            rc=$?
        ;;
    oshmem-tcp-basic)
        # oshmem's collectives through its SPML (UCX, here tcp) rather than Open MPI's MPI
        # collectives, which use shared memory whatever UCX_TLS says.
        want=5
        "${t[@]}" "${osh[@]}" --mca scoll basic "${OSH_TCP_UCX[@]}" "$out_dir/latency" csv \
            collectives iters "$UCX_ITERS" reps "$UCX_REPS" >"$csv" 2>"$log" || rc=$?
        ;;
    coll-direct)
        want=5
        "${t[@]}" "$shmemrun" -n "$n" "$ours" --csv --collectives --iters "$COLL_ITERS" \
            --reps "$COLL_REPS" >"$csv" 2>"$log" || rc=$?
        ;;
    coll-oshmem)
        want=5
        "${t[@]}" "${osh[@]}" "$out_dir/latency" csv collectives iters "$COLL_ITERS" \
            reps "$COLL_REPS" >"$csv" 2>"$log" || rc=$?
        ;;
    bw-direct)
        want=2
        "${t[@]}" "$shmemrun" -n "$n" "$ours" --csv --bandwidth --iters "$ITERS" \
            --reps "$REPS" >"$csv" 2>"$log" || rc=$?
        ;;
    bw-oshmem)
        want=2
        "${t[@]}" "${osh[@]}" "$out_dir/latency" csv bandwidth iters "$ITERS" reps "$REPS" \
            >"$csv" 2>"$log" || rc=$?
        ;;
    sweep-direct)
        want=$SWEEP_ROWS re=$sweep_re
        "${t[@]}" "$shmemrun" -n "$n" target/release/copy_sweep --bytes "$SWEEP_BYTES" \
            --reps "$SWEEP_REPS" >"$csv" 2>"$log" || rc=$?
        ;;
    sweep-oshmem)
        want=$SWEEP_ROWS re=$sweep_re
        "${t[@]}" "${osh[@]}" "$out_dir/copy_sweep" bytes "$SWEEP_BYTES" reps "$SWEEP_REPS" \
            >"$csv" 2>"$log" || rc=$?
        ;;
    esac
    check_rows "$name at $n PEs, round $round" "$want" "$csv" "$log" "$rc" "$re"
}

# rounds NPES JOB...: ROUNDS rounds of the jobs at NPES PEs, their order rotated per round.
rounds() {
    local n=$1
    shift
    local jobs=("$@") round k
    for ((round = 1; round <= ROUNDS; round++)); do
        echo "== $n PEs, round $round of $ROUNDS: ${jobs[*]}" >&2
        for ((k = 0; k < ${#jobs[@]}; k++)); do
            run_job "${jobs[(k + round - 1) % ${#jobs[@]}]}" "$n" "$round"
        done
    done
}

t_start=$SECONDS
# Pairs whose ratio the tables give run back to back, in alternating order, and their ratio is
# the median of the rounds' ratios: this machine's on-node latencies switch between two modes
# from one minute to the next (a cache line between its two vCPUs: about 55 or 340 ns round
# trip; barrier_all: about 55 or 200 ns), a job's memory-bound copies vary by up to 15% with
# where its memory lies, and the network path's latency drifts by up to a third (get 8 B
# over tcp: 9.5 or 13.2 us).
ROUNDS=$PAIR_ROUNDS rounds 2 direct oshmem
rounds 2 c-ours
# The like-for-like pair over tcp, in more rounds, with the kernel's round trip (a fraction of
# a second) in each round.
ROUNDS=$TCP_ROUNDS rounds 2 ucx oshmem-tcp tcp-floor
rounds 2 oshmem-tcp-basic
for n in "${NPES[@]}"; do
    [[ $n == 2 ]] || rounds "$n" coll-direct coll-oshmem
done
rounds 2 bw-direct bw-oshmem
rounds 2 sweep-direct sweep-oshmem
echo "== shmem! against the call" >&2
dsl_out=$results/dsl.txt
dsl_rc=0
timeout -k 10 "$JOB_TIMEOUT" "$dsl_bin" --iters "$DSL_ITERS" --reps "$DSL_REPS" >"$dsl_out" \
    2>"$results/dsl.log" || dsl_rc=$?
# Data lines: a name, then dsl ns, call ns, ratio, min ratio.
dsl_rows=$(grep -cE '^[^ ].* [0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$' "$dsl_out" || true)
if [[ $dsl_rows -ne 5 || $dsl_rc -ne 0 ]]; then
    echo "   dsl_overhead: exit status $dsl_rc, $dsl_rows of 5 result rows" >&2
    problems+=("dsl_overhead: $dsl_rows of 5 rows (exit status $dsl_rc; log $results/dsl.log)")
else
    echo "   dsl_overhead: ok" >&2
fi
# Problems of parts 5 and 6, which write their result files themselves: they fail the run but
# do not keep this script's files from being written.
side_problems=()
# Part 5: across hosts (network namespaces; root) and heat, benches/hosts.sh: its tables go
# to $results/hosts-tables.md, and it writes hosts.md to the results directory itself; without
# root or `ip netns` it prints a SKIPPED line (and leaves hosts.md as it is).
hosts_rc=0
ROUNDS=$ROUNDS UCX_ITERS=$UCX_ITERS UCX_REPS=$UCX_REPS JOB_TIMEOUT=$JOB_TIMEOUT TINY=$TINY \
    LAT_ROWS_OURS=$LAT_ROWS_OURS LATENCY_BIN=$ours bash benches/hosts.sh "$results" || hosts_rc=$?
if [[ $hosts_rc -ne 0 ]]; then
    side_problems+=("multi-host part (benches/hosts.sh): exit status $hosts_rc (see above)")
fi
# Part 6: Python, shmem_rs against shmem4py on ours and on oshmem (benches/python.sh, its table
# to $py_table; it writes python.md to the results directory itself), then the start-up cost
# (benches/python-init.sh, python-init.md). A tiny run builds nothing: it runs the environments
# already there (CI: shmem_rs from scripts/python.sh, shmem4py on ours from
# scripts/shmem4py.sh), once, or prints a SKIPPED line.
py_table=$results/python-table.md
if [[ $PYTHON != 0 ]]; then
    echo "== Python (shmem_rs, shmem4py)" >&2
    py_rc=0
    if [[ $TINY == 1 ]]; then
        TINY=1 BUILD=0 ROUNDS=1 ITERS=$ITERS BIG_ITERS=2 REPS=$REPS JOB_TIMEOUT=$JOB_TIMEOUT \
            bash benches/python.sh >"$py_table" || py_rc=$?
        if [[ -x target/python/venv/bin/python ]]; then
            TINY=1 VENV=target/python/venv bash benches/python-init.sh >/dev/null || py_rc=$?
        fi
    else
        ROUNDS=$PAIR_ROUNDS ITERS=$ITERS BIG_ITERS=$((ITERS / 50 > 0 ? ITERS / 50 : 1)) \
            REPS=$REPS JOB_TIMEOUT=$JOB_TIMEOUT bash benches/python.sh >"$py_table" || py_rc=$?
        VENV=target/python/venv bash benches/python-init.sh >/dev/null || py_rc=$?
    fi
    if [[ $py_rc -ne 0 ]]; then
        side_problems+=("Python part (benches/python.sh): exit status $py_rc (see above)")
    fi
fi
# Part 7: the message-rate sweep (benches/msg-rate.sh: put/get/put_nbi/get_nbi windows of
# 1 B - 1 MiB, ours Rust and C against oshmem, direct and tcp, and put-then-consume); it
# writes msg-rate.md and msg_rate.png to the results directory itself. MSG_RATE=0 skips it.
if [[ ${MSG_RATE:-1} != 0 ]]; then
    echo "== message rate (benches/msg-rate.sh)" >&2
    mr_rc=0
    if [[ $TINY == 1 ]]; then
        TINY=1 PLOT=$PLOT JOB_TIMEOUT=$JOB_TIMEOUT bash benches/msg-rate.sh >/dev/null ||
            mr_rc=$?
    else
        ROUNDS=$ROUNDS PLOT=$PLOT JOB_TIMEOUT=$JOB_TIMEOUT bash benches/msg-rate.sh \
            >/dev/null || mr_rc=$?
    fi
    if [[ $mr_rc -ne 0 ]]; then
        side_problems+=("message-rate part (benches/msg-rate.sh): exit status $mr_rc (see above)")
    fi
fi
elapsed=$((SECONDS - t_start))

# All rows as "impl,npes,case,size,variant,median_ns,min_ns,round".
all_rows() {
    local f name n round
    for f in "$results"/*.csv; do
        [[ -e $f ]] || continue
        IFS=. read -r name n round _ <<<"$(basename "$f")"
        grep "$row_re" "$f" | awk -v pre="$name,$n," -v post=",$round" '{ print pre $0 post }' || true
    done
}

# Shared awk helpers: median over rounds, number and size formats.
awk_lib='
function median(key,    n, i, j, t, v) {
    n = cnt[key]
    if (n == 0) return -1
    for (i = 1; i <= n; i++) v[i] = val[key, i]
    for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function fmt(x) { return x < 0 ? "n/a" : sprintf("%.1f", x) }
function ratio(a, b) { return (a < 0 || b <= 0) ? "n/a" : sprintf("%.3f", a / b) }
function hsize(b) { return b >= 1048576 ? (b / 1048576) " MiB" : b >= 1024 ? (b / 1024) " KiB" : b " B" }
# The median over rounds of a / b within the same round, from at[impl, key, round] (the two
# implementations of a pair run back to back in each round, in alternating order).
function paired(a, b, key,    r, k, n) {
    k = "paired" SUBSEP a SUBSEP b SUBSEP key
    if (!(k in done)) {
        done[k] = 1
        for (r = 1; r <= 64; r++)
            if ((a, key, r) in at && (b, key, r) in at && at[b, key, r] > 0)
                val[k, ++cnt[k]] = at[a, key, r] / at[b, key, r]
    }
    return cnt[k] ? sprintf("%.3f", median(k)) : "n/a"
}
'

# The copy sweep's medians over rounds as "impl,op,size,d,src_align,median_ns" (impl ours or
# oshmem), for its table and plot.
sweep_csv=$results/sweep.csv
# The plots are drawn here, then copied to the results directory with the tables.
sweep_png=$results/copy_sweep.png
for f in "$results"/sweep-direct.*.csv "$results"/sweep-oshmem.*.csv; do
    [[ -e $f ]] || continue
    imp=ours
    [[ $(basename "$f") == sweep-oshmem.* ]] && imp=oshmem
    grep -E "$sweep_re" "$f" | awk -v pre="$imp," '{ print pre $0 }' || true
done | awk -F, "$awk_lib"'
    {
        key = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4 SUBSEP $5
        val[key, ++cnt[key]] = $6 + 0
        if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
    }
    END {
        for (i = 1; i <= nk; i++) {
            split(keys[i], f, SUBSEP)
            printf "%s,%s,%s,%s,%s,%.1f\n", f[1], f[2], f[3], f[4], f[5], median(keys[i])
        }
    }' >"$sweep_csv"

# The tables, one Markdown body per family (the result file without its header comment and first
# sentence, which results_write adds): md/FAMILY.md.
md=$results/md
mkdir -p "$md"
families=(latency c-latency collectives bandwidth copy-sweep dsl)
declare -A title=(
    [latency]="Latency, 2 PEs on one node, ns per operation"
    [c-latency]="The C twin on this runtime, 2 PEs on one node, ns per operation"
    [collectives]="Collectives, ns per call, by number of PEs on one node"
    [bandwidth]="Bandwidth, 256 KiB, PE 0 (2 PEs on one node)"
    [copy-sweep]="Copy sweep: time against d = (dst - src) mod 4096, PE 0 and PE 1 on one node"
    [dsl]="shmem! against the hand-written call"
)
declare -A sentence=(
    [latency]="The latency of single operations (RMA at 8 B to 4 MiB, strided, atomics, ping-pong, a put_nbi stream, collectives) between 2 PEs on one node, ours against Open MPI's OpenSHMEM, on the direct path and over UCX's tcp transport."
    [c-latency]="The same C benchmark program (benches/c/latency.c) on this runtime's C API and on Open MPI's OpenSHMEM, next to the Rust benchmark on this runtime."
    [collectives]="The time per collective call at each PE count on one node, ours against Open MPI's OpenSHMEM."
    [bandwidth]="The bandwidth of a 256 KiB put + quiet against a local memcpy of the same size, ours and Open MPI's OpenSHMEM."
    [copy-sweep]="How the time of a copy (put + quiet, get, memcpy) depends on the distance between destination and source modulo a page and on the source's alignment, ours against Open MPI's OpenSHMEM."
    [dsl]="The CPU cost of the shmem! macro's expansion against the hand-written runtime call it stands for."
)
{
    echo "Median over $PAIR_ROUNDS rounds ($TCP_ROUNDS for ours UCX and oshmem tcp, $ROUNDS for C on ours) of each run's median; the ratios"
    echo "direct/oshmem and UCX/oshmem tcp are the medians over rounds of the ratio within a round, where"
    echo "the two run back to back in alternating order (on-node latencies here switch between two"
    echo "modes from one minute to the next, tcp's drift by up to a third). ours direct and oshmem: $REPS loops x"
    echo "$ITERS ops, fewer above 4 KiB, ITERS/2 for ping-pong, ITERS/4 for collectives; ours UCX:"
    echo "the same cases, $UCX_REPS loops x $UCX_ITERS ops. ours direct = shmem-core, on-node"
    echo "load/store; ours UCX = shmem-core with UCX_TLS=tcp,self (tcp has no RDMA: PE 1's progress"
    echo "engine, running while it waits in barrier_all, carries out puts, gets and atomics);"
    echo "oshmem = Open MPI's OpenSHMEM 4.1.4 (static = file-scope static long[], its data segment;"
    echo "it has no put_signal). size: bytes per operation (per PE for collectives); ping-pong rows"
    echo "are half a round trip; the put_nbi row is ns per put in windows of 64 (1e9 / message"
    echo "rate). Collectives: barrier_all is a back-to-back loop; the others are OSU-style (an"
    echo "untimed barrier_all before each call, only the call timed on every PE, the loop's figure"
    echo "the average of the PEs' means; oshmem: the OpenSHMEM 1.4 active-set calls, broadcast"
    echo "root 0). oshmem tcp = oshmem over the same transport as ours UCX (oshrun -x"
    echo "UCX_TLS=tcp,self; rma_am/amo_am over tcp/lo) and with the UCX settings ours gets (256 KiB"
    echo "TCP segments, one rendezvous lane), with ours UCX's loops; UCX/oshmem tcp is the"
    echo "like-for-like comparison over the network path (TCP on loopback here also flips between"
    echo "two speeds from one job to the next, get 8 B about 9.5 or 13.2 us for either library, so"
    echo "a round's two jobs can land in different modes: the median over rounds absorbs it unless"
    echo "the flips fall unevenly on one side). oshmem's collectives"
    echo "run over Open MPI's own (shared-memory) collectives whatever UCX_TLS says; oshmem tcp basic"
    echo "= its own OpenSHMEM collectives instead (--mca scoll basic), which go through UCX, so over"
    echo "tcp (all but barrier_all, which even then exchanges no TCP message: strace), and UCX/basic"
    echo "= ours UCX / oshmem tcp basic."
    echo
    echo "put + quiet / get variants: aligned = page-aligned private buffer and heap array (as the"
    echo "OSU benchmarks); vec = a \`Vec<u8>\` / malloc'd private buffer where the allocator puts it"
    echo "(from 128 KiB on glibc maps it 16 bytes past a page start: a get's (dst - src) mod 4096 is"
    echo "16) against a page-aligned heap array; vec odd = the same at byte 1 of the buffer and byte"
    echo "3 of the heap array (a get's distance 14). Each run's log lists the distances."
    echo "The plot latency.png beside this file shows the aligned put + quiet and get rows against"
    echo "the size."
    echo
    all_rows | awk -F, "$awk_lib"'
    # The kernel round trip (tcp_rtt), by round.
    $2 == 2 && $1 == "tcp-floor" { fl[$8] = $6 + 0; val["floor", ++cnt["floor"]] = $6 + 0; next }
    $2 == 2 && ($1 == "direct" || $1 == "ucx" || $1 == "oshmem" || $1 == "oshmem-tcp" || $1 == "oshmem-tcp-basic") {
        key = $1 SUBSEP $3 SUBSEP $4 SUBSEP $5
        val[key, ++cnt[key]] = $6 + 0
        row = $3 SUBSEP $4 SUBSEP $5
        if (!(row in seen)) { seen[row] = 1; order[++nrows] = row; rc[nrows] = $3; rs[nrows] = $4; rv[nrows] = $5 }
        at[$1, row, $8] = $6 + 0
    }
    END {
        printf "| %-28s | %7s | %-7s | %12s | %12s | %12s | %13s | %12s | %15s | %16s | %9s |\n", "case", "size", "variant", "ours direct", "ours UCX", "oshmem", "direct/oshmem", "oshmem tcp", "UCX/oshmem tcp", "oshmem tcp basic", "UCX/basic"
        printf "|------------------------------|--------:|---------|-------------:|-------------:|-------------:|--------------:|-------------:|----------------:|-----------------:|----------:|\n"
        # Rows in the order the runs print them (the direct run is read first: file names sort
        # "direct" < "oshmem" < "ucx"), heap, static, then the rest.
        for (r = 1; r <= nrows; r++) {
            d = median("direct" SUBSEP order[r]); u = median("ucx" SUBSEP order[r]); o = median("oshmem" SUBSEP order[r])
            ot = median("oshmem-tcp" SUBSEP order[r]); ob = median("oshmem-tcp-basic" SUBSEP order[r])
            printf "| %-28s | %7s | %-7s | %12s | %12s | %12s | %13s | %12s | %15s | %16s | %9s |\n", rc[r], hsize(rs[r]), rv[r], fmt(d), fmt(u), fmt(o), paired("direct", "oshmem", order[r]), fmt(ot), paired("ucx", "oshmem-tcp", order[r]), fmt(ob), ratio(u, ob)
            # The tcp pair over the RMA and atomics rows (not the collectives): rows at or
            # below 1.0, and for every round of them which of the two was faster.
            if (rc[r] ~ /^(barrier_all|broadcast|sum_reduce|fcollect|alltoall)/) continue
            p = paired("ucx", "oshmem-tcp", order[r])
            if (p == "n/a") continue
            tcp_rows++
            if (p + 0 <= 1.0) tcp_met++
            for (k = 1; k <= 64; k++)
                if (("ucx", order[r], k) in at && ("oshmem-tcp", order[r], k) in at && at["oshmem-tcp", order[r], k] > 0) {
                    x = at["ucx", order[r], k] / at["oshmem-tcp", order[r], k]
                    val["tcp-all", ++cnt["tcp-all"]] = x
                    if (x < 1.0) tcp_faster++
                }
            # One round trip each (8 B get, g and the fetching atomics): against the kernel
            # round trip of the same round, per implementation, and the range of the medians
            # over the rows.
            if (rs[r] != 8 || rc[r] !~ /^(get|g|fetch_add|compare_swap|swap)$/) continue
            fl_rows++
            for (i = 1; i <= 2; i++) {
                imp = i == 1 ? "ucx" : "oshmem-tcp"
                for (k = 1; k <= 64; k++)
                    if ((k in fl) && fl[k] > 0 && ((imp, order[r], k) in at)) {
                        x = at[imp, order[r], k] / fl[k]
                        val[imp SUBSEP "fl" SUBSEP r, ++cnt[imp SUBSEP "fl" SUBSEP r]] = x
                        val[imp SUBSEP "fl-all", ++cnt[imp SUBSEP "fl-all"]] = x
                    }
                if (!cnt[imp SUBSEP "fl" SUBSEP r]) continue
                x = median(imp SUBSEP "fl" SUBSEP r)
                if (!(imp in fl_lo) || x < fl_lo[imp]) fl_lo[imp] = x
                if (!(imp in fl_hi) || x > fl_hi[imp]) fl_hi[imp] = x
            }
        }
        if (tcp_rows)
            printf "\nOver tcp, the RMA and atomics rows (all but the collectives): %d of %d at or below 1.0 in UCX/oshmem tcp. Taking every round of every such row on its own, ours was the faster of the two in %d of %d, and the median of those %d ratios is %.3f.\n", tcp_met, tcp_rows, tcp_faster, cnt["tcp-all"], cnt["tcp-all"], median("tcp-all")
        if (cnt["floor"] && ("ucx" in fl_lo) && ("oshmem-tcp" in fl_lo))
            printf "\nThe floor under the %d one-round-trip rows (get, g, fetch_add, compare_swap, swap; 8 B): one TCP round trip on loopback between two busy-polling processes, no library (benches/c/tcp_rtt.c, 8 B each way), median %.1f us over %d rounds. Each row over the floor in the same round, median over rounds: ours UCX %.2f - %.2f (every round of every row: median %.2f), oshmem tcp %.2f - %.2f (%.2f).\n", fl_rows, median("floor") / 1000, cnt["floor"], fl_lo["ucx"], fl_hi["ucx"], median("ucx" SUBSEP "fl-all"), fl_lo["oshmem-tcp"], fl_hi["oshmem-tcp"], median("oshmem-tcp" SUBSEP "fl-all")
    }'
} >"$md/latency.md"
{
    echo "benches/c/latency.c, unchanged, built with this project's shmemcc (libshmem.so, the"
    echo "OpenSHMEM C API over shmem-core) and run under shmemrun (C on ours), next to the Rust"
    echo "benchmark on the same runtime (ours Rust: the ours direct column of latency.md) and to"
    echo "the same C program on Open MPI (oshmem). Same loops and rounds as the latency table."
    echo
    all_rows | awk -F, "$awk_lib"'
    $2 == 2 && ($1 == "direct" || $1 == "c-ours" || $1 == "oshmem") {
        key = $1 SUBSEP $3 SUBSEP $4 SUBSEP $5
        val[key, ++cnt[key]] = $6 + 0
        row = $3 SUBSEP $4 SUBSEP $5
        if ($1 == "c-ours" && !(row in seen)) { seen[row] = 1; order[++nrows] = row; rc[nrows] = $3; rs[nrows] = $4; rv[nrows] = $5 }
    }
    END {
        printf "| %-28s | %7s | %-7s | %10s | %10s | %10s | %13s | %14s |\n", "case", "size", "variant", "ours Rust", "C on ours", "oshmem", "C ours/Rust", "C ours/oshmem"
        printf "|------------------------------|--------:|---------|-----------:|-----------:|-----------:|--------------:|---------------:|\n"
        for (r = 1; r <= nrows; r++) {
            d = median("direct" SUBSEP order[r]); c = median("c-ours" SUBSEP order[r]); o = median("oshmem" SUBSEP order[r])
            printf "| %-28s | %7s | %-7s | %10s | %10s | %10s | %13s | %14s |\n", rc[r], hsize(rs[r]), rv[r], fmt(d), fmt(c), fmt(o), ratio(c, d), ratio(c, o)
        }
    }'
} >"$md/c-latency.md"
{
    echo "OSU-style, the same in both implementations: barrier_all is a back-to-back loop timed on"
    echo "PE 0; for the others each iteration is an untimed barrier_all, then the call, timed on"
    echo "every PE; a loop's figure is the average over all PEs of their mean per call; the table"
    echo "gives the median over loops (then over $ROUNDS rounds; the ratio: the median of the rounds' ratios,"
    echo "the two implementations running back to back). 8 bytes per PE; broadcast from"
    echo "root 0. ours = shmem-core, direct path (mailbox collectives, one hop up to 8 PEs); oshmem = the"
    echo "OpenSHMEM 1.4 active-set calls. 2 PEs: from the latency run ($PAIR_ROUNDS rounds); other counts: $COLL_REPS loops x"
    echo "$COLL_ITERS/4 calls. The machine has $(nproc) cores: above that PEs share cores and wait"
    echo "for each other's time slices."
    echo
    all_rows | awk -F, -v npes="${NPES[*]}" "$awk_lib"'
    ($1 == "direct" || $1 == "oshmem" || $1 == "coll-direct" || $1 == "coll-oshmem") && ($3 == "barrier_all" || $3 == "broadcast" || $3 == "sum_reduce 1 long" || $3 == "fcollect" || $3 == "alltoall") {
        imp = ($1 ~ /direct/) ? "ours" : "oshmem"
        key = imp SUBSEP $2 SUBSEP $3
        val[key, ++cnt[key]] = $6 + 0
        at[imp, $2 SUBSEP $3, $8] = $6 + 0
        if (!($3 in seen)) { seen[$3] = 1; order[++nrows] = $3; size[$3] = $4 }
    }
    END {
        k = split(npes, ns, " ")
        line = sprintf("| %-17s | %4s |", "case", "size"); sep = "|-------------------|-----:|"
        for (i = 1; i <= k; i++) {
            line = line sprintf(" %9s | %9s | %7s |", "ours " ns[i], "oshmem " ns[i], "ratio " ns[i])
            sep = sep "----------:|----------:|--------:|"
        }
        print line; print sep
        for (r = 1; r <= nrows; r++) {
            c = order[r]
            line = sprintf("| %-17s | %4s |", c, hsize(size[c]))
            for (i = 1; i <= k; i++) {
                a = median("ours" SUBSEP ns[i] SUBSEP c); b = median("oshmem" SUBSEP ns[i] SUBSEP c)
                line = line sprintf(" %9s | %9s | %7s |", fmt(a), fmt(b), paired("ours", "oshmem", ns[i] SUBSEP c))
            }
            print line
        }
    }'
} >"$md/collectives.md"
{
    echo "put + quiet into PE 1's heap against a memcpy between two private 256 KiB buffers of"
    echo "PE 0, in alternating loops of $((ITERS * 4096 / 262144 > 10 ? ITERS * 4096 / 262144 : 10)) copies, $REPS loops, median over $ROUNDS rounds; GB/s = 1e9 bytes/s."
    echo
    all_rows | awk -F, "$awk_lib"'
    $1 == "bw-direct" || $1 == "bw-oshmem" {
        key = $1 SUBSEP $3
        val[key, ++cnt[key]] = $6 + 0
        size = $4
    }
    function gbs(ns) { return ns <= 0 ? -1 : size / ns }
    function line(name, imp,    p, m) {
        p = gbs(median(imp SUBSEP "put 256 KiB + quiet")); m = gbs(median(imp SUBSEP "memcpy 256 KiB"))
        printf "- %s: put %s GB/s, memcpy %s GB/s, put/memcpy = %s\n", name, p < 0 ? "n/a" : sprintf("%.2f", p), m < 0 ? "n/a" : sprintf("%.2f", m), ratio(p, m)
    }
    END { line("ours (direct path)", "bw-direct"); line("oshmem", "bw-oshmem") }'
} >"$md/bandwidth.md"
{
    echo "put + quiet and get between a private buffer of PE 0 and PE 1's heap (ours: direct path;"
    echo "oshmem: shmem_putmem/shmem_getmem, also a copy into the peer's mapping), and memcpy between"
    echo "two private buffers (glibc; ours = from the Rust run, oshmem = from the C run), at 21"
    echo "distances d from 0 to 4095 and source addresses 0, 7 and 4093 mod 4096 (4093: the source"
    echo "crosses a page boundary, and for many d the destination too); ns per copy, the median"
    echo "over $ROUNDS rounds of each run's median over $SWEEP_REPS loops of $SWEEP_BYTES bytes (at least four copies);"
    echo "each of a run's $SWEEP_REPS repetitions goes round all points of a size, so that a change in"
    echo "the machine's speed during the run falls on every point alike."
    echo "best / worst: over all d and the three alignments, the worst's (d, source alignment) in"
    echo "brackets; the last two columns: ours / oshmem at oshmem's and at ours' worst point."
    echo "The heat map copy_sweep.png beside this file shows every point's time over the best of"
    echo "its size and op."
    echo
    awk -F, "$awk_lib"'
    {
        v = $6 + 0; k = $1 SUBSEP $2 SUBSEP $3
        at[$1, $2, $3, $4, $5] = v
        if (!(k in best) || v < best[k]) best[k] = v
        if (!(k in worst) || v > worst[k]) { worst[k] = v; wd[k] = $4; wa[k] = $5 }
        if (!($3 in seen)) { seen[$3] = 1; sizes[++ns] = $3 + 0 }
    }
    function cell(imp, op, s,    k) {
        k = imp SUBSEP op SUBSEP s
        if (!(k in best)) return sprintf(" %9s | %9s | %-11s | %6s |", "n/a", "n/a", "", "n/a")
        return sprintf(" %9.1f | %9.1f | %-11s | %6s |", best[k], worst[k], "(" wd[k] ", " wa[k] ")", ratio(worst[k], best[k]))
    }
    function at_point(op, s, imp,    k, o, u) {
        k = imp SUBSEP op SUBSEP s
        if (!(k in worst)) return "n/a"
        o = ("oshmem", op, s, wd[k], wa[k]) in at ? at["oshmem", op, s, wd[k], wa[k]] : -1
        u = ("ours", op, s, wd[k], wa[k]) in at ? at["ours", op, s, wd[k], wa[k]] : -1
        return ratio(u, o)
    }
    END {
        for (i = 2; i <= ns; i++) { t = sizes[i]; for (j = i - 1; j >= 1 && sizes[j] > t; j--) sizes[j + 1] = sizes[j]; sizes[j + 1] = t }
        printf "| %7s | %-6s | %9s | %9s | %-11s | %6s | %9s | %9s | %-11s | %6s | %12s | %12s |\n", "size", "op", "ours best", "worst", "at (d, a)", "w/b", "oshmem best", "worst", "at (d, a)", "w/b", "ours/oshmem at oshmem worst", "ours/oshmem at ours worst"
        printf "|--------:|--------|----------:|----------:|-------------|-------:|----------:|----------:|-------------|-------:|-------------:|-------------:|\n"
        split("put get memcpy", ops, " ")
        for (i = 1; i <= ns; i++)
            for (o = 1; o <= 3; o++)
                printf "| %7s | %-6s |%s%s %12s | %12s |\n", hsize(sizes[i]), ops[o], cell("ours", ops[o], sizes[i]), cell("oshmem", ops[o], sizes[i]), at_point(ops[o], sizes[i], "oshmem"), at_point(ops[o], sizes[i], "ours")
    }' "$sweep_csv"
} >"$md/copy-sweep.md"
{
    echo "One PE, to its own heap (the CPU cost of the expansion, not the wire); the two forms in"
    echo "alternating loops of $DSL_ITERS ops, $DSL_REPS loops each; ns per operation (medians), ratio"
    echo "of the medians and of the fastest loops. Built with loops aligned to 64 bytes"
    echo "(benches/dsl-overhead.sh)."
    echo
    results_dsl_table "$dsl_out"
} >"$md/dsl.md"

for f in "${families[@]}"; do
    echo
    echo "### ${title[$f]}"
    echo
    cat "$md/$f.md"
done
if [[ -s $py_table ]]; then
    echo
    echo "### Python: shmem4py, 2 PEs on one node"
    echo
    cat "$py_table"
fi
if [[ -f $results/hosts-tables.md ]]; then
    echo
    cat "$results/hosts-tables.md"
fi

if [[ -n $plot_bin ]]; then
    # "case,size,direct,ucx,oshmem" for the aligned put + quiet and get rows.
    all_rows | awk -F, "$awk_lib"'
    $2 == 2 && ($1 == "direct" || $1 == "ucx" || $1 == "oshmem") && $5 == "aligned" && ($3 == "put + quiet" || $3 == "get") {
        key = $1 SUBSEP $3 SUBSEP $4
        val[key, ++cnt[key]] = $6 + 0
        row = $3 SUBSEP $4
        if (!(row in seen)) { seen[row] = 1; order[++nrows] = row; rc[nrows] = $3; rs[nrows] = $4 }
    }
    END {
        for (r = 1; r <= nrows; r++)
            printf "%s,%s,%s,%s,%s\n", rc[r], rs[r], median("direct" SUBSEP order[r]), median("ucx" SUBSEP order[r]), median("oshmem" SUBSEP order[r])
    }' >"$results/plot.csv"
    png=$results/latency.png
    if "$plot_bin" "$png" <"$results/plot.csv"; then
        echo
        echo "plot: $png"
    else
        problems+=("latency_plot failed")
    fi
fi
if [[ -n $sweep_plot_bin ]]; then
    if "$sweep_plot_bin" "$sweep_png" <"$sweep_csv"; then
        echo "plot: $sweep_png"
    else
        problems+=("sweep_plot failed")
    fi
fi

echo >&2
echo "run.sh: the jobs took ${elapsed}s (raw results: $results/)" >&2
if ((${#side_problems[@]} > 0)); then
    echo "run.sh: FAILED: the parts across hosts or in Python did not produce all their rows:" >&2
    printf '   %s\n' "${side_problems[@]}" >&2
fi
if ((${#problems[@]} > 0)); then
    echo "run.sh: FAILED: some jobs did not produce all their rows (the result files in" \
        "$RESULTS_DIR are left as they were; this run's tables: $md/):" >&2
    printf '   %s\n' "${problems[@]}" >&2
    exit 1
fi
knobs="ROUNDS=$ROUNDS PAIR_ROUNDS=$PAIR_ROUNDS TCP_ROUNDS=$TCP_ROUNDS ITERS=$ITERS REPS=$REPS"
knobs+=" UCX_ITERS=$UCX_ITERS UCX_REPS=$UCX_REPS COLL_ITERS=$COLL_ITERS COLL_REPS=$COLL_REPS"
knobs+=" NPES_LIST=\"$NPES_LIST\" DSL_ITERS=$DSL_ITERS DSL_REPS=$DSL_REPS"
knobs+=" SWEEP_BYTES=$SWEEP_BYTES SWEEP_REPS=$SWEEP_REPS${OSHRUN_FLAGS:+ OSHRUN_FLAGS=\"$OSHRUN_FLAGS\"}"
for f in "${families[@]}"; do
    results_write "$f.md" benches/run.sh "$knobs" "${sentence[$f]}" "$md/$f.md"
done
if [[ -n $plot_bin ]]; then
    results_copy "$results/latency.png" latency.png
fi
if [[ -n $sweep_plot_bin ]]; then
    results_copy "$sweep_png" copy_sweep.png
fi
# The headline table from the files just written and the others there: headline.md, and the
# README's table when these are the committed results (benches/results/).
if ! bash benches/headline.sh; then
    echo "run.sh: FAILED: benches/headline.sh" >&2
    exit 1
fi
if ((${#side_problems[@]} > 0)); then
    exit 1
fi
