#!/usr/bin/env bash
# Runs the README's first programs in C and Python as a reader would (its Rust program is a
# doctest of shmem-guide, run by `cargo test`): the ```c block is built with
# target/release/oshcc and run with oshrun at 1, 3 and 4 PEs; the ```python block runs at 1, 3
# and 4 PEs under the shmemrun of the environment where scripts/python.sh installed the package
# with the README's `pip install ./shmem-py` (PY_VENV, default target/python/venv). Each program
# checks its own result and exits non-zero when it is wrong. Needs `cargo build --release` and
# scripts/python.sh first; exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=${PY_VENV:-$root/target/python/venv}
bin=$root/target/release
work=$root/target/readme-programs
rm -rf "$work"
mkdir -p "$work"

# block LANG: the first ```LANG block of the README, as the page shows it.
block() {
    awk -v lang="$1" '$0 == "```" lang { on = 1; next } on && /^```$/ { exit } on' README.md
}

block c >"$work/ring.c"
block python >"$work/ring.py"
for f in ring.c ring.py; do
    [ -s "$work/$f" ] || { echo "readme-programs: no $f block in README.md" >&2; exit 1; }
done

"$bin/oshcc" -O2 -Wall -o "$work/ring" "$work/ring.c"
for n in 1 3 4; do
    out=$(cd "$work" && timeout 120 "$bin/oshrun" -np "$n" ./ring)
    [ "$(grep -c '^PE .* got ' <<<"$out")" -eq "$n" ] || {
        echo "readme-programs: the C program on $n PEs printed:" >&2
        echo "$out" >&2
        exit 1
    }
done
echo "readme-programs: the README's C program ran at 1, 3 and 4 PEs"

if [ ! -x "$venv/bin/shmemrun" ]; then
    echo "readme-programs: no shmem_rs environment at $venv (run scripts/python.sh first)" >&2
    exit 1
fi
for n in 1 3 4; do
    (cd "$work" && PATH=$venv/bin:$PATH timeout 120 shmemrun -n "$n" python ring.py)
done
echo "readme-programs: the README's Python program ran at 1, 3 and 4 PEs"
