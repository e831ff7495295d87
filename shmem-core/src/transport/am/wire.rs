//! The protocol's messages on the wire: their kinds (active message ids) and header layouts,
//! building a message and splitting off an ask word, runs of evenly spaced elements (one
//! message's worth), and the checks of every incoming message against this PE's memory. A check
//! either refuses the message ([`Refusal`]) or returns a plan that writes only what it checked;
//! nothing is written before every check of a message has passed.
//!
//! Every header field is a little-endian `u64` (see the protocol in `am/mod.rs`).

use crate::mem::dataseg::DATA_OFFSET;
use crate::mem::word::SignalKind;
use std::ptr;
use std::sync::atomic::AtomicU64;

/// Most data bytes in one message (a bound on what a request can make a target send, too).
pub(crate) const MAX_MSG: usize = 64 << 10;

/// Active message ids (one worker, so any distinct small numbers do).
pub(super) const AM_PUT: u16 = 0x51;
pub(super) const AM_ACK: u16 = 0x52;
pub(super) const AM_GET_REQ: u16 = 0x53;
pub(super) const AM_GET_RESP: u16 = 0x54;
pub(super) const AM_SIGNAL: u16 = 0x55;
pub(super) const AM_FLAG: u16 = 0x56;
pub(super) const AM_SYNC: u16 = 0x57;
pub(super) const AM_BATCH: u16 = 0x58;

/// Header lengths, in words.
pub(super) const PUT_WORDS: usize = 5;
pub(super) const ACK_WORDS: usize = 2;
pub(super) const SYNC_WORDS: usize = 2;
pub(super) const REQ_WORDS: usize = 7;
pub(super) const RESP_WORDS: usize = 5;
pub(super) const SIGNAL_WORDS: usize = 6;
pub(super) const BATCH_WORDS: usize = 1;

/// A record's header: the target offset and the length, one word each.
pub(super) const RECORD_HEAD: usize = 16;

/// Whether elements of `size` bytes go packed in messages: at least one fits in a message
/// (and a zero-sized element needs no message at all).
#[inline]
pub(crate) fn fits(size: usize) -> bool {
    (1..=MAX_MSG).contains(&size)
}

/// Header words as bytes, followed by room for `data` bytes (filled by the caller).
pub(super) fn message(words: &[u64], data: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(words.len() * 8 + data);
    for w in words {
        v.extend_from_slice(&w.to_le_bytes());
    }
    v
}

/// A counted message's header of `n` words, and the count it asks an ack for when the sender
/// added one more word (see "Acknowledgements" in the module docs).
pub(super) fn split_ask(header: &[u8], n: usize) -> (&[u8], Option<u64>) {
    if header.len() == (n + 1) * 8 {
        let (head, ask) = header.split_at(n * 8);
        (head, words::<1>(ask).map(|[w]| w))
    } else {
        (header, None)
    }
}

/// The header's words, if it has exactly `N`.
pub(super) fn words<const N: usize>(h: &[u8]) -> Option<[u64; N]> {
    if h.len() != N * 8 {
        return None;
    }
    let mut out = [0u64; N];
    for (w, b) in out.iter_mut().zip(h.chunks_exact(8)) {
        *w = u64::from_le_bytes(b.try_into().ok()?);
    }
    Some(out)
}

/// A send that UCX failed after accepting it: the transfer cannot complete.
pub(super) fn send_failed(e: shmem_ucx::Error) {
    crate::error::eprint_line(format_args!("shmem: a strided transfer failed in UCX: {e}"));
    std::process::abort();
}

/// Checks that `count` elements of `size` bytes at `offset`, `stride` bytes apart, lie inside
/// one of this PE's regions: a team segment, a heap and a data segment given as (base, length).
/// Offsets below the team segment's length name its bytes; the heap's own start at that length,
/// the data segment's at [`DATA_OFFSET`]. Returns the address of `offset` and `count * size`.
fn in_regions(
    [team, heap, data]: [(*mut u8, usize); 3],
    size: u64,
    count: u64,
    offset: u64,
    stride: u64,
) -> Option<(*mut u8, usize)> {
    let (size, count) = (usize::try_from(size).ok()?, usize::try_from(count).ok()?);
    let (offset, stride) = (usize::try_from(offset).ok()?, usize::try_from(stride).ok()?);
    if size == 0 || count == 0 {
        return None;
    }
    let ((base, total), offset) = match offset.checked_sub(DATA_OFFSET) {
        None if offset < team.1 => (team, offset),
        None => (heap, offset),
        Some(at) => (data, at),
    };
    let end = stride
        .checked_mul(count - 1)?
        .checked_add(offset)?
        .checked_add(size)?;
    (end <= total).then_some(())?;
    // offset < end <= total: inside the region that starts at `base`.
    Some((base.wrapping_add(offset), count.checked_mul(size)?))
}

