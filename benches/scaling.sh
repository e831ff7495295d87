#!/usr/bin/env bash
# Scaling against the PE count: shmem-core (through its C API) and Open MPI's OpenSHMEM (oshmem)
# run the same plain OpenSHMEM program, benches/c/scaling.c (built with shmemcc and with oshcc),
# at 1 to 128 PEs on this node, and ours alone on 2 to 8 network-namespace "hosts". Per job:
#   init      shmem_init's wall-clock time on PE 0 (startup: from the launcher's start to the
#             end of shmem_init, PE 0; the job's whole wall time is recorded too)
#   memory    Rss and Pss per PE (/proc/self/smaps_rollup, mean and max over the PEs) after
#             shmem_init and at the end; Pss divides shared pages among their sharers
#   shm       the peak growth of /dev/shm's used space during the job (sampled every SAMPLE_MS
#             ms; pages actually allocated, including files already unlinked but still mapped;
#             not memfd or SysV segments, which Pss covers where they are mapped). As root each
#             job gets a /dev/shm of its own (PRIVATE_SHM): a fresh tmpfs of the same size in a
#             mount namespace of its own, so that other users' jobs on the machine neither add
#             to the figure nor see the job's files
#   leftovers files the job left in /dev/shm: new since the job started, still there a moment
#             after it, and mapped or held open by no process; ours must leave none (a problem
#             when it does); they are listed (and go with the private tmpfs, or with CLEAN_SHM=1
#             are deleted from the shared /dev/shm)
#   latency   barrier_all, sum reduce of 1 long, fcollect and alltoall of 8 B per PE, and an
#             all-to-all put round (8 B from every PE to every other, then quiet + barrier_all):
#             the first one (first contact with every peer) and the steady state
# Variants, alternating within each PE count, their order rotated round by round:
#   ours        shmemrun, default environment (the direct shared-memory path on one node)
#   oshmem      oshrun --allow-run-as-root --oversubscribe, default settings
#   ours-tcp    shmemrun with UCX_TLS=tcp,self (every transfer through UCX over tcp)
#   base, base-tcp  as ours and ours-tcp, on the release build of an earlier commit in BASE_BUILD
#               (a same-run comparison against it; not in the default VARIANTS)
#   oshmem-tcp  oshrun with the UCX settings of benches/run.sh's oshmem-tcp jobs (OSH_TCP_UCX:
#               UCX_TLS=tcp,self and the TCP segment size and rendezvous lanes ours gets)
# Default heap size on both sides. oshmem 4.1.4 segfaults inside shmem_finalize here (after the
# results are out): its non-zero exit status is expected; a job counts when it printed every
# metric and "checks,ok".
# Host part (root, `ip netns`): for each count in HOSTS, `scripts/netns-hosts.sh up TAG N` makes
# N hosts 10.231.TAG.1..N, and ours runs with HOST_PES PEs per host under
# `shmemrun --hosts h1:k,...,hN:k --rsh "bash scripts/netns-hosts.sh exec {host}"` started inside
# host 1, SHMEM_BIND_TO=none (the hosts share this machine's CPUs), default transport settings.
# A count whose hosts cannot be made is SKIPPED (N = 2 falls back to the two-host `up TAG`).
#
# Writes to RESULTS: raw.csv (variant,npes,round,metric,value; every job's metrics, the
# program's and this script's), summary.csv (variant,npes,metric,median over rounds),
# tables.md (the tables printed at the end), and per job VARIANT.NPES.ROUND.{out,log,shm}
# (the program's output, its stderr, the shm samples), and draws RESULTS/scaling.png with
# scaling_plot. When no job failed, the tables go to scaling.md and the plot to scaling.png in
# the results directory (benches/results/; TINY=1: target/bench-results/; RESULTS_DIR=... to
# choose), scaling.md begun by a comment naming the script, the date, the machine and the knobs;
# a run with a failed job leaves them as they were. Exits non-zero if a job failed its checks,
# did not print all its metrics, or ours left files in /dev/shm.
#
# Usage: benches/scaling.sh                 (from anywhere)
#        TINY=1 benches/scaling.sh          (a quick check: 1 2 4 PEs, hosts 2, small loops)
#        NPES="8 16 32 64" ROUNDS=2 benches/scaling.sh
# Knobs (environment; TINY=1 changes the defaults, explicit values still win):
#   NPES="1 2 4 8 16 32 64 128"  PE counts on this node (TINY: 1 2 4)
#   VARIANTS="ours oshmem ours-tcp oshmem-tcp"   which variants run, in the first round's order
#   ROUNDS=1                     rounds per PE count (TINY: 1)
#   ITERS=256 REPS=5             calls per timed loop (scaled down as 8 x ITERS / PEs above 8
#                                PEs) and loops per collective (TINY: 16, 3)
#   PUT_ROUNDS=9                 steady-state put rounds (TINY: 3)
#   HOSTS="2 4 8"                host counts of the host part, "" to leave it out (TINY: 2)
#   HOST_PES=2                   PEs per host
#   HOST_TAG=43                  netns-hosts.sh tag of the host part (locked while it runs)
#   NETNS=scripts/netns-hosts.sh the host script
#   JOB_TIMEOUT=600              seconds before a job is killed (TINY: 120)
#   SAMPLE_MS=50                 shm sampling period
#   PRIVATE_SHM=1                a private /dev/shm per job (needs root and unshare; 0 when
#                                either is missing, with a note: then the figure is machine-wide)
#   CLEAN_SHM=1                  with PRIVATE_SHM=0: delete the orphaned files a job left in
#                                /dev/shm (0: keep them)
#   MEM_PCT=80                   memory guard: a job is SKIPPED when its variant's largest
#                                footprint per PE so far (peak /dev/shm growth / PEs + Pss)
#                                times its PE count exceeds MEM_PCT % of MemAvailable (there is
#                                no swap: a job past it would bring in the OOM killer)
#   BASE_BUILD=DIR               for the base variants: a release build directory of an earlier
#                                commit holding shmemrun and shmemcc (e.g. benches/compare-revs.sh's
#                                worktree built with `cargo build --release -p shmem-run -p
#                                shmem-capi` into target/compare-revs/target/release); BASE_LABEL
#                                names it in the table's notes (e.g. "commit 913409d")
#   BUILD=1                      0 skips cargo build (the binaries must exist)
#   PLOT=1                       0 skips the plot
#   RESULTS=target/bench-results-scaling   directory of the raw results (emptied first)
#   RESULTS_DIR=benches/results  where scaling.md and scaling.png go (TINY: target/bench-results)
#   OSHRUN_FLAGS="..."           extra flags for oshrun
# Needs: cargo, and oshcc/oshrun from the Debian packages openmpi-bin and libopenmpi-dev.
set -euo pipefail

