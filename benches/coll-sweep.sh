#!/usr/bin/env bash
# Collectives from 8 B to 4 MiB per PE (benches/src/bin/coll_sweep.rs and its C twin
# benches/c/coll_sweep.c): ours in Rust, ours in C (coll_sweep.c built with this project's
# shmemcc) and Open MPI's oshmem (coll_sweep.c built with its oshcc), alternating run by run,
# at each PE count of NPES_LIST, on the direct path and over UCX_TLS=tcp,self (oshmem over tcp
# with run.sh's OSH_TCP_UCX settings, and once more with --mca btl self,tcp: its collectives are
# MPI's, whose data otherwise goes through shared memory). Writes NAME.md (coll-sweep.md) and
# the plot (coll_sweep.png; benches/src/bin/coll_sweep_plot.rs) to the results directory
# (benches/results-lib.sh; TINY=1: target/bench-results, small loops, sizes up to 64 KiB). Raw
# CSVs: target/bench-results/NAME/PROG.NPES.PATH.ROUND.csv, and summary.csv there
# (case,size,npes,path,rust_ns,c_ns,oshmem_ns,oshtcp_ns: the medians of the table), which the
# plot reads.
#
# Knobs (environment; TINY=1 changes the defaults, explicit values still win):
#   ROUNDS      runs of each program per PE count and path; the table takes the median of their
#               medians
#   ITERS REPS  calls per timed loop at the smallest size, timed loops per case and size
#   MAX_BYTES MIN_BYTES  the largest and smallest size per PE (defaults 4194304 and 8)
#   BUDGET      bytes per PE per timed loop at large sizes
#   NPES_LIST   PE counts ("2 4 8")
#   CASES       only these cases, space- or comma-separated (e.g. "broadcast reduce_sum_f32";
#               default: all but collect, alltoalls and broadcast_fresh, which run only when
#               named here: oshmem's alltoalls moves large ones element by element, which over
#               TCP takes minutes a job; broadcast_fresh is broadcast with a source the root
#               rewrites before each call, e.g. NAME=coll-sweep-fresh CASES="broadcast
#               broadcast_fresh"; and the reductions of every other operation and type family,
#               reduce_and_i64 reduce_or_i32 reduce_xor_i16 reduce_max_f64 reduce_min_i32
#               reduce_sum_i16 reduce_sum_c64 reduce_prod_f64 reduce_prod_c32, e.g.
#               NAME=coll-sweep-ops CASES="reduce_and_i64 ..."): coll_sweep's --only and
#               coll_sweep.c's `only`. Every job also runs memcpy, which the memory-bound table
#               needs.
#   PATHS       "direct tcp" (default), "direct" or "tcp" (space- or comma-separated)
#   JOB_TIMEOUT seconds per job; PLOT=0: no plot
#   NAME        the table's name (default coll-sweep): NAME.md, the plot NAME.png with '-' as
#               '_', the raw CSVs in target/bench-results/NAME (so that a run of other cases,
#               e.g. NAME=coll-sweep-more CASES="collect alltoalls", leaves the default table)
#   OFFSET      elements past a page boundary at which every destination and source starts, and
#               memcpy's buffers 8 x OFFSET bytes in (default 0: destinations page-aligned, the
#               favourable case; e.g. NAME=coll-sweep-unaligned OFFSET=1, the unfavourable one,
#               which NAME.md then labels): coll_sweep's --offset and coll_sweep.c's `offset`
#   BTL_TCP=0   no "oshmem, btl tcp" column (oshmem's alltoalls over TCP, element by element,
#               takes minutes a call at megabytes)
#   RENDER_ONLY=1  run nothing: write the tables and the plot again from the raw CSVs of the
#               last run (target/bench-results/NAME), with the same knobs as that run
# A run with CASES, PATHS or MIN_BYTES that leave cases, paths or sizes out says so at the top
# of NAME.md (and the knobs line records them).
set -euo pipefail
# shellcheck source=benches/results-lib.sh
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
MIN_BYTES=${MIN_BYTES:-8} CASES=${CASES:-} PATHS=${PATHS:-direct tcp} PLOT=${PLOT:-1}
NAME=${NAME:-coll-sweep} BTL_TCP=${BTL_TCP:-1} OFFSET=${OFFSET:-0}
if [[ ! $OFFSET =~ ^[0-9]+$ ]] || ((OFFSET > 64)); then
    echo "coll-sweep.sh: OFFSET: '$OFFSET' is not a whole number of elements from 0 to 64" >&2
    exit 2
