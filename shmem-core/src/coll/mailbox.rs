//! Eager small-message collectives through mailbox slots in the team block.
//!
//! A message is written into a slot of the receiver's team block: the payload, then a header
//! word holding a tag and the payload length, then the slot's epoch word, raised with release
//! ordering (on a UCX peer: the data is flushed and the epoch set by an atomic swap). The
//! receiver waits for the epoch, checks the tag and length against what it expects (so members
//! that call different collectives, or pass different lengths, get a clear panic rather than
//! garbage), and reads the payload. Up to 48 payload bytes share the header's cache line, so a
//! small message crosses between cores as one line.
//!
//! Nobody writes another member's `dest`: each PE assembles its own result, which is why these
//! collectives need no entry sync.
//!
//! Teams of up to [`FLAT_MAX`] members exchange directly (every member posts to every other,
//! a broadcast root to every member): one hop instead of `log2 n` chained ones, which on shared
//! memory costs a few more stores but never waits for an intermediate PE to be scheduled.
//! Larger teams use recursive doubling, Bruck and a binomial tree.
//!
//! Slot reuse:
//! - Recursive doubling and Bruck (the mail slots, one per round) and the flat exchanges and
//!   all-to-all (the all-to-all slots, one per sender) use two sets of slots, alternating by the
//!   parity of the team's mail epoch. In each of these collectives a PE finishes epoch
//!   `e + 1` only after every member has sent its part of `e + 1`, which every member does only
//!   after finishing `e`; so whoever writes a slot for `e + 2` knows that its reader is done with
//!   `e`. (This holds because only such all-waiting collectives use the mail epoch.)
//! - The all-to-all of large blocks between mapped members (`coll::alltoall`) takes the same
//!   epochs and slots with headers only (its blocks go straight into the destinations), and
//!   the epoch word of each member's slot for itself (which no exchange uses) as its entry word.
//! - A broadcast root waits for nobody, so broadcasts use a ring of [`RING`] slots and a parent
//!   checks its child's [`BCAST_DONE`] word before reusing a slot. It caches what it read, so the
//!   check costs one remote load per few turns of the ring.
//!
//! Part of the collectives layer; uses `coll::team`, `transport` (its puts, flags and collective
//! waits), `mem`.

use super::team::{Team, Tree};
use crate::element::Element;
use crate::mem::copy::copy_bytes;
use crate::mem::segment::{
    A2A, A2A_BYTES, BCAST, BCAST_DONE, CHUNK, MAIL, MAIL_ROUNDS, RING, SLOT,
};
use crate::mem::word::SignalKind;
use crate::transport::collective::wait_in_collective;
use crate::transport::slots::next_epoch;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use zerocopy::IntoBytes;

/// Header bytes before a slot's payload.
const HEADER: usize = 16;
/// Largest team that uses the flat (one-hop) exchanges.
pub(crate) const FLAT_MAX: usize = 8;
/// Mail slots of the fold and unfold steps of non-power-of-two teams.
const FOLD: usize = MAIL_ROUNDS - 2;
const UNFOLD: usize = MAIL_ROUNDS - 1;

/// What a message belongs to, checked by the receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Tag {
    Reduce = 1,
    Gather = 2,
    AllToAll = 3,
    Broadcast = 4,
    Collect = 5,
}

impl Tag {
    fn name(raw: u32) -> &'static str {
        match raw {
            1 => "a reduction",
            2 => "an fcollect or collect",
            3 => "an alltoall",
            4 => "a broadcast",
            5 => "a collect",
            _ => "an unknown collective",
        }
    }
}

/// Local memory that a collective assembles its result in: this PE's own copy of a symmetric
/// object (which other threads may access through its safe methods, and which must therefore
/// never be borrowed as a `&`/`&mut` slice), or a private buffer. Bytes move in and out only
/// through raw pointers, with bounds checked here.
#[derive(Clone, Copy)]
pub(crate) struct RawBytes<'a> {
    ptr: *mut u8,
    len: usize,
    _borrow: PhantomData<&'a mut [u8]>,
}

/// A byte range to post: a local slice or part of a [`RawBytes`].
#[derive(Clone, Copy)]
pub(crate) struct Part<'a> {
    ptr: *const u8,
    len: usize,
    _borrow: PhantomData<&'a [u8]>,
}

