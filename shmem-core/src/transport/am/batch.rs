//! A batch of puts: per target PE, the records of the small puts waiting to go to it in one
//! `BATCH` message (`offset`, `len`, then the bytes padded to a word), and the bounds on what
//! waits (per PE and in all). When puts wait and when batches go is `coalesce`'s.

use super::wire::{BATCH_WORDS, MAX_MSG, RECORD_HEAD};
use std::collections::HashMap;

/// Most data bytes of a put that may wait in a batch (see [`coalesces`](super::coalesces)).
/// Over tcp a message costs about the same whatever its size up to a few KiB (a system call
/// or two on both sides, 5-6 us on a quiet machine here), so a stream of 512 B - 8 KiB puts,
/// one message each, moved 0.17 M puts/s against 1-2 M/s for puts of up to 256 B in batches.
pub(crate) const COALESCE_MAX: usize = 8 << 10;
/// A batch goes out once its records take this many bytes: then it holds at most
/// [`MAX_MSG`] bytes (one record more than this).
const BATCH_BYTES: usize = MAX_MSG - RECORD_HEAD - COALESCE_MAX;

/// Most bytes waiting in the batches to all PEs together: past this, puts go at once (after
/// their PE's batch) until a batch is sent. Bounds what a stream of small puts to many PEs
/// holds without a wait: 16 full batches.
const BATCHED_MAX: usize = 16 * BATCH_BYTES;

/// Bytes at the start of every batch, before its records, left for the `BATCH` message's
/// header (which the sender writes there).
pub(super) const HEADER_ROOM: usize = BATCH_WORDS * 8;

/// The puts waiting in batches, per target PE, and their bytes in all.
#[derive(Default)]
pub(super) struct BatchSet {
    pub(super) by_pe: HashMap<usize, Vec<u8>>,
    bytes: usize,
}

/// The room a batch begun by a put of `len` bytes starts with: about [`EXPECTED_RECORDS`]
/// records like it, at least [`FIRST_MIN`] bytes, at most a full batch. A stream of tiny puts
/// to many PEs then holds a few KiB per PE, not a full batch each; a batch of larger puts
/// does not move as it grows.
fn first_capacity(len: usize) -> usize {
    (RECORD_HEAD + len.next_multiple_of(8))
        .saturating_mul(EXPECTED_RECORDS)
        .clamp(FIRST_MIN, BATCH_BYTES + RECORD_HEAD + COALESCE_MAX)
}
const EXPECTED_RECORDS: usize = 64;
const FIRST_MIN: usize = 4 << 10;

impl BatchSet {
    /// Appends a record (a put of `data` to `offset`) to `pe`'s batch; returns the batch, taken
    /// out, once it holds [`BATCH_BYTES`]. Inline: once per coalesced put, from `coalesce`.
    #[inline]
    pub(super) fn append(&mut self, pe: usize, offset: usize, data: &[u8]) -> Option<Vec<u8>> {
        let recs = self.by_pe.entry(pe).or_insert_with(|| {
            // Room for the message's header first: the batch goes out as it is, uncopied.
            let mut v = Vec::with_capacity(HEADER_ROOM + first_capacity(data.len()));
            v.resize(HEADER_ROOM, 0);
            v
        });
        let before = recs.len();
        recs.extend_from_slice(&(offset as u64).to_le_bytes());
        recs.extend_from_slice(&(data.len() as u64).to_le_bytes());
        recs.extend_from_slice(data);
        recs.resize(recs.len().next_multiple_of(8), 0);
        self.bytes += recs.len() - before;
        if recs.len() - HEADER_ROOM >= BATCH_BYTES {
            return self.remove(pe);
        }
        None
    }

    /// Takes `pe`'s batch out, if it has one: [`HEADER_ROOM`] bytes for the message's header,
    /// then the records.
    pub(super) fn remove(&mut self, pe: usize) -> Option<Vec<u8>> {
        let recs = self.by_pe.remove(&pe)?;
        self.bytes -= recs.len() - HEADER_ROOM;
        Some(recs)
    }

    /// Takes every batch out: (PE, header room and records, as [`remove`](Self::remove)).
    pub(super) fn drain(&mut self) -> Vec<(usize, Vec<u8>)> {
        self.bytes = 0;
        self.by_pe.drain().collect()
    }

    /// Whether another put may wait: fewer than [`BATCHED_MAX`] bytes wait now.
    pub(super) fn has_room(&self) -> bool {
        self.bytes < BATCHED_MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::am::wire::tests::batch;

    #[test]
    fn batches_are_sent_when_full_and_bounded_across_pes() {
        let mut set = BatchSet::default();
        // The records the sender appends are the ones a receiver parses.
        assert_eq!(set.append(3, 40, &[1, 2, 3]), None);
        assert_eq!(set.append(3, 0, &[4; 8]), None);
        let recs = |b: Option<Vec<u8>>| b.map(|v| v[HEADER_ROOM..].to_vec());
        assert_eq!(
            recs(set.remove(3)),
            Some(batch(&[(40, &[1, 2, 3]), (0, &[4; 8])]))
        );
        assert_eq!((set.bytes, set.remove(3)), (0, None));
        // One PE's batch is taken out once it reaches BATCH_BYTES: 7 records of 8 KiB + 16,
        // within one message's data.
        let data = [7u8; COALESCE_MAX];
        let per = RECORD_HEAD + COALESCE_MAX;
        for i in 1..BATCH_BYTES.div_ceil(per) {
            assert_eq!(set.append(1, 0, &data), None, "record {i}");
            assert_eq!(set.bytes, i * per);
        }
        let full = set.append(1, 0, &data).expect("a full batch");
        assert_eq!(
            (full.len() - HEADER_ROOM, set.bytes),
            (BATCH_BYTES.div_ceil(per) * per, 0)
        );
        assert!(full.len() - HEADER_ROOM <= MAX_MSG, "{} bytes", full.len());
        // Across PEs: room until BATCHED_MAX bytes wait, none from there until one goes.
        let mut pe = 0;
        while set.has_room() {
            for _ in 0..BATCH_BYTES / per - 1 {
                assert_eq!(set.append(pe, 8, &data), None);
            }
            pe += 1;
        }
        assert_eq!(pe, BATCHED_MAX.div_ceil((BATCH_BYTES / per - 1) * per));
        assert!(set.bytes >= BATCHED_MAX && set.bytes < BATCHED_MAX + BATCH_BYTES);
        let one = set.remove(0).expect("PE 0's batch");
        assert!(
            set.has_room(),
            "{} bytes wait after {}",
            set.bytes,
            one.len()
        );
        // A batch starts with room for about 64 records like its first, within bounds.
        assert_eq!(first_capacity(8), FIRST_MIN);
        assert_eq!(first_capacity(500), 64 * (16 + 504));
        assert_eq!(first_capacity(COALESCE_MAX), BATCH_BYTES + per);
        let rest = set.drain();
        assert_eq!((rest.len(), set.bytes, set.has_room()), (pe - 1, 0, true));
    }
}
