"""Atomic memory operations of ``shmem_rs.shmem``, as a multi-PE job.

Run: ``shmemrun -n 3 python -m pytest -q -p no:cacheprovider shmem-py/tests/test_amo.py``.
Every PE runs every test, making the collective calls in the same order; a bad call is made on
PE 0 only, after which every PE meets at a barrier and checks that nothing moved.
"""

import numpy as np
import pytest

from shmem_rs import shmem

ME = shmem.my_pe()
N = shmem.n_pes()
NXT = (ME + 1) % N
PRV = (ME - 1) % N

INTS = ["i4", "i8", "u4", "u8"]
FLOATS = ["f4", "f8"]


@pytest.mark.parametrize("t", INTS)
def test_fetch_add_from_every_pe(t):
    tgt = shmem.zeros(1, t)
    shmem.barrier_all()
    olds = [shmem.atomic_fetch_add(tgt, ME + 1, pe) for pe in range(N)]
    assert all(isinstance(o, int) for o in olds)
    shmem.barrier_all()
    total = N * (N + 1) // 2
    assert tgt[0] == total
    # Read back on the other PEs.
    assert shmem.atomic_fetch(tgt, NXT) == total
    assert shmem.atomic_fetch(tgt, PRV) == total
    shmem.barrier_all()
    shmem.free(tgt)


@pytest.mark.parametrize("t", INTS)
def test_standard_and_bitwise_on_the_next_pe(t):
    tgt = shmem.zeros(1, t)
    shmem.barrier_all()
    assert shmem.atomic_swap(tgt, 40, NXT) == 0
    assert shmem.atomic_compare_swap(tgt, 1, 99, NXT) == 40  # no match: unchanged
    assert shmem.atomic_compare_swap(tgt, 40, 41, NXT) == 41 - 1
    shmem.atomic_inc(tgt, NXT)
    assert shmem.atomic_fetch_inc(tgt, NXT) == 42
    shmem.atomic_add(tgt, 7, NXT)
    assert shmem.atomic_fetch(tgt, NXT) == 50
    shmem.atomic_set(tgt, 0b1100, NXT)
    assert shmem.atomic_fetch_or(tgt, 0b0011, NXT) == 0b1100
    assert shmem.atomic_fetch_and(tgt, 0b0110, NXT) == 0b1111
    assert shmem.atomic_fetch_xor(tgt, 0b0101, NXT) == 0b0110
    shmem.atomic_or(tgt, 0b1000, NXT)
    shmem.atomic_and(tgt, 0b1011, NXT)
    shmem.atomic_xor(tgt, 0b0001, NXT)
    shmem.barrier_all()
    # PRV did the same to this PE's copy: ((0b0011 | 0b1000) & 0b1011) ^ 1 = 0b1010.
    assert tgt[0] == 0b1010
    assert shmem.atomic_fetch(tgt, PRV) == 0b1010
    shmem.barrier_all()
    shmem.free(tgt)


def test_unsigned_wraps_and_negative_values():
    tgt = shmem.zeros(1, "u4")
    shmem.barrier_all()
    shmem.atomic_set(tgt, -1, NXT)
    assert shmem.atomic_fetch(tgt, NXT) == 2**32 - 1
    assert shmem.atomic_fetch_add(tgt, 1, NXT) == 2**32 - 1
    assert shmem.atomic_fetch(tgt, NXT) == 0
    shmem.barrier_all()
    shmem.free(tgt)
    tgt = shmem.zeros(1, "i8")
    shmem.barrier_all()
    shmem.atomic_add(tgt, -5, NXT)
    shmem.barrier_all()
    assert tgt[0] == -5
    shmem.free(tgt)


@pytest.mark.parametrize("t", FLOATS)
def test_extended_on_floats(t):
    tgt = shmem.zeros(1, t)
    shmem.barrier_all()
    shmem.atomic_set(tgt, 1.5 + ME, NXT)
    shmem.barrier_all()
    assert tgt[0] == 1.5 + PRV
    shmem.barrier_all()
    assert shmem.atomic_swap(tgt, 0.25, NXT) == 1.5 + ME
    shmem.barrier_all()
    assert shmem.atomic_fetch(tgt, PRV) == 0.25
    assert isinstance(shmem.atomic_fetch(tgt, PRV), float)
    shmem.barrier_all()
    assert shmem.atomic_fetch_op(tgt, 2.0, shmem.AMO_SET, NXT) == 0.25
    shmem.barrier_all()
    assert tgt[0] == 2.0
    shmem.free(tgt)