impl<'a> From<&'a [u8]> for Part<'a> {
    fn from(s: &'a [u8]) -> Part<'a> {
        Part {
            ptr: s.as_ptr(),
            len: s.len(),
            _borrow: PhantomData,
        }
    }
}

impl<'a> Part<'a> {
    /// `len` bytes at `ptr`, read only through raw pointers (this PE's part of a symmetric
    /// array, which a peer's put may change meanwhile, must never be borrowed as a slice).
    ///
    /// # Safety
    /// `ptr` is valid for reads of `len` bytes until the collective returns, and no `&mut`
    /// reference to those bytes is used meanwhile.
    pub(crate) unsafe fn new(ptr: *const u8, len: usize) -> Part<'a> {
        Part {
            ptr,
            len,
            _borrow: PhantomData,
        }
    }

    /// The number of bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The first byte, for raw copies of at most [`len`](Self::len) bytes.
    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.ptr
    }

    /// Bytes `r` of this part.
    #[track_caller]
    pub(crate) fn sub(&self, r: std::ops::Range<usize>) -> Part<'a> {
        bytes_in(self.ptr, self.len, r, "source")
    }
}

/// Bytes `r` of the `len` bytes at `ptr` (a collective's `what`), checked to lie within them.
#[track_caller]
fn bytes_in<'a>(ptr: *const u8, len: usize, r: std::ops::Range<usize>, what: &str) -> Part<'a> {
    assert!(
        r.start <= r.end && r.end <= len,
        "collective {what} out of bounds"
    );
    Part {
        // SAFETY: in bounds (checked).
        ptr: unsafe { ptr.add(r.start) },
        len: r.len(),
        _borrow: PhantomData,
    }
}

impl<'a> RawBytes<'a> {
    /// `len` bytes at `ptr`.
    ///
    /// # Safety
    /// `ptr` is valid for reads and writes of `len` bytes until the collective returns, and no
    /// `&`/`&mut` reference to those bytes is used meanwhile.
    pub(crate) unsafe fn new(ptr: *mut u8, len: usize) -> RawBytes<'a> {
        RawBytes {
            ptr,
            len,
            _borrow: PhantomData,
        }
    }

    /// A private buffer.
    pub(crate) fn from_mut(s: &'a mut [u8]) -> RawBytes<'a> {
        RawBytes {
            ptr: s.as_mut_ptr(),
            len: s.len(),
            _borrow: PhantomData,
        }
    }

    /// Copies `src` to byte `at`.
    #[track_caller]
    fn write<'b>(&self, at: usize, src: impl Into<Part<'b>>) {
        let src = src.into();
        assert!(at + src.len <= self.len, "collective output out of bounds");
        // SAFETY: in bounds (checked); valid per `new`; `src` is a different buffer (a local
        // slice, a symmetric source apart from the output, or a mailbox slot; never the
        // output itself).
        unsafe { copy_bytes(self.ptr.add(at), src.ptr, src.len) }
    }

    /// Stores `elems` at every `stride`-th `E` of these bytes, from the first: the output of a
    /// strided collective.
    #[track_caller]
    pub(crate) fn write_strided<E: Element>(&self, elems: &[E], stride: usize) {
        let Some(last) = elems.len().checked_sub(1) else {
            return;
        };
        let end = last
            .checked_mul(stride)
            .and_then(|e| e.checked_add(1))
            .and_then(|e| e.checked_mul(size_of::<E>()));
        assert!(
            end.is_some_and(|end| end <= self.len),
            "collective output out of bounds"
        );
        let base = self.ptr.cast::<E>();
        for (k, &e) in elems.iter().enumerate() {
            // SAFETY: element `k * stride` ends within the bytes (checked for the last); valid
            // per `new`; written unaligned, as the bytes need not be aligned for `E`.
            unsafe { base.add(k * stride).write_unaligned(e) }
        }
    }

    /// Bytes `r` as a part to post.
    #[track_caller]
    fn part(&self, r: std::ops::Range<usize>) -> Part<'a> {
        bytes_in(self.ptr, self.len, r, "output")
    }
}

/// The epoch and header words at `ptr` (a slot in a mapped heap).
///
/// # Safety
/// `ptr` is a 64-byte aligned slot of a team block in a live mapping.
unsafe fn words<'a>(ptr: *mut u8) -> &'a [AtomicU64; 2] {
    // SAFETY: per the caller; slots are only accessed atomically in their header words.
    unsafe { &*(ptr as *const [AtomicU64; 2]) }
}

