#!/usr/bin/env bash
# Python: the time per call of OpenSHMEM operations from Python at 2 PEs on one node
# (benches/python/ops.py), for three packages side by side, alternating job by job, on both
# paths (direct: the default; tcp: UCX_TLS=tcp,self for every package):
#   rs       this project's native package shmem_rs (`pip install ./shmem-py`), shmem4py's API
#            and the sdo slice syntax;
#   ours     shmem4py 1.0 built on this project's libshmem.so (the README's C route);
#   oshmem   shmem4py 1.0 built on Open MPI's OpenSHMEM (oshmem);
# and, in the same rounds, the Rust API's put + quiet and get of 1 MiB (`latency --vec-mib`),
# the yardstick of the Python 1 MiB rows. Prints a Markdown table per path: the medians of the
# rounds' medians (per call) and the ratios; raw rows in target/bench-results/python/.
#
#   bash benches/python.sh
#
# Each package lives in its own virtual environment, built when missing, all three with the same
# NumPy (1.x: shmem4py 1.0 is installed with "numpy<2", as the guide's route says, and part of
# every row is NumPy's own work, the transpose's packing above all; the script stops before any
# job if the environments' NumPy versions differ):
#   rs      target/python/venv-numpy1 (scripts/python.sh's NumPy 1.x environment):
#           pip install ./shmem-py "numpy<2" (the package reinstalled every run, so that it is
#           today's code)
#   ours    target/shmem4py/venv (scripts/shmem4py.sh's), the README's command:
#           PATH=$PWD/target/release:$PATH pip install --no-cache-dir shmem4py "numpy<2"
#   oshmem  target/python-bench/venv-oshmem, with OSHCC=oshcc and the same pip command
# Knobs: IMPLS="rs ours oshmem" PATHS="direct tcp" ROUNDS=5 ITERS=20000 BIG_ITERS=400 REPS=15
# UCX_ITERS=1000 UCX_BIG_ITERS=50 (the tcp jobs' loops) JOB_TIMEOUT=300; BUILD=0 builds nothing:
# packages without their environment are left out (a SKIPPED line when none is left;
# benches/run.sh's TINY run). TINY=1: ROUNDS=1 ITERS=40 BIG_ITERS=2 REPS=2 UCX_ITERS=20
# UCX_BIG_ITERS=2 unless set.
# When every job printed its rows, the tables go to python.md in the results directory
# (benches/results/; TINY=1: target/bench-results/; RESULTS_DIR=... to choose). Needs
# `cargo build --release`, python3 with venv, and PyPI for the first build. Exits non-zero if a
# job did not print all its rows.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=benches/results-lib.sh
source "$root/benches/results-lib.sh"
results_init
cd "$root"
read -r -a impls <<<"${IMPLS:-rs ours oshmem}"
read -r -a paths <<<"${PATHS:-direct tcp}"
if [[ ${TINY:-0} == 1 ]]; then
    ROUNDS=${ROUNDS:-1}
    ITERS=${ITERS:-40}
    BIG_ITERS=${BIG_ITERS:-2}
    REPS=${REPS:-2}
    UCX_ITERS=${UCX_ITERS:-20}
    UCX_BIG_ITERS=${UCX_BIG_ITERS:-2}
fi
ROUNDS=${ROUNDS:-5}
ITERS=${ITERS:-20000}
BIG_ITERS=${BIG_ITERS:-400}
REPS=${REPS:-15}
UCX_ITERS=${UCX_ITERS:-1000}
UCX_BIG_ITERS=${UCX_BIG_ITERS:-50}
JOB_TIMEOUT=${JOB_TIMEOUT:-300}
BUILD=${BUILD:-1}
rel=$root/target/release
results=$root/target/bench-results/python
# TABLE_ONLY=1: no jobs, the tables again from the last run's raw rows (same knobs).
TABLE_ONLY=${TABLE_ONLY:-0}
if [[ $TABLE_ONLY != 1 ]]; then
    rm -rf "$results"
