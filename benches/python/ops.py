"""Time per call of OpenSHMEM operations from Python, at 2 PEs, PE 0 to PE 1.

One script for every Python package with shmem4py's API:

    shmemrun -n 2 python benches/python/ops.py --api shmem_rs   # this project's native package
    oshrun -np 2 python benches/python/ops.py --api shmem4py    # shmem4py, on whichever library

Each case runs `reps` timed loops of `iters` calls (one untimed loop first) and prints one CSV row
`case,size,variant,median_ns,min_ns` (per call, over the loops). One-sided cases are timed on
PE 0 while PE 1 waits in a barrier; collectives (barrier_all, sum_reduce, alltoall) run on both
PEs and PE 0's loops are reported. The remote side is a NumPy array in symmetric memory; the
local side an ordinary NumPy array, wherever NumPy put it. Cases:

- `put + quiet`, `get`: 8 B and 1 MiB (`shmem.put` then `shmem.quiet`; `shmem.get`);
- `p + quiet`, `g`: one 8-byte element; `x[1, 3] = v` and `x[1, 3]` on a `shmem_rs.sdo`, and
  for shmem4py (which has no p or g) `put`/`get` of a 1-element array;
- `fetch_add`: `shmem.atomic_fetch_add` of an int64;
- `slice put + quiet`, `slice get`: 8 int64 at stride 2 on the target: `x[1, 0:16:2] = b` and
  `b = x[1, 0:16:2]` (a new array) on an sdo, and for shmem4py `shmem.iput`/`shmem.iget`
  (into an array made beforehand) with stride 2;
  `local slice assign` is `x.local[0:16:2] = b`, the NumPy assignment of the same elements on
  this PE (the yardstick of the slice rows);
- `barrier_all`, `sum_reduce` (one int64), `alltoall` (one int64 per PE, and 1 MiB per PE);
- `transpose`: the distributed transpose of a 512 x 512 float64 matrix (1 MiB per PE at 2 PEs)
  whose rows are split among the PEs, with `alltoall`: each PE packs the block of its rows that
  goes to PE q (its columns of q's share) into a symmetric source, `alltoall` moves them, and
  each PE writes every block it received, transposed, into its rows of the result (NumPy);
  `big` calls per loop.

Every result is checked after its timing; exits 1 on a wrong value.
"""

import argparse
import importlib
import statistics
import sys
import time

import numpy as np

BIG = 1 << 20