/// Writes `parts` (back to back) as one message into the slot at team-block offset `slot` of
/// team PE `to`, tagged `tag`, published with `epoch`. The caller has made sure the slot is free
/// and the payload fits it.
fn post(team: &Team<'_>, to: usize, slot: usize, epoch: u64, tag: Tag, parts: &[Part<'_>]) {
    let tp = team.tp();
    let len: usize = parts.iter().map(|p| p.len).sum();
    let meta = tag as u64 | (len as u64) << 32;
    let peer = tp.peer(team.world_pe(to));
    let at = team.block(slot);
    if let Some(base) = tp.mapped(peer, at) {
        let mut off = HEADER;
        for p in parts {
            // SAFETY: the slot lies in the peer's mapped team block and has room for the payload
            // (the callers' size checks); the parts are valid local bytes (`Part`).
            unsafe { copy_bytes(base.add(off), p.ptr, p.len) };
            off += p.len;
        }
        // SAFETY: a slot of a mapped team block.
        let w = unsafe { words(base) };
        w[1].store(meta, Ordering::Relaxed);
        w[0].store(epoch, Ordering::Release);
    } else {
        // The header word, then the payload: one message (or puts, a flush and an atomic)
        // that raises the epoch last.
        let m = meta.to_ne_bytes();
        let mut bytes: Vec<&[u8]> = Vec::with_capacity(parts.len() + 1);
        bytes.push(&m);
        for p in parts {
            // SAFETY: the parts are valid local bytes (`Part`).
            bytes.push(unsafe { std::slice::from_raw_parts(p.ptr, p.len) });
        }
        tp.put_with_signal(peer, (at + 8, &bytes), (at, SignalKind::Max, epoch));
    }
}

/// Waits for the message of `epoch` in this PE's slot at `slot`, checks that team PE `from`
/// sent `len` bytes of `tag`, and returns the payload.
#[track_caller]
fn receive<'a>(
    team: &'a Team<'_>,
    slot: usize,
    epoch: u64,
    (tag, len): (Tag, usize),
    from: usize,
    what: &str,
) -> &'a [u8] {
    wait_in_collective(team.tp(), Some(&team.group), || {
        arrived(team, slot, epoch, (tag, len), from, what)
    });
    // SAFETY: the sender wrote `len` payload bytes before raising the epoch (acquired in
    // `arrived`).
    unsafe { payload(team, slot, len) }
}

/// The `len` payload bytes of this PE's slot at `slot`.
///
/// # Safety
/// The slot's epoch word has been acquired for a message of at least `len` bytes (which then
/// fit the slot); nobody writes the slot again before this PE is done with it (module docs).
unsafe fn payload<'a>(team: &'a Team<'_>, slot: usize, len: usize) -> &'a [u8] {
    // SAFETY: per the caller.
    unsafe { std::slice::from_raw_parts(team.tp().local(team.block(slot) + HEADER), len) }
}

/// The header word (tag and length) of the message of `epoch` in this PE's slot at `slot`, once
/// it is there (its epoch word acquired).
fn landed(team: &Team<'_>, slot: usize, epoch: u64) -> Option<(u32, usize)> {
    // SAFETY: a slot of this PE's team block.
    let w = unsafe { words(team.tp().local(team.block(slot))) };
    if w[0].load(Ordering::Acquire) < epoch {
        return None;
    }
    let meta = w[1].load(Ordering::Relaxed);
    Some((meta as u32, (meta >> 32) as usize))
}

/// True once the message of `epoch` is in this PE's slot at `slot` (its epoch word is
/// acquired); panics as [`receive`] does when it is not `len` bytes of `tag` from team PE `from`.
/// Lengths are compared in their low 32 bits, which is what a header holds.
#[track_caller]
pub(crate) fn arrived(
    team: &Team<'_>,
    slot: usize,
    epoch: u64,
    (tag, len): (Tag, usize),
    from: usize,
    what: &str,
) -> bool {
    let Some((their_tag, their_len)) = landed(team, slot, epoch) else {
        return false;
    };
    if their_tag != tag as u32 || their_len != len as u32 as usize {
        mismatch(team, what, from, their_tag, their_len, len);
    }
    true
}

