/* OpenSHMEM 1.6: shmem_query_initialized, initialization and finalization more than once
 * (each initialization is matched by a finalize, the last of which ends the library), and the
 * session hints shmem_ctx_session_start/_stop. */
#include <shmem.h>
#include <stdio.h>

static int value;

int main(void) {
    int bad = 0, init = -1, provided = -1;
    shmem_query_initialized(&init);
    if (init != 0) {
        fprintf(stderr, "initialized before shmem_init: %d\n", init);
        bad = 1;
    }
    shmem_init();
    shmem_init_thread(SHMEM_THREAD_SINGLE, &provided);  /* a second initialization */
    shmem_init();                                      /* a third */
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_query_initialized(&init);
    if (init == 0) bad = 1;
    int major = 0, minor = 0;
    shmem_info_get_version(&major, &minor);
    if (major != SHMEM_MAJOR_VERSION || minor != SHMEM_MINOR_VERSION || minor != 6) {
        fprintf(stderr, "PE %d: version %d.%d\n", me, major, minor);
        bad = 1;
    }

    /* A session on the default context and on a created one: hints, no change in results. */
    shmem_ctx_t ctx;
    if (shmem_ctx_create(0, &ctx) != 0) return 1;
    shmem_ctx_session_config_t config = {.total_ops = 4};
    shmem_ctx_session_start(ctx, SHMEM_CTX_SESSION_BATCH, &config, SHMEM_CTX_SESSION_TOTAL_OPS);
    shmem_ctx_session_start(SHMEM_CTX_DEFAULT, SHMEM_CTX_SESSION_BATCH, NULL, 0);
    shmem_ctx_session_start(SHMEM_CTX_INVALID, SHMEM_CTX_SESSION_BATCH, NULL, 0);
    for (int i = 0; i < 4; i++) shmem_ctx_int_atomic_add(ctx, &value, 1, (me + 1) % n);
    shmem_ctx_session_stop(ctx);
    shmem_ctx_session_stop(ctx);  /* already stopped: no effect */
    shmem_ctx_session_stop(SHMEM_CTX_DEFAULT);
    shmem_ctx_session_stop(SHMEM_CTX_INVALID);
    shmem_ctx_quiet(ctx);
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    if (value != 4) {
        fprintf(stderr, "PE %d: value = %d, expected 4\n", me, value);
        bad = 1;
    }

    /* team_ptr (1.6) on this PE's own data is the data's own address. */
    if (shmem_team_ptr(SHMEM_TEAM_WORLD, &value, shmem_team_my_pe(SHMEM_TEAM_WORLD)) !=
        (void *)&value) {
        fprintf(stderr, "PE %d: shmem_team_ptr of my own value is not its address\n", me);
        bad = 1;
    }
    if (shmem_team_ptr(SHMEM_TEAM_INVALID, &value, 0) != NULL) bad = 1;

    shmem_finalize();  /* matches the third initialization: still initialized */
    shmem_query_initialized(&init);
    if (init == 0) {
        fprintf(stderr, "PE %d: not initialized after the first of three finalizes\n", me);
        bad = 1;
    }
    shmem_barrier_all();  /* the library still works */
    shmem_finalize();
    shmem_query_initialized(&init);
    if (init == 0) bad = 1;
    shmem_finalize();  /* the last: the library ends */
    shmem_query_initialized(&init);
    if (init != 0) {
        fprintf(stderr, "PE %d: still initialized after the last finalize\n", me);
        bad = 1;
    }
    shmem_finalize();  /* one too many: nothing happens */
    return bad;
}
