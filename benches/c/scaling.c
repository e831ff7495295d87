/*
 * Scaling with the number of PEs: start-up, memory per PE, collectives and an all-to-all put
 * round, for one job at whatever PE count it runs with. One plain OpenSHMEM program that builds
 * with Open MPI's oshcc (oshmem 4.1.4, OpenSHMEM 1.4: no teams, so the collectives are the 1.4
 * active-set calls over all PEs, with pSync/pWrk) and with this runtime's shmemcc; benches/
 * scaling.sh runs it at 1 to 128 PEs, both implementations, both transports.
 *
 * What PE 0 prints, one "metric,value" line each (ns or bytes; "mean"/"max" over all PEs):
 *   npes, iters, reps, rounds        the job's shape and loop sizes
 *   init_ns, init_max_ns              wall clock (CLOCK_MONOTONIC) around shmem_init: PE 0, max
 *   startup_ns, startup_max_ns        CLOCK_REALTIME at the end of shmem_init minus the launch
 *                                     time given as "t0 NS" (date +%s%N just before the
 *                                     launcher starts): PE 0, max; -1 without t0
 *   {rss,pss}_{init,end}_{mean,max}   Rss and Pss of /proc/self/smaps_rollup in bytes, right
 *                                     after shmem_init and at the end (Pss divides each shared
 *                                     page among the processes that map it, so its sum over the
 *                                     PEs is their joint footprint; Rss counts shared pages in
 *                                     full in every PE); -1 where the file is missing
 *   put_first_ns, put_first_max_ns    the first all-to-all put round: every PE puts 8 B to
 *                                     every other PE, starting at me + 1, then shmem_quiet and
 *                                     shmem_barrier_all, timed from the barrier before it; it is
 *                                     the first contact with each peer (only shmem_malloc's and
 *                                     one barrier's synchronization come before it): PE 0, max
 *   put_steady_ns                     the same round again, median over ROUNDS rounds (PE 0)
 *   barrier_ns                        shmem_barrier_all, back to back, timed on PE 0
 *   reduce_ns, fcollect_ns,           shmem_long_sum_to_all of 1 long, shmem_fcollect64 and
 *   alltoall_ns                       shmem_alltoall64 of 8 B per PE; OSU style, as
 *                                     benches/c/latency.c: an untimed barrier_all before each
 *                                     call, only the call timed, on every PE, a loop's figure
 *                                     the mean over the PEs of their mean per call
 *   checks,ok | checks,FAILED         every put round's and every collective call's data is
 *                                     checked on every PE (outside the timed part)
 * The timed loops' figures are medians over REPS loops of ITERS calls each (ITERS scaled down
 * as 8 x ITERS / npes above 8 PEs, at least 4). Exit status 1 when a check failed (but oshmem
 * 4.1.4 segfaults in shmem_finalize here, so with it only the "checks,ok" line counts).
 *
 * Build: oshcc -O2 -o scaling scaling.c        or   target/release/shmemcc -O2 -o scaling scaling.c
 * Run:   oshrun --allow-run-as-root --oversubscribe -np 16 ./scaling [iters N] [reps N]
 *            [rounds N] [t0 NS]                or   target/release/shmemrun -n 16 ./scaling ...
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXOF(a, b) ((a) > (b) ? (a) : (b))
#define PSYNC_LEN                                                                              \
    MAXOF(MAXOF(SHMEM_REDUCE_SYNC_SIZE, SHMEM_COLLECT_SYNC_SIZE),                              \
          MAXOF(SHMEM_ALLTOALL_SYNC_SIZE, SHMEM_BARRIER_SYNC_SIZE))
/* Values reduced over the PEs at the end (see enum val). */
#define NVALS 8
#define PWRK_LEN MAXOF(NVALS / 2 + 1, SHMEM_REDUCE_MIN_WRKDATA_SIZE)

enum val { V_INIT, V_STARTUP, V_RSS_INIT, V_PSS_INIT, V_RSS_END, V_PSS_END, V_PUT_FIRST, V_ERRORS };

/* Symmetric (file-scope static) data of the 1.4 collectives. */
static long psync[2][PSYNC_LEN];
static long pwrk[PWRK_LEN];
static long vals[NVALS], vals_max[NVALS], vals_sum[NVALS];
static long red_src, red_dst, fc_src;

static int me, npes;
static long errors;
static long sync_k; /* which pSync the next collective takes */

static long *fc_dst;        /* npes longs, symmetric */
static long *a2a_src, *a2a_dst; /* npes longs each, symmetric */
static long *recv;          /* npes longs, symmetric: recv[j] is written by PE j's put */
static double *means;       /* npes doubles, symmetric: per-PE loop means, read on PE 0 */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static long realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Rss and Pss of this process in bytes from /proc/self/smaps_rollup, -1 where missing. */
static void mem_usage(long *rss, long *pss)
{
    char line[256];
    long kb;
    *rss = *pss = -1;
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "Rss: %ld kB", &kb) == 1)
            *rss = kb * 1024;
        else if (sscanf(line, "Pss: %ld kB", &kb) == 1)
            *pss = kb * 1024;
    }
    fclose(f);
}

