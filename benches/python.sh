#!/usr/bin/env bash
# Python latency: shmem4py put (+ quiet) and get of 8 B and 1 MiB between PE 0 and PE 1 at
# 2 PEs (benches/python/latency.py), with shmem4py built on this runtime and on Open MPI's
# OpenSHMEM (oshmem), alternating round by round. Prints a Markdown table of the medians of the
# rounds' medians (per call) and their ratio; raw rows per job in
# target/bench-results/python/IMPL.ROUND.csv.
#
#   bash benches/python.sh
#
# Each shmem4py is built as a user builds it, in its own virtual environment, when missing:
#   ours    target/shmem4py/venv (the one scripts/shmem4py.sh builds), with the README's command
#           PATH=$PWD/target/release:$PATH pip install --no-cache-dir shmem4py "numpy<2"
#   oshmem  target/python-bench/venv-oshmem, with OSHCC=oshcc and the same pip command
# (--no-cache-dir: pip would otherwise reuse the wheel it built for the other library).
# Knobs: IMPLS="ours oshmem" ROUNDS=5 ITERS=20000 BIG_ITERS=400 REPS=15 JOB_TIMEOUT=300
# OSHRUN_FLAGS=... (extra oshrun flags); BUILD=0 builds nothing: implementations without their
# environment are left out (a SKIPPED line when none is left; benches/run.sh's TINY run).
# TINY=1: ROUNDS=1 ITERS=40 BIG_ITERS=2 REPS=2 unless set.
# When every job printed its rows, the table also goes to python.md in the results directory
# (benches/results/; TINY=1: target/bench-results/; RESULTS_DIR=... to choose), begun by a
# comment naming the script, the date, the machine and the knobs; a SKIPPED run leaves it as it
# is. Needs `cargo build --release`, python3 with venv, and PyPI for the first build. Exits
# non-zero if a job did not print all its rows.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=benches/results-lib.sh
source "$root/benches/results-lib.sh"
results_init
cd "$root"
read -r -a impls <<<"${IMPLS:-ours oshmem}"
if [[ ${TINY:-0} == 1 ]]; then
    ROUNDS=${ROUNDS:-1}
    ITERS=${ITERS:-40}
    BIG_ITERS=${BIG_ITERS:-2}
    REPS=${REPS:-2}
fi
ROUNDS=${ROUNDS:-5}
ITERS=${ITERS:-20000}
BIG_ITERS=${BIG_ITERS:-400}
REPS=${REPS:-15}
JOB_TIMEOUT=${JOB_TIMEOUT:-300}
BUILD=${BUILD:-1}
read -r -a extra_oshrun <<<"${OSHRUN_FLAGS:-}"
rel=$root/target/release
results=$root/target/bench-results/python
rm -rf "$results"
mkdir -p "$results"

venv_of() {
    case $1 in
    ours) echo "$root/target/shmem4py/venv" ;;
    oshmem) echo "$root/target/python-bench/venv-oshmem" ;;
    *)
        echo "python.sh: unknown implementation '$1' (ours, oshmem)" >&2
        exit 2
        ;;
    esac
}

# built IMPL: whether IMPL's virtual environment has shmem4py.
built() {
    local venv
    venv=$(venv_of "$1")
    [[ -x $venv/bin/python ]] && "$venv/bin/python" -c 'import shmem4py.api' 2>/dev/null
}

# build IMPL: makes IMPL's virtual environment with shmem4py unless it has one.
build() {
    local venv
    venv=$(venv_of "$1")
    built "$1" && return
    echo "== python.sh: building shmem4py for $1 in $venv" >&2
    python3 -m venv "$venv"
    case $1 in
    ours)
        [[ -x $rel/oshcc ]] || {
            echo "python.sh: build first: cargo build --release" >&2
            exit 2
        }
        PATH="$rel:$PATH" "$venv/bin/pip" install -q --disable-pip-version-check \
            --no-cache-dir shmem4py "numpy<2" >&2
        ;;
    oshmem)
        OSHCC=oshcc "$venv/bin/pip" install -q --disable-pip-version-check --no-cache-dir \
            shmem4py "numpy<2" >&2
        ;;
    esac
}

# oshmem runs as benches/run.sh's `oshmem` job does (not its tcp jobs with their UCX settings):
# its default transport between two PEs of one host, as ours uses its direct path.
problems=()
run() {
    local impl=$1 round=$2 rc=0 venv rows
    venv=$(venv_of "$impl")
    local csv=$results/$impl.$round.csv log=$results/$impl.$round.log
    local args=(benches/python/latency.py --iters "$ITERS" --big-iters "$BIG_ITERS" --reps "$REPS")
    local t=(timeout -k 10 "$JOB_TIMEOUT")
    case $impl in
    ours)
        "${t[@]}" "$rel/oshrun" -np 2 "$venv/bin/python" "${args[@]}" >"$csv" 2>"$log" || rc=$?
        ;;
    oshmem)
        # oshmem 4.1.4 segfaults in shmem_finalize after the rows are out: its exit status does
        # not count, missing rows do.
        "${t[@]}" oshrun --allow-run-as-root --oversubscribe -np 2 "${extra_oshrun[@]}" \
            "$venv/bin/python" "${args[@]}" >"$csv" 2>"$log" || rc=$?
        ;;
    esac
    rows=$(grep -cE '^(put|get),[0-9]+,python,[0-9.]+,[0-9.]+$' "$csv" || true)
    if [[ $rows -ne 4 || ($impl == ours && $rc -ne 0) ]]; then
        echo "   python $impl, round $round: exit status $rc, $rows of 4 rows; log tail:" >&2
        tail -n 5 "$log" | sed 's/^/      /' >&2
        problems+=("python $impl round $round: $rows of 4 rows, exit status $rc ($log)")
    else
        echo "   python $impl, round $round: ok" >&2
    fi
}

