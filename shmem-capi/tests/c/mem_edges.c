/* Allocation requests the heap cannot meet return NULL on every PE and leave the PEs in step,
 * and one block of all of SHMEM_SYMMETRIC_SIZE (given in bytes) fits, is writable end to end and
 * reachable by a put to its last byte. Prints "mem_edges: PE i of n: OK" when every check holds. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, failures;

static void check(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "mem_edges: PE %d: %s\n", me, what);
        failures++;
    }
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    int n = shmem_n_pes();
    const char *sz = getenv("SHMEM_SYMMETRIC_SIZE");
    size_t size = sz ? strtoull(sz, NULL, 10) : 0;
    check(size > 0, "SHMEM_SYMMETRIC_SIZE must be set to a byte count");

    check(shmem_align(0, 100) == NULL, "shmem_align(0, 100) is not NULL");
    check(shmem_align(3, 100) == NULL, "shmem_align(3, 100) is not NULL");
    check(shmem_align(24, 100) == NULL, "shmem_align(24, 100) is not NULL");
    void *a = shmem_align(256, 100);
    check(a != NULL && (uintptr_t)a % 256 == 0, "shmem_align(256, 100) is not aligned");

    /* realloc of an address that is no (longer a) block */
    shmem_free(a);
    check(shmem_realloc(a, 200) == NULL, "shmem_realloc of a freed block is not NULL");
    static long not_heap[4];
    check(shmem_realloc(not_heap, 200) == NULL, "shmem_realloc of a global is not NULL");

    /* sizes no heap can hold */
    check(shmem_malloc(SIZE_MAX) == NULL, "shmem_malloc(SIZE_MAX) is not NULL");
    check(shmem_malloc((size_t)1 << 50) == NULL, "shmem_malloc(2^50) is not NULL");
    check(shmem_calloc(SIZE_MAX / 2, 3) == NULL, "shmem_calloc overflowing is not NULL");
    check(shmem_calloc((size_t)1 << 25, (size_t)1 << 25) == NULL, "shmem_calloc(2^50) is not NULL");

    /* realloc too large: NULL, and the block keeps its contents */
    int *r = shmem_malloc(4 * sizeof(int));
    check(r != NULL, "shmem_malloc(16) failed");
    if (r) {
        r[3] = 40 + me;
        check(shmem_realloc(r, (size_t)1 << 50) == NULL, "shmem_realloc(2^50) is not NULL");
        check(r[3] == 40 + me, "a failed shmem_realloc changed the block");
        shmem_free(r);
    }

    /* one block of all of SHMEM_SYMMETRIC_SIZE */
    unsigned char *big = shmem_malloc(size);
    check(big != NULL, "shmem_malloc(SHMEM_SYMMETRIC_SIZE) is NULL");
    if (big) {
        memset(big, me + 1, size);
        check(big[0] == me + 1 && big[size - 1] == me + 1, "the big block does not hold its bytes");
        shmem_barrier_all();
        unsigned char v = (unsigned char)(100 + me);
        shmem_putmem(big + size - 1, &v, 1, (me + 1) % n);
        shmem_barrier_all();
        check(big[size - 1] == 100 + (me + n - 1) % n, "the put to the last byte did not arrive");
        check(big[size - 2] == me + 1, "the byte before the last changed");
        shmem_free(big);
    }

    /* still in step: every PE sees every other's count of failures */
    static int all_failures;
    shmem_int_atomic_add(&all_failures, failures, 0);
    shmem_barrier_all();
    int total = shmem_int_g(&all_failures, 0);
    if (total == 0)
        printf("mem_edges: PE %d of %d: OK\n", me, n);
    shmem_finalize();
    return total != 0;
}
