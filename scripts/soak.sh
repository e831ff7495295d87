#!/usr/bin/env bash
# Soak: runs benches/src/bin/soak.rs (every family of operations in a loop, every result checked)
# at 4 PEs on both paths (direct, and UCX_TLS=tcp,self), side by side, for MINUTES minutes each
# (default 60), and checks each PE's final line: descriptors, heap free space and ranges, teams
# and contexts back at their values after the first round, private RSS within the slack.
#
#   bash scripts/soak.sh [MINUTES]          (CI: bash scripts/soak.sh 5)
#
# Environment: SOAK_NP (default 4), SOAK_REPORT (seconds between reports, default 60),
# SOAK_NICE (nice level, default 0). Logs: target/soak/{direct,tcp}.log. Exits non-zero when a
# job fails or a PE reports a leak.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-60}
np=${SOAK_NP:-4}
every=${SOAK_REPORT:-60}
nice_level=${SOAK_NICE:-0}
# The workspace's features, as `cargo build --release` resolves them (a subset, `-p`, builds
# the runtime again with others).
cargo build --release -q --workspace --bin shmemrun --bin soak
out=target/soak
mkdir -p "$out"
limit=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 + 300 }')
run() {
    local name=$1
    shift
    env "$@" timeout -k 10 "$limit" nice -n "$nice_level" target/release/shmemrun -n "$np" \
        target/release/soak --minutes "$minutes" --report "$every" >"$out/$name.log" 2>&1
}
run direct SHMEM_SOAK_PATH=direct &
direct=$!
run tcp UCX_TLS=tcp,self &
tcp=$!
status=0
wait "$direct" || status=1
wait "$tcp" || status=1
for name in direct tcp; do
    ends=$(grep -c '^SOAK-END .* ok ' "$out/$name.log" || true)
    echo "soak $name: $ends of $np PEs ok after $minutes min (log $out/$name.log)"
    grep -E '^SOAK pe=0 ' "$out/$name.log" | sed 's/^/    /' | tail -n 3
    grep -E '^SOAK-END ' "$out/$name.log" | sed -E 's/ start=.*//; s/^/    /'
    [ "$ends" = "$np" ] || { status=1; tail -n 20 "$out/$name.log" | sed 's/^/    ! /'; }
done
exit $status
