/* OpenSHMEM 1.6 team scans: shmem_TYPE_sum_inscan and shmem_TYPE_sum_exscan (typed and C11
 * generic), on the world team and on a team of every other PE, in place and not. */
#include <complex.h>
#include <shmem.h>
#include <stdio.h>

#define N 3

static long src[N], in[N], ex[N];
static double dsrc[N], din[N], dex[N];
static int inplace[N];

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int bad = 0;
    double _Complex *csrc = shmem_malloc(sizeof(double _Complex));
    double _Complex *cin = shmem_malloc(sizeof(double _Complex));
    for (int i = 0; i < N; i++) {
        src[i] = (long)(me + 1) * (i + 1);
        dsrc[i] = 0.5 * (me + 1) + i;
        inplace[i] = me + i;
    }
    *csrc = (me + 1) + 2.0 * (me + 1) * I;
    shmem_barrier_all();

    if (shmem_long_sum_inscan(SHMEM_TEAM_WORLD, in, src, N) != 0) bad = 1;
    if (shmem_long_sum_exscan(SHMEM_TEAM_WORLD, ex, src, N) != 0) bad = 1;
    shmem_sum_inscan(SHMEM_TEAM_WORLD, din, dsrc, N);       /* C11 generic */
    shmem_sum_exscan(SHMEM_TEAM_WORLD, dex, dsrc, N);
    shmem_int_sum_inscan(SHMEM_TEAM_WORLD, inplace, inplace, N);  /* in place */
    shmem_complexd_sum_inscan(SHMEM_TEAM_WORLD, cin, csrc, 1);

    long tri = (long)me * (me + 1) / 2;          /* 1 + 2 + ... + me */
    for (int i = 0; i < N; i++) {
        long want_in = (tri + me + 1) * (i + 1), want_ex = tri * (i + 1);
        double dwant_in = 0.5 * (tri + me + 1) + (double)(me + 1) * i;
        double dwant_ex = 0.5 * tri + (double)me * i;
        int iwant = (int)tri + (me + 1) * i;     /* sum over p <= me of (p + i) */
        if (in[i] != want_in || ex[i] != want_ex || din[i] != dwant_in || dex[i] != dwant_ex ||
            inplace[i] != iwant) {
            fprintf(stderr, "PE %d: [%d] in %ld/%ld ex %ld/%ld din %g/%g dex %g/%g inplace %d/%d\n",
                    me, i, in[i], want_in, ex[i], want_ex, din[i], dwant_in, dex[i], dwant_ex,
                    inplace[i], iwant);
            bad = 1;
        }
    }
    if (creal(*cin) != (double)(tri + me + 1) || cimag(*cin) != 2.0 * (tri + me + 1)) {
        fprintf(stderr, "PE %d: complex inscan %g%+gi\n", me, creal(*cin), cimag(*cin));
        bad = 1;
    }

    /* The even PEs as a team: team PE t is world PE 2t. */
    shmem_team_t evens;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &evens);
    shmem_barrier_all();
    if (evens != SHMEM_TEAM_INVALID) {
        int t = shmem_team_my_pe(evens);
        shmem_long_sum_exscan(evens, ex, src, N);
        for (int i = 0; i < N; i++) {
            long want = 0;
            for (int p = 0; p < t; p++) want += (long)(2 * p + 1) * (i + 1);
            if (ex[i] != want) {
                fprintf(stderr, "PE %d: team exscan [%d] = %ld, expected %ld\n", me, i, ex[i],
                        want);
                bad = 1;
            }
        }
        shmem_team_destroy(evens);
    }
    /* An invalid team: -1 and nothing done. */
    if (shmem_long_sum_inscan(SHMEM_TEAM_INVALID, in, src, N) == 0) bad = 1;

    shmem_barrier_all();
    shmem_free(cin);
    shmem_free(csrc);
    shmem_finalize();
    return bad;
}
