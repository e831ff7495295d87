//! **Layer 5, collectives**: teams and the collective operations on them (OpenSHMEM's teams and
//! collectives chapters). Lowest first:
//! - [`team`]: the [`Team`](crate::Team) handle over a transport group (members and team
//!   block), its sync and barrier;
//! - [`fetch`]: reading and writing the members' memory in a large collective, by loads and
//!   stores where it is mapped here (this node's PEs, whatever `UCX_TLS` says) and by UCX
//!   (pipelined gets) where it is not;
//! - [`mailbox`]: eager small-message exchanges through mailbox slots (broadcast, all-reduce,
//!   all-gather, all-to-all);
//! - [`large`]: large reductions that move the data once (reduce-scatter and all-gather through
//!   [`fetch`]), on every path;
//! - [`staged`]: broadcasts that the members read from the root, in pieces, where every
//!   member is mapped here;
//! - [`stores`]: how such a broadcast's root stores what the members read (cached or
//!   streaming stores, chosen by its own timings);
//! - [`alltoall`]: all-to-alls of large blocks between members mapped here, one copy per block;
//! - [`collectives`]: broadcast, fcollect, collect, alltoall(s), the scans;
//! - [`reduce`]: the reduction type sets and the `*_reduce` operations;
//! - [`split`]: making teams (`SHMEM_TEAM_SHARED`, splits).
//!
//! May use: `ops`, `object`, `transport`, `mem` and the base modules.

pub(crate) mod alltoall;
pub(crate) mod collectives;
pub(crate) mod fetch;
pub(crate) mod large;
pub(crate) mod mailbox;
pub(crate) mod split;
pub(crate) mod staged;
pub(crate) mod stores;
// Public when rustdoc checks examples (see the note in lib.rs).
#[cfg(not(doc_examples_check))]
pub(crate) mod reduce;
#[cfg(doc_examples_check)]
pub mod reduce;
#[cfg(not(doc_examples_check))]
pub(crate) mod team;
#[cfg(doc_examples_check)]
pub mod team;
