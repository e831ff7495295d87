//! The team segment's layout: the runtime's own words that PEs write into each other's memory
//! to synchronize (flags, small payloads, mailbox slots), as byte offsets from the segment's
//! start. Identical on every PE.
//!
//! ```text
//! 0            SYNC_BYTES                                                      SEGMENT
//! | sync area  | team block 0 (world) | team block 1 | ... | team block TEAM_SLOTS - 1 |
//! ```
//!
//! - The **sync area** serves the transport's own collectives: the all-reduce of collective
//!   allocation (flags and payloads, two parities of one slot per round) and the finalize
//!   announcements (a count, then one bit per PE).
//! - Every **team block** serves one team's collectives: barrier flags, data flags, the scan
//!   scratch, the mailbox slots of the eager exchanges, the all-to-all slots, the
//!   eager-broadcast ring and the staging area of broadcasts whose root keeps its `dest`.
//!
//! The segment is a `memfd` of its own that every PE of a node maps, whatever `UCX_TLS` says,
//! so that on one node collectives synchronize and pass their small messages through shared
//! memory (as Open MPI's do) even where puts and gets go through UCX (and so does the heap
//! of each such PE, mapped for the collectives: `Transport::coll_mapped`); PEs of other nodes reach
//! it through UCX, where it is registered too. In the runtime's offset space it takes offsets
//! `0..SEGMENT` (the heap mapping's first `SEGMENT` bytes are left unused).
//!
//! Part of the memory layer: uses nothing of the crate. Pure arithmetic, checked at compile time.

/// Rounds of the sync area's all-reduce: enough for up to 2^64 PEs.
pub(crate) const SYNC_ROUNDS: usize = 64;
/// Collective flags of the sync area: two parities, one u64 per round each.
pub(crate) const COLL_FLAGS: usize = 0;
/// Collective payloads of the sync area: two parities, one [u64; PAYLOAD_WORDS] per round each.
pub(crate) const COLL_PAYLOAD: usize = COLL_FLAGS + 2 * SYNC_ROUNDS * 8;
/// Words of one sync-area payload.
pub(crate) const PAYLOAD_WORDS: usize = 4;
/// Bytes at the start of the team segment for synchronization (page multiple).
pub(crate) const SYNC_BYTES: usize = 8192;
/// Finalize announcements: how many PEs announced, then one bit per PE.
pub(crate) const FINAL_COUNT: usize = COLL_PAYLOAD + 2 * SYNC_ROUNDS * PAYLOAD_WORDS * 8;
/// The first word of the finalize bits (bit `pe % 64` of word `pe / 64`).
pub(crate) const FINAL_BITS: usize = FINAL_COUNT + 8;
/// PEs with a finalize bit (the others are counted only).
pub(crate) const FINAL_BIT_PES: usize = (SYNC_BYTES - FINAL_BITS) * 8;
const _: () = assert!(FINAL_BITS < SYNC_BYTES);