/// Raises the header of the slot at team-block offset `slot` in team PE `to`'s team block,
/// mapped here at `base`, to `epoch` for a message of `len` bytes of `tag` whose payload went
/// elsewhere (release ordering: whatever this PE stored before is visible to whoever acquires
/// the epoch). The slot must be free for `epoch`, as for [`post`].
///
/// # Safety
/// `base` is where that slot lies in `to`'s team block, mapped here.
pub(crate) unsafe fn post_header(base: *mut u8, epoch: u64, tag: Tag, len: usize) {
    // SAFETY: per the caller, a slot of a mapped team block.
    let w = unsafe { words(base) };
    w[1].store(tag as u64 | (len as u32 as u64) << 32, Ordering::Relaxed);
    w[0].store(epoch, Ordering::Release);
}

#[cold]
#[inline(never)]
#[track_caller]
fn mismatch(team: &Team<'_>, what: &str, from: usize, tag: u32, len: usize, mine: usize) -> ! {
    panic!(
        "shmem: {what}: team PE {from} sent {len} bytes for {} while team PE {} expects {mine} \
         bytes for {what}: every member must call the same collectives in the same order, with \
         the same number of elements",
        Tag::name(tag),
        team.my_pe()
    )
}

fn mail_slot(parity: usize, round: usize) -> usize {
    MAIL + (parity * MAIL_ROUNDS + round) * SLOT
}

/// In-place all-reduce of `data` over the team by recursive doubling (non-power-of-two teams
/// fold the extra members in first and out last), in chunks of [`CHUNK`] bytes. Every member
/// combines in the same order (lower team PE first), so all get bit-identical results.
pub(crate) fn allreduce<E: Element>(
    team: &Team<'_>,
    data: &mut [E],
    op: impl Fn(E, E) -> E,
    what: &str,
) {
    const { assert!(size_of::<E>() <= CHUNK) };
    let n = team.n_pes();
    if n == 1 {
        return;
    }
    let per = allreduce_step_bytes(n, size_of::<E>()) / size_of::<E>().max(1);
    for chunk in data.chunks_mut(per) {
        allreduce_chunk(team, chunk, &op, what);
    }
}

/// The bytes of `size`-byte elements that one step of [`allreduce`] over `n` members takes (a
/// whole number of elements): a flat team as much as its all-to-all slots hold in one exchange
/// (at 2 PEs 8 KiB, at 8 PEs 2 KiB: a 4 KiB reduction in one or two exchanges instead of four),
/// a larger team a mail slot's [`CHUNK`] per recursive doubling. Larger reductions take several
/// such steps, one after the other (`coll::large` takes over from two).
pub(crate) fn allreduce_step_bytes(n: usize, size: usize) -> usize {
    let bytes = if n <= FLAT_MAX {
        (a2a_stride(n) - HEADER).max(CHUNK)
    } else {
        CHUNK
    };
    let size = size.max(1);
    bytes / size * size
}

fn combine<E: Element>(data: &mut [E], theirs: &[u8], mine_first: bool, op: &impl Fn(E, E) -> E) {
    for (i, d) in data.iter_mut().enumerate() {
        let x = E::read_from_bytes(&theirs[i * size_of::<E>()..(i + 1) * size_of::<E>()])
            .unwrap_or_else(|_| unreachable!("the slice has exactly one element's bytes"));
        *d = if mine_first { op(*d, x) } else { op(x, *d) };
    }
}

