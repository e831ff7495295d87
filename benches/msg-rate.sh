#!/usr/bin/env bash
# Message-rate sweep: windows of put, get, put_nbi and get_nbi of 1 B to 1 MiB to consecutive
# offsets of one peer's heap, each window ended by one quiet (benches/src/bin/msg_rate.rs and
# its C twin benches/c/msg_rate.c; their headers say exactly what is timed), plus the
# put-then-consume rows (PE 1's read of 64 KiB, 1 MiB and 4 MiB that PE 0 put, against the same
# read after a plain memcpy). Three programs, 2 PEs each:
#   rust    msg_rate.rs on this runtime (target/release/shmemrun);
#   c       msg_rate.c built with this tree's target/release/shmemcc (the C API, libshmem.so);
#   oshmem  msg_rate.c built with Open MPI's oshcc, under oshrun --allow-run-as-root
#           --oversubscribe -np 2;
# each on two paths: direct (ours: shared memory; oshmem: its defaults) and tcp (ours:
# UCX_TLS=tcp,self; oshmem: the same UCX settings as benches/run.sh's oshmem-tcp jobs). The jobs
# run ALTERNATING, ROUNDS times, the order rotated every round, so that the noise of a shared
# machine hits all alike. With BASE=DIR (another checkout, e.g. `git worktree add --detach DIR
# COMMIT`), msg_rate.c is also built with DIR's shmemcc and run under DIR's shmemrun in the same
# rounds (column "C base"): a before/after of the library from one invocation.
#
# A row's figure per job is messages per second, 1e9 / the job's median ns per message; the
# tables give the median over rounds, and the ratios ours/oshmem of those medians.
#
# Writes msg-rate.md and msg_rate.png to the results directory (benches/results/; TINY=1:
# target/bench-results/; RESULTS_DIR=... to choose). Raw CSVs: target/msg-rate/NAME.PATH.ROUND.csv,
# and target/msg-rate/summary.csv (impl,path,case,size,msgs_per_s), which the plot reads.
#
# Usage: benches/msg-rate.sh             (from anywhere; about 15 minutes on 2 busy cores)
#        TINY=1 benches/msg-rate.sh      (CI: 1 round, sizes up to 64 KiB, minimal loops)
# Knobs (environment; TINY=1 changes the defaults, explicit values still win):
#   ROUNDS=3 ITERS=400 REPS=11           direct jobs: rounds, windows per timed loop, loops
#   TCP_ITERS=20 TCP_REPS=5              tcp jobs
#   MAX_SIZE=1048576                     largest message
#   PATHS="direct tcp"                   which paths
#   JOB_TIMEOUT=300 PLOT=1 NO_BUILD=0 BASE=
set -euo pipefail

# shellcheck source=benches/results-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/results-lib.sh"
results_init
cd "$(dirname "$0")/.."

TINY=${TINY:-0}
if [[ $TINY == 1 ]]; then
    ROUNDS=${ROUNDS:-1} ITERS=${ITERS:-4} REPS=${REPS:-1} TCP_ITERS=${TCP_ITERS:-2}
    TCP_REPS=${TCP_REPS:-1} MAX_SIZE=${MAX_SIZE:-65536} JOB_TIMEOUT=${JOB_TIMEOUT:-120}
fi
ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-400}
REPS=${REPS:-11}
TCP_ITERS=${TCP_ITERS:-20}
TCP_REPS=${TCP_REPS:-5}
MAX_SIZE=${MAX_SIZE:-1048576}
JOB_TIMEOUT=${JOB_TIMEOUT:-300}
PLOT=${PLOT:-1}
BASE=${BASE:-}
read -r -a PATHS <<<"${PATHS:-direct tcp}"
out=target/msg-rate
mkdir -p "$out"

for tool in oshcc oshrun; do
    if ! command -v "$tool" >/dev/null; then
        echo "msg-rate.sh: '$tool' not found (apt-get install openmpi-bin libopenmpi-dev)" >&2
        exit 1
    fi
done

plot_bin=
if [[ ${NO_BUILD:-0} != 1 ]]; then
    echo "== building" >&2
    bench_build
    target/release/shmemcc -O2 -falign-loops=64 -Wall -o "$out/msg_rate-c" benches/c/msg_rate.c
    oshcc -O2 -falign-loops=64 -Wall -o "$out/msg_rate-oshmem" benches/c/msg_rate.c
    if [[ -n $BASE ]]; then
        (cd "$BASE" && cargo build --release -p shmem-capi -p shmem-run >&2)
        "$BASE/target/release/shmemcc" -O2 -falign-loops=64 -Wall -o "$out/msg_rate-base" \
            benches/c/msg_rate.c
    fi
    if [[ $PLOT != 0 ]]; then
        bench_build --features shmem-benches/plot --bin msg_rate_plot ||
            echo "msg-rate.sh: msg_rate_plot did not build; no plot" >&2
    fi