def test_atomic_op_names_and_nbi():
    tgt = shmem.zeros(1, "i8")
    fetch = np.zeros(1, "i8")
    shmem.barrier_all()
    shmem.atomic_op(tgt, None, shmem.AMO_INC, NXT)
    shmem.atomic_op(tgt, 10, "add", NXT)
    assert shmem.atomic_fetch_op(tgt, None, "inc", NXT) == 11
    assert shmem.atomic_fetch_op(tgt, 3, shmem.AMO.XOR, NXT) == 12
    shmem.atomic_fetch_add_nbi(fetch, tgt, 100, NXT)
    shmem.quiet()
    assert fetch[0] == 12 ^ 3
    shmem.atomic_fetch_op_nbi(fetch, tgt, 1, shmem.AMO_SET, NXT)
    shmem.quiet()
    assert fetch[0] == (12 ^ 3) + 100
    shmem.atomic_fetch_nbi(fetch, tgt, NXT)
    shmem.atomic_compare_swap_nbi(fetch[0:1], tgt, 1, 2, NXT)
    shmem.quiet()
    assert fetch[0] == 1
    shmem.atomic_fetch_inc_nbi(fetch, tgt, NXT, ctx=shmem.CTX_DEFAULT)
    shmem.quiet()
    assert fetch[0] == 2
    shmem.barrier_all()
    assert tgt[0] == 3
    shmem.free(tgt)


def test_bad_input_raises_on_one_pe_only():
    tgt = shmem.zeros(1, "i8")
    pair = shmem.zeros(2, "i8")
    short = shmem.zeros(1, "i2")
    flt = shmem.zeros(1, "f8")
    shmem.barrier_all()
    if ME == 0:
        with pytest.raises(IndexError, match=str(N)):
            shmem.atomic_fetch_add(tgt, 1, N)
        with pytest.raises(IndexError):
            shmem.atomic_add(tgt, 1, -1)
        with pytest.raises(shmem.NotSymmetricError):
            shmem.atomic_fetch_add(np.zeros(1, "i8"), 1, NXT)
        with pytest.raises(ValueError):
            shmem.atomic_inc(np.zeros(1, "i8"), NXT)
        with pytest.raises(ValueError, match="2 elements"):
            shmem.atomic_fetch_add(pair, 1, NXT)
        with pytest.raises(TypeError, match="int16"):
            shmem.atomic_fetch_add(short, 1, NXT)
        with pytest.raises(TypeError, match="float64"):
            shmem.atomic_add(flt, 1, NXT)
        with pytest.raises(TypeError, match="float64"):
            shmem.atomic_fetch_and(flt, 1, NXT)
        with pytest.raises(TypeError):
            shmem.atomic_set(tgt, "x", NXT)
        with pytest.raises(ValueError):
            shmem.atomic_op(tgt, 1, "mul", NXT)
        with pytest.raises(TypeError):
            shmem.atomic_fetch_add_nbi(np.zeros(1, "i4"), tgt, 1, NXT)
        with pytest.raises(shmem.ShmemError):
            shmem.atomic_add(tgt, 1, NXT, ctx=shmem.CTX_INVALID)
    shmem.barrier_all()
    # Nothing moved anywhere; the PEs go on.
    for pe in range(N):
        assert shmem.atomic_fetch(tgt, pe) == 0
        assert shmem.atomic_fetch(flt, pe) == 0.0
    assert pair[0] == 0 and pair[1] == 0 and short[0] == 0
    shmem.barrier_all()
    for a in (tgt, pair, short, flt):
        shmem.free(a)


def test_zero_dim_view_of_a_symmetric_array():
    a = shmem.zeros(N, "i4")
    shmem.barrier_all()
    for pe in range(N):
        shmem.atomic_set(a[..., ME], ME + 1, pe)
    shmem.barrier_all()
    assert list(a) == list(range(1, N + 1))
    shmem.barrier_all()
    shmem.free(a)