fn allreduce_chunk<E: Element>(
    team: &Team<'_>,
    data: &mut [E],
    op: &impl Fn(E, E) -> E,
    what: &str,
) {
    let (n, me) = (team.n_pes(), team.my_pe());
    if n <= FLAT_MAX && alltoall_fits(n, size_of_val(data)) {
        return allreduce_flat(team, data, op, what);
    }
    // The largest power of two not above n; members from `m` up are folded in.
    let m = 1usize << (usize::BITS - 1 - n.leading_zeros());
    let epoch = next_epoch(team.mail_epoch());
    let parity = (epoch & 1) as usize;
    let expect = (Tag::Reduce, size_of_val(data));
    if me >= m {
        post(
            team,
            me - m,
            mail_slot(parity, FOLD),
            epoch,
            Tag::Reduce,
            &[data.as_bytes().into()],
        );
        let got = receive(team, mail_slot(parity, UNFOLD), epoch, expect, me - m, what);
        data.as_mut_bytes().copy_from_slice(got);
        return;
    }
    if me + m < n {
        let got = receive(team, mail_slot(parity, FOLD), epoch, expect, me + m, what);
        combine(data, got, true, op);
    }
    let (mut bit, mut round) = (1, 0);
    while bit < m {
        let partner = me ^ bit;
        post(
            team,
            partner,
            mail_slot(parity, round),
            epoch,
            Tag::Reduce,
            &[data.as_bytes().into()],
        );
        let got = receive(team, mail_slot(parity, round), epoch, expect, partner, what);
        combine(data, got, me < partner, op);
        bit <<= 1;
        round += 1;
    }
    if me + m < n {
        post(
            team,
            me + m,
            mail_slot(parity, UNFOLD),
            epoch,
            Tag::Reduce,
            &[data.as_bytes().into()],
        );
    }
}

/// Flat all-reduce: every member sends `data` to every other member, then each combines all
/// contributions in team order (so every member computes the very same value).
fn allreduce_flat<E: Element>(
    team: &Team<'_>,
    data: &mut [E],
    op: &impl Fn(E, E) -> E,
    what: &str,
) {
    let (n, len) = (team.n_pes(), size_of_val(data));
    let mut all = vec![0u8; n * len];
    all[team.my_pe() * len..(team.my_pe() + 1) * len].copy_from_slice(data.as_bytes());
    exchange(
        team,
        Tag::Reduce,
        len,
        |_| data.as_bytes().into(),
        RawBytes::from_mut(&mut all),
        what,
    );
    data.as_mut_bytes().copy_from_slice(&all[..len]);
    for theirs in all[len..].chunks_exact(len) {
        combine(data, theirs, true, op);
    }
}

/// One flat exchange through the all-to-all slots of a new mail epoch: member `j` receives
/// `part(j)` from this PE (`block` bytes), and `out[j * block..]` receives member `j`'s part for
/// this PE, for every `j` but this PE (whose block the caller fills).
fn exchange<'a>(
    team: &Team<'_>,
    tag: Tag,
    block: usize,
    part: impl Fn(usize) -> Part<'a>,
    out: RawBytes<'_>,
    what: &str,
) {
    let (n, me) = (team.n_pes(), team.my_pe());
    let (area, stride, epoch) = a2a_round(team);
    for i in 1..n {
        let j = (me + i) % n;
        post(team, j, area + me * stride, epoch, tag, &[part(j)]);
    }
    for i in 1..n {
        let j = (me + n - i) % n;
        let got = receive(team, area + j * stride, epoch, (tag, block), j, what);
        out.write(j * block, got);
    }
}

/// The most bytes a member sends with its count in a flat [`collect`]. Every receiver copies
/// them out of its slot, lines the sender has just written; beyond this a put into every
/// member's `dest` and a barrier cost less. Measured on this project's 2-vCPU Intel VM
/// (`coll_sweep --only collect`, us per call, 2 runs each; the count exchange, puts and a
/// barrier against data with the counts up to this limit): 2 PEs, 8 B 0.55-0.56 against 0.22,
/// 64 B 0.43-0.46 against 0.41-0.45, 256 B 0.43-0.46 against 0.50-0.53; 4 PEs, 256 B 5.1
/// against 2.4; 8 PEs, 256 B 12.2-12.4 against 6.4. With every block that fits a slot sent
/// with its count, 2 PEs lost from 1 KiB (0.42-0.47 against 0.65-0.68; 4 KiB 0.47-0.50
/// against 1.36).
const COLLECT_INLINE: usize = 256;

/// What a flat [`collect`] learned: where this PE's elements go, how many there are in all,
/// and whether every member's data came with its count (else the members whose data did not
/// fit a slot put it into everyone's `dest`, and all members then take a barrier).
pub(crate) struct Collected {
    /// Elements of the members before this PE.
    pub(crate) before: usize,
    /// Elements of all members.
    pub(crate) total: usize,
    /// This PE's data went with its count.
    pub(crate) mine_inline: bool,
    /// Every member's did.
    pub(crate) all_inline: bool,
}

