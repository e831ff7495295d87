/*
 * Latency of RMA, atomic, point-to-point and collective operations on Open MPI's OpenSHMEM
 * (oshmem), and the bandwidth of a 256 KiB put against a local memcpy. The C twin of
 * benches/src/bin/latency.rs: same cases, same statistics, same output format
 * (case,size,variant,median_ns,min_ns), except that oshmem 4.1.4 implements OpenSHMEM 1.4,
 * which has no put_signal (that row is missing) and no teams (the collectives are the 1.4
 * active-set ones: shmem_broadcast64 with root 0, shmem_long_sum_to_all, shmem_fcollect64,
 * shmem_alltoall64, over all PEs; in 1.4 the root's own dest is not written by a broadcast).
 *
 * PE 0 measures the one-sided cases against PE 1 while the others wait in shmem_barrier_all.
 * "heap" is shmem_malloc'd memory, "static" a file-scope static array in the symmetric data
 * segment, "local" private memory of PE 0. The sized put + quiet and get rows come in three
 * variants (as in the Rust twin): "aligned" (8 B to 1 MiB; page-aligned private buffer and
 * page-aligned shmem_align'd target), "vec" (8 B, 64 B, 4 KiB, 64 KiB, 256 KiB, 1 MiB, 4 MiB;
 * the private buffer is a malloc'd one wherever malloc puts it, the target the start of a
 * page-aligned symmetric array; shmem_putmem/shmem_getmem) and "vec odd" (the same sizes, the
 * private buffer at byte 1 of a malloc'd one a byte longer, the target at byte 3). The vec
 * buffers are all malloc'd first thing, before shmem_init, in the Rust twin's order, and kept:
 * glibc then serves those of 128 KiB and more by mmap, 16 bytes past a page start, which puts a
 * get's (destination - source) mod 4096 at 16 (vec) or 14 (vec odd; inside the range, about 1
 * to 15, where glibc's rep movsb memcpy stalls on AMD EPYC; copy_sweep.c maps it). PE 0 prints
 * on stderr where each vec buffer lies modulo 4096 and the distance of its copy.
 *
 * Point-to-point cases: after a warm-up, each case
 * runs REPS timed loops of ITERS iterations (scaled as in the Rust twin); the report gives the
 * median and minimum over the loops of the mean time per operation, in ns.
 *
 * Collectives (OSU style, exactly as in the Rust twin): barrier_all is a back-to-back loop
 * timed on PE 0. For broadcast, sum_reduce, fcollect and alltoall, every iteration is an
 * untimed shmem_barrier_all followed by the collective call, and only that call is timed, on
 * every PE; each PE's figure for a loop is its mean over the loop, and the loop's figure is the
 * average of those means over all PEs (gathered to PE 0 with shmem_double_p into a symmetric
 * array, then shmem_barrier_all). The row is the median over the loops of that average, and
 * the minimum. Collective loops have a quarter of ITERS iterations.
 *
 * Bandwidth ("bandwidth"): on PE 0, a 256 KiB shmem_putmem to PE 1 followed by shmem_quiet,
 * against a memcpy of 256 KiB between two private buffers, in alternating timed loops.
 *
 * Build: oshcc -O2 -o latency latency.c
 * Run:   oshrun --allow-run-as-root --oversubscribe -np 2 ./latency [csv] [iters N] [reps N]
 *            [collectives | bandwidth | pipeline | small]
 * "collectives" runs only the collectives (at any number of PEs, 2 or more), "bandwidth" only
 * the put/memcpy case, "pipeline" only the rows of a point-to-point pipeline (any number of
 * PEs, 2 or more; see run_pipeline): put 8 B + fence, the flag pipeline per row, and fcollect of
 * 64 KiB per PE; "small" only the one-sided 8-byte cases on the heap and the static
 * (8 B put + quiet and get, p, g, strided, atomics: the Rust twin's --small, benches/c-twin.sh).
 *
 * oshmem 4.1.4 segfaults inside shmem_finalize here, so all results are printed and flushed
 * before it is called; expect a non-zero exit status.
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LEN 32
#define BIG ((1 << 20) / 8)
/* Alignment of private buffers and of the big symmetric array, as in the Rust twin. */
#define PAGE 4096
#define STRIDED 16
#define STRIDE 2
#define WINDOW 64
#define TARGET 1
#define CHECK 0x5eedcafeL /* written at the end to check that puts land on the target */
#define MAX_ROWS 128
#define BW_BYTES (256 << 10) /* bytes per copy in the bandwidth case */
/* Sizes of the user-shaped ("vec", "vec odd") put/get rows, and the largest. */
static const long vec_sizes[] = {8, 64, 4096, 64 << 10, 256 << 10, 1 << 20, 4 << 20};
#define NVEC ((int)(sizeof vec_sizes / sizeof vec_sizes[0]))
#define VEC_MAX (4 << 20)
#define LOCAL_ODD 1 /* "vec odd": offset into the private buffer */
#define HEAP_ODD 3  /* "vec odd": offset into the symmetric array */
#define PIPE_ROWS 256 /* "pipeline": rows (flag and value slots) per sweep down the chain */
#define FC_BIG (64 << 10) /* "pipeline": bytes per PE of the large fcollect */

