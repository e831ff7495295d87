//! Reductions at sizes on both sides of the direct path's threshold (`coll::large`, 16 KiB):
//! 1, 1000, 100_000 and 1_000_003 elements, every op on a few types, in place, and on a team of
//! stride 2, at 2, 3 and 5 PEs on the direct and UCX paths. Every PE checks every element
//! against values computed here independently (integers, and small integers in f64: exact).

use shmem_testkit as common;

use common::check_elements as check;
use common::multi_pe_at;
use shmem_core::prelude::*;

const SIZES: [usize; 4] = [1, 1000, 100_000, 1_000_003];

/// PE `pe`'s element `i`.
fn v(pe: usize, i: usize) -> i64 {
    ((i as i64).wrapping_mul(2_654_435_761) ^ (pe as i64 * 977)) % 100_003 - 50_000
}

fn fold(n: usize, i: usize, f: impl Fn(i64, i64) -> i64) -> i64 {
    (1..n).fold(v(0, i), |a, pe| f(a, v(pe, i)))
}

#[test]
fn every_op_at_sizes_across_the_threshold() {
    multi_pe_at(
        "every_op_at_sizes_across_the_threshold",
        &[2, 3, 5],
        |world| {
            let team = world.team_world();
            let (me, n) = (team.my_pe(), team.n_pes());
            for len in SIZES {
                let src: Vec<i64> = (0..len).map(|i| v(me, i)).collect();
                let dest = world.alloc::<i64>(len);
                let mut got = vec![0i64; len];
                type Op = fn(i64, i64) -> i64;
                let ops: [(&str, Op); 7] = [
                    ("sum", i64::wrapping_add),
                    ("prod", i64::wrapping_mul),
                    ("max", i64::max),
                    ("min", i64::min),
                    ("and", |a, b| a & b),
                    ("or", |a, b| a | b),
                    ("xor", |a, b| a ^ b),
                ];
                for (name, f) in ops {
                    match name {
                        "sum" => team.sum_reduce(&dest, &src),
                        "prod" => team.prod_reduce(&dest, &src),
                        "max" => team.max_reduce(&dest, &src),
                        "min" => team.min_reduce(&dest, &src),
                        "and" => team.and_reduce(&dest, &src),
                        "or" => team.or_reduce(&dest, &src),
                        _ => team.xor_reduce(&dest, &src),
                    }
                    dest.local_read(.., &mut got);
                    check(&format!("{name}_reduce of {len} i64"), &got, |i| {
                        fold(n, i, f)
                    });
                }
                // The source is reusable at once: a second reduction with other values.
                let src2: Vec<i64> = src.iter().map(|x| x.wrapping_mul(3)).collect();
                team.sum_reduce(&dest, &src2);
                dest.local_read(.., &mut got);
                check(&format!("second sum_reduce of {len} i64"), &got, |i| {
                    fold(n, i, i64::wrapping_add).wrapping_mul(3)
                });
                // Other types: u8 (wrapping), f64 (small integers: exact), i32 max.
                let small: Vec<u8> = (0..len).map(|i| (v(me, i) & 0xff) as u8).collect();
                let d8 = world.alloc::<u8>(len);
                team.sum_reduce(&d8, &small);
                let mut g8 = vec![0u8; len];
                d8.local_read(.., &mut g8);
                check(&format!("sum_reduce of {len} u8"), &g8, |i| {
                    (0..n).fold(0u8, |a, pe| a.wrapping_add((v(pe, i) & 0xff) as u8))
                });
                let fl: Vec<f64> = src.iter().map(|&x| x as f64).collect();
                let df = world.alloc::<f64>(len);
                team.sum_reduce(&df, &fl);
                let mut gf = vec![0f64; len];
                df.local_read(.., &mut gf);
                check(&format!("sum_reduce of {len} f64"), &gf, |i| {
                    fold(n, i, i64::wrapping_add) as f64
                });
                let i32s: Vec<i32> = src.iter().map(|&x| x as i32).collect();
                let d32 = world.alloc::<i32>(len);
                team.min_reduce(&d32, &i32s);
                let mut g32 = vec![0i32; len];
                d32.local_read(.., &mut g32);
                check(&format!("min_reduce of {len} i32"), &g32, |i| {
                    fold(n, i, i64::min) as i32
                });
                drop(d32);
                drop(df);
                drop(d8);
                drop(dest);
            }
        },
    );
}

