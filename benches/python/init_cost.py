"""The cost of `from shmem_rs import shmem` (the import, which starts the runtime) on each PE,
for benches/python-init.sh, beside the Rust init's (benches/src/bin/init_cost.rs).

Every PE imports NumPy, then sleeps until the wall-clock time START_AT (seconds since the epoch,
from the environment) so that all PEs begin together however long their interpreters took to
start; then it times the import. PE 0 prints one line per PE, `init_ns,PE,NANOSECONDS`, and
`objects,PE0,N`: the number of objects the garbage collector tracks after the import minus
before it (the package keeps no Python object per peer, so N does not grow with the PEs).
"""

import gc
import os
import time

import numpy as np

at = float(os.environ.get("START_AT", "0"))
delay = at - time.time()
if delay > 0:
    time.sleep(delay)
before = len(gc.get_objects())
t0 = time.perf_counter_ns()
from shmem_rs import shmem  # noqa: E402

ns = time.perf_counter_ns() - t0
objects = len(gc.get_objects()) - before
me, n = shmem.my_pe(), shmem.n_pes()
allns = shmem.zeros(n, dtype=np.uint64)
shmem.put(allns[me : me + 1], np.array([ns], dtype=np.uint64), 0)
shmem.barrier_all()
if me == 0:
    for pe in range(n):
        print(f"init_ns,{pe},{allns[pe]}")
    print(f"objects,0,{objects}")
shmem.barrier_all()