/// A run of elements whose target offsets are evenly spaced: one message's worth.
pub(super) struct Run {
    pub(super) offset: usize,
    pub(super) stride: Option<usize>,
    pub(super) count: usize,
}

impl Run {
    /// Whether the element at `off` continues the run.
    pub(super) fn takes(&self, off: usize, per_msg: usize) -> bool {
        if self.count >= per_msg || off < self.offset {
            return false;
        }
        match self.stride {
            None => true,
            Some(s) => Some(off) == s.checked_mul(self.count).map(|d| self.offset + d),
        }
    }

    pub(super) fn push(&mut self, off: usize) {
        if self.stride.is_none() {
            self.stride = Some(off - self.offset);
        }
        self.count += 1;
    }
}

/// This PE's memory as the handlers see it: team segment, heap and data segment, each as
/// (base, length) (see [`in_regions`]).
pub(super) type Regions = [(*mut u8, usize); 3];

/// Why a message was refused: the PE it says it came from (`u64::MAX` when its header could
/// not be read) and what is wrong with it.
#[derive(Debug)]
pub(super) struct Refusal {
    pub(super) from: u64,
    pub(super) what: String,
}

pub(super) fn refuse<T>(from: u64, what: String) -> std::result::Result<T, Refusal> {
    Err(Refusal { from, what })
}

/// A checked `PUT`: `data` scattered as elements of `size` bytes, `stride` bytes apart, from
/// `at`.
pub(super) struct PutPlan<'a> {
    pub(super) from: u64,
    at: *mut u8,
    size: usize,
    stride: usize,
    pub(super) data: &'a [u8],
}

/// Checks a `PUT` message against this PE's memory.
pub(super) fn check_put<'a>(
    regions: Regions,
    header: &[u8],
    data: Option<&'a [u8]>,
) -> std::result::Result<PutPlan<'a>, Refusal> {
    let Some([from, size, count, offset, stride]) = words::<PUT_WORDS>(header) else {
        return refuse(u64::MAX, format!("put header of {} bytes", header.len()));
    };
    let Some(data) = data else {
        return refuse(from, "put data not sent eagerly".into());
    };
    let Some((at, bytes)) = in_regions(regions, size, count, offset, stride) else {
        return refuse(
            from,
            format!(
                "put of {count} x {size} bytes at heap offset {offset}, stride {stride}, \
                 outside this PE's heap of {} bytes",
                regions[1].1
            ),
        );
    };
    if bytes != data.len() {
        return refuse(
            from,
            format!("put of {count} x {size} bytes carries {} bytes", data.len()),
        );
    }
    // Both fit in usize (checked by `in_regions`).
    Ok(PutPlan {
        from,
        at,
        size: size as usize,
        stride: stride as usize,
        data,
    })
}

impl PutPlan<'_> {
    /// Writes the elements.
    ///
    /// # Safety
    /// The plan comes from [`check_put`] with regions that are live, writable memory.
    pub(super) unsafe fn apply(&self) {
        for (k, elem) in self.data.chunks_exact(self.size).enumerate() {
            // SAFETY: k*stride + size lies inside the region `at` starts in (checked by
            // `in_regions`; caller's contract); the source is the message.
            unsafe {
                ptr::copy_nonoverlapping(elem.as_ptr(), self.at.add(k * self.stride), self.size)
            };
        }
    }
}

/// Checks a `BATCH [from]` message: its data is records of a put each (`offset`, `len`, then
/// `len` bytes padded to a word), every one inside this PE's memory, filling the data exactly.
/// Returns the sender and the records.
pub(super) fn check_batch<'a>(
    regions: Regions,
    header: &[u8],
    data: Option<&'a [u8]>,
) -> std::result::Result<(u64, &'a [u8]), Refusal> {
    let Some([from]) = words::<BATCH_WORDS>(header) else {
        return refuse(u64::MAX, format!("batch header of {} bytes", header.len()));
    };
    let Some(data) = data else {
        return refuse(from, "batch data not sent eagerly".into());
    };
    records(regions, from, data, |_, _| {})?;
    Ok((from, data))
}

