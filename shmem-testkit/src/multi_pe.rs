//! The multi-PE harness: a test body that runs on every PE of real jobs, at every PE count, on
//! both paths, under `shmemrun`, `mpirun` and on two or more hosts.

use std::io::Write;

use crate::jobs::{
    Layout, MPIRUN_COUNTS, PE_COUNTS, Path, is_pe, launch, launch_hosts, launch_mpirun,
    launch_two_hosts,
};
use crate::root::root_or_skip;

/// Runs `body` on every PE of a job, for each PE count in `counts` and both paths, and under
/// `mpirun` at [`MPIRUN_COUNTS`]. Use as the whole body of a `#[test]` whose name is `name`.
pub fn multi_pe_at(name: &str, counts: &[usize], body: impl FnOnce(&shmem_core::World)) {
    multi_pe_layouts(name, counts, false, body)
}

/// [`multi_pe`], and also on two hosts with two PEs each ([`TwoHosts`](crate::TwoHosts)), on
/// both paths (on the direct path, PEs of one host reach each other directly and the others
/// through UCX over TCP). The two-host jobs need root: without it they are skipped with a
/// `SKIPPED` line on stderr (a failure with `SHMEM_TEST_REQUIRE_ROOT` set), and the other jobs
/// still run.
pub fn multi_pe_hosts(name: &str, body: impl FnOnce(&shmem_core::World)) {
    multi_pe_layouts(name, PE_COUNTS, true, body)
}

/// [`multi_pe_at`] at the standard PE counts ([`PE_COUNTS`]).
///
/// ```no_run
/// #[test]
/// fn every_pe_sees_the_job() {
///     shmem_testkit::multi_pe("every_pe_sees_the_job", |world| {
///         assert!(world.my_pe() < world.n_pes());
///     });
/// }
/// ```
pub fn multi_pe(name: &str, body: impl FnOnce(&shmem_core::World)) {
    multi_pe_at(name, PE_COUNTS, body)
}

/// Runs `body` on every PE of jobs on hosts only: for each `(hosts, per_host)` in `layouts`,
/// `hosts` [`Hosts`](crate::Hosts) with `per_host` PEs on each, on both paths; prints how long
/// each job took to stderr. For the few tests that check many hosts (every multi-PE test on 8
/// hosts would take too long): the jobs need root, and without it they are skipped with a
/// `SKIPPED` line on stderr (a failure with `SHMEM_TEST_REQUIRE_ROOT` set).
///
/// ```no_run
/// #[test]
/// fn puts_reach_every_host() {
///     shmem_testkit::multi_pe_on_hosts("puts_reach_every_host", &[(4, 2)], |world| {
///         assert_eq!(world.n_pes(), 8);
///     });
/// }
/// ```
pub fn multi_pe_on_hosts(
    name: &str,
    layouts: &[(usize, usize)],
    body: impl FnOnce(&shmem_core::World),
) {
    if is_pe() {
        run_pe(name, body);
        return;
    }
    if !root_or_skip(&format!("{name} (on hosts {layouts:?})")) {
        return;
    }
    let layouts = layouts
        .iter()
        .map(|&(hosts, per_host)| Layout::Hosts { hosts, per_host });
    run_layouts(name, layouts);
}

fn multi_pe_layouts(
    name: &str,
    counts: &[usize],
    two_hosts: bool,
    body: impl FnOnce(&shmem_core::World),
) {
    if is_pe() {
        run_pe(name, body);
        return;
    }
    let two_hosts = two_hosts && root_or_skip(&format!("{name} (on two hosts)"));
    let layouts = counts
        .iter()
        .map(|&n| Layout::Local(n))
        .chain(two_hosts.then_some(Layout::TwoHosts))
        .chain(MPIRUN_COUNTS.iter().map(|&n| Layout::Mpirun(n)));
    run_layouts(name, layouts);
}

/// The PE side: `body` between init and finalize, then the line that says this PE got through.
fn run_pe(name: &str, body: impl FnOnce(&shmem_core::World)) {
    let world = shmem_core::init().expect("shmem_core::init in a test PE");
    let me = world.my_pe();
    body(&world);
    drop(world);
    // One write, so that lines of other PEs cannot split it.
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(format!("<pe-done {name} {me}>\n").as_bytes());
    let _ = out.flush();
}

/// The launcher side: a job of every layout on both paths, each of which must succeed with
/// every PE through the body.
fn run_layouts(name: &str, layouts: impl Iterator<Item = Layout>) {
    for layout in layouts {
        for path in Path::ALL {
            let (out, took) = match layout {
                Layout::Local(n) => launch(name, n, path, &[]),
                Layout::TwoHosts => match launch_two_hosts(name, path) {
                    Some(job) => job,
                    None => continue,
                },
                Layout::Hosts { hosts, per_host } => {
                    match launch_hosts(name, hosts, per_host, path) {
                        Some(job) => job,
                        None => continue,
                    }
                }
                Layout::Mpirun(n) => launch_mpirun(name, n, path),
            };
            let n = layout.n_pes();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success(),
                "{name} failed on {layout:?}, {path:?} path ({took:?}): {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
                out.status
            );
            // Every PE must actually have run the body and finalized.
            for pe in 0..n {
                assert!(
                    stdout.contains(&format!("<pe-done {name} {pe}>")),
                    "{name} on {layout:?} ({path:?}): PE {pe} did not report completion\n{stdout}\n{stderr}"
                );
            }
            if let Layout::Hosts { .. } = layout {
                eprintln!("{name}: {layout:?}, {path:?} path: job took {took:.2?}");
            }
        }
    }
}
