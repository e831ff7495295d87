"""Threads: several Python threads calling the library at once (THREAD_MULTIPLE, the level
`init` gives), and the GIL released while a call waits for another PE.

Run: ``shmemrun -n 3 python -m pytest -q -p no:cacheprovider shmem-py/tests/test_threads.py``.
Every PE runs every test in the same order.
"""

import threading
import time

import numpy as np

import shmem_rs
from shmem_rs import shmem

ME = shmem.my_pe()
N = shmem.n_pes()
NXT = (ME + 1) % N
THREADS = 4
ROUNDS = 500


def test_thread_level_is_multiple():
    assert shmem.query_thread() == shmem.THREAD_MULTIPLE


def test_threads_put_and_add_at_once():
    counter = shmem.zeros(1, np.int64)
    slots = shmem.zeros(THREADS * ROUNDS, np.int64)
    x = shmem_rs.sdo(np.int32, (THREADS, 8))
    shmem.barrier_all()
    errors = []

    def work(t):
        try:
            for r in range(ROUNDS):
                shmem.atomic_add(counter, 1, NXT)
                k = t * ROUNDS + r
                shmem.put(slots[k : k + 1], np.array([ME * 100000 + k], np.int64), NXT)
                x[NXT, t, r % 8] = r
            shmem.quiet()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    shmem.barrier_all()
    prv = (ME - 1) % N
    assert counter[0] == THREADS * ROUNDS
    assert list(slots) == [prv * 100000 + k for k in range(THREADS * ROUNDS)]
    # Column c of a thread's row holds the last round r with r % 8 == c.
    want = [ROUNDS - 1 - ((ROUNDS - 1 - c) % 8) for c in range(8)]
    for t in range(THREADS):
        assert [int(v) for v in x.local[t]] == want
    shmem.barrier_all()
    x.free()
    shmem.free(slots)
    shmem.free(counter)


def test_barrier_releases_the_gil():
    # PE 0 arrives late; while the others wait in barrier_all, a thread of theirs runs.
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    th = threading.Thread(target=ticker)
    th.start()
    if ME == 0:
        time.sleep(0.3)
    before = len(ticks)
    shmem.barrier_all()
    during = len(ticks) - before
    stop.set()
    th.join()
    if ME != 0 and N > 1:
        assert during >= 20, f"the thread ran {during} times during a 0.3 s barrier"
    shmem.barrier_all()
