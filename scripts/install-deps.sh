#!/usr/bin/env bash
# Installs the system packages shmem-rs needs to build and run on Debian/Ubuntu: UCX (the transport,
# with its headers for bindgen), the PMIx client library (start-up under PMIx launchers, with its
# headers for bindgen), pkg-config (to find both), libclang (for bindgen), and for the tests Open
# MPI's launcher (openmpi-bin: mpirun) and iproute2 (ip netns), and for the benchmarks UCX's
# ucx_perftest (ucx-utils), and C and C++ compilers for the C API (gcc, g++). Skips the install
# when everything is already there.
set -euo pipefail

need=()
pkg-config --exists 'ucx >= 1.12' 2>/dev/null || need+=(libucx-dev pkg-config)
pkg-config --exists 'pmix >= 4.2' 2>/dev/null || need+=(libpmix-dev pkg-config)
# The tests start jobs with Open MPI's mpirun (PMIx start-up) and make hosts out of network
# namespaces (ip netns).
command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
# The C API's tests compile C and C++ programs with shmemcc/shmemc++, which call cc and c++.
command -v cc >/dev/null 2>&1 || need+=(gcc)
command -v c++ >/dev/null 2>&1 || need+=(g++)
# benches/hosts.sh (part of benches/run.sh) measures UCX's own ucx_perftest as its reference.
command -v ucx_perftest >/dev/null 2>&1 || need+=(ucx-utils)
# libclang itself (libclang.so, libclang-14.so.1, ...), not libclang-cpp, which bindgen cannot use.
ldconfig -p 2>/dev/null | grep -Eq 'libclang(-[0-9.]+)?\.so' || need+=(libclang-dev)
if [ ${#need[@]} -eq 0 ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "install-deps: please install UCX >= 1.12 and PMIx >= 4.2 (with headers), pkg-config and libclang" >&2
    exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
echo "install-deps: installed ${need[*]}"
