// shmem.h compiles as C++11 and its overloads resolve.
#include <shmem.h>
#include <shmemx.h>

static long x[4];

int main() {
    shmem_init();
    long v[4] = {1, 2, 3, 4};
    shmem_put(x, v, 4, shmem_my_pe());
    shmem_quiet();
    long old = shmem_atomic_fetch_add(&x[0], 1L, shmem_my_pe());
    shmem_barrier_all();
    int bad = old != 1 || shmem_g(&x[0], shmem_my_pe()) != 2 || shmemx_wtime() < 0;
    shmem_finalize();
    return bad;
}