/// Walks the records of a batch from `from`, calling `each(at, bytes)` for every one that
/// checks; refuses at the first that does not.
fn records<'a>(
    regions: Regions,
    from: u64,
    data: &'a [u8],
    mut each: impl FnMut(*mut u8, &'a [u8]),
) -> std::result::Result<(), Refusal> {
    let (mut rest, mut k) = (data, 0usize);
    while !rest.is_empty() {
        let Some((head, tail)) = rest.split_at_checked(RECORD_HEAD) else {
            return refuse(
                from,
                format!(
                    "batch record {k}: {} bytes left, less than a header",
                    rest.len()
                ),
            );
        };
        let Some([offset, len]) = words::<2>(head) else {
            unreachable!("a record header is two words");
        };
        let room = usize::try_from(len)
            .ok()
            .and_then(|l| l.checked_next_multiple_of(8))
            .filter(|&r| r <= tail.len());
        let Some(room) = room else {
            return refuse(
                from,
                format!(
                    "batch record {k} of {len} bytes, with {} bytes left",
                    tail.len()
                ),
            );
        };
        let Some((at, n)) = in_regions(regions, len, 1, offset, 0) else {
            return refuse(
                from,
                format!(
                    "batch record {k}: put of {len} bytes at heap offset {offset}, outside this \
                     PE's heap of {} bytes",
                    regions[1].1
                ),
            );
        };
        each(at, &tail[..n]);
        rest = &tail[room..];
        k += 1;
    }
    Ok(())
}

/// Writes the records of a batch that [`check_batch`] accepted.
///
/// # Safety
/// `regions` are live, writable memory, the same that `data` was checked against.
pub(super) unsafe fn apply_batch(regions: Regions, data: &[u8]) {
    let _ = records(regions, 0, data, |at, bytes| {
        // SAFETY: `bytes.len()` bytes at `at` lie inside one region (checked by `in_regions`;
        // caller's contract); the source is the message.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), at, bytes.len()) }
    });
}

/// A checked `SIGNAL` or `FLAG`: `data` copied to `at` (none when empty), then the word at
/// `word` updated.
pub(super) struct SignalPlan<'a> {
    pub(super) from: u64,
    at: Option<*mut u8>,
    pub(super) data: &'a [u8],
    word: *mut u8,
    kind: SignalKind,
    value: u64,
}

/// Checks a `SIGNAL` or `FLAG` message against this PE's memory (every check before anything
/// is written).
pub(super) fn check_signal<'a>(
    regions: Regions,
    header: &[u8],
    data: Option<&'a [u8]>,
) -> std::result::Result<SignalPlan<'a>, Refusal> {
    let Some([from, offset, len, signal, kind, value]) = words::<SIGNAL_WORDS>(header) else {
        return refuse(
            u64::MAX,
            format!("put-with-signal header of {} bytes", header.len()),
        );
    };
    let Some(data) = data else {
        return refuse(from, "put-with-signal data not sent eagerly".into());
    };
    if len != data.len() as u64 {
        return refuse(
            from,
            format!("put with signal of {len} bytes carries {}", data.len()),
        );
    }
    let at = if data.is_empty() {
        None
    } else {
        let Some((at, _)) = in_regions(regions, len, 1, offset, 0) else {
            return refuse(
                from,
                format!(
                    "put with signal of {len} bytes at heap offset {offset}, outside this \
                     PE's heap of {} bytes",
                    regions[1].1
                ),
            );
        };
        Some(at)
    };
    let word = in_regions(regions, 8, 1, signal, 0)
        .map(|(p, _)| p)
        .filter(|p| (*p as usize).is_multiple_of(8));
    let Some(word) = word else {
        return refuse(
            from,
            format!("signal word at heap offset {signal} is not a word of this PE's heap"),
        );
    };
    let Some(kind) = SignalKind::from_wire(kind) else {
        return refuse(from, format!("unknown signal operation {kind}"));
    };
    Ok(SignalPlan {
        from,
        at,
        data,
        word,
        kind,
        value,
    })
}

