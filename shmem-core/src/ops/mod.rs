//! **Layer 4, operations**: what a program does to symmetric objects (OpenSHMEM's RMA, atomics,
//! signals, point-to-point synchronization, locks, queries and contexts chapters), typed and
//! checked, each a thin layer over the transport. Lowest first:
//! - [`amo`]: atomics on one element ([`Remote`](crate::Remote));
//! - [`signal`]: signal words, signal operations and comparisons;
//! - [`rma`]: [`SymmetricArray`](crate::SymmetricArray) (put, get, p, g, iput, iget, ...) and
//!   non-blocking scopes;
//! - [`wait`], [`p2p`], [`lock`], [`query`]: waits and tests, wait sets and remote signal
//!   updates, distributed locks, `shmem_ptr` and the queries;
//! - [`ctx`]: communication contexts, whose operations are those above on a route of their own.
//!
//! May use: `object`, `transport`, `mem` and the base modules.

// Public when rustdoc checks examples (see the note in lib.rs).
#[cfg(not(doc_examples_check))]
pub(crate) mod amo;
#[cfg(doc_examples_check)]
pub mod amo;
#[cfg(not(doc_examples_check))]
pub(crate) mod ctx;
#[cfg(doc_examples_check)]
pub mod ctx;
#[cfg(not(doc_examples_check))]
pub(crate) mod lock;
#[cfg(doc_examples_check)]
pub mod lock;
#[cfg(not(doc_examples_check))]
pub(crate) mod p2p;
#[cfg(doc_examples_check)]
pub mod p2p;
#[cfg(not(doc_examples_check))]
pub(crate) mod query;
#[cfg(doc_examples_check)]
pub mod query;
#[cfg(not(doc_examples_check))]
pub(crate) mod rma;
#[cfg(doc_examples_check)]
pub mod rma;
#[cfg(not(doc_examples_check))]
pub(crate) mod signal;
#[cfg(doc_examples_check)]
pub mod signal;
#[cfg(not(doc_examples_check))]
pub(crate) mod wait;
#[cfg(doc_examples_check)]
pub mod wait;
