/* Split the world into even and odd PEs; each team sums its world PE numbers. */
#include <shmem.h>
#include <stdio.h>

static long total, mine;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_team_t even, odd;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &even);
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, n / 2, NULL, 0, &odd);
    shmem_team_t t = me % 2 == 0 ? even : odd;
    int bad = t == SHMEM_TEAM_INVALID;
    if (!bad) {
        if (shmem_team_my_pe(t) != me / 2) bad = 1;
        if (shmem_team_translate_pe(t, shmem_team_my_pe(t), SHMEM_TEAM_WORLD) != me) bad = 1;
        mine = me;
        shmem_long_sum_reduce(t, &total, &mine, 1);
        long want = 0;
        for (int p = me % 2; p < n; p += 2) want += p;
        if (total != want) bad = 1;
        shmem_team_destroy(t);
    }
    if (bad) fprintf(stderr, "PE %d: team check failed (total %ld)\n", me, total);
    shmem_finalize();
    return bad;
}