#[test]
fn in_place_and_into_a_longer_dest() {
    multi_pe_at("in_place_and_into_a_longer_dest", &[2, 3, 5], |world| {
        let team = world.team_world();
        let (me, n) = (team.my_pe(), team.n_pes());
        for len in SIZES {
            let a = world.alloc::<i64>(len);
            let mine: Vec<i64> = (0..len).map(|i| v(me, i)).collect();
            a.local_write(.., &mine);
            team.sum_reduce_in_place(&a);
            let mut got = vec![0i64; len];
            a.local_read(.., &mut got);
            check(&format!("sum_reduce_in_place of {len}"), &got, |i| {
                fold(n, i, i64::wrapping_add)
            });
            // Again on the result: every element is now n times the sum.
            team.xor_reduce_in_place(&a);
            a.local_read(.., &mut got);
            let s = |i| fold(n, i, i64::wrapping_add);
            check(&format!("xor_reduce_in_place of {len}"), &got, |i| {
                if n % 2 == 1 { s(i) } else { 0 }
            });
            // A longer dest: the elements past the source's length stay as they were.
            let long = world.alloc::<i64>(len + 7);
            long.local_write(len.., &[-1; 7]);
            team.max_reduce(&long, &mine);
            let mut got = vec![0i64; len + 7];
            long.local_read(.., &mut got);
            check(
                &format!("max_reduce of {len} into {}", len + 7),
                &got,
                |i| {
                    if i < len { fold(n, i, i64::max) } else { -1 }
                },
            );
            drop(long);
            drop(a);
        }
    });
}

#[test]
fn teams_of_stride_two() {
    multi_pe_at("teams_of_stride_two", &[3, 5], |world| {
        let all = world.team_world();
        let n = all.n_pes();
        // The even world PEs: 0, 2, 4, ...
        let members = n.div_ceil(2);
        let team = all
            .split_strided(0, 2, members, TeamConfig::default())
            .expect("split");
        for len in [1000, 100_000, 1_000_003] {
            let dest = world.alloc::<u32>(len);
            if let Some(t) = &team {
                let me = t.my_pe();
                let src: Vec<u32> = (0..len).map(|i| v(me, i) as u32).collect();
                t.sum_reduce(&dest, &src);
                let mut got = vec![0u32; len];
                dest.local_read(.., &mut got);
                check(&format!("stride-2 sum_reduce of {len}"), &got, |i| {
                    (0..members).fold(0u32, |a, pe| a.wrapping_add(v(pe, i) as u32))
                });
                t.sum_reduce_in_place(&dest);
                dest.local_read(.., &mut got);
                check(&format!("stride-2 in place of {len}"), &got, |i| {
                    (0..members)
                        .fold(0u32, |a, pe| a.wrapping_add(v(pe, i) as u32))
                        .wrapping_mul(members as u32)
                });
            }
            world.barrier_all();
            drop(dest);
        }
    });
}

/// PE `pe`'s f32 element `i`: no small integer, so that the order of the additions shows.
fn f(pe: usize, i: usize) -> f32 {
    ((i as f32) * 0.37 + (pe as f32) * 1.91).sin() * 1000.0 + 0.125 * pe as f32
}

