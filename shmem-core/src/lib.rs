//! A typed PGAS runtime in the OpenSHMEM tradition.
//!
//! A job runs `n` processing elements (PEs), each a process started by the `shmemrun` launcher.
//! Every PE has the same symmetric objects: `#[symmetric]` statics and arrays allocated
//! collectively on the symmetric heap. Any PE can put into and get from any other PE's copy
//! without the other taking part. PEs on one node write each other's heap directly through shared
//! memory; UCX carries everything else.
//!
//! ```
//! use shmem_core::prelude::*;
//!
//! #[symmetric]
//! static HALO: [f64; 8] = [0.0; 8];
//!
//! let world = shmem_core::init()?;
//! let (me, n) = (world.my_pe(), world.n_pes());
//! let right = (me + 1) % n;
//! HALO.put(right, 0..4, &[me as f64; 4]);   // one-sided put into the right neighbour
//! world.barrier_all();
//! assert_eq!(HALO.local_get(0), ((me + n - 1) % n) as f64);
//! # Ok::<(), shmem_core::Error>(())
//! ```
//!
//! Run it on 4 PEs with `target/release/shmemrun -n 4 ./my_program`, or across hosts with
//! `shmemrun --hosts node1:4,node2:4 ./my_program` (started over ssh; see `shmemrun --help`). A
//! program started without the launcher runs as a single PE. The launcher is the `shmem-run`
//! package; the protocol it speaks with `init` is the `shmem-launch` crate.
//!
//! # Errors and panics
//! Environment failures (UCX, the launcher, the heap) are [`Error`]s. Misuse that only shows at run
//! time (a PE number out of range, an index outside an object, lengths that differ, a zero stride,
//! use before [`init`]) panics with a message that names the values, before any byte moves. A PE
//! that panics ends the whole job.
//!
//! # Environment
//! - `SHMEM_SYMMETRIC_SIZE`: size of the symmetric heap per PE, with K/M/G suffixes (default 256M);
//!   it costs memory only for the pages touched, so a large value is cheap.
//! - `SHMEM_INIT_TIMEOUT`: seconds `init` waits for every PE at the rendezvous (default 60).
//! - `SHMEM_CONNECT`: when UCX endpoints are made: `auto` (at start-up for up to 256 PEs reached
//!   through UCX, else at first contact; the default), `eager` or `lazy`.
//! - `SHMEM_NODE`, `SHMEM_NNODES`: set by `shmemrun`: the index of this PE's host and the number
//!   of hosts in the job.
//! - `UCX_TLS` and the other `UCX_*` variables configure UCX (unset, the runtime leaves UCX's own
//!   shared-memory transports out: PEs of a node map each other's memory themselves); a list
//!   without shared memory, such as `UCX_TLS=tcp,self`, turns the direct path off, so every put, get and atomic goes through UCX (the
//!   collectives of the PEs of one node still synchronize through shared memory: the team
//!   segment, a `memfd` of the runtime's own words that every PE of a node maps).

#![deny(missing_docs)]
// `scripts/doc-examples.sh` sets this cfg to find the public items without an example (the lint
// is nightly-only).
#![cfg_attr(doc_examples_check, feature(rustdoc_missing_doc_code_examples))]
#![cfg_attr(doc_examples_check, deny(rustdoc::missing_doc_code_examples))]
#![deny(unsafe_op_in_unsafe_fn)]

extern crate self as shmem_core;

// The layers, lowest first (each module's docs say what it may use; `tests/layers.rs` checks
// that no import points up):
// - base: `element`, `complex`, `error`, `config`;
// - `mem`: bytes and layouts (segment, words, allocator, copy engine, private shared memory);
// - `transport`: the PEs as this process reaches them, put/get/atomics, progress, the
//   transport's own collectives;
// - `object`: symmetric objects (statics, heap arrays, views) and their contract;
// - `ops`: RMA, atomics, signals, waits, locks, queries, contexts;
// - `coll`: teams and collectives;
// - `adapter`: the C API's port (`raw`) and what `shmem!` expands to;
// - `runtime`: the composition root (start-up, finalize);
// - `world`: `World` and its methods; then this file, which only re-exports.

// The modules that hold the public API (re-exported below) are private, except when rustdoc
// runs with `--cfg doc_examples_check` (`scripts/doc-examples.sh`): its lint
// `missing_doc_code_examples` looks only at items public under their own path, so there they
// are public for the lint to see what the crate re-exports. (Written out, not by a macro, so
// that rustfmt reaches their files.) `coll`, `object`, `ops`, `ops::rma` and `adapter::raw`
// declare their API submodules the same way.
#[cfg(not(doc_examples_check))]
mod adapter;
#[cfg(doc_examples_check)]
pub mod adapter;
#[cfg(not(doc_examples_check))]
mod coll;
#[cfg(doc_examples_check)]
pub mod coll;
#[cfg(not(doc_examples_check))]
mod complex;
#[cfg(doc_examples_check)]
pub mod complex;
mod config;
#[cfg(not(doc_examples_check))]
mod element;
#[cfg(doc_examples_check)]
pub mod element;
pub mod error;
mod mem;
#[cfg(not(doc_examples_check))]
mod object;
#[cfg(doc_examples_check)]
pub mod object;
#[cfg(not(doc_examples_check))]
mod ops;
#[cfg(doc_examples_check)]
pub mod ops;
mod runtime;
mod transport;
#[cfg(not(doc_examples_check))]
mod world;
#[cfg(doc_examples_check)]
pub mod world;

