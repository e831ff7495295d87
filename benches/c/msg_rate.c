/*
 * Message rate and put-then-consume: the C twin of benches/src/bin/msg_rate.rs (same cases,
 * same statistics, same output), for Open MPI's oshmem (oshcc) and for this runtime's C API
 * (shmemcc). benches/msg-rate.sh runs them side by side.
 *
 * Message rate (PE 0 against PE 1): for every size s in 1 B, 2 B, ... 1 MiB, a window of
 * W(s) = min(64, 4 MiB / s) messages; message j moves s bytes between bytes j s .. (j + 1) s of
 * a private malloc'd buffer of 4 MiB (wherever malloc puts it) and the same bytes of a
 * page-aligned shmem_align'd array on PE 1. Cases: "put" (W shmem_putmem, then shmem_quiet),
 * "get" (W shmem_getmem, then shmem_quiet), "put_nbi" and "get_nbi" (W shmem_putmem_nbi /
 * shmem_getmem_nbi, then shmem_quiet). After a warm-up, REPS timed loops of k windows (k = ITERS
 * at small sizes, fewer so that a loop moves about 16 MiB, at least 2); a row is the median and
 * minimum over the loops of the mean ns per message (messages/s = 1e9 / median_ns).
 *
 * Put-then-consume: for 64 KiB, 1 MiB and 4 MiB, rounds of: shmem_barrier_all; PE 0 writes a
 * page-aligned symmetric array of PE 1 one of three ways; shmem_quiet; shmem_barrier_all; PE 1
 * sums the array as 64-bit words, timed. Variants, alternating in every round: "after put"
 * (shmem_putmem), "after memcpy by PE 0" (memcpy through shmem_ptr; missing where shmem_ptr
 * gives NULL), "after local memcpy" (PE 1 memcpys the bytes itself). Case "consume"; PE 1's
 * sum time, ns for the whole array, median and minimum over REPS rounds (after one warm-up).
 *
 * Build: oshcc -O2 -o msg_rate msg_rate.c    (or target/release/shmemcc)
 * Run:   oshrun --allow-run-as-root --oversubscribe -np 2 ./msg_rate [csv] [iters N] [reps N]
 *            [rate | consume] [max_size N] [offset N]
 * "offset N" starts both private buffers N bytes (mod 4096) further into their allocation, to
 * move the copies' distance (destination - source) mod 4096; PE 0 prints where they lie.
 * oshmem 4.1.4 segfaults inside shmem_finalize here; the results are out before it.
 */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WINDOW 64
#define SPAN (4L << 20)
#define MAX_MSG (1L << 20)
#define LOOP_BYTES (16L << 20)
#define TARGET 1
#define PAGE 4096
#define MAX_ROWS 128
#define REPS_MAX 1001

static const long consume_sizes[] = {64L << 10, 1L << 20, 4L << 20};

struct row {
    const char *kase;
    long size;
    const char *variant;
    double median, min;
};
static struct row rows[MAX_ROWS];
static int nrows;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void stats(double *v, int n, double *median, double *min)
{
    qsort(v, n, sizeof *v, cmp_double);
    *median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    *min = v[0];
}

static void add_row(const char *kase, long size, const char *variant, double median, double min)
{
    if (nrows < MAX_ROWS)
        rows[nrows++] = (struct row){kase, size, variant, median, min};
}

static long window(long size) { return WINDOW < SPAN / size ? WINDOW : SPAN / size; }

static long windows(long iters, long size)
{
    long by_bytes = LOOP_BYTES / (window(size) * size), k = iters < by_bytes ? iters : by_bytes;
    return k < 2 ? 2 : k;
}

enum op { PUT, GET, PUT_NBI, GET_NBI };
static const char *op_names[] = {"put", "get", "put_nbi", "get_nbi"};