# Internal: `scaling.sh --job META SHM PRIVATE CLEAN SIZE SAMPLE_MS CMD...` runs one job (CMD
# with "t0 NS" appended, NS the launch time): with PRIVATE=1 on a fresh tmpfs of SIZE bytes on
# /dev/shm (run_job starts it in a mount namespace of its own), so that what /dev/shm holds is
# the job's alone, other users' jobs on this machine neither add to it nor see it; samples
# /dev/shm's used bytes (growth since the start) into SHM every SAMPLE_MS ms and writes
# "job_ns,NS" and "left,FILE..." (the files new since the start that no process maps or holds
# open a moment after CMD ended; deleted with CLEAN=1) to META. Exits with CMD's status.
if [[ ${1:-} == --job ]]; then
    meta=$2 shm=$3 private=$4 clean=$5 size=$6 period=$7
    shift 7
    if [[ $private == 1 ]]; then
        mount -t tmpfs -o "size=$size,mode=1777" scaling-shm /dev/shm || exit 125
    fi
    used() {
        local b f s
        read -r b f s < <(stat -f -c '%b %f %S' /dev/shm)
        echo $(((b - f) * s))
    }
    files() { find /dev/shm -mindepth 1 -maxdepth 1 -printf '%f\n' | sort; }
    in_use() {
        grep -qsF "/dev/shm/$1" /proc/[0-9]*/maps && return 0
        find /proc/[0-9]*/fd -lname "/dev/shm/$1" -print -quit 2>/dev/null | grep -q .
    }
    before=$(files)
    base=$(used)
    period=$(awk -v ms="$period" 'BEGIN { printf "%.3f", ms / 1000 }')
    (
        while :; do
            echo $(($(used) - base))
            sleep "$period"
        done
    ) >"$shm" &
    spid=$!
    rc=0
    t0=$(date +%s%N)
    "$@" t0 "$t0" || rc=$?
    t1=$(date +%s%N)
    kill "$spid" 2>/dev/null || true
    wait "$spid" 2>/dev/null || true
    echo $(($(used) - base)) >>"$shm"
    # A finishing job's own clean-up may take a moment.
    tries=0
    while :; do
        left=()
        while read -r f; do
            [[ -n $f ]] && ! in_use "$f" && left+=("$f")
        done < <(comm -13 <(echo "$before") <(files))
        ((${#left[@]} == 0 || ++tries > 10)) && break
        sleep 0.2
    done
    if [[ $clean == 1 ]]; then
        for f in "${left[@]}"; do
            rm -f "/dev/shm/$f"
        done
    fi
    printf 'job_ns,%s\nleft,%s\n' "$((t1 - t0))" "${left[*]}" >"$meta"
    exit "$rc"
fi

TINY=${TINY:-0}
if [[ $TINY == 1 ]]; then
    NPES=${NPES:-1 2 4}
    ROUNDS=${ROUNDS:-1}
    ITERS=${ITERS:-16}
    REPS=${REPS:-3}
    PUT_ROUNDS=${PUT_ROUNDS:-3}
    HOSTS=${HOSTS-2}
    JOB_TIMEOUT=${JOB_TIMEOUT:-120}
else
    NPES=${NPES:-1 2 4 8 16 32 64 128}
    ROUNDS=${ROUNDS:-1}
    ITERS=${ITERS:-256}
    REPS=${REPS:-5}
    PUT_ROUNDS=${PUT_ROUNDS:-9}
    HOSTS=${HOSTS-2 4 8}
    JOB_TIMEOUT=${JOB_TIMEOUT:-600}
fi
VARIANTS=${VARIANTS:-ours oshmem ours-tcp oshmem-tcp}
HOST_PES=${HOST_PES:-2}
HOST_TAG=${HOST_TAG:-43}
SAMPLE_MS=${SAMPLE_MS:-50}
CLEAN_SHM=${CLEAN_SHM:-1}
MEM_PCT=${MEM_PCT:-80}
PRIVATE_SHM=${PRIVATE_SHM:-1}
BUILD=${BUILD:-1}
PLOT=${PLOT:-1}
read -r -a EXTRA_OSHRUN <<<"${OSHRUN_FLAGS:-}"
read -r -a npes_list <<<"$NPES"
read -r -a variants <<<"$VARIANTS"
read -r -a host_list <<<"$HOSTS"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=benches/results-lib.sh
source "$root/benches/results-lib.sh"
results_init
cd "$root"
RESULTS=${RESULTS:-target/bench-results-scaling}
NETNS=${NETNS:-$root/scripts/netns-hosts.sh}

for n in "${npes_list[@]}" "${host_list[@]}" "$HOST_PES"; do
    if ! [[ $n =~ ^[0-9]+$ ]] || ((n < 1)); then
        echo "scaling.sh: NPES, HOSTS and HOST_PES must hold positive counts, got '$n'" >&2
        exit 1
    fi
done
for v in "${variants[@]}"; do
    case $v in
    ours | oshmem | ours-tcp | oshmem-tcp) ;;
    base | base-tcp)
        if [[ ! -x ${BASE_BUILD:-}/shmemrun || ! -x ${BASE_BUILD:-}/shmemcc ]]; then
            echo "scaling.sh: variant '$v' needs BASE_BUILD, a release build directory with" \
                "shmemrun and shmemcc (got '${BASE_BUILD:-}')" >&2
            exit 1
        fi
        ;;
    *)
        echo "scaling.sh: unknown variant '$v' (ours oshmem ours-tcp oshmem-tcp base base-tcp)" >&2
        exit 1
        ;;
    esac
