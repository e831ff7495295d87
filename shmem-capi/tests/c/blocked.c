/* OpenSHMEM 1.6 blocked strided RMA: shmem_ibput and shmem_ibget in their typed, sized, context
 * and C11 generic forms. Each PE writes blocks into its right neighbour's arrays (a static
 * global and shmem_malloc memory); the neighbour checks every element, the ones between the
 * blocks included (untouched), and each PE reads blocks back from the right with ibget. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NB 3    /* blocks */
#define BS 2    /* elements per block */
#define DST 5   /* block stride at the destination */
#define SST 3   /* block stride at the source */
#define LEN 16  /* >= (NB - 1) * DST + BS */

static long glong[LEN];
static int32_t g32[LEN];
static uint64_t g64[LEN];
static double gdbl[LEN];
static uint8_t g8[LEN];
static long double gld[LEN];

static int bad;

/* The value a PE's source holds at element i. */
static long val(int pe, int i) { return 1000L * (pe + 1) + i; }

/* dest element j, written by `from` with DST/SST/BS/NB: the source element it came from, or -1. */
static int src_index(int j) {
    for (int k = 0; k < NB; k++)
        if (j >= k * DST && j < k * DST + BS) return k * SST + (j - k * DST);
    return -1;
}

#define CHECK(what, arr, from)                                                              \
    for (int j = 0; j < LEN; j++) {                                                         \
        int s = src_index(j);                                                               \
        long want = s < 0 ? 0 : val(from, s);                                               \
        if ((long)(arr)[j] != want) {                                                       \
            fprintf(stderr, "PE %d: %s[%d] = %ld, expected %ld\n", me, what, j,             \
                    (long)(arr)[j], want);                                                  \
            bad = 1;                                                                        \
        }                                                                                   \
    }

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    long *hlong = shmem_calloc(LEN, sizeof(long));
    int16_t *h16 = shmem_calloc(LEN, sizeof(int16_t));
    shmem_ctx_t ctx;
    if (shmem_ctx_create(0, &ctx) != 0) {
        fprintf(stderr, "PE %d: shmem_ctx_create failed\n", me);
        return 1;
    }

    long slong[LEN];
    int32_t s32[LEN];
    uint64_t s64[LEN];
    double sdbl[LEN];
    uint8_t s8[LEN];
    int16_t s16[LEN];
    long double sld[LEN];
    for (int i = 0; i < LEN; i++) {
        slong[i] = val(me, i);
        s32[i] = (int32_t)val(me, i);
        s64[i] = (uint64_t)val(me, i);
        sdbl[i] = (double)val(me, i);
        s8[i] = (uint8_t)(val(me, i) & 0xff);
        s16[i] = (int16_t)val(me, i);
        sld[i] = (long double)val(me, i);
    }

    shmem_long_ibput(glong, slong, DST, SST, BS, NB, right);         /* typed */
    shmem_ibput(hlong, slong, DST, SST, BS, NB, right);              /* C11 generic */
    shmem_ctx_int32_ibput(ctx, g32, s32, DST, SST, BS, NB, right);   /* typed, context */
    shmem_ibput(ctx, gdbl, sdbl, DST, SST, BS, NB, right);           /* generic, context */
    shmem_ibput64(g64, s64, DST, SST, BS, NB, right);                /* sized */
    shmem_ctx_ibput16(ctx, h16, s16, DST, SST, BS, NB, right);       /* sized, context */
    shmem_ibput8(g8, s8, DST, SST, BS, NB, right);
    shmem_longdouble_ibput(gld, sld, DST, SST, BS, NB, right);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();

    CHECK("glong", glong, left);
    CHECK("hlong", hlong, left);
    CHECK("g32", g32, left);
    CHECK("gdbl", gdbl, left);
    CHECK("g64", g64, left);
    CHECK("h16", h16, left);
    CHECK("gld", gld, left);
    for (int j = 0; j < LEN; j++) {
        int s = src_index(j);
        uint8_t want = s < 0 ? 0 : (uint8_t)(val(left, s) & 0xff);
        if (g8[j] != want) {
            fprintf(stderr, "PE %d: g8[%d] = %u, expected %u\n", me, j, g8[j], want);
            bad = 1;
        }
    }

    /* ibget: the right neighbour's glong holds blocks from me at DST; read them back packed
     * (blocks BS apart), and with the strides swapped into a strided local buffer. */
    long packed[NB * BS];
    memset(packed, 0, sizeof packed);
    shmem_long_ibget(packed, glong, BS, DST, BS, NB, right);
    for (int k = 0; k < NB; k++)
        for (int e = 0; e < BS; e++)
            if (packed[k * BS + e] != val(me, k * SST + e)) {
                fprintf(stderr, "PE %d: ibget packed[%d] = %ld, expected %ld\n", me, k * BS + e,
                        packed[k * BS + e], val(me, k * SST + e));
                bad = 1;
            }
    long spread[LEN];
    memset(spread, 0, sizeof spread);
    shmem_ibget(ctx, spread, hlong, SST, DST, BS, NB, right);          /* generic, context */
    for (int i = 0; i < LEN; i++) {
        int in_block = (i % SST) < BS && i / SST < NB;
        long want = in_block ? val(me, i) : 0;
        if (spread[i] != want) {
            fprintf(stderr, "PE %d: ibget spread[%d] = %ld, expected %ld\n", me, i, spread[i],
                    want);
            bad = 1;
        }
    }
    uint64_t p64[NB * BS] = {0};
    shmem_ibget64(p64, g64, BS, DST, BS, NB, right);                     /* sized */
    int32_t p32[NB * BS] = {0};
    shmem_ctx_ibget32(ctx, p32, g32, BS, DST, BS, NB, right);            /* sized, context */
    double pd[NB * BS] = {0};
    shmem_double_ibget(pd, gdbl, BS, DST, BS, NB, right);
    long double pld[NB * BS] = {0};
    shmem_ctx_longdouble_ibget(ctx, pld, gld, BS, DST, BS, NB, right);
    for (int k = 0; k < NB; k++)
        for (int e = 0; e < BS; e++) {
            long want = val(me, k * SST + e);
            int i = k * BS + e;
            if ((long)p64[i] != want || (long)p32[i] != want || (long)pd[i] != want ||
                (long)pld[i] != want) {
                fprintf(stderr, "PE %d: ibget [%d] = %ld %ld %ld %ld, expected %ld\n", me, i,
                        (long)p64[i], (long)p32[i], (long)pd[i], (long)pld[i], want);
                bad = 1;
            }
        }

    /* A block size of 1 is iput; zero blocks move nothing. */
    shmem_barrier_all();
    shmem_long_ibput(glong, slong, 2, 1, 1, 4, right);
    shmem_long_ibput(glong, slong, 1, 1, 0, 5, right);
    shmem_long_ibput(glong, slong, 1, 1, 5, 0, right);
    shmem_quiet();
    shmem_barrier_all();
    for (int i = 0; i < 4; i++)
        if (glong[2 * i] != val(left, i)) {
            fprintf(stderr, "PE %d: bsize 1: glong[%d] = %ld, expected %ld\n", me, 2 * i,
                    glong[2 * i], val(left, i));
            bad = 1;
        }

    shmem_barrier_all();
    shmem_ctx_destroy(ctx);
    shmem_free(h16);
    shmem_free(hlong);
    shmem_finalize();
    return bad;
}
