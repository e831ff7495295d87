//! The node-shared start-up table as a PE reads it from the memfd its node's leader published
//! (`shmem_launch::table::parse`): arbitrary bytes for any job size, with record tags that
//! check, fail, or are really verified against a secret.
//!
//! Input: a mode byte (bit 3: the PMIx path's untagged table, `parse_untagged`), the job size
//! (`u32`), then the table's bytes. Checks: no panic; an index
//! that parses has one entry per PE, in order, inside the table, its records back to back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shmem_fuzz::Input;
use shmem_launch::auth::{self, Secret};
use shmem_launch::table;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mode = input.u8();
    let npes = input.u32() as usize;
    let bytes = input.rest();
    // The job id and epoch the table says (so that the fuzzer gets past that check), or fixed
    // ones.
    let word = |at: usize| {
        bytes
            .get(at..at + 8)
            .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap()))
    };
    let (job, epoch) = if mode & 1 == 0 {
        (word(4), word(12))
    } else {
        (7, 0)
    };
    if mode & 8 != 0 {
        // The PMIx path's table: untagged records (`parse_untagged`).
        let Ok(index) = table::parse_untagged(bytes, npes, epoch) else {
            return;
        };
        assert_eq!(index.len(), npes);
        let mut end = 24;
        for &(at, len) in &index {
            let (at, len) = (at as usize, len as usize);
            assert_eq!(at, end + 4, "untagged records are not back to back");
            let prefix = u32::from_le_bytes(bytes[at - 4..at].try_into().unwrap()) as usize;
            assert_eq!(prefix, len, "an untagged record's length is not its prefix");
            end = at + len;
        }
        assert_eq!(end, bytes.len());
        return;
    }
    let secret = Secret::from_hex(&"a5".repeat(32)).unwrap();
    let mut seen = Vec::new();
    let mut verify = |pe: usize, blob: &[u8], tag: &[u8]| {
        seen.push(pe);
        match mode >> 1 & 3 {
            0 => true,
            1 => false,
            2 => auth::record_key(&secret, pe as u32).verify(job, epoch, blob, tag),
            _ => blob.len() % 2 == 0,
        }
    };
    let Ok(index) = table::parse(bytes, npes, job, epoch, &mut verify) else {
        return;
    };
    assert_eq!(index.len(), npes);
    assert_eq!(
        seen,
        (0..npes).collect::<Vec<_>>(),
        "records verified out of order"
    );
    let mut end = 24;
    for &(at, len) in &index {
        let (at, len) = (at as usize, len as usize);
        assert_eq!(at, end + 4, "records are not back to back");
        assert!(at + len + 32 <= bytes.len(), "a record past the table");
        let prefix = u32::from_le_bytes(bytes[at - 4..at].try_into().unwrap()) as usize;
        assert_eq!(prefix, len + 32, "a record's length is not its prefix");
        end = at + len + 32;
    }
    assert_eq!(end, bytes.len());
});
