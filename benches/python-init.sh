#!/usr/bin/env bash
# The cost of starting the runtime from Python against Rust, at 1, 8 and 32 PEs on this node:
#   python  `from shmem_rs import shmem` (loads the extension module and its libraries, starts
#           the runtime), timed inside the program after NumPy is imported
#           (benches/python/init_cost.py);
#   rust    from just before the exec of a Rust program to the end of its `shmem_core::init()`
#           (loader, UCX's and PMIx's constructors, init: benches/src/bin/init_cost.rs), and
#           `init()` alone.
# Every PE of a job waits for a common start time first (START_AT), so that the slow start of
# Python interpreters is not counted as the runtime's. Rounds alternate the two. The table: per
# PE count, the median over rounds of the median (and of the maximum) over the PEs, and the ratio.
# It also gives the number of Python objects the import leaves (the package keeps none per peer).
#
#   bash benches/python-init.sh
#
# Knobs: NPES="1 8 32" ROUNDS=15 JOB_TIMEOUT=120; VENV=target/python/venv (the package, which
# scripts/python.sh and benches/python.sh install; built here when missing). TINY=1: NPES="1 3" ROUNDS=1. Writes
# python-init.md to the results directory (benches/results/; TINY=1: target/bench-results/).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=benches/results-lib.sh
source "$root/benches/results-lib.sh"
results_init
cd "$root"
if [[ ${TINY:-0} == 1 ]]; then
    NPES=${NPES:-1 3}
    ROUNDS=${ROUNDS:-1}
fi
read -r -a npes <<<"${NPES:-1 8 32}"
ROUNDS=${ROUNDS:-15}
JOB_TIMEOUT=${JOB_TIMEOUT:-120}
venv=${VENV:-$root/target/python/venv}
rel=$root/target/release
raw=$root/target/bench-results/python-init
rm -rf "$raw"
mkdir -p "$raw"
[[ -x $rel/init_cost && -x $rel/shmemrun ]] || {
    echo "python-init.sh: build first: cargo build --release" >&2
    exit 2
}
if ! "$venv/bin/python" -c 'import shmem_rs' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check ./shmem-py
fi
problems=()
for ((round = 1; round <= ROUNDS; round++)); do
    for n in "${npes[@]}"; do
        order=(rust python)
        ((round % 2)) || order=(python rust)
        for job in "${order[@]}"; do
            # Long enough for every interpreter of the job to have started (2 cores).
            delay=$((2 + n / 4))
            out=$raw/$job.$n.$round.csv
            at=$(date -d "+$delay sec" +%s.%N)
            rc=0
            if [[ $job == rust ]]; then
                START_AT=$at timeout -k 5 "$JOB_TIMEOUT" "$rel/shmemrun" -n "$n" \
                    "$rel/init_cost" >"$out" 2>"$out.log" || rc=$?
            else
                START_AT=$at timeout -k 5 "$JOB_TIMEOUT" "$rel/shmemrun" -n "$n" \
                    "$venv/bin/python" benches/python/init_cost.py >"$out" 2>"$out.log" || rc=$?
            fi
            rows=$(grep -c '^init_ns,' "$out" || true)
            if [[ $rc -ne 0 || $rows -ne $n ]]; then
                problems+=("$job at $n PEs, round $round: exit status $rc, $rows of $n rows ($out.log)")
            fi
        done
    done
    echo "== python-init.sh: round $round of $ROUNDS done" >&2