pub use adapter::raw;
pub use coll::reduce::{ReduceArith, ReduceBitwise, ReduceSum};
pub use coll::team::{Team, TeamConfig};
pub use complex::{Complex32, Complex64};
pub use element::Element;
pub use error::{Error, Result};
pub use object::heap::{MallocHints, SymArray};
pub use object::statics::Symmetric;
pub use object::storage::Storable;
pub use object::view::SymSlice;
pub use ops::amo::{AmoBitwise, AmoExtended, AmoStandard, Remote};
pub use ops::ctx::{Ctx, CtxFactory, CtxMode, CtxOptions, Private, Serialized, Shared};
pub use ops::lock::{Lock, LockArray, LockGuard, LockRef};
pub use ops::p2p::WaitSet;
pub use ops::query::{MAX_NAME_LEN, PeerAccess, PeerView, SymmetricObject, VENDOR_STRING, VERSION};
pub use ops::rma::{NbiScope, SymmetricArray};
pub use ops::signal::{Cmp, Signal, SignalOp};
pub use ops::wait::{SignalArray, WaitArray, WaitWord};
pub use shmem_macros::{Element, element, shmem, symmetric};
pub use world::{ThreadLevel, Usage, World, init, init_thread};

/// Everything a PGAS program usually needs, in one glob import: `use shmem_core::prelude::*;`.
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*; // the attributes, World, the traits with the methods
///
/// #[symmetric]
/// static SUM: [u64; 1] = [0; 1];
///
/// let world: World = shmem_core::init()?;
/// world.team_world().sum_reduce(&SUM, &[1]);
/// assert_eq!(SUM.local_get(0), world.n_pes() as u64);
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub mod prelude {
    pub use crate::coll::reduce::{ReduceArith, ReduceBitwise, ReduceSum};
    pub use crate::coll::team::{Team, TeamConfig};
    pub use crate::element::Element;
    pub use crate::object::heap::{MallocHints, SymArray};
    pub use crate::object::statics::Symmetric;
    pub use crate::object::storage::Storable;
    pub use crate::object::view::SymSlice;
    pub use crate::ops::amo::{AmoBitwise, AmoExtended, AmoStandard, Remote};
    pub use crate::ops::ctx::{Ctx, CtxOptions, Private, Serialized, Shared};
    pub use crate::ops::lock::{Lock, LockArray, LockGuard, LockRef};
    pub use crate::ops::p2p::WaitSet;
    pub use crate::ops::query::{PeerAccess, PeerView, SymmetricObject};
    pub use crate::ops::rma::{NbiScope, SymmetricArray};
    pub use crate::ops::signal::{Cmp, Signal, SignalOp};
    pub use crate::ops::wait::{SignalArray, WaitArray};
    pub use crate::world::World;
    pub use shmem_macros::{Element, element, shmem, symmetric};
}

/// Items used by the macros' expansions; not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::object::statics::{SYMMETRIC_STATICS, StaticObject, register};
    pub use linkme;
    /// The zerocopy derives of `#[element]` name this copy, so that users need not depend on it.
    pub use zerocopy;
    /// Conversions and checks used by `shmem!`.
    pub mod dsl {
        pub use crate::adapter::dsl::*;
    }
}

/// Entry points for the fuzz targets (`fuzz/` in the repository): thin wrappers over the
/// parsers and checks that read outside input (settings, peers' start-up records, active
/// messages). Not part of the API: they may change or go in any release.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::transport::am::FuzzPe as StridedPe;

    /// Decodes a peer's start-up record as start-up does (`PeerInfo::decode`, with `pe` the PE
    /// it came from): the record encoded again, or the error's text.
    pub fn start_up_record(pe: usize, bytes: &[u8]) -> Result<Vec<u8>, String> {
        crate::runtime::peer_info::fuzz_decode(pe, bytes)
    }

    /// `PeerInfo::decode_head`: the fixed fields encoded again (address and keys left empty)
    /// and whether the record has a data-segment key, or the error's text.
    pub fn start_up_record_head(pe: usize, bytes: &[u8]) -> Result<(Vec<u8>, bool), String> {
        crate::runtime::peer_info::fuzz_decode_head(pe, bytes)
    }

    /// `SHMEM_SYMMETRIC_SIZE`'s parser: the size, if the text is one.
    pub fn parse_size(text: &str) -> Option<usize> {
        crate::config::parse_size(text)
    }

    /// `SHMEM_PROGRESS_THREAD` (unset: `None`) for a job that spans nodes or not.
    pub fn progress_thread(value: Option<&str>, spans_nodes: bool) -> Result<bool, String> {
        crate::config::parse_progress_thread(value.map(String::from), spans_nodes)
            .map_err(|e| e.to_string())
    }

    /// `SHMEM_COALESCE` (unset: `None`).
    pub fn coalesce(value: Option<&str>) -> Result<bool, String> {
        crate::config::parse_coalesce(value.map(String::from)).map_err(|e| e.to_string())
    }

    /// `SHMEM_CONNECT` (unset: `None`) with `ucx_peers` PEs reached through UCX.
    pub fn connect_at_start(value: Option<&str>, ucx_peers: usize) -> Result<bool, String> {
        crate::config::parse_connect(value.map(String::from), ucx_peers).map_err(|e| e.to_string())
    }

    /// Whether `UCX_TLS` (unset: `None`) lets PEs of a node map each other's memory.
    pub fn shared_memory_allowed(ucx_tls: Option<&str>) -> bool {
        crate::config::tls_allows_shared_memory(ucx_tls)
    }
}
