"""Teams and contexts of ``shmem_rs.shmem``, run as a multi-PE job (every PE runs the same tests
in the same order): ``shmemrun -n 3 python -m pytest -q shmem-py/tests/test_team.py``."""

import numpy as np
import pytest

from shmem_rs import shmem

ME = shmem.my_pe()
N = shmem.n_pes()


@pytest.fixture(autouse=True)
def _in_step():
    shmem.barrier_all()
    yield
    shmem.barrier_all()


def test_constants():
    assert shmem.TEAM_WORLD and not shmem.TEAM_INVALID
    assert shmem.Team() == shmem.TEAM_INVALID and shmem.Team(None) == shmem.TEAM_INVALID
    assert shmem.Team(shmem.TEAM_WORLD) == shmem.TEAM_WORLD
    assert shmem.TEAM_WORLD != shmem.TEAM_INVALID and shmem.TEAM_WORLD != 1
    with pytest.raises(TypeError):
        shmem.Team(123)
    assert shmem.TEAM_WORLD.my_pe() == ME and shmem.TEAM_WORLD.n_pes() == N
    assert 1 <= shmem.TEAM_SHARED.n_pes() <= N
    with pytest.raises(RuntimeError):
        shmem.TEAM_INVALID.my_pe()
    with pytest.raises(RuntimeError):
        shmem.TEAM_INVALID.n_pes()
    # The module's constants survive destroy; an alias becomes invalid.
    shmem.TEAM_WORLD.destroy()
    assert shmem.TEAM_WORLD.n_pes() == N
    alias = shmem.Team(shmem.TEAM_WORLD)
    alias.destroy()
    assert not alias


def test_split_evens_and_odds():
    evens = shmem.TEAM_WORLD.split_strided(0, 2)
    odds = shmem.TEAM_WORLD.split_strided(start=1, stride=2)
    mine, other = (evens, odds) if ME % 2 == 0 else (odds, evens)
    assert not other
    assert mine.my_pe() == ME // 2
    assert mine.n_pes() == (len(range(0, N, 2)) if ME % 2 == 0 else len(range(1, N, 2)))
    assert mine.translate_pe() == ME
    for p in range(mine.n_pes()):
        assert mine.translate_pe(p) == 2 * p + ME % 2
        assert shmem.TEAM_WORLD.translate_pe(2 * p + ME % 2, mine) == p
    if N > 1:
        with pytest.raises(RuntimeError):  # a PE of the other parity is not in mine
            shmem.TEAM_WORLD.translate_pe(1 - ME % 2, mine)
    with pytest.raises(RuntimeError):
        mine.translate_pe(mine.n_pes())
    # A team sum over my parity class.
    src = shmem.zeros(1, dtype="i8")
    tgt = shmem.zeros(1, dtype="i8")
    src[0] = ME
    mine.sync()
    shmem.sum_reduce(tgt, src, team=mine)
    assert tgt[0] == sum(range(ME % 2, N, 2))
    # Nested split: the first PE of my class alone.
    first = mine.split_strided(0, 1, 1)
    assert bool(first) == (mine.my_pe() == 0)
    first.destroy()
    for t in (evens, odds):
        t.destroy()
        assert not t
    shmem.free(src)
    shmem.free(tgt)


def test_config():
    with shmem.TEAM_WORLD.split_strided() as t:
        assert t.get_config() == {"num_contexts": 0}
        assert t.n_pes() == N and t != shmem.TEAM_WORLD
    assert t == shmem.TEAM_INVALID
    t = shmem.TEAM_WORLD.split_strided(size=N, config=dict(num_contexts=1))
    assert t.get_config()["num_contexts"] == 1
    t.destroy()
    t = shmem.TEAM_WORLD.split_strided(num_contexts=2)
    assert t.get_config()["num_contexts"] == 2
    t.destroy()
    with pytest.raises(AttributeError):
        shmem.TEAM_WORLD.split_strided(bogus=1)
    with pytest.raises(ValueError):
        shmem.TEAM_WORLD.split_strided(0, 0)  # no size, stride 0: no range to count
    with pytest.raises(RuntimeError, match="outside the parent"):
        shmem.TEAM_WORLD.split_strided(0, 1, N + 1)
    assert not shmem.TEAM_WORLD.split_strided(0, 1, 0)