static long glob[LEN];
static long pp[LEN];
static long pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long psync[2][SHMEM_REDUCE_SYNC_SIZE > SHMEM_COLLECT_SYNC_SIZE ? SHMEM_REDUCE_SYNC_SIZE
                                                                       : SHMEM_COLLECT_SYNC_SIZE];
static long one_src, one_dst;

/* Keeps the compiler from dropping or hoisting values it can otherwise prove unused. */
#define BLACK_BOX(x) __asm__ volatile("" : : "g"(x) : "memory")

struct stats {
    double median;
    double min;
};

struct row {
    const char *name;
    long size;
    const char *variant;
    struct stats s;
};

static struct row rows[MAX_ROWS];
static int nrows;

enum op {
    OP_PUT, OP_GET, OP_P, OP_G, OP_IPUT, OP_IGET, OP_FADD, OP_ADD, OP_CSWAP, OP_SWAP,
    OP_PINGPONG, OP_NBI, OP_BARRIER, OP_BCAST, OP_SUM, OP_FCOLLECT, OP_ALLTOALL, OP_BW_PUT,
    OP_MEMCPY, OP_VPUT, OP_VGET, OP_PUT_FENCE, OP_PIPE, OP_FCOLLECT_BIG
};

/* Shared state of the loop. */
static int me, npes;
static long *dest;    /* target object of the one-sided cases */
static long *src_buf; /* BIG longs 0, 1, 2, ... */
static long *dst_buf; /* BIG longs */
static long nelems;   /* elements per put/get */
static long seq;      /* ping-pong counter */
static long *all_src, *all_dst; /* npes longs each, symmetric */
static double *means;           /* npes doubles, symmetric: per-PE loop means, read on PE 0 */
static char *local_dst;         /* BW_BYTES, private */
static unsigned char *vlocal;   /* vec cases: private buffer */
static unsigned char *vremote;  /* vec cases: target address in the symmetric array */
static size_t vbytes;           /* vec cases: bytes per operation */
static long *pipe_flag;         /* PIPE_ROWS + 1 longs, symmetric: row flags, then the corner */
static long *pipe_val;          /* PIPE_ROWS longs, symmetric: the values handed down the chain */
static long sweep;              /* pipeline: sweeps done (every PE counts alike) */
static long pipe_bad;           /* pipeline: values that arrived wrong */
static long *fc_src, *fc_dst;   /* FC_BIG bytes and npes * FC_BIG, symmetric */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One operation of kind `op`, iteration i. */
static inline void one_op(enum op op, long i)
{
    switch (op) {
    case OP_PUT:
        BLACK_BOX(src_buf);
        shmem_long_put(dest, src_buf, (size_t)nelems, TARGET);
        shmem_quiet();
        break;
    case OP_GET:
        shmem_long_get(dst_buf, dest, (size_t)nelems, TARGET);
        BLACK_BOX(dst_buf);
        break;
    case OP_P:
        BLACK_BOX(i);
        shmem_long_p(dest, i, TARGET);
        shmem_quiet();
        break;
    case OP_G: {
        long v = shmem_long_g(dest, TARGET);
        BLACK_BOX(v);
        break;
    }
    case OP_IPUT:
        BLACK_BOX(src_buf);
        shmem_long_iput(dest, src_buf, STRIDE, 1, STRIDED, TARGET);
        shmem_quiet();
        break;
    case OP_IGET:
        shmem_long_iget(dst_buf, dest, 1, STRIDE, STRIDED, TARGET);
        BLACK_BOX(dst_buf);
        break;
    case OP_FADD: {
        long v = shmem_long_atomic_fetch_add(&dest[2], 1, TARGET);
        BLACK_BOX(v);
        break;
    }
    case OP_ADD:
        shmem_long_atomic_add(&dest[2], 1, TARGET);
        shmem_quiet();
        break;
    case OP_CSWAP: {
        long v = shmem_long_atomic_compare_swap(&dest[2], i, i + 1, TARGET);
        BLACK_BOX(v);
        break;
    }
    case OP_SWAP: {
        long v = shmem_long_atomic_swap(&dest[2], i, TARGET);
        BLACK_BOX(v);
        break;
    }
    case OP_PINGPONG:
        seq++;
        if (me == 0) {
            shmem_long_put(&pp[0], &seq, 1, 1);
            shmem_long_wait_until(&pp[0], SHMEM_CMP_GE, seq);
        } else {
            shmem_long_wait_until(&pp[0], SHMEM_CMP_GE, seq);
            shmem_long_put(&pp[0], &seq, 1, 0);
        }
        break;
    case OP_NBI:
        for (int k = 0; k < WINDOW; k++)
            shmem_long_put_nbi(&pp[2], src_buf, 1, TARGET);
        shmem_quiet();
        break;
    case OP_BARRIER:
        shmem_barrier_all();
        break;
    case OP_BCAST:
        one_src = i;
        shmem_broadcast64(&one_dst, &one_src, 1, 0, 0, 0, npes, psync[i & 1]);
        break;
    case OP_SUM:
        one_src = i;
        shmem_long_sum_to_all(&one_dst, &one_src, 1, 0, 0, npes, pwrk, psync[i & 1]);
        break;
    case OP_FCOLLECT:
        one_src = i;
        shmem_fcollect64(all_dst, &one_src, 1, 0, 0, npes, psync[i & 1]);
        break;
    case OP_ALLTOALL:
        shmem_alltoall64(all_dst, all_src, 1, 0, 0, npes, psync[i & 1]);
        break;
    case OP_BW_PUT:
        BLACK_BOX(src_buf);
        shmem_putmem(dest, src_buf, BW_BYTES, TARGET);
        shmem_quiet();
        break;
    case OP_MEMCPY:
        /* The compiler barriers make it assume the source may have changed and the copy
         * is read, so it can neither drop nor hoist the copy. */
        BLACK_BOX(src_buf);
        memcpy(local_dst, src_buf, BW_BYTES);
        BLACK_BOX(local_dst);
        break;
    case OP_VPUT:
        BLACK_BOX(vlocal);
        shmem_putmem(vremote, vlocal, vbytes, TARGET);
        shmem_quiet();
        break;
    case OP_VGET:
        shmem_getmem(vlocal, vremote, vbytes, TARGET);
        BLACK_BOX(vlocal);
        break;
    case OP_PUT_FENCE:
        BLACK_BOX(i);
        shmem_long_put(dest, &i, 1, TARGET);
        shmem_fence();
        break;
    case OP_PIPE:
        sweep++;
        for (long r = 0; r < PIPE_ROWS; r++) {
            if (me > 0) {
                shmem_long_wait_until(&pipe_flag[r], SHMEM_CMP_GE, sweep);
                pipe_bad += pipe_val[r] != sweep * PIPE_ROWS + r;
            }
            if (me < npes - 1) {
                long v = sweep * PIPE_ROWS + r;
                shmem_long_put(&pipe_val[r], &v, 1, me + 1);
                shmem_fence();
                shmem_long_put(&pipe_flag[r], &sweep, 1, me + 1);
            }
        }
        /* The last PE tells PE 0 that the sweep went through, before PE 0 starts the next. */
        if (me == npes - 1)
            shmem_long_put(&pipe_flag[PIPE_ROWS], &sweep, 1, 0);
        else if (me == 0)
            shmem_long_wait_until(&pipe_flag[PIPE_ROWS], SHMEM_CMP_GE, sweep);
        break;
    case OP_FCOLLECT_BIG:
        fc_src[0] = i;
        shmem_fcollect64(fc_dst, fc_src, FC_BIG / 8, 0, 0, npes, psync[i & 1]);
        break;
    }
}

