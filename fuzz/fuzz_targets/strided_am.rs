//! The active messages of strided puts, gets, puts with signal and batches of puts as a
//! receiving PE sees them (shmem-core's `transport::am` handlers, through
//! `fuzzing::StridedPe`): arbitrary headers, payloads (batches mostly as records), acks and
//! syncs against a PE with a team segment, a heap and a data
//! segment of the input's sizes, with a strided get of its own in progress.
//!
//! Input: the sizes, then messages (see `message`). Checks: no panic, no access outside the
//! PE's memory (AddressSanitizer); a refused message writes nothing; an accepted put leaves its
//! elements where the header says, an accepted batch its records, in order; a get request's response carries the elements it names.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use shmem_core::fuzzing::StridedPe;
use shmem_fuzz::Input;

const PUT: u16 = 0x51;
const GET_REQ: u16 = 0x53;
const BATCH: u16 = 0x58;

/// A batch's records: (offset, len, then len bytes padded to a word) each, from the input (a
/// few records of small puts, now and then a length past the data).
fn records(input: &mut Input<'_>, filler: &[u8]) -> Vec<u8> {
    let mut data = Vec::new();
    for _ in 0..input.choose(5) {
        let offset = word(input);
        let len = match input.u8() % 8 {
            0 => word(input),
            _ => input.choose(64) as u64 + 1,
        };
        data.extend_from_slice(&offset.to_le_bytes());
        data.extend_from_slice(&len.to_le_bytes());
        let n = (len as usize).min(256);
        data.extend_from_slice(&filler[..n]);
        data.resize(data.len().next_multiple_of(8), 0);
    }
    data
}

/// A header word: small numbers, offsets in the data segment, or anything.
fn word(input: &mut Input<'_>) -> u64 {
    match input.u8() % 5 {
        0 | 1 => u64::from(input.u8()),
        2 => u64::from(input.u16()),
        3 => StridedPe::DATA_OFFSET + u64::from(input.u16()),
        _ => input.u64(),
    }
}

/// Where offset `off` is in the PE's memory: (region, index) as the module docs say.
fn locate(off: u64, team_len: usize) -> (usize, usize) {
    if off >= StridedPe::DATA_OFFSET {
        (2, (off - StridedPe::DATA_OFFSET) as usize)
    } else if (off as usize) < team_len {
        (0, off as usize)
    } else {
        (1, off as usize)
    }
}

