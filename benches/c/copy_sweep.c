/*
 * Copy time against the distance between destination and source modulo 4096 on Open MPI's
 * OpenSHMEM (oshmem): shmem_putmem + shmem_quiet and shmem_getmem between a private buffer of
 * PE 0 and PE 1's symmetric heap, next to a plain local memcpy. The C twin of
 * benches/src/bin/copy_sweep.rs: same points, same statistics, same output.
 *
 * glibc's memcpy (rep movsb for large copies) stalls on AMD EPYC when the destination lies just
 * past the source modulo 4096 (d = (dst - src) mod 4096 in 1..~31; glibc bug 30994). oshmem maps
 * its heap with ucp_mem_map, so a put or get to a PE on the same node is a memcpy into or out of
 * the peer's mapping: this sweep shows whether it inherits the stall.
 *
 * For every size (8 B, 64 B, 256 B, 4 KiB, 64 KiB, 256 KiB, 4 MiB), source alignment (source
 * address mod 4096: 0, 7, and 4093, where every copy's source crosses a page boundary) and
 * distance d in the list below, PE 0 times: "put" (shmem_putmem from the
 * private buffer into PE 1's array, then shmem_quiet; destination: PE 1's copy as mapped into
 * PE 0, found with shmem_ptr), "get" (shmem_getmem the other way: source and destination swap)
 * and "memcpy" (between two private buffers). Buffers have a page of slack; each copy starts at
 * the offset that gives the wanted alignment and distance, from the real addresses. Each of REPS
 * repetitions goes round every point of a size (forwards, then backwards on the next) and times
 * at each point one loop of max(4, BYTES / size) copies per copy, the three copies' loops
 * alternating (order rotated per repetition), each after an untimed loop of an eighth as many
 * copies: a change in the machine's speed during the sweep falls on every point alike.
 *
 * Output (stdout, CSV): a header op,size,d,src_align,median_ns,min_ns, then one line per
 * (op, size, source alignment, d): median and minimum over the loops of the mean ns per copy.
 *
 * Build: oshcc -O2 -Wall -o copy_sweep copy_sweep.c
 * Run:   oshrun --allow-run-as-root --oversubscribe -np 2 ./copy_sweep [bytes N] [reps N]
 * oshmem 4.1.4 segfaults inside shmem_finalize here, after the results are out: expect a
 * non-zero exit status.
 */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PAGE 4096
#define MAX (4 << 20)
#define TARGET 1
#define NOPS 3

static const long sizes[] = {8, 64, 256, 4096, 64 << 10, 256 << 10, 4 << 20};
static const long distances[] = {0,    1,    2,    4,    8,    16,   24,   32,   48,   64,  128,
                                 256,  512,  1024, 2048, 3072, 4032, 4064, 4080, 4088, 4095};
static const long src_aligns[] = {0, 7, 4093};
static const char *const op_names[NOPS] = {"put", "get", "memcpy"};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
/* Points per size: every source alignment with every distance. */
#define NPOINTS (COUNT(src_aligns) * COUNT(distances))
/* An untimed loop of iters / WARM_DIVISOR copies (at least 4) before each timed loop. */
#define WARM_DIVISOR 8

/* Keeps the compiler from dropping or hoisting values it can otherwise prove unused. */
#define BLACK_BOX(x) __asm__ volatile("" : : "g"(x) : "memory")

/* The copies of the current point. */
static unsigned char *put_src, *put_dst, *get_src, *get_dst, *cp_src, *cp_dst;
static size_t cur_size;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline void copy(int op)
{
    switch (op) {
    case 0:
        BLACK_BOX(put_src);
        shmem_putmem(put_dst, put_src, cur_size, TARGET);
        shmem_quiet();
        break;
    case 1:
        shmem_getmem(get_dst, get_src, cur_size, TARGET);
        BLACK_BOX(get_dst);
        break;
    default:
        BLACK_BOX(cp_src);
        memcpy(cp_dst, cp_src, cur_size);
        BLACK_BOX(cp_dst);
        break;
    }
}

static double time_loop(int op, long iters)
{
    double t0 = now_ns();
    for (long i = 0; i < iters; i++)
        copy(op);
    return (now_ns() - t0) / (double)iters;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Offset into a buffer at base at which an address is want mod 4096. */
static size_t offset_for(const void *base, long want)
{
    return (size_t)((want % PAGE + PAGE - (long)((uintptr_t)base % PAGE)) % PAGE);
}

/* Aborts (a bug in this program) unless the copy src -> dst has alignment a and distance d. */
static void check_placement(const char *what, const void *dst, const void *src, long a, long d)
{
    uintptr_t s = (uintptr_t)src, t = (uintptr_t)dst;
    if ((long)(s % PAGE) != a || (long)((t - s) % PAGE) != d) {
        fprintf(stderr, "copy_sweep: %s: source at %lu mod 4096, distance %lu, wanted %ld and %ld\n",
                what, (unsigned long)(s % PAGE), (unsigned long)((t - s) % PAGE), a, d);
        shmem_global_exit(1);
    }
}

static long parse_count(const char *name, const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 1) {
        fprintf(stderr, "copy_sweep: %s must be a positive integer, got '%s'\n", name, s);
        exit(2);
    }
    return v;
}

