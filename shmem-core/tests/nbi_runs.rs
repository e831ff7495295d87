//! Streams of non-blocking gets, which over `UCX_TLS=tcp,self` (the UCX path) and between two
//! hosts travel in runs (one request and one response for many gets of one size whose remote
//! offsets step by one stride): every size up to the largest that joins a run and past it,
//! consecutive and strided remote offsets, destinations in any order and at odd addresses,
//! runs to several PEs at once, runs broken by other operations, `pe_quiet`, and more in
//! flight than a run set holds. Every test checks each element against what its source PE
//! wrote, at 2, 3 and 4 PEs (and on two hosts) on both paths.

use shmem_testkit as common;

use common::{multi_pe_at, multi_pe_hosts};
use shmem_core::prelude::*;
use shmem_core::raw;

const COUNTS: &[usize] = &[2, 3, 4];

/// The byte PE `pe` keeps at index `i` of its source array.
fn byte(pe: usize, i: usize) -> u8 {
    (i as u64 * 31 + pe as u64 * 101 + (i as u64 >> 8)) as u8
}

/// A symmetric array of `len` bytes, filled by every PE with its own pattern (then a barrier).
fn source(world: &World, len: usize) -> SymArray<'_, u8> {
    let a = world.alloc::<u8>(len);
    let me = world.my_pe();
    let mine: Vec<u8> = (0..len).map(|i| byte(me, i)).collect();
    a.local_write(.., &mine);
    world.barrier_all();
    a
}

/// A stream of gets of `count` pieces of `size` bytes from the right neighbour: piece `k`
/// comes from offset `k * stride` and goes to piece `count - 1 - k` of the destination
/// (destinations in reverse order), which starts at an odd address. Then every byte checked.
fn stream(world: &World, a: &SymArray<'_, u8>, size: usize, count: usize, stride: usize) {
    let (me, n) = (world.my_pe(), world.n_pes());
    let right = (me + 1) % n;
    let mut buf = vec![0u8; size * count + 1];
    let dst = &mut buf[1..];
    world.nbi(|s| {
        for (k, piece) in dst.chunks_mut(size).rev().enumerate() {
            s.get(a, right, k * stride..k * stride + size, piece);
        }
    });
    for (j, piece) in buf[1..].chunks(size).enumerate() {
        let k = count - 1 - j;
        for (b, got) in piece.iter().enumerate() {
            let want = byte(right, k * stride + b);
            assert_eq!(
                *got, want,
                "PE {me}: piece {k} ({size} bytes, stride {stride}) from PE {right}, byte {b}"
            );
        }
    }
}

#[test]
fn streams_of_every_size() {
    multi_pe_hosts("streams_of_every_size", |world| {
        let a = source(world, 256 << 10);
        for size in [1, 2, 3, 8, 100, 1000, 4096, 8192, 8193, 20000] {
            // Past a run's 64 KiB for the small sizes: full runs go and the next begins.
            let count = ((200 << 10) / size).clamp(3, 9000);
            let count = count.min((256 << 10) / size);
            stream(world, &a, size, count, size);
        }
        world.barrier_all();
    });
}

#[test]
fn strided_streams() {
    multi_pe_at("strided_streams", COUNTS, |world| {
        let a = source(world, 64 << 10);
        for (size, stride) in [(1, 2), (8, 24), (8, 8 * 1000), (100, 1000), (3000, 7000)] {
            let count = ((64 << 10) - size) / stride + 1;
            stream(world, &a, size, count, stride);
        }
        // The same piece again and again (stride 0).
        stream(world, &a, 16, 50, 0);
        world.barrier_all();
    });
}

/// Gets from every PE in turn, each PE's pieces consecutive: a run per PE at once (first from
/// the other PEs only, then from every PE: a get from this PE itself, a copy, sends the runs).
#[test]
fn runs_to_several_pes_at_once() {
    multi_pe_at("runs_to_several_pes_at_once", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let a = source(world, 16 << 10);
        let size = 64;
        let count = (16 << 10) / size;
        for with_self in [false, true] {
            let pes: Vec<usize> = (0..n).filter(|&pe| with_self || pe != me).collect();
            let mut bufs: Vec<Vec<u8>> = pes.iter().map(|_| vec![0u8; count * size]).collect();
            world.nbi(|s| {
                let mut pieces: Vec<_> = bufs.iter_mut().map(|b| b.chunks_mut(size)).collect();
                for k in 0..count {
                    for (&pe, it) in pes.iter().zip(pieces.iter_mut()) {
                        let piece = it.next().expect("one piece per k");
                        s.get(&a, pe, k * size..(k + 1) * size, piece);
                    }
                }
            });
            for (&pe, b) in pes.iter().zip(&bufs) {
                for (i, got) in b.iter().enumerate() {
                    assert_eq!(*got, byte(pe, i), "PE {me}: byte {i} from PE {pe}");
                }
            }
        }
        world.barrier_all();
    });
}

