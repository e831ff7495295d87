//! The program's global variables as symmetric memory (`raw::enable_data_segment`, for C
//! programs, whose globals and statics are symmetric in OpenSHMEM): plain Rust statics of this
//! test binary, which live in its `.data` and `.bss`, are reached on other PEs through
//! `raw::sym` by put, get, strided put and get, atomics and waits, on the direct path (the peer's
//! segment mapped here) and over UCX (`UCX_TLS=tcp,self`: the segment registered with UCX, the
//! strided transfers carried by active messages). Run at 1, 2, 3 and 4 PEs.

use shmem_core::prelude::*;
use shmem_core::raw;
use shmem_testkit as common;
use std::sync::atomic::{AtomicU64, Ordering};

/// In `.bss` (zero-initialized).
static ZEROED: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];
/// In `.data`: the initial values must survive the move into shared memory.
static INITIALIZED: [AtomicU64; 4] = [
    AtomicU64::new(11),
    AtomicU64::new(22),
    AtomicU64::new(33),
    AtomicU64::new(44),
];
static COUNTER: AtomicU64 = AtomicU64::new(0);

const COUNTS: &[usize] = &[1, 2, 3, 4];

fn sym_of(a: &'static [AtomicU64]) -> SymSlice<'static, u64> {
    // SAFETY: statics live for the program's life; they are atomics (no plain reference covers
    // them) and every PE treats them as symmetric.
    unsafe { raw::sym::<u64>(a.as_ptr().cast(), a.len()) }.expect("a static is symmetric")
}

#[test]
fn globals_are_symmetric() {
    raw::enable_data_segment();
    common::multi_pe_at("globals_are_symmetric", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let (right, left) = ((me + 1) % n, (me + n - 1) % n);
        let zeroed = sym_of(&ZEROED);
        let init = sym_of(&INITIALIZED);
        // SAFETY: as in `sym_of`.
        let counter = unsafe { raw::sym::<u64>(COUNTER.as_ptr(), 1) }.expect("symmetric");
        // A local variable is not symmetric.
        let local = 5u64;
        assert!(raw::offset_of((&local as *const u64).cast(), 8).is_none());
        // The initial values are there, here and on the neighbour.
        let mut got = [0u64; 4];
        init.get(right, .., &mut got);
        assert_eq!(got, [11, 22, 33, 44]);
        world.barrier_all();

        // Contiguous put to the right neighbour.
        let row: Vec<u64> = (0..8).map(|i| (me * 100 + i) as u64).collect();
        zeroed.put(right, 0..8, &row);
        // Strided put: elements 16, 18, .., 30.
        let odd: Vec<u64> = (0..8).map(|i| (me * 1000 + i) as u64).collect();
        zeroed.iput(right, 16..32, 2, &odd, 1);
        // Atomics on PE 0's counter.
        counter.at(0, 0).fetch_add(1);
        world.barrier_all();

        for i in 0..8 {
            assert_eq!(ZEROED[i].load(Ordering::Acquire), (left * 100 + i) as u64);
            assert_eq!(
                ZEROED[16 + 2 * i].load(Ordering::Acquire),
                (left * 1000 + i) as u64
            );
            assert_eq!(ZEROED[17 + 2 * i].load(Ordering::Acquire), 0);
        }
        if me == 0 {
            assert_eq!(COUNTER.load(Ordering::Acquire), n as u64);
        }
        // Strided get back from the right neighbour of what this PE put there.
        let mut back = vec![0u64; 8];
        zeroed.iget(right, 16..32, 2, &mut back, 1);
        assert_eq!(back, odd);
        world.barrier_all();

        // A wait on a global: the left neighbour sets element 40 here.
        zeroed.at(right, 40).set(7 + me as u64);
        zeroed.wait_until(40, Cmp::Eq, 7 + left as u64);
        world.barrier_all();
    });
}