static void one_window(enum op op, char *heap, char *src, char *dst, long size, long w)
{
    long j;
    switch (op) {
    case PUT:
        for (j = 0; j < w; j++)
            shmem_putmem(heap + j * size, src + j * size, size, TARGET);
        break;
    case GET:
        for (j = 0; j < w; j++)
            shmem_getmem(dst + j * size, heap + j * size, size, TARGET);
        break;
    case PUT_NBI:
        for (j = 0; j < w; j++)
            shmem_putmem_nbi(heap + j * size, src + j * size, size, TARGET);
        break;
    case GET_NBI:
        for (j = 0; j < w; j++)
            shmem_getmem_nbi(dst + j * size, heap + j * size, size, TARGET);
        break;
    }
    shmem_quiet();
}

static void run_rate(char *heap, char *src, char *dst, long iters, long reps, long max_size)
{
    static double v[REPS_MAX];
    long size, r, i;
    for (size = 1; size <= max_size; size *= 2) {
        long w = window(size), k = windows(iters, size);
        for (int op = PUT; op <= GET_NBI; op++) {
            double med, min;
            for (i = 0; i < (k < 4 ? 4 : k); i++)
                one_window(op, heap, src, dst, size, w);
            for (r = 0; r < reps; r++) {
                double t = now_ns();
                for (i = 0; i < k; i++)
                    one_window(op, heap, src, dst, size, w);
                v[r] = (now_ns() - t) / k;
            }
            stats(v, reps, &med, &min);
            add_row(op_names[op], size, "heap", med / w, min / w);
        }
    }
}

static __attribute__((noinline)) uint64_t sum(const uint64_t *w, long n)
{
    uint64_t s = 0;
    for (long i = 0; i < n; i++)
        s += w[i];
    return s;
}

static double times[6];
static long mapped_flag;

static void run_consume(uint64_t *arr, long reps)
{
    static const char *variants[] = {"after put", "after memcpy by PE 0", "after local memcpy"};
    static double t[3][REPS_MAX + 1];
    int me = shmem_my_pe();
    long n_src = (4L << 20) / 8;
    uint64_t *src = malloc(n_src * sizeof *src);
    volatile uint64_t sink;
    if (!src) {
        fprintf(stderr, "msg_rate: out of memory\n");
        exit(1);
    }
    for (long i = 0; i < n_src; i++)
        src[i] = (uint64_t)i * 3 + 1;
    uint64_t *peer = me == 0 ? shmem_ptr(arr, TARGET) : NULL;
    if (me == 0)
        for (int pe = 0; pe < shmem_n_pes(); pe++)
            shmem_long_p(&mapped_flag, peer != NULL, pe);
    shmem_barrier_all();
    int mapped = mapped_flag == 1;
    for (int c = 0; c < 3; c++) {
        long bytes = consume_sizes[c], n = bytes / 8;
        for (long r = 0; r < reps + 1; r++) {
            for (int v = 0; v < 3; v++) {
                if (v == 1 && !mapped)
                    continue;
                shmem_barrier_all();
                if (me == 0) {
                    if (v == 0)
                        shmem_putmem(arr, src, bytes, TARGET);
                    else if (v == 1 && peer)
                        memcpy(peer, src, bytes);
                    shmem_quiet();
                } else if (me == TARGET && v == 2) {
                    memcpy(arr, src, bytes);
                }
                shmem_barrier_all();
                if (me == TARGET) {
                    double t0 = now_ns();
                    sink = sum(arr, n);
                    t[v][r] = now_ns() - t0;
                }
            }
        }
        (void)sink;
        shmem_barrier_all();
        for (int v = 0; v < 3; v++) {
            if (me == TARGET && (v != 1 || mapped)) {
                double s[2];
                stats(t[v] + 1, reps, &s[0], &s[1]);
                shmem_putmem(&times[2 * v], s, sizeof s, 0);
            }
            shmem_barrier_all();
            if (me == 0 && (v != 1 || mapped))
                add_row("consume", bytes, variants[v], times[2 * v], times[2 * v + 1]);
        }
    }
    free(src);
}

