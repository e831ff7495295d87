"""Put and get latency through shmem4py (the Python bindings), 8 B and 1 MiB, PE 0 to PE 1.

Run at 2 PEs under any OpenSHMEM launcher, with shmem4py built against that implementation:

    oshrun -np 2 python benches/python/latency.py [--iters N] [--big-iters N] [--reps N]

PE 0 times `iters` calls in a loop, `reps` loops per case (one untimed loop first), while PE 1
waits in a barrier; each case prints one CSV row case,size,variant,median_ns,min_ns (per call,
over the loops), as benches/c/latency.c does. The remote side is a NumPy array in symmetric
memory (shmem.zeros); the local side an ordinary NumPy array, wherever NumPy put it. put is
shmem.put followed by shmem.quiet (the put completed at PE 1); get is shmem.get. Every byte is
checked after the timing. Exits 1 on a wrong value.
"""

import argparse
import statistics
import sys
import time

import numpy as np
from shmem4py import shmem

SIZES = (8, 1 << 20)


def timed(op, iters, reps):
    """Per-call nanoseconds of `reps` loops of `iters` calls of `op`, after one loop untimed."""
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
    ap.add_argument("--iters", type=int, default=20000, help="calls per loop at 8 B")
    ap.add_argument("--big-iters", type=int, default=400, help="calls per loop at 1 MiB")
    ap.add_argument("--reps", type=int, default=15, help="timed loops per case")
    args = ap.parse_args()

    me, npes = shmem.my_pe(), shmem.n_pes()
    if npes != 2:
        if me == 0:
            print(f"latency.py: run at 2 PEs, not {npes}", file=sys.stderr)
        shmem.barrier_all()
        return 2
    ok = True
    for size in SIZES:
        iters = args.iters if size <= 4096 else args.big_iters
        remote = shmem.zeros(size, dtype=np.uint8)
        local = np.full(size, 7, dtype=np.uint8)
        shmem.barrier_all()
        rows = []
        if me == 0:

            def put():
                shmem.put(remote, local, 1)
                shmem.quiet()

            rows.append(("put", timed(put, iters, args.reps)))
        shmem.barrier_all()
        if me == 1 and not np.all(remote == 7):
            print(f"latency.py: put of {size} B: wrong bytes at PE 1", file=sys.stderr)
            ok = False
        if me == 1:
            remote[:] = 1
        shmem.barrier_all()
        if me == 0:
            local[:] = 0
            rows.append(("get", timed(lambda: shmem.get(local, remote, 1), iters, args.reps)))
            if not np.all(local == 1):
                print(f"latency.py: get of {size} B: wrong bytes at PE 0", file=sys.stderr)
                ok = False
            for case, ns in rows:
                print(f"{case},{size},python,{statistics.median(ns):.1f},{min(ns):.1f}")
            sys.stdout.flush()
        shmem.barrier_all()
        shmem.free(remote)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
