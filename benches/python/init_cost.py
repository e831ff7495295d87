"""The cost of starting the runtime from Python on each PE, for benches/python-init.sh, beside
the Rust program's (benches/src/bin/init_cost.rs).

Every PE imports NumPy, then sleeps until the wall-clock time START_AT (seconds since the epoch,
from the environment) so that all PEs begin together however long their interpreters took to
start; then it times `import shmem_rs` (the extension and its libraries), `shmem_rs.init()` and
`from shmem_rs import shmem` (shmem4py's API, on a started runtime). PE 0 prints one line per PE
and figure: `init_ns,PE,N` (all three), `init_only_ns,PE,N` (`init()` alone), and
`objects,0,N`: the number of objects the garbage collector tracks after the imports minus before
them (the package keeps no Python object per peer, so N does not grow with the PEs).
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
import shmem_rs  # noqa: E402

t1 = time.perf_counter_ns()
shmem_rs.init()
t2 = time.perf_counter_ns()
from shmem_rs import shmem  # noqa: E402

ns = time.perf_counter_ns() - t0
only = t2 - t1
objects = len(gc.get_objects()) - before
me, n = shmem.my_pe(), shmem.n_pes()
allns = shmem.zeros(2 * n, dtype=np.uint64)
shmem.put(allns[2 * me : 2 * me + 2], np.array([ns, only], dtype=np.uint64), 0)
shmem.barrier_all()
if me == 0:
    for pe in range(n):
        print(f"init_ns,{pe},{allns[2 * pe]}")
        print(f"init_only_ns,{pe},{allns[2 * pe + 1]}")
    print(f"objects,0,{objects}")
shmem.barrier_all()