static long parse_count(const char *what, const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 1) {
        fprintf(stderr, "msg_rate: %s wants a positive number, got '%s'\n", what, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    long iters = 400, reps = 11, max_size = MAX_MSG, offset = 0;
    int csv = 0, only_rate = 0, only_consume = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] == '-')
            a += 2;
        if (strcmp(a, "csv") == 0)
            csv = 1;
        else if (strcmp(a, "rate") == 0)
            only_rate = 1;
        else if (strcmp(a, "consume") == 0)
            only_consume = 1;
        else if (strcmp(a, "iters") == 0 && i + 1 < argc)
            iters = parse_count("iters", argv[++i]);
        else if (strcmp(a, "reps") == 0 && i + 1 < argc)
            reps = parse_count("reps", argv[++i]);
        else if (strcmp(a, "offset") == 0 && i + 1 < argc)
            offset = strtol(argv[++i], NULL, 10) % PAGE;
        else if ((strcmp(a, "max_size") == 0 || strcmp(a, "max-size") == 0) && i + 1 < argc)
            max_size = parse_count("max_size", argv[++i]);
        else {
            fprintf(stderr, "msg_rate: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (reps > REPS_MAX || max_size > MAX_MSG || (max_size & (max_size - 1))) {
        fprintf(stderr, "msg_rate: reps at most %d, max_size a power of 2 up to %ld\n", REPS_MAX,
                MAX_MSG);
        return 2;
    }
    shmem_init();
    if (shmem_n_pes() < 2) {
        fprintf(stderr, "msg_rate: needs at least 2 PEs\n");
        shmem_finalize();
        return 1;
    }
    char *heap = shmem_align(PAGE, SPAN);
    uint64_t *arr = shmem_align(PAGE, 4L << 20);
    char *src = malloc(SPAN + PAGE), *dst = malloc(SPAN + PAGE);
    if (!heap || !arr || !src || !dst) {
        fprintf(stderr, "msg_rate: out of memory\n");
        return 1;
    }
    for (long i = 0; i < SPAN + PAGE; i++)
        src[i] = dst[i] = (char)(i * 7 + 1);
    src += offset;
    dst += offset;
    if (shmem_my_pe() == 0)
        fprintf(stderr, "msg_rate: private buffers at %ld and %ld mod 4096, heap at %ld\n",
                (long)((uintptr_t)src % PAGE), (long)((uintptr_t)dst % PAGE),
                (long)((uintptr_t)heap % PAGE));
    shmem_barrier_all();
    if (!only_consume) {
        if (shmem_my_pe() == 0)
            run_rate(heap, src, dst, iters, reps, max_size);
        shmem_barrier_all();
    }
    if (!only_rate)
        run_consume(arr, reps);
    if (shmem_my_pe() == 0) {
        if (csv)
            printf("case,size,variant,median_ns,min_ns\n");
        else
            printf("%-8s %8s %-22s %12s %12s %12s\n", "case", "size", "variant", "median_ns",
                   "min_ns", "M msg/s");
        for (int i = 0; i < nrows; i++) {
            struct row *r = &rows[i];
            if (csv)
                printf("%s,%ld,%s,%.2f,%.2f\n", r->kase, r->size, r->variant, r->median, r->min);
            else
                printf("%-8s %8ld %-22s %12.2f %12.2f %12.3f\n", r->kase, r->size, r->variant,
                       r->median, r->min, 1e3 / r->median);
        }
        fflush(stdout);
    }
    shmem_barrier_all();
    if (!only_consume && shmem_my_pe() == TARGET && heap[0] != (char)(offset * 7 + 1)) {
        fprintf(stderr, "msg_rate: check failed: PE %d holds %d, expected %d\n", TARGET, heap[0],
                (char)(offset * 7 + 1));
        return 1;
    }
    shmem_finalize();
    return 0;
}
