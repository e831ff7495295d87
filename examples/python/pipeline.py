"""A pipeline: PE k is stage k; blocks of data flow from PE 0 to the last PE.

In round r, stage k works on block r - k: it takes it from its inbox (PE 0 makes it), applies
its step (y = 2 y + k) and puts the result into the next stage's inbox with a slice put. The
inbox has two slots, used in turn, so that a block being read is never overwritten; a barrier
ends each round. The last stage keeps the results and checks them against a serial run.

    shmemrun -n 4 python examples/python/pipeline.py
"""

import sys

import numpy as np

import shmem_rs

BLOCKS, B = 6, 5
me, npes = shmem_rs.my_pe(), shmem_rs.n_pes()
last = npes - 1


def stage(k, y):
    """Stage k's work on a block."""
    return 2 * y + k


inbox = shmem_rs.sdo(np.int64, (2, B))  # two slots: rounds use them in turn
results = np.zeros((BLOCKS, B), np.int64)

for r in range(BLOCKS + npes - 1):
    j = r - me  # the block this stage works on in round r
    if 0 <= j < BLOCKS:
        y = np.arange(B) + 10 * j if me == 0 else inbox.local[(r - 1) % 2].copy()
        y = stage(me, y)
        if me < last:
            inbox[me + 1, r % 2, :] = y  # into the next stage's slot for this round
        else:
            results[j] = y
    shmem_rs.barrier_all()  # the round's blocks are delivered

ok = True
if me == last:
    expect = np.arange(B) + 10 * np.arange(BLOCKS)[:, None]
    for k in range(npes):
        expect = stage(k, expect)
    ok = np.array_equal(results, expect)
    print(f"pipeline: {BLOCKS} blocks through {npes} stages:", "ok" if ok else "MISMATCH")
inbox.free()
sys.exit(0 if ok else 1)
