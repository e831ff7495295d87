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
    // The OpenSHMEM 1.6 overloads: ibput/ibget, with and without a context; the scans; the
    // signal updates with a context.
    static long y[4];
    static uint64_t sig;
    long w[4] = {0, 0, 0, 0};
    shmem_ibput(y, v, 2, 2, 1, 2, shmem_my_pe());                       // y = {1, 0, 3, 0}
    shmem_ibput(SHMEM_CTX_DEFAULT, y, v, 2, 2, 1, 2, shmem_my_pe());
    shmem_quiet();
    shmem_ibget(w, y, 1, 2, 1, 2, shmem_my_pe());                       // w = {1, 3, 0, 0}
    shmem_ibget(SHMEM_CTX_DEFAULT, &w[2], y, 1, 2, 1, 2, shmem_my_pe()); // w = {1, 3, 1, 3}
    bad |= w[0] != 1 || w[1] != 3 || w[2] != 1 || w[3] != 3;
    static long in[1], ex[1], one[1] = {1};
    shmem_barrier_all();
    shmem_sum_inscan(SHMEM_TEAM_WORLD, in, one, 1);
    shmem_sum_exscan(SHMEM_TEAM_WORLD, ex, one, 1);
    bad |= in[0] != shmem_my_pe() + 1 || ex[0] != shmem_my_pe();
    shmem_signal_add(SHMEM_CTX_DEFAULT, &sig, 2, shmem_my_pe());
    shmem_signal_set(&sig, shmem_signal_fetch(&sig) + 1, shmem_my_pe());
    shmem_quiet();
    bad |= shmem_signal_fetch(&sig) != 3;
    shmem_finalize();
    return bad;
}
