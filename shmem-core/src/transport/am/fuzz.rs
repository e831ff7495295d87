//! [`FuzzPe`]: a receiving PE for the fuzz target `strided_am` (as `fuzzing::StridedPe`) and the
//! unit tests, which runs the handlers' checks and writes on memory of its own instead of a
//! running job's, and returns the reply a handler would send.

use super::get::GetSlot;
use super::ledger::{Ledger, units};
use super::wire::{
    AM_ACK, AM_BATCH, AM_FLAG, AM_GET_REQ, AM_GET_RESP, AM_PUT, AM_SIGNAL, AM_SYNC, BATCH_WORDS,
    PUT_WORDS, Refusal, Regions, SIGNAL_WORDS, apply_batch, check_batch, check_get_req, check_put,
    check_signal, get_resp_header, message, refuse, split_ask,
};
use crate::mem::dataseg::DATA_OFFSET;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A receiving PE for the fuzz targets: the checks and writes of the handlers (`handlers`),
/// applied to memory of its own instead of a running job's. Not part of the API.
#[doc(hidden)]
pub struct FuzzPe {
    my_pe: usize,
    /// Team segment, heap and data segment (8-byte aligned).
    mem: [Vec<u64>; 3],
    /// The acknowledgement counts, as a running PE keeps them.
    ledger: Ledger,
    /// The one strided get in progress, with token 1: its slot and its destination buffer.
    get: Option<(GetSlot, Vec<u8>)>,
}

impl FuzzPe {
    /// A PE `my_pe` of `n_pes` with a team segment, heap and data segment of these many 8-byte
    /// words (the heap's offsets start after the team segment's, the data segment's at
    /// [`DATA_OFFSET`]).
    pub fn new(my_pe: usize, n_pes: usize, words: [usize; 3]) -> FuzzPe {
        FuzzPe {
            my_pe,
            mem: words.map(|n| vec![0u64; n]),
            ledger: Ledger::new(n_pes),
            get: None,
        }
    }

    /// The offset at which the data segment starts.
    pub const DATA_OFFSET: u64 = DATA_OFFSET as u64;

    /// The bytes of the team segment, heap and data segment.
    pub fn memory(&self) -> [&[u8]; 3] {
        self.mem.each_ref().map(|m| {
            // SAFETY: a live Vec<u64>'s bytes, read as bytes (any bit pattern is a u8).
            unsafe { std::slice::from_raw_parts(m.as_ptr().cast::<u8>(), m.len() * 8) }
        })
    }

    fn regions(&mut self) -> Regions {
        self.mem
            .each_mut()
            .map(|m| (m.as_mut_ptr().cast::<u8>(), m.len() * 8))
    }

    /// Counts a message of `data` bytes sent to `pe` (ignored past the job's PEs).
    pub fn sent(&mut self, pe: usize, data: usize) {
        if pe < self.ledger.n_pes {
            self.ledger.count_sent(pe, units(data));
        }
    }

    /// Units sent to `pe` and not acknowledged yet (0 past the job's PEs).
    pub fn unacked(&self, pe: usize) -> u64 {
        if pe < self.ledger.n_pes {
            self.ledger.unacked(pe)
        } else {
            0
        }
    }

    /// Starts a strided get (token 1) of `count` elements of `size` bytes (at least 1, as
    /// `get` requires) from `pe`, replacing the one in progress.
    pub fn start_get(&mut self, pe: usize, size: usize, count: usize) {
        let size = size.max(1);
        let mut buf = vec![0u8; size.saturating_mul(count)];
        let base = buf.as_mut_ptr();
        let dst = (0..count).map(|k| base.wrapping_add(k * size)).collect();
        let slot = GetSlot {
            from_pe: pe,
            size,
            dst,
            claimed: AtomicUsize::new(0),
            received: AtomicUsize::new(0),
        };
        self.get = Some((slot, buf));
    }

    /// The destination buffer of the get in progress, and whether every element arrived.
    pub fn got(&self) -> Option<(&[u8], bool)> {
        let (slot, buf) = self.get.as_ref()?;
        Some((buf, slot.received.load(Ordering::Acquire) == slot.dst.len()))
    }