static unsigned char *filled(size_t len)
{
    unsigned char *p = malloc(len);
    if (p == NULL) {
        fprintf(stderr, "copy_sweep: malloc of %zu bytes failed\n", len);
        shmem_global_exit(1);
    }
    for (size_t i = 0; i < len; i++)
        p[i] = (unsigned char)i;
    return p;
}

static void sweep(unsigned char *remote_sym, long bytes, long reps)
{
    unsigned char *remote = shmem_ptr(remote_sym, TARGET);
    if (remote == NULL) {
        fprintf(stderr, "copy_sweep: PE %d's heap is not mapped into PE 0 (shmem_ptr is NULL): "
                        "this measures the direct shared-memory path only\n", TARGET);
        shmem_global_exit(1);
    }
    unsigned char *local = filled(MAX + PAGE);
    unsigned char *src_buf = filled(MAX + PAGE);
    unsigned char *dst_buf = filled(MAX + PAGE);
    double *times = malloc((size_t)(NPOINTS * NOPS * reps) * sizeof *times);
    if (times == NULL) {
        fprintf(stderr, "copy_sweep: malloc failed\n");
        shmem_global_exit(1);
    }

    printf("op,size,d,src_align,median_ns,min_ns\n");
    for (int k = 0; k < COUNT(sizes); k++) {
        long size = sizes[k], iters = bytes / size < 4 ? 4 : bytes / size;
        long warm = iters / WARM_DIVISOR < 4 ? 4 : iters / WARM_DIVISOR;
        cur_size = (size_t)size;
        /* Check every point's placement first. */
        for (int i = 0; i < NPOINTS; i++) {
            long a = src_aligns[i / COUNT(distances)], d = distances[i % COUNT(distances)];
            check_placement("put", remote + offset_for(remote, a + d),
                            local + offset_for(local, a), a, d);
            check_placement("get", local + offset_for(local, a + d),
                            remote + offset_for(remote, a), a, d);
            check_placement("memcpy", dst_buf + offset_for(dst_buf, a + d),
                            src_buf + offset_for(src_buf, a), a, d);
        }
        for (long r = 0; r < reps; r++) {
            /* Forwards on even repetitions, backwards on odd ones. */
            for (int n = 0; n < NPOINTS; n++) {
                int i = r % 2 == 0 ? n : NPOINTS - 1 - n;
                long a = src_aligns[i / COUNT(distances)], d = distances[i % COUNT(distances)];
                /* put: local (source) at a, remote (destination) at a + d; the symmetric
                 * address is the one passed to shmem_putmem, at the same offset. */
                put_src = local + offset_for(local, a);
                put_dst = remote_sym + offset_for(remote, a + d);
                get_src = remote_sym + offset_for(remote, a);
                get_dst = local + offset_for(local, a + d);
                cp_src = src_buf + offset_for(src_buf, a);
                cp_dst = dst_buf + offset_for(dst_buf, a + d);
                for (int q = 0; q < NOPS; q++) {
                    int op = (int)((q + r) % NOPS);
                    time_loop(op, warm);
                    times[(i * NOPS + op) * reps + r] = time_loop(op, iters);
                }
            }
        }
        for (int i = 0; i < NPOINTS; i++) {
            long a = src_aligns[i / COUNT(distances)], d = distances[i % COUNT(distances)];
            for (int op = 0; op < NOPS; op++) {
                double *v = times + (i * NOPS + op) * reps;
                qsort(v, (size_t)reps, sizeof *v, cmp_double);
                double median = reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2.0;
                printf("%s,%ld,%ld,%ld,%.1f,%.1f\n", op_names[op], size, d, a, median, v[0]);
            }
        }
    }
    fflush(stdout); /* before shmem_finalize, which crashes */
    free(times);
    free(local);
    free(src_buf);
    free(dst_buf);
}

int main(int argc, char **argv)
{
    long bytes = 1 << 20, reps = 7;
    for (int i = 1; i < argc; i++) {
        if ((strcmp(argv[i], "bytes") == 0 || strcmp(argv[i], "--bytes") == 0) && i + 1 < argc) {
            bytes = parse_count("bytes", argv[++i]);
        } else if ((strcmp(argv[i], "reps") == 0 || strcmp(argv[i], "--reps") == 0) && i + 1 < argc) {
            reps = parse_count("reps", argv[++i]);
        } else {
            fprintf(stderr, "usage: oshrun -np 2 copy_sweep [bytes N] [reps N]\n");
            return 2;
        }
    }
    shmem_init();
    if (shmem_n_pes() < 2) {
        fprintf(stderr, "copy_sweep: needs at least 2 PEs, got %d; run it with oshrun -np 2\n",
                shmem_n_pes());
        shmem_global_exit(1);
    }
    unsigned char *remote = shmem_align(PAGE, MAX + PAGE);
    if (remote == NULL) {
        fprintf(stderr, "copy_sweep: shmem_align failed\n");
        shmem_global_exit(1);
    }
    memset(remote, 0, MAX + PAGE);
    shmem_barrier_all();
    if (shmem_my_pe() == 0)
        sweep(remote, bytes, reps);
    /* The other PEs wait here while PE 0 measures. */
    shmem_barrier_all();
    shmem_free(remote);
    shmem_finalize(); /* segfaults in oshmem 4.1.4 here; results are already out */
    return 0;
}
