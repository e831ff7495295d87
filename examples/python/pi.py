"""Compute pi by the midpoint rule for the integral of 4 / (1 + x^2) over [0, 1].

Each PE sums every n_pes-th interval and puts its partial sum into its own slot of an array
at PE 0 (``parts[0, me] = s``); PE 0 adds the slots after a barrier and checks the result
against a serial sum and math.pi.

    shmemrun -n 4 python examples/python/pi.py
"""

import math
import sys

import numpy as np

import shmem_rs

N = 1_000_000
me, npes = shmem_rs.my_pe(), shmem_rs.n_pes()
h = 1.0 / N

x = (np.arange(me, N, npes) + 0.5) * h  # my intervals' midpoints
mine = np.sum(4.0 / (1.0 + x * x))

with shmem_rs.sdo(np.float64, npes) as parts:
    parts[0, me] = mine  # one element put into PE 0's slot for me
    shmem_rs.barrier_all()
    ok = True
    if me == 0:
        pi = parts.local.sum() * h
        xs = (np.arange(N) + 0.5) * h
        serial = np.sum(4.0 / (1.0 + xs * xs)) * h
        ok = math.isclose(pi, serial, rel_tol=1e-12) and abs(pi - math.pi) < 1e-9
        print(f"pi: {pi:.15f} on {npes} PEs (serial {serial:.15f}, error {pi - math.pi:.2e}):",
              "ok" if ok else "MISMATCH")
    shmem_rs.barrier_all()

sys.exit(0 if ok else 1)