fn words(header: &[u8]) -> Vec<u64> {
    header
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let sizes = [
        input.u8() as usize % 16,
        input.u16() as usize % 4096,
        input.u8() as usize % 64,
    ];
    let n_pes = 1 + input.choose(8);
    let my_pe = input.choose(n_pes);
    let mut pe = StridedPe::new(my_pe, n_pes, sizes);
    let team_len = sizes[0] * 8;
    static FILLER: OnceLock<Vec<u8>> = OnceLock::new();
    let filler = FILLER.get_or_init(|| (0..1 << 17).map(|i: usize| (i * 7 + 3) as u8).collect());
    for _ in 0..32 {
        if input.is_empty() {
            break;
        }
        match input.u8() % 8 {
            0 => {
                let (to, bytes) = (input.choose(n_pes + 1), usize::from(input.u8()));
                pe.sent(to, bytes);
                continue;
            }
            1 => {
                let (from, size, count) = (
                    input.choose(n_pes),
                    input.choose(64) + 1,
                    input.choose(64) + 1,
                );
                pe.start_get(from, size, count);
                continue;
            }
            _ => {}
        }
        let id = 0x51 + u16::from(input.u8() % 8);
        let n_words = match input.u8() % 8 {
            0 => input.choose(9),
            1 if id == 0x51 || id == 0x55 || id == BATCH => {
                // A put, put with signal or batch that asks for an ack (one more word).
                match id {
                    0x51 => 6,
                    0x55 => 7,
                    _ => 2,
                }
            }
            _ => match id {
                0x51 | 0x54 => 5,
                0x52 | 0x57 => 2,
                0x53 => 7,
                BATCH => 1,
                _ => 6,
            },
        };
        let header: Vec<u8> = (0..n_words)
            .flat_map(|_| word(&mut input).to_le_bytes())
            .collect();
        let w = words(&header);
        // The data: none, the length the header implies, or any length.
        let implied = match (id, w.as_slice()) {
            (0x51 | 0x54, [_, size, count, ..]) => size.saturating_mul(*count),
            (0x55 | 0x56, [_, _, len, ..]) => *len,
            _ => 0,
        };
        let len = match input.u8() % 4 {
            0 => None,
            1 => Some(input.u8() as usize),
            _ => Some(implied.min(filler.len() as u64) as usize),
        };
        let batch;
        let payload = if id == BATCH && input.u8() % 4 != 0 {
            batch = records(&mut input, filler);
            Some(&batch[..])
        } else {
            len.map(|n| &filler[..n])
        };
        let before: Vec<Vec<u8>> = pe.memory().iter().map(|m| m.to_vec()).collect();
        match pe.receive(id, &header, payload) {
            Err(e) => {
                assert!(
                    e.starts_with("from PE ") || e.starts_with("no handler"),
                    "{e}"
                );
                let after: Vec<Vec<u8>> = pe.memory().iter().map(|m| m.to_vec()).collect();
                assert!(before == after, "a refused message wrote: {e}");
            }
            Ok(reply) => {
                let mem = pe.memory();
                if id == PUT {
                    // Five words, or six: the last one asks for an ack.
                    let [_, size, count, offset, stride, ..] = w[..] else {
                        panic!("a put with {} header words accepted", w.len())
                    };
                    assert!(w.len() <= 6, "a put with {} header words accepted", w.len());
                    let (size, stride) = (size as usize, stride as usize);
                    let data = payload.expect("a put without data accepted");
                    assert_eq!(data.len(), size * count as usize);
                    let (r, at) = locate(offset, team_len);
                    // With overlapping elements only the last one is sure to be whole.
                    let first = if stride >= size {
                        0
                    } else {
                        count as usize - 1
                    };
                    for k in first..count as usize {
                        let got = &mem[r][at + k * stride..at + k * stride + size];
                        assert_eq!(got, &data[k * size..(k + 1) * size], "element {k}");
                    }
                }
                if id == BATCH {
                    // Every record lands where it says, in order: the memory is what applying
                    // them to the memory before gives.
                    assert!(
                        w.len() <= 2,
                        "a batch with {} header words accepted",
                        w.len()
                    );
                    let mut want = before.clone();
                    let mut rest = payload.expect("a batch without data accepted");
                    while !rest.is_empty() {
                        let h = words(&rest[..16]);
                        let (offset, len) = (h[0], h[1] as usize);
                        let (r, at) = locate(offset, team_len);
                        want[r][at..at + len].copy_from_slice(&rest[16..16 + len]);
                        rest = &rest[16 + len.next_multiple_of(8)..];
                    }
                    assert!(
                        want.iter().zip(&mem).all(|(a, b)| a == b),
                        "a batch landed wrong"
                    );
                }
                if id == GET_REQ {
                    let [_, size, count, offset, stride, _, _] = w[..] else {
                        panic!("a get request with {} header words accepted", w.len())
                    };
                    let reply = reply.expect("a get request without a response");
                    let (size, stride) = (size as usize, stride as usize);
                    let (r, at) = locate(offset, team_len);
                    let body = &reply[40..];
                    assert_eq!(body.len(), size * count as usize);
                    for k in 0..count as usize {
                        let want = &mem[r][at + k * stride..at + k * stride + size];
                        assert_eq!(&body[k * size..(k + 1) * size], want, "element {k}");
                    }
                }
            }
        }
    }
    if let Some((buf, _)) = pe.got() {
        // The destination buffer stays readable whatever arrived.
        std::hint::black_box(buf.iter().map(|&b| b as usize).sum::<usize>());
    }
});