def timed(op, iters, reps):
    """Per-call nanoseconds of `reps` loops of `iters` calls of `op`, after one untimed loop."""
    per_call = []
    for rep in range(reps + 1):
        t0 = time.perf_counter_ns()
        for _ in range(iters):
            op()
        t1 = time.perf_counter_ns()
        if rep > 0:
            per_call.append((t1 - t0) / iters)
    return per_call


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--api", choices=("shmem_rs", "shmem4py"), required=True)
    ap.add_argument("--iters", type=int, default=20000, help="calls per loop, small cases")
    ap.add_argument("--big-iters", type=int, default=400, help="calls per loop at 1 MiB")
    ap.add_argument("--reps", type=int, default=15, help="timed loops per case")
    args = ap.parse_args()
    shmem = importlib.import_module(f"{args.api}.shmem")
    native = args.api == "shmem_rs"
    if native:
        import shmem_rs

    me, npes = shmem.my_pe(), shmem.n_pes()
    if npes != 2:
        if me == 0:
            print(f"ops.py: run at 2 PEs, not {npes}", file=sys.stderr)
        shmem.barrier_all()
        return 2
    its, big, reps = args.iters, args.big_iters, args.reps
    rows, bad = [], []

    def row(case, size, ns):
        rows.append(f"{case},{size},python,{statistics.median(ns):.1f},{min(ns):.1f}")

    def check(cond, what):
        if not cond:
            bad.append(what)

    # Contiguous put and get, 8 B and 1 MiB.
    for size in (8, BIG):
        n = its if size == 8 else big
        remote = shmem.zeros(size, dtype=np.uint8)
        local = np.full(size, 7, dtype=np.uint8)
        shmem.barrier_all()
        if me == 0:

            def put():
                shmem.put(remote, local, 1)
                shmem.quiet()

            row("put + quiet", size, timed(put, n, reps))
        shmem.barrier_all()
        if me == 1:
            check(np.all(remote == 7), f"put {size} B")
            remote[:] = 1
        shmem.barrier_all()
        if me == 0:
            local[:] = 0
            row("get", size, timed(lambda: shmem.get(local, remote, 1), n, reps))
            check(np.all(local == 1), f"get {size} B")
        shmem.barrier_all()
        shmem.free(remote)

    # One element: p and g.
    if native:
        x = shmem_rs.sdo(np.int64, 16)
        x.local[:] = 5
    else:
        x = shmem.zeros(16, dtype=np.int64)
        x[:] = 5
    one = np.array([9], dtype=np.int64)
    shmem.barrier_all()
    if me == 0:
        if native:

            def p():
                x[1, 3] = 9
                shmem.quiet()

            def g():
                return x[1, 3]

        else:
            xr = x[3:4]

            def p():
                shmem.put(xr, one, 1)
                shmem.quiet()

            got = np.zeros(1, dtype=np.int64)

            def g():
                shmem.get(got, xr, 1)
                return got[0]

        row("p + quiet", 8, timed(p, its, reps))
        row("g", 8, timed(g, its, reps))
        check(g() == 9, "p/g")

    # An atomic.
    counter = shmem.zeros(1, dtype=np.int64)
    shmem.barrier_all()
    if me == 0:
        row("fetch_add", 8, timed(lambda: shmem.atomic_fetch_add(counter, 1, 1), its, reps))
    shmem.barrier_all()
    if me == 1:
        check(counter[0] == its * (reps + 1), f"fetch_add: {counter[0]}")
    shmem.barrier_all()

    # Strided: 8 int64 at stride 2 on the target.
    src = np.arange(8, dtype=np.int64) + 100
    dst = np.zeros(8, dtype=np.int64)
    if native:
        local_view = x.local
    else:
        local_view = x
    shmem.barrier_all()
    if me == 0:
        if native:

            def sput():
                x[1, 0:16:2] = src
                shmem.quiet()

            def sget():
                return x[1, 0:16:2]  # a new array, as `b = x[pe, 0:16:2]` makes

        else:

            def sput():
                shmem.iput(x, src, 1, tst=2, sst=1, size=8)
                shmem.quiet()

            def sget():
                shmem.iget(dst, x, 1, tst=1, sst=2, size=8)

        def lput():
            local_view[0:16:2] = src

        row("slice put + quiet", 64, timed(sput, its, reps))
        row("slice get", 64, timed(sget, its, reps))
        row("local slice assign", 64, timed(lput, its, reps))
        got = sget() if native else (sget(), dst)[1]
        check(np.array_equal(got, src), f"slice get: {got}")
    shmem.barrier_all()

    # Collectives, on both PEs.
    row("barrier_all", 0, timed(shmem.barrier_all, its, reps))
    rs = shmem.zeros(1, dtype=np.int64)
    rd = shmem.zeros(1, dtype=np.int64)
    rs[0] = me + 1
    shmem.barrier_all()
    row("sum_reduce", 8, timed(lambda: shmem.sum_reduce(rd, rs), its // 4 or 1, reps))
    check(rd[0] == 3, f"sum_reduce: {rd[0]}")
    asrc = shmem.array(np.arange(npes, dtype=np.int64) + 10 * me)
    adst = shmem.zeros(npes, dtype=np.int64)
    shmem.barrier_all()
    row("alltoall", 8, timed(lambda: shmem.alltoall(adst, asrc), its // 4 or 1, reps))
    check(list(adst) == [10 * p + me for p in range(npes)], f"alltoall: {adst}")
    shmem.free(asrc)
    shmem.free(adst)

    # All-to-all of 1 MiB per PE (blocks of BIG / npes bytes).
    k = BIG // 8 // npes
    bsrc = shmem.array(np.arange(npes * k, dtype=np.int64) + me * npes * k)
    bdst = shmem.zeros(npes * k, dtype=np.int64)
    shmem.barrier_all()
    row("alltoall", BIG, timed(lambda: shmem.alltoall(bdst, bsrc), big, reps))
    want = np.concatenate([np.arange(k, dtype=np.int64) + p * npes * k + me * k for p in range(npes)])
    check(np.array_equal(bdst, want), "alltoall 1 MiB")
    shmem.free(bsrc)
    shmem.free(bdst)

    # The transpose kernel: rows [me * n, (me + 1) * n) of A (N x N) in, the same rows of A^T out.
    N = 512
    n = N // npes
    a = (np.arange(me * n, (me + 1) * n, dtype=np.float64)[:, None] * N
         + np.arange(N, dtype=np.float64)[None, :])
    out = np.empty((n, N), dtype=np.float64)
    tsrc = shmem.zeros(n * N, dtype=np.float64)
    tdst = shmem.zeros(n * N, dtype=np.float64)
    packed = np.asarray(tsrc).reshape(npes, n, n)
    got = np.asarray(tdst).reshape(npes, n, n)

    def transpose():
        # Block q: this PE's rows, PE q's columns, contiguous in the source.
        packed[:] = a.reshape(n, npes, n).transpose(1, 0, 2)
        shmem.alltoall(tdst, tsrc)
        # Block p came from PE p: its rows, this PE's columns; transposed, it is columns
        # [p * n, (p + 1) * n) of this PE's rows of A^T.
        out.reshape(n, npes, n)[:] = got.transpose(2, 0, 1)

    shmem.barrier_all()
    row("transpose", n * N * 8, timed(transpose, big, reps))
    rows_t = np.arange(me * n, (me + 1) * n, dtype=np.float64)[:, None]
    cols_t = np.arange(N, dtype=np.float64)[None, :]
    check(np.array_equal(out, cols_t * N + rows_t), "transpose")
    shmem.barrier_all()

    if me == 0:
        print("\n".join(rows), flush=True)
    for what in bad:
        print(f"ops.py: PE {me}: wrong value after {what}", file=sys.stderr)
    shmem.barrier_all()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
