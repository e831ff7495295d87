"""Tests of the symmetric data objects (``shmem_rs.sdo``), run as a multi-PE job:

    shmemrun -n 3 python -m pytest -q shmem-py/tests/test_sdo.py

Every PE runs every test in the same order (allocation, ``free`` and barriers are collective).
Each PE writes into its right neighbour's copy and reads it back from there, so that the data
checked has crossed PEs (with one PE, the neighbour is the PE itself).
"""

import numpy as np
import pytest

import shmem_rs

ME = shmem_rs.my_pe()
NP = shmem_rs.n_pes()
RIGHT = (ME + 1) % NP
LEFT = (ME - 1) % NP

DTYPES = [
    np.int8, np.int16, np.int32, np.int64,
    np.uint8, np.uint16, np.uint32, np.uint64,
    np.float32, np.float64, np.complex64, np.complex128, np.bool_,
]

SLICES = [
    slice(None), slice(2, 9), slice(1, None, 2), slice(None, None, 3), slice(None, None, -1),
    slice(8, 1, -2), slice(-5, None), slice(None, -3, 2), slice(9, None, -3), slice(4, 4),
    slice(-1, -11, -1), slice(0, 10, 7),
]


def values(dtype, shape, seed):
    """Distinct values of `dtype` that depend on `seed` (a PE number)."""
    n = int(np.prod(shape))
    raw = np.arange(n) * 3 + 7 * seed + 1
    if np.dtype(dtype).kind == "b":
        return (raw % 2 == 0).reshape(shape)
    if np.dtype(dtype).kind == "c":
        return (raw + 1j * (raw % 5)).astype(dtype).reshape(shape)
    return (raw % 100).astype(dtype).reshape(shape)


class _Remote:
    """``r[key] = v`` as ``x[pe, key] = v``: one sequence of assignments, run on a NumPy array
    for the expected values and on a remote PE's copy for the test."""

    def __init__(self, x, pe):
        self.x, self.pe = x, pe

    def __setitem__(self, key, value):
        key = key if isinstance(key, tuple) else (key,)
        self.x[(self.pe,) + key] = value


@pytest.fixture
def obj():
    """A 1-D int64 object of 10 elements (freed after the test, collectively)."""
    x = shmem_rs.sdo(np.int64, 10)
    yield x
    shmem_rs.barrier_all()
    if not x.freed:
        x.free()


@pytest.mark.parametrize("sl", SLICES, ids=repr)
def test_slice_put_get(obj, sl):
    ref = np.zeros(10, np.int64)
    src = values(np.int64, ref[sl].shape, ME)
    obj[RIGHT, sl] = src
    shmem_rs.barrier_all()
    expect = np.zeros(10, np.int64)
    expect[sl] = values(np.int64, ref[sl].shape, LEFT)
    assert np.array_equal(obj.local, expect)
    got = obj[RIGHT, sl]
    ref[sl] = src
    assert isinstance(got, np.ndarray) and got.dtype == np.int64
    assert np.array_equal(got, ref[sl])
    assert got.flags.c_contiguous and got.flags.owndata


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_dtypes(dtype):
    x = shmem_rs.sdo(dtype, 12)
    assert x.dtype == np.dtype(dtype) and x.shape == (12,) and x.size == 12 and len(x) == 12
    def ops(a, src):
        a[0:12:2] = src
        a[11] = src[1]
        a[-2:0:-4] = src[:3][::-1]

    src = values(dtype, 6, ME)
    ops(_Remote(x, RIGHT), src)
    shmem_rs.barrier_all()
    expect = np.zeros(12, dtype)
    ops(expect, values(dtype, 6, LEFT))
    assert np.array_equal(x.local, expect)
    ref = np.zeros(12, dtype)
    ops(ref, src)
    assert np.array_equal(x[RIGHT], ref)
    assert np.array_equal(x[RIGHT, ::-3], ref[::-3])
    one = x[RIGHT, 11]
    assert isinstance(one, np.generic) and one.dtype == np.dtype(dtype) and one == src[1]
    shmem_rs.barrier_all()
    x.free()


KEYS_2D = [
    (1,), (slice(None), 2), (1, slice(1, 5)), (2, 3), (slice(None, None, -1), slice(None, None, 2)),
    (slice(0, 3, 2), slice(4, 0, -1)), (-1, -1), (slice(1, 2), slice(None)), (slice(None), slice(3, 4)),
    (),
]