/// Number of team blocks (the world team uses block 0).
pub(crate) const TEAM_SLOTS: usize = 64;
/// Rounds of the dissemination and tree algorithms (teams of up to 2^32 PEs).
pub(crate) const ROUNDS: usize = 32;
/// Bytes of scratch per tree round (scans and the mailbox slots move data in chunks of this
/// size).
pub(crate) const CHUNK: usize = 1024;
/// Layout of one team block (byte offsets within the block, each region 64-byte aligned):
/// the barrier flags, one per round.
pub(crate) const BARRIER_FLAGS: usize = 0;
/// The scans' data flags, one per round.
pub(crate) const DATA_FLAGS: usize = BARRIER_FLAGS + ROUNDS * 8;
/// The flag of the large broadcast's tree.
pub(crate) const DOWN_FLAG: usize = DATA_FLAGS + ROUNDS * 8;
/// In the 64 bytes of [`DOWN_FLAG`]'s line: the offset (in this PE's symmetric memory) where
/// this PE's contribution to the current large direct reduction lies, which the members read
/// in its mapped team block (`coll::large`).
pub(crate) const CONTRIB: usize = DOWN_FLAG + 8;
/// In the same line: where the root of a broadcast that the members read publishes the
/// offset the members copy from (`coll::staged`).
pub(crate) const BCAST_SRC: usize = DOWN_FLAG + 16;
/// In the same line: the root's progress in a broadcast that the members read (the epoch's tag
/// in the high half, the pieces it has made readable in the low half; `coll::staged`).
pub(crate) const BCAST_PROGRESS: usize = DOWN_FLAG + 24;
/// In the same line: the last broadcast that this PE has finished reading from its root
/// (`coll::staged`).
pub(crate) const BCAST_READ: usize = DOWN_FLAG + 32;
/// In the same line: how far this PE has come in the current large direct reduction
/// (`coll::large`: three steps per epoch).
pub(crate) const REDUCE_STEP: usize = DOWN_FLAG + 40;
/// In the same line: how far this PE has read the root's staging area in the current staged
/// broadcast (`coll::staged`: the epoch's tag in the high half, the pieces read in the low
/// half).
pub(crate) const BCAST_READING: usize = DOWN_FLAG + 48;
/// In the same line: the bytes this PE reduces in the current large direct reduction
/// (`coll::large`), published with [`CONTRIB`], so that members passing different lengths
/// are named.
pub(crate) const REDUCE_LEN: usize = DOWN_FLAG + 56;
/// The last eager-broadcast epoch this PE has taken out of its ring (parents read it before
/// reusing a ring slot).
pub(crate) const BCAST_DONE: usize = DOWN_FLAG + 64;
/// In the same line: the bytes of the current broadcast that the members read, published by
/// its root (`coll::staged`), so that members passing other lengths are named.
pub(crate) const BCAST_LEN: usize = BCAST_DONE + 8;
/// In the same line: the team PE in whose memory the members of the current broadcast that
/// they read find its data (`coll::staged`: the root itself, or the member it copies a private
/// source into), published by its root next to [`BCAST_SRC`].
pub(crate) const BCAST_HOLDER: usize = BCAST_DONE + 16;
/// In the same line: the last broadcast that the members read which this PE has entered, so
/// that a root may write into its `dest` (`coll::staged`); stored by the member that follows
/// the root in team order.
pub(crate) const BCAST_ENTERED: usize = BCAST_DONE + 24;
/// In the same line, its last [`ENTRIES`] words: the collectives this PE entered last on this
/// team, `sequence << 8 | kind` in word `sequence % ENTRIES`, which members read to tell PEs
/// that called different collectives (`transport::collective`).
pub(crate) const ENTRY: usize = BCAST_DONE + 32;
/// Words at [`ENTRY`].
pub(crate) const ENTRIES: usize = 4;
/// The scans' scratch: one [`CHUNK`] per round.
pub(crate) const SCRATCH: usize = BCAST_DONE + 64;
/// A mailbox slot: a 16-byte header (epoch, tag and length) and up to [`CHUNK`] payload bytes,
/// the header sharing its cache line with the first 48 payload bytes.
pub(crate) const SLOT: usize = (16 + CHUNK).next_multiple_of(64);
/// Mailbox slots per parity for the recursive-doubling and Bruck exchanges: one per round, plus
/// the fold and unfold slots of non-power-of-two teams.
pub(crate) const MAIL_ROUNDS: usize = ROUNDS + 2;
/// Two parities of [`MAIL_ROUNDS`] slots.
pub(crate) const MAIL: usize = SCRATCH + ROUNDS * CHUNK;
/// Bytes per parity of the all-to-all mailbox (one slot per sender, `A2A_BYTES / n` bytes
/// each in a team of `n`), which the one-exchange collectives (all-to-all, flat all-gather and
/// reduction) use: a larger block goes straight into the destination, one copy instead of two.
pub(crate) const A2A_BYTES: usize = 16 << 10;
/// Two parities of [`A2A_BYTES`].
pub(crate) const A2A: usize = MAIL + 2 * MAIL_ROUNDS * SLOT;
/// Slots of the eager-broadcast ring.
pub(crate) const RING: usize = 8;
/// The eager-broadcast ring: [`RING`] slots.
pub(crate) const BCAST: usize = A2A + 2 * A2A_BYTES;
/// The staging area: where a broadcast's root whose own `dest` must stay as it is
/// (`coll::staged`) passes its data to the members, in pieces. Only data lies here (never a flag), so a block's reset leaves it as it
/// is, and its pages cost memory only once a collective has used them. A broadcast that lets
/// the other members read this PE's staging area returns on this PE without waiting for them;
/// the next one through it waits until they have all finished reading (`coll::staged`).
pub(crate) const STAGE: usize = (BCAST + RING * SLOT).next_multiple_of(4096);
/// Bytes of the staging area.
pub(crate) const STAGE_BYTES: usize = 256 << 10;
/// Bytes of one team block.
pub(crate) const BLOCK: usize = STAGE + STAGE_BYTES;
/// Bytes at the start of a team block that a new team's block starts with cleared (its flags,
/// slots and mailboxes; not the staging area).
pub(crate) const BLOCK_CLEARED: usize = STAGE;
/// Bytes of the whole pool of team blocks (placed after the sync area).
pub(crate) const POOL_BYTES: usize = TEAM_SLOTS * BLOCK;
/// The team segment: the sync area, then the team blocks (see the module docs).
pub(crate) const SEGMENT: usize = SYNC_BYTES + POOL_BYTES;
const _: () = assert!(
    REDUCE_LEN + 8 <= BCAST_DONE
        && BCAST_LEN + 8 <= BCAST_HOLDER
        && BCAST_ENTERED + 8 <= ENTRY
        && SCRATCH.is_multiple_of(64)
        && MAIL.is_multiple_of(64)
        && STAGE.is_multiple_of(4096)
        && BLOCK.is_multiple_of(64)
);

/// Offset of team block `slot` in the team segment.
pub(crate) fn block_offset(slot: usize) -> usize {
    SYNC_BYTES + slot * BLOCK
}
