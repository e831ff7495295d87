#!/usr/bin/env bash
# Same-run comparison of this tree against an earlier commit, for changes that must not cost
# speed (a restructuring, a refactor): the direct path's single-operation rows of `latency`
# (8 B put/get, p/g, the atomics, heap and static, 2 PEs on one node), and the release machine
# code of the operations.
#
# It builds BASE (a git revision) in a worktree under target/compare-revs/ and this tree as it
# is, then runs the two `latency` binaries alternately, ABBA round by round, under one
# `shmemrun`, so that the machine's slow and fast spells hit both alike. Per row it prints the
# median of each build's medians, the median of the per-round ratios (this tree / BASE; below
# 1.0 is faster), in how many rounds this tree was faster, and each build's best loop (the
# fastest loop of any round: on this VM it moves in steps of one cycle, about 0.3 ns). Then
# benches/asm-compare.py compares the release machine code of the operations in the two
# `latency` binaries, with field offsets normalized (struct layouts may differ).
#
# Code placement moves these rows by a cycle or two (a loop or a small function that straddles
# a 32- or 64-byte boundary), and any change moves code: ALIGN=1 builds both sides with every
# function and every block that is not fallen into aligned to 64 bytes (LLVM's
# -align-all-functions=6 -align-all-nofallthru-blocks=6, into target/compare-revs/aligned-*),
# which takes placement out of the comparison.
#
# Usage: benches/compare-revs.sh BASE [ROUNDS]     (default 20 rounds; about 2 s a round)
# Knobs: ITERS=20000 REPS=15 (per timed loop and loops per job, as benches/run.sh); ALIGN=1.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: benches/compare-revs.sh BASE [ROUNDS]}
rounds=${2:-20}
iters=${ITERS:-20000}
reps=${REPS:-15}
rev=$(git rev-parse --verify "$base^{commit}")
work=target/compare-revs
mkdir -p "$work"
if [ ! -d "$work/src" ]; then
    git worktree prune
    git worktree add --detach "$work/src" "$rev" >/dev/null
else
    git -C "$work/src" checkout --detach --quiet "$rev"
fi
old_dir=$PWD/$work/target
new_dir=$PWD/target
if [ "${ALIGN:-0}" = 1 ]; then
    export RUSTFLAGS="${RUSTFLAGS:-} -C llvm-args=-align-all-functions=6 -C llvm-args=-align-all-nofallthru-blocks=6"
    old_dir=$PWD/$work/aligned-base
    new_dir=$PWD/$work/aligned-new
fi
echo "compare-revs: building BASE $(git rev-parse --short "$rev") and this tree (release)" >&2
(cd "$work/src" && CARGO_TARGET_DIR="$old_dir" cargo build --release --quiet \
    -p shmem-benches --bin latency)
CARGO_TARGET_DIR="$new_dir" cargo build --release --quiet -p shmem-benches --bin latency
# The launcher is the same for both sides: this tree's, built as usual.
env -u RUSTFLAGS cargo build --release --quiet -p shmem-run
old=$old_dir/release/latency
new=$new_dir/release/latency
run=target/release/shmemrun
csv=$work/rounds.csv
: >"$csv"
for r in $(seq 1 "$rounds"); do
    if ((r % 2)); then order="base new"; else order="new base"; fi
    for b in $order; do
        bin=$old
        [ "$b" = new ] && bin=$new
        "$run" -n 2 "$bin" --iters "$iters" --reps "$reps" --csv 2>/dev/null |
            awk -F, -v r="$r" -v b="$b" 'NR > 1 && $2 == 8 && ($3 == "heap" || $3 == "static" ||
                $3 == "aligned") && $1 !~ /ping-pong|stream|broadcast|reduce|fcollect|alltoall/ {
                print r "," b "," $0 }' >>"$csv"
    done
done
echo "compare-revs: $rounds rounds of each, $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes') against $(git rev-parse --short "$rev")$([ "${ALIGN:-0}" = 1 ] && echo ', code aligned to 64 B') (raw: $csv)"
awk -F, '
    { key = $3 " | " $5; if (!(key in seen)) { seen[key] = ++n; name[n] = key }
      med[key, $2, $1] = $6; if (!((key, $2) in best) || $7 < best[key, $2]) best[key, $2] = $7
      rounds[$1] = 1 }
    function median(a, k,    i, j, t) {
        for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
    END {
        printf "%-26s %9s %9s %14s %8s %9s %9s\n", "case | variant", "base med", "new med",
            "ratio (rounds)", "faster", "base best", "new best"
        for (i = 1; i <= n; i++) {
            key = name[i]; kb = kn = kr = fast = 0
            for (r in rounds) if ((key, "base", r) in med && (key, "new", r) in med) {
                b[++kb] = med[key, "base", r]; m[++kn] = med[key, "new", r]
                q[++kr] = med[key, "new", r] / med[key, "base", r]; fast += q[kr] < 1 }
            printf "%-26s %9.2f %9.2f %14.3f %4d/%-3d %9.2f %9.2f\n", key, median(b, kb),
                median(m, kn), median(q, kr), fast, kr, best[key, "base"], best[key, "new"]
        }
    }' "$csv"
python3 benches/asm-compare.py --offsets "$old" "$new" \
    SymmetricArray::put SymmetricArray::g SymmetricArray::p SymmetricArray::local_get \
    iput_via iget_via rma_ucx get_elems_ucx put_elems_ucx ucx_amo amo_on store_flag ||
    echo "compare-revs: the machine code differs beyond field offsets (see above; --diff shows it)"
