/* Put and get into a static global and into shmem_malloc memory; every PE checks the values
 * its left neighbour wrote, and reads them back from the right neighbour with get and g. */
#include <shmem.h>
#include <stdio.h>

static long global[8];

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    long *heap = shmem_malloc(8 * sizeof(long));
    long src[8];
    for (int i = 0; i < 8; i++) src[i] = 100 * me + i;
    shmem_long_put(global, src, 8, right);
    shmem_put(heap, src, 8, right);          /* C11 generic */
    shmem_barrier_all();
    int bad = 0;
    for (int i = 0; i < 8; i++) {
        if (global[i] != 100 * left + i || heap[i] != 100 * left + i) {
            fprintf(stderr, "PE %d: element %d: global %ld heap %ld, expected %d\n", me, i,
                    global[i], heap[i], 100 * left + i);
            bad = 1;
        }
    }
    long back[8];
    shmem_get(back, global, 8, right);
    for (int i = 0; i < 8; i++)
        if (back[i] != 100 * me + i) bad = 1;
    if (shmem_long_g(&heap[3], right) != 100 * me + 3) bad = 1;
    shmem_barrier_all();
    shmem_free(heap);
    shmem_finalize();
    return bad;
}
