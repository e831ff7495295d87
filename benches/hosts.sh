#!/usr/bin/env bash
# The multi-host part of the benchmark suite (benches/run.sh calls it; it also runs on its own).
# Eight "hosts" on this machine: network namespaces joined by a bridge, each with its own boot
# id so that UCX sees separate nodes and talks TCP between them (scripts/netns-hosts.sh, tag 42
# only: addresses 10.231.42.1 to 10.231.42.8). Needs root. In ROUNDS rounds, the order rotated
# per round:
#   hosts-ours    benches/src/bin/latency.rs, one PE on each of hosts 1 and 2 (`--hosts
#                 10.231.42.1:1,10.231.42.2:1`, default settings: progress thread on), UCX_ITERS
#                 x UCX_REPS;
#   perftest      ucx_perftest (Debian package ucx-utils) over the same link, UCX_TLS=tcp,self,
#                 server on host 2, client on host 1: ucp_put_lat, ucp_get, ucp_fadd, ucp_add at
#                 8 B, PERF_ITERS iterations each (PERF_GET_ITERS for ucp_get: ~1 ms per get);
#   heat-1host    examples/src/bin/heat.rs, 4 PEs on host 1;
#   heat-2hosts   the same, 2 PEs on each of hosts 1 and 2;
#   heat-1host-8, heat-4hosts    the same grid on 8 PEs: on host 1, and 2 PEs on each of 4 hosts;
#   heat-1host-16, heat-8hosts   on 16 PEs: on host 1, and 2 PEs on each of 8 hosts;
#   coll-2hosts, coll-4hosts, coll-8hosts   latency.rs --collectives (barrier_all, broadcast,
#                 sum_reduce, fcollect, alltoall), 2 PEs on each of 2, 4 and 8 hosts, default
#                 settings, HOSTS_COLL_ITERS x HOSTS_COLL_REPS (a collective loop is a quarter).
# The machine's cores are shared by every host: 8 or 16 PEs on a machine with fewer cores are
# oversubscribed, on one host as across hosts.
# Writes the tables "Across two hosts", "Collectives across hosts" and "heat" to
# RESULTS/hosts-tables.md (and prints them when run on its own), raw results to
# RESULTS/JOB.NPES.ROUND.csv (lines case,size,variant,median_ns,min_ns) and .log; when every job
# produced its results, also hosts.md in the results directory (benches/results/; TINY=1:
# target/bench-results/; RESULTS_DIR=... to choose), begun by a comment naming the script, the
# date, the machine and the knobs. A SKIPPED run leaves hosts.md as it is.
#
# Usage: benches/hosts.sh            on its own: builds, results in target/bench-results-hosts/
#        benches/hosts.sh RESULTS    from run.sh: no build (run.sh built), results in RESULTS
# Knobs (environment; TINY=1 changes the defaults, explicit values still win):
#   ROUNDS=3  UCX_ITERS=2000  UCX_REPS=9  JOB_TIMEOUT=180
#   PERF_ITERS=20000  PERF_GET_ITERS=1000
#   HEAT_NX=512 HEAT_NY=512 HEAT_ITERS=500
#   HOSTS_COLL_ITERS=2000 HOSTS_COLL_REPS=5
# TINY=1 also leaves out heat-1host-8, heat-1host-16 and coll-2hosts (n/a in the tables).
#   LATENCY_BIN=target/release/latency   the latency binary to run (run.sh passes its aligned one)
# Without root or `ip netns` the part prints a SKIPPED line and exits 0, unless
# SHMEM_TEST_REQUIRE_ROOT is set (not empty, not 0): then it fails. Exit status 1 when a job
# did not produce its results; the goals (below the tables) are reported, not enforced.
set -euo pipefail