/// Flat `collect` (teams of up to [`FLAT_MAX`]) in one exchange: every member sends every other
/// its element count, with its data where that is at most [`COLLECT_INLINE`] bytes. `mine` is this
/// PE's data, of `elem`-byte elements; `out(total)` is this PE's `dest`, for `total` elements
/// in all (it checks that they fit). Writes into it this PE's data where it came inline, and
/// every other member's that came inline, at their places in team order.
#[track_caller]
pub(crate) fn collect<'d>(
    team: &Team<'_>,
    mine: &[u8],
    elem: usize,
    out: impl FnOnce(usize) -> RawBytes<'d>,
    what: &str,
) -> Collected {
    let (n, me) = (team.n_pes(), team.my_pe());
    debug_assert!(n <= FLAT_MAX && elem > 0 && mine.len().is_multiple_of(elem));
    let (area, stride, epoch) = a2a_round(team);
    let room = stride - HEADER - 8;
    let count = (mine.len() / elem) as u64;
    let mine_inline = mine.len() <= room.min(COLLECT_INLINE);
    let head = count.to_ne_bytes();
    let parts = [
        Part::from(&head[..]),
        Part::from(if mine_inline { mine } else { &[] }),
    ];
    for i in 1..n {
        post(
            team,
            (me + i) % n,
            area + me * stride,
            epoch,
            Tag::Collect,
            &parts,
        );
    }
    // Every member's count and, where it came inline, its data (in this PE's slot for it).
    let mut got: Vec<(usize, Option<&[u8]>)> = vec![(mine.len() / elem, None); n];
    for i in 1..n {
        let j = (me + n - i) % n;
        let slot = area + j * stride;
        let mut head = None;
        wait_in_collective(team.tp(), Some(&team.group), || {
            head = landed(team, slot, epoch);
            head.is_some()
        });
        let (tag, len) = head.unwrap_or_else(|| unreachable!("the wait ends once it has landed"));
        if tag != Tag::Collect as u32 || !(8..=room + 8).contains(&len) {
            mismatch(team, what, j, tag, len, 8);
        }
        // SAFETY: the message landed (epoch acquired), of `len` bytes, at most the slot's.
        let body = unsafe { payload(team, slot, len) };
        got[j] =
            collect_message(body, elem).unwrap_or_else(|| mismatch(team, what, j, tag, len, 8));
    }
    let before: usize = got[..me].iter().map(|g| g.0).sum();
    let total = got.iter().fold(0usize, |t, g| t.saturating_add(g.0));
    let dest = out(total);
    if mine_inline {
        dest.write(before * elem, mine);
    }
    let mut at = 0;
    for (c, data) in &got {
        if let Some(data) = data {
            dest.write(at * elem, *data);
        }
        at += c;
    }
    Collected {
        before,
        total,
        mine_inline,
        all_inline: mine_inline
            && got
                .iter()
                .enumerate()
                .all(|(j, g)| j == me || g.1.is_some()),
    }
}

/// A flat [`collect`]'s message: the sender's element count, and its data (`count * elem`
/// bytes) when they came with it; `None` unless `body` is a count alone or a count and exactly
/// its data.
fn collect_message(body: &[u8], elem: usize) -> Option<(usize, Option<&[u8]>)> {
    let (count, data) = body.split_first_chunk::<8>()?;
    let count = usize::try_from(u64::from_ne_bytes(*count)).ok()?;
    let bytes = count.checked_mul(elem)?;
    match data.len() {
        0 if bytes > 0 => Some((count, None)),
        len if len == bytes => Some((count, Some(data))),
        _ => None,
    }
}

/// True when [`allgather`] takes `block` bytes per member on a team of `n`.
pub(crate) fn allgather_fits(n: usize, block: usize) -> bool {
    if n <= FLAT_MAX {
        alltoall_fits(n, block)
    } else {
        n.div_ceil(2).saturating_mul(block) <= CHUNK
    }
}

