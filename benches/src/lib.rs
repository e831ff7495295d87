//! Benchmarks live in `src/bin`; this library holds what several of them share.

use std::process::ExitCode;

/// Starts the runtime for a benchmark in which PE 0 measures against PE 1: the `World`, or a
/// message that says how to run the benchmark `name` when the job has fewer than 2 PEs.
pub fn init_two_pes(name: &str) -> Result<shmem_core::World, String> {
    let world = shmem_core::init().map_err(|e| format!("shmem init failed: {e}"))?;
    if world.n_pes() < 2 {
        return Err(format!(
            "needs at least 2 PEs, got {}; run it as `target/release/shmemrun -n 2 target/release/{name}`",
            world.n_pes()
        ));
    }
    Ok(world)
}

/// The exit status of benchmark `name`: success, or its error printed to stderr and failure.
pub fn exit_status(name: &str, result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("{name}: {msg}");
            ExitCode::FAILURE
        }
    }
}