TINY=${TINY:-0}
if [[ $TINY == 1 ]]; then
    ROUNDS=${ROUNDS:-1}
    UCX_ITERS=${UCX_ITERS:-20}
    UCX_REPS=${UCX_REPS:-1}
    JOB_TIMEOUT=${JOB_TIMEOUT:-60}
    PERF_ITERS=${PERF_ITERS:-200}
    PERF_GET_ITERS=${PERF_GET_ITERS:-20}
    HEAT_NX=${HEAT_NX:-256}
    HEAT_NY=${HEAT_NY:-256}
    HEAT_ITERS=${HEAT_ITERS:-30}
    HOSTS_COLL_ITERS=${HOSTS_COLL_ITERS:-40}
    HOSTS_COLL_REPS=${HOSTS_COLL_REPS:-1}
else
    ROUNDS=${ROUNDS:-3}
    UCX_ITERS=${UCX_ITERS:-2000}
    UCX_REPS=${UCX_REPS:-9}
    JOB_TIMEOUT=${JOB_TIMEOUT:-180}
    PERF_ITERS=${PERF_ITERS:-20000}
    PERF_GET_ITERS=${PERF_GET_ITERS:-1000}
    HEAT_NX=${HEAT_NX:-512}
    HEAT_NY=${HEAT_NY:-512}
    HEAT_ITERS=${HEAT_ITERS:-500}
    HOSTS_COLL_ITERS=${HOSTS_COLL_ITERS:-2000}
    HOSTS_COLL_REPS=${HOSTS_COLL_REPS:-5}
fi

# UCX reads every UCX_* variable (and warns about unknown ones), shmemrun forwards them: these
# two are this script's, not UCX's.
export -n UCX_ITERS UCX_REPS
# The "hosts" share this machine's CPUs: shmemrun's default --bind-to core would bind PE 0 of
# each host to the same CPU (every host's PEs on the same cores, the others idle), which
# separate machines never do (measured: put 8 B + quiet across two hosts 49 us bound, 27 us
# unbound).
export SHMEM_BIND_TO=none

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=benches/results-lib.sh
source "$root/benches/results-lib.sh"
results_init
cd "$root"

TAG=42
NHOSTS=8
H1=10.231.$TAG.1
H2=10.231.$TAG.2
netns=$root/scripts/netns-hosts.sh
# The lock file the test harness (shmem-testkit/src/hosts.rs) takes for a tag: holding it keeps
# a concurrent `cargo test` off tag 42 while this runs, and this off it while a test holds it.
LOCKS=/run/shmem-netns-hosts-locks
PERF_PORT=13342
shmemrun=$root/target/release/shmemrun
heat=$root/target/release/heat