/* One loop of n operations of kind `op`. Each kind has a loop of its own, into which one_op
 * (inline, with `op` a constant there) folds to the one operation: the loop costs what the Rust
 * twin's does (its closures are inlined into their loops), not a dispatch on `op` per
 * iteration. */
static void loop(enum op op, long n)
{
#define LOOP_OF(K)                       \
    case K:                              \
        for (long i = 0; i < n; i++)     \
            one_op(K, i);                \
        break;
    switch (op) {
        LOOP_OF(OP_PUT) LOOP_OF(OP_GET) LOOP_OF(OP_P) LOOP_OF(OP_G) LOOP_OF(OP_IPUT)
        LOOP_OF(OP_IGET) LOOP_OF(OP_FADD) LOOP_OF(OP_ADD) LOOP_OF(OP_CSWAP) LOOP_OF(OP_SWAP)
        LOOP_OF(OP_PINGPONG) LOOP_OF(OP_NBI) LOOP_OF(OP_BARRIER) LOOP_OF(OP_BCAST)
        LOOP_OF(OP_SUM) LOOP_OF(OP_FCOLLECT) LOOP_OF(OP_ALLTOALL) LOOP_OF(OP_BW_PUT)
        LOOP_OF(OP_MEMCPY) LOOP_OF(OP_VPUT) LOOP_OF(OP_VGET) LOOP_OF(OP_PUT_FENCE)
        LOOP_OF(OP_PIPE) LOOP_OF(OP_FCOLLECT_BIG)
    }
#undef LOOP_OF
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static long warm_up(long iters)
{
    long warm = iters / 4, lo = iters < 1000 ? iters : 1000;
    return warm > lo ? warm : lo;
}

/* Median and minimum of v[0..n) (sorts v). */
static struct stats stats_of(double *v, long n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    struct stats s;
    s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
    s.min = v[0];
    return s;
}

static double time_loop(enum op op, long iters)
{
    double t0 = now_ns();
    loop(op, iters);
    return (now_ns() - t0) / (double)iters;
}

static struct stats measure(enum op op, long iters, long reps, double *per_op)
{
    loop(op, warm_up(iters));
    for (long r = 0; r < reps; r++)
        per_op[r] = time_loop(op, iters);
    return stats_of(per_op, reps);
}

/* Like measure for two operations, their timed loops alternating (the order swapped every
 * repetition); per_op_b holds reps more doubles. */
static void measure_pair(enum op a, enum op b, long iters, long reps, double *per_op_a,
                         double *per_op_b, struct stats *sa, struct stats *sb)
{
    for (long i = 0, n = warm_up(iters); i < n; i++) {
        one_op(a, i);
        one_op(b, i);
    }
    for (long r = 0; r < reps; r++) {
        if (r % 2 == 0) {
            per_op_a[r] = time_loop(a, iters);
            per_op_b[r] = time_loop(b, iters);
        } else {
            per_op_b[r] = time_loop(b, iters);
            per_op_a[r] = time_loop(a, iters);
        }
    }
    *sa = stats_of(per_op_a, reps);
    *sb = stats_of(per_op_b, reps);
}

/* OSU-style timing of a collective, called by every PE: each iteration is an untimed
 * shmem_barrier_all, then the timed call. Each PE's mean over a loop goes into means[me] on
 * PE 0; the loop's figure is the average over the PEs. Returns the median and minimum over reps
 * loops of that average (meaningful on PE 0 only; the other PEs get their own means). */
static struct stats measure_collective(enum op op, long iters, long reps, double *per_op)
{
    for (long i = 0, n = warm_up(iters); i < n; i++) {
        shmem_barrier_all();
        one_op(op, i);
    }
    for (long r = 0; r < reps; r++) {
        double spent = 0;
        for (long i = 0; i < iters; i++) {
            shmem_barrier_all();
            double t0 = now_ns();
            one_op(op, i);
            spent += now_ns() - t0;
        }
        double mean = spent / (double)iters;
        shmem_double_p(&means[me], mean, 0);
        /* Completes the put and lets PE 0 read every PE's mean. No PE writes means again
         * before PE 0 has passed the first barrier of the next loop. */
        shmem_barrier_all();
        if (me == 0) {
            double sum = 0;
            for (int pe = 0; pe < npes; pe++)
                sum += means[pe];
            per_op[r] = sum / npes;
        } else {
            per_op[r] = mean;
        }
    }
    return stats_of(per_op, reps);
}

static void add_row(const char *name, long size, const char *variant, struct stats s, double k)
{
    if (nrows < MAX_ROWS) {
        s.median /= k;
        s.min /= k;
        rows[nrows++] = (struct row){name, size, variant, s};
    }
}

/* Loop size for `bytes` per operation: iters up to 4 KiB, then scaled down (at least 10). */
static long iters_for(long iters, long bytes)
{
    long n = iters * 4096 / (bytes > 4096 ? bytes : 4096);
    return n < 10 ? 10 : n;
}

static void run_cases(long *obj, const char *variant, int with_put_get, long iters, long reps,
                      double *per_op)
{
    dest = obj;
    nelems = 1;
    if (with_put_get) {
        add_row("put + quiet", 8, variant, measure(OP_PUT, iters, reps, per_op), 1);
        add_row("get", 8, variant, measure(OP_GET, iters, reps, per_op), 1);
    }
    add_row("p + quiet", 8, variant, measure(OP_P, iters, reps, per_op), 1);
    add_row("g", 8, variant, measure(OP_G, iters, reps, per_op), 1);
    add_row("iput 16x stride 2 + quiet", 8 * STRIDED, variant, measure(OP_IPUT, iters, reps, per_op), 1);
    add_row("iget 16x stride 2", 8 * STRIDED, variant, measure(OP_IGET, iters, reps, per_op), 1);
    add_row("fetch_add", 8, variant, measure(OP_FADD, iters, reps, per_op), 1);
    add_row("add + quiet", 8, variant, measure(OP_ADD, iters, reps, per_op), 1);
    add_row("compare_swap", 8, variant, measure(OP_CSWAP, iters, reps, per_op), 1);
    add_row("swap", 8, variant, measure(OP_SWAP, iters, reps, per_op), 1);
}

/* A private buffer of len bytes from malloc, written once (so that its pages are real). */
static unsigned char *user_buf(long len)
{
    unsigned char *p = malloc((size_t)len);
    if (p == NULL) {
        fprintf(stderr, "latency: malloc of %ld bytes failed\n", len);
        exit(1);
    }
    for (long i = 0; i < len; i++)
        p[i] = (unsigned char)i;
    return p;
}

/* Reports on stderr where a vec case's buffers lie modulo 4096 and the distance
 * (destination - source) mod 4096 of its copy, when PE TARGET's array is mapped here. */
static void report_distance(const char *variant, int get, long bytes, const void *local,
                            const void *remote)
{
    if (remote == NULL)
        return;
    unsigned long l = (unsigned long)local, r = (unsigned long)remote;
    unsigned long d = get ? l - r : r - l;
    fprintf(stderr, "latency: %s %ld B %s: local buffer at %lu mod 4096, remote at %lu mod 4096, "
                    "(dst - src) mod 4096 = %lu\n",
            get ? "get" : "put", bytes, variant, l % 4096, r % 4096, d % 4096);
}

/* The user-shaped put + quiet and get rows ("vec", "vec odd"), from buffers vbuf[variant][0 put,
 * 1 get][size] allocated by alloc_user_bufs, against the page-aligned symmetric array user. */
static const char *const vec_variants[2] = {"vec", "vec odd"};
static const long vec_loff[2] = {0, LOCAL_ODD}, vec_hoff[2] = {0, HEAP_ODD};
static unsigned char *vbuf[2][2][NVEC];

static void alloc_user_bufs(void)
{
    for (int v = 0; v < 2; v++)
        for (int op = 0; op < 2; op++)
            for (int k = 0; k < NVEC; k++)
                vbuf[v][op][k] = user_buf(vec_loff[v] + vec_sizes[k]);
}

static long iters_for(long iters, long bytes);

static void run_user_shaped(unsigned char *user, long iters, long reps, double *per_op)
{
    unsigned char *mapped = shmem_ptr(user, TARGET); /* for the distance report only */
    for (int v = 0; v < 2; v++) {
        vremote = user + vec_hoff[v];
        for (int op = 0; op < 2; op++) {
            for (int k = 0; k < NVEC; k++) {
                vlocal = vbuf[v][op][k] + vec_loff[v];
                vbytes = (size_t)vec_sizes[k];
                report_distance(vec_variants[v], op, vec_sizes[k], vlocal,
                                mapped == NULL ? NULL : mapped + vec_hoff[v]);
                add_row(op ? "get" : "put + quiet", vec_sizes[k], vec_variants[v],
                        measure(op ? OP_VGET : OP_VPUT, iters_for(iters, vec_sizes[k]), reps, per_op), 1);
            }
        }
    }
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
    fprintf(stderr, "usage: oshrun -np 2 latency [csv] [iters N] [reps N] [collectives | bandwidth | pipeline | small]\n");
    exit(2);
}

/* Collectives over all PEs (every PE calls this; PE 0 keeps the rows). */
static void run_collectives(long iters, long reps, double *per_op)
{
    long quarter = iters / 4 < 10 ? 10 : iters / 4;
    shmem_barrier_all();
    add_row("barrier_all", 0, "heap", measure(OP_BARRIER, quarter, reps, per_op), 1);
    /* 1.4 collectives work on symmetric static data here ("heap" kept as the variant name to
     * line up with the Rust rows, whose buffers are on the heap). */
    add_row("broadcast", 8, "heap", measure_collective(OP_BCAST, quarter, reps, per_op), 1);
    add_row("sum_reduce 1 long", 8, "heap", measure_collective(OP_SUM, quarter, reps, per_op), 1);
    add_row("fcollect", 8, "heap", measure_collective(OP_FCOLLECT, quarter, reps, per_op), 1);
    add_row("alltoall", 8, "heap", measure_collective(OP_ALLTOALL, quarter, reps, per_op), 1);
    shmem_barrier_all();
}

/* The "pipeline" rows (every PE calls this; PE 0 keeps the rows): put 8 B + fence from PE 0 to
 * PE 1; the flag pipeline down the chain of all PEs (per row: each PE waits for row r's flag
 * from its left neighbour, checks the value, then puts a value, fences and puts the flag to its
 * right neighbour; the last PE puts a corner flag back to PE 0 after each sweep of PIPE_ROWS
 * rows); fcollect of FC_BIG bytes per PE, checked on every PE. */
static void run_pipeline(long *heap, long iters, long reps, double *per_op)
{
    if (me == 0) {
        dest = heap;
        add_row("put 8 B + fence", 8, "heap", measure(OP_PUT_FENCE, iters, reps, per_op), 1);
        shmem_quiet();
    }
    shmem_barrier_all();
    long sweeps = iters / PIPE_ROWS < 10 ? 10 : iters / PIPE_ROWS;
    add_row("flag pipeline (per row)", 8, "heap", measure(OP_PIPE, sweeps, reps, per_op), PIPE_ROWS);
    shmem_barrier_all();
    long quarter = iters_for(iters, FC_BIG) / 4 < 10 ? 10 : iters_for(iters, FC_BIG) / 4;
    add_row("fcollect", FC_BIG, "heap", measure_collective(OP_FCOLLECT_BIG, quarter, reps, per_op), 1);
    shmem_barrier_all();
    long bad = pipe_bad;
    for (int pe = 0; pe < npes; pe++)
        for (long k = 1; k < FC_BIG / 8; k++)
            bad += fc_dst[(long)pe * (FC_BIG / 8) + k] != ((long)pe << 32) + k;
    if (bad) {
        fprintf(stderr, "latency: check failed: PE %d saw %ld wrong values in the pipeline and fcollect\n",
                me, bad);
        shmem_global_exit(1);
    }
}

int main(int argc, char **argv)
{
    static const long sizes[] = {8, 64, 512, 4096, 32 << 10, 256 << 10, 1 << 20};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    int csv = 0, collectives_only = 0, bandwidth_only = 0, pipeline_only = 0, small_only = 0;
    long iters = 20000, reps = 15;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "csv") == 0 || strcmp(argv[i], "--csv") == 0) {
            csv = 1;
        } else if (strcmp(argv[i], "collectives") == 0 || strcmp(argv[i], "--collectives") == 0) {
            collectives_only = 1;
        } else if (strcmp(argv[i], "small") == 0 || strcmp(argv[i], "--small") == 0) {
            small_only = 1;
        } else if (strcmp(argv[i], "bandwidth") == 0 || strcmp(argv[i], "--bandwidth") == 0) {
            bandwidth_only = 1;
        } else if (strcmp(argv[i], "pipeline") == 0 || strcmp(argv[i], "--pipeline") == 0) {
            pipeline_only = 1;
        } else if ((strcmp(argv[i], "iters") == 0 || strcmp(argv[i], "--iters") == 0) && i + 1 < argc) {
            iters = parse_count("iters", argv[++i]);
        } else if ((strcmp(argv[i], "reps") == 0 || strcmp(argv[i], "--reps") == 0) && i + 1 < argc) {
            reps = parse_count("reps", argv[++i]);
        } else {
            usage();
        }
    }
    if (collectives_only + bandwidth_only + pipeline_only + small_only > 1)
        usage();
    int full = !collectives_only && !bandwidth_only && !pipeline_only && !small_only;

    for (int k = 0; k < 2; k++)
        for (size_t j = 0; j < sizeof psync[k] / sizeof psync[k][0]; j++)
            psync[k][j] = SHMEM_SYNC_VALUE;
    /* First, before the library can allocate and free large blocks (see run_user_shaped). */
    alloc_user_bufs();
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    if (npes < 2) {
        fprintf(stderr, "latency: needs at least 2 PEs, got %d; run it with oshrun -np 2\n", npes);
        shmem_global_exit(1);
    }
    long *heap = shmem_calloc(LEN, sizeof(long));
    /* Page-aligned, as the Rust twin's (see PAGE there). */
    long *big = shmem_align(PAGE, BIG * sizeof(long));
    unsigned char *user = shmem_align(PAGE, VEC_MAX + HEAP_ODD);
    all_src = shmem_calloc((size_t)npes, sizeof(long));
    all_dst = shmem_calloc((size_t)npes, sizeof(long));
    means = shmem_calloc((size_t)npes, sizeof(double));
    pipe_flag = shmem_calloc(PIPE_ROWS + 1, sizeof(long));
    pipe_val = shmem_calloc(PIPE_ROWS, sizeof(long));
    fc_src = shmem_calloc(FC_BIG / 8, sizeof(long));
    fc_dst = shmem_calloc((size_t)npes * (FC_BIG / 8), sizeof(long));
    src_buf = aligned_alloc(PAGE, BIG * sizeof(long));
    dst_buf = aligned_alloc(PAGE, BIG * sizeof(long));
    local_dst = aligned_alloc(PAGE, BW_BYTES);
    double *per_op = malloc(2 * (size_t)reps * sizeof *per_op);
    if (heap == NULL || big == NULL || user == NULL || all_src == NULL || all_dst == NULL || means == NULL ||
        pipe_flag == NULL || pipe_val == NULL || fc_src == NULL || fc_dst == NULL || src_buf == NULL || dst_buf == NULL || local_dst == NULL || per_op == NULL) {
        fprintf(stderr, "latency: allocation failed\n");
        shmem_global_exit(1);
    }
    memset(big, 0, BIG * sizeof(long));
    memset(user, 0, VEC_MAX + HEAP_ODD);
    memset(dst_buf, 0, BIG * sizeof(long));
    memset(local_dst, 0, BW_BYTES);
    for (long j = 0; j < BIG; j++)
        src_buf[j] = j;
    for (long k = 0; k < FC_BIG / 8; k++)
        fc_src[k] = ((long)me << 32) + k;
    shmem_barrier_all();

    if (bandwidth_only) {
        if (me == 0) {
            struct stats put, copy;
            dest = big;
            measure_pair(OP_BW_PUT, OP_MEMCPY, iters_for(iters, BW_BYTES), reps, per_op,
                         per_op + reps, &put, &copy);
            add_row("put 256 KiB + quiet", BW_BYTES, "heap", put, 1);
            add_row("memcpy 256 KiB", BW_BYTES, "local", copy, 1);
        }
        shmem_barrier_all();
    } else if (small_only) {
        if (me == 0) {
            dest = big;
            nelems = 1;
            add_row("put + quiet", 8, "aligned", measure(OP_PUT, iters, reps, per_op), 1);
            add_row("get", 8, "aligned", measure(OP_GET, iters, reps, per_op), 1);
            run_cases(heap, "heap", 0, iters, reps, per_op);
            run_cases(glob, "static", 1, iters, reps, per_op);
        }
        /* The other PEs wait here (progressing the library) for the one-sided cases. */
        shmem_barrier_all();
    } else if (full) {
        if (me == 0) {
            dest = big;
            for (int k = 0; k < nsizes; k++) {
                nelems = sizes[k] / 8;
                add_row("put + quiet", sizes[k], "aligned",
                        measure(OP_PUT, iters_for(iters, sizes[k]), reps, per_op), 1);
            }
            for (int k = 0; k < nsizes; k++) {
                nelems = sizes[k] / 8;
                add_row("get", sizes[k], "aligned",
                        measure(OP_GET, iters_for(iters, sizes[k]), reps, per_op), 1);
            }
            run_user_shaped(user, iters, reps, per_op);
            run_cases(heap, "heap", 0, iters, reps, per_op);
            run_cases(glob, "static", 1, iters, reps, per_op);
        }
        /* The other PEs wait here (progressing the library) for the one-sided cases. */
        shmem_barrier_all();

        long half = iters / 2 < 10 ? 10 : iters / 2;
        if (me < 2) {
            seq = 0;
            add_row("ping-pong put + wait_until", 8, "heap", measure(OP_PINGPONG, half, reps, per_op), 2);
        }
        shmem_barrier_all();
        if (me == 0) {
            long n = iters / 8 < 10 ? 10 : iters / 8;
            add_row("put_nbi 8 B stream (ns/op)", 8, "heap", measure(OP_NBI, n, reps, per_op), WINDOW);
        }
        shmem_barrier_all();
    }
    if (pipeline_only)
        run_pipeline(heap, iters, reps, per_op);
    else if (!bandwidth_only && !small_only)
        run_collectives(iters, reps, per_op);

    if (me == 0) {
        if (csv)
            printf("case,size,variant,median_ns,min_ns\n");
        else
            printf("%-28s %8s %-7s %10s %10s\n", "case", "size", "variant", "median_ns", "min_ns");
        for (int r = 0; r < nrows; r++) {
            if (csv)
                printf("%s,%ld,%s,%.1f,%.1f\n", rows[r].name, rows[r].size, rows[r].variant,
                       rows[r].s.median, rows[r].s.min);
            else
                printf("%-28s %8ld %-7s %10.1f %10.1f\n", rows[r].name, rows[r].size,
                       rows[r].variant, rows[r].s.median, rows[r].s.min);
        }
        if (!csv && bandwidth_only)
            for (int r = 0; r < nrows; r++)
                printf("%s: %.2f GB/s\n", rows[r].name, (double)rows[r].size / rows[r].s.median);
        fflush(stdout); /* before shmem_finalize, which crashes */
    }
    shmem_barrier_all();

    /* Sanity check that the puts really reach PE 1's copies. */
    if (me == 0) {
        shmem_long_p(&heap[1], CHECK, TARGET);
        shmem_long_p(&glob[1], CHECK, TARGET);
    }
    shmem_barrier_all();
    int status = 0;
    if (me == TARGET && (heap[1] != CHECK || glob[1] != CHECK || (full && big[BIG - 1] != BIG - 1))) {
        fprintf(stderr, "latency: check failed: PE %d holds %#lx (heap) and %#lx (static), "
                        "big[last] = %ld; expected %#lx\n",
                TARGET, heap[1], glob[1], big[BIG - 1], CHECK);
        status = 1;
    }
    fflush(stdout);
    fflush(stderr);
    free(per_op);
    shmem_free(heap);
    shmem_finalize(); /* segfaults in oshmem 4.1.4 here; results are already out */
    return status;
}
