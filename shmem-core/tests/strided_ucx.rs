//! Strided `iput`/`iget` to PEs reached through UCX (`UCX_TLS=tcp,self` on the UCX path, and on
//! two hosts), where the elements travel packed in a few active messages: element sizes 1 to 16
//! bytes, several strides on both sides, counts from 1 to ones that need several messages, at 2,
//! 3 and 4 PEs. Every test reads back on one PE what another PE wrote, element by element, and
//! checks that the elements between the strided ones are untouched.

use shmem_testkit as common;

use common::{multi_pe_at, multi_pe_hosts};
use shmem_core::prelude::*;
use std::fmt::Debug;

/// PE counts of these tests (each on the direct and the UCX path, and under mpirun).
const COUNTS: &[usize] = &[2, 3, 4];

/// Elements left alone before the first and after the last strided element of each target.
const GUARD: usize = 3;

/// An element type the tests can fill with values that say where they came from.
trait Pat: Element + Copy + PartialEq + Debug {
    /// A value made of `seed` (truncated to the type's width, but different for nearby seeds).
    fn make(seed: u64) -> Self;
}

impl Pat for u8 {
    fn make(seed: u64) -> Self {
        (seed ^ (seed >> 8) ^ (seed >> 16) ^ (seed >> 32)) as u8
    }
}
impl Pat for u16 {
    fn make(seed: u64) -> Self {
        (seed ^ (seed >> 16) ^ (seed >> 32)) as u16
    }
}
impl Pat for u32 {
    fn make(seed: u64) -> Self {
        (seed ^ (seed >> 32)) as u32
    }
}
impl Pat for u64 {
    fn make(seed: u64) -> Self {
        seed
    }
}
impl Pat for [u64; 2] {
    fn make(seed: u64) -> Self {
        [seed, !seed]
    }
}

/// What PE `pe` keeps at index `i` of its target array before anything is put there.
fn fill(pe: usize, i: usize) -> u64 {
    0xf111_0000_0000 | (pe as u64) << 24 | i as u64
}

/// Element `k` of the strided data PE `pe` sends.
fn data(pe: usize, k: usize) -> u64 {
    0xda7a_0000_0000 | (pe as u64) << 24 | k as u64
}

/// Marks the destination elements a strided get must not touch.
const SENTINEL: u64 = 0x5e47_1e15_5e47;

/// One case: `count` elements, at stride `ts` on the target and `ls` in the local buffer.
#[derive(Clone, Copy, Debug)]
struct Case {
    count: usize,
    ts: usize,
    ls: usize,
}

/// The cases every element type runs: counts 1, 16 and 1000 at several strides, and one large
/// enough for several messages of every element size (70 000 elements: 70 KB of `u8`, 1.1 MB of
/// 16-byte elements).
const CASES: &[Case] = &[
    Case {
        count: 1,
        ts: 1,
        ls: 1,
    },
    Case {
        count: 1,
        ts: 5,
        ls: 3,
    },
    Case {
        count: 16,
        ts: 2,
        ls: 1,
    },
    Case {
        count: 16,
        ts: 1,
        ls: 3,
    },
    Case {
        count: 1000,
        ts: 3,
        ls: 2,
    },
    Case {
        count: 1000,
        ts: 7,
        ls: 1,
    },
    Case {
        count: 70_000,
        ts: 2,
        ls: 3,
    },
];

/// PE `me` iputs `case.count` elements into its right neighbour's array (stride `ts`, starting
/// at `GUARD`), the neighbour checks every element of its array after a barrier, then every PE
/// igets a strided selection of its right neighbour's array back and checks it, leaving the
/// elements between the selected ones untouched.
fn run_case<E: Pat>(world: &World, case: Case) {
    let (me, n) = (world.my_pe(), world.n_pes());
    let right = (me + 1) % n;
    let left = (me + n - 1) % n;
    let Case { count, ts, ls } = case;
    let span = (count - 1) * ts + 1;
    let len = span + 2 * GUARD;
    let what = format!(
        "{count} x {}-byte elements, target stride {ts}, local stride {ls}, PE {me} of {n}",
        size_of::<E>()
    );
    let target = world.alloc::<E>(len);
    let mine: Vec<E> = (0..len).map(|i| E::make(fill(me, i))).collect();
    target.local_write(.., &mine);
    // The source: the data at every `ls`-th element, something else in between.
    let mut src = vec![E::make(SENTINEL); (count - 1) * ls + 1];
    for k in 0..count {
        src[k * ls] = E::make(data(me, k));
    }
    world.barrier_all();
    target.iput(right, GUARD..GUARD + span, ts, &src, ls);
    // The source may be reused at once: scribble over it.
    src.fill(E::make(0));
    world.barrier_all();

    // What PE `pe`'s array holds now.
    let expect = |pe: usize, i: usize| -> E {
        let from = (pe + n - 1) % n;
        if (GUARD..GUARD + span).contains(&i) && (i - GUARD).is_multiple_of(ts) {
            E::make(data(from, (i - GUARD) / ts))
        } else {
            E::make(fill(pe, i))
        }
    };
    let mut got = vec![E::make(0); len];
    target.local_read(.., &mut got);
    for (i, v) in got.iter().enumerate() {
        assert_eq!(
            *v,
            expect(me, i),
            "{what}: element {i} after an iput from PE {left}"
        );
    }

    // Strided gets of the right neighbour's array: the strided elements (from 1, every `ts`-th)
    // and a selection at another stride that mixes put and untouched elements.
    for (start, stride) in [(GUARD, ts), (1, ts + 1), (0, 1)] {
        let picks = (len - start).div_ceil(stride).min(count);
        let mut dst = vec![E::make(SENTINEL); (picks - 1) * ls + 1 + 2];
        let sel = start..start + (picks - 1) * stride + 1;
        target.iget(right, sel, stride, &mut dst[1..(picks - 1) * ls + 2], ls);
        for (j, v) in dst.iter().enumerate() {
            let want = if j >= 1 && (j - 1).is_multiple_of(ls) && (j - 1) / ls < picks {
                expect(right, start + (j - 1) / ls * stride)
            } else {
                E::make(SENTINEL)
            };
            assert_eq!(
                *v, want,
                "{what}: iget from PE {right} (start {start}, stride {stride}), dst element {j}"
            );
        }
    }
    world.barrier_all();
}