static void fail(const char *what, long i, long j, long got, long want)
{
    if (errors++ < 5)
        fprintf(stderr, "scaling: PE %d: %s, iteration %ld, element %ld: got %ld, want %ld\n", me,
                what, i, j, got, want);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, long n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* The tag PE `from` puts in round r (rounds count from 1). */
static long tag(long r, long from)
{
    return (r << 32) | from;
}

/* One all-to-all put round r: 8 B to every other PE, starting at me + 1, then quiet and
 * barrier_all; returns its time in ns (from after the leading barrier) and checks the data. */
static double put_round(long r)
{
    shmem_barrier_all();
    double t = now_ns();
    long v = tag(r, me);
    for (int k = 1; k < npes; k++)
        shmem_long_put(&recv[me], &v, 1, (me + k) % npes);
    shmem_quiet();
    shmem_barrier_all();
    t = now_ns() - t;
    for (int j = 0; j < npes; j++)
        if (j != me && recv[j] != tag(r, j))
            fail("put round", r, j, recv[j], tag(r, j));
    return t;
}

enum coll { C_REDUCE, C_FCOLLECT, C_ALLTOALL };

/* One call of collective c, iteration i, timed (ns); its result is checked after the clock. */
static double coll_call(enum coll c, long i)
{
    long *ps = psync[sync_k++ & 1];
    double t;
    switch (c) {
    case C_REDUCE:
        red_src = me + i;
        t = now_ns();
        shmem_long_sum_to_all(&red_dst, &red_src, 1, 0, 0, npes, pwrk, ps);
        t = now_ns() - t;
        if (red_dst != (long)npes * (npes - 1) / 2 + (long)npes * i)
            fail("sum_to_all", i, 0, red_dst, (long)npes * (npes - 1) / 2 + (long)npes * i);
        break;
    case C_FCOLLECT:
        fc_src = (long)me * 7 + i;
        t = now_ns();
        shmem_fcollect64(fc_dst, &fc_src, 1, 0, 0, npes, ps);
        t = now_ns() - t;
        for (long j = 0; j < npes; j++)
            if (fc_dst[j] != j * 7 + i)
                fail("fcollect64", i, j, fc_dst[j], j * 7 + i);
        break;
    default:
        for (long j = 0; j < npes; j++)
            a2a_src[j] = ((long)me << 20) + (j << 8) + (i & 255);
        t = now_ns();
        shmem_alltoall64(a2a_dst, a2a_src, 1, 0, 0, npes, ps);
        t = now_ns() - t;
        for (long j = 0; j < npes; j++) {
            long want = (j << 20) + ((long)me << 8) + (i & 255);
            if (a2a_dst[j] != want)
                fail("alltoall64", i, j, a2a_dst[j], want);
        }
        break;
    }
    return t;
}

/* OSU-style loops of collective c (see the header); the median over the loops of the PEs'
 * mean time per call (meaningful on PE 0). */
static double measure_coll(enum coll c, long iters, long reps, double *per_loop)
{
    for (long i = 0; i < 2; i++) { /* warm-up */
        shmem_barrier_all();
        coll_call(c, i);
    }
    for (long r = 0; r < reps; r++) {
        double sum = 0;
        for (long i = 0; i < iters; i++) {
            shmem_barrier_all();
            sum += coll_call(c, r * iters + i);
        }
        shmem_double_p(&means[me], sum / (double)iters, 0);
        shmem_barrier_all();
        if (me == 0) {
            double all = 0;
            for (int j = 0; j < npes; j++)
                all += means[j];
            per_loop[r] = all / npes;
        }
    }
    return median(per_loop, reps);
}

/* shmem_barrier_all back to back: the median over the loops of the time per call on PE 0. */
static double measure_barrier(long iters, long reps, double *per_loop)
{
    shmem_barrier_all();
    for (long r = 0; r < reps; r++) {
        double t = now_ns();
        for (long i = 0; i < iters; i++)
            shmem_barrier_all();
        per_loop[r] = (now_ns() - t) / (double)iters;
    }
    return median(per_loop, reps);
}

static long parse_count(const char *name, const char *s, long min)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < min) {
        fprintf(stderr, "scaling: %s must be an integer >= %ld, got '%s'\n", name, min, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    long iters = 256, reps = 5, rounds = 9, t0 = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "iters") == 0 && i + 1 < argc) {
            iters = parse_count("iters", argv[++i], 1);
        } else if (strcmp(argv[i], "reps") == 0 && i + 1 < argc) {
            reps = parse_count("reps", argv[++i], 1);
        } else if (strcmp(argv[i], "rounds") == 0 && i + 1 < argc) {
            rounds = parse_count("rounds", argv[++i], 1);
        } else if (strcmp(argv[i], "t0") == 0 && i + 1 < argc) {
            t0 = parse_count("t0", argv[++i], 0);
        } else {
            fprintf(stderr, "usage: scaling [iters N] [reps N] [rounds N] [t0 NS]\n");
            return 2;
        }
    }
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < PSYNC_LEN; j++)
            psync[k][j] = SHMEM_SYNC_VALUE;

    double t_init = now_ns();
    shmem_init();
    t_init = now_ns() - t_init;
    long t_up = realtime_ns();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    vals[V_INIT] = (long)t_init;
    vals[V_STARTUP] = t0 >= 0 ? t_up - t0 : -1;
    mem_usage(&vals[V_RSS_INIT], &vals[V_PSS_INIT]);

    if (npes > 8) {
        iters = iters * 8 / npes;
        if (iters < 4)
            iters = 4;
    }
    fc_dst = shmem_calloc((size_t)npes, sizeof(long));
    a2a_src = shmem_calloc((size_t)npes, sizeof(long));
    a2a_dst = shmem_calloc((size_t)npes, sizeof(long));
    recv = shmem_calloc((size_t)npes, sizeof(long));
    means = shmem_calloc((size_t)npes, sizeof(double));
    long nloops = reps > rounds ? reps : rounds;
    double *per_loop = malloc((size_t)nloops * sizeof *per_loop);
    if (fc_dst == NULL || a2a_src == NULL || a2a_dst == NULL || recv == NULL || means == NULL ||
        per_loop == NULL) {
        fprintf(stderr, "scaling: allocation failed\n");
        shmem_global_exit(1);
    }

    /* First contact with every peer, then the steady state. */
    vals[V_PUT_FIRST] = (long)put_round(1);
    for (long r = 0; r < rounds; r++)
        per_loop[r] = put_round(r + 2);
    double put_steady = median(per_loop, rounds);

    double barrier = measure_barrier(iters, reps, per_loop);
    double reduce = measure_coll(C_REDUCE, iters, reps, per_loop);
    double fcollect = measure_coll(C_FCOLLECT, iters, reps, per_loop);
    double alltoall = measure_coll(C_ALLTOALL, iters, reps, per_loop);

    mem_usage(&vals[V_RSS_END], &vals[V_PSS_END]);
    vals[V_ERRORS] = errors;
    shmem_barrier_all();
    shmem_long_max_to_all(vals_max, vals, NVALS, 0, 0, npes, pwrk, psync[0]);
    shmem_barrier_all();
    shmem_long_sum_to_all(vals_sum, vals, NVALS, 0, 0, npes, pwrk, psync[1]);
    shmem_barrier_all();

    if (me == 0) {
        static const char *mem_names[] = {"rss_init", "pss_init", "rss_end", "pss_end"};
        printf("npes,%d\niters,%ld\nreps,%ld\nrounds,%ld\n", npes, iters, reps, rounds);
        printf("init_ns,%ld\ninit_max_ns,%ld\n", vals[V_INIT], vals_max[V_INIT]);
        printf("startup_ns,%ld\nstartup_max_ns,%ld\n", vals[V_STARTUP],
               t0 >= 0 ? vals_max[V_STARTUP] : -1);
        for (int k = 0; k < 4; k++) {
            int v = V_RSS_INIT + k;
            /* -1 where any PE lacked the file. */
            long mean = vals_sum[v] < 0 || vals[v] < 0 ? -1 : vals_sum[v] / npes;
            printf("%s_mean_bytes,%ld\n%s_max_bytes,%ld\n", mem_names[k], mean, mem_names[k],
                   vals_max[v]);
        }
        printf("put_first_ns,%ld\nput_first_max_ns,%ld\nput_steady_ns,%.0f\n", vals[V_PUT_FIRST],
               vals_max[V_PUT_FIRST], put_steady);
        printf("barrier_ns,%.0f\nreduce_ns,%.0f\nfcollect_ns,%.0f\nalltoall_ns,%.0f\n", barrier,
               reduce, fcollect, alltoall);
        printf("checks,%s\n", vals_sum[V_ERRORS] == 0 ? "ok" : "FAILED");
        fflush(stdout);
    }
    long bad = vals_sum[V_ERRORS];
    free(per_loop);
    shmem_barrier_all();
    shmem_free(means);
    shmem_free(recv);
    shmem_free(a2a_dst);
    shmem_free(a2a_src);
    shmem_free(fc_dst);
    shmem_finalize();
    return bad == 0 ? 0 : 1;
}
