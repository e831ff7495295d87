"""The symmetric heap, ``ptr`` and the queries of ``shmem_rs.shmem``, as a multi-PE job.

Run: ``shmemrun -n 3 python -m pytest -q -p no:cacheprovider shmem-py/tests/test_heap.py``.
Every PE runs every test, making the collective calls in the same order; a bad call is made on
PE 0 only, after which every PE meets at a barrier and checks the data.
"""

import numpy as np
import pytest

from shmem_rs import shmem

ME = shmem.my_pe()
N = shmem.n_pes()
NXT = (ME + 1) % N
PRV = (ME - 1) % N


def test_info_and_constants():
    assert shmem.info_get_version() == (shmem.MAJOR_VERSION, shmem.MINOR_VERSION) == (1, 6)
    assert shmem.info_get_name() == shmem.VENDOR_STRING
    assert shmem.VENDOR_STRING.startswith("shmem-rs")
    assert shmem.query_thread() in list(shmem.THREAD)
    assert shmem.init_thread(shmem.THREAD_MULTIPLE) == shmem.THREAD_MULTIPLE
    shmem.init()  # running already: nothing
    assert int(shmem.CMP_GE) == shmem.lib.SHMEM_CMP_GE == 5
    assert shmem.lib.SHMEM_TEAM_NUM_CONTEXTS == 1
    assert shmem.SIGNAL_ADD == 1 and shmem.MALLOC_SIGNAL_REMOTE == 2
    assert str(shmem.AMO_XOR) == "xor"
    for level in (0, 1, 2):
        shmem.pcontrol(level)


def test_alloc_free_and_double_free():
    for align in (None, 8, 256):
        mem = shmem.alloc(5, 4, align, shmem.MALLOC_ATOMICS_REMOTE)
        assert len(mem) == 20 and mem[0] == 0
        a = shmem.fromalloc(mem, dtype="i4")
        assert a.shape == (5,)
        if align:
            assert a.__array_interface__["data"][0] % align == 0
        shmem.free(mem)
        if ME == 0:
            with pytest.raises(KeyError):
                shmem.free(mem)
        shmem.barrier_all()
    a = shmem.zeros((2, 3), "i8")
    shmem.del_array(a)
    if ME == 0:
        with pytest.raises(KeyError):
            shmem.free(a)
        with pytest.raises(shmem.NotSymmetricError):
            shmem.free(np.zeros(3))
        with pytest.raises(ValueError):
            shmem.alloc(-1)
    shmem.barrier_all()


def test_array_makers_and_data_on_other_pes():
    a = shmem.array([[1, 2], [3, 4]], "i4", order="F")
    assert a.flags.f_contiguous and a.strides == np.array([[1, 2], [3, 4]], "i4", order="F").strides
    z = shmem.zeros(3, "u2")
    o = shmem.ones((2, 2), "f4")
    f = shmem.full(4, -1, dtype="u1")
    e = shmem.empty(2, "c16")
    assert list(f) == [255] * 4 and o.sum() == 4 and z.sum() == 0
    assert shmem.full(1, 42).dtype == np.array(42).dtype
    # Each PE's copy is its own; read the next PE's copy.
    z[:] = ME
    shmem.barrier_all()
    got = np.zeros(3, "u2")
    shmem.get(got, z, NXT)
    assert list(got) == [NXT] * 3
    shmem.barrier_all()
    for x in (a, z, o, f, e):
        shmem.free(x)


@pytest.mark.parametrize("order", ["C", "F"])
def test_ptr_views_the_peer_copy(order):
    a = shmem.full((2, 3), ME, dtype="i8", order=order)
    v = shmem.ptr(a, NXT)
    if v is not None:
        assert v.shape == a.shape and v.strides == a.strides and v.dtype == a.dtype
        assert (v == NXT).all()
    shmem.barrier_all()
    if v is not None:
        v[1, 2] = 100 + ME
    shmem.barrier_all()
    if v is not None:
        assert a[1, 2] == 100 + PRV
    mine = shmem.ptr(a, ME)
    assert mine is not None and mine.__array_interface__["data"][0] == a.__array_interface__["data"][0]
    if ME == 0:
        with pytest.raises(IndexError):
            shmem.ptr(a, N)
        with pytest.raises(shmem.NotSymmetricError):
            shmem.ptr(np.zeros(3), ME)
    shmem.barrier_all()
    shmem.free(a)


def test_accessibility():
    a = shmem.zeros(1, "i4")
    assert shmem.pe_accessible(NXT)
    assert not shmem.pe_accessible(N)
    assert not shmem.pe_accessible(-1)
    assert shmem.addr_accessible(a, NXT)
    assert not shmem.addr_accessible(np.zeros(1), NXT)
    shmem.barrier_all()
    shmem.free(a)


def test_getbuffer_and_ffi():
    pytest.importorskip("cffi")
    from shmem_rs.shmem import ffi

    a = np.zeros((2, 2))
    cdata, size, ctype = shmem._getbuffer(a)
    assert isinstance(cdata, ffi.CData) and size == 4 and ctype == "double"
    assert shmem._getbuffer(a.T)[0] == cdata
    assert shmem._getbuffer(np.zeros(2, "u4"))[2] == "uint"
    with pytest.raises(TypeError):
        shmem._getbuffer([1, 2])
    r = np.zeros(2)
    r.flags.writeable = False
    shmem._getbuffer(r, readonly=True)
    with pytest.raises(ValueError):
        shmem._getbuffer(r)
    with pytest.raises(ValueError):
        shmem._getbuffer(np.zeros((4, 4))[::2, ::2])
