//! Checks a PMIx launcher: every rank publishes its host name, fences, and prints what it
//! learned.
//!
//! ```text
//! cargo build -p shmem-pmix --example pmix_hello
//! mpirun -n 3 target/debug/examples/pmix_hello          # Open MPI (add --allow-run-as-root as root)
//! srun --mpi=pmix -n 3 target/debug/examples/pmix_hello # Slurm
//! ```

use std::process::ExitCode;

use shmem_pmix::Pmix;

fn main() -> ExitCode {
    if !Pmix::launched() {
        eprintln!(
            "pmix_hello: not started by a PMIx launcher (no PMIX_RANK, PMIX_NAMESPACE, PMIX_SERVER_URI*)"
        );
        return ExitCode::FAILURE;
    }
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pmix_hello: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> shmem_pmix::Result<()> {
    let t0 = std::time::Instant::now();
    let mut pmix = Pmix::init()?;
    let init = t0.elapsed();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    pmix.put("hello.host", host.trim().as_bytes())?;
    pmix.commit()?;
    let mut polls = 0u64;
    pmix.fence(true, &mut || polls += 1)?;
    let mut hosts = Vec::new();
    for rank in 0..pmix.size() {
        hosts.push(String::from_utf8_lossy(&pmix.get(rank, "hello.host")?).into_owned());
    }
    println!(
        "rank {} of {} in {:?}: local peers {:?}, hosts {:?}; init {:?}, fence polled {} times, total {:?}",
        pmix.rank(),
        pmix.size(),
        pmix.namespace(),
        pmix.local_peers()?,
        hosts,
        init,
        polls,
        t0.elapsed()
    );
    Ok(())
}
