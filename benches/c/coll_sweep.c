/* Collectives from 8 B to 4 MiB per PE over all PEs: the C twin of
 * benches/src/bin/coll_sweep.rs (read its header: the same cases, sizes, timing and output).
 * OpenSHMEM 1.4 calls, which Open MPI 4.1.4's oshmem and this runtime's C API both have:
 * shmem_float_sum_to_all, shmem_longlong_sum_to_all (i64), shmem_broadcast64 (root 0; in 1.4
 * the root's own dest is not written), shmem_fcollect64, shmem_alltoall64, shmem_collect64 (every
 * PE contributing the same count), shmem_alltoalls64 (strides 2 on both sides) and
 * broadcast_fresh (shmem_broadcast64 of a source the root rewrites before each call), and one
 * reduction of every operation and type family (the on-request reduce_OP_TYPE cases, whose
 * routines and values coll_sweep.rs's header lists: shmem_longlong_and_to_all, shmem_int_or_to_all,
 * shmem_short_xor_to_all, shmem_double_max_to_all, shmem_int_min_to_all, shmem_short_sum_to_all,
 * shmem_complexd_sum_to_all, shmem_double_prod_to_all, shmem_complexf_prod_to_all), over the
 * active set of every PE. Sources are symmetric, as C asks. collect, alltoalls,
 * broadcast_fresh and those nine reductions run only when `only` names them. memcpy, as
 * coll_sweep.rs's: every PE copies `size` bytes between two private buffers of its own
 * (malloc, glibc's memcpy), all PEs at once and timed the same way: what moving the data costs
 * in this job, which coll-sweep.sh's memory-bound table divides by.
 *
 * Run: oshrun -np N ./coll_sweep [iters N] [reps N] [max_bytes B] [budget B] [min_bytes B]
 *      [only CASE[,CASE...]] [offset K] (as coll_sweep.rs's --min-bytes, --only and --offset:
 *      sizes from min_bytes up; only the cases named, comma-separated, exactly, default all;
 *      every destination and source K elements, 0 to 64, past its page boundary, and memcpy's
 *      two buffers K x 8 bytes into theirs, default 0)
 * A size's loops take turns (each repetition runs one loop of every case), as in coll_sweep.rs.
 * Output on PE 0: case,size,npes,median_ns,min_ns. */
#include <complex.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX2(a, b) ((a) > (b) ? (a) : (b))
static long psync[2][MAX2(MAX2(SHMEM_REDUCE_SYNC_SIZE, SHMEM_ALLTOALL_SYNC_SIZE),
                          MAX2(SHMEM_COLLECT_SYNC_SIZE, SHMEM_ALLTOALLS_SYNC_SIZE))];

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum {
    C_F32, C_I64, C_BCAST, C_FCOLLECT, C_MEMCPY, C_ALLTOALL, C_COLLECT, C_ALLTOALLS, C_BCAST_FRESH,
    /* The reductions of every operation and type family, on request. */
    C_AND_I64, C_OR_I32, C_XOR_I16, C_MAX_F64, C_MIN_I32, C_SUM_I16, C_SUM_C64, C_PROD_F64,
    C_PROD_C32, NCASES
};
static const char *names[NCASES] = {"reduce_sum_f32", "reduce_sum_i64", "broadcast", "fcollect",
                                    "memcpy", "alltoall", "collect", "alltoalls",
                                    "broadcast_fresh", "reduce_and_i64", "reduce_or_i32",
                                    "reduce_xor_i16", "reduce_max_f64", "reduce_min_i32",
                                    "reduce_sum_i16", "reduce_sum_c64", "reduce_prod_f64",
                                    "reduce_prod_c32"};

/* 1 when case C's name is one of the comma-separated names of LIST, or LIST is NULL and C is
 * not a case that runs only on request (collect, alltoalls, broadcast_fresh and the reductions
 * after it: as coll_sweep.rs's ON_REQUEST). */
static int wanted(const char *list, int c)
{
    if (!list) return c < C_COLLECT; /* the default cases come first */
    const char *name = names[c];
    size_t n = strlen(name);
    for (const char *p = list;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n)) return 1;
        if (!e) return 0;
        p = e + 1;
    }
}