@pytest.mark.parametrize("key", KEYS_2D, ids=repr)
def test_2d(key):
    with shmem_rs.sdo(np.float64, (3, 5)) as x:
        ref = np.zeros((3, 5))
        shape = ref[key].shape
        x[(RIGHT,) + key] = values(np.float64, shape, ME)
        shmem_rs.barrier_all()
        expect = np.zeros((3, 5))
        expect[key] = values(np.float64, shape, LEFT)
        assert np.array_equal(x.local, expect)
        ref[key] = values(np.float64, shape, ME)
        got = x[(RIGHT,) + key]
        assert np.shape(got) == shape
        assert np.array_equal(got, ref[key])
        shmem_rs.barrier_all()


KEYS_3D = [
    (1,), (0, 2), (1, 2, 3), (slice(None), 1, slice(None)), (slice(None), slice(None), 2),
    (slice(None, None, -1), slice(0, 3, 2), slice(3, None, -2)), (slice(1, 2), slice(None), slice(None)),
]


@pytest.mark.parametrize("key", KEYS_3D, ids=repr)
def test_3d(key):
    with shmem_rs.sdo(np.int32, (2, 3, 4)) as x:
        ref = np.zeros((2, 3, 4), np.int32)
        shape = ref[key].shape
        x[(RIGHT,) + key] = values(np.int32, shape, ME)
        shmem_rs.barrier_all()
        expect = np.zeros((2, 3, 4), np.int32)
        expect[key] = values(np.int32, shape, LEFT)
        assert np.array_equal(x.local, expect)
        ref[key] = values(np.int32, shape, ME)
        assert np.array_equal(x[(RIGHT,) + key], ref[key])
        shmem_rs.barrier_all()


def test_scalars_broadcast(obj):
    obj[RIGHT, 1:8:3] = 5
    obj[RIGHT, 0] = np.int16(-2)
    obj[RIGHT, ::-4] = np.array([9])
    shmem_rs.barrier_all()
    ref = np.zeros(10, np.int64)
    ref[1:8:3] = 5
    ref[0] = -2
    ref[::-4] = 9
    assert np.array_equal(obj.local, ref)
    assert np.array_equal(obj[RIGHT], ref)
    with shmem_rs.sdo(np.float32, (2, 3)) as y:
        y[RIGHT, :, 1:] = 2.5
        y[RIGHT, 0] = [1, 2, 3]  # broadcast by rows: a list, converted
        y[RIGHT, :, 0] = np.array([[7], [8]])[:, 0]
        shmem_rs.barrier_all()
        assert np.array_equal(y.local, np.array([[7, 2, 3], [8, 2.5, 2.5]], np.float32))
        shmem_rs.barrier_all()


def test_whole_pe_key(obj):
    obj[RIGHT] = np.arange(10)
    shmem_rs.barrier_all()
    assert np.array_equal(obj.local, np.arange(10))
    assert np.array_equal(obj[RIGHT], np.arange(10))
    assert np.array_equal(obj[np.int64(RIGHT), np.int32(3)], 3)


@pytest.mark.parametrize(
    "src",
    [np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int8), np.arange(3, dtype=np.uint16),
     np.ones(3, np.bool_), [1, 2, 3], (True, False, True), 7, True, np.uint32(4),
     np.arange(3, dtype=np.uint64)],
    ids=repr,
)
def test_same_kind_allowed(obj, src):
    obj[RIGHT, 0:3] = src
    shmem_rs.barrier_all()
    expect = np.zeros(3, np.int64)
    expect[:] = np.asarray(src).astype(np.int64, casting="unsafe")
    assert np.array_equal(obj.local[0:3], expect)


@pytest.mark.parametrize(
    "src, named",
    [(np.zeros(3), "float64"), (1.5, "float"), (np.zeros(3, np.complex64), "complex64"),
     (np.float32(1.0), "float32"), (["a", "b", "c"], "<U1"), (1j, "complex")],
    ids=repr,
)
def test_same_kind_refused(obj, src, named):
    obj.local[:] = 3
    shmem_rs.barrier_all()
    with pytest.raises(TypeError, match=named) as e:
        obj[RIGHT, 0:3] = src
    assert "int64" in str(e.value)
    shmem_rs.barrier_all()
    assert np.array_equal(obj.local, np.full(10, 3))


def test_casting_floats_and_bools():
    with shmem_rs.sdo(np.float32, 4) as f, shmem_rs.sdo(np.bool_, 4) as b:
        f[RIGHT] = np.arange(4, dtype=np.float64)  # float64 -> float32: same kind
        f[RIGHT, 0] = 7  # a Python int becomes a float
        f[RIGHT, 1] = np.int64(5)  # int -> float is a safe cast
        b[RIGHT, 1:3] = True
        with pytest.raises(TypeError, match="bool"):
            b[RIGHT, 0] = 1
        with pytest.raises(TypeError, match="bool"):
            b[RIGHT, 0] = np.int8(1)
        shmem_rs.barrier_all()
        assert np.array_equal(f.local, [7, 5, 2, 3])
        assert np.array_equal(b.local, [False, True, True, False])
        shmem_rs.barrier_all()


