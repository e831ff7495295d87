/* Team sum and max reductions, and the deprecated active-set reductions: over all PEs (the
 * world team's reductions underneath), in place, on doubles, and over the even PEs only (the
 * pSync path); and the deprecated active-set broadcast over all PEs from every root, which
 * leaves the root's dest as it was (OpenSHMEM 1.4). */
#include <shmem.h>
#include <stdio.h>

static int src[4], dst[4], old_dst[4], inplace[4], even_dst[4];
static double dsrc[3], ddst[3];
static double dwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long psync2[SHMEM_REDUCE_SYNC_SIZE];
static long bsrc[5], bdst[5];
static long bsync[SHMEM_BCAST_SYNC_SIZE];
static int pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long psync[SHMEM_REDUCE_SYNC_SIZE];

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) psync[i] = psync2[i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++) bsync[i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < 4; i++) src[i] = inplace[i] = me + i;
    for (int i = 0; i < 3; i++) dsrc[i] = (me == n - 1 ? 0.5 : -1.0) * (i + 1) + me;
    shmem_barrier_all();
    shmem_int_sum_reduce(SHMEM_TEAM_WORLD, dst, src, 4);
    int bad = 0;
    for (int i = 0; i < 4; i++)
        if (dst[i] != n * (n - 1) / 2 + n * i) bad = 1;
    shmem_max_reduce(SHMEM_TEAM_WORLD, dst, src, 4);
    for (int i = 0; i < 4; i++)
        if (dst[i] != n - 1 + i) bad = 1;
    shmem_int_sum_to_all(old_dst, src, 4, 0, 0, n, pwrk, psync);
    for (int i = 0; i < 4; i++)
        if (old_dst[i] != n * (n - 1) / 2 + n * i) bad = 1;
    shmem_int_sum_to_all(inplace, inplace, 4, 0, 0, n, pwrk, psync);
    for (int i = 0; i < 4; i++)
        if (inplace[i] != n * (n - 1) / 2 + n * i) bad = 1;
    shmem_double_max_to_all(ddst, dsrc, 3, 0, 0, n, dwrk, psync2);
    for (int i = 0; i < 3; i++)
        if (ddst[i] != 0.5 * (i + 1) + (n - 1)) bad = 1;
    /* The even PEs: PE_start 0, logPE_stride 1, ceil(n / 2) members. */
    int members = (n + 1) / 2;
    if (me % 2 == 0) {
        shmem_int_sum_to_all(even_dst, src, 4, 0, 1, members, pwrk, psync);
        for (int i = 0; i < 4; i++)
            if (even_dst[i] != members * (members - 1) + members * i) bad = 1;
    }
    for (int root = 0; root < n; root++) {
        for (int i = 0; i < 5; i++) {
            bsrc[i] = 1000 * root + i;
            bdst[i] = -1 - me;
        }
        shmem_barrier_all();
        shmem_broadcast64(bdst, bsrc, 5, root, 0, 0, n, bsync);
        for (int i = 0; i < 5; i++)
            if (bdst[i] != (me == root ? -1 - me : 1000 * root + i)) bad = 1;
        shmem_barrier_all();
    }
    /* Large: past the direct path's thresholds (16 KiB), symmetric sources passed straight
     * through, in place (dest == source), broadcasts from every root (team and active set). */
    {
        const long L = 100003;
        long *ls = shmem_malloc(L * sizeof(long)), *ld = shmem_malloc(L * sizeof(long));
        for (long i = 0; i < L; i++) ls[i] = i * 7 + me;
        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, ld, ls, L);
        for (long i = 0; i < L; i++)
            if (ld[i] != n * i * 7 + (long)n * (n - 1) / 2) bad = 1;
        shmem_long_max_reduce(SHMEM_TEAM_WORLD, ls, ls, L);
        for (long i = 0; i < L; i++)
            if (ls[i] != i * 7 + n - 1) bad = 1;
        for (int root = 0; root < n; root++) {
            for (long i = 0; i < L; i++) {
                ls[i] = 1000 * root + i;
                ld[i] = -1 - me;
            }
            shmem_barrier_all();
            shmem_broadcastmem(SHMEM_TEAM_WORLD, ld, ls, L * sizeof(long) - 3, root);
            for (long i = 0; i < L - 1; i++)
                if (ld[i] != 1000 * root + i) bad = 1;
            shmem_barrier_all();
            for (long i = 0; i < L; i++) ld[i] = -1 - me;
            shmem_barrier_all();
            shmem_broadcast64(ld, ls, L, root, 0, 0, n, bsync);
            for (long i = 0; i < L; i++)
                if (ld[i] != (me == root ? -1 - me : 1000 * root + i)) bad = 1;
            shmem_barrier_all();
            shmem_long_broadcast(SHMEM_TEAM_WORLD, ls, ls, L, root);
            for (long i = 0; i < L; i++)
                if (ls[i] != 1000 * root + i) bad = 1;
            shmem_barrier_all();
        }
        shmem_free(ls);
        shmem_free(ld);
    }
    if (bad) fprintf(stderr, "PE %d: wrong reduction or broadcast\n", me);
    shmem_finalize();
    return bad;
}