    /// Delivers active message `id` (the ids are 0x51 put, 0x52 ack, 0x53 get request, 0x54 get
    /// response, 0x55 signal, 0x56 flag, 0x57 sync, 0x58 batch) with `header` and `data`
    /// (`None`: not sent eagerly). Returns the reply the handler would send (an ack, a get
    /// response), or the message that would end this PE.
    pub fn receive(
        &mut self,
        id: u16,
        header: &[u8],
        data: Option<&[u8]>,
    ) -> std::result::Result<Option<Vec<u8>>, String> {
        let regions = self.regions();
        let me = self.my_pe as u64;
        let ack = |n: Option<u64>| n.map(|n| message(&[me, n], 0));
        let ledger = &self.ledger;
        let r = match id {
            AM_PUT => {
                let (header, ask) = split_ask(header, PUT_WORDS);
                check_put(regions, header, data)
                    .and_then(|p| Ok((ledger.sender(p.from)?, p)))
                    .map(|(from, p)| {
                        // SAFETY: checked against this PE's own buffers.
                        unsafe { p.apply() };
                        ack(ledger.receive_counted(from, p.data.len(), ask))
                    })
            }
            AM_BATCH => {
                let (header, ask) = split_ask(header, BATCH_WORDS);
                check_batch(regions, header, data)
                    .and_then(|(f, d)| Ok((ledger.sender(f)?, d)))
                    .map(|(from, d)| {
                        // SAFETY: checked against this PE's own buffers.
                        unsafe { apply_batch(regions, d) };
                        ack(ledger.receive_counted(from, d.len(), ask))
                    })
            }
            AM_SIGNAL | AM_FLAG => {
                let (header, ask) = if id == AM_SIGNAL {
                    split_ask(header, SIGNAL_WORDS)
                } else {
                    (header, None)
                };
                check_signal(regions, header, data)
                    .and_then(|p| {
                        let from = if id == AM_SIGNAL {
                            Some(ledger.sender(p.from)?)
                        } else {
                            None
                        };
                        Ok((from, p))
                    })
                    .map(|(from, p)| {
                        // SAFETY: checked against this PE's own buffers, which nothing else
                        // accesses.
                        unsafe { p.apply() };
                        ack(from.and_then(|f| ledger.receive_counted(f, p.data.len(), ask)))
                    })
            }
            AM_ACK => ledger.take_ack(header).map(|()| None),
            AM_SYNC => ledger.take_sync(header).map(|(_, n)| ack(n)),
            AM_GET_REQ => check_get_req(regions, self.my_pe, header).map(|p| {
                // SAFETY: checked against this PE's own buffers.
                Some(unsafe { p.response() })
            }),
            AM_GET_RESP => get_resp_header(header).and_then(|head| {
                let [from, _, _, token, first] = head;
                let data = data.ok_or_else(|| Refusal {
                    from,
                    what: "get response not sent eagerly".into(),
                })?;
                let slot = match &self.get {
                    Some((slot, _)) if token == 1 => slot,
                    _ => return refuse(from, format!("get response for unknown request {token}")),
                };
                let n = slot.claim(head, data.len())?;
                // SAFETY: claimed; the destinations point into `self.get`'s buffer, live.
                unsafe { slot.write(first, data, n) };
                Ok(None)
            }),
            _ => return Err(format!("no handler for active message {id:#x}")),
        };
        r.map_err(|r| format!("from PE {}: {}", r.from, r.what))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::am::wire::tests::{batch, header};

    #[test]
    fn a_receiving_pe_applies_checked_messages_and_refused_ones_write_nothing() {
        // Team segment of 2 words (offsets 0..16), heap of 16 words (offsets 16..128), data
        // segment of 4 words.
        let mut pe = FuzzPe::new(1, 4, [2, 16, 4]);
        let data: Vec<u8> = (1..=24).collect();
        // A put of 3 x 8 bytes, 16 apart, at heap offset 32; not acknowledged by itself.
        let reply = pe.receive(AM_PUT, &header(&[2, 8, 3, 32, 16]), Some(&data));
        assert_eq!(reply, Ok(None));
        let heap = pe.memory()[1].to_vec();
        assert_eq!(&heap[32..40], &data[..8]);
        assert_eq!(&heap[48..56], &data[8..16]);
        assert_eq!(&heap[64..72], &data[16..]);
        // The same elements read back by a get request.
        let resp = pe
            .receive(AM_GET_REQ, &header(&[2, 8, 3, 32, 16, 5, 0]), None)
            .expect("in the heap")
            .expect("a response");
        assert_eq!(resp, [message(&[1, 8, 3, 5, 0], 0), data.clone()].concat());
        // Into the team and data segments.
        pe.receive(AM_PUT, &header(&[2, 8, 1, 8, 0]), Some(&data[..8]))
            .expect("in the team segment");
        assert_eq!(&pe.memory()[0][8..], &data[..8]);
        let at = DATA_OFFSET as u64 + 24;
        pe.receive(AM_PUT, &header(&[2, 8, 1, at, 0]), Some(&data[..8]))
            .expect("in the data segment");
        assert_eq!(&pe.memory()[2][24..], &data[..8]);
        // A put with signal, then a flag (neither acknowledged by itself).
        let reply = pe.receive(AM_SIGNAL, &header(&[0, 80, 4, 120, 1, 5]), Some(&data[..4]));
        assert_eq!(reply, Ok(None));
        assert_eq!(&pe.memory()[1][80..84], &data[..4]);
        assert_eq!(
            pe.receive(AM_FLAG, &header(&[0, 0, 0, 120, 2, 3]), Some(&[])),
            Ok(None)
        );
        assert_eq!(pe.memory()[1][120], 5, "max(5, 3)");

        let before: Vec<Vec<u8>> = pe.memory().iter().map(|m| m.to_vec()).collect();
        let refused = [
            (AM_PUT, header(&[2, 8, 3, 112, 16]), Some(&data[..])),
            (AM_PUT, header(&[2, 8, 3, 32, 16]), Some(&data[..23])),
            (AM_PUT, header(&[2, 8, 3, 32, 16]), None),
            (AM_PUT, header(&[2, 8, 3, 32]), Some(&data[..])),
            (AM_PUT, header(&[2, 8, 2, 8, 8]), Some(&data[..16])),
            // Data in the heap, but an unknown signal operation: nothing is written.
            (AM_SIGNAL, header(&[0, 80, 4, 120, 9, 5]), Some(&data[..4])),
            (AM_SIGNAL, header(&[0, 80, 4, 121, 1, 5]), Some(&data[..4])),
            (AM_SIGNAL, header(&[0, 80, 5, 120, 1, 5]), Some(&data[..4])),
            (AM_GET_REQ, header(&[2, 8, 3, 112, 16, 5, 0]), None),
            (AM_ACK, header(&[2, 1]), None),
            (AM_ACK, header(&[9, 1]), None),
            (AM_SYNC, header(&[4, 1]), None),
            (AM_SYNC, header(&[2]), None),
            // A put that names a sender outside the job writes nothing.
            (AM_PUT, header(&[4, 8, 1, 32, 0]), Some(&data[..8])),
            (AM_GET_RESP, header(&[2, 8, 1, 1, 0]), Some(&data[..8])),
        ];
        for (id, h, d) in refused {
            let e = pe.receive(id, &h, d).expect_err("refused");
            assert!(e.starts_with("from PE "), "{e}");
            assert_eq!(pe.memory().map(|m| m.to_vec()).to_vec(), before, "{e}");
        }
        // Acks say how many of the messages sent were handled, never more than were sent; a
        // late (smaller) one changes nothing.
        pe.sent(2, 8);
        pe.sent(2, 8);
        let two = 2 * units(8);
        assert_eq!(pe.unacked(2), two);
        assert_eq!(pe.receive(AM_ACK, &header(&[2, two]), None), Ok(None));
        assert_eq!(pe.unacked(2), 0);
        assert_eq!(pe.receive(AM_ACK, &header(&[2, units(8)]), None), Ok(None));
        assert_eq!(pe.unacked(2), 0);
        assert!(pe.receive(AM_ACK, &header(&[2, two + 1]), None).is_err());
        // A strided get's responses fill its buffer, each element once.
        pe.start_get(3, 4, 3);
        let resp = header(&[3, 4, 2, 1, 1]);
        assert_eq!(pe.receive(AM_GET_RESP, &resp, Some(&data[..8])), Ok(None));
        assert!(
            pe.receive(AM_GET_RESP, &resp, Some(&data[..8])).is_err(),
            "claimed twice"
        );
        assert_eq!(
            pe.receive(AM_GET_RESP, &header(&[3, 4, 1, 1, 0]), Some(&data[8..12])),
            Ok(None)
        );
        let (buf, done) = pe.got().expect("a get");
        assert!(done);
        assert_eq!(buf, [&data[8..12], &data[..8]].concat());
    }

    #[test]
    fn a_batch_writes_its_records_in_order_and_counts_as_one_message() {
        let mut pe = FuzzPe::new(0, 3, [0, 4, 0]);
        let data = batch(&[(0, &[1; 8]), (8, &[2, 3, 4]), (0, &[5; 8]), (30, &[6, 7])]);
        assert_eq!(pe.receive(AM_BATCH, &header(&[1]), Some(&data)), Ok(None));
        let heap = pe.memory()[1];
        assert_eq!(&heap[0..8], &[5; 8], "the later record wins");
        assert_eq!(&heap[8..12], &[2, 3, 4, 0]);
        assert_eq!(&heap[28..32], &[0, 0, 6, 7]);
        // One message of data.len() units: a sync for it is answered at once, and a batch
        // that asks is answered by itself.
        let one = units(data.len());
        assert_eq!(
            pe.receive(AM_SYNC, &header(&[1, one]), None),
            Ok(Some(message(&[0, one], 0)))
        );
        let two = one + units(data.len());
        assert_eq!(
            pe.receive(AM_BATCH, &header(&[1, two]), Some(&data)),
            Ok(Some(message(&[0, two], 0)))
        );
    }

    #[test]
    fn a_batch_with_a_bad_record_is_refused_whole() {
        let mut pe = FuzzPe::new(0, 2, [0, 4, 0]);
        let good = batch(&[(0, &[9; 8])]);
        let cases: Vec<(Vec<u8>, &str)> = vec![
            // The second record ends past the heap.
            (
                [good.clone(), batch(&[(30, &[1; 3])])].concat(),
                "outside this PE's heap",
            ),
            // A record longer than what is left of the message.
            (
                [
                    &good[..],
                    &8u64.to_le_bytes(),
                    &64u64.to_le_bytes(),
                    &[0; 8],
                ]
                .concat(),
                "bytes left",
            ),
            // A few bytes that are not a record header.
            ([&good[..], &[0; 12]].concat(), "less than a header"),
            // A record of no bytes.
            (batch(&[(0, &[])]), "outside this PE's heap"),
        ];
        for (data, want) in cases {
            let got = pe.receive(AM_BATCH, &header(&[1]), Some(&data));
            assert!(
                got.as_ref().is_err_and(|e| e.contains(want)),
                "{want}: {got:?}"
            );
            assert_eq!(
                pe.memory()[1],
                &[0; 32][..],
                "{want}: a refused batch wrote"
            );
        }
        // From outside the job, or with a header of the wrong length.
        assert!(pe.receive(AM_BATCH, &header(&[2]), Some(&good)).is_err());
        assert!(
            pe.receive(AM_BATCH, &header(&[1, 2, 3]), Some(&good))
                .is_err()
        );
        assert!(pe.receive(AM_BATCH, &header(&[1]), None).is_err());
        assert_eq!(pe.memory()[1], &[0; 32][..]);
    }

    #[test]
    fn a_sync_is_answered_once_the_messages_it_counts_are_handled() {
        let mut pe = FuzzPe::new(0, 3, [0, 8, 0]);
        let word = 7u64.to_le_bytes();
        let put = |pe: &mut FuzzPe, from: u64| {
            pe.receive(AM_PUT, &header(&[from, 8, 1, 0, 0]), Some(&word))
        };
        let (one, two) = (units(8), 2 * units(8));
        // Two puts from PE 1, then its sync for both: answered at once with the count.
        assert_eq!(put(&mut pe, 1), Ok(None));
        assert_eq!(put(&mut pe, 1), Ok(None));
        assert_eq!(
            pe.receive(AM_SYNC, &header(&[1, two]), None),
            Ok(Some(message(&[0, two], 0)))
        );
        // A sync that overtook its puts (several lanes) is answered by the last of them.
        assert_eq!(pe.receive(AM_SYNC, &header(&[2, two]), None), Ok(None));
        assert_eq!(put(&mut pe, 2), Ok(None));
        assert_eq!(put(&mut pe, 2), Ok(Some(message(&[0, two], 0))));
        assert_eq!(put(&mut pe, 2), Ok(None), "answered once");
        // A put with signal counts as a put; a flag does not.
        let signal = header(&[1, 16, 0, 8, 1, 1]);
        assert_eq!(pe.receive(AM_SIGNAL, &signal, Some(&[])), Ok(None));
        let flag = header(&[1, 16, 0, 8, 2, 1]);
        assert_eq!(pe.receive(AM_FLAG, &flag, Some(&[])), Ok(None));
        let all = two + units(0);
        assert_eq!(
            pe.receive(AM_SYNC, &header(&[1, all]), None),
            Ok(Some(message(&[0, all], 0)))
        );
        // A sync for what was answered already is answered again (repeats are harmless).
        assert_eq!(
            pe.receive(AM_SYNC, &header(&[1, one]), None),
            Ok(Some(message(&[0, all], 0)))
        );
        // A put that asks for its own ack (one more header word: the count to acknowledge).
        let asking = header(&[1, 8, 1, 0, 0, all + one]);
        assert_eq!(
            pe.receive(AM_PUT, &asking, Some(&word)),
            Ok(Some(message(&[0, all + one], 0)))
        );
        // One that overtook an earlier put: answered by that put.
        let asking = header(&[1, 8, 1, 0, 0, all + 3 * one]);
        assert_eq!(pe.receive(AM_PUT, &asking, Some(&word)), Ok(None));
        assert_eq!(put(&mut pe, 1), Ok(Some(message(&[0, all + 3 * one], 0))));
        // A put with signal may ask too; a flag's extra word is refused.
        let asking = header(&[1, 16, 0, 8, 1, 1, all + 3 * one + units(0)]);
        assert_eq!(
            pe.receive(AM_SIGNAL, &asking, Some(&[])),
            Ok(Some(message(&[0, all + 3 * one + units(0)], 0)))
        );
        let flag = header(&[1, 16, 0, 8, 2, 1, 5]);
        assert!(pe.receive(AM_FLAG, &flag, Some(&[])).is_err());
        assert_eq!(pe.memory()[1][..8], word);
    }
}