static float *src_f32, *dst_f32, *wrk_f32;
static long long *src_i64, *dst_i64, *wrk_i64, *src_fresh;
/* The other reductions' arrays (allocated only when one of them runs). */
static double *src_f64, *dst_f64, *wrk_f64;
static int *src_i32, *dst_i32, *wrk_i32;
static short *src_i16, *dst_i16, *wrk_i16;
static double complex *src_c64, *dst_c64, *wrk_c64;
static float complex *src_c32, *dst_c32, *wrk_c32;
static unsigned char *copy_src, *copy_dst;
static int npes, me;

static void op(int c, long size, long i)
{
    long k32 = size / 4 > 0 ? size / 4 : 1, k64 = size / 8 > 0 ? size / 8 : 1;
    int k16 = size / 2 > 0 ? (int)(size / 2) : 1, k128 = size / 16 > 0 ? (int)(size / 16) : 1;
    long *ps = psync[i & 1];
    switch (c) {
    case C_F32:
        shmem_float_sum_to_all(dst_f32, src_f32, (int)k32, 0, 0, npes, wrk_f32, ps);
        break;
    case C_I64:
        shmem_longlong_sum_to_all(dst_i64, src_i64, (int)k64, 0, 0, npes, wrk_i64, ps);
        break;
    case C_BCAST:
        shmem_broadcast64(dst_i64, src_i64, k64, 0, 0, 0, npes, ps);
        break;
    case C_FCOLLECT:
        shmem_fcollect64(dst_i64, src_i64, k64, 0, 0, npes, ps);
        break;
    case C_MEMCPY:
        memcpy(copy_dst, copy_src, (size_t)size);
        __asm__ volatile("" : : "r"(copy_dst) : "memory");
        break;
    case C_ALLTOALL: {
        long block = k64 / npes > 0 ? k64 / npes : 1;
        shmem_alltoall64(dst_i64, src_i64, block, 0, 0, npes, ps);
        break;
    }
    case C_COLLECT:
        shmem_collect64(dst_i64, src_i64, k64, 0, 0, npes, ps);
        break;
    case C_BCAST_FRESH:
        shmem_broadcast64(dst_i64, src_fresh, k64, 0, 0, 0, npes, ps);
        break;
    case C_ALLTOALLS: {
        /* Every other element on both sides: nelems per PE, the source spanning `size`. */
        long nel = k64 / npes / 2 > 0 ? k64 / npes / 2 : 1;
        shmem_alltoalls64(dst_i64, src_i64, 2, 2, nel, 0, 0, npes, ps);
        break;
    }
    case C_AND_I64:
        shmem_longlong_and_to_all(dst_i64, src_i64, (int)k64, 0, 0, npes, wrk_i64, ps);
        break;
    case C_OR_I32:
        shmem_int_or_to_all(dst_i32, src_i32, (int)k32, 0, 0, npes, wrk_i32, ps);
        break;
    case C_XOR_I16:
        shmem_short_xor_to_all(dst_i16, src_i16, k16, 0, 0, npes, wrk_i16, ps);
        break;
    case C_MAX_F64:
        shmem_double_max_to_all(dst_f64, src_f64, (int)k64, 0, 0, npes, wrk_f64, ps);
        break;
    case C_MIN_I32:
        shmem_int_min_to_all(dst_i32, src_i32, (int)k32, 0, 0, npes, wrk_i32, ps);
        break;
    case C_SUM_I16:
        shmem_short_sum_to_all(dst_i16, src_i16, k16, 0, 0, npes, wrk_i16, ps);
        break;
    case C_SUM_C64:
        shmem_complexd_sum_to_all(dst_c64, src_c64, k128, 0, 0, npes, wrk_c64, ps);
        break;
    case C_PROD_F64:
        shmem_double_prod_to_all(dst_f64, src_f64, (int)k64, 0, 0, npes, wrk_f64, ps);
        break;
    default:
        shmem_complexf_prod_to_all(dst_c32, src_c32, (int)k64, 0, 0, npes, wrk_c32, ps);
    }
}

/* Untimed, before each call's barrier: for broadcast_fresh, the root writes every element of
 * what it broadcasts next, as a program broadcasts data it has just made ("broadcast" sends the
 * same source every time, which stays in every cache). */
static void prep(int c, long size)
{
    if (c != C_BCAST_FRESH || me != 0) return;
    long k64 = size / 8 > 0 ? size / 8 : 1;
    for (long i = 0; i < k64; i++) src_fresh[i]++;
}