standalone=0
if (($# == 0)); then
    standalone=1
    results=target/bench-results-hosts
elif (($# == 1)); then
    results=$1
else
    echo "usage: $0 [RESULTS_DIR]" >&2
    exit 2
fi
LATENCY_BIN=${LATENCY_BIN:-$root/target/release/latency}
mkdir -p "$results"
tables=$results/hosts-tables.md

# skip REASON: the multi-host part cannot run here: a SKIPPED line (and a note in the tables), or a
# failure when SHMEM_TEST_REQUIRE_ROOT is set.
skip() {
    local req=${SHMEM_TEST_REQUIRE_ROOT:-}
    if [[ -n $req && $req != 0 ]]; then
        echo "hosts.sh: FAILED: the multi-host benchmarks cannot run: $1 (SHMEM_TEST_REQUIRE_ROOT is set)" >&2
        exit 1
    fi
    echo "SKIPPED multi-host benchmarks (benches/hosts.sh): $1; set SHMEM_TEST_REQUIRE_ROOT=1 to make this a failure" >&2
    printf '### Across hosts\n\nSKIPPED: %s.\n' "$1" >"$tables"
    exit 0
}

[[ $(id -u) == 0 ]] || skip "needs root for network namespaces"
command -v ip >/dev/null || skip "no 'ip' command (iproute2)"
ip netns list >/dev/null 2>&1 || skip "'ip netns' is not available"

if ((standalone)); then
    echo "== building" >&2
    bench_build
fi
for f in "$shmemrun" "$heat" "$LATENCY_BIN"; do
    [[ -x $f ]] || {
        echo "hosts.sh: $f is missing; build it first (cargo build --release)" >&2
        exit 1
    }
done

mkdir -p "$LOCKS"
exec {lock_fd}>"$LOCKS/$TAG.lock"
if ! flock -w 120 "$lock_fd"; then
    echo "hosts.sh: FAILED: tag $TAG ($LOCKS/$TAG.lock) stayed locked by another user for 120 s" >&2
    exit 1
fi

# The jobs run under `timeout`, which puts itself in a process group of its own: stopping a job
# is killing that group. They run in the background, waited for (see `job`), so that a signal
# to this script is handled at once: the EXIT trap stops them and deletes the hosts (which
# kills whatever still runs in them).
bg_pids=()
cleanup() {
    local pid
    for pid in "${bg_pids[@]}"; do
        kill -TERM -- "-$pid" 2>/dev/null || true
    done
    bash "$netns" down "$TAG" || echo "hosts.sh: 'netns-hosts.sh down $TAG' failed" >&2
    for pid in "${bg_pids[@]}"; do
        kill -KILL -- "-$pid" 2>/dev/null || true
    done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if ! up_err=$(bash "$netns" up "$TAG" "$NHOSTS" 2>&1 >/dev/null); then
    skip "cannot create network namespaces (netns-hosts.sh up $TAG $NHOSTS: ${up_err//$'\n'/ })"
fi

row_re='^[^,]*,[0-9]*,[^,]*,[0-9.]*,[0-9.]*$'
problems=()

# left_over NAME: kills (and names) whatever a job left running on the hosts.
left_over() {
    local pids pid tries=0
    # Processes on the hosts may take a moment to end after the launcher returns.
    while pids=$(bash "$netns" pids "$TAG" || true) && [[ -n $pids ]] && ((++tries <= 50)); do
        sleep 0.1
    done
    [[ -z $pids ]] && return 0
    echo "   $1: processes left on the hosts, killed: $(echo $pids)" >&2
    for pid in $pids; do
        kill -KILL "$pid" 2>/dev/null || true
    done
    problems+=("$1: left processes on the hosts")
}

# check NAME WANT CSV LOG RC SECS: records a problem when the job's CSV lacks rows.
check() {
    local name=$1 want=$2 csv=$3 log=$4 rc=$5 secs=$6 rows
    rows=$(grep -c "$row_re" "$csv" || true)
    if [[ $rows -ne $want ]]; then
        [[ $rc -eq 124 || $rc -eq 137 ]] && echo "   $name: timed out after ${JOB_TIMEOUT}s" >&2
        echo "   $name: exit status $rc, $rows of $want result rows; log tail:" >&2
        tail -n 5 "$log" | sed 's/^/      /' >&2
        problems+=("$name: $rows of $want rows (exit status $rc; log $log)")
    else
        echo "   $name: ok (exit status $rc, $secs s)" >&2
    fi
}

t=(timeout -k 10 "$JOB_TIMEOUT")

# job CMD...: CMD under the time limit, in the background (its group recorded for the EXIT
# trap), waited for; returns its exit status.
job() {
    local rc=0
    "${t[@]}" "$@" &
    bg_pids+=("$!")
    wait "$!" || rc=$?
    unset 'bg_pids[-1]'
    return "$rc"
}

# perf_one TEST ITERS CSV LOG: one ucx_perftest test at 8 B; appends its row (the median
# latency, 50th percentile, in ns, in both figure columns) to CSV.
perf_one() {
    local test=$1 iters=$2 csv=$3 log=$4 spid tries=0 rc=0 line med
    echo "--- $test server" >>"$log"
    UCX_TLS=tcp,self "${t[@]}" bash "$netns" exec "$H2" ucx_perftest -p "$PERF_PORT" \
        >>"$log" 2>&1 &
    spid=$!
    bg_pids+=("$spid")
    # The client does not retry: wait until the server listens.
    until bash "$netns" enter "$H2" ss -Hltn "sport = :$PERF_PORT" 2>/dev/null | grep -q .; do
        if ((++tries > 200)) || ! kill -0 "$spid" 2>/dev/null; then
            echo "--- $test: the server did not listen on port $PERF_PORT" >>"$log"
            kill -TERM -- "-$spid" 2>/dev/null || true
            wait "$spid" 2>/dev/null || true
            unset 'bg_pids[-1]'
            return 1
        fi
        sleep 0.05
    done
    echo "--- $test client" >>"$log"
    UCX_TLS=tcp,self job bash "$netns" exec "$H1" ucx_perftest "$H2" -p "$PERF_PORT" \
        -t "$test" -s 8 -n "$iters" -w "$((iters / 10 > 10 ? iters / 10 : 10))" -f -v \
        >"$log.client" 2>&1 || rc=$?
    cat "$log.client" >>"$log"
    wait "$spid" || echo "--- $test server: exit status $?" >>"$log"
    unset 'bg_pids[-1]'
    # -f -v: a header "iterations,50.0_percentile_lat,avg_lat,..." and one line, microseconds.
    line=$(grep -E '^ *[0-9]+,[0-9.]+,' "$log.client" | tail -n 1 || true)
    rm -f "$log.client"
    [[ $rc -eq 0 && -n $line ]] || return 1
    med=$(awk -F, '{ printf "%.1f", $2 * 1000 }' <<<"$line")
    echo "$test,8,tcp,$med,$med" >>"$csv"
}

# host_list K PER: `--hosts` for hosts 1 to K with PER slots each.
host_list() {
    local i list=()
    for ((i = 1; i <= $1; i++)); do
        list+=("10.231.$TAG.$i:$2")
    done
    local IFS=,
    echo "${list[*]}"
}

# heat_row VARIANT CSV LOG: heat's "heat: NXxNY grid, N iterations on P PEs: T s; check against
# 1 PE: OK ..." line from LOG as a row (T in ns) in CSV.
heat_row() {
    sed -n 's/^heat: .* PEs: \([0-9.]*\) s; check against 1 PE: OK.*/\1/p' "$3" |
        awk -v v="$1" -v nx="$HEAT_NX" '{ printf "heat,%s,%s,%.0f,%.0f\n", nx, v, $1 * 1e9, $1 * 1e9 }' >"$2"
}

# on_hosts K PER PROGRAM ARGS...: PROGRAM under shmemrun on host 1: PER PEs there when K is 1,
# else PER PEs on each of hosts 1 to K; in the background, waited for (see `job`).
on_hosts() {
    local k=$1 per=$2
    shift 2
    if ((k == 1)); then
        job bash "$netns" enter "$H1" "$shmemrun" -n "$per" "$@"
    else
        job bash "$netns" enter "$H1" "$shmemrun" --hosts "$(host_list "$k" "$per")" \
            --rsh "bash $netns exec {host}" "$@"
    fi
}

# The hosts and PEs on each of the heat and coll jobs: "K PER".
declare -A LAYOUT=(
    [heat-1host]="1 4" [heat-2hosts]="2 2" [heat-1host-8]="1 8" [heat-4hosts]="4 2"
    [heat-1host-16]="1 16" [heat-8hosts]="8 2"
    [coll-2hosts]="2 2" [coll-4hosts]="4 2" [coll-8hosts]="8 2"
)

# run_job NAME ROUND
run_job() {
    local name=$1 round=$2 rc=0 want n=2 test k per start
    local csv log
    start=$(date +%s.%N)
    if [[ -n ${LAYOUT[$name]:-} ]]; then
        read -r k per <<<"${LAYOUT[$name]}"
        n=$((k * per))
    fi
    csv=$results/$name.$n.$round.csv
    log=$results/$name.$n.$round.log
    : >"$csv"
    : >"$log"
    case $name in
    hosts-ours)
        want=$LAT_ROWS_OURS
        UCX_TLS=tcp,self job bash "$netns" enter "$H1" "$shmemrun" \
            --hosts "$H1:1,$H2:1" --rsh "bash $netns exec {host}" \
            "$LATENCY_BIN" --csv --iters "$UCX_ITERS" --reps "$UCX_REPS" >"$csv" 2>"$log" || rc=$?
        ;;
    perftest)
        want=4
        if ! command -v ucx_perftest >/dev/null; then
            echo "ucx_perftest not found: install ucx-utils (scripts/install-deps.sh)" >"$log"
            rc=127
        else
            for test in ucp_put_lat ucp_get ucp_fadd ucp_add; do
                local iters=$PERF_ITERS
                [[ $test == ucp_get ]] && iters=$PERF_GET_ITERS
                perf_one "$test" "$iters" "$csv" "$log" || rc=$?
            done
        fi
        ;;
    heat-*)
        # The variant says where the PEs ran: "KxPER", K hosts with PER PEs each.
        want=1
        on_hosts "$k" "$per" "$heat" --nx "$HEAT_NX" --ny "$HEAT_NY" --iters "$HEAT_ITERS" \
            >"$log" 2>&1 || rc=$?
        heat_row "${k}x$per" "$csv" "$log"
        ;;
    coll-*)
        # The five collectives, their variant "heap" replaced by "KxPER".
        want=5
        on_hosts "$k" "$per" "$LATENCY_BIN" --csv --collectives --iters "$HOSTS_COLL_ITERS" \
            --reps "$HOSTS_COLL_REPS" >"$csv.raw" 2>"$log" || rc=$?
        grep "$row_re" "$csv.raw" | awk -F, -v OFS=, -v v="${k}x$per" '{ $3 = v; print }' \
            >"$csv" || true
        rm -f "$csv.raw"
        ;;
    esac
    check "$name, round $round" "$want" "$csv" "$log" "$rc" \
        "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
    left_over "$name, round $round"
}

# The rows latency.rs prints (run.sh sets it; on its own, as many as the bench prints).
LAT_ROWS_OURS=${LAT_ROWS_OURS:-}
if [[ -z $LAT_ROWS_OURS ]]; then
    LAT_ROWS_OURS=$(sed -n 's/^LAT_ROWS_OURS=\([0-9]*\).*/\1/p' benches/run.sh | head -n 1)
fi

jobs=(hosts-ours perftest heat-1host heat-2hosts heat-1host-8 heat-4hosts heat-1host-16
    heat-8hosts coll-2hosts coll-4hosts coll-8hosts)
if [[ $TINY == 1 ]]; then
    # Every kind of job once, on every layout of hosts; not the references of the same kind
    # (each job of 8 or 16 PEs takes seconds to start on 2 cores): n/a in their cells.
    jobs=(hosts-ours perftest heat-1host heat-2hosts heat-4hosts heat-8hosts coll-4hosts
        coll-8hosts)
fi
for ((round = 1; round <= ROUNDS; round++)); do
    echo "== $NHOSTS hosts ($H1 to 10.231.$TAG.$NHOSTS), round $round of $ROUNDS" >&2
    for ((k = 0; k < ${#jobs[@]}; k++)); do
        run_job "${jobs[(k + round - 1) % ${#jobs[@]}]}" "$round"
    done
done

awk_lib='
function median(key,    n, i, j, t, v) {
    n = cnt[key]
    if (n == 0) return -1
    for (i = 1; i <= n; i++) v[i] = val[key, i]
    for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function us(x) { return x < 0 ? "n/a" : sprintf("%.1f us", x / 1000) }
function ratio(a, b) { return (a < 0 || b <= 0) ? "n/a" : sprintf("%.2f", a / b) }
'
{
    echo "### Across two hosts (network namespaces joined by a bridge, tcp)"
    echo
    echo "One PE on each host; ours = benches/src/bin/latency.rs under shmemrun --hosts with"
    echo "UCX_TLS=tcp,self and default settings (progress thread on), $UCX_REPS loops x $UCX_ITERS"
    echo "ops; ucx_perftest = UCX's own test (UCX_TLS=tcp,self, server on host 2, client on host 1,"
    echo "8 B, the 50th percentile of $PERF_ITERS iterations, $PERF_GET_ITERS for ucp_get). Medians"
    echo "over $ROUNDS rounds. ucp_put_lat is a ping-pong (half a round trip), so a put + quiet (the"
    echo "put, then its remote completion: a full round trip) is set against twice it; ucp_add posts"
    echo "adds back to back (a rate, not a round trip like add + quiet); ucp_get takes ~1 ms per get"
    echo "here (over tcp a get is served by the server's progress engine, which ucx_perftest's server"
    echo "does not seem to drive during this test): not a usable reference."
    echo
    cat "$results"/hosts-ours.*.csv "$results"/perftest.*.csv 2>/dev/null | grep "$row_re" |
        awk -F, "$awk_lib"'
        { key = $1 SUBSEP $2 SUBSEP $3; val[key, ++cnt[key]] = $4 + 0 }
        # The 8-byte put/get rows of the heap array are "aligned" (they were "heap" before).
        function rma8(c) { return cnt[c SUBSEP 8 SUBSEP "aligned"] ? "aligned" : "heap" }
        function row(name, c, s, v, ptest, k,    o, p) {
            o = median(c SUBSEP s SUBSEP v)
            p = median(ptest SUBSEP 8 SUBSEP "tcp")
            if (p >= 0) p *= k
            printf "| %-42s | %10s | %10s | %-24s | %6s |\n", name, us(o), us(p), (k == 2 ? "2 x " : "") ptest, ratio(o, p)
        }
        END {
            printf "| %-42s | %10s | %10s | %-24s | %6s |\n", "case", "ours", "ucx_perftest", "ucx_perftest test", "ratio"
            print "|--------------------------------------------|-----------:|-----------:|--------------------------|-------:|"
            row("put 8 B + quiet (heap)", "put + quiet", 8, rma8("put + quiet"), "ucp_put_lat", 2)
            row("p + quiet (heap)", "p + quiet", 8, "heap", "ucp_put_lat", 2)
            row("ping-pong put + wait_until (half trip)", "ping-pong put + wait_until", 8, "heap", "ucp_put_lat", 1)
            row("get 8 B (heap)", "get", 8, rma8("get"), "ucp_get", 1)
            row("g (heap)", "g", 8, "heap", "ucp_get", 1)
            row("fetch_add (heap)", "fetch_add", 8, "heap", "ucp_fadd", 1)
            row("add + quiet (heap)", "add + quiet", 8, "heap", "ucp_add", 1)
            row("iput 16x stride 2 + quiet (heap)", "iput 16x stride 2 + quiet", 128, "heap", "-", 1)
            row("iget 16x stride 2 (heap)", "iget 16x stride 2", 128, "heap", "-", 1)
            put = median("put + quiet" SUBSEP 8 SUBSEP rma8("put + quiet"))
            ip = median("iput 16x stride 2 + quiet" SUBSEP 128 SUBSEP "heap")
            ig = median("iget 16x stride 2" SUBSEP 128 SUBSEP "heap")
            print ""
            goal("iput 16x stride 2 + quiet", ip, put)
            goal("iget 16x stride 2", ig, put)
        }
        function goal(name, a, b,    r) {
            r = ratio(a, b)
            printf "- goal %s <= 2 x put 8 B + quiet (across hosts): %s / %s = %s: %s\n", name, us(a), us(b), r, r == "n/a" ? "n/a" : (a / b <= 2 ? "met" : "NOT met")
        }'
    echo
    echo "### Collectives across hosts"
    echo
    echo "benches/src/bin/latency.rs --collectives, 2 PEs on each host (the two of a host reach"
    echo "each other directly, the other hosts over tcp), default settings, $HOSTS_COLL_REPS loops"
    echo "x $((HOSTS_COLL_ITERS / 4 > 10 ? HOSTS_COLL_ITERS / 4 : 10)) collectives; time per collective, median over $ROUNDS rounds (of each"
    echo "run's median loop). Every host shares this machine's $(nproc) cores."
    echo
    cat "$results"/coll-*.csv 2>/dev/null | grep "$row_re" | awk -F, "$awk_lib"'
        { key = $1 SUBSEP $3; val[key, ++cnt[key]] = $4 + 0 }
        function row(c,    k) {
            printf "| %-17s |", c
            for (k = 2; k <= 8; k *= 2) printf " %10s |", us(median(c SUBSEP k "x2"))
            printf "\n"
        }
        END {
            print "| collective        | 2 hosts x 2 PEs | 4 hosts x 2 PEs | 8 hosts x 2 PEs |"
            print "|-------------------|-----------:|-----------:|-----------:|"
            row("barrier_all"); row("broadcast"); row("sum_reduce 1 long"); row("fcollect"); row("alltoall")
        }'
    echo
    echo "### heat ${HEAT_NX}x${HEAT_NY}, $HEAT_ITERS iterations"
    echo
    echo "examples/src/bin/heat.rs (halo exchange by strided puts, a barrier per iteration),"
    echo "default settings: 4, 8 and 16 PEs on one host (host 1) against 2, 4 and 8 hosts x 2 PEs;"
    echo "the time heat prints (the iterations only), median over $ROUNDS rounds. Every host shares"
    echo "this machine's $(nproc) cores: 8 and 16 PEs are oversubscribed wherever they run."
    echo
    cat "$results"/heat-*.csv 2>/dev/null | grep "$row_re" | awk -F, "$awk_lib"'
        { key = $3; val[key, ++cnt[key]] = $4 + 0 }
        function s(x) { return x < 0 ? "n/a" : sprintf("%.3f s", x / 1e9) }
        function row(pes, k,    a, b) {
            a = median("1x" pes); b = median(k "x2")
            printf "| %3d | %s | %d hosts x 2 PEs: %s | %s |\n", pes, s(a), k, s(b), ratio(b, a)
            return ratio(b, a)
        }
        END {
            print "| PEs | one host | across hosts | hosts / one host |"
            print "|---:|---:|---:|---:|"
            r = row(4, 2); row(8, 4); row(16, 8)
            a = median("1x4"); b = median("2x2")
            printf "\n- goal two hosts <= 3 x one host: %s: %s\n", r, r == "n/a" ? "n/a" : (b / a <= 3 ? "met" : "NOT met")
        }'
} >"$tables"

if ((standalone)); then
    echo
    cat "$tables"
fi
if ((${#problems[@]} > 0)); then
    echo "hosts.sh: FAILED: some multi-host jobs did not produce all their results (hosts.md in" \
        "$RESULTS_DIR is left as it was):" >&2
    printf '   %s\n' "${problems[@]}" >&2
    exit 1
fi
script=benches/hosts.sh
((standalone)) || script="benches/hosts.sh (part 5 of benches/run.sh)"
results_write hosts.md "$script" "ROUNDS=$ROUNDS UCX_ITERS=$UCX_ITERS UCX_REPS=$UCX_REPS \
PERF_ITERS=$PERF_ITERS PERF_GET_ITERS=$PERF_GET_ITERS HEAT_NX=$HEAT_NX HEAT_NY=$HEAT_NY \
HEAT_ITERS=$HEAT_ITERS HOSTS_COLL_ITERS=$HOSTS_COLL_ITERS HOSTS_COLL_REPS=$HOSTS_COLL_REPS" \
    "Latency, collectives and a stencil (heat) across network-namespace hosts on this machine, talking TCP to each other: ours against UCX's own ucx_perftest, and across hosts against one host." \
    "$tables"
