//! Binding a PE to one core of its host, as MPI launchers do by default (`mpirun --bind-to
//! core`): a PE that polls for its peers' data keeps its core and its caches, and on a host
//! with several NUMA nodes the memory it touched first (its symmetric heap) stays local,
//! instead of moving whenever the scheduler balances. (On this project's 2-vCPU VM, one NUMA
//! node, six interleaved triples of 2-PE jobs over `UCX_TLS=tcp,self` showed no difference
//! beyond the machine's noise: an 8-byte get took 9.5–16.0 µs unbound, 9.7–11.2 bound, and
//! 9.7–16.4 under Open MPI's `oshrun`, which binds.)
//!
//! `shmemrun` tells each PE its index among the job's PEs on its host and their number
//! (`SHMEM_LOCAL_RANK`, `SHMEM_LOCAL_SIZE`) and whether to bind (`SHMEM_BIND_TO`, from
//! `--bind-to`, default `core`); shmem-core's `init` calls [`bind_to_core`] before it starts any
//! thread, so the threads it starts inherit the binding. The PE with local index `i` takes the
//! `i`-th CPU of the set it may run on (its affinity mask, which a batch system's cpuset or
//! `taskset` may have narrowed): PEs fill cores in order, as `--map-by core` does. A host with
//! more PEs than CPUs in that set is oversubscribed: there no PE is bound, and the scheduler
//! shares the CPUs among them.
//!
//! Oversubscribed PEs stay unbound, as MPI launchers leave an overloaded node: a PE that may not
//! move cannot escape another job's load either. Pinning them round-robin (two to a CPU) was
//! measured on the project's 2-vCPU EPYC (`coll_sweep`, alternating runs, medians, µs per call,
//! pinned / unbound / Open MPI's oshmem): at 4 PEs, 10 rounds (the vCPUs sharing a cache), the
//! small collectives were a little quicker pinned (all-to-all of 8 B 3.1 / 3.5 / 5.9, reduction
//! 3.3 / 3.9 / 5.8), the large ones even or slower (all-to-all of 1 MiB 51.7 / 50.2 / 50.8,
//! fcollect of 1 MiB 543 / 391 / 1,090); at 8 PEs, 6 rounds, unbound was within 3% of pinned or
//! quicker in every row (reduction of 16 KiB 48.3 / 36.5 / 183.7). What pinning does remove is a
//! slow mode of short runs: a 1 MiB all-to-all of 4 PEs timed over some 20 ms took 71-76 µs in 7
//! of 12 unbound runs, against 52-56 otherwise, because the scheduler kept three of the PEs on one
//! CPU for that long (`ps` sampled the placements; the PEs' other threads slept throughout);
//! pinned, every run took 51-61 (15 runs).
//!
//! ```
//! use shmem_launch::affinity;
//!
//! // One PE alone on its host takes the first CPU it may run on (in a thread of its own
//! // here: the binding is the calling thread's, and later threads inherit it).
//! std::thread::spawn(|| {
//!     let cpus = affinity::allowed_cpus()?;
//!     let bound = affinity::bind_to_core(0, 1)?.expect("1 PE never oversubscribes");
//!     assert_eq!((bound.cpu, bound.cpus), (cpus[0], cpus.len()));
//!     assert_eq!(affinity::allowed_cpus()?, [cpus[0]]);
//!     // More PEs than CPUs: nothing is bound.
//!     assert!(affinity::bind_to_core(0, usize::MAX)?.is_none());
//!     Ok::<(), std::io::Error>(())
//! })
//! .join()
//! .unwrap()?;
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io;

/// What [`bind_to_core`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// The CPU the calling thread now runs on alone.
    pub cpu: usize,
    /// How many CPUs it could run on before: the CPUs the host's PEs share.
    pub cpus: usize,
}

/// The CPUs the calling thread may run on (its affinity mask), in ascending order.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the calling thread.
    if unsafe { libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let max = 8 * size_of::<libc::cpu_set_t>();
    // SAFETY: every `c` is below the set's size in bits.
    Ok((0..max)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// Binds the calling thread (and the threads it starts later) to one CPU: the
/// `local_rank`-th of those it may run on, when the host's `local_size` PEs do not outnumber
/// them; `Ok(None)` when they do (oversubscribed: nothing changes).
///
/// # Errors
/// The OS error of `sched_getaffinity` or `sched_setaffinity`, with the affinity unchanged.
pub fn bind_to_core(local_rank: usize, local_size: usize) -> io::Result<Option<Bound>> {
    let cpus = allowed_cpus()?;
    if local_size > cpus.len() || local_rank >= cpus.len() {
        return Ok(None);
    }
    let cpu = cpus[local_rank];
    // SAFETY: as in `allowed_cpus`.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` came from `allowed_cpus`, below the set's size in bits.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the calling thread.
    if unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Some(Bound {
        cpu,
        cpus: cpus.len(),
    }))
}