fn all_cases<E: Pat>(world: &World) {
    for &case in CASES {
        run_case::<E>(world, case);
    }
}

#[test]
fn iput_iget_1_byte() {
    multi_pe_at("iput_iget_1_byte", COUNTS, all_cases::<u8>);
}

#[test]
fn iput_iget_2_bytes() {
    multi_pe_at("iput_iget_2_bytes", COUNTS, all_cases::<u16>);
}

#[test]
fn iput_iget_4_bytes() {
    multi_pe_at("iput_iget_4_bytes", COUNTS, all_cases::<u32>);
}

#[test]
fn iput_iget_8_bytes() {
    multi_pe_at("iput_iget_8_bytes", COUNTS, all_cases::<u64>);
}

#[test]
fn iput_iget_16_bytes() {
    multi_pe_at("iput_iget_16_bytes", COUNTS, all_cases::<[u64; 2]>);
}

/// `iput`, `quiet`, then a `put_signal` the target waits on: the strided data is there when the
/// signal is (no barrier in between). Several rounds, so a late delivery would show.
#[test]
fn iput_quiet_then_signal() {
    multi_pe_at("iput_quiet_then_signal", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let (right, left) = ((me + 1) % n, (me + n - 1) % n);
        const ROUNDS: u64 = 20;
        let (count, ts) = (3000usize, 3usize);
        let target = world.alloc::<u64>(count * ts * ROUNDS as usize);
        let flag = world.alloc::<u64>(1);
        let one = world.alloc::<u64>(1);
        world.barrier_all();
        for r in 0..ROUNDS {
            let base = r as usize * count * ts;
            let src: Vec<u64> = (0..count).map(|k| data(me, k) + r).collect();
            target.iput(right, base..base + count * ts, ts, &src, 1);
            world.quiet();
            one.put_signal(right, .., &[r], flag.signal(0), SignalOp::Set(r + 1));
            flag.signal(0).wait_until(Cmp::Ge, r + 1);
            for k in 0..count {
                let v = target.local_get(base + k * ts);
                assert_eq!(
                    v,
                    data(left, k) + r,
                    "round {r}: element {k} from PE {left} on PE {me} when the signal arrived"
                );
            }
        }
        world.barrier_all();
    });
}

/// `iput`, `fence`, then a single-element put of a flag to the same PE: the target that sees the
/// flag sees the strided data.
#[test]
fn iput_fence_then_flag() {
    multi_pe_at("iput_fence_then_flag", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let (right, left) = ((me + 1) % n, (me + n - 1) % n);
        const ROUNDS: u64 = 20;
        let (count, ts) = (700usize, 5usize);
        let target = world.alloc::<u32>(count * ts * ROUNDS as usize);
        let flag = world.alloc::<u64>(1);
        world.barrier_all();
        for r in 0..ROUNDS {
            let base = r as usize * count * ts;
            let src: Vec<u32> = (0..count).map(|k| u32::make(data(me, k) + r)).collect();
            target.iput(right, base..base + count * ts, ts, &src, 1);
            world.fence();
            flag.p(right, 0, r + 1);
            flag.wait_until(0, Cmp::Ge, r + 1);
            for k in 0..count {
                assert_eq!(
                    target.local_get(base + k * ts),
                    u32::make(data(left, k) + r),
                    "round {r}: element {k} from PE {left} on PE {me} when the flag arrived"
                );
            }
        }
        world.barrier_all();
    });
}

/// Every PE iputs into and igets from every other PE at once (many transfers in flight to one
/// target, from several threads of progress), then checks what arrived.
#[test]
fn all_to_all_strided() {
    multi_pe_at("all_to_all_strided", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let count = 5000;
        let target = world.alloc::<u16>(n * count * 2);
        world.barrier_all();
        for pe in 0..n {
            let src: Vec<u16> = (0..count).map(|k| u16::make(data(me, k))).collect();
            let at = me * count * 2;
            target.iput(pe, at..at + count * 2, 2, &src, 1);
        }
        world.barrier_all();
        for from in 0..n {
            for k in 0..count {
                let i = from * count * 2 + 2 * k;
                assert_eq!(target.local_get(i), u16::make(data(from, k)), "{from} {k}");
                assert_eq!(target.local_get(i + 1), 0, "{from} {k}+1");
            }
        }
        for pe in 0..n {
            let mut back = vec![0u16; count];
            target.iget(pe, me * count * 2..(me + 1) * count * 2, 2, &mut back, 1);
            for (k, v) in back.iter().enumerate() {
                assert_eq!(*v, u16::make(data(me, k)), "iget from PE {pe}, element {k}");
            }
        }
        world.barrier_all();
    });
}

/// On two hosts (two PEs each), where the PEs of the other host are reached over TCP on both
/// paths: 8- and 1-byte cases, including one of several messages.
#[test]
fn strided_on_two_hosts() {
    multi_pe_hosts("strided_on_two_hosts", |world| {
        for &case in &CASES[2..] {
            run_case::<u64>(world, case);
        }
        run_case::<u8>(world, CASES[6]);
    });
}