impl SignalPlan<'_> {
    /// Copies the data, then updates the signal word.
    ///
    /// # Safety
    /// The plan comes from [`check_signal`] with regions that are live, writable memory whose
    /// 8-byte words are accessed only atomically where they are signal words.
    pub(super) unsafe fn apply(&self) {
        if let Some(at) = self.at {
            // SAFETY: `data.len()` bytes at `at` lie in one region (checked by `in_regions`;
            // caller's contract); the source is the message.
            unsafe { ptr::copy_nonoverlapping(self.data.as_ptr(), at, self.data.len()) };
        }
        // SAFETY: an aligned word of a region (checked), which PEs update only atomically
        // (signal words and flags).
        let word = unsafe { AtomicU64::from_ptr(self.word.cast()) };
        self.kind.apply(word, self.value);
    }
}

/// A checked `GET_REQ`: the response's header words and where its elements are read.
pub(super) struct GetReqPlan {
    head: [u64; RESP_WORDS],
    at: *const u8,
    size: usize,
    count: usize,
    stride: usize,
    bytes: usize,
}

/// Checks a `GET_REQ` message against this PE's memory; `my_pe` goes in the response.
pub(super) fn check_get_req(
    regions: Regions,
    my_pe: usize,
    header: &[u8],
) -> std::result::Result<GetReqPlan, Refusal> {
    let Some([from, size, count, offset, stride, token, first]) = words::<REQ_WORDS>(header) else {
        return refuse(
            u64::MAX,
            format!("get request header of {} bytes", header.len()),
        );
    };
    let found = in_regions(regions, size, count, offset, stride);
    let Some((at, bytes)) = found.filter(|&(_, b)| b <= MAX_MSG.max(size as usize)) else {
        return refuse(
            from,
            format!(
                "get of {count} x {size} bytes at heap offset {offset}, stride {stride}: \
                 outside this PE's heap of {} bytes or over {MAX_MSG} bytes",
                regions[1].1
            ),
        );
    };
    // All three fit in usize (checked by `in_regions`).
    Ok(GetReqPlan {
        head: [my_pe as u64, size, count, token, first],
        at,
        size: size as usize,
        count: count as usize,
        stride: stride as usize,
        bytes,
    })
}

impl GetReqPlan {
    /// The response: its header words, then the elements.
    ///
    /// # Safety
    /// The plan comes from [`check_get_req`] with regions that are live, readable memory.
    pub(super) unsafe fn response(&self) -> Vec<u8> {
        let mut resp = message(&self.head, self.bytes);
        for k in 0..self.count {
            // SAFETY: inside one region (checked by `in_regions`; caller's contract); a plain
            // read of bytes that others may write concurrently, as any get.
            let elem =
                unsafe { std::slice::from_raw_parts(self.at.add(k * self.stride), self.size) };
            resp.extend_from_slice(elem);
        }
        resp
    }
}

