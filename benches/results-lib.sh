# Shared by the benchmark scripts (sourced, not run): where their user-facing result files go and
# how each file begins.
#
# The result files (Markdown tables and plots) go to
#   RESULTS_DIR               when set (relative to the directory the script was started from);
#   target/bench-results/     with TINY=1 (CI's quick runs: never into benches/results/);
#   benches/results/          otherwise: the files the guide (docs/src/performance.md) includes
#                             and benches/headline.sh reads.
# Each Markdown file starts with an HTML comment naming the script, the date, the commit, the
# machine and the knobs, then a sentence of what it measures; a rerun replaces the whole file.
#
# Usage, near the top of a script (before it changes directory):
#   source "$(dirname "${BASH_SOURCE[0]}")/results-lib.sh"
#   results_init          # resolves and exports RESULTS_DIR, so that child scripts agree
#   ...
#   results_write latency.md benches/run.sh "ROUNDS=3 ..." "One sentence." BODY_FILE
#   results_copy "$raw/latency.png" latency.png

# bench_build [CARGO ARGS...]: `cargo build --release --workspace` with the arguments (`--bin X`,
# `--features shmem-benches/plot`), its output on stderr. The whole workspace, as the README's
# `cargo build --release` builds it: a subset (`-p`) resolves other features for the shared
# dependencies and builds the runtime again (a minute or more each time, three times in CI's
# tiny run).
bench_build() {
    cargo build --release --workspace "$@" >&2
}

# The repository root.
results_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# results_init: sets RESULTS_DIR to the absolute directory of this run's result files and
# exports it (a child script started by this one writes to the same place).
results_init() {
    local dir
    if [[ -n ${RESULTS_DIR:-} ]]; then
        dir=$RESULTS_DIR
    elif [[ ${TINY:-0} == 1 ]]; then
        dir=$results_root/target/bench-results
    else
        dir=$results_root/benches/results
    fi
    RESULTS_DIR=$(realpath -m -- "$dir")
    export RESULTS_DIR
}

# results_machine: "N cores, CPU MODEL" of this machine.
results_machine() {
    local model
    model=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
    [[ -n $model ]] || model="$(uname -m), CPU model unknown"
    echo "$(nproc) cores, $model"
}

# results_commit: the commit of the tree the benchmarks were built from, with "+ changes" when
# files other than the result files and README.md differ from it.
results_commit() {
    local rev
    rev=$(git -C "$results_root" rev-parse --short=12 HEAD 2>/dev/null) || {
        echo "unknown"
        return
    }
    if [[ -n $(git -C "$results_root" status --porcelain --untracked-files=no -- . \
        ':!benches/results' ':!README.md' 2>/dev/null) ]]; then
        rev="$rev + uncommitted changes"
    fi
    echo "$rev"
}

# results_write NAME SCRIPT KNOBS SENTENCE BODY: writes RESULTS_DIR/NAME: the header comment
# (SCRIPT, today's date, the commit, the machine, KNOBS), SENTENCE, then the file BODY. The file
# is replaced in one step (written beside it, then renamed).
results_write() {
    local name=$1 script=$2 knobs=$3 sentence=$4 body=$5 tmp
    mkdir -p "$RESULTS_DIR"
    tmp=$(mktemp "$RESULTS_DIR/.$name.XXXXXX")
    chmod 0644 "$tmp" # mktemp makes it private; a result file is for everyone to read
    {
        echo "<!-- Written by $script on $(date -u +%F) from commit $(results_commit)."
        echo "     Machine: $(results_machine)."
        echo "Knobs: $knobs." | fold -s -w 92 | sed 's/^/     /; s/[[:space:]]*$//'
        echo "     A rerun of the script replaces this file: do not edit it by hand. -->"
        echo
        echo "$sentence"
        echo
        cat "$body"
    } >"$tmp"
    mv -f "$tmp" "$RESULTS_DIR/$name"
    echo "${0##*/}: wrote $RESULTS_DIR/$name" >&2
}

# results_copy FILE NAME: copies FILE (a plot) to RESULTS_DIR/NAME, unless it is that file.
results_copy() {
    local src=$1 name=$2
    mkdir -p "$RESULTS_DIR"
    if [[ $(realpath -m -- "$src") != "$RESULTS_DIR/$name" ]]; then
        cp -f -- "$src" "$RESULTS_DIR/.$name.tmp"
        mv -f "$RESULTS_DIR/.$name.tmp" "$RESULTS_DIR/$name"
    fi
    echo "${0##*/}: wrote $RESULTS_DIR/$name" >&2
}

# results_dsl_table TXT: the Markdown table of a dsl_overhead run's output (TXT: its stdout; a
# header line, then per case a name and four figures: shmem! ns, call ns, ratio, min ratio).
results_dsl_table() {
    awk 'NR == 1 { print "| case | shmem! ns | call ns | ratio | min ratio |"; print "|---|---:|---:|---:|---:|"; next }
        NF >= 5 { name = $1; for (i = 2; i <= NF - 4; i++) name = name " " $i
                  printf "| %s | %s | %s | %s | %s |\n", name, $(NF - 3), $(NF - 2), $(NF - 1), $NF }' "$1"
}
