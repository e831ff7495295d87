/* Every PE adds to a counter on PE 0 with fetch_add; the fetched values must be distinct and
 * the total must be n * (n - 1) / 2 + n. */
#include <shmem.h>
#include <stdio.h>

static long counter;
static int seen[64];

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long old = shmem_atomic_fetch_add(&counter, me + 1, 0);
    shmem_barrier_all();
    long total = shmem_long_atomic_fetch(&counter, 0);
    long want = (long)n * (n + 1) / 2;
    int bad = total != want || old < 0 || old >= want;
    shmem_int_atomic_inc(&seen[0], 0);
    shmem_barrier_all();
    if (me == 0 && seen[0] != n) bad = 1;
    if (bad) fprintf(stderr, "PE %d: total %ld (want %ld), fetched %ld\n", me, total, want, old);
    shmem_finalize();
    return bad;
}