/// A `GET_RESP` header: `[from, size, count, token, first]`.
pub(super) fn get_resp_header(header: &[u8]) -> std::result::Result<[u64; RESP_WORDS], Refusal> {
    words::<RESP_WORDS>(header).ok_or_else(|| Refusal {
        from: u64::MAX,
        what: format!("get response header of {} bytes", header.len()),
    })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    #[test]
    fn heap_bounds_are_checked_without_overflow() {
        let heap = ptr::without_provenance_mut::<u8>(0x1000);
        let in_heap = |total, size, count, offset, stride| {
            in_regions(
                [(ptr::null_mut(), 0), (heap, total), (ptr::null_mut(), 0)],
                size,
                count,
                offset,
                stride,
            )
            .map(|(at, bytes)| (at as usize - heap as usize, bytes))
        };
        assert_eq!(in_heap(100, 8, 3, 0, 16), Some((0, 24)));
        assert_eq!(in_heap(100, 8, 3, 8, 16), Some((8, 24)));
        assert_eq!(in_heap(40, 8, 3, 0, 16), Some((0, 24)));
        assert_eq!(in_heap(39, 8, 3, 0, 16), None);
        assert_eq!(in_heap(100, 0, 3, 0, 16), None);
        assert_eq!(in_heap(100, 8, 0, 0, 16), None);
        assert_eq!(in_heap(100, 8, 2, u64::MAX - 4, 1), None);
        assert_eq!(in_heap(100, 8, u64::MAX, 0, u64::MAX), None);
        assert_eq!(in_heap(100, u64::MAX, 1, 0, 0), None);
        assert_eq!(in_heap(usize::MAX, 1 << 40, 1 << 40, 0, 1 << 40), None);
    }

    #[test]
    fn data_segment_offsets_are_checked_against_the_segment() {
        let (heap, data) = (
            ptr::without_provenance_mut::<u8>(0x1000),
            ptr::without_provenance_mut::<u8>(0x9000),
        );
        let at = |size, count, offset: usize, stride| {
            in_regions(
                [(ptr::null_mut(), 0), (heap, 100), (data, 64)],
                size,
                count,
                offset as u64,
                stride,
            )
            .map(|(p, bytes)| (p as usize, bytes))
        };
        assert_eq!(at(8, 2, DATA_OFFSET + 8, 16), Some((0x9008, 16)));
        assert_eq!(at(8, 4, DATA_OFFSET, 16), Some((0x9000, 32)));
        assert_eq!(at(8, 4, DATA_OFFSET + 16, 16), None, "past the segment");
        assert_eq!(
            at(8, 1, DATA_OFFSET - 8, 0),
            None,
            "between heap and segment"
        );
        // A job without a data segment accepts no offset in it.
        assert_eq!(
            in_regions(
                [(ptr::null_mut(), 0), (heap, 100), (ptr::null_mut(), 0)],
                8,
                1,
                DATA_OFFSET as u64,
                0
            ),
            None
        );
    }

    #[test]
    fn team_segment_offsets_are_checked_against_the_segment() {
        // Offsets 0..32 name the team segment, 32.. the heap (whose first 32 bytes are unused).
        let (team, heap) = (
            ptr::without_provenance_mut::<u8>(0x5000),
            ptr::without_provenance_mut::<u8>(0x1000),
        );
        let at = |size, count, offset: usize, stride| {
            in_regions(
                [(team, 32), (heap, 100), (ptr::null_mut(), 0)],
                size,
                count,
                offset as u64,
                stride,
            )
            .map(|(p, bytes)| (p as usize, bytes))
        };
        assert_eq!(at(8, 1, 0, 0), Some((0x5000, 8)));
        assert_eq!(at(8, 2, 8, 16), Some((0x5008, 16)));
        assert_eq!(at(8, 4, 0, 8), Some((0x5000, 32)));
        assert_eq!(
            at(8, 1, 32, 0),
            Some((0x1020, 8)),
            "the heap's first offset"
        );
        assert_eq!(at(8, 2, 16, 16), None, "from the segment into the heap");
        assert_eq!(at(8, 1, 28, 0), None, "straddling the segment's end");
        assert_eq!(at(8, 1, 96, 0), None, "past the heap");
    }

    /// A header of these words (for the tests of the other files too: this module is visible
    /// to `am` only).
    pub(crate) fn header(ws: &[u64]) -> Vec<u8> {
        message(ws, 0)
    }

    /// Records of a batch: (offset, bytes) each.
    pub(crate) fn batch(recs: &[(u64, &[u8])]) -> Vec<u8> {
        let mut v = Vec::new();
        for (off, bytes) in recs {
            v.extend_from_slice(&off.to_le_bytes());
            v.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            v.extend_from_slice(bytes);
            v.resize(v.len().next_multiple_of(8), 0);
        }
        v
    }

    #[test]
    fn headers_round_trip_and_lengths_are_exact() {
        let m = message(&[1, 2, 3, 4, 5], 0);
        assert_eq!(words::<5>(&m), Some([1, 2, 3, 4, 5]));
        assert_eq!(words::<4>(&m), None);
        assert_eq!(words::<5>(&m[..39]), None);
    }

    #[test]
    fn runs_split_at_breaks_in_the_stride_and_at_the_size_cap() {
        let mut r = Run {
            offset: 100,
            stride: None,
            count: 1,
        };
        assert!(!r.takes(99, 10));
        assert!(r.takes(116, 10));
        r.push(116);
        assert!(r.takes(132, 10));
        assert!(!r.takes(133, 10));
        r.push(132);
        assert!(!r.takes(148, 3));
    }
}
