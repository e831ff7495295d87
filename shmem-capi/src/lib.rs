//! The OpenSHMEM 1.6 C API over `shmem-core`: `libshmem.so` and `libshmem.a`, with the headers
//! in `shmem-capi/include` (`shmem.h`, `pshmem.h`, `shmemx.h`) and the compiler wrappers
//! `shmemcc` and `shmemc++` that the build writes next to `shmemrun`.
//!
//! ```sh
//! cargo build --release
//! target/release/shmemcc -O2 -o hello hello.c
//! target/release/shmemrun -n 4 ./hello
//! ```
//!
//! Every C function is a thin `extern "C"` shim: it turns C's addresses into symmetric objects
//! ([`shmem_core::raw::sym`]), its integers into checked PE numbers and lengths, and calls the
//! typed API. The hundreds of typed functions (`shmem_long_put`, `shmem_ctx_uint_atomic_fetch_or`,
//! `shmem_complexd_sum_reduce`, ...) are generated from one table per OpenSHMEM type family
//! (`src/types.rs`), the same tables the header's X-macros list.
//!
//! Misuse that C cannot express in types (an address outside symmetric memory, a PE out of range,
//! an unknown team or context handle) prints a message naming the call and the values, then ends
//! the whole job (`shmem_global_exit(1)`).
//!
//! `shmem_pcontrol` is a no-op defined in the header (C variadic functions cannot be defined in
//! stable Rust), and so are `shmem_longdouble_p`/`_g` (over put and get: Rust cannot pass an x87
//! `long double` by value).
#![deny(missing_docs)]

#[macro_use]
mod state;
#[macro_use]
mod types;
mod active;
mod amo;
mod coll;
mod longdouble;
mod mem;
mod p2p;
mod rma;
mod setup;
mod team;

pub use state::{CTX_DEFAULT, ShmemCtx, ShmemTeam, TEAM_SHARED, TEAM_WORLD};
