#!/usr/bin/env bash
# N "hosts" on one Linux machine, for testing `shmemrun --hosts` (needs root).
#
#   netns-hosts.sh up TAG [N]      create (or re-create) the N hosts of TAG (2 to 32, default 2);
#                                  prints their addresses, space separated
#   netns-hosts.sh down TAG        kill what runs on them and delete them (no error if absent)
#   netns-hosts.sh exec HOST CMD.. run CMD on HOST the way ssh would (see below)
#   netns-hosts.sh enter HOST CMD.. exec CMD in HOST's network namespace (for the launcher itself,
#                                  `ip link`, ...)
#   netns-hosts.sh pids TAG        list the pids of every process on the hosts of TAG
#
# TAG is a number from 1 to 254. Host I (1 to N) of TAG is the network namespace shmemh-TAG-I
# with the address 10.231.TAG.I/24 on its interface veth0; the other end of each veth0 (hI) is a
# port of the bridge br0 in one more namespace, shmemh-TAG-br, which joins the hosts of TAG like
# a switch. Nothing is added to the caller's namespace, so tags never collide on routes and any
# number can exist at once. N is kept in /run/shmem-netns-hosts/TAG/hosts; `down` and `pids`
# cover every namespace of TAG, and `down` also removes the two hosts joined by one veth pair
# (no bridge) that earlier versions of this script made.
#
# Layout: the launcher runs inside host 1 (`enter 10.231.TAG.1 shmemrun ...`) and every PE,
# host 1's included, is started through the start-command template
#
#   shmemrun --hosts 10.231.TAG.1,10.231.TAG.2,... --rsh "bash /abs/path/netns-hosts.sh exec {host}" ...
#
# so the automatic rendezvous address works: seen from host 1, the kernel's source address
# towards any host is 10.231.TAG.1, where the launcher listens.
#
# Why `exec` is more than `ip netns exec`: network namespaces share the kernel's boot id
# (/proc/sys/kernel/random/boot_id), which UCX uses as its system id, so UCX would treat all the
# namespaces as one node and use shared memory between them. `exec` bind-mounts a boot id made
# for that host over the file, in a private mount namespace, so UCX sees separate nodes and
# talks TCP between them. Like ssh, `exec` runs CMD as a child and exits with its status (a
# signal that killed CMD is re-raised); killing the `exec` process does not kill CMD, which is
# what makes the simulation honest about remote processes: only their own watchdog ends them.
set -euo pipefail

STATE=/run/shmem-netns-hosts
MAX_HOSTS=32

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

# The namespaces of TAG that exist: its hosts, its bridge, and any left by earlier versions.
tag_namespaces() {
    local ns
    for ns in /run/netns/shmemh-"$1"-*; do
        [[ -e $ns && ${ns##*/} =~ ^shmemh-$1-([0-9]+|br)$ ]] && echo "${ns##*/}"
    done
    return 0
}

# The number of hosts of TAG (0 when it has none).
host_count() {
    local f=$STATE/$1/hosts
    if [[ -f $f ]]; then
        cat "$f"
    elif [[ -f $STATE/$1/boot_id.1 ]]; then
        echo 2 # made by an earlier version, which kept no count
    else
        echo 0
    fi
}

# HOST (10.231.TAG.I) -> the globals TAG, N (= I) and NS (checked to exist), or an error naming it.
parse_host() {
    local host=$1 count
    [[ $host =~ ^10\.231\.([0-9]+)\.([0-9]+)$ ]] ||
        die "unknown host '$host' (hosts are 10.231.TAG.I for I from 1 to the tag's host count)"
    TAG=${BASH_REMATCH[1]}
    N=${BASH_REMATCH[2]}
    count=$(host_count "$TAG")
    if ((count > 0)) && ((N < 1 || N > count)); then
        die "unknown host '$host' (tag $TAG has the hosts 10.231.$TAG.1 to 10.231.$TAG.$count)"
    fi
    NS=$(ns_name "$TAG" "$N")
    ns_exists "$NS" || die "host $host does not exist (no namespace $NS; run: $0 up $TAG)"
}

cmd_down() {
    local tag=$1 ns pid namespaces
    check_tag "$tag"
    namespaces=$(tag_namespaces "$tag")
    # Every process first, then the namespaces (deleting a host's takes its veth pair along).
    for ns in $namespaces; do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do
            kill -KILL "$pid" 2>/dev/null || true
        done
    done
    for ns in $namespaces; do
        ip netns delete "$ns" 2>/dev/null || true
    done
    rm -rf "${STATE:?}/$tag"
}

# wait_link NS DEV WHAT: waits until `ip -d link show DEV` in NS contains WHAT.
wait_link() {
    local tries=0
    until [[ $(ip -n "$1" -d -o link show "$2") == *"$3"* ]]; do
        ((++tries < 250)) || die "$2 in $1 did not get to '$3'"
        sleep 0.02
    done
}

cmd_up() {
    local tag=$1 count=$2 i ns br addrs=()
    check_tag "$tag"
    [[ $count =~ ^[0-9]+$ ]] && ((count >= 2 && count <= MAX_HOSTS)) ||
        die "the number of hosts must be from 2 to $MAX_HOSTS, got '$count'"
    # Idempotent: whatever a killed run left behind goes first.
    cmd_down "$tag"
    mkdir -p "$STATE/$tag"
    br=$(ns_name "$tag" br)
    ip netns add "$br" || die "cannot create network namespace $br (are you root?)"
    # No spanning tree and no forward delay: a port forwards as soon as its link is up. The
    # bridge lives in a namespace of its own, where no iptables rule (br_netfilter) can apply.
    ip -n "$br" link add br0 type bridge stp_state 0 forward_delay 0
    ip -n "$br" link set br0 up
    # Were br_netfilter loaded, bridged packets would go through this namespace's (empty)
    # iptables: nothing to block, but nothing to gain either; switch it off where it exists.
    ip netns exec "$br" sh -c 'for f in /proc/sys/net/bridge/bridge-nf-call-*; do
        [ -w "$f" ] && echo 0 >"$f"; done; true'
    for ((i = 1; i <= count; i++)); do
        ns=$(ns_name "$tag" "$i")
        ip netns add "$ns" || die "cannot create network namespace $ns (are you root?)"
        ip -n "$ns" link set lo up
        cat /proc/sys/kernel/random/uuid >"$STATE/$tag/boot_id.$i"
        ip -n "$ns" link add veth0 type veth peer name "h$i" netns "$br"
        ip -n "$br" link set "h$i" master br0
        ip -n "$br" link set "h$i" up
        ip -n "$ns" addr add "10.231.$tag.$i/24" dev veth0
        ip -n "$ns" link set veth0 up
        addrs+=("10.231.$tag.$i")
    done
    echo "$count" >"$STATE/$tag/hosts"
    # UCX lists the usable interfaces once, at start: wait until every link carries traffic.
    wait_link "$br" br0 "state UP"
    for ((i = 1; i <= count; i++)); do
        wait_link "$(ns_name "$tag" "$i")" veth0 "state UP"
        wait_link "$br" "h$i" "state UP"
        wait_link "$br" "h$i" "bridge_slave state forwarding"
    done
    echo "${addrs[*]}"
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
    local tag=$1 ns
    check_tag "$tag"
    for ns in $(tag_namespaces "$tag"); do
        ip netns pids "$ns" 2>/dev/null || true
    done
}

case "${1:-}" in
up)
    (($# == 2 || $# == 3)) || die "usage: $0 up TAG [N]"
    cmd_up "$2" "${3:-2}"
    ;;
down | pids)
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
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