/// Bruck all-gather of `block` bytes per member into `out` (`n * block` bytes, member order),
/// `mine` being this PE's block. `ceil(log2 n)` rounds; the caller checked [`allgather_fits`].
pub(crate) fn allgather(team: &Team<'_>, out: RawBytes<'_>, mine: &[u8], what: &str) {
    let (n, me, block) = (team.n_pes(), team.my_pe(), mine.len());
    debug_assert_eq!(out.len, n * block);
    out.write(me * block, mine);
    if n == 1 {
        return;
    }
    if n <= FLAT_MAX {
        // Flat: everyone's block straight to everyone.
        return exchange(team, Tag::Gather, block, |_| Part::from(mine), out, what);
    }
    let epoch = next_epoch(team.mail_epoch());
    let parity = (epoch & 1) as usize;
    // Blocks `first, first + 1, ..` (wrapping) as at most two byte ranges of `out`.
    let ranges = |first: usize, count: usize| {
        let tail = count.min(n - first);
        [
            first * block..(first + tail) * block,
            0..(count - tail) * block,
        ]
    };
    let (mut dist, mut round) = (1, 0);
    while dist < n {
        // Send the blocks of me .. me + cnt to `me - dist`; receive those of `me + dist` ...
        let cnt = dist.min(n - dist);
        let to = (me + n - dist) % n;
        let from = (me + dist) % n;
        let [a, b] = ranges(me, cnt);
        post(
            team,
            to,
            mail_slot(parity, round),
            epoch,
            Tag::Gather,
            &[out.part(a), out.part(b)],
        );
        let got = receive(
            team,
            mail_slot(parity, round),
            epoch,
            (Tag::Gather, cnt * block),
            from,
            what,
        );
        let [a, b] = ranges(from, cnt);
        let split = a.len();
        out.write(a.start, &got[..split]);
        out.write(b.start, &got[split..]);
        dist <<= 1;
        round += 1;
    }
}

/// True when [`alltoall`] takes `block` bytes per pair on a team of `n` (each
/// sender's slot, [`a2a_stride`], header included, must hold one block).
pub(crate) fn alltoall_fits(n: usize, block: usize) -> bool {
    a2a_stride(n) >= HEADER + block
}

/// Each sender's slot in the all-to-all area of a team of `n`: [`A2A_BYTES`] shared out, cut
/// at cache lines. Fixed for a team, so that no exchange ever reads a slot where another one
/// wrote payload.
pub(crate) fn a2a_stride(n: usize) -> usize {
    (A2A_BYTES / n) & !63
}

/// A new mail epoch for an exchange through the all-to-all slots: `(area, stride, epoch)`, the
/// area of the epoch's parity and each sender's slot size in it.
pub(crate) fn a2a_round(team: &Team<'_>) -> (usize, usize, u64) {
    let epoch = next_epoch(team.mail_epoch());
    (
        A2A + (epoch & 1) as usize * A2A_BYTES,
        a2a_stride(team.n_pes()),
        epoch,
    )
}

/// All-to-all of `block`-byte blocks: block `j` of `source` goes to member `j`, and `out`
/// receives member `j`'s block at position `j`. The caller checked [`alltoall_fits`].
pub(crate) fn alltoall(
    team: &Team<'_>,
    out: RawBytes<'_>,
    source: Part<'_>,
    block: usize,
    what: &str,
) {
    let (n, me) = (team.n_pes(), team.my_pe());
    debug_assert_eq!(out.len, n * block);
    out.write(me * block, source.sub(me * block..(me + 1) * block));
    if n == 1 {
        return;
    }
    let part = |j: usize| source.sub(j * block..(j + 1) * block);
    exchange(team, Tag::AllToAll, block, part, out, what);
}

/// Eager broadcast of up to [`CHUNK`] bytes down a binomial tree through ring slots: the root
/// copies `source` into `out` (unless `keep_root`) and sends `source`; every other member takes
/// the message from its ring, copies it into `out` and forwards it to its children.
pub(crate) fn broadcast(
    team: &Team<'_>,
    out: RawBytes<'_>,
    source: &[u8],
    tree: &Tree,
    keep_root: bool,
    what: &str,
) {
    let tp = team.tp();
    let len = source.len();
    debug_assert!(len <= CHUNK && out.len == len);
    let epoch = next_epoch(team.bcast_epoch());
    let slot = BCAST + (epoch as usize % RING) * SLOT;
    let flat = team.n_pes() <= FLAT_MAX;
    let parent = if flat {
        (team.my_pe() != tree.root).then_some(tree.root)
    } else {
        tree.parent().map(|(p, _)| p)
    };
    match parent {
        None if keep_root => {}
        None => out.write(0, source),
        Some(parent) => {
            let got = receive(team, slot, epoch, (Tag::Broadcast, len), parent, what);
            out.write(0, got);
        }
    }
    // The slot may be reused from here on.
    // The BCAST_DONE word of this PE's team block, accessed atomically by everyone.
    tp.local_word(team.block(BCAST_DONE))
        .store(epoch, Ordering::Release);
    let n = team.n_pes();
    let mut send = |child: usize| {
        wait_ring_slot(team, child, epoch);
        let data = if parent.is_none() {
            Part::from(source)
        } else {
            out.part(0..len)
        };
        post(team, child, slot, epoch, Tag::Broadcast, &[data]);
    };
    if flat {
        if parent.is_none() {
            (1..n).map(|i| (tree.root + i) % n).for_each(&mut send);
        }
    } else {
        tree.children().for_each(|(child, _)| send(child));
    }
}