/// Sums of f32 from private, symmetric and in-place sources, on the world and on a team of
/// stride 2, at sizes that are no multiple of the pieces: every member gets the bits of the sum
/// in team order, `((x0 + x1) + x2) + ...`, computed here.
#[test]
fn float_sums_in_team_order_from_every_kind_of_source() {
    multi_pe_at(
        "float_sums_in_team_order_from_every_kind_of_source",
        &[2, 3, 5],
        |world| {
            let all = world.team_world();
            let n = all.n_pes();
            let evens = all
                .split_strided(0, 2, n.div_ceil(2), TeamConfig::default())
                .expect("split");
            for len in [100_003, 1_000_003] {
                let dest = world.alloc::<f32>(len);
                let sym = world.alloc::<f32>(len);
                let mut got = vec![0f32; len];
                for team in [Some(&all), evens.as_ref()].into_iter().flatten() {
                    let (me, k) = (team.my_pe(), team.n_pes());
                    // Member p of this team holds the values of p.
                    let mine: Vec<f32> = (0..len).map(|i| f(me, i)).collect();
                    let want = |i: usize| (1..k).fold(f(0, i), |a, p| a + f(p, i));
                    for kind in ["private", "symmetric", "in place"] {
                        sym.local_write(.., &mine);
                        dest.local_write(.., &mine);
                        team.barrier();
                        match kind {
                            "private" => team.sum_reduce(&dest, &mine),
                            // SAFETY: nobody writes `sym` until the barrier below.
                            "symmetric" => team.sum_reduce(&dest, unsafe { sym.local_slice() }),
                            _ => team.sum_reduce_in_place(&dest),
                        }
                        dest.local_read(.., &mut got);
                        if let Some(i) = (0..len).find(|&i| got[i].to_bits() != want(i).to_bits()) {
                            panic!(
                                "{kind} sum of {len} f32 over {k} members: element {i} is \
                                 {} instead of {}",
                                got[i],
                                want(i)
                            );
                        }
                        team.barrier();
                    }
                }
                world.barrier_all();
            }
        },
    );
}

/// Reductions on one node just below, at and just above the largest one that the mailbox
/// takes in one exchange (16 KiB / n less a header at up to 8 members, 1 KiB beyond), where
/// the larger ones now take the direct path: at 4 PEs 510 `i64`s fit one exchange, at 8 PEs
/// 254, at 9 PEs 128 (and 1020 `f32`s, 508, 256). Private, symmetric and in-place sources,
/// sum and max of `i64`, sums of `f32` (small integers: exact in any order); every PE checks
/// every element, and that the elements past `len` of a longer `dest` are untouched.
#[test]
fn reductions_around_one_mailbox_exchange() {
    multi_pe_at(
        "reductions_around_one_mailbox_exchange",
        &[4, 8, 9],
        |world| {
            let team = world.team_world();
            let (me, n) = (team.my_pe(), team.n_pes());
            let lens = [
                1, 127, 128, 129, 253, 254, 255, 256, 257, 507, 509, 510, 511, 1019, 1020, 1021,
                2049,
            ];
            let max_len = 2049;
            let dest = world.alloc::<i64>(max_len + 3);
            let sym = world.alloc::<i64>(max_len);
            let fdest = world.alloc::<f32>(max_len + 3);
            let mut got = vec![0i64; max_len + 3];
            let mut fgot = vec![0f32; max_len + 3];
            for len in lens {
                let mine: Vec<i64> = (0..len).map(|i| v(me, i)).collect();
                let sum = |i| fold(n, i, i64::wrapping_add);
                for kind in ["private", "symmetric", "in place"] {
                    dest.local_write(.., &vec![-7; max_len + 3]);
                    dest.local_write(..len, &mine);
                    sym.local_write(..len, &mine);
                    team.barrier();
                    match kind {
                        "private" => team.sum_reduce(&dest, &mine),
                        // SAFETY: nobody writes `sym` until the barrier below.
                        "symmetric" => team.sum_reduce(&dest, unsafe { &sym.local_slice()[..len] }),
                        _ => team.sum_reduce_in_place(&dest.slice(..len)),
                    }
                    dest.local_read(.., &mut got);
                    check(&format!("{kind} sum_reduce of {len} i64"), &got[..len], sum);
                    check(
                        &format!("elements past {len} ({kind})"),
                        &got[len..],
                        |_| -7,
                    );
                    team.barrier();
                }
                team.max_reduce(&dest, &mine);
                dest.local_read(..len, &mut got[..len]);
                check(&format!("max_reduce of {len} i64"), &got[..len], |i| {
                    fold(n, i, i64::max)
                });
                let fl: Vec<f32> = (0..len).map(|i| (v(me, i) % 1000) as f32).collect();
                team.sum_reduce(&fdest, &fl);
                fdest.local_read(..len, &mut fgot[..len]);
                check(&format!("sum_reduce of {len} f32"), &fgot[..len], |i| {
                    (0..n).map(|pe| (v(pe, i) % 1000) as f32).sum::<f32>()
                });
                world.barrier_all();
            }
        },
    );
}
