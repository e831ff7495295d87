//! The error type of the runtime.
//!
//! # Examples
//!
//! ```
//! use shmem_core::error::{Error, Result};
//!
//! fn start() -> Result<shmem_core::World> {
//!     shmem_core::init()
//! }
//! let world = start()?;
//! // A second World in the same process is refused with an error, not a panic.
//! let again = start();
//! assert!(matches!(again, Err(Error::AlreadyInitialized)));
//! # drop(world);
//! # Ok::<(), Error>(())
//! ```
//!
//! Base layer: uses nothing of the crate; every layer reports through it.

use std::io::Write;
use std::time::Duration;

/// Writes `msg` and a newline to stderr as one line written whole: formatted first, then one
/// `write_all` on the locked, unbuffered stderr, which is one write(2) for a line under the pipe
/// buffer's atomic size (4096 bytes). `eprintln!` writes a message in pieces, so the messages of
/// PEs that share a terminal or pipe would mix mid-line.
pub(crate) fn eprint_line(msg: std::fmt::Arguments<'_>) {
    let mut line = msg.to_string();
    line.push('\n');
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// Everything that can go wrong in the runtime and is reported as a value rather than a panic.
///
/// Misuse that the type system cannot catch (a PE number out of range, an index past the end of a
/// symmetric object) panics with a message that names the values, before any byte moves; see the
/// crate documentation. Failures of the environment (UCX, the launcher, the heap) are `Error`s.
///
/// # Examples
///
/// ```
/// use shmem_core::Error;
/// let world = shmem_core::init()?;
/// // More than the symmetric heap holds: an error the program can handle.
/// match world.try_alloc::<u64>(1 << 48) {
///     Err(Error::HeapExhausted { requested, free, .. }) => assert!(requested > free),
///     Err(other) => panic!("unexpected error: {other}"),
///     Ok(_) => panic!("a heap of 2 PiB?"),
/// }
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `init` was called while a [`World`](crate::World) is alive.
    #[error("shmem_core::init called while a World is alive: one World per process")]
    AlreadyInitialized,
    /// `init` was called after the `World` was dropped.
    #[error("shmem_core::init called after the World was finalized: a process initializes once")]
    Finalized,
    /// A UCX call failed.
    #[error(transparent)]
    Ucx(#[from] shmem_ucx::Error),
    /// Start-up through the launcher failed (bad environment, lost connection, protocol error).
    #[error("bootstrap failed: {0}")]
    Bootstrap(String),
    /// Not every PE reached the rendezvous in time.
    #[error("rendezvous timed out after {timeout:?}: {detail}")]
    RendezvousTimeout {
        /// The configured timeout (`SHMEM_INIT_TIMEOUT`).
        timeout: Duration,
        /// Which PEs arrived and which did not, as far as this PE knows.
        detail: String,
    },
    /// An environment variable has a value the runtime cannot use.
    #[error("environment variable {name}={value:?} is invalid: {reason}")]
    BadEnv {
        /// The variable's name.
        name: &'static str,
        /// Its value.
        value: String,
        /// Why it was rejected.
        reason: String,
    },
    /// The symmetric heap cannot satisfy an allocation.
    #[error(
        "symmetric heap exhausted: requested {requested} bytes, {free} bytes free \
         (largest free block {largest_free}) of {total}; raise SHMEM_SYMMETRIC_SIZE"
    )]
    HeapExhausted {
        /// Bytes asked for (after alignment).
        requested: usize,
        /// Free bytes in total.
        free: usize,
        /// The largest contiguous free block.
        largest_free: usize,
        /// Size of the user heap.
        total: usize,
    },
    /// A collective allocation was called with different sizes on different PEs.
    #[error(
        "collective allocation mismatch: PE {my_pe} asked for {my_bytes} bytes but PE {other_pe} \
         asked for {other_bytes} bytes; every PE must allocate the same size"
    )]
    AllocMismatch {
        /// This PE.
        my_pe: usize,
        /// Bytes this PE asked for.
        my_bytes: usize,
        /// A PE that asked for a different size.
        other_pe: usize,
        /// The bytes that PE asked for.
        other_bytes: usize,
    },
    /// A team could not be made (`split_strided`, `split_2d`): arguments that select PEs
    /// outside the parent team, or every team block in use. Every member of the parent team
    /// gets the same error (C returns a non-zero code and `SHMEM_TEAM_INVALID`).
    #[error("{op}: {reason}")]
    Team {
        /// The call, with its arguments.
        op: String,
        /// What is wrong.
        reason: String,
    },
}

/// `Result` with this crate's [`Error`].
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// // A helper that allocates with the fallible call and passes errors on.
/// fn scratch(world: &World, len: usize) -> shmem_core::Result<SymArray<'_, f64>> {
///     let a = world.try_alloc::<f64>(len)?;
///     Ok(a)
/// }
/// let world = shmem_core::init()?;
/// assert_eq!(scratch(&world, 16)?.len(), 16);
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;
