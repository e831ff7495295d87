# Runs the steps of a script in parallel lanes, for scripts whose steps each keep one core busy
# (scripts/miri.sh's test entries, scripts/fuzz.sh's targets). Sourced, not run.
#
#   run_lanes SETTING JOBS STOP FUNC COUNT
#
# Calls FUNC 0, FUNC 1, ... FUNC COUNT-1, JOBS calls at a time: each lane takes the next index
# not yet taken, so the lanes end together when the longest steps come first. With STOP=1 no
# lane takes another index once a call has failed (the calls already running finish). Returns 1
# when a call failed, 2 (saying so) when JOBS, read from the setting named SETTING, is not a
# positive number. FUNC's output is its own: a lane prints nothing.

run_lanes() {
    local setting=$1 jobs=$2 stop=$3 func=$4 count=$5 dir l pids=() status=0
    case "$jobs" in '' | *[!0-9]* | 0)
        echo "$setting must be a positive number, not '$jobs'" >&2
        return 2
        ;;
    esac
    dir=$(mktemp -d)
    echo 0 >"$dir/next"
    for ((l = 0; l < jobs; l++)); do
        (
            while :; do
                [ "$stop" != 1 ] || [ ! -e "$dir/failed" ] || exit 0
                i=$(
                    exec 9>"$dir/lock"
                    flock 9
                    n=$(cat "$dir/next")
                    echo $((n + 1)) >"$dir/next"
                    echo "$n"
                )
                [ "$i" -lt "$count" ] || exit 0
                "$func" "$i" || touch "$dir/failed"
            done
        ) &
        pids+=($!)
    done
    for l in "${pids[@]}"; do
        wait "$l" || status=1
    done
    [ ! -e "$dir/failed" ] || status=1
    rm -rf "$dir"
    return $status
}
