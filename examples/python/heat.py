"""1-D heat equation, split across PEs, with halo exchange by slice puts.

Each PE owns N_LOCAL points of the rod plus one halo cell at each end. Every step it puts its
edge values into its neighbours' halos (``u[pe, a:b] = ...``), waits at a barrier, and updates
its points. At the end PE 0 gathers the rod and checks it against a serial run.

    shmemrun -n 4 python examples/python/heat.py
"""

import sys

import numpy as np

import shmem_rs

N_LOCAL, STEPS, ALPHA = 16, 200, 0.25

me, npes = shmem_rs.my_pe(), shmem_rs.n_pes()
n = N_LOCAL * npes
x = (np.arange(n) + 1) / (n + 1)
u0 = np.sin(np.pi * x) + 0.5 * np.sin(3 * np.pi * x)  # the whole rod at t = 0

u = shmem_rs.sdo(np.float64, N_LOCAL + 2)  # [left halo, my points..., right halo]
rod = shmem_rs.sdo(np.float64, n)  # the result, gathered at PE 0
u.local[1:-1] = u0[me * N_LOCAL:(me + 1) * N_LOCAL]  # the rod's ends stay at 0

for _ in range(STEPS):
    if me > 0:
        u[me - 1, -1:] = u.local[1:2]  # my first point -> left neighbour's right halo
    if me < npes - 1:
        u[me + 1, :1] = u.local[-2:-1]  # my last point -> right neighbour's left halo
    shmem_rs.barrier_all()  # halos are in
    v = u.local
    v[1:-1] = v[1:-1] + ALPHA * (v[:-2] - 2 * v[1:-1] + v[2:])
    shmem_rs.barrier_all()  # everyone is done reading its halos

rod[0, me * N_LOCAL:(me + 1) * N_LOCAL] = u.local[1:-1]
shmem_rs.barrier_all()

ok = True
if me == 0:
    s = np.concatenate(([0.0], u0, [0.0]))
    for _ in range(STEPS):
        s[1:-1] = s[1:-1] + ALPHA * (s[:-2] - 2 * s[1:-1] + s[2:])
    ok = np.allclose(rod.local, s[1:-1], rtol=0, atol=1e-12)
    print(f"heat: {n} points on {npes} PEs, {STEPS} steps, max |u| = {rod.local.max():.6f}:",
          "matches the serial run" if ok else "MISMATCH")
shmem_rs.barrier_all()
u.free()
rod.free()
sys.exit(0 if ok else 1)
