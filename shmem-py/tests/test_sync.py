"""Waits, tests, signals and locks of ``shmem_rs.shmem``, as a multi-PE job.

Run: ``shmemrun -n 3 python -m pytest -q -p no:cacheprovider shmem-py/tests/test_sync.py``.
Every PE runs every test, making the collective calls in the same order; a bad call is made on
PE 0 only, after which every PE meets at a barrier and checks the data.
"""

import threading
import time

import numpy as np
import pytest

from shmem_rs import shmem

ME = shmem.my_pe()
N = shmem.n_pes()
NXT = (ME + 1) % N
PRV = (ME - 1) % N


@pytest.mark.parametrize("t", ["i2", "u2", "i4", "u4", "i8", "u8"])
def test_wait_until_a_flag_from_the_previous_pe(t):
    flag = shmem.zeros(1, t)
    shmem.barrier_all()
    shmem.put(flag, np.array([ME + 1], t), NXT)
    shmem.wait_until(flag, shmem.CMP_EQ, PRV + 1)
    assert flag[0] == PRV + 1
    for cmp, v in zip(["eq", "ne", "gt", "le", "lt", "ge"], [PRV + 1, 0, 0, PRV + 1, PRV + 2, 1]):
        shmem.wait_until(flag, cmp, v)
        assert shmem.test(flag, cmp, v)
    assert not shmem.test(flag, "==", PRV + 2)
    assert not shmem.test(flag, shmem.CMP_LT, PRV + 1)
    shmem.barrier_all()
    shmem.free(flag)


def test_wait_releases_the_gil():
    flag = shmem.zeros(1, "i8")
    ticks = []

    def setter():
        # Runs only if the waiting thread let go of the GIL.
        for _ in range(50):
            ticks.append(1)
            time.sleep(0.002)
        shmem.atomic_set(flag, 1, NXT)

    shmem.barrier_all()
    th = threading.Thread(target=setter)
    th.start()
    shmem.wait_until(flag, "==", 1)
    assert flag[0] == 1
    th.join()
    assert len(ticks) == 50
    shmem.barrier_all()
    shmem.free(flag)


def test_wait_and_test_sets():
    n = 4
    ivars = shmem.zeros(n, "i4")
    shmem.barrier_all()
    # The previous PE sets elements 1 and 3 of this PE's copy to 7.
    shmem.put(ivars[1:2], np.array([7], "i4"), NXT)
    shmem.put(ivars[3:4], np.array([7], "i4"), NXT)
    shmem.barrier_all()
    assert shmem.wait_until_any(ivars, "==", 7) == 1
    assert shmem.wait_until_any(ivars, "==", 7, status=[0, 1, 0, 0]) == 3
    assert shmem.wait_until_some(ivars, "==", 7) == [1, 3]
    assert shmem.wait_until_all(ivars, "==", 7, status=[1, 0, 1, 0]) is None
    assert shmem.wait_until_all(ivars, ">=", 0) is None
    assert shmem.test_all(ivars, "==", 7) is False
    assert shmem.test_all(ivars, "==", 7, status=[1, 0, 1, 0]) is True
    assert shmem.test_any(ivars, "==", 9) is None
    assert shmem.test_any(ivars, shmem.CMP_NE, 0) == 1
    assert shmem.test_some(ivars, "==", 0) == [0, 2]
    assert shmem.test_some(ivars, "==", 0, status=[1, 1, 1, 1]) == []
    values = [0, 7, 0, 7]
    assert shmem.wait_until_all_vector(ivars, "==", values) is None
    assert shmem.test_all_vector(ivars, "==", np.array(values, "i4")) is True
    assert shmem.wait_until_any_vector(ivars, "==", [1, 1, 1, 7]) == 3
    assert shmem.test_any_vector(ivars, "==", [1, 1, 1, 1]) is None
    assert shmem.wait_until_some_vector(ivars, "!=", [0, 0, 0, 0]) == [1, 3]
    assert shmem.test_some_vector(ivars, ">", [0, 7, -1, 6]) == [2, 3]
    # No variables, or all excluded.
    empty = shmem.zeros(0, "i8")
    assert shmem.wait_until_any(empty, "==", 0) is None
    assert shmem.wait_until_some(empty, "==", 0) == []
    assert shmem.test_all(empty, "==", 1) is True
    assert shmem.wait_until_any(ivars, "==", 99, status=[1] * n) is None
    shmem.barrier_all()
    shmem.free(empty)
    shmem.free(ivars)


