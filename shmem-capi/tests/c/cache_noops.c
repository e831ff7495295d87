/* The deprecated cache-management routines exist and do nothing: data put before them is still
 * there after them, on every PE. */
#include <shmem.h>
#include <stdio.h>

static long cell[4];

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_long_p(&cell[1], me, (me + 1) % n);
    shmem_barrier_all();
    shmem_clear_cache_inv();
    shmem_set_cache_inv();
    shmem_clear_cache_line_inv(&cell[1]);
    shmem_set_cache_line_inv(&cell[1]);
    shmem_udcflush();
    shmem_udcflush_line(&cell[1]);
    long want = (me + n - 1) % n;
    if (cell[1] != want) {
        fprintf(stderr, "PE %d: cell[1] = %ld, expected %ld\n", me, cell[1], want);
        return 1;
    }
    shmem_finalize();
    return 0;
}