fi
[[ $PLOT != 0 && -x target/release/msg_rate_plot ]] && plot_bin=target/release/msg_rate_plot

OSH_TCP_UCX=(-x UCX_TLS=tcp,self -x UCX_TCP_TX_SEG_SIZE=256k -x UCX_TCP_RX_SEG_SIZE=256k
    -x UCX_MAX_RNDV_LANES=1)
jobs=(rust c oshmem)
[[ -n $BASE ]] && jobs+=(base)
rm -f "$out"/*.csv "$out"/*.log
row_re='^[a-z_]+,[0-9]+,[^,]+,[0-9.]+,[0-9.]+$'
problems=()

run_job() { # NAME PATH ROUND
    local name=$1 path=$2 csv="$out/$1.$2.$3.csv" log="$out/$1.$2.$3.log" rc=0
    local t=(timeout -k 10 "$JOB_TIMEOUT") it=$ITERS rp=$REPS env=()
    if [[ $path == tcp ]]; then
        it=$TCP_ITERS rp=$TCP_REPS env=(UCX_TLS=tcp,self)
    fi
    local copts=(csv iters "$it" reps "$rp" max_size "$MAX_SIZE")
    case $name in
    rust) env "${env[@]}" "${t[@]}" target/release/shmemrun -n 2 target/release/msg_rate --csv \
        --iters "$it" --reps "$rp" --max-size "$MAX_SIZE" >"$csv" 2>"$log" || rc=$? ;;
    c) env "${env[@]}" "${t[@]}" target/release/shmemrun -n 2 "$out/msg_rate-c" "${copts[@]}" \
        >"$csv" 2>"$log" || rc=$? ;;
    base) env "${env[@]}" "${t[@]}" "$BASE/target/release/shmemrun" -n 2 "$out/msg_rate-base" \
        "${copts[@]}" >"$csv" 2>"$log" || rc=$? ;;
    oshmem)
        local x=()
        [[ $path == tcp ]] && x=("${OSH_TCP_UCX[@]}")
        # oshmem 4.1.4 segfaults in shmem_finalize after the results are out: only missing
        # rows count as a failure.
        "${t[@]}" oshrun --allow-run-as-root --oversubscribe -np 2 "${x[@]}" \
            "$out/msg_rate-oshmem" "${copts[@]}" >"$csv" 2>"$log" || rc=$?
        ;;
    esac
    local rows
    rows=$(grep -cE "$row_re" "$csv" || true)
    if [[ $rows -lt 4 ]]; then
        echo "   $name $path round $3: exit status $rc, $rows rows; log tail:" >&2
        tail -n 5 "$log" | sed 's/^/      /' >&2
        problems+=("$name $path round $3: $rows rows (exit status $rc; $log)")
    else
        echo "   $name $path round $3: $rows rows" >&2
    fi
}

for ((r = 1; r <= ROUNDS; r++)); do
    echo "== round $r of $ROUNDS" >&2
    for path in "${PATHS[@]}"; do
        k=$(((r - 1) % ${#jobs[@]}))
        order=("${jobs[@]:k}" "${jobs[@]:0:k}")
        for name in "${order[@]}"; do
            run_job "$name" "$path" "$r"
        done
    done
done

# summary.csv: impl,path,case,size,msgs_per_s (rate rows; median over rounds of 1e9/median_ns)
# and consume rows as impl,path,consume:VARIANT,size,median_ns.
awk -F, -v OFS=, '
    FNR == 1 { n = split(FILENAME, p, "/"); split(p[n], f, "."); imp = f[1]; path = f[2] }
    NF == 5 && $4 ~ /^[0-9.]+$/ && $4 > 0 {
        if ($1 == "consume") key = imp OFS path OFS "consume:" $3 OFS $2
        else key = imp OFS path OFS $1 OFS $2
        v[key] = v[key] " " ($1 == "consume" ? $4 : 1e9 / $4)
    }
    END {
        for (k in v) {
            m = split(substr(v[k], 2), a, " ")
            for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            med = m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
            print k, med
        }
    }' "$out"/*.*.*.csv | sort -t, -k1,1 -k2,2 -k3,3 -k4,4n >"$out/summary.csv"

body=$(mktemp)
{
    echo "Messages per second (millions; median over $ROUNDS alternating rounds); ratios are"
    echo "ours/oshmem (above 1: ours moves more messages per second)."
    if [[ -n $BASE ]]; then
        echo "\"C base\": the C twin on the library of the commit BASE holds (knobs above), in the"
        echo "same rounds; \"C/C base\" above 1: this tree's library moves more messages."
    fi
    echo
    hdr="| case | size | path | ours Rust | ours C | oshmem | Rust/oshmem | C/oshmem |"
    sep="|---|---:|---|---:|---:|---:|---:|---:|"
    if [[ -n $BASE ]]; then
        hdr="$hdr C base | C/C base |"
        sep="$sep---:|---:|"
    fi
    echo "$hdr"
    echo "$sep"
    awk -F, -v base="$BASE" '
        $3 !~ /^consume/ { v[$3 "," $4 "," $2 "," $1] = $5; k[$3 "," $4 "," $2] = 1 }
        function m(x) { return x == "" ? "-" : sprintf("%.3f", x / 1e6) }
        function q(a, b) { return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.2f", a / b) }
        END {
            nc = split("put get put_nbi get_nbi", cs, " "); np = split("direct tcp", ps, " ")
            for (c = 1; c <= nc; c++) for (p = 1; p <= np; p++) for (s = 1; s <= 1048576; s *= 2) {
                key = cs[c] "," s "," ps[p]
                if (!(key in k)) continue
                r = v[key ",rust"]; cc = v[key ",c"]; o = v[key ",oshmem"]; b = v[key ",base"]
                line = sprintf("| %s | %d | %s | %s | %s | %s | %s | %s |", cs[c], s, ps[p], m(r), m(cc), m(o), q(r, o), q(cc, o))
                if (base != "") line = line sprintf(" %s | %s |", m(b), q(cc, b))
                print line
            }
        }' "$out/summary.csv"
    echo
    echo "Put-then-consume: PE 1's sum of the array (64-bit words) after PE 0 wrote it, µs"
    echo "(median over rounds of each job's median). \"after put\": PE 0's put (the library's"
    echo "copy); \"after memcpy by PE 0\": a plain memcpy through the pointer to PE 1's copy (no row"
    echo "where it is not mapped, as over tcp); \"after local memcpy\": PE 1 copied the bytes itself."
    echo "A put whose data is slower to read than memcpy's shows as a larger \"after put\"."
    echo
    echo "| size | path | variant | ours Rust | ours C | oshmem |"
    echo "|---:|---|---|---:|---:|---:|"
    awk -F, '
        $3 ~ /^consume:/ { var = substr($3, 9); key = $4 "," $2 "," var; v[key "," $1] = $5; k[key] = 1 }
        function u(x) { return x == "" ? "-" : sprintf("%.1f", x / 1e3) }
        END {
            np = split("direct tcp", ps, " ")
            nv = split("after put|after memcpy by PE 0|after local memcpy", vs, "|")
            for (p = 1; p <= np; p++) for (s = 65536; s <= 4194304; s *= 2) for (i = 1; i <= nv; i++) {
                key = s "," ps[p] "," vs[i]
                if (key in k)
                    printf "| %d | %s | %s | %s | %s | %s |\n", s, ps[p], vs[i], u(v[key ",rust"]), u(v[key ",c"]), u(v[key ",oshmem"])
            }
        }' "$out/summary.csv"
    if ((${#problems[@]})); then
        echo
        echo "Failed jobs (their rows are missing above):"
        printf -- '- %s\n' "${problems[@]}"
    fi
} >"$body"

knobs="ROUNDS=$ROUNDS ITERS=$ITERS REPS=$REPS TCP_ITERS=$TCP_ITERS TCP_REPS=$TCP_REPS"
base_rev=
[[ -n $BASE ]] && base_rev=" (commit $(git -C "$BASE" rev-parse --short=12 HEAD 2>/dev/null || echo unknown))"
knobs="$knobs MAX_SIZE=$MAX_SIZE PATHS=${PATHS[*]} TINY=$TINY${BASE:+ BASE=$BASE$base_rev}"
cat "$body"
results_write msg-rate.md benches/msg-rate.sh "$knobs" \
    "Message rate of windows of put/get/put_nbi/get_nbi to consecutive offsets of one peer (then one quiet), ours (Rust and C API) against Open MPI 4.1.4's oshmem, 2 PEs, direct and over tcp; and put-then-consume." \
    "$body"
rm -f "$body"
if [[ -n $plot_bin ]]; then
    grep -v ',consume:' "$out/summary.csv" | "$plot_bin" "$out/msg_rate.png" &&
        results_copy "$out/msg_rate.png" msg_rate.png
fi
if ((${#problems[@]})); then
    echo "msg-rate.sh: ${#problems[@]} job(s) failed:" >&2
    printf '   %s\n' "${problems[@]}" >&2
    exit 1
fi
