/* Team sum and max reductions, and the deprecated active-set sum over all PEs. */
#include <shmem.h>
#include <stdio.h>

static int src[4], dst[4], old_dst[4];
static int pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long psync[SHMEM_REDUCE_SYNC_SIZE];

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < 4; i++) src[i] = me + i;
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
    if (bad) fprintf(stderr, "PE %d: wrong reduction\n", me);
    shmem_finalize();
    return bad;
}
