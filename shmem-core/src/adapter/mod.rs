//! **Layer 6, adapters**: the typed API seen from outside Rust's types. [`raw`] is the port of
//! the OpenSHMEM C API (`shmem-capi`): symmetric objects named by address. [`dsl`] is what
//! `shmem!` expands to: conversions and checks that carry compile-time messages.
//!
//! May use: `coll`, `ops`, `object`, `transport`, `mem` and the base modules.

pub(crate) mod dsl;
pub mod raw;
