"""Collectives of ``shmem_rs.shmem``, run as a multi-PE job (every PE runs the same tests in the
same order): ``shmemrun -n 3 python -m pytest -q shmem-py/tests/test_coll.py``.

The expected values are computed from what every PE contributes, so the tests hold at any PE
count (odd and even).
"""

import numpy as np
import pytest

from shmem_rs import NotSymmetricError, shmem

ME = shmem.my_pe()
N = shmem.n_pes()


@pytest.fixture(autouse=True)
def _in_step():
    # Every test starts and ends with all PEs together.
    shmem.barrier_all()
    yield
    shmem.barrier_all()


def sym(values, dtype):
    a = shmem.zeros(len(values), dtype=dtype)
    a[...] = values
    return a


CONTRIB = [p + 1 for p in range(N)]  # PE p contributes p + 1


@pytest.mark.parametrize("dtype", ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"])
@pytest.mark.parametrize(
    "op,fold",
    [
        ("and", np.bitwise_and),
        ("or", np.bitwise_or),
        ("xor", np.bitwise_xor),
        ("max", np.maximum),
        ("min", np.minimum),
        ("sum", np.add),
        ("prod", np.multiply),
    ],
)
def test_reduce_integers(dtype, op, fold):
    # Element i of PE p is (p + 1) * (i + 1) + i, so columns differ.
    vals = lambda p: np.array([(p + 1) * (i + 1) + i for i in range(3)], dtype=dtype)  # noqa: E731
    src = sym(vals(ME), dtype)
    tgt = shmem.zeros(4, dtype=dtype)
    tgt[3] = 7
    shmem.reduce(tgt, src, op=op)
    want = fold.reduce(np.stack([vals(p) for p in range(N)]), axis=0, dtype=dtype)
    assert list(tgt[:3]) == list(want)
    assert tgt[3] == 7  # beyond the source: untouched
    # The named form gives the same.
    tgt2 = shmem.zeros(3, dtype=dtype)
    getattr(shmem, f"{op}_reduce")(tgt2, src)
    assert list(tgt2) == list(want)
    shmem.free(tgt2)
    shmem.free(tgt)
    shmem.free(src)


@pytest.mark.parametrize("dtype", ["f4", "f8", "g", "F", "D"])
def test_reduce_sum_prod_real_complex(dtype):
    base = complex(ME + 1, 1) if np.dtype(dtype).kind == "c" else ME + 1.5
    src = sym([base, 2 * base], dtype)
    tgt = shmem.zeros(2, dtype=dtype)
    contrib = [complex(p + 1, 1) if np.dtype(dtype).kind == "c" else p + 1.5 for p in range(N)]
    shmem.sum_reduce(tgt, src)
    assert np.allclose(tgt, [sum(contrib), 2 * sum(contrib)])
    shmem.reduce(tgt, src, op=shmem.OP_PROD)
    assert np.allclose(tgt[0], np.prod(np.array(contrib, dtype=dtype)))
    if np.dtype(dtype).kind == "f":
        shmem.max_reduce(tgt, src)
        assert tgt[0] == max(contrib)
        shmem.min_reduce(tgt, src)
        assert tgt[0] == min(contrib)
    shmem.free(tgt)
    shmem.free(src)


def test_reduce_size_and_in_place():
    a = sym([ME + 1] * 4, "i8")
    shmem.reduce(a, a, "sum", size=2)  # in place, first two elements only
    total = sum(CONTRIB)
    assert list(a) == [total, total, ME + 1, ME + 1]
    shmem.reduce(a, a, "sum", size=0)  # nothing
    assert list(a) == [total, total, ME + 1, ME + 1]
    shmem.free(a)


def test_reduce_on_a_team():
    # The odd world PEs (none at N = 1): a sum over them only.
    odds = shmem.TEAM_WORLD.split_strided(1, 2)
    src = sym([ME], "i4")
    tgt = shmem.zeros(1, dtype="i4")
    if odds:
        assert odds.n_pes() == N // 2
        shmem.reduce(tgt, src, team=odds)
        assert tgt[0] == sum(range(1, N, 2))
    else:
        assert ME % 2 == 0
    odds.destroy()
    shmem.free(tgt)
    shmem.free(src)


@pytest.mark.parametrize("dtype", ["u1", "i4", "f8", "D", "g"])
def test_broadcast_every_root(dtype):
    src = sym([ME * 10 + i for i in range(5)], dtype)
    tgt = shmem.zeros(6, dtype=dtype)
    for root in range(N):
        tgt[...] = -1 if np.dtype(dtype).kind != "u" else 255
        shmem.barrier_all()
        shmem.broadcast(tgt, src, root)
        assert list(tgt[:5]) == [root * 10 + i for i in range(5)]
        assert tgt[5] == tgt.dtype.type(-1 if np.dtype(dtype).kind != "u" else 255)
        shmem.broadcast(tgt, src, root, size=2, team=shmem.TEAM_WORLD)
    shmem.free(tgt)
    shmem.free(src)


def test_collect_variable_sizes():
    # PE p contributes p + 1 copies of p * 3.
    src = sym([ME * 3] * N, "i2")
    tgt = shmem.zeros(N * (N + 1) // 2 + 1, dtype="i2")
    tgt[-1] = -5
    shmem.collect(tgt, src, size=ME + 1)
    want = [p * 3 for p in range(N) for _ in range(p + 1)]
    assert list(tgt[:-1]) == want
    assert tgt[-1] == -5
    shmem.free(tgt)
    shmem.free(src)


def test_fcollect():
    src = sym([ME, -ME], "f4")
    tgt = shmem.zeros((N, 2), dtype="f4")
    shmem.fcollect(tgt, src)
    assert [list(r) for r in tgt] == [[p, -p] for p in range(N)]
    shmem.free(tgt)
    shmem.free(src)


def test_alltoall_and_alltoalls():
    # Block j of PE p's source holds 100 * p + j (two elements).
    src = sym([100 * ME + j for j in range(N) for _ in range(2)], "i8")
    tgt = shmem.zeros(2 * N, dtype="i8")
    shmem.alltoall(tgt, src)
    assert list(tgt) == [100 * p + ME for p in range(N) for _ in range(2)]
    # Strided: every other source element, every third target element.
    src2 = sym([v for j in range(N) for v in (100 * ME + j, -1)], "i4")
    tgt2 = shmem.zeros(3 * N, dtype="i4")
    shmem.alltoalls(tgt2, src2, tst=3, sst=2)
    assert list(tgt2[::3]) == [100 * p + ME for p in range(N)]
    assert not tgt2[1::3].any() and not tgt2[2::3].any()
    for a in (tgt, src, tgt2, src2):
        shmem.free(a)


@pytest.mark.parametrize("k", [3, 40_001])
def test_alltoall_reads_the_source_where_it_lies(k):
    # Blocks of k int64 (40_001: past the mailbox, straight into the targets); element i of
    # block j of PE p's source is p << 40 | j << 20 | i.
    i = np.arange(k, dtype=np.int64)
    src = shmem.zeros(N * k, dtype="i8")
    for j in range(N):
        src[j * k:(j + 1) * k] = (ME << 40) | (j << 20) | i
    before = src.copy()
    tgt = shmem.zeros(N * k, dtype="i8")
    shmem.alltoall(tgt, src)
    for p in range(N):
        assert np.array_equal(tgt[p * k:(p + 1) * k], (p << 40) | (ME << 20) | i), f"from PE {p}"
    assert np.array_equal(src, before)
    # In place: the target is the source.
    shmem.barrier_all()
    shmem.alltoall(src, src)
    assert np.array_equal(src, tgt)
    shmem.free(src)
    shmem.free(tgt)


def test_sync_forms():
    shmem.sync()
    shmem.sync(shmem.TEAM_WORLD)
    shmem.TEAM_WORLD.sync()
    shmem.sync_all()
    shmem.barrier_all()


# --- bad input: raised on every PE alike, before any member waits; the job goes on


def test_wrong_dtype_for_op():
    f = sym([1.0], "f8")
    tf = shmem.zeros(1, dtype="f8")
    with pytest.raises(TypeError, match=r"float64.*'xor'"):
        shmem.reduce(tf, f, op="xor")
    with pytest.raises(TypeError, match=r"float64.*'and'"):
        shmem.and_reduce(tf, f)
    c = sym([1j], "c16")
    tc = shmem.zeros(1, dtype="c16")
    with pytest.raises(TypeError, match=r"complex128.*'max'"):
        shmem.max_reduce(tc, c)
    b = sym([True], "?")
    tb = shmem.zeros(1, dtype="?")
    with pytest.raises(TypeError, match=r"bool.*'or'"):
        shmem.or_reduce(tb, b)
    with pytest.raises(TypeError, match="different element types"):
        shmem.sum_reduce(tf, sym([1], "i8"))
    with pytest.raises(ValueError, match="unknown operation"):
        shmem.reduce(tf, f, op="avg")
    # Nothing harmed: the next collective works.
    shmem.sum_reduce(tf, f)
    assert tf[0] == N


def test_not_symmetric():
    src = sym([ME], "i4")
    tgt = shmem.zeros(1, dtype="i4")
    local = np.zeros(1, dtype="i4")
    with pytest.raises(NotSymmetricError, match="target"):
        shmem.sum_reduce(local, src)
    with pytest.raises(NotSymmetricError, match="source"):
        shmem.sum_reduce(tgt, np.array([ME], dtype="i4"))
    with pytest.raises(NotSymmetricError):
        shmem.broadcast(local, src, 0)
    with pytest.raises(NotSymmetricError):
        shmem.fcollect(np.zeros(N, dtype="i4"), src)
    with pytest.raises(NotSymmetricError):
        shmem.collect(np.zeros(N, dtype="i4"), src)
    with pytest.raises(NotSymmetricError):
        shmem.alltoall(np.zeros(N, dtype="i4"), shmem.zeros(N, dtype="i4"))
    shmem.sum_reduce(tgt, src)
    assert tgt[0] == sum(range(N))


def test_bad_root_and_sizes():
    src = sym([ME + 1] * 2, "i4")
    tgt = shmem.zeros(2, dtype="i4")
    for root in (N, -1, N + 5):
        with pytest.raises(IndexError, match=f"root {root} is out of range"):
            shmem.broadcast(tgt, src, root)
    with pytest.raises(ValueError, match="size 3"):
        shmem.broadcast(tgt, src, 0, size=3)
    with pytest.raises(ValueError):
        shmem.fcollect(tgt, src, size=2) if N > 1 else shmem.fcollect(tgt, src, size=3)
    with pytest.raises(ValueError, match="strides must be positive"):
        shmem.alltoalls(tgt, src, tst=0)
    with pytest.raises(TypeError):
        shmem.broadcast(tgt, src, 0, team=5)
    with pytest.raises(RuntimeError, match="TEAM_INVALID"):
        shmem.broadcast(tgt, src, 0, team=shmem.TEAM_INVALID)
    shmem.broadcast(tgt, src, N - 1)
    assert list(tgt) == [N, N]