done
if [[ ${#problems[@]} -gt 0 ]]; then
    printf 'python-init.sh: %s\n' "${problems[@]}" >&2
    exit 1
fi
python3 - "$raw" "${npes[@]}" <<'EOF' | tee "$raw/table.md"
import glob, statistics, sys
raw, npes = sys.argv[1], [int(n) for n in sys.argv[2:]]
def per_round(job, n, name):
    meds, maxs = [], []
    for path in glob.glob(f"{raw}/{job}.{n}.*.csv"):
        v = [int(l.split(",")[2]) for l in open(path) if l.startswith(name + ",")]
        if v:
            meds.append(statistics.median(v))
            maxs.append(max(v))
    return (statistics.median(meds), statistics.median(maxs)) if meds else (None, None)
def paired(n, py_name, rust_name):
    # The rounds alternate the two jobs, so a round's Python and Rust jobs ran side by side:
    # the median over rounds of each round's ratio is not moved by the machine's slow periods
    # (which shift both jobs of a round together) as the ratio of the two medians can be.
    ratios = []
    for path in glob.glob(f"{raw}/python.{n}.*.csv"):
        rust = path.replace("/python.", "/rust.")
        pv = [int(l.split(",")[2]) for l in open(path) if l.startswith(py_name + ",")]
        try:
            rv = [int(l.split(",")[2]) for l in open(rust) if l.startswith(rust_name + ",")]
        except FileNotFoundError:
            continue
        if pv and rv:
            ratios.append(statistics.median(pv) / statistics.median(rv))
    return f"{statistics.median(ratios):.3f}" if ratios else "-"
def objects(n):
    v = [int(l.split(",")[2]) for p in glob.glob(f"{raw}/python.{n}.*.csv") for l in open(p)
         if l.startswith("objects,")]
    return max(v) if v else None
ms = lambda ns: "-" if ns is None else f"{ns / 1e6:.2f}"
print("| PEs | Python: imports + init, ms (median / max over PEs) | Rust: exec + init, ms | Python / Rust | paired | Python: init() alone, ms | Rust: init() alone, ms | Python / Rust | CPU per PE, Python / Rust, ms | CPU, paired | of which init(), Python / Rust, ms | Python objects left |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
def ratio(a, b):
    return f"{a / b:.3f}" if a and b else "-"
for n in npes:
    p, r = per_round("python", n, "init_ns"), per_round("rust", n, "exec_init_ns")
    pi, ri = per_round("python", n, "init_only_ns"), per_round("rust", n, "init_ns")
    pc, rc = per_round("python", n, "cpu_ns"), per_round("rust", n, "exec_init_cpu_ns")
    pic, ric = per_round("python", n, "init_only_cpu_ns"), per_round("rust", n, "init_cpu_ns")
    wall, cpu = paired(n, "init_ns", "exec_init_ns"), paired(n, "cpu_ns", "exec_init_cpu_ns")
    print(f"| {n} | {ms(p[0])} / {ms(p[1])} | {ms(r[0])} / {ms(r[1])} | {ratio(p[0], r[0])} | {wall} | {ms(pi[0])} / {ms(pi[1])} | {ms(ri[0])} / {ms(ri[1])} | {ratio(pi[0], ri[0])} | {ms(pc[0])} / {ms(rc[0])} | {cpu} | {ms(pic[0])} / {ms(ric[0])} | {objects(n)} |")
EOF
{
    echo "Python: \`import shmem_rs\` (the extension and UCX's and PMIx's libraries), \`init()\` and"
    echo "\`from shmem_rs import shmem\` on each PE, after NumPy is imported, and \`init()\` alone;"
    echo "Rust: from just before the exec of benches/src/bin/init_cost.rs to the end of its"
    echo "\`init()\` (what a Rust program pays to load the same libraries and start), and \`init()\`"
    echo "alone. Every PE of a job waits for a common start time first. Median over $ROUNDS rounds,"
    echo "the two alternating, of the median (and maximum) over the job's PEs. \"Python / Rust\" is"
    echo "the ratio of those two medians; \"paired\" is the median over rounds of each round's own"
    echo "ratio (a round's two jobs ran one after the other, so a slow period of the machine moves"
    echo "both), for the wall time and for the CPU time per PE."
    echo
    cat "$raw/table.md"
} >"$raw/python-init.md"
results_write python-init.md benches/python-init.sh "NPES=\"${npes[*]}\" ROUNDS=$ROUNDS" \
    "The cost of starting the runtime from Python (import and init) against Rust (exec and init), at several PE counts on one node." \
    "$raw/python-init.md"