/* A symmetric array of N elements of SIZE bytes, page-aligned, used from element OFF on (NULL
 * when the heap is full). */
static void *sym_array(long n, size_t size, long off)
{
    char *p = shmem_align(4096, (size_t)(n + off) * size);
    return p ? p + off * size : NULL;
}

/* The other reductions' arrays, for sizes up to MAX bytes, OFF elements in (as the others),
 * with coll_sweep.rs's values: the integer and double sources (i % 1000) + me, the complex
 * double one that plus 1i, the complex float one (the product's: magnitudes that stay finite)
 * 1 + (i % 7) / 8 + me / 16 i. Nonzero on failure. */
static int alloc_ops(long max, long off)
{
    long e16 = max / 2 + 1, e32 = max / 4 + 1, e64 = max / 8 + 1, e128 = max / 16 + 1;
    long m = SHMEM_REDUCE_MIN_WRKDATA_SIZE;
    src_f64 = sym_array(e64, 8, off);
    dst_f64 = sym_array(e64, 8, off);
    wrk_f64 = sym_array(e64 / 2 + 1 + m, 8, 0);
    src_i32 = sym_array(e32, 4, off);
    dst_i32 = sym_array(e32, 4, off);
    wrk_i32 = sym_array(e32 / 2 + 1 + m, 4, 0);
    src_i16 = sym_array(e16, 2, off);
    dst_i16 = sym_array(e16, 2, off);
    wrk_i16 = sym_array(e16 / 2 + 1 + m, 2, 0);
    src_c64 = sym_array(e128, 16, off);
    dst_c64 = sym_array(e128, 16, off);
    wrk_c64 = sym_array(e128 / 2 + 1 + m, 16, 0);
    src_c32 = sym_array(e64, 8, off);
    dst_c32 = sym_array(e64, 8, off);
    wrk_c32 = sym_array(e64 / 2 + 1 + m, 8, 0);
    if (!src_f64 || !dst_f64 || !wrk_f64 || !src_i32 || !dst_i32 || !wrk_i32 || !src_i16 ||
        !dst_i16 || !wrk_i16 || !src_c64 || !dst_c64 || !wrk_c64 || !src_c32 || !dst_c32 ||
        !wrk_c32)
        return 1;
    for (long i = 0; i < e64; i++) src_f64[i] = (double)(i % 1000 + me);
    for (long i = 0; i < e32; i++) src_i32[i] = (int)(i % 1000 + me);
    for (long i = 0; i < e16; i++) src_i16[i] = (short)(i % 1000 + me);
    for (long i = 0; i < e128; i++) src_c64[i] = (double)(i % 1000 + me) + 1.0 * I;
    for (long i = 0; i < e64; i++)
        src_c32[i] = (1.0f + (float)(i % 7) / 8) + (float)me / 16 * I;
    return 0;
}

