"""Pass a token around the ring of PEs, then shift arrays one PE to the right.

1. PE 0 starts a token (an array); each PE in turn adds its number to it and puts it to its
   right neighbour (``token[right] = ...``); when it is back at PE 0 it holds 0 + 1 + ... .
2. Every PE at once puts its row, reversed, into its right neighbour (``row[right, ::-1] =
   ...``: one strided put with a negative step) and reads back a strided slice of it.

    shmemrun -n 3 python examples/python/ring.py
"""

import sys

import numpy as np

import shmem_rs

K = 8
me, npes = shmem_rs.my_pe(), shmem_rs.n_pes()
right = (me + 1) % npes
left = (me - 1) % npes
ok = True

with shmem_rs.sdo(np.int64, K) as token:
    # 1. The token goes round: one hop per barrier.
    if me == 0:
        token.local[:] = np.arange(K)
    shmem_rs.barrier_all()
    for hop in range(npes):
        if me == hop:
            token[right] = token.local + me  # a put of the whole array
        shmem_rs.barrier_all()
    if me == 0:
        expect = np.arange(K) + npes * (npes - 1) // 2
        ok &= np.array_equal(token.local, expect)
        print(f"ring: the token came back to PE 0 as {token.local.tolist()}")

with shmem_rs.sdo(np.float32, (2, K)) as row:
    # 2. Everyone shifts at once: row 0 of my right neighbour gets mine, reversed.
    mine = np.arange(K, dtype=np.float32) + 100 * me
    row[right, 0, ::-1] = mine
    shmem_rs.barrier_all()
    ok &= np.array_equal(row.local[0], (np.arange(K) + 100 * left)[::-1])
    # Read every other element of what my right neighbour received (from me).
    ok &= np.array_equal(row[right, 0, 1::2], mine[::-1][1::2])
    shmem_rs.barrier_all()

print(f"ring: PE {me} of {npes}:", "ok" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
