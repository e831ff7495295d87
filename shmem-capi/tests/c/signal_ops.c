/* OpenSHMEM 1.6 signal updates without data and per-PE quiet: shmem_signal_add, shmem_signal_set,
 * their context forms and C11 generic forms; shmem_pe_quiet and shmem_ctx_pe_quiet order data
 * before a flag. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>

static uint64_t hits, go, flag, cflag;
static long data[4], cdata[4];

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    int bad = 0;
    shmem_ctx_t ctx;
    if (shmem_ctx_create(0, &ctx) != 0) return 1;

    /* Every PE adds me + 1 to PE 0's hits, twice (plain, then context), and once more through
     * the generic: PE 0 ends with 3 * n(n+1)/2. */
    shmem_signal_add(&hits, (uint64_t)me + 1, 0);
    shmem_ctx_signal_add(ctx, &hits, (uint64_t)me + 1, 0);
    shmem_signal_add(ctx, &hits, (uint64_t)me + 1, 0);  /* C11 generic, context */
    shmem_ctx_quiet(ctx);
    if (me == 0) {
        uint64_t want = 3 * (uint64_t)n * (n + 1) / 2;
        uint64_t got = shmem_signal_wait_until(&hits, SHMEM_CMP_EQ, want);
        if (got != want) {
            fprintf(stderr, "PE 0: hits = %llu, expected %llu\n", (unsigned long long)got,
                    (unsigned long long)want);
            bad = 1;
        }
    }

    /* Set, overwritten by a second set (context form), then the generic. */
    shmem_signal_set(&go, 7, right);
    shmem_quiet();
    shmem_barrier_all();
    if (shmem_signal_fetch(&go) != 7) {
        fprintf(stderr, "PE %d: go = %llu, expected 7\n", me,
                (unsigned long long)shmem_signal_fetch(&go));
        bad = 1;
    }
    shmem_barrier_all();
    shmem_ctx_signal_set(ctx, &go, 100 + (uint64_t)me, right);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    if (shmem_signal_fetch(&go) != 100 + (uint64_t)left) {
        fprintf(stderr, "PE %d: go = %llu, expected %d\n", me,
                (unsigned long long)shmem_signal_fetch(&go), 100 + left);
        bad = 1;
    }
    shmem_barrier_all();
    shmem_signal_set(&go, 5, right);                   /* C11 generic, no context */
    shmem_quiet();
    shmem_barrier_all();
    if (shmem_signal_fetch(&go) != 5) bad = 1;

    /* pe_quiet: the data is at `right` before the flag is set. */
    long src[4] = {me, me + 1, me + 2, me + 3};
    shmem_long_put(data, src, 4, right);
    int target = right;
    shmem_pe_quiet(&target, 1);
    shmem_signal_set(&flag, 1, right);
    shmem_signal_wait_until(&flag, SHMEM_CMP_EQ, 1);
    for (int i = 0; i < 4; i++)
        if (data[i] != left + i) {
            fprintf(stderr, "PE %d: data[%d] = %ld, expected %d\n", me, i, data[i], left + i);
            bad = 1;
        }
    shmem_ctx_long_put(ctx, cdata, src, 4, right);
    shmem_ctx_pe_quiet(ctx, &target, 1);
    shmem_pe_quiet(NULL, 0);
    shmem_ctx_pe_quiet(ctx, NULL, 0);
    shmem_signal_add(&cflag, 1, right);
    shmem_signal_wait_until(&cflag, SHMEM_CMP_EQ, 1);
    for (int i = 0; i < 4; i++)
        if (cdata[i] != left + i) {
            fprintf(stderr, "PE %d: cdata[%d] = %ld, expected %d\n", me, i, cdata[i], left + i);
            bad = 1;
        }

    shmem_barrier_all();
    shmem_ctx_destroy(ctx);
    shmem_finalize();
    return bad;
}