done
for tool in oshcc oshrun; do
    if ! command -v "$tool" >/dev/null; then
        echo "scaling.sh: '$tool' not found; install Open MPI's OpenSHMEM first:" >&2
        echo "    sudo apt-get install -y openmpi-bin libopenmpi-dev" >&2
        exit 1
    fi
done

if [[ $BUILD != 0 ]]; then
    echo "== building" >&2
    bench_build
    if [[ $PLOT != 0 ]]; then
        bench_build --features shmem-benches/plot --bin scaling_plot ||
            echo "scaling.sh: scaling_plot did not build; no plot" >&2
    fi
fi
shmemrun=$root/target/release/shmemrun
out_dir=target/c-bench
mkdir -p "$out_dir"
bin_osh=$root/$out_dir/scaling
bin_ours=$root/$out_dir/scaling-ours
oshcc -O2 -Wall -o "$bin_osh" benches/c/scaling.c
target/release/shmemcc -O2 -Wall -o "$bin_ours" benches/c/scaling.c
bin_base=$root/$out_dir/scaling-base
if [[ " ${variants[*]} " == *" base"* ]]; then
    "$BASE_BUILD/shmemcc" -O2 -Wall -o "$bin_base" benches/c/scaling.c
fi

# The oshmem-tcp jobs' UCX settings: benches/run.sh's OSH_TCP_UCX array, read from there so that
# both benchmarks stay alike (the copy below is only the fallback should its form change).
OSH_TCP_UCX=()
eval "$(sed -n '/^OSH_TCP_UCX=(/,/)$/p' benches/run.sh)" || true
if ((${#OSH_TCP_UCX[@]} == 0)); then
    echo "scaling.sh: OSH_TCP_UCX not found in benches/run.sh; using a copy" >&2
    OSH_TCP_UCX=(-x UCX_TLS=tcp,self -x UCX_TCP_TX_SEG_SIZE=256k -x UCX_TCP_RX_SEG_SIZE=256k
        -x UCX_MAX_RNDV_LANES=1)
fi

if [[ $PRIVATE_SHM == 1 ]] && ! unshare --mount --propagation private \
    mount -t tmpfs -o size=1m scaling-shm-probe /dev/shm 2>/dev/null; then
    echo "scaling.sh: cannot mount a private /dev/shm (needs root and unshare): the shm figures" \
        "are machine-wide (PRIVATE_SHM=0)" >&2
    PRIVATE_SHM=0
fi
# A private /dev/shm gets the size of the real one.
read -r shm_blocks shm_bsize < <(stat -f -c '%b %S' /dev/shm)
shm_size=$((shm_blocks * shm_bsize))

rm -rf "$RESULTS"
mkdir -p "$RESULTS"
raw=$RESULTS/raw.csv
echo "variant,npes,round,metric,value" >"$raw"
problems=()

# The metrics scaling.c prints (checks is checked on its own).
METRICS=(npes iters reps rounds init_ns init_max_ns startup_ns startup_max_ns
    rss_init_mean_bytes rss_init_max_bytes pss_init_mean_bytes pss_init_max_bytes
    rss_end_mean_bytes rss_end_max_bytes pss_end_mean_bytes pss_end_max_bytes
    put_first_ns put_first_max_ns put_steady_ns barrier_ns reduce_ns fcollect_ns alltoall_ns)

# Background jobs (launchers under `timeout`, in process groups of their own, and the shm
# sampler): stopped by the EXIT trap, which also takes the hosts down.
bg_pids=()
hosts_up=0
cleanup() {
    local pid
    for pid in "${bg_pids[@]}"; do
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    done
    if ((hosts_up)); then
        bash "$NETNS" down "$HOST_TAG" || echo "scaling.sh: 'netns-hosts.sh down $HOST_TAG' failed" >&2
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# record VARIANT NPES ROUND METRIC VALUE
record() { echo "$1,$2,$3,$4,$5" >>"$raw"; }

# The largest memory footprint per PE (bytes) seen so far, per implementation and transport
# (ours-hosts counts as ours): the memory guard's estimate.
declare -A per_pe=()

# run_job VARIANT NPES ROUND [HOSTS]: one job with its shm sampling and leftover check; its
# metrics go to raw.csv, a failure to `problems`.
run_job() {
    local v=$1 n=$2 round=$3 hosts=${4:-0} rc=0 jpid
    local base="$RESULTS/$v.$n.$round"
    local out=$base.out log=$base.log shm=$base.shm meta=$base.meta
    local args=(iters "$ITERS" reps "$REPS" rounds "$PUT_ROUNDS")
    local t=(timeout -k 10 "$JOB_TIMEOUT")
    local osh=(oshrun --allow-run-as-root --oversubscribe -np "$n" "${EXTRA_OSHRUN[@]}")
    local cmd=() env=()
    case $v in
    ours) cmd=("$shmemrun" -n "$n" "$bin_ours") ;;
    ours-tcp)
        env=(UCX_TLS=tcp,self)
        cmd=("$shmemrun" -n "$n" "$bin_ours")
        ;;
    base) cmd=("$BASE_BUILD/shmemrun" -n "$n" "$bin_base") ;;
    base-tcp)
        env=(UCX_TLS=tcp,self)
        cmd=("$BASE_BUILD/shmemrun" -n "$n" "$bin_base")
        ;;
    oshmem) cmd=("${osh[@]}" "$bin_osh") ;;
    oshmem-tcp) cmd=("${osh[@]}" "${OSH_TCP_UCX[@]}" "$bin_osh") ;;
    ours-hosts)
        local hl=() h
        for ((h = 1; h <= hosts; h++)); do
            hl+=("10.231.$HOST_TAG.$h:$HOST_PES")
        done
        env=(SHMEM_BIND_TO=none)
        cmd=(bash "$NETNS" enter "10.231.$HOST_TAG.1" "$shmemrun"
            --hosts "$(IFS=,; echo "${hl[*]}")" --rsh "bash $NETNS exec {host}" "$bin_ours")
        ;;
    esac
    # The memory guard.
    local key=${v%-hosts} avail need
    avail=$(($(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo) * 1024))
    need=$((${per_pe[$key]:-0} * n))
    if ((need > avail / 100 * MEM_PCT)); then
        echo "   $v at $n PEs: SKIPPED: needs about $((need >> 20)) MiB of memory" \
            "($((${per_pe[$key]} >> 20)) MiB per PE so far), more than $MEM_PCT % of the" \
            "$((avail >> 20)) MiB available" >&2
        record "$v" "$n" "$round" skipped_need_bytes "$need"
        record "$v" "$n" "$round" skipped_avail_bytes "$avail"
        ((hosts > 0)) && record "$v" "$n" "$round" hosts "$hosts"
        return 0
    fi
    local wrap=(bash "$root/benches/scaling.sh" --job "$meta" "$shm" "$PRIVATE_SHM" "$CLEAN_SHM"
        "$shm_size" "$SAMPLE_MS")
    [[ $PRIVATE_SHM == 1 ]] && wrap=(unshare --mount --propagation private "${wrap[@]}")
    : >"$meta"
    env "${env[@]}" "${t[@]}" "${wrap[@]}" "${cmd[@]}" "${args[@]}" >"$out" 2>"$log" &
    jpid=$!
    bg_pids+=("$jpid")
    wait "$jpid" || rc=$?
    unset 'bg_pids[-1]'

    local left=() job_ns
    read -r -a left <<<"$(sed -n 's/^left,//p' "$meta")"
    job_ns=$(sed -n 's/^job_ns,//p' "$meta")
    if ((${#left[@]} > 0)); then
        echo "   $v at $n PEs: left in /dev/shm: ${left[*]}" >&2
        echo "leftovers: ${left[*]}" >>"$log"
        [[ $v == ours* ]] && problems+=("$v at $n PEs, round $round: left ${#left[@]} files in /dev/shm (${left[*]})")
    fi

    local m val missing=()
    for m in "${METRICS[@]}"; do
        val=$(sed -n "s/^$m,\(-\{0,1\}[0-9.]*\)\$/\1/p" "$out" | head -n 1)
        if [[ -n $val ]]; then
            record "$v" "$n" "$round" "$m" "$val"
        else
            missing+=("$m")
        fi
    done
    local peak pss foot
    peak=$(awk '$1 > d { d = $1 } END { printf "%.0f\n", d }' "$shm")
    record "$v" "$n" "$round" devshm_peak_bytes "$peak"
    pss=$(sed -n 's/^pss_end_mean_bytes,\([0-9]*\)$/\1/p' "$out" | head -n 1)
    foot=$((peak / n + ${pss:-0}))
    ((foot > ${per_pe[$key]:-0})) && per_pe[$key]=$foot
    [[ -n $job_ns ]] && record "$v" "$n" "$round" job_ns "$job_ns"
    record "$v" "$n" "$round" leftover_files "${#left[@]}"
    record "$v" "$n" "$round" exit_status "$rc"
    ((hosts > 0)) && record "$v" "$n" "$round" hosts "$hosts"

    local secs
    secs=$(awk -v ns="${job_ns:--1}" 'BEGIN { printf "%.1f", ns / 1e9 }')
    if ((${#missing[@]} > 0)) || ! grep -qx 'checks,ok' "$out"; then
        [[ $rc -eq 124 || $rc -eq 137 ]] && echo "   $v at $n PEs: timed out after ${JOB_TIMEOUT}s" >&2
        echo "   $v at $n PEs: FAILED (exit status $rc, ${secs}s; missing: ${missing[*]:-none};" \
            "$(grep '^checks,' "$out" || echo 'no checks line')); log tail:" >&2
        tail -n 5 "$log" | sed 's/^/      /' >&2
        problems+=("$v at $n PEs, round $round: exit status $rc, missing ${missing[*]:-none}, $(grep '^checks,' "$out" || echo 'no checks line') (log $log)")
    else
        echo "   $v at $n PEs: ok (${secs}s, exit status $rc)" >&2
    fi
}

t_start=$SECONDS
pe_secs=()
for n in "${npes_list[@]}"; do
    t_n=$SECONDS
    for ((round = 1; round <= ROUNDS; round++)); do
        echo "== $n PEs, round $round of $ROUNDS" >&2
        for ((k = 0; k < ${#variants[@]}; k++)); do
            run_job "${variants[(k + round - 1) % ${#variants[@]}]}" "$n" "$round"
        done
    done
    pe_secs+=("$n:$((SECONDS - t_n))")
done

# The host part.
host_notes=()
if ((${#host_list[@]} > 0)); then
    host_skip=
    if [[ $(id -u) != 0 ]]; then
        host_skip="needs root for network namespaces"
    elif ! command -v ip >/dev/null || ! ip netns list >/dev/null 2>&1; then
        host_skip="'ip netns' is not available"
    fi
    if [[ -n $host_skip ]]; then
        echo "SKIPPED host part of benches/scaling.sh: $host_skip" >&2
        host_notes+=("SKIPPED: $host_skip")
    else
        # The lock the test harness (shmem-testkit/src/hosts.rs) and benches/hosts.sh take for a
        # tag.
        mkdir -p /run/shmem-netns-hosts-locks
        exec {lock_fd}>"/run/shmem-netns-hosts-locks/$HOST_TAG.lock"
        if ! flock -w 120 "$lock_fd"; then
            echo "scaling.sh: tag $HOST_TAG stayed locked by another user for 120 s" >&2
            problems+=("host part: tag $HOST_TAG stayed locked")
        else
            for h in "${host_list[@]}"; do
                t_n=$SECONDS
                n=$((h * HOST_PES))
                up_err=
                hosts_up=1
                if ! up_err=$(bash "$NETNS" up "$HOST_TAG" "$h" 2>&1 >/dev/null); then
                    # Before N-host support, `up TAG` makes exactly two hosts.
                    if ((h != 2)) || ! up_err=$(bash "$NETNS" up "$HOST_TAG" 2>&1 >/dev/null); then
                        hosts_up=0
                        bash "$NETNS" down "$HOST_TAG" >/dev/null 2>&1 || true
                        echo "SKIPPED $h hosts: netns-hosts.sh up $HOST_TAG $h: ${up_err//$'\n'/ }" >&2
                        host_notes+=("$h hosts: SKIPPED (netns-hosts.sh up $HOST_TAG $h: ${up_err//$'\n'/ })")
                        continue
                    fi
                fi
                for ((round = 1; round <= ROUNDS; round++)); do
                    echo "== $h hosts x $HOST_PES PEs, round $round of $ROUNDS" >&2
                    run_job ours-hosts "$n" "$round" "$h"
                done
                # Whatever is left on the hosts goes with them.
                left=$(bash "$NETNS" pids "$HOST_TAG" 2>/dev/null || true)
                if [[ -n $left ]]; then
                    problems+=("ours-hosts at $h hosts: processes left on the hosts: $(echo $left)")
                fi
                bash "$NETNS" down "$HOST_TAG" || echo "scaling.sh: netns-hosts.sh down $HOST_TAG failed" >&2
                hosts_up=0
                pe_secs+=("${h}hosts:$((SECONDS - t_n))")
            done
        fi
        exec {lock_fd}>&-
    fi
fi
elapsed=$((SECONDS - t_start))

# Medians over rounds.
summary=$RESULTS/summary.csv
{
    echo "variant,npes,metric,value"
    tail -n +2 "$raw" | awk -F, '
        {
            key = $1 "," $2 "," $4
            if (!(key in cnt)) keys[++nk] = key
            val[key, ++cnt[key]] = $5 + 0
        }
        END {
            for (k = 1; k <= nk; k++) {
                key = keys[k]; n = cnt[key]
                for (i = 1; i <= n; i++) v[i] = val[key, i]
                for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
                printf "%s,%.0f\n", key, (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2)
            }
        }'
} >"$summary"

# table VARIANT...: the markdown table of those variants from summary.csv.
table() {
    tail -n +2 "$summary" | awk -F, -v order="$*" '
        BEGIN { nv = split(order, vs, " "); for (i = 1; i <= nv; i++) rank[vs[i]] = i }
        ($1 in rank) { m[$1, $2, $3] = $4; if (!(($1, $2) in seen)) { seen[$1, $2] = 1; rows[++nr] = $1 SUBSEP $2 } }
        function g(v, n, k) { return ((v, n, k) in m) ? m[v, n, k] : -1 }
        function ms(x) { return x < 0 ? "n/a" : sprintf("%.0f", x / 1e6) }
        function mb(x) { return x < 0 ? "n/a" : sprintf("%.1f", x / 1048576) }
        function us(x) { return x < 0 ? "n/a" : x >= 1e5 ? sprintf("%.0f", x / 1e3) : sprintf("%.1f", x / 1e3) }
        function s(x) { return x < 0 ? "n/a" : sprintf("%.1f", x / 1e9) }
        END {
            # rows sorted by PE count, then by the order of the variants
            for (i = 2; i <= nr; i++) {
                t = rows[i]
                for (j = i - 1; j >= 1; j--) {
                    split(rows[j], a, SUBSEP); split(t, b, SUBSEP)
                    if (a[2] + 0 < b[2] + 0 || (a[2] + 0 == b[2] + 0 && rank[a[1]] <= rank[b[1]])) break
                    rows[j + 1] = rows[j]
                }
                rows[j + 1] = t
            }
            print "| PEs | variant | init ms | startup ms | job s | Pss MB/PE | Rss MB/PE | /dev/shm MB | barrier us | reduce us | fcollect us | alltoall us | put first us | put steady us | left |"
            print "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
            for (i = 1; i <= nr; i++) {
                split(rows[i], r, SUBSEP); v = r[1]; n = r[2]
                h = g(v, n, "hosts")
                if (g(v, n, "skipped_need_bytes") > 0 && g(v, n, "init_ns") < 0) {
                    printf "| %s | %s | skipped: needs ~%.1f GiB, %.1f GiB available ||||||||||||||\n", \
                        (h > 0 ? n " (" h " hosts)" : n), v, g(v, n, "skipped_need_bytes") / 2^30, \
                        g(v, n, "skipped_avail_bytes") / 2^30
                    continue
                }
                printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", \
                    (h > 0 ? n " (" h " hosts)" : n), v, ms(g(v, n, "init_ns")), ms(g(v, n, "startup_ns")), \
                    s(g(v, n, "job_ns")), mb(g(v, n, "pss_end_mean_bytes")), mb(g(v, n, "rss_end_mean_bytes")), \
                    mb(g(v, n, "devshm_peak_bytes")), us(g(v, n, "barrier_ns")), \
                    us(g(v, n, "reduce_ns")), us(g(v, n, "fcollect_ns")), us(g(v, n, "alltoall_ns")), \
                    us(g(v, n, "put_first_ns")), us(g(v, n, "put_steady_ns")), g(v, n, "leftover_files")
            }
        }'
}

tables=$RESULTS/tables.md
{
    echo "### Scaling against the PE count, one node"
    echo
    echo "The plot scaling.png beside this file draws these figures against the PE count."
    echo
    shm_note="each job on a private /dev/shm tmpfs"
    [[ $PRIVATE_SHM == 1 ]] || shm_note="machine-wide: other users' jobs at the same time count too"
    echo "benches/c/scaling.c built with shmemcc (ours) and oshcc (oshmem 4.1.4), default heap"
    echo "size; ours = shmemrun, default environment; ours-tcp = UCX_TLS=tcp,self; oshmem = oshrun"
    echo "--oversubscribe; oshmem-tcp = oshrun with ${OSH_TCP_UCX[*]}."
    if [[ " ${variants[*]} " == *" base"* ]]; then
        echo "base and base-tcp = ours and ours-tcp on the build in $BASE_BUILD (${BASE_LABEL:-an earlier build})."
    fi
    echo "Median over $ROUNDS round(s), the variants alternating. init = shmem_init on PE 0;"
    echo "startup = launcher start to the end of shmem_init on PE 0; job = the launcher's whole run;"
    echo "Pss/Rss = mean over the PEs at the end (/proc/self/smaps_rollup); /dev/shm = the peak"
    echo "growth of its used space ($shm_note); barrier back to back on PE 0; reduce (1 long),"
    echo "fcollect and alltoall (8 B per PE) OSU style, mean over the PEs; put first = the first"
    echo "all-to-all round of 8 B puts + quiet + barrier_all (first contact), steady = the median of"
    echo "$PUT_ROUNDS more; loops of $ITERS calls (8 x $ITERS / PEs above 8 PEs, at least 4), median of"
    echo "$REPS; left = files left in /dev/shm. $(nproc) CPUs: above $(nproc) PEs the PEs share them."
    echo
    table "${variants[@]}"
    if ((${#host_list[@]} > 0)); then
        echo
        echo "### Ours across network-namespace hosts"
        echo
        echo "$HOST_PES PEs per host, shmemrun --hosts ... --rsh 'netns-hosts.sh exec {host}' from"
        echo "host 1, SHMEM_BIND_TO=none, default transport settings (direct within a host, UCX"
        echo "tcp between hosts); the hosts share this machine's CPUs."
        echo
        table ours-hosts
        for note in "${host_notes[@]}"; do
            echo
            echo "- $note"
        done
    fi
    echo
    echo "Run time per PE count (s): ${pe_secs[*]}; total ${elapsed}s."
} >"$tables"

echo
cat "$tables"

png=
if [[ $PLOT != 0 ]]; then
    if [[ -x target/release/scaling_plot ]]; then
        if target/release/scaling_plot "$RESULTS/scaling.png" <"$summary"; then
            png=$RESULTS/scaling.png
            echo "plot: $png" >&2
        else
            echo "scaling.sh: scaling_plot failed" >&2
        fi
    else
        echo "scaling.sh: target/release/scaling_plot is missing; no plot" >&2
    fi
fi

if ((${#problems[@]} > 0)); then
    echo "scaling.sh: FAILED (scaling.md and scaling.png in $RESULTS_DIR are left as they were):" >&2
    printf '   %s\n' "${problems[@]}" >&2
    exit 1
fi
knobs="NPES=\"$NPES\" VARIANTS=\"$VARIANTS\" ROUNDS=$ROUNDS ITERS=$ITERS REPS=$REPS"
knobs+=" PUT_ROUNDS=$PUT_ROUNDS HOSTS=\"$HOSTS\" HOST_PES=$HOST_PES PRIVATE_SHM=$PRIVATE_SHM"
knobs+="${OSHRUN_FLAGS:+ OSHRUN_FLAGS=\"$OSHRUN_FLAGS\"}"
results_write scaling.md benches/scaling.sh "$knobs" \
    "Start-up time, memory, /dev/shm use and collective and put latency against the number of PEs on one node (ours and Open MPI's OpenSHMEM, the direct path and tcp) and across network-namespace hosts (ours)." \
    "$tables"
if [[ -n $png ]]; then
    results_copy "$png" scaling.png
fi