/// A get of a word, then a put of a new value to that word and a blocking get of it, all in
/// one scope: the non-blocking get sees the value from before the put (it was issued first,
/// and its run goes before the put), the blocking get the new one. Then sizes change
/// mid-stream and atomics come between gets.
#[test]
fn runs_broken_by_other_operations() {
    multi_pe_at("runs_broken_by_other_operations", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let right = (me + 1) % n;
        let words = world.alloc::<u64>(64);
        let init: Vec<u64> = (0..64).map(|i| (me * 1000 + i) as u64).collect();
        words.local_write(.., &init);
        world.barrier_all();
        let mut before = [0u64; 8];
        let mut after = [0u64; 8];
        let new = [7u64; 8];
        world.nbi(|s| {
            s.get(&words, right, 0..8, &mut before);
            words.put(right, 0..8, &new);
            words.get(right, 0..8, &mut after);
        });
        for i in 0..8 {
            assert_eq!(
                before[i],
                (right * 1000 + i) as u64,
                "PE {me}: word {i} before"
            );
            assert_eq!(after[i], 7, "PE {me}: word {i} after");
        }
        world.barrier_all();
        // Words 8..63 in sizes that change every few gets, with atomic adds to word 63 in
        // between.
        let mut got = vec![0u64; 55];
        world.nbi(|s| {
            let mut rest = &mut got[..];
            let mut at = 8;
            for (k, len) in [1usize, 1, 1, 2, 2, 5, 5, 5, 3, 3, 1, 26]
                .into_iter()
                .enumerate()
            {
                let (piece, tail) = rest.split_at_mut(len);
                s.get(&words, right, at..at + len, piece);
                if k % 4 == 3 {
                    words.at(right, 63).fetch_add(1u64);
                }
                rest = tail;
                at += len;
            }
        });
        for (i, v) in got.iter().enumerate() {
            assert_eq!(*v, (right * 1000 + 8 + i) as u64, "PE {me}: word {}", 8 + i);
        }
        world.barrier_all();
        assert_eq!(words.local_get(63), (me * 1000 + 63) as u64 + 3);
        world.barrier_all();
    });
}

/// `pe_quiet` of the one PE a stream of raw non-blocking gets read from completes them.
#[test]
fn pe_quiet_completes_a_run() {
    multi_pe_at("pe_quiet_completes_a_run", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let right = (me + 1) % n;
        let a = source(world, 4096);
        let mut back = vec![0u8; 4096 + 3];
        for k in 0..512 {
            // SAFETY: `back` is not touched until the pe_quiet below, and outlives it.
            unsafe {
                raw::get_nbi::<u8, Shared>(
                    None,
                    &a.slice(k * 8..k * 8 + 8),
                    right,
                    back.as_mut_ptr().add(3 + k * 8),
                    8,
                )
            };
        }
        world.pe_quiet(&[right]);
        for (i, got) in back[3..].iter().enumerate() {
            assert_eq!(*got, byte(right, i), "PE {me}: byte {i} from PE {right}");
        }
        world.barrier_all();
    });
}

/// More bytes of gets in one scope than the runs keep in flight (4 MiB): the stream waits for
/// the first ones to land and goes on.
#[test]
fn more_in_flight_than_the_runs_hold() {
    multi_pe_at("more_in_flight_than_the_runs_hold", &[2, 3], |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let right = (me + 1) % n;
        let len = 1 << 20;
        let a = source(world, len);
        let passes = 6;
        let size = 8192;
        let mut buf = vec![0u8; passes * len];
        world.nbi(|s| {
            for (j, piece) in buf.chunks_mut(size).enumerate() {
                let at = (j * size) % len;
                s.get(&a, right, at..at + size, piece);
            }
        });
        for (i, got) in buf.iter().enumerate() {
            assert_eq!(
                *got,
                byte(right, i % len),
                "PE {me}: byte {i} from PE {right}"
            );
        }
        world.barrier_all();
    });
}