def test_int_out_of_range():
    with shmem_rs.sdo(np.int8, 2) as x:
        with pytest.raises((OverflowError, ValueError)):
            x[RIGHT, 0] = 300
        with pytest.raises((OverflowError, ValueError)):
            x[RIGHT, 0] = 2**70
        shmem_rs.barrier_all()
        assert np.array_equal(x.local, [0, 0])
        shmem_rs.barrier_all()


def check_untouched(x, fill, bad):
    """Every PE fills its copy with `fill`, makes the bad call `bad` (which must raise), goes
    on, and finds every copy untouched."""
    x.local[...] = fill
    shmem_rs.barrier_all()
    bad()
    shmem_rs.barrier_all()
    assert np.array_equal(x.local, np.full(x.shape, fill, x.dtype))
    assert np.array_equal(x[RIGHT], np.full(x.shape, fill, x.dtype))
    shmem_rs.barrier_all()  # every PE has checked before any writes again
    # The PE goes on: a good call still works.
    x[RIGHT, 0] = 1
    shmem_rs.barrier_all()
    assert x.local.reshape(-1)[0] == 1
    shmem_rs.barrier_all()


def test_pe_out_of_range(obj):
    def bad():
        for pe in (NP, -1, NP + 5):
            with pytest.raises(IndexError, match=rf"PE {pe} .*{NP} PEs"):
                obj[pe, 0:3] = np.arange(3)
            with pytest.raises(IndexError, match=rf"PE {pe} .*{NP} PEs"):
                obj[pe, 0]
        with pytest.raises(TypeError, match="PE"):
            obj[1.0, 0]
        with pytest.raises(TypeError, match="PE"):
            obj[0:1, 0]
    check_untouched(obj, 4, bad)


def test_index_out_of_bounds(obj):
    def bad():
        for i in (10, -11, 100):
            with pytest.raises(IndexError, match=rf"index {i} .*length 10"):
                obj[RIGHT, i] = 5
            with pytest.raises(IndexError, match=rf"index {i} .*length 10"):
                obj[RIGHT, i]
        for sl in (slice(0, 11), slice(-11, None), slice(12, None, -1), slice(None, 20, 3)):
            with pytest.raises(IndexError, match="length 10"):
                obj[RIGHT, sl] = 5
            with pytest.raises(IndexError, match="length 10"):
                obj[RIGHT, sl]
        with pytest.raises(ValueError, match="zero"):
            obj[RIGHT, ::0]
        with pytest.raises(TypeError):
            obj[RIGHT, 1.5]
        with pytest.raises(TypeError):
            obj[RIGHT, "a"] = 1
    check_untouched(obj, 6, bad)


def test_too_many_indices():
    with shmem_rs.sdo(np.uint16, (3, 4)) as x:
        def bad():
            with pytest.raises(IndexError, match="too many indices"):
                x[RIGHT, 1, 2, 3] = 1
            with pytest.raises(IndexError, match="too many indices"):
                x[RIGHT, 0, 0, 0]
            with pytest.raises(IndexError, match=r"index 3 .*dimension 0 of length 3"):
                x[RIGHT, 3, 0]
            with pytest.raises(IndexError, match=r"index 4 .*dimension 1 of length 4"):
                x[RIGHT, 0, 4] = 1
            with pytest.raises(IndexError, match="no PE"):
                x[()]
        check_untouched(x, 9, bad)


def test_shape_mismatch(obj):
    def bad():
        with pytest.raises(ValueError, match=r"\(4,\).*\(3,\)"):
            obj[RIGHT, 0:3] = np.arange(4)
        with pytest.raises(ValueError, match=r"\(2, 2\).*\(5,\)"):
            obj[RIGHT, ::2] = np.ones((2, 2), np.int64)
        with pytest.raises(ValueError, match=r"\(0,\).*\(10,\)"):
            obj[RIGHT] = np.array([], np.int64)
    check_untouched(obj, 2, bad)


def test_freed():
    x = shmem_rs.sdo(np.float64, (2, 2))
    x.free()
    assert x.freed and "freed" in repr(x)
    with pytest.raises(shmem_rs.FreedError):
        x[RIGHT, 0, 0]
    with pytest.raises(shmem_rs.FreedError):
        x[RIGHT, 0] = 1.0
    with pytest.raises(shmem_rs.FreedError):
        x.local
    with pytest.raises(shmem_rs.FreedError):
        x.free()
    assert issubclass(shmem_rs.FreedError, ValueError)
    # The heap goes on: a new object works.
    with shmem_rs.sdo(np.float64, 3) as y:
        y[RIGHT, 1] = 2.0
        shmem_rs.barrier_all()
        assert y.local[1] == 2.0
        shmem_rs.barrier_all()