def test_bad_waits_raise_on_one_pe_only():
    ivars = shmem.zeros(3, "i8")
    flt = shmem.zeros(1, "f8")
    shmem.barrier_all()
    if ME == 0:
        with pytest.raises(shmem.NotSymmetricError):
            shmem.wait_until(np.zeros(1, "i8"), "==", 0)
        with pytest.raises(shmem.NotSymmetricError):
            shmem.test_any(np.zeros(3, "i8"), "==", 0)
        with pytest.raises(TypeError, match="float64"):
            shmem.wait_until(flt, "==", 0)
        with pytest.raises(ValueError, match="3 elements"):
            shmem.wait_until(ivars, "==", 0)
        with pytest.raises(ValueError):
            shmem.test(ivars[0:1], "~", 0)
        with pytest.raises(ValueError):
            shmem.test(ivars[0:1], 9, 0)
        with pytest.raises(ValueError, match="status"):
            shmem.wait_until_all(ivars, "==", 0, status=[0])
        with pytest.raises(ValueError, match="values"):
            shmem.wait_until_all_vector(ivars, "==", [0, 0])
    shmem.barrier_all()
    assert list(ivars) == [0, 0, 0]
    shmem.barrier_all()
    shmem.free(ivars)
    shmem.free(flt)


def test_put_signal_ring_and_add():
    data = shmem.zeros(4, "f8")
    sig = shmem.new_signal()
    assert shmem.signal_fetch(sig) == 0
    shmem.barrier_all()
    shmem.put_signal(data, np.full(4, ME + 0.5), NXT, sig, 1, shmem.SIGNAL_SET)
    assert shmem.signal_wait_until(sig, shmem.CMP_EQ, 1) == 1
    assert list(data) == [PRV + 0.5] * 4
    shmem.barrier_all()
    counter = shmem.new_signal()
    shmem.barrier_all()
    # Every PE adds ME+1 to PE 0's counter; the data goes too (size 0: the signal only).
    shmem.put_signal_nbi(data, np.zeros(4), 0, counter, ME + 1, shmem.SIGNAL_ADD, size=0)
    shmem.quiet()
    if ME == 0:
        total = N * (N + 1) // 2
        assert shmem.signal_wait_until(counter, ">=", total) == total
    shmem.barrier_all()
    if ME == 0:
        with pytest.raises(IndexError):
            shmem.put_signal(data, np.zeros(4), N, sig, 5, shmem.SIGNAL_SET)
        with pytest.raises(ValueError):
            shmem.put_signal(data, np.zeros(4), NXT, sig, 5, 7)
        with pytest.raises(shmem.NotSymmetricError):
            shmem.put_signal(np.zeros(4), np.zeros(4), NXT, sig, 5, shmem.SIGNAL_SET)
        with pytest.raises(shmem.NotSymmetricError):
            shmem.put_signal(data, np.zeros(4), NXT, np.zeros(1, "u8"), 5, shmem.SIGNAL_SET)
        with pytest.raises(TypeError):
            shmem.put_signal(data, np.zeros(4, "f4"), NXT, sig, 5, shmem.SIGNAL_SET)
        with pytest.raises(ValueError):
            shmem.put_signal(data, np.zeros(4), NXT, sig, 5, shmem.SIGNAL_SET, size=5)
    shmem.barrier_all()
    assert shmem.signal_fetch(sig) == 1
    assert list(data) == [PRV + 0.5] * 4
    shmem.barrier_all()
    shmem.del_signal(counter)
    shmem.del_signal(sig)
    shmem.free(data)


def test_locks_serialize_increments():
    lock = shmem.new_lock()
    counter = shmem.zeros(1, "i8")
    value = np.zeros(1, "i8")
    shmem.barrier_all()
    for _ in range(5):
        shmem.set_lock(lock)
        shmem.get(value, counter, 0)
        value += 1
        shmem.put(counter, value, 0)
        shmem.clear_lock(lock)
    lk = shmem.Lock()
    for _ in range(5):
        with lk:
            shmem.get(value, counter, 0)
            value += 1
            shmem.put(counter, value, 0)
    for _ in range(5):
        while not lk.acquire(blocking=False):
            pass
        shmem.get(value, counter, 0)
        value += 1
        shmem.put(counter, value, 0)
        lk.release()
    shmem.barrier_all()
    if ME == 0:
        assert counter[0] == 15 * N
        with pytest.raises(shmem.ShmemError):
            shmem.clear_lock(lock)
        with pytest.raises(shmem.NotSymmetricError):
            shmem.set_lock(np.zeros(1, "i8"))
        with pytest.raises(TypeError):
            shmem.test_lock(counter.view("i4"))
    shmem.barrier_all()
    assert shmem.test_lock(lock) in (False, True)
    shmem.barrier_all()
    # Whoever took it above releases it.
    try:
        shmem.clear_lock(lock)
    except shmem.ShmemError:
        pass
    shmem.barrier_all()
    lk.destroy()
    lk.destroy()
    shmem.del_lock(lock)
    shmem.free(counter)