int main(int argc, char **argv)
{
    long iters = 2000, reps = 9, max_bytes = 4 << 20, budget = 64 << 20, min_bytes = 8, off = 0;
    const char *only = NULL;
    for (int a = 1; a + 1 < argc; a += 2) {
        long v = strtol(argv[a + 1], NULL, 10);
        if (!strcmp(argv[a], "only")) only = argv[a + 1];
        else if (!strcmp(argv[a], "min_bytes")) min_bytes = v;
        else if (!strcmp(argv[a], "iters")) iters = v;
        else if (!strcmp(argv[a], "reps")) reps = v;
        else if (!strcmp(argv[a], "max_bytes")) max_bytes = v;
        else if (!strcmp(argv[a], "budget")) budget = v;
        else if (!strcmp(argv[a], "offset")) off = v;
    }
    if (off < 0 || off > 64) {
        fprintf(stderr, "coll_sweep: offset %ld is not within 0 to 64 elements\n", off);
        return 2;
    }
    shmem_init();
    npes = shmem_n_pes();
    me = shmem_my_pe();
    for (int k = 0; k < 2; k++)
        for (size_t j = 0; j < sizeof psync[0] / sizeof psync[0][0]; j++)
            psync[k][j] = SHMEM_SYNC_VALUE;
    long max = 8;
    for (long s = 16; s <= max_bytes && s <= (4 << 20); s *= 4) max = s;
    long e32 = max / 4, e64 = max / 8 + 1;
    /* Each array OFF elements longer, and used from element OFF on (offset). */
    src_f32 = sym_array(e32, 4, off);
    dst_f32 = sym_array(e32, 4, off);
    wrk_f32 = shmem_malloc((e32 / 2 + 1 + SHMEM_REDUCE_MIN_WRKDATA_SIZE) * 4);
    src_i64 = sym_array(e64, 8, off);
    src_fresh = sym_array(e64, 8, off);
    dst_i64 = sym_array(npes * e64, 8, off);
    wrk_i64 = shmem_malloc((e64 / 2 + 1 + SHMEM_REDUCE_MIN_WRKDATA_SIZE) * 8);
    double *means = shmem_malloc(npes * sizeof(double));
    copy_src = malloc(max + 8 * off);
    copy_dst = malloc(max + 8 * off);
    if (!copy_src || !copy_dst) {
        fprintf(stderr, "coll_sweep: PE %d: out of memory\n", me);
        return 1;
    }
    copy_src += 8 * off;
    copy_dst += 8 * off;
    for (long i = 0; i < max; i++) copy_src[i] = (unsigned char)(i * 7 + me);
    memset(copy_dst, 1, max);
    if (!src_f32 || !dst_f32 || !wrk_f32 || !src_i64 || !src_fresh || !dst_i64 || !wrk_i64 ||
        !means) {
        fprintf(stderr, "coll_sweep: PE %d: out of symmetric memory\n", me);
        return 1;
    }
    for (long i = 0; i < e32; i++) src_f32[i] = (float)(i % 1000) + me;
    for (long i = 0; i < e64; i++) src_fresh[i] = src_i64[i] = i * (me + 1);
    int ops = 0;
    for (int c = C_AND_I64; c < NCASES; c++) ops |= only && wanted(only, c);
    if (ops && alloc_ops(max, off)) {
        fprintf(stderr, "coll_sweep: PE %d: out of symmetric memory\n", me);
        return 1;
    }
    double *fig = malloc(NCASES * reps * sizeof(double));
    if (!fig) {
        fprintf(stderr, "coll_sweep: PE %d: out of memory\n", me);
        return 1;
    }
    shmem_barrier_all();
    for (long size = 8; size <= max; size = size == 8 ? 16 : size * 4) {
        long it = budget / size;
        if (it > iters) it = iters;
        if (it < 2) it = 2;
        if (size < min_bytes) continue;
        long warm = (it + 3) / 4 > 2 ? (it + 3) / 4 : 2;
        /* A size's loops take turns, as in coll_sweep.rs: each repetition runs one loop of
         * every case (its warm-up, then the timed calls). */
        for (long r = 0; r < reps; r++) {
            for (int c = 0; c < NCASES; c++) {
                if (!wanted(only, c)) continue;
                for (long i = 0; i < warm; i++) {
                    prep(c, size);
                    shmem_barrier_all();
                    op(c, size, i);
                }
                double spent = 0;
                for (long i = 0; i < it; i++) {
                    prep(c, size);
                    shmem_barrier_all();
                    double t0 = now_ns();
                    op(c, size, i);
                    spent += now_ns() - t0;
                }
                double mean = spent / it;
                shmem_double_p(&means[me], mean, 0);
                shmem_barrier_all();
                double f = mean;
                if (me == 0) {
                    double sum = 0;
                    for (int p = 0; p < npes; p++) sum += means[p];
                    f = sum / npes;
                }
                fig[c * reps + r] = f;
            }
        }
        for (int c = 0; c < NCASES; c++) {
            if (!wanted(only, c)) continue;
            double *v = fig + c * reps;
            qsort(v, reps, sizeof(double), cmp);
            double median = reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2;
            if (me == 0) printf("%s,%ld,%d,%.1f,%.1f\n", names[c], size, npes, median, v[0]);
        }
    }
    /* A check: element 1 of the i64 sum is sum(p + 1) = n(n+1)/2. */
    shmem_barrier_all();
    shmem_longlong_sum_to_all(dst_i64, src_i64, 2, 0, 0, npes, wrk_i64, psync[0]);
    if (dst_i64[1] != (long long)npes * (npes + 1) / 2) {
        fprintf(stderr, "coll_sweep: PE %d: check reduction gave %lld\n", me, dst_i64[1]);
        return 1;
    }
    fflush(stdout);
    shmem_finalize();
    return 0;
}
