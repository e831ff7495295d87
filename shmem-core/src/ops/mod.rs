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

// Public when rustdoc checks examples (see `api_modules!` in lib.rs).
api_modules! {
    pub(crate) mod amo;
    pub(crate) mod ctx;
    pub(crate) mod lock;
    pub(crate) mod p2p;
    pub(crate) mod query;
    pub(crate) mod rma;
    pub(crate) mod signal;
    pub(crate) mod wait;
}