def test_context_manager():
    with shmem_rs.sdo(np.int16, (2, 3)) as x:
        assert isinstance(x, shmem_rs.SymmetricArray)
        assert not x.freed and x.ndim == 2 and x.size == 6 and len(x) == 2 and x.itemsize == 2
        assert x.nbytes == 12 and x.shape == (2, 3)
        assert "int16" in repr(x) and "(2, 3)" in repr(x)
        assert isinstance(x.local, np.ndarray) and x.local.shape == (2, 3)
        assert not np.any(x.local)
        shmem_rs.barrier_all()
    assert x.freed
    with pytest.raises(RuntimeError):
        with shmem_rs.sdo(np.int16, 1) as z:
            raise RuntimeError("inside")
    assert z.freed


def test_zero_d_and_empty():
    with shmem_rs.sdo(np.float64, ()) as x, shmem_rs.sdo(np.int32, (0, 3)) as e:
        x[RIGHT] = 4.5
        shmem_rs.barrier_all()
        assert x.local[()] == 4.5 and x[RIGHT] == 4.5
        with pytest.raises(TypeError):
            len(x)
        assert e[RIGHT].shape == (0, 3)
        e[RIGHT] = np.zeros((0, 3), np.int32)
        shmem_rs.barrier_all()


def test_bad_dtype():
    with pytest.raises(TypeError, match="not supported"):
        shmem_rs.sdo(object, 3)
    with pytest.raises(TypeError, match="not supported"):
        shmem_rs.sdo(">i4", 3)
    with pytest.raises(ValueError):
        shmem_rs.sdo(np.int32, (-1,))


def test_big_transfer():
    n = 1 << 16
    with shmem_rs.sdo(np.float64, n) as x:
        x[RIGHT, ::2] = np.arange(n // 2, dtype=np.float64)
        x[RIGHT, 1::2] = -1.0
        shmem_rs.barrier_all()
        ref = np.empty(n)
        ref[::2] = np.arange(n // 2)
        ref[1::2] = -1
        assert np.array_equal(x.local, ref)
        assert np.array_equal(x[RIGHT, ::-1], ref[::-1])
        shmem_rs.barrier_all()


def _shmem():
    from shmem_rs import shmem

    return shmem


needs_atomics = pytest.mark.skipif(
    not hasattr(_shmem(), "atomic_fetch_add"), reason="shmem.atomic_* not there yet"
)


@needs_atomics
def test_atomics():
    shmem = _shmem()
    with shmem_rs.sdo(np.int64, (2, 3)) as x:
        shmem_rs.barrier_all()
        x.atomic_add(1, 0, (1, 2))
        x.atomic_inc(0, 4)
        shmem_rs.barrier_all()
        if ME == 0:
            assert x.local[1, 2] == NP and x.local[1, 1] == NP
        shmem_rs.barrier_all()
        assert x.atomic_fetch_add(10, RIGHT, 0) == 0  # each element gets one add, from LEFT
        x.atomic_set(5, ME, 1)
        assert x.atomic_fetch(ME, 1) == 5
        assert x.atomic_swap(6, ME, 1) == 5
        assert x.atomic_compare_swap(6, 7, ME, 1) == 6
        assert x.atomic_fetch_inc(ME, 1) == 7
        x.atomic_or(0b1000, ME, 1)
        assert x.atomic_fetch_and(0b1000, ME, 1) == 0b1000
        assert x.atomic_fetch_xor(1, ME, 1) == 0b1000
        shmem_rs.barrier_all()
        assert x.local[0, 0] == 10
        with pytest.raises(IndexError):
            x.atomic_add(1, NP, 0)
        with pytest.raises(IndexError):
            x.atomic_add(1, 0, 6)
        with pytest.raises(IndexError):
            x.atomic_add(1, 0, (0, 3))
        shmem_rs.barrier_all()
        assert shmem.SIGNAL_SET is not None


@needs_atomics
def test_put_signal_wait():
    shmem = _shmem()
    with shmem_rs.sdo(np.float64, 8) as data, shmem_rs.sdo(np.uint64, 2) as sig:
        shmem_rs.barrier_all()
        data.put_signal(np.arange(4.0) + ME, RIGHT, sig, ME + 1, shmem.SIGNAL_SET, index=2,
                        sig_index=1)
        assert sig.signal_wait_until(shmem.CMP.EQ, LEFT + 1, 1) == LEFT + 1
        assert np.array_equal(data.local[2:6], np.arange(4.0) + LEFT)
        assert sig.signal_fetch(1) == LEFT + 1
        assert sig.test(shmem.CMP.EQ, LEFT + 1, 1)
        sig.wait_until(shmem.CMP.GE, 1, 1)
        shmem_rs.barrier_all()