/// Waits until team PE `child` is done with the ring slot that `epoch` reuses.
fn wait_ring_slot(team: &Team<'_>, child: usize, epoch: u64) {
    let Some(need) = epoch.checked_sub(RING as u64) else {
        return;
    };
    let mut known = team.bcast_known.borrow_mut();
    if known.len() != team.n_pes() {
        *known = vec![0; team.n_pes()];
    }
    if known[child] >= need {
        return;
    }
    let tp = team.tp();
    let peer = tp.peer(team.world_pe(child));
    let at = team.block(BCAST_DONE);
    wait_in_collective(tp, Some(&team.group), || {
        known[child] = if let Some(word) = tp.mapped(peer, at) {
            // SAFETY: the child's BCAST_DONE word in its mapped team block, accessed atomically.
            unsafe { AtomicU64::from_ptr(word.cast()) }.load(Ordering::Acquire)
        } else {
            let mut word = [0u8; 8];
            // SAFETY: the word lies in the peer's team segment; `word` is a local buffer.
            unsafe { tp.get_bytes(peer, at, word.as_mut_ptr(), 8) };
            u64::from_ne_bytes(word)
        };
        known[child] >= need
    });
}

/// All-reduce of one `u64` over the team with a commutative, associative `op`.
pub(crate) fn allreduce_u64(team: &Team<'_>, v: u64, op: fn(u64, u64) -> u64) -> u64 {
    let mut out = [v];
    allreduce(team, &mut out, op, "team split");
    out[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collect_messages_are_a_count_alone_or_with_exactly_its_data() {
        let msg = |count: u64, data: &[u8]| [&count.to_ne_bytes()[..], data].concat();
        assert_eq!(collect_message(&msg(0, &[]), 4), Some((0, Some(&[][..]))));
        assert_eq!(
            collect_message(&msg(2, &[7; 8]), 4),
            Some((2, Some(&[7u8; 8][..])))
        );
        assert_eq!(collect_message(&msg(1000, &[]), 4), Some((1000, None)));
        // Too short, data of another length, a count whose bytes overflow.
        for bad in [
            &[1u8, 2, 3][..],
            &msg(2, &[7; 7]),
            &msg(2, &[7; 9]),
            &msg(1, &[7; 8]),
        ] {
            assert_eq!(collect_message(bad, 4), None, "{bad:?}");
        }
        assert_eq!(collect_message(&msg(u64::MAX, &[]), 4), None);
        // Every split of a short buffer parses or is refused, never panics.
        let buf: Vec<u8> = (0..40).collect();
        for len in 0..buf.len() {
            for elem in 1..9 {
                let _ = collect_message(&buf[..len], elem);
            }
        }
    }

    #[test]
    fn every_slot_lies_in_its_area_and_holds_what_the_exchanges_put_there() {
        for n in 1..=4096 {
            let stride = a2a_stride(n);
            assert!(n * stride <= A2A_BYTES, "{n} slots of {stride} bytes");
            assert!(stride.is_multiple_of(64));
            // What `alltoall_fits` admits fits the slot, header included.
            if alltoall_fits(n, 8) {
                assert!(stride >= HEADER + 8);
            }
            for block in [1, 100, 1000, 4000, 8000] {
                if alltoall_fits(n, block) {
                    assert!(stride >= HEADER + block, "{n} members, {block} bytes");
                }
            }
        }
        assert_eq!(a2a_stride(4), 4 << 10);
    }
}