fi
mkdir -p "$results"
# The rows every Python job prints (ops.py), and the Rust job's.
PY_ROWS=15
RUST_ROWS=2
# The oshmem tcp jobs' UCX settings: the transport ours uses and the settings shmemrun gives
# its PEs on top of UCX's defaults (as benches/run.sh's oshmem-tcp job).
OSH_TCP_UCX=(-x UCX_TLS=tcp,self -x UCX_TCP_TX_SEG_SIZE=256k -x UCX_TCP_RX_SEG_SIZE=256k
    -x UCX_MAX_RNDV_LANES=1)

venv_of() {
    case $1 in
    rs) echo "$root/target/python/venv-numpy1" ;;
    ours) echo "$root/target/shmem4py/venv" ;;
    oshmem) echo "$root/target/python-bench/venv-oshmem" ;;
    *)
        echo "python.sh: unknown package '$1' (rs, ours, oshmem)" >&2
        exit 2
        ;;
    esac
}

module_of() { [[ $1 == rs ]] && echo shmem_rs || echo shmem4py; }

# built IMPL: whether IMPL's virtual environment has its package.
built() {
    local venv
    venv=$(venv_of "$1")
    [[ -x $venv/bin/python ]] && "$venv/bin/python" -c "import $(module_of "$1")" 2>/dev/null
}

# build IMPL: makes IMPL's virtual environment with its package (rs: always reinstalled).
build() {
    local venv
    venv=$(venv_of "$1")
    [[ $1 != rs ]] && built "$1" && return
    echo "== python.sh: building $(module_of "$1") for $1 in $venv" >&2
    [[ -x $venv/bin/python ]] || python3 -m venv "$venv"
    case $1 in
    rs)
        if "$venv/bin/python" -c 'import numpy' 2>/dev/null; then
            "$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps \
                ./shmem-py >&2
        else
            # What scripts/python.sh puts there (its tests need pytest and cffi), so that
            # either script may be the one that makes this environment.
            "$venv/bin/pip" install -q --disable-pip-version-check ./shmem-py "numpy<2" \
                pytest cffi >&2
        fi
        ;;
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

problems=()
# run JOB PATH ROUND: one job (a package, or `rust`), its rows to $results/JOB.PATH.ROUND.csv.
run() {
    local job=$1 path=$2 round=$3 rc=0 rows want=$PY_ROWS
    local csv=$results/$job.$path.$round.csv log=$results/$job.$path.$round.log
    local t=(timeout -k 10 "$JOB_TIMEOUT") env=() osh_env=()
    local iters=$ITERS big=$BIG_ITERS
    if [[ $path == tcp ]]; then
        env=(UCX_TLS=tcp,self)
        osh_env=("${OSH_TCP_UCX[@]}")
        iters=$UCX_ITERS
        big=$UCX_BIG_ITERS
    fi
    local venv args
    case $job in
    rust)
        want=$RUST_ROWS
        env "${env[@]}" "${t[@]}" "$rel/shmemrun" -n 2 "$rel/latency" --vec-mib --csv \
            --iters "$big" --reps "$REPS" >"$csv" 2>"$log" || rc=$?
        ;;
    rs | ours)
        venv=$(venv_of "$job")
        args=(benches/python/ops.py --api "$(module_of "$job")" --iters "$iters"
            --big-iters "$big" --reps "$REPS")
        env "${env[@]}" "${t[@]}" "$rel/shmemrun" -n 2 "$venv/bin/python" "${args[@]}" \
            >"$csv" 2>"$log" || rc=$?
        ;;
    oshmem)
        venv=$(venv_of "$job")
        args=(benches/python/ops.py --api shmem4py --iters "$iters" --big-iters "$big"
            --reps "$REPS")
        # oshmem 4.1.4 segfaults in shmem_finalize after the rows are out: its exit status does
        # not count, missing rows do.
        "${t[@]}" oshrun --allow-run-as-root --oversubscribe -np 2 "${osh_env[@]}" \
            "$venv/bin/python" "${args[@]}" >"$csv" 2>"$log" || rc=$?
        ;;
    esac
    rows=$(grep -cE '^[^,]+,[0-9]+,[^,]+,[0-9.]+,[0-9.]+$' "$csv" || true)
    if [[ $rows -ne $want || ($job != oshmem && $rc -ne 0) ]]; then
        echo "   $job $path, round $round: exit status $rc, $rows of $want rows; log tail:" >&2
        tail -n 5 "$log" | sed 's/^/      /' >&2
        problems+=("$job $path round $round: $rows of $want rows, exit status $rc ($log)")
    else
        echo "   $job $path, round $round: ok" >&2
    fi
}