if [[ $BUILD == 0 ]]; then
    have=()
    for impl in "${impls[@]}"; do
        if built "$impl"; then
            have+=("$impl")
        else
            echo "   python $impl: left out (no shmem4py in $(venv_of "$impl"))" >&2
        fi
    done
    if [[ ${#have[@]} -eq 0 ]]; then
        echo "python.sh: SKIPPED (no shmem4py built; bash scripts/shmem4py.sh builds ours)" >&2
        exit 0
    fi
    impls=("${have[@]}")
else
    for impl in "${impls[@]}"; do
        build "$impl"
    done
fi
for ((round = 1; round <= ROUNDS; round++)); do
    echo "== python.sh: round $round of $ROUNDS" >&2
    for ((k = 0; k < ${#impls[@]}; k++)); do
        run "${impls[(k + round - 1) % ${#impls[@]}]}" "$round"
    done
done

# The table: per case, the median over rounds of each implementation's median.
python3 - "$results" "${impls[@]}" <<'EOF' | tee "$results/table.md"
import glob, statistics, sys
results, impls = sys.argv[1], sys.argv[2:]
med = {}
for impl in impls:
    for path in glob.glob(f"{results}/{impl}.*.csv"):
        for line in open(path):
            f = line.strip().split(",")
            if len(f) == 5 and f[2] == "python":
                med.setdefault((impl, f[0], int(f[1])), []).append(float(f[3]))
def fmt(ns):
    return f"{ns / 1000:.1f} us" if ns >= 10000 else f"{ns / 1000:.2f} us"
head = "| shmem4py | " + " | ".join(impls)
sep = "|---|" + "---:|" * len(impls)
if impls[:2] == ["ours", "oshmem"]:
    head += " | ours / oshmem"
    sep += "---:|"
print(head + " |")
print(sep)
for case in ("put", "get"):
    for size in (8, 1 << 20):
        vals = [statistics.median(med[(i, case, size)]) if (i, case, size) in med else None
                for i in impls]
        name = f"{case} {'8 B' if size == 8 else '1 MiB'}" + (" + quiet" if case == "put" else "")
        cells = [fmt(v) if v is not None else "-" for v in vals]
        if impls[:2] == ["ours", "oshmem"]:
            cells.append(f"{vals[0] / vals[1]:.2f}" if None not in vals[:2] else "-")
        print(f"| {name} | " + " | ".join(cells) + " |")
EOF
if [[ ${#problems[@]} -gt 0 ]]; then
    printf 'python.sh: %s\n' "${problems[@]}" >&2
    echo "python.sh: python.md in $RESULTS_DIR is left as it was" >&2
    exit 1
fi
# The versions the jobs ran (of the first implementation's environment).
versions=$("$(venv_of "${impls[0]}")/bin/python" -c 'import importlib.metadata as m
print("shmem4py " + m.version("shmem4py") + ", NumPy " + m.version("numpy"))' 2>/dev/null ||
    echo "shmem4py (version unknown)")
{
    echo "$versions. shmem4py built on each library as a user builds it (ours: with this"
    echo "project's oshcc first on PATH; oshmem: OSHCC=oshcc), PE 0 to PE 1 (benches/python/latency.py):"
    echo "shmem.put + shmem.quiet and shmem.get between an ordinary NumPy array and one in"
    echo "symmetric memory (shmem.zeros); ours under this project's oshrun, oshmem under Open MPI's"
    echo "oshrun --oversubscribe. Median over $ROUNDS rounds, the implementations alternating, of"
    echo "each run's median of $REPS loops x $ITERS calls (1 MiB: $BIG_ITERS calls); time per call."
    echo
    cat "$results/table.md"
} >"$results/python.md"
results_write python.md benches/python.sh \
    "IMPLS=\"${impls[*]}\" ROUNDS=$ROUNDS ITERS=$ITERS BIG_ITERS=$BIG_ITERS REPS=$REPS${OSHRUN_FLAGS:+ OSHRUN_FLAGS=\"$OSHRUN_FLAGS\"}" \
    "The time of shmem4py's put + quiet and get of 8 B and 1 MiB between 2 PEs on one node, with shmem4py built on this project and on Open MPI's OpenSHMEM." \
    "$results/python.md"
