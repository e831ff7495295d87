"""The cost of starting the runtime from Python on each PE, for benches/python-init.sh, beside
the Rust program's (benches/src/bin/init_cost.rs).

Every PE imports NumPy, then sleeps until the wall-clock time START_AT (seconds since the epoch,
from the environment) so that all PEs begin together however long their interpreters took to
start; then it times `import shmem_rs` (the extension and its libraries), `shmem_rs.init()` and
`from shmem_rs import shmem` (shmem4py's API, on a started runtime). PE 0 prints one line per PE
and figure: `init_ns,PE,N` (all three), `init_only_ns,PE,N` (`init()` alone), `cpu_ns,PE,N` (the CPU
time the process used during all three), `init_only_cpu_ns,PE,N` (during `init()`), and
`objects,0,N`: the number of objects the garbage collector tracks after the start and the exchange
of these figures minus before the imports (the package keeps no Python object per peer, so N does
not grow with the PEs). The counts are taken outside every PE's timed part: a count walks all of
the interpreter's objects, and one PE counting while others are timed would slow them.
"""

import gc
import os
import resource
import time

import numpy as np

# Counting the objects walks every object of the interpreter (a few ms): before the common
# start, and after a barrier at the end, so that no PE counts while another is timed.
before = len(gc.get_objects())
at = float(os.environ.get("START_AT", "0"))
delay = at - time.time()
if delay > 0:
    time.sleep(delay)
ru = resource.getrusage(resource.RUSAGE_SELF)
cpu0 = ru.ru_utime + ru.ru_stime
t0 = time.perf_counter_ns()
import shmem_rs  # noqa: E402

t1 = time.perf_counter_ns()
ru = resource.getrusage(resource.RUSAGE_SELF)
cpu1 = ru.ru_utime + ru.ru_stime
shmem_rs.init()
t2 = time.perf_counter_ns()
ru = resource.getrusage(resource.RUSAGE_SELF)
init_cpu = int((ru.ru_utime + ru.ru_stime - cpu1) * 1e9)
from shmem_rs import shmem  # noqa: E402

ns = time.perf_counter_ns() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
cpu = int((ru.ru_utime + ru.ru_stime - cpu0) * 1e9)
only = t2 - t1
me, n = shmem.my_pe(), shmem.n_pes()
names = ("init_ns", "init_only_ns", "cpu_ns", "init_only_cpu_ns")
allns = shmem.zeros(len(names) * n, dtype=np.uint64)
k = len(names)
shmem.put(allns[k * me : k * me + k], np.array([ns, only, cpu, init_cpu], dtype=np.uint64), 0)
shmem.barrier_all()
objects = len(gc.get_objects()) - before
if me == 0:
    for pe in range(n):
        for i, name in enumerate(names):
            print(f"{name},{pe},{allns[k * pe + i]}")
    print(f"objects,0,{objects}")
shmem.barrier_all()