def test_destroyed_team_raises():
    t = shmem.TEAM_WORLD.split_strided()
    alias = shmem.Team(t)
    t.destroy()
    assert not t and alias  # the alias still names the (destroyed) team
    with pytest.raises(RuntimeError, match="destroyed"):
        alias.n_pes()
    with pytest.raises(RuntimeError, match="destroyed"):
        shmem.sync(alias)
    alias.destroy()
    assert not alias


def test_ctx_constants():
    assert shmem.Ctx() == shmem.CTX_INVALID and shmem.Ctx(None) == shmem.CTX_INVALID
    assert shmem.CTX_DEFAULT and not shmem.CTX_INVALID
    assert shmem.CTX_DEFAULT != 1
    with pytest.raises(TypeError):
        shmem.Ctx(0)
    assert shmem.CTX_DEFAULT.get_team() == shmem.TEAM_WORLD
    with pytest.raises(RuntimeError):
        shmem.CTX_INVALID.get_team()
    shmem.CTX_DEFAULT.quiet()
    shmem.CTX_DEFAULT.fence()
    shmem.CTX_DEFAULT.destroy()
    assert shmem.CTX_DEFAULT
    assert int(shmem.CTX_PRIVATE | shmem.CTX_NOSTORE) == 5


def test_ctx_on_team_numbers_pes_by_team():
    # Reverse the world: team PE k is world PE N - 1 - k ... as a strided team that is only
    # possible for stride 1, so use the odd PEs (or everyone at N = 1).
    start, stride = (1, 2) if N > 1 else (0, 1)
    team = shmem.TEAM_WORLD.split_strided(start, stride)
    a = shmem.zeros(1, dtype="i4")
    if team:
        ctx = team.create_ctx(shmem.CTX_SERIALIZED)
        assert ctx.get_team() == team
        right = (team.my_pe() + 1) % team.n_pes()
        shmem.put(a, np.array([ME + 100], dtype="i4"), right, ctx=ctx)
        ctx.quiet()
        team.sync()
        left = (team.my_pe() - 1) % team.n_pes()
        assert a[0] == team.translate_pe(left) + 100
        with pytest.raises(IndexError):
            shmem.put(a, np.array([1], dtype="i4"), team.n_pes(), ctx=ctx)
        private = team.create_ctx(shmem.CTX_PRIVATE)
        team.destroy()  # destroys the shareable ctx, not the private one
        with pytest.raises(RuntimeError, match="destroyed"):
            ctx.quiet()
        assert ctx  # still names the destroyed context
        private.quiet()
        private.destroy()
        ctx.destroy()
        assert not ctx and not private
    shmem.free(a)


def test_ctx_create_and_with():
    with shmem.Ctx.create() as ctx:
        assert ctx and ctx != shmem.CTX_DEFAULT and ctx.get_team() == shmem.TEAM_WORLD
        alias = shmem.Ctx(ctx)
        assert alias == ctx
        a = shmem.zeros(2, dtype="u8")
        shmem.put(a, np.array([7, 8], dtype="u8"), (ME + 1) % N, ctx=ctx)
        shmem.quiet(ctx)
        shmem.barrier_all()
        assert list(a) == [7, 8]
        shmem.free(a)
    assert ctx == shmem.CTX_INVALID
    with pytest.raises(RuntimeError, match="destroyed"):
        alias.quiet()
    with pytest.raises(RuntimeError, match="CTX_INVALID"):
        ctx.quiet()
    c2 = shmem.Ctx.create(shmem.CTX_NOSTORE, team=shmem.TEAM_WORLD)
    c2.destroy()
    with pytest.raises(RuntimeError):
        shmem.Ctx.create(team=shmem.TEAM_INVALID)
    with pytest.raises(TypeError):
        shmem.Ctx.create(team=3)
    with pytest.raises(ValueError):
        shmem.Ctx.create(64)