fi
if [[ ! $NAME =~ ^[a-z0-9][a-z0-9-]*$ ]]; then
    echo "coll-sweep.sh: NAME: '$NAME' is not lower-case letters, digits and '-'" >&2
    exit 2
fi
read -r -a cases <<<"${CASES//,/ }"
read -r -a paths <<<"${PATHS//,/ }"
for path in "${paths[@]}"; do
    if [[ $path != direct && $path != tcp ]]; then
        echo "coll-sweep.sh: PATHS: '$path' is neither direct nor tcp" >&2
        exit 2
    fi
done
if ((${#paths[@]} == 0)); then
    echo "coll-sweep.sh: PATHS is empty" >&2
    exit 2
fi
# The arguments that choose the cases: none (all), or the names comma-separated.
rust_only=() c_only=()
if ((${#cases[@]})); then
    only=$(IFS=,; echo "${cases[*]}")
    [[ ,$only, == *,memcpy,* ]] || only="$only,memcpy"
    rust_only=(--only "$only")
    c_only=(only "$only")
fi
export SHMEM_SYMMETRIC_SIZE=${SHMEM_SYMMETRIC_SIZE:-512M}

RENDER_ONLY=${RENDER_ONLY:-0}
out=target/c-bench
if [[ $RENDER_ONLY != 1 ]]; then
    # shmem-capi's build script writes target/release/shmemcc (and libshmem.so).
    bench_build
    mkdir -p "$out"
    oshcc -O2 -Wall -o "$out/coll_sweep" benches/c/coll_sweep.c
    target/release/shmemcc -O2 -Wall -o "$out/coll_sweep-ours" benches/c/coll_sweep.c
    cc -O2 -Wall -pthread -o "$out/c2c" benches/c/c2c.c
fi
plot_bin=
if [[ $PLOT != 0 ]]; then
    # The plot is optional: a failed build leaves the tables.
    if bench_build --features shmem-benches/plot --bin coll_sweep_plot; then
        plot_bin=target/release/coll_sweep_plot
    else
        echo "coll-sweep.sh: coll_sweep_plot did not build; no plot" >&2
    fi
fi
# shellcheck disable=SC2054 # the commas are in the values (UCX_TLS=tcp,self)
OSH_TCP_UCX=(-x UCX_TLS=tcp,self -x UCX_TCP_TX_SEG_SIZE=256k -x UCX_TCP_RX_SEG_SIZE=256k
    -x UCX_MAX_RNDV_LANES=1)
raw=target/bench-results/$NAME
if [[ $RENDER_ONLY == 1 ]]; then
    ls "$raw"/*.*.*.*.csv >/dev/null 2>&1 || {
        echo "coll-sweep.sh: RENDER_ONLY=1: no raw CSVs in $raw (run the sweep first)" >&2
        exit 1
    }
    run_npes=
else
    run_npes=$NPES_LIST
    rm -rf "$raw"
    mkdir -p "$raw"
fi
t=(timeout -k 10 "$JOB_TIMEOUT")
# run_to FILE CMD...: CMD's output into FILE (a failure is said, naming FILE, and the sweep goes
# on).
run_to() {
    local file=$1
    shift
    "$@" >"$file" || echo "coll-sweep.sh: the run for ${file##*/} failed" >&2
}
# osh_to FILE CMD...: oshmem's rows of CMD's output into FILE (oshmem fails at finalize).
osh_to() {
    local file=$1
    shift
    "$@" 2>/dev/null | grep -E '^[a-z_0-9]+,[0-9]+,[0-9]+,' >"$file" || true
}
# probed PROG N PATH ROUND CMD...: runs CMD with the machine's state around it (benches/c/c2c.c:
# a cache line's round trip between the first two CPUs, ns), one line per run in probe.csv:
# program, PEs, path, round, before, after.
probed() {
    local prog=$1 n=$2 path=$3 r=$4 before after
    shift 4
    before=$("$out/c2c" 2>/dev/null)
    "$@"
    after=$("$out/c2c" 2>/dev/null)
    echo "$prog,$n,$path,$r,$before,$after" >>"$raw/probe.csv"
}
# The C twin's arguments (ours and oshmem alike).
copts=(iters "$ITERS" reps "$REPS" max_bytes "$MAX_BYTES" min_bytes "$MIN_BYTES" budget "$BUDGET"
    offset "$OFFSET" "${c_only[@]}")
for n in $run_npes; do
    osh=(oshrun --allow-run-as-root --oversubscribe -np "$n" -x SHMEM_SYMMETRIC_SIZE)
    for path in "${paths[@]}"; do
        env_ours=()
        osh_extra=()
        if [[ $path == tcp ]]; then
            # shellcheck disable=SC2054 # one element: the value is tcp,self
            env_ours=(UCX_TLS=tcp,self)
            osh_extra=("${OSH_TCP_UCX[@]}")
        fi
        for r in $(seq 1 "$ROUNDS"); do
            echo "== $n PEs, $path, round $r" >&2
            probed rust "$n" "$path" "$r" run_to "$raw/rust.$n.$path.$r.csv" \
                env "${env_ours[@]}" "${t[@]}" target/release/shmemrun -n "$n" \
                target/release/coll_sweep --iters "$ITERS" --reps "$REPS" \
                --max-bytes "$MAX_BYTES" --min-bytes "$MIN_BYTES" --budget "$BUDGET" \
                --offset "$OFFSET" "${rust_only[@]}"
            probed c "$n" "$path" "$r" run_to "$raw/c.$n.$path.$r.csv" \
                env "${env_ours[@]}" "${t[@]}" target/release/shmemrun -n "$n" \
                "$out/coll_sweep-ours" "${copts[@]}"
            # oshmem segfaults in shmem_finalize here (FINDINGS.md): its rows are printed before.
            probed oshmem "$n" "$path" "$r" osh_to "$raw/oshmem.$n.$path.$r.csv" \
                "${t[@]}" "${osh[@]}" "${osh_extra[@]}" "$out/coll_sweep" "${copts[@]}"
            # oshmem's collectives are Open MPI's MPI collectives (scoll/mpi), which on one node
            # move their data through shared memory (btl/vader) whatever UCX_TLS says: over
            # tcp, a second oshmem column with --mca btl self,tcp moves it over TCP as ours does.
            if [[ $path == tcp && $BTL_TCP != 0 ]]; then
                probed oshtcp "$n" "$path" "$r" osh_to "$raw/oshtcp.$n.$path.$r.csv" \
                    "${t[@]}" "${osh[@]}" "${osh_extra[@]}" --mca btl self,tcp "$out/coll_sweep" \
                    "${copts[@]}"
            fi
        done
    done
done

for c in "${cases[@]}"; do
    grep -qs "^$c," "$raw"/*.*.*.*.csv ||
        echo "coll-sweep.sh: CASES: no program gave rows of '$c' (is it a case's name?)" >&2
done

body=$(mktemp)
# What the run leaves out of the full sweep (all cases, 8 B to 4 MiB, 2, 4 and 8 PEs, both paths).
subset=()
if ((${#cases[@]} == 1)); then
    subset+=("only the case ${cases[0]}")
elif ((${#cases[@]} > 1)); then
    subset+=("only the cases ${cases[*]}")
fi
((${#paths[@]} == 1)) && subset+=("only the ${paths[0]} path")
if ((MIN_BYTES > 8 || MAX_BYTES < 4194304)); then
    subset+=("only the sizes from $MIN_BYTES to $MAX_BYTES bytes per PE")
fi
[[ $(echo "$NPES_LIST" | xargs) == "2 4 8" ]] || subset+=("only $(echo "$NPES_LIST" | xargs) PEs")
if ((${#subset[@]})); then
    note=$(printf '%s; ' "${subset[@]}")
    echo "**This run covers a subset of the sweep: ${note%; }.**" >>"$body"
    echo >>"$body"
fi
if ((OFFSET > 0)); then
    echo "**Unaligned (OFFSET=$OFFSET): every destination and source starts $OFFSET" \
        "element(s) past a page boundary ($((OFFSET * 4)) bytes for the f32 reduction," \
        "$((OFFSET * 8)) for the rest; ours from Rust: $OFFSET element(s) into a \`Vec\` at" \
        "the allocator's address), and memcpy's two buffers $((OFFSET * 8)) bytes into" \
        "theirs.** The sweep's default" \
        "(OFFSET=0) gives every destination a page of its own, the favourable case." >>"$body"
    echo >>"$body"
fi
# The awk functions of the tables below: med(s), the median of the space-separated numbers in
# s ("" for none; the mean of the middle two of an even count as a decimal, not in awk's %g,
# which writes large times as 1.53772e+06: from 100 up to one place, below in six digits, as
# the ratios need); ratio(a, b), a / b to two places ("" where either is missing).
awk_fns='
    function sorted(s, a,   k, i, j, t) { k = split(s, a, " ");
        for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return k }
    function med(s,   a, k, x) { k = sorted(s, a); if (!k) return "";
        if (k % 2) return a[(k + 1) / 2]
        x = (a[k / 2] + a[k / 2 + 1]) / 2; return x >= 100 ? sprintf("%.1f", x) : sprintf("%.6g", x) }
    function q1(s,   a, k) { k = sorted(s, a); if (!k) return ""; return a[int((k + 3) / 4)] }
    function ratio(a, b) { return (a != "" && b != "" && b > 0) ? sprintf("%.2f", a / b) : "" }
'
# The machine's state around the runs (probe.csv), read once for two uses. Each run's state, into
# $states for the "same state" columns: "quick" where both probes around it read at most twice
# the lower quartile of all probes (the quick state's reading, even when most of a sweep ran in
# the slow one), "slow" where both read more, "mixed" otherwise; one line per run:
# program,PEs,path,round,state (a run without probes, from before the probe, has none). And the
# paragraph after the tables, into $machine: the runs that are not "quick" were made, at least
# in part, while the machine moved lines between its CPUs several times more slowly (a virtual
# machine whose host placed its vCPUs apart); every collective that moves lines between PEs
# slows with it, so their rows compare runs made in different states.
states=$raw/states.rows machine=$raw/machine.md
: >"$states"
: >"$machine"
if [[ -s $raw/probe.csv ]]; then
    awk -F, -v states="$states" "$awk_fns"'
        { all = all " " $5 " " $6; k++; id[k] = $1 "," $2 "," $3 "," $4; prog[k] = $1 " " $2 " " $3 " " $4; b[k] = $5; a[k] = $6 }
        END {
            m = med(all); q = q1(all)
            if (m == "") exit
            for (i = 1; i <= k; i++) {
                state = (b[i] > 2 * q) != (a[i] > 2 * q) ? "mixed" : b[i] > 2 * q ? "slow" : "quick"
                print id[i] "," state >states
                if (state != "quick") { slow = slow (slow ? "; " : "") prog[i] " (" b[i] ", " a[i] ")"; ns++ }
            }
            print ""
            printf "Machine state (benches/c/c2c.c, a cache line'"'"'s round trip between the first two CPUs before and after each run): median %s ns, lower quartile %s ns, over %d runs. ", m, q, k
            if (!ns) { print "No run saw more than twice the lower quartile."; exit }
            printf "%d runs saw more than twice the lower quartile, before or after (program, PEs, path, round: ns before, after): %s. Rows that move cache lines between PEs (small collectives, broadcasts of data just written) are slower in those runs.\n", ns, slow
        }' "$raw/probe.csv" >"$machine"
fi
# The median over rounds of each run's median, per program, case, size, PEs and path; the same
# medians go to summary.csv for the plot. The "same state" columns compare like with like: the
# ratio of the medians over the runs made wholly in the quick state, where both programs have
# such runs, else over those made wholly in the slow state (the state follows the figure).
for f in "$raw"/*.*.*.*.csv; do
    b=${f##*/}
    IFS=. read -r prog n path round _ <<<"$b"
    sed "s/^/$prog,$path,$round,/" "$f"
done | awk -F, -v rows="$raw/summary.rows" -v states="$states" "$awk_fns"'
    BEGIN { while ((getline line < states) > 0) { split(line, f, ","); st[f[1], f[2], f[3], f[4]] = f[5] } }
    # same(key, prog): the ratio of prog to oshmem within one state, and the state, or "".
    function same(key, prog,   s, x, y) {
        split("quick slow", order, " ")
        for (s = 1; s <= 2; s++) {
            x = med(w[key, prog, order[s]]); y = med(w[key, "oshmem", order[s]])
            if (x != "" && y != "") return ratio(x, y) " " order[s]
        }
        return ""
    }
    {
        key = $4 "," $5 "," $6 "," $2; v[key, $1] = v[key, $1] " " $7; keys[key] = 1
        s = st[$1, $6, $2, $3]
        if (s == "quick" || s == "slow") w[key, $1, s] = w[key, $1, s] " " $7
    }
    END {
        print "| case | size (B) | PEs | path | ours Rust (ns) | ours C (ns) | oshmem (ns) | Rust / oshmem | C / oshmem | Rust / oshmem, same state | C / oshmem, same state | oshmem, btl tcp (ns) | Rust / oshmem btl tcp |"
        print "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        for (key in keys) {
            split(key, p, ",")
            if (p[1] == "memcpy") continue
            r = med(v[key, "rust"]); c = med(v[key, "c"]); o = med(v[key, "oshmem"]); t = med(v[key, "oshtcp"])
            sr = same(key, "rust"); sc = same(key, "c")
            printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p[1], p[2], p[3], p[4], r, c, o, ratio(r, o), ratio(c, o), sr, sc, t, ratio(r, t)
            print key "," r "," c "," o "," t >rows
            print key "," sr "," sc >(rows ".same")
        }
    }' | { read -r h1; read -r h2; echo "$h1"; echo "$h2"; sort -t'|' -k2,2 -k4,4n -k5,5 -k3,3n; } >>"$body"
{
    echo "case,size,npes,path,rust_ns,c_ns,oshmem_ns,oshtcp_ns"
    [[ ! -f $raw/summary.rows ]] || sort -t, -k1,1 -k4,4 -k3,3n -k2,2n "$raw/summary.rows"
} >"$raw/summary.csv"
rm -f "$raw/summary.rows"
# The same-state ratios above 1 (as printed), counted and listed the same way.
if [[ -s $raw/summary.rows.same ]]; then
    sort -t, -k1,1 -k4,4 -k3,3n -k2,2n "$raw/summary.rows.same" | awk -F, '
        function count(r, col) { if (r == "") return; n[col]++; split(r, x, " "); if (x[1] + 0 > 1) above[col]++ }
        {
            count($5, "r"); count($6, "c")
            split($5, a, " "); split($6, b, " ")
            if (a[1] + 0 > 1 || b[1] + 0 > 1) rows[++k] = sprintf("| %s | %s | %s | %s | %s | %s |", $1, $2, $3, $4, $5, $6)
        }
        END {
            if (!n["r"] && !n["c"]) { print "\nSame state: no row has runs of ours and of oshmem made wholly in one state of the machine."; exit }
            printf "\nSame state (the runs made wholly in one state of the machine, see below): %d of %d Rust / oshmem and %d of %d C / oshmem above 1", above["r"], n["r"], above["c"], n["c"]
            print k ? ":" : "."
            if (!k) exit
            print ""
            print "| case | size (B) | PEs | path | Rust / oshmem, same state | C / oshmem, same state |"
            print "|---|---:|---:|---|---:|---:|"
            for (i = 1; i <= k; i++) print rows[i]
        }' >"$raw/same.md"
fi
rm -f "$raw/summary.rows.same"
# The rows where ours took longer than oshmem in this run: a ratio of the table above 1 as
# printed (1.00 is not), counted per column and listed.
awk -F, "$awk_fns"'
    function count(r, col) { if (r == "") return; n[col]++; if (r + 0 > 1) above[col]++ }
    function said(col, what) { return sprintf("%d of %d %s", above[col], n[col], what) }
    NR == 1 { next }
    {
        r = ratio($5, $7); c = ratio($6, $7); t = ratio($5, $8)
        count(r, "r"); count(c, "c"); count(t, "t")
        if (r + 0 > 1 || c + 0 > 1 || t + 0 > 1)
            rows[++k] = sprintf("| %s | %s | %s | %s | %s | %s | %s |", $1, $2, $3, $4, r, c, t)
    }
    END {
        if (!n["r"] && !n["c"]) exit
        s = said("r", "Rust / oshmem") ", " said("c", "C / oshmem")
        if (n["t"]) s = s ", " said("t", "Rust / oshmem btl tcp")
        print ""
        print "Ratios above 1 (ours took longer than oshmem in this run, as printed above): " s "."
        if (!k) exit
        print ""
        print "| case | size (B) | PEs | path | Rust / oshmem | C / oshmem | Rust / oshmem btl tcp |"
        print "|---|---:|---:|---|---:|---:|---:|"
        for (i = 1; i <= k; i++) print rows[i]
    }' "$raw/summary.csv" >>"$body"
if [[ -s $raw/same.md ]]; then
    cat "$raw/same.md" >>"$body"
fi
rm -f "$raw/same.md"
cat "$machine" >>"$body"
rm -f "$machine"
# The memory bound of the large reductions and broadcasts on the direct path: what the bytes each
# PE must read and write cost at the copy rate that all PEs copying at once get on this node
# (the memcpy case of coll_sweep and of its C twin: the Rust job's, and each job's own). A
# memcpy of X bytes reads X and writes X. Each member of a reduction of B bytes over n PEs (data
# moved once: its share of every member's source, then the other shares of the result) reads
# B + B(n-1)/n and writes B: (3n-1)/(2n) memcpys of B.
# Each non-root member of a broadcast copies B: one memcpy of B. With more PEs than cores, a
# core moves n / cores members' data in turn.
cores=$(nproc)
# Only where the run has rows for it: the direct path, sizes of 1 MiB, a reduction or broadcast.
bound=0
if [[ " ${paths[*]} " == *" direct "* ]] && ((MAX_BYTES >= 1048576)); then
    bound=1
    if ((${#cases[@]})); then
        bound=0
        for c in "${cases[@]}"; do
            if [[ $c == broadcast || $c == reduce_* ]]; then bound=1; fi
        done
    fi
fi
# The rows of the bound tables from $raw/bound.rows (program,round,case,size,PEs,median,min):
# `bound_table all` the bound table's, `bound_table state` the same-job ratios by state.
bound_table() {
    awk -F, -v cores="$cores" -v mode="$1" -v states="$states" "$awk_fns"'
        BEGIN { while ((getline line < states) > 0) { split(line, sf, ","); st[sf[1], sf[2], sf[3], sf[4]] = sf[5] } }
        {
            key = $3 "," $4 "," $5; v[key, $1] = v[key, $1] " " $6; keys[key] = 1
            t[key, $1, $2] = $6; rounds[$1, $2] = 1
        }
        # The median over the runs of prog (those made wholly in state `want`, or all for "")
        # of each run'"'"'s time over its own memcpy of the size times factor (runs without both
        # left out); with the count of runs in brackets when `want` is a state.
        function own(key, memkey, prog, factor, want,   s, k, x, c, n) {
            s = ""; c = 0; split(key, n, ",")
            for (k in rounds) {
                split(k, x, SUBSEP)
                if (x[1] != prog || !((key, prog, x[2]) in t) || !((memkey, prog, x[2]) in t)) continue
                if (want != "" && st[prog, n[3], "direct", x[2]] != want) continue
                if (t[memkey, prog, x[2]] > 0) { s = s " " t[key, prog, x[2]] / (t[memkey, prog, x[2]] * factor); c++ }
            }
            s = med(s)
            if (s == "") return want == "" ? "" : "- (0)"
            return want == "" ? sprintf("%.2f", s) : sprintf("%.2f (%d)", s, c)
        }
        END {
            for (key in keys) {
                split(key, p, ",")
                if (p[2] < 1048576 || p[1] == "memcpy" || p[1] ~ /^(fcollect|alltoall|collect|alltoalls)$/) continue
                memkey = "memcpy," p[2] "," p[3]
                m = med(v[memkey, "rust"])
                if (m == "") continue
                n = p[3]; f = (p[1] == "broadcast") ? 1 : (3 * n - 1) / (2 * n)
                fr = (p[1] == "broadcast") ? f : f + (n - 1) / n
                if (n > cores) { f = f * n / cores; fr = fr * n / cores }
                if (mode == "state") {
                    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p[1], p[2], n,
                        own(key, memkey, "rust", fr, "quick"), own(key, memkey, "c", f, "quick"), own(key, memkey, "oshmem", f, "quick"),
                        own(key, memkey, "rust", fr, "slow"), own(key, memkey, "c", f, "slow"), own(key, memkey, "oshmem", f, "slow")
                    continue
                }
                bound = m * f; rbound = m * fr; r = med(v[key, "rust"])
                printf "| %s | %s | %s | %.0f | %.3f | %.0f | %.0f | %s | %s | %s | %s | %s | %s | %s |\n", p[1], p[2], n, m, f, bound,
                    rbound, ratio(r, rbound), ratio(r, bound), ratio(med(v[key, "c"]), bound), ratio(med(v[key, "oshmem"]), bound),
                    own(key, memkey, "rust", fr, ""), own(key, memkey, "c", f, ""), own(key, memkey, "oshmem", f, "")
            }
        }' "$raw/bound.rows"
}
if [[ $bound == 1 ]]; then
    {
        echo
        echo "Direct path against the memory bound: bound = memcpy of the size (every PE copying at"
        echo "once, the Rust run of the same job) times the bytes each member must move, in memcpys"
        echo "(reductions: (3n-1)/(2n) for n PEs; broadcast: 1), times the PEs that share a core"
        echo "(n / $cores cores when n > $cores: a core then moves that many members' data one after"
        echo "the other, which the memcpy loop, timed call by call, does not show); the ratios are"
        echo "time / bound (the goal: at most 2). Ours from Rust reduces private sources, which the"
        echo "other members cannot read: each member first copies the (n-1)/n of its source that they"
        echo "need into its \`dest\`, so its bound (\"Rust bound\") adds (n-1)/n memcpys; C and oshmem"
        echo "reduce symmetric ones. (Every broadcast here leaves the root's \`dest\` as it is, as"
        echo "\`shmem_broadcast64\` does: from Rust, \`broadcast_to_others\` of a private source, which"
        echo "the root copies straight into the member's \`dest\` in a pair, and in larger teams into"
        echo "its staging area up to 256 KiB, beyond into the \`dest\` of the member after it, which"
        echo "the others read piece by piece: no member copies the data more than once, so the bound"
        echo "stays one memcpy.) The last three columns set each run against the memcpy of its own"
        echo "job (every job runs it: the Rust program's \`copy_from_slice\` and the C program's"
        echo "\`memcpy\`, between two private buffers of each PE), moments apart, so that both"
        echo "figures come from one state of the machine, whose copy rate at these sizes moves by"
        echo "several times between states and runs; each is the median over the runs of that"
        echo "ratio."
        echo
        echo "| case | size (B) | PEs | memcpy (ns) | memcpys × PEs per core | bound (ns) | Rust bound (ns) | ours Rust / Rust bound | ours Rust / bound | ours C / bound | oshmem / bound | same job: Rust / Rust bound | same job: C / bound | same job: oshmem / bound |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        for f in "$raw"/*.direct.*.csv; do
            b=${f##*/}
            IFS=. read -r prog _ _ round _ <<<"$b"
            sed "s/^/$prog,$round,/" "$f"
        done >"$raw/bound.rows"
        bound_table all | sort -t'|' -k2,2 -k4,4n -k3,3n
        echo
        echo "The same-job ratios by the machine's state (the runs made wholly in the quick or wholly"
        echo "in the slow state, as the probe after the tables classes them; the count of runs in"
        echo "brackets). While the vCPUs sit apart each has a last-level cache of its own, so a PE's"
        echo "memcpy (its own two buffers) keeps more in cache, while a collective's data crosses"
        echo "between them."
        echo
        echo "| case | size (B) | PEs | quick: Rust / Rust bound | quick: C / bound | quick: oshmem / bound | slow: Rust / Rust bound | slow: C / bound | slow: oshmem / bound |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
        bound_table state | sort -t'|' -k2,2 -k4,4n -k3,3n
        rm -f "$raw/bound.rows"
    } >>"$body"
fi
rendered=
[[ $RENDER_ONLY == 1 ]] && rendered=" RENDER_ONLY=1 (the tables of the raw CSVs of an earlier run of these knobs)"
results_write "$NAME.md" benches/coll-sweep.sh \
    "ROUNDS=$ROUNDS ITERS=$ITERS REPS=$REPS MAX_BYTES=$MAX_BYTES MIN_BYTES=$MIN_BYTES BUDGET=$BUDGET NPES_LIST=\"$NPES_LIST\" CASES=\"${cases[*]:-all}\" PATHS=\"${paths[*]}\" BTL_TCP=$BTL_TCP OFFSET=$OFFSET TINY=$TINY${rendered}" \
    "Collectives over all PEs from 8 B to 4 MiB per PE (OSU-style timing: each call after an untimed barrier_all, the mean over PEs of each PE's mean; the median over rounds of each run's median): ours from Rust (private sources; the broadcast is \`broadcast_to_others\`, which leaves the root's \`dest\` as it is, as \`shmem_broadcast64\` does), ours from C and Open MPI's oshmem (the same C program, symmetric sources). Over tcp, oshmem's collectives still move their data through shared memory (they are Open MPI's MPI collectives, over btl/vader on one node; UCX_TLS reaches only its RMA); the column \"oshmem, btl tcp\" runs it with --mca btl self,tcp, so that its collective data goes over TCP as ours does. The columns \"same state\" compare only the runs made wholly in one state of the machine (the probe, after the tables): the quick state's where both programs have such runs, else the slow state's, which the figure names; empty where no state has runs of both." \
    "$body"
rm -f "$body" "$states"
if [[ -n $plot_bin ]]; then
    png=${NAME//-/_}.png
    label=()
    ((OFFSET > 0)) && label=("unaligned, OFFSET=$OFFSET")
    if "$plot_bin" "$raw/$png" "${label[@]}" <"$raw/summary.csv"; then
        results_copy "$raw/$png" "$png"
    else
        echo "coll-sweep.sh: coll_sweep_plot failed; no plot" >&2
    fi
fi
