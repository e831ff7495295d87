/*
 * shmem.h defines shmem4py's PySHMEM_HAVE_<feature> macros (see there). This program, linked
 * with libshmem, checks that each is defined and that the library declares and exports the
 * calls shmem4py then uses instead of its own stand-ins: a few of each family, at its edges
 * (long double, 128-bit sizes, contexts, the _vector forms). Running it prints one line.
 */
#include <shmem.h>
#include <stdio.h>

#define NEED(F)                                                                                \
    do {                                                                                       \
        if (!PySHMEM_HAVE_##F) {                                                               \
            fprintf(stderr, "PySHMEM_HAVE_" #F " is 0\n");                                     \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

typedef void (*any_fn)(void);
#define FN(f) ((any_fn)(f))

/* Referenced through a volatile table so that the linker must resolve every one. */
static any_fn volatile calls[] = {
    /* shmem_malloc_with_hints */
    FN(shmem_malloc_with_hints),
    /* shmem_team_t */
    FN(shmem_team_split_strided), FN(shmem_team_my_pe), FN(shmem_team_destroy),
    /* shmem_amo_nbi */
    FN(shmem_int_atomic_compare_swap_nbi), FN(shmem_ctx_ptrdiff_atomic_fetch_add_nbi),
    FN(shmem_size_atomic_fetch_inc_nbi), FN(shmem_double_atomic_swap_nbi),
    FN(shmem_ctx_float_atomic_fetch_nbi), FN(shmem_ulonglong_atomic_fetch_and_nbi),
    FN(shmem_ctx_uint64_atomic_fetch_xor_nbi), FN(shmem_int32_atomic_fetch_or_nbi),
    /* shmem_put_signal */
    FN(shmem_longdouble_put_signal), FN(shmem_ctx_ptrdiff_put_signal_nbi),
    FN(shmem_put128_signal), FN(shmem_ctx_putmem_signal_nbi),
    /* shmem_signal_fetch, shmem_signal_wait_until */
    FN(shmem_signal_fetch), FN(shmem_signal_wait_until),
    /* the team collectives, typed and mem */
    FN(shmem_int_broadcast), FN(shmem_long_collect), FN(shmem_double_fcollect),
    FN(shmem_int64_alltoall), FN(shmem_float_alltoalls), FN(shmem_broadcastmem),
    FN(shmem_collectmem), FN(shmem_fcollectmem), FN(shmem_alltoallmem), FN(shmem_alltoallsmem),
    /* shmem_reduce */
    FN(shmem_int_sum_reduce), FN(shmem_ulong_and_reduce), FN(shmem_double_max_reduce),
    FN(shmem_complexd_prod_reduce), FN(shmem_longdouble_min_reduce),
    /* shmem_wait_test_many */
    FN(shmem_int_wait_until_all), FN(shmem_long_wait_until_any), FN(shmem_size_wait_until_some),
    FN(shmem_int_wait_until_all_vector), FN(shmem_uint64_wait_until_any_vector),
    FN(shmem_ptrdiff_wait_until_some_vector), FN(shmem_int_test_all), FN(shmem_long_test_any),
    FN(shmem_ulong_test_some), FN(shmem_int32_test_all_vector), FN(shmem_ushort_test_any_vector),
    FN(shmem_uint_test_some_vector),
};

int main(void) {
    NEED(shmem_malloc_with_hints);
    NEED(shmem_team_t);
    NEED(SHMEM_CTX_INVALID);
    NEED(shmem_amo_nbi);
    NEED(shmem_put_signal);
    NEED(shmem_signal_fetch);
    NEED(shmem_signal_wait_until);
    NEED(shmem_broadcast);
    NEED(shmem_collect);
    NEED(shmem_fcollect);
    NEED(shmem_alltoall);
    NEED(shmem_alltoalls);
    NEED(shmem_broadcastmem);
    NEED(shmem_collectmem);
    NEED(shmem_fcollectmem);
    NEED(shmem_alltoallmem);
    NEED(shmem_alltoallsmem);
    NEED(shmem_reduce);
    NEED(shmem_wait_test_many);
    NEED(shmem_pcontrol);
    /* The constants shmem4py's stand-ins would otherwise define. */
    long hints = SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE;
    int ops = SHMEM_SIGNAL_SET + SHMEM_SIGNAL_ADD;
    shmem_ctx_t invalid = SHMEM_CTX_INVALID;
    shmem_team_t teams[] = {SHMEM_TEAM_WORLD, SHMEM_TEAM_SHARED, SHMEM_TEAM_INVALID};
    shmem_pcontrol(1);
    size_t n = 0;
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        n += calls[i] != 0;
    printf("%zu calls, hints %ld, signal ops %d, ctx invalid %d, %zu teams\n", n, hints, ops,
           invalid == SHMEM_CTX_INVALID, sizeof teams / sizeof teams[0]);
    return n == sizeof calls / sizeof calls[0] ? 0 : 1;
}
