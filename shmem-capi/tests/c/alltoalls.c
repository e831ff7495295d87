/* The strided all-to-all: the deprecated active-set shmem_alltoalls64 and shmem_alltoalls32 over
 * all PEs (the world team's alltoalls underneath: small blocks through the mailbox, larger ones
 * by strided puts), over the even PEs (the pSync path), and the team form; strides 3 and 2 and
 * contiguous. Every PE checks every element it receives, the gaps between them and its source. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>

static long psync[SHMEM_ALLTOALLS_SYNC_SIZE];

/* Element I of the block that member FROM sends to member TO in call IT. */
static int64_t val(long from, long to, long i, long it)
{
    return (from << 40) | (to << 32) | (i << 8) | it;
}

/* One call of NEL elements a member at strides DST and SST: over the world team (TEAM), or the
 * active set of every (1 << LOG)-th PE from 0 (SIZE members). Every PE calls this; only the
 * members call the all-to-all. Returns the number of wrong elements. */
static long check64(int64_t *d, int64_t *s, long nel, int dst, int sst, int log, int size,
                    int team, long it)
{
    int me = shmem_my_pe();
    int member = me % (1 << log) == 0 && me >> log < size;
    long idx = me >> log, count = nel * size;
    long dspan = (count - 1) * dst + 1, sspan = (count - 1) * sst + 1, bad = 0;
    for (long x = 0; x < sspan; x++) s[x] = -7;
    for (long k = 0; k < count; k++) s[k * sst] = val(idx, k / nel, k % nel, it);
    for (long x = 0; x < dspan; x++) d[x] = -1;
    shmem_barrier_all();
    if (member) {
        if (team)
            shmem_int64_alltoalls(SHMEM_TEAM_WORLD, d, s, dst, sst, nel);
        else
            shmem_alltoalls64(d, s, dst, sst, nel, 0, log, size, psync);
        for (long x = 0; x < dspan; x++) {
            long k = x / dst;
            int64_t want = x % dst ? -1 : val(k / nel, idx, k % nel, it);
            if (d[x] != want) {
                if (!bad)
                    fprintf(stderr, "PE %d: call %ld (%ld a member, dst %d, sst %d): dest[%ld] "
                            "is %lld, not %lld\n", me, it, nel, dst, sst, x, (long long)d[x],
                            (long long)want);
                bad++;
            }
        }
        for (long k = 0; k < count; k++)
            if (s[k * sst] != val(idx, k / nel, k % nel, it)) bad++;
    }
    shmem_barrier_all();
    return bad;
}

int main(void)
{
    shmem_init();
    for (int i = 0; i < SHMEM_ALLTOALLS_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
    int me = shmem_my_pe(), n = shmem_n_pes();
    const long most = 5003;
    int64_t *d = shmem_malloc((most * n * 3 + 1) * sizeof(int64_t));
    int64_t *s = shmem_malloc((most * n * 3 + 1) * sizeof(int64_t));
    /* Blocks of 8 B to 40 KB: the mailbox takes up to 4,080 B a block at 4 PEs. */
    static const long nels[] = {1, 3, 500, 509, 5003};
    long bad = 0, it = 0;
    for (int v = 0; v < 5; v++) {
        bad += check64(d, s, nels[v], 3, 2, 0, n, 0, it++);
        bad += check64(d, s, nels[v], 1, 1, 0, n, 1, it++);
        bad += check64(d, s, nels[v], 2, 3, 0, n, 1, it++);
        bad += check64(d, s, nels[v], 3, 2, 1, (n + 1) / 2, 0, it++);
    }
    /* Nothing to move: a no-op that still synchronizes. */
    shmem_alltoalls64(d, s, 1, 1, 0, 0, 0, n, psync);
    /* 32-bit elements over all PEs: 5 a member, from every element into every other one. */
    int32_t *d32 = (int32_t *)d, *s32 = (int32_t *)s;
    for (int k = 0; k < 5 * n; k++) s32[k] = 1000 * me + k;
    for (int x = 0; x < 10 * n; x++) d32[x] = -1;
    shmem_barrier_all();
    shmem_alltoalls32(d32, s32, 2, 1, 5, 0, 0, n, psync);
    for (int x = 0; x < 10 * n - 1; x++) {
        int k = x / 2;
        int want = x % 2 ? -1 : 1000 * (k / 5) + 5 * me + k % 5;
        if (d32[x] != want) bad++;
    }
    shmem_barrier_all();
    shmem_free(d);
    shmem_free(s);
    if (bad) fprintf(stderr, "PE %d: %ld wrong elements\n", me, bad);
    shmem_finalize();
    return bad != 0;
}
