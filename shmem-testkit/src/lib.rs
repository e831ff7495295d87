//! The test harness of shmem-rs (for dev-dependencies only).
//!
//! **Multi-PE tests** (feature `world`). A test calls `multi_pe` with its own name and a body.
//! Run normally, the test launches its own test binary under `shmemrun` for each PE count and
//! each transport path ([`Path`]), filtered to just this test, and fails if the job fails. Run as
//! a PE (the harness sets `SHMEM_TEST_AS_PE`, see [`is_pe`]), it runs the body, so assertions
//! inside the body execute on every PE of a real job. `multi_pe_at` picks the PE counts;
//! every variant also runs under Open MPI's `mpirun` ([`launch_mpirun`]).
//!
//! **Hosts.** `multi_pe_hosts` adds the two-host layout: two network namespaces made to
//! look like two machines by `scripts/netns-hosts.sh` ([`TwoHosts`]), two PEs on each, the
//! launcher on the first, the PEs started with `shmemrun --hosts ... --rsh`.
//! `multi_pe_on_hosts` runs a body on more hosts ([`Hosts`], up to 32 joined by a bridge) with
//! any number of PEs on each, for the few tests that need it. That needs root: without it these
//! jobs are skipped with a `SKIPPED` line on stderr, and with `SHMEM_TEST_REQUIRE_ROOT=1` (as CI
//! sets) they fail instead ([`root_or_skip`]).
//!
//! **shmemrun.** [`shmemrun`](fn@shmemrun) finds the launcher binary next to the test binary,
//! or builds it (see there); `SHMEMRUN=/path` overrides it.
//!
//! **Children with a time limit.** [`run_with_limit`], or [`start`] and [`Running::finish`] for
//! a child the test talks to while it runs: the output is captured, and a child that overruns
//! is stopped and fails the test with its output. [`wait_with_limit`] is the waiting part alone,
//! for a test that reads the child's output as it comes. [`one_job_at_a_time`] keeps jobs from sharing
//! the machine's few cores.
//!
//! **Programs.** [`run_job`] runs a program (an example, a benchmark) as a job; [`line_with`] and
//! [`per_pe_ok_lines`] check its output.
//!
//! In a test file: `use shmem_testkit as common;` (or import the items).

mod child;
mod hosts;
mod jobs;
#[cfg(feature = "world")]
mod multi_pe;
mod programs;
mod root;
mod shmemrun;

pub use child::{Finished, Running, one_job_at_a_time, run_with_limit, start, wait_with_limit};
pub use hosts::{Hosts, TwoHosts, netns_script};
pub use jobs::{
    Layout, MPIRUN_COUNTS, PE_COUNTS, Path, is_pe, launch, launch_failing, launch_hosts,
    launch_hosts_env, launch_mpirun, launch_two_hosts,
};
#[cfg(feature = "world")]
pub use multi_pe::{multi_pe, multi_pe_at, multi_pe_hosts, multi_pe_on_hosts};
pub use programs::{line_with, per_pe_ok_lines, run_job, run_job_status};
pub use root::{REQUIRE_ROOT_VAR, root_or_skip};
pub use shmemrun::{SHMEMRUN_VAR, shmemrun};

/// Panics naming the first element where `got` differs from `want(i)` (its index, the length,
/// both values), prefixed with `what`: the check of a collective's result on a PE.
#[track_caller]
pub fn check_elements<E: PartialEq + std::fmt::Debug + Copy>(
    what: &str,
    got: &[E],
    want: impl Fn(usize) -> E,
) {
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want(i)) {
        panic!(
            "{what}: element {i} of {} is {:?} instead of {:?}",
            got.len(),
            got[i],
            want(i)
        );
    }
}

/// Nanoseconds since the Unix epoch (0 if the clock is before it): a time stamp that a PE prints
/// and the test compares with the moment its job ended, across processes.
pub fn unix_nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}