if [[ $TABLE_ONLY == 1 ]]; then
    :
elif [[ $BUILD == 0 ]]; then
    have=()
    for impl in "${impls[@]}"; do
        if built "$impl"; then
            have+=("$impl")
        else
            echo "   python $impl: left out (no package in $(venv_of "$impl"))" >&2
        fi
    done
    if [[ ${#have[@]} -eq 0 ]]; then
        echo "python.sh: SKIPPED (no Python package built)" >&2
        exit 0
    fi
    impls=("${have[@]}")
else
    for impl in "${impls[@]}"; do
        build "$impl"
    done
fi
# numpy_of IMPL: the NumPy version in IMPL's environment.
numpy_of() {
    "$(venv_of "$1")/bin/python" -c 'import importlib.metadata as m; print(m.version("numpy"))' \
        2>/dev/null || echo unknown
}
numpys=()
for impl in "${impls[@]}"; do
    numpys+=("$impl: NumPy $(numpy_of "$impl")")
done
if [[ $(printf '%s\n' "${numpys[@]}" | sed 's/^[a-z]*: //' | sort -u | wc -l) -ne 1 ]]; then
    echo "python.sh: the environments' NumPy versions differ (${numpys[*]}); every package must" \
        "run on the same NumPy (see the header)" >&2
    exit 2
fi
jobs=("${impls[@]}")
[[ -x $rel/latency ]] && jobs+=(rust)
for ((round = 1; round <= ROUNDS && TABLE_ONLY != 1; round++)); do
    echo "== python.sh: round $round of $ROUNDS" >&2
    for path in "${paths[@]}"; do
        for ((k = 0; k < ${#jobs[@]}; k++)); do
            run "${jobs[(k + round - 1) % ${#jobs[@]}]}" "$path" "$round"
        done
    done
done

# The tables: per path and case, the best (lowest) over rounds of each job's median. This VM
# runs whole jobs at two speeds (in some rounds every call, NumPy's own slice assignment too,
# takes about 1.8x as long, for every package alike), so the rounds' median would compare a
# package's fast rounds with another's slow ones; each package's best round is its own speed.
python3 - "$results" "${paths[*]}" "${impls[@]}" <<'EOF' | tee "$results/table.md"
import glob, statistics, sys
results, paths, impls = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
med = {}
for path in glob.glob(f"{results}/*.csv"):
    job, where = path.split("/")[-1].split(".")[:2]
    for line in open(path):
        f = line.strip().split(",")
        if len(f) == 5 and f[1].isdigit() and f[0] != "case":
            med.setdefault((job, where, f[0], int(f[1])), []).append(float(f[3]))
def m(job, where, case, size):
    v = med.get((job, where, case, size))
    return min(v) if v else None
def fmt(ns):
    if ns is None:
        return "-"
    if ns >= 10000:
        return f"{ns / 1000:.1f} us"
    return f"{ns / 1000:.2f} us" if ns >= 1000 else f"{ns:.0f} ns"
def ratio(a, b):
    return f"{a / b:.3f}" if a is not None and b else "-"
names = {"rs": "shmem_rs", "ours": "shmem4py on ours", "oshmem": "shmem4py on oshmem"}
cases = [("put + quiet", 8, "put 8 B + quiet"), ("get", 8, "get 8 B"),
         ("p + quiet", 8, "p 8 B + quiet (shmem4py: put of 1 element)"),
         ("g", 8, "g 8 B (shmem4py: get of 1 element)"), ("fetch_add", 8, "atomic_fetch_add 8 B"),
         ("put + quiet", 1 << 20, "put 1 MiB + quiet"), ("get", 1 << 20, "get 1 MiB"),
         ("slice put + quiet", 64, "x[1, 0:16:2] = b + quiet (shmem4py: iput)"),
         ("slice get", 64, "b = x[1, 0:16:2] (shmem4py: iget)"),
         ("local slice assign", 64, "x.local[0:16:2] = b (NumPy, this PE)"),
         ("barrier_all", 0, "barrier_all"), ("sum_reduce", 8, "sum_reduce 8 B"),
         ("alltoall", 8, "alltoall 8 B per PE"), ("alltoall", 1 << 20, "alltoall 1 MiB per PE"),
         ("transpose", 1 << 20, "transpose of 512 x 512 float64 with alltoall (pack, alltoall, unpack), 1 MiB per PE")]
rust = {("put + quiet", 1 << 20): "put + quiet", ("get", 1 << 20): "get"}
for where in paths:
    print(f"\n**{where}**{' (UCX_TLS=tcp,self for every package)' if where == 'tcp' else ' (each package default path between 2 PEs of one node)'}\n")
    head = "| case | " + " | ".join(names.get(i, i) for i in impls)
    sep = "|---|" + "---:|" * len(impls)
    if "rs" in impls:
        others = [i for i in impls if i != "rs"]
        head += "".join(f" | shmem_rs / {names[i]}" for i in others) + " | Rust API | shmem_rs / Rust"
        sep += "---:|" * (len(others) + 2)
    print(head + " |")
    print(sep)
    for case, size, label in cases:
        vals = [m(i, where, case, size) for i in impls]
        cells = [fmt(v) for v in vals]
        if "rs" in impls:
            r = m("rs", where, case, size)
            cells += [ratio(r, m(i, where, case, size)) for i in impls if i != "rs"]
            rv = m("rust", where, rust[(case, size)], size) if (case, size) in rust else None
            cells += [fmt(rv), ratio(r, rv)]
        print(f"| {label} | " + " | ".join(cells) + " |")
    if "rs" in impls:
        a, b = m("rs", where, "slice put + quiet", 64), m("rs", where, "local slice assign", 64)
        c = m("rs", where, "slice get", 64)
        print(f"\nshmem_rs slice put / local NumPy assignment: {ratio(a, b)}; slice get / local NumPy assignment: {ratio(c, b)}.")
EOF
if [[ ${#problems[@]} -gt 0 ]]; then
    printf 'python.sh: %s\n' "${problems[@]}" >&2
    echo "python.sh: python.md in $RESULTS_DIR is left as it was" >&2
    exit 1
fi
{
    echo "PE 0 to PE 1 at 2 PEs (benches/python/ops.py): shmem_rs (this project's package, pip"
    echo "install ./shmem-py), shmem4py 1.0 built on this project's libshmem.so, and shmem4py 1.0"
    echo "built on Open MPI's oshmem, each with NumPy $(numpy_of "${impls[0]}") (the same in every environment); the"
    echo "Rust API's 1 MiB rows (latency --vec-mib) in the same rounds. The best of $ROUNDS rounds,"
    echo "the jobs alternating, of each job's median of $REPS loops x $ITERS calls (1 MiB:"
    echo "$BIG_ITERS; tcp: $UCX_ITERS and $UCX_BIG_ITERS); time per call. (This VM runs some whole jobs"
    echo "about 1.8x slower, every package and NumPy alike: the best round is each package's own"
    echo "speed; the raw rows of every round are in target/bench-results/python/.) Ratios below 1:"
    echo "shmem_rs is faster."
    cat "$results/table.md"
} >"$results/python.md"
results_write python.md benches/python.sh \
    "IMPLS=\"${impls[*]}\" PATHS=\"${paths[*]}\" ROUNDS=$ROUNDS ITERS=$ITERS BIG_ITERS=$BIG_ITERS REPS=$REPS UCX_ITERS=$UCX_ITERS UCX_BIG_ITERS=$UCX_BIG_ITERS" \
    "The time per call of OpenSHMEM operations from Python at 2 PEs on one node: shmem_rs against shmem4py on this project and on Open MPI's OpenSHMEM, direct and over tcp." \
    "$results/python.md"
