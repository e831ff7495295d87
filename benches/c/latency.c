/*
 * Latency of single-element RMA operations between two PEs, on Open MPI's OpenSHMEM (oshmem).
 * The C twin of benches/src/bin/latency.rs: same cases, same statistics, same output format.
 *
 * PE 0 measures; PE 1 waits in shmem_barrier_all. Every case targets PE 1 and runs once on
 * shmem_malloc'd memory ("heap") and once on a file-scope static array, which lives in the
 * symmetric data segment ("static"; OpenSHMEM calls it a global):
 *   put 8 B + quiet   shmem_long_put of one long, then shmem_quiet, per iteration
 *   p 8 B + quiet     shmem_long_p, then shmem_quiet
 *   get 8 B           shmem_long_get of one long
 *   g 8 B             shmem_long_g
 * After a warm-up, each case runs REPS timed loops of ITERS iterations; the report gives the
 * median and minimum over the loops of the mean time per operation, in ns.
 *
 * Build: oshcc -O2 -o latency latency.c
 * Run:   oshrun --allow-run-as-root --oversubscribe -np 2 ./latency [csv] [iters N] [reps N]
 *
 * oshmem 4.1.4 segfaults inside shmem_finalize here, so all results are printed and flushed
 * before it is called; expect a non-zero exit status.
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LEN 8
#define TARGET 1
#define CHECK 0x5eedcafeL /* written at the end to check that puts land on the target */

static long glob[LEN];

/* Keeps the compiler from dropping or hoisting values it can otherwise prove unused. */
#define BLACK_BOX(x) __asm__ volatile("" : : "g"(x) : "memory")

struct stats {
    double median;
    double min;
};

enum op { OP_PUT, OP_P, OP_GET, OP_G };

static const char *const case_names[] = {"put 8 B + quiet", "p 8 B + quiet", "get 8 B", "g 8 B"};

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One loop of n operations of kind `op` on `dest` (a symmetric address). */
static void loop(enum op op, long *dest, long n)
{
    long buf = 0;
    for (long i = 0; i < n; i++) {
        switch (op) {
        case OP_PUT:
            buf = i;
            BLACK_BOX(&buf);
            shmem_long_put(dest, &buf, 1, TARGET);
            shmem_quiet();
            break;
        case OP_P:
            BLACK_BOX(i);
            shmem_long_p(dest, i, TARGET);
            shmem_quiet();
            break;
        case OP_GET:
            shmem_long_get(&buf, dest, 1, TARGET);
            BLACK_BOX(&buf);
            break;
        case OP_G: {
            long v = shmem_long_g(dest, TARGET);
            BLACK_BOX(v);
            break;
        }
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static struct stats measure(enum op op, long *dest, long iters, long reps, double *per_op)
{
    long warm = (iters + 3) / 4;
    loop(op, dest, warm < 1000 ? 1000 : warm);
    for (long r = 0; r < reps; r++) {
        double t0 = now_ns();
        loop(op, dest, iters);
        per_op[r] = (now_ns() - t0) / (double)iters;
    }
    qsort(per_op, (size_t)reps, sizeof *per_op, cmp_double);
    struct stats s;
    s.median = reps % 2 ? per_op[reps / 2] : (per_op[reps / 2 - 1] + per_op[reps / 2]) / 2.0;
    s.min = per_op[0];
    return s;
}

static long parse_count(const char *name, const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 1) {
        fprintf(stderr, "latency: %s must be a positive integer, got '%s'\n", name, s);
        exit(2);
    }
    return v;
}

static void usage(void)
{
    fprintf(stderr, "usage: oshrun -np 2 latency [csv] [iters N] [reps N]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int csv = 0;
    long iters = 20000, reps = 15;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "csv") == 0 || strcmp(argv[i], "--csv") == 0) {
            csv = 1;
        } else if ((strcmp(argv[i], "iters") == 0 || strcmp(argv[i], "--iters") == 0) && i + 1 < argc) {
            iters = parse_count("iters", argv[++i]);
        } else if ((strcmp(argv[i], "reps") == 0 || strcmp(argv[i], "--reps") == 0) && i + 1 < argc) {
            reps = parse_count("reps", argv[++i]);
        } else {
            usage();
        }
    }

    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes != 2) {
        if (me == 0)
            fprintf(stderr, "latency: needs exactly 2 PEs, got %d; run it with oshrun -np 2\n", npes);
        shmem_global_exit(1);
    }
    long *heap = shmem_calloc(LEN, sizeof(long));
    double *per_op = malloc((size_t)reps * sizeof *per_op);
    if (heap == NULL || per_op == NULL) {
        fprintf(stderr, "latency: allocation failed\n");
        shmem_global_exit(1);
    }
    shmem_barrier_all();

    if (me == 0) {
        struct {
            const char *variant;
            long *dest;
        } variants[] = {{"heap", heap}, {"static", glob}};
        struct stats res[2][4];
        for (int v = 0; v < 2; v++)
            for (int op = 0; op < 4; op++)
                res[v][op] = measure((enum op)op, variants[v].dest, iters, reps, per_op);
        if (csv)
            printf("case,variant,median_ns,min_ns\n");
        else
            printf("%-16s %-7s %10s %10s\n", "case", "variant", "median_ns", "min_ns");
        for (int v = 0; v < 2; v++)
            for (int op = 0; op < 4; op++) {
                if (csv)
                    printf("%s,%s,%.1f,%.1f\n", case_names[op], variants[v].variant,
                           res[v][op].median, res[v][op].min);
                else
                    printf("%-16s %-7s %10.1f %10.1f\n", case_names[op], variants[v].variant,
                           res[v][op].median, res[v][op].min);
            }
        fflush(stdout); /* before shmem_finalize, which crashes */
    }
    /* PE 1 waits here (progressing the library) for the whole measurement. */
    shmem_barrier_all();

    /* Sanity check that the puts really reach PE 1's copies. */
    if (me == 0) {
        shmem_long_p(&heap[1], CHECK, TARGET);
        shmem_long_p(&glob[1], CHECK, TARGET);
    }
    shmem_barrier_all();
    int status = 0;
    if (me == TARGET && (heap[1] != CHECK || glob[1] != CHECK)) {
        fprintf(stderr, "latency: check failed: PE %d holds %#lx (heap) and %#lx (static), expected %#lx\n",
                TARGET, heap[1], glob[1], CHECK);
        status = 1;
    }
    fflush(stdout);
    fflush(stderr);
    free(per_op);
    shmem_free(heap);
    shmem_finalize(); /* segfaults in oshmem 4.1.4 here; results are already out */
    return status;
}
