/* A PE may use its dest after a collective returns until it calls the next one, with no barrier
 * between them: no member writes another's dest before that one has called (more than OpenSHMEM
 * promises, which asks the program to make every dest ready before any PE calls). One PE at a
 * time reads its result slowly (half, a pause, the other half) while the others go straight on
 * to the next call, which writes other values into the same dest: shmem_broadcast,
 * shmem_sum_reduce, shmem_fcollect, shmem_collect and shmem_alltoall on the world team, each
 * small and large, and the deprecated shmem_alltoall64 over every PE and over the even PEs (its
 * pSync path). If a member wrote early, the slow PE's second half would hold the next call's
 * values. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Elements of a large broadcast or reduction, and per member of a large fcollect, collect or
 * all-to-all (beyond the mailbox: straight into the dests). */
#define LARGE 40000
#define BLOCK 2049

static long psync[2][SHMEM_ALLTOALL_SYNC_SIZE];
static long me, n, step, bad;
static uint64_t *got, *want;

/* Element I of what member FROM sends to member TO in round IT of call kind K. */
static uint64_t val(long k, long it, long from, long to, long i)
{
    return (uint64_t)k << 56 | (uint64_t)it << 48 | (uint64_t)(from * n + to) << 24 | (uint64_t)i;
}

/* Reads dest[0..len) (slowly on this step's slow PE) and compares it with want[0..len). */
static void check(const char *what, const uint64_t *dest, long len)
{
    long half = len / 2;
    memcpy(got, dest, half * sizeof *got);
    if (step % n == me) usleep(3000);
    memcpy(got + half, dest + half, (len - half) * sizeof *got);
    for (long x = 0; x < len; x++) {
        if (got[x] != want[x]) {
            fprintf(stderr, "PE %ld: %s (call %ld, slow PE %ld): dest[%ld] of %ld is %#llx, not "
                    "%#llx: written before this PE called again\n", me, what, step, step % n, x,
                    len, (unsigned long long)got[x], (unsigned long long)want[x]);
            bad++;
            break;
        }
    }
    step++;
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    n = shmem_n_pes();
    long most = n * BLOCK + n * n > LARGE ? n * BLOCK + n * n : LARGE;
    uint64_t *dest = shmem_malloc(most * sizeof *dest), *src = shmem_malloc(most * sizeof *src);
    got = malloc(most * sizeof *got);
    want = malloc(most * sizeof *want);
    if (!dest || !src || !got || !want) {
        fprintf(stderr, "PE %ld: out of memory\n", me);
        return 1;
    }
    static const long lens[2] = {100, LARGE}, pers[2] = {8, BLOCK};
    for (long it = 0; it < 3; it++) {
        for (int s = 0; s < 2; s++) {
            /* A source may be rewritten once the call that read it has returned here. */
            long len = lens[s], root = (it + len) % n;
            for (long i = 0; i < len; i++) src[i] = want[i] = val(1, it, root, 0, i);
            shmem_uint64_broadcast(SHMEM_TEAM_WORLD, dest, src, len, (int)root);
            check("shmem_broadcast", dest, len);

            for (long i = 0; i < len; i++) {
                src[i] = val(2, it, me, 0, i);
                want[i] = 0;
                for (long p = 0; p < n; p++) want[i] += val(2, it, p, 0, i);
            }
            shmem_uint64_sum_reduce(SHMEM_TEAM_WORLD, dest, src, len);
            check("shmem_sum_reduce", dest, len);
        }
        for (int s = 0; s < 2; s++) {
            long per = pers[s];
            for (long i = 0; i < per; i++) src[i] = val(3, it, me, 0, i);
            for (long x = 0; x < n * per; x++) want[x] = val(3, it, x / per, 0, x % per);
            shmem_uint64_fcollect(SHMEM_TEAM_WORLD, dest, src, per);
            check("shmem_fcollect", dest, n * per);

            /* Member p contributes per + p elements. */
            long total = 0;
            for (long i = 0; i < per + me; i++) src[i] = val(4, it, me, 0, i);
            for (long p = 0; p < n; p++)
                for (long i = 0; i < per + p; i++) want[total++] = val(4, it, p, 0, i);
            shmem_uint64_collect(SHMEM_TEAM_WORLD, dest, src, per + me);
            check("shmem_collect", dest, total);

            for (long x = 0; x < n * per; x++) {
                src[x] = val(5, it, me, x / per, x % per);
                want[x] = val(5, it, x / per, me, x % per);
            }
            shmem_uint64_alltoall(SHMEM_TEAM_WORLD, dest, src, per);
            check("shmem_alltoall", dest, n * per);

            for (long x = 0; x < n * per; x++) {
                src[x] = val(6, it, me, x / per, x % per);
                want[x] = val(6, it, x / per, me, x % per);
            }
            shmem_alltoall64(dest, src, per, 0, 0, (int)n, psync[0]);
            check("shmem_alltoall64 over every PE", dest, n * per);

            /* The even PEs: the pSync path (gets between two barriers of the set). */
            long evens = (n + 1) / 2;
            if (me % 2 == 0) {
                for (long x = 0; x < evens * per; x++) {
                    src[x] = val(7, it, me / 2, x / per, x % per);
                    want[x] = val(7, it, x / per, me / 2, x % per);
                }
                shmem_alltoall64(dest, src, per, 0, 1, (int)evens, psync[1]);
                check("shmem_alltoall64 over the even PEs", dest, evens * per);
            } else {
                step++;
            }
        }
    }
    shmem_barrier_all();
    shmem_free(dest);
    shmem_free(src);
    free(got);
    free(want);
    if (bad) fprintf(stderr, "PE %ld: %ld calls wrote a dest early\n", me, bad);
    shmem_finalize();
    return bad != 0;
}
