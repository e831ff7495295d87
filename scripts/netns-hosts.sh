#!/usr/bin/env bash
# Two "hosts" on one Linux machine, for testing `shmemrun --hosts` (needs root).
#
#   netns-hosts.sh up TAG          create (or re-create) the hosts of TAG; prints their addresses
#   netns-hosts.sh down TAG        kill what runs on them and delete them (no error if absent)
#   netns-hosts.sh exec HOST CMD.. run CMD on HOST the way ssh would (see below)
#   netns-hosts.sh enter HOST CMD.. exec CMD in HOST's network namespace (for the launcher itself,
#                                  `ip link`, ...)
#   netns-hosts.sh pids TAG        list the pids of every process on the hosts of TAG
#
# TAG is a number from 1 to 254. Host N (1 or 2) of TAG is the network namespace shmemh-TAG-N
# with the address 10.231.TAG.N/24 on a veth pair joining the two namespaces; nothing is added to
# the caller's namespace, so tags never collide on routes and any number can exist at once.
#
# Layout: the launcher runs inside host 1 (`enter 10.231.TAG.1 shmemrun ...`) and every PE,
# host 1's included, is started through the start-command template
#
#   shmemrun --hosts 10.231.TAG.1,10.231.TAG.2 --rsh "bash /abs/path/netns-hosts.sh exec {host}" ...
#
# so the automatic rendezvous address works: seen from host 1, the kernel's source address
# towards either host is 10.231.TAG.1, where the launcher listens.
#
# Why `exec` is more than `ip netns exec`: network namespaces share the kernel's boot id
# (/proc/sys/kernel/random/boot_id), which UCX uses as its system id, so UCX would treat both
# namespaces as one node and use shared memory between them. `exec` bind-mounts a boot id made
# for that host over the file, in a private mount namespace, so UCX sees two nodes and talks TCP
# between them. Like ssh, `exec` runs CMD as a child and exits with its status (a signal that
# killed CMD is re-raised); killing the `exec` process does not kill CMD, which is what makes the
# simulation honest about remote processes: only their own watchdog ends them.
set -euo pipefail

STATE=/run/shmem-netns-hosts

die() {
    echo "netns-hosts: $*" >&2
    exit 255
}

check_tag() {
    [[ $1 =~ ^[0-9]+$ ]] && (($1 >= 1 && $1 <= 254)) ||
        die "TAG must be a number from 1 to 254, got '$1'"
}

ns_name() { echo "shmemh-$1-$2"; }

ns_exists() { [[ -e /run/netns/$1 ]]; }

# HOST (10.231.TAG.N) -> the globals TAG, N and NS (checked to exist), or an error naming it.
parse_host() {
    local host=$1
    [[ $host =~ ^10\.231\.([0-9]+)\.([12])$ ]] ||
        die "unknown host '$host' (hosts are 10.231.TAG.1 and 10.231.TAG.2)"
    TAG=${BASH_REMATCH[1]}
    N=${BASH_REMATCH[2]}
    NS=$(ns_name "$TAG" "$N")
    ns_exists "$NS" || die "host $host does not exist (no namespace $NS; run: $0 up $TAG)"
}

cmd_down() {
    local tag=$1 n ns pid
    check_tag "$tag"
    for n in 1 2; do
        ns=$(ns_name "$tag" "$n")
        if ns_exists "$ns"; then
            for pid in $(ip netns pids "$ns" 2>/dev/null); do
                kill -KILL "$pid" 2>/dev/null || true
            done
            ip netns delete "$ns" 2>/dev/null || true
        fi
    done
    rm -rf "${STATE:?}/$tag"
}

cmd_up() {
    local tag=$1 n ns
    check_tag "$tag"
    # Idempotent: whatever a killed run left behind goes first.
    cmd_down "$tag"
    mkdir -p "$STATE/$tag"
    for n in 1 2; do
        ns=$(ns_name "$tag" "$n")
        ip netns add "$ns" || die "cannot create network namespace $ns (are you root?)"
        ip -n "$ns" link set lo up
        cat /proc/sys/kernel/random/uuid >"$STATE/$tag/boot_id.$n"
    done
    ip -n "$(ns_name "$tag" 1)" link add veth0 type veth peer name veth0 netns "$(ns_name "$tag" 2)"
    for n in 1 2; do
        ns=$(ns_name "$tag" "$n")
        ip -n "$ns" addr add "10.231.$tag.$n/24" dev veth0
        ip -n "$ns" link set veth0 up
    done
    # UCX lists the usable interfaces once, at start: wait until both ends carry traffic.
    local tries
    for n in 1 2; do
        ns=$(ns_name "$tag" "$n")
        tries=0
        until [[ $(ip -n "$ns" -o link show veth0) == *"state UP"* ]]; do
            ((++tries < 200)) || die "veth0 in $ns did not come up"
            sleep 0.02
        done
    done
    echo "10.231.$tag.1 10.231.$tag.2"
}

cmd_exec() {
    local host=$1
    shift
    parse_host "$host"
    local boot_id=$STATE/$TAG/boot_id.$N
    [[ -f $boot_id ]] || die "host $host has no boot id file $boot_id (run: $0 up $TAG)"
    # `ip netns exec` and `unshare` exec (same pid); the shell stays as the parent, like sshd,
    # and mirrors the child's status (a status above 128 is taken for a signal and re-raised).
    # The bind mount lives only in the new mount namespace.
    exec ip netns exec "$NS" unshare --mount --propagation private sh -c '
        mount --bind "$0" /proc/sys/kernel/random/boot_id || exit 255
        "$@"
        s=$?
        if [ "$s" -gt 128 ] && [ "$s" -lt 160 ]; then
            trap - INT QUIT TERM
            kill -s "$((s - 128))" "$$"
        fi
        exit "$s"' "$boot_id" "$@"
}

cmd_enter() {
    parse_host "$1"
    shift
    exec ip netns exec "$NS" "$@"
}

cmd_pids() {
    local tag=$1 n ns
    check_tag "$tag"
    for n in 1 2; do
        ns=$(ns_name "$tag" "$n")
        if ns_exists "$ns"; then
            ip netns pids "$ns"
        fi
    done
}

case "${1:-}" in
up | down | pids)
    (($# == 2)) || die "usage: $0 $1 TAG"
    "cmd_$1" "$2"
    ;;
exec | enter)
    (($# >= 3)) || die "usage: $0 $1 HOST CMD..."
    sub=$1
    shift
    "cmd_$sub" "$@"
    ;;
*)
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
