// Runs as a single PE (no launcher): every `shmem!` form against PE 0, with checked results.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 16] = [0.0; 16];
#[symmetric]
static HITS: [u64; 4] = [0; 4];
#[symmetric]
static COUNT: u64 = 0;
#[symmetric]
static TEMP: f64 = 1.5;

fn main() {
    let world = shmem_core::init().unwrap();
    assert_eq!(world.n_pes(), 1);
    let pe = world.my_pe();
    let heap = world.alloc::<i32>(8);

    // Contiguous put and get.
    shmem!(A[pe, 0..4] = [1.0, 2.0, 3.0, 4.0]);
    let mut back = [0.0; 4];
    shmem!(back = A[pe, 0..4]);
    assert_eq!(back, [1.0, 2.0, 3.0, 4.0]);

    // Strided put and get: elements 4, 6, 8, 10.
    shmem!(A[pe, 4..12;2] = vec![5.0, 6.0, 7.0, 8.0]);
    let mut every_other = vec![0.0; 4];
    shmem!(every_other = A[pe, 4..12;2]);
    assert_eq!(every_other, [5.0, 6.0, 7.0, 8.0]);
    assert_eq!(A.local_get(5), 0.0);

    // Strided on the local side too (A[0..4] is restored right after).
    let column = [1.0, 0.0, 2.0, 0.0, 3.0, 0.0, 4.0];
    shmem!(A[pe, 0..4] = column[0..7;2]);
    let mut wide = [9.0; 7];
    shmem!(wide[0..7;2] = A[pe, 0..4]);
    assert_eq!(wide, [1.0, 9.0, 2.0, 9.0, 3.0, 9.0, 4.0]);
    let mut pairs = [0.0; 4];
    shmem!(pairs[0..4;2] = A[pe, 4..8;2]);
    assert_eq!(pairs, [5.0, 0.0, 6.0, 0.0]);

    // Single elements: p and g, as a statement and as an expression.
    shmem!(A[pe, 15] = 9.5);
    let x: f64 = shmem!(A[pe, 15]);
    assert_eq!(x, 9.5);
    let mut y = -1.0;
    assert_eq!(y, -1.0);
    shmem!(y = A[pe, 15]);
    assert_eq!(y, 9.5);
    let mut v = [0.0; 3];
    shmem!((v[1]) = A[pe, 2]);
    assert_eq!(v, [0.0, 3.0, 0.0]);

    // Whole scalar statics.
    shmem!(COUNT[pe] = 3);
    assert_eq!(shmem!(COUNT[pe]), 3);
    let mut c = 0;
    assert_eq!(c, 0);
    shmem!(c = COUNT[pe]);
    assert_eq!(c, 3);
    assert_eq!(shmem!(TEMP[pe]), 1.5);

    // Whole static array through `NAME[pe]`.
    let whole: [f64; 16] = shmem!(A[pe]);
    assert_eq!(whole[..4], [1.0, 2.0, 3.0, 4.0]);

    // Heap arrays, open ranges, sub-slices on both sides.
    shmem!(heap[pe, ..] = [7; 8]);
    let mut part = [0; 8];
    shmem!(part[..3] = heap[pe, 5..]);
    assert_eq!(part, [7, 7, 7, 0, 0, 0, 0, 0]);
    let src = [1, 2, 3, 4, 5];
    shmem!(heap[pe, ..2] = &src[..2]);
    shmem!(heap[pe, 2..=3] = &src[2..4]);
    let mut all = vec![0; 8];
    shmem!(all = heap[pe, ..]);
    assert_eq!(all, [1, 2, 3, 4, 7, 7, 7, 7]);

    // Any integer type for the PE, indices, bounds and strides.
    shmem!(A[pe as u8, 2i64] = 30.0);
    shmem!(A[pe as i32, 12u16..16u16;2i32] = [1.25, 2.25]);
    assert_eq!(shmem!(A[0u64, 2u8]), 30.0);
    assert_eq!((A.local_get(12), A.local_get(14)), (1.25, 2.25));

    // Several statements in one call; the last one is the value.
    let last = shmem!(HITS[pe, 0] = 10; HITS[pe, 1] = 20; HITS[pe, 1]);
    assert_eq!(last, 20);

    // Non-fetching atomics.
    shmem!(HITS[pe, 0] += 5);
    shmem!(HITS[pe, 0] -= 3);
    assert_eq!(HITS.local_get(0), 12);
    shmem!(HITS[pe, 2] |= 0b1100);
    shmem!(HITS[pe, 2] &= 0b0110);
    shmem!(HITS[pe, 2] ^= 0b0001);
    assert_eq!(HITS.local_get(2), 0b0101);
    shmem!(COUNT[pe] += 4);
    assert_eq!(COUNT.local(), 7);
    shmem!(heap[pe, 0] += 2);
    assert_eq!(shmem!(heap[pe, 0]), 3);

    // Fetching and method-form atomics.
    assert_eq!(shmem!(HITS[pe, 1].fetch_add(5)), 20);
    assert_eq!(shmem!(HITS[pe, 1].fetch()), 25);
    shmem!(HITS[pe, 1].set(40));
    assert_eq!(shmem!(HITS[pe, 1].swap(41)), 40);
    assert_eq!(shmem!(HITS[pe, 1].compare_swap(41, 50)), 41);
    assert_eq!(shmem!(HITS[pe, 1].compare_swap(41, 60)), 50);
    assert_eq!(shmem!(HITS[pe, 1].fetch_inc()), 50);
    shmem!(HITS[pe, 1].inc());
    shmem!(HITS[pe, 1].add(8));
    shmem!(HITS[pe, 1].sub(10));
    assert_eq!(HITS.local_get(1), 50);
    shmem!(HITS[pe, 3].or(0b1010));
    shmem!(HITS[pe, 3].and(0b0011));
    shmem!(HITS[pe, 3].xor(0b0100));
    assert_eq!(HITS.local_get(3), 0b0110);
    assert_eq!(shmem!(HITS[pe, 3].fetch_or(0b1000)), 0b0110);
    assert_eq!(shmem!(HITS[pe, 3].fetch_and(0b1100)), 0b1110);
    assert_eq!(shmem!(HITS[pe, 3].fetch_xor(0b1111)), 0b1100);
    assert_eq!(HITS.local_get(3), 0b0011);
    assert_eq!(shmem!(COUNT[pe].fetch_inc()), 7);
    assert_eq!(shmem!(COUNT[pe].compare_swap(8, 1)), 8);
    assert_eq!(COUNT.local(), 1);

    // Floats have atomic fetch, set and swap.
    assert_eq!(shmem!(A[pe, 15].fetch()), 9.5);
    shmem!(A[pe, 15].set(0.5));
    assert_eq!(shmem!(A[pe, 15].swap(2.0)), 0.5);
    assert_eq!(shmem!(TEMP[pe].swap(3.5)), 1.5);
    assert_eq!(TEMP.local(), 3.5);

    // Non-blocking put and get, one or several per scope.
    let src = [11, 12, 13];
    let mut got = [0; 3];
    world.nbi(|s| shmem!(nbi s: heap[pe, 0..3] = src));
    world.nbi(|s| shmem!(nbi s: got = heap[pe, 0..3]));
    assert_eq!(got, src);
    let more = vec![21, 22];
    let mut a = [0; 2];
    let mut b = vec![0; 3];
    world.nbi(|s| {
        shmem!(nbi s: heap[pe, 6..] = &more[..]; nbi s: a = heap[pe, 1..3]);
        shmem!(nbi s: b[..] = heap[pe, ..3]);
    });
    assert_eq!(a, [12, 13]);
    assert_eq!(b, [11, 12, 13]);
    assert_eq!(heap.local_get(7), 22);
}
