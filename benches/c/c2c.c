/* The machine's state, for benchmarks that compare runs made at different moments: the round
 * trip of one cache line between two threads pinned to the first two CPUs this process may use
 * (one writes a counter, the other answers on a second line, and so on), in ns, the median of 7
 * batches of 20000 round trips. On a virtual machine it can change while the host moves the
 * virtual CPUs: on the project's 2-vCPU EPYC it reads about 120 ns most of the time and about
 * 550 ns for stretches of seconds, and everything that moves cache lines between PEs slows with
 * it. Prints one number; prints nothing and exits 0 where fewer than two CPUs are usable.
 *
 * Build: cc -O2 -pthread -o c2c c2c.c; run: ./c2c */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BATCH 20000
#define BATCHES 7

static _Alignas(64) atomic_long ping;
static _Alignas(64) atomic_long pong;
static int cpus[2];

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *answer(void *arg)
{
    (void)arg;
    pin(cpus[1]);
    for (long i = 1; i <= (long)BATCH * BATCHES; i++) {
        while (atomic_load_explicit(&ping, memory_order_acquire) != i)
            ;
        atomic_store_explicit(&pong, i, memory_order_release);
    }
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) return 0;
    int found = 0;
    for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
        if (CPU_ISSET(c, &mine)) cpus[found++] = c;
    if (found < 2) return 0;
    pin(cpus[0]);
    pthread_t t;
    if (pthread_create(&t, NULL, answer, NULL) != 0) return 1;
    double ns[BATCHES];
    long i = 0;
    for (int b = 0; b < BATCHES; b++) {
        struct timespec s, e;
        clock_gettime(CLOCK_MONOTONIC, &s);
        for (int k = 0; k < BATCH; k++) {
            i++;
            atomic_store_explicit(&ping, i, memory_order_release);
            while (atomic_load_explicit(&pong, memory_order_acquire) != i)
                ;
        }
        clock_gettime(CLOCK_MONOTONIC, &e);
        ns[b] = ((e.tv_sec - s.tv_sec) * 1e9 + (e.tv_nsec - s.tv_nsec)) / BATCH;
    }
    pthread_join(t, NULL);
    qsort(ns, BATCHES, sizeof ns[0], cmp);
    printf("%.1f\n", ns[BATCHES / 2]);
    return 0;
}
