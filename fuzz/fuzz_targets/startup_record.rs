//! A peer's start-up record as shmem-core's start-up decodes it (`PeerInfo::decode` and
//! `decode_head`): arbitrary bytes from an arbitrary PE.
//!
//! Input: the PE number (`u16`), then the record. Checks: no panic; both decoders accept the
//! same records; an accepted record encodes back to its own first bytes (the fixed fields
//! exactly, for the head); an error names the PE.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shmem_core::fuzzing::{start_up_record, start_up_record_head};
use shmem_fuzz::Input;

/// Bytes of the fixed fields: the magic, then 7 `u64` and 5 `u32` fields.
const FIXED: usize = 4 + 8 * 4 + 4 + 4 + 8 + 8 + 4 + 8 + 4 + 4;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let pe = input.u16() as usize;
    let bytes = input.rest();
    let full = start_up_record(pe, bytes);
    let head = start_up_record_head(pe, bytes);
    match (&full, &head) {
        (Ok(enc), Ok((head_enc, has_data_rkey))) => {
            assert!(
                bytes.starts_with(enc),
                "the record does not encode back to itself"
            );
            assert_eq!(
                head_enc[..FIXED],
                bytes[..FIXED],
                "the head's fields differ"
            );
            // The data key is the third length-prefixed part.
            let mut at = FIXED;
            let mut lens = [0usize; 4];
            for len in &mut lens {
                *len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
                at += 4 + *len;
            }
            assert_eq!(*has_data_rkey, lens[2] > 0);
        }
        (Err(a), Err(b)) => {
            let name = format!("PE {pe}");
            assert!(a.contains(&name) && b.contains(&name), "{a} / {b}");
        }
        _ => panic!("decode and decode_head disagree: {full:?} / {head:?}"),
    }
});
