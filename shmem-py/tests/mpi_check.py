"""shmem_rs under mpirun, with mpi4py imported before or after it (argv[1]: before | after).

Run as `mpirun -np 4 python shmem-py/tests/mpi_check.py before`. Both libraries start through
PMIx and must agree on who is who; a put around the ring and an MPI allreduce check it.
"""

import sys

import numpy as np

order = sys.argv[1] if len(sys.argv) > 1 else "before"
if order == "before":
    from mpi4py import MPI
    from shmem_rs import shmem
else:
    from shmem_rs import shmem
    from mpi4py import MPI

comm = MPI.COMM_WORLD
me, n = shmem.my_pe(), shmem.n_pes()
assert (me, n) == (comm.Get_rank(), comm.Get_size()), (me, n, comm.Get_rank(), comm.Get_size())
a = shmem.zeros(4, dtype=np.int64)
shmem.put(a, np.full(4, me, dtype=np.int64), (me + 1) % n)
shmem.barrier_all()
assert list(a) == [(me - 1) % n] * 4, a
total = comm.allreduce(int(a[0]), op=MPI.SUM)
assert total == n * (n - 1) // 2, total
shmem.barrier_all()
if me == 0:
    print(f"mpi_check ({order}): {n} PEs agree with MPI; ring put and allreduce ok")
