/*
 * shmem.h: the OpenSHMEM 1.6 C API of shmem-rs (libshmem, built by the shmem-capi crate).
 *
 * Compile and link with the wrappers next to libshmem.so: `target/release/shmemcc` (C) and
 * `target/release/shmemc++` (C++). The typed functions are declared from X-macro tables, one
 * per OpenSHMEM type family (SHMEM_X_RMA, SHMEM_X_AMO_STD, ...); the Rust side generates its
 * functions from the same tables (shmem-capi/src/types.rs; a test checks they agree). C11
 * programs get the type-generic macros (_Generic), C++ programs overloads.
 *
 */
#ifndef SHMEM_RS_SHMEM_H
#define SHMEM_RS_SHMEM_H

#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- constants */

#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 6
#define SHMEM_MAX_NAME_LEN 256
#define SHMEM_VENDOR_STRING "shmem-rs 0.1.0"

#define SHMEM_THREAD_SINGLE 0
#define SHMEM_THREAD_FUNNELED 1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE 3

#define SHMEM_CMP_EQ 0
#define SHMEM_CMP_NE 1
#define SHMEM_CMP_GT 2
#define SHMEM_CMP_LE 3
#define SHMEM_CMP_LT 4
#define SHMEM_CMP_GE 5

#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1

#define SHMEM_CTX_PRIVATE (1L << 0)
#define SHMEM_CTX_SERIALIZED (1L << 1)
#define SHMEM_CTX_NOSTORE (1L << 2)

#define SHMEM_MALLOC_ATOMICS_REMOTE (1L << 0)
#define SHMEM_MALLOC_SIGNAL_REMOTE (1L << 1)

#define SHMEM_TEAM_NUM_CONTEXTS (1L << 0)

/* Session options and configuration fields (1.6). */
#define SHMEM_CTX_SESSION_BATCH (1L << 0)
#define SHMEM_CTX_SESSION_TOTAL_OPS (1L << 0)

/*
 * What this library has, in the words of shmem4py (the Python bindings, PyPI `shmem4py`). Its
 * C glue names the implementations it knows by their headers' own macros; for any other it
 * defines stand-ins for every OpenSHMEM 1.5 feature below that has no PySHMEM_HAVE_<feature>
 * macro, and those clash with this library's real functions. Defined here, they let
 * `pip install shmem4py` with target/release/oshcc as the compiler build as it is (README,
 * "Using it from C and Python"). Nothing else reads them. Each names a feature this header
 * declares: shmem_malloc_with_hints; shmem_team_t; SHMEM_CTX_INVALID; the non-blocking atomics
 * (shmem_amo_nbi); shmem_put_signal[_nbi], shmem_signal_fetch, shmem_signal_wait_until; the
 * team collectives in typed and mem form (broadcast, collect, fcollect, alltoall, alltoalls)
 * and the team reductions (shmem_reduce); the wait_until/test _all/_any/_some and _vector
 * forms (shmem_wait_test_many); shmem_pcontrol.
 */
#define PySHMEM_HAVE_shmem_malloc_with_hints 1
#define PySHMEM_HAVE_shmem_team_t 1
#define PySHMEM_HAVE_SHMEM_CTX_INVALID 1
#define PySHMEM_HAVE_shmem_amo_nbi 1
#define PySHMEM_HAVE_shmem_put_signal 1
#define PySHMEM_HAVE_shmem_signal_fetch 1
#define PySHMEM_HAVE_shmem_signal_wait_until 1
#define PySHMEM_HAVE_shmem_broadcast 1
#define PySHMEM_HAVE_shmem_collect 1
#define PySHMEM_HAVE_shmem_fcollect 1
#define PySHMEM_HAVE_shmem_alltoall 1
#define PySHMEM_HAVE_shmem_alltoalls 1
#define PySHMEM_HAVE_shmem_broadcastmem 1
#define PySHMEM_HAVE_shmem_collectmem 1
#define PySHMEM_HAVE_shmem_fcollectmem 1
#define PySHMEM_HAVE_shmem_alltoallmem 1
#define PySHMEM_HAVE_shmem_alltoallsmem 1
#define PySHMEM_HAVE_shmem_reduce 1
#define PySHMEM_HAVE_shmem_wait_test_many 1
#define PySHMEM_HAVE_shmem_pcontrol 1

/* pSync arrays of the active-set collectives: the library uses words 0..2 of each. */
#define SHMEM_SYNC_VALUE 0L
#define SHMEM_SYNC_SIZE 4
#define SHMEM_BCAST_SYNC_SIZE 4
#define SHMEM_REDUCE_SYNC_SIZE 4
#define SHMEM_BARRIER_SYNC_SIZE 4
#define SHMEM_COLLECT_SYNC_SIZE 4
#define SHMEM_ALLTOALL_SYNC_SIZE 4
#define SHMEM_ALLTOALLS_SYNC_SIZE 4
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 1

/* Deprecated names of OpenSHMEM 1.3. */
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_LE SHMEM_CMP_LE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE

/* ---------------------------------------------------------------- handles */

typedef struct shmem_team_opaque *shmem_team_t;
typedef struct shmem_ctx_opaque *shmem_ctx_t;
typedef struct {
    int num_contexts;
} shmem_team_config_t;
/* The hints of a session (1.6); this library reads none of them. */
typedef struct {
    size_t total_ops;
} shmem_ctx_session_config_t;

#define SHMEM_TEAM_INVALID ((shmem_team_t)0)
#define SHMEM_TEAM_WORLD ((shmem_team_t)1)
#define SHMEM_TEAM_SHARED ((shmem_team_t)2)
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)
#define SHMEM_CTX_DEFAULT ((shmem_ctx_t)1)

/* ---------------------------------------------------------------- type tables */

/* X(TYPENAME, TYPE) */
#define SHMEM_X_RMA(X) \
    X(float, float) X(double, double) X(longdouble, long double) X(char, char) \
    X(schar, signed char) X(short, short) X(int, int) X(long, long) X(longlong, long long) \
    X(uchar, unsigned char) X(ushort, unsigned short) X(uint, unsigned int) \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int8, int8_t) X(int16, int16_t) \
    X(int32, int32_t) X(int64, int64_t) X(uint8, uint8_t) X(uint16, uint16_t) \
    X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t)
/* The RMA types whose elements p and g pass by value: all but long double. */
#define SHMEM_X_RMA_BY_VALUE(X) \
    X(float, float) X(double, double) X(char, char) \
    X(schar, signed char) X(short, short) X(int, int) X(long, long) X(longlong, long long) \
    X(uchar, unsigned char) X(ushort, unsigned short) X(uint, unsigned int) \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int8, int8_t) X(int16, int16_t) \
    X(int32, int32_t) X(int64, int64_t) X(uint8, uint8_t) X(uint16, uint16_t) \
    X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t)
/* X(SIZE): shmem_putSIZE, ... */
#define SHMEM_X_SIZED(X) X(8) X(16) X(32) X(64) X(128) X(mem)
#define SHMEM_X_AMO_EXT(X) \
    X(float, float) X(double, double) X(int, int) X(long, long) X(longlong, long long) \
    X(uint, unsigned int) X(ulong, unsigned long) X(ulonglong, unsigned long long) \
    X(int32, int32_t) X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t) \
    X(size, size_t) X(ptrdiff, ptrdiff_t)
#define SHMEM_X_AMO_STD(X) \
    X(int, int) X(long, long) X(longlong, long long) X(uint, unsigned int) \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int32, int32_t) \
    X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t) \
    X(ptrdiff, ptrdiff_t)
#define SHMEM_X_AMO_BIT(X) \
    X(uint, unsigned int) X(ulong, unsigned long) X(ulonglong, unsigned long long) \
    X(int32, int32_t) X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t)
#define SHMEM_X_AMO_DEPR_EXT(X) \
    X(float, float) X(double, double) X(int, int) X(long, long) X(longlong, long long)
#define SHMEM_X_AMO_DEPR_STD(X) X(int, int) X(long, long) X(longlong, long long)
#define SHMEM_X_P2P(X) \
    X(short, short) X(int, int) X(long, long) X(longlong, long long) \
    X(ushort, unsigned short) X(uint, unsigned int) X(ulong, unsigned long) \
    X(ulonglong, unsigned long long) X(int32, int32_t) X(int64, int64_t) \
    X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t)
#define SHMEM_X_P2P_DEPR(X) X(short, short) X(int, int) X(long, long) X(longlong, long long)
#define SHMEM_X_REDUCE_BIT(X) \
    X(uchar, unsigned char) X(ushort, unsigned short) X(uint, unsigned int) \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int8, int8_t) \
    X(int16, int16_t) X(int32, int32_t) X(int64, int64_t) X(uint8, uint8_t) \
    X(uint16, uint16_t) X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t)
#define SHMEM_X_REDUCE_MINMAX(X) \
    X(char, char) X(schar, signed char) X(short, short) X(int, int) X(long, long) \
    X(longlong, long long) X(ptrdiff, ptrdiff_t) X(uchar, unsigned char) \
    X(ushort, unsigned short) X(uint, unsigned int) X(ulong, unsigned long) \
    X(ulonglong, unsigned long long) X(int8, int8_t) X(int16, int16_t) X(int32, int32_t) \
    X(int64, int64_t) X(uint8, uint8_t) X(uint16, uint16_t) X(uint32, uint32_t) \
    X(uint64, uint64_t) X(size, size_t) X(float, float) X(double, double) \
    X(longdouble, long double)
#define SHMEM_X_REDUCE_SUM(X) \
    X(char, char) X(schar, signed char) X(short, short) X(int, int) X(long, long) \
    X(longlong, long long) X(ptrdiff, ptrdiff_t) X(uchar, unsigned char) \
    X(ushort, unsigned short) X(uint, unsigned int) X(ulong, unsigned long) \
    X(ulonglong, unsigned long long) X(int8, int8_t) X(int16, int16_t) X(int32, int32_t) \
    X(int64, int64_t) X(uint8, uint8_t) X(uint16, uint16_t) X(uint32, uint32_t) \
    X(uint64, uint64_t) X(size, size_t) X(float, float) X(double, double) \
    X(longdouble, long double) X(complexf, float _Complex) X(complexd, double _Complex)
#define SHMEM_X_TO_ALL_BIT(X) X(short, short) X(int, int) X(long, long) X(longlong, long long)
#define SHMEM_X_TO_ALL_MINMAX(X) \
    X(short, short) X(int, int) X(long, long) X(longlong, long long) X(float, float) \
    X(double, double) X(longdouble, long double)
#define SHMEM_X_TO_ALL_SUM(X) \
    X(short, short) X(int, int) X(long, long) X(longlong, long long) X(float, float) \
    X(double, double) X(longdouble, long double) X(complexf, float _Complex) \
    X(complexd, double _Complex)

/* ---------------------------------------------------------------- declarations */

#ifdef __cplusplus
extern "C" {
#endif

/* Setup, exit, query */
void shmem_init(void);
int shmem_init_thread(int requested, int *provided);
void shmem_query_thread(int *provided);
void shmem_query_initialized(int *initialized);
void shmem_finalize(void);
void shmem_global_exit(int status);
int shmem_my_pe(void);
int shmem_n_pes(void);
int shmem_pe_accessible(int pe);
int shmem_addr_accessible(const void *addr, int pe);
void *shmem_ptr(const void *dest, int pe);
void shmem_info_get_version(int *major, int *minor);
void shmem_info_get_name(char *name);
void start_pes(int npes);
/* Cache management (deprecated since OpenSHMEM 1.3): no-ops on cache-coherent machines. */
#if defined(__GNUC__) || defined(__clang__)
#define SHMEM_CACHE_DEPRECATED __attribute__((deprecated("no-op: caches are coherent")))
#else
#define SHMEM_CACHE_DEPRECATED
#endif
SHMEM_CACHE_DEPRECATED void shmem_clear_cache_inv(void);
SHMEM_CACHE_DEPRECATED void shmem_set_cache_inv(void);
SHMEM_CACHE_DEPRECATED void shmem_clear_cache_line_inv(void *dest);
SHMEM_CACHE_DEPRECATED void shmem_set_cache_line_inv(void *dest);
SHMEM_CACHE_DEPRECATED void shmem_udcflush(void);
SHMEM_CACHE_DEPRECATED void shmem_udcflush_line(void *dest);
int _my_pe(void);
int _num_pes(void);

/* Memory */
void *shmem_malloc(size_t size);
void *shmem_calloc(size_t count, size_t size);
void *shmem_align(size_t alignment, size_t size);
void *shmem_realloc(void *ptr, size_t size);
void shmem_free(void *ptr);
void *shmem_malloc_with_hints(size_t size, long hints);
void *shmalloc(size_t size);
void shfree(void *ptr);
void *shrealloc(void *ptr, size_t size);
void *shmemalign(size_t alignment, size_t size);

/* Teams and contexts */
int shmem_team_my_pe(shmem_team_t team);
int shmem_team_n_pes(shmem_team_t team);
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask,
                             shmem_team_t *new_team);
int shmem_team_split_2d(shmem_team_t parent_team, int xrange,
                        const shmem_team_config_t *xaxis_config, long xaxis_mask,
                        shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team);
void shmem_team_destroy(shmem_team_t team);
int shmem_team_sync(shmem_team_t team);
void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe);
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
int shmem_ctx_create(long options, shmem_ctx_t *ctx);
void shmem_ctx_destroy(shmem_ctx_t ctx);
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);
/* Sessions (1.6): hints, accepted and checked; nothing else to do here. */
void shmem_ctx_session_start(shmem_ctx_t ctx, long options,
                             const shmem_ctx_session_config_t *config, long config_mask);
void shmem_ctx_session_stop(shmem_ctx_t ctx);

/* Ordering and synchronization */
void shmem_fence(void);
void shmem_quiet(void);
void shmem_ctx_fence(shmem_ctx_t ctx);
void shmem_ctx_quiet(shmem_ctx_t ctx);
void shmem_pe_quiet(const int *target_pes, size_t npes);
void shmem_ctx_pe_quiet(shmem_ctx_t ctx, const int *target_pes, size_t npes);
void shmem_barrier_all(void);
void shmem_sync_all(void);
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync);

/* Signals and locks */
uint64_t shmem_signal_fetch(const uint64_t *sig_addr);
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);
void shmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_ctx_signal_add(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_signal_set(uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_ctx_signal_set(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_set_lock(long *lock);
void shmem_clear_lock(long *lock);
int shmem_test_lock(long *lock);

/* Profiling: accepted and ignored. */
static inline void shmem_pcontrol(const int level, ...) { (void)level; }

/* RMA and team collectives of the standard RMA types */
#define SHMEM_DECL_RMA(N, T) \
    void shmem_##N##_put(T *dest, const T *source, size_t nelems, int pe); \
    void shmem_ctx_##N##_put(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe); \
    void shmem_##N##_get(T *dest, const T *source, size_t nelems, int pe); \
    void shmem_ctx_##N##_get(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe); \
    void shmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe); \
    void shmem_ctx_##N##_put_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, \
                                 int pe); \
    void shmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe); \
    void shmem_ctx_##N##_get_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, \
                                 int pe); \
    void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, \
                          size_t nelems, int pe); \
    void shmem_ctx_##N##_iput(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, \
                              ptrdiff_t sst, size_t nelems, int pe); \
    void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, \
                          size_t nelems, int pe); \
    void shmem_ctx_##N##_iget(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, \
                              ptrdiff_t sst, size_t nelems, int pe); \
    void shmem_##N##_ibput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, \
                           size_t bsize, size_t nblocks, int pe); \
    void shmem_ctx_##N##_ibput(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, \
                               ptrdiff_t sst, size_t bsize, size_t nblocks, int pe); \
    void shmem_##N##_ibget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, \
                           size_t bsize, size_t nblocks, int pe); \
    void shmem_ctx_##N##_ibget(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, \
                               ptrdiff_t sst, size_t bsize, size_t nblocks, int pe); \
    void shmem_##N##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr, \
                                uint64_t signal, int sig_op, int pe); \
    void shmem_ctx_##N##_put_signal(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, \
                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe); \
    void shmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems, \
                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe); \
    void shmem_ctx_##N##_put_signal_nbi(shmem_ctx_t ctx, T *dest, const T *source, \
                                        size_t nelems, uint64_t *sig_addr, uint64_t signal, \
                                        int sig_op, int pe); \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems, \
                              int PE_root); \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems); \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems); \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems); \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst, \
                              ptrdiff_t sst, size_t nelems);
SHMEM_X_RMA(SHMEM_DECL_RMA)

/* p and g pass an element by value: declared for every RMA type but long double, whose two are
 * inline functions over put and get (below). */
#define SHMEM_DECL_PG(N, T) \
    void shmem_##N##_p(T *dest, T value, int pe); \
    void shmem_ctx_##N##_p(shmem_ctx_t ctx, T *dest, T value, int pe); \
    T shmem_##N##_g(const T *source, int pe); \
    T shmem_ctx_##N##_g(shmem_ctx_t ctx, const T *source, int pe);
SHMEM_X_RMA_BY_VALUE(SHMEM_DECL_PG)

/* Sized RMA: shmem_put8 .. shmem_put128, shmem_putmem, ... */
#define SHMEM_DECL_SIZED(S) \
    void shmem_put##S(void *dest, const void *source, size_t nelems, int pe); \
    void shmem_ctx_put##S(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
                          int pe); \
    void shmem_get##S(void *dest, const void *source, size_t nelems, int pe); \
    void shmem_ctx_get##S(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
                          int pe); \
    void shmem_put##S##_nbi(void *dest, const void *source, size_t nelems, int pe); \
    void shmem_ctx_put##S##_nbi(shmem_ctx_t ctx, void *dest, const void *source, \
                                size_t nelems, int pe); \
    void shmem_get##S##_nbi(void *dest, const void *source, size_t nelems, int pe); \
    void shmem_ctx_get##S##_nbi(shmem_ctx_t ctx, void *dest, const void *source, \
                                size_t nelems, int pe); \
    void shmem_put##S##_signal(void *dest, const void *source, size_t nelems, \
                               uint64_t *sig_addr, uint64_t signal, int sig_op, int pe); \
    void shmem_ctx_put##S##_signal(shmem_ctx_t ctx, void *dest, const void *source, \
                                   size_t nelems, uint64_t *sig_addr, uint64_t signal, \
                                   int sig_op, int pe); \
    void shmem_put##S##_signal_nbi(void *dest, const void *source, size_t nelems, \
                                   uint64_t *sig_addr, uint64_t signal, int sig_op, int pe); \
    void shmem_ctx_put##S##_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source, \
                                       size_t nelems, uint64_t *sig_addr, uint64_t signal, \
                                       int sig_op, int pe);
SHMEM_X_SIZED(SHMEM_DECL_SIZED)

#define SHMEM_DECL_STRIDED(S) \
    void shmem_iput##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                       size_t nelems, int pe); \
    void shmem_ctx_iput##S(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, \
                           ptrdiff_t sst, size_t nelems, int pe); \
    void shmem_iget##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                       size_t nelems, int pe); \
    void shmem_ctx_iget##S(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, \
                           ptrdiff_t sst, size_t nelems, int pe); \
    void shmem_ibput##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                        size_t bsize, size_t nblocks, int pe); \
    void shmem_ctx_ibput##S(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, \
                            ptrdiff_t sst, size_t bsize, size_t nblocks, int pe); \
    void shmem_ibget##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                        size_t bsize, size_t nblocks, int pe); \
    void shmem_ctx_ibget##S(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, \
                            ptrdiff_t sst, size_t bsize, size_t nblocks, int pe);
SHMEM_DECL_STRIDED(8) SHMEM_DECL_STRIDED(16) SHMEM_DECL_STRIDED(32) SHMEM_DECL_STRIDED(64)
SHMEM_DECL_STRIDED(128)

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
                       int PE_root);
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems);

/* Atomics */
#define SHMEM_DECL_AMO_EXT(N, T) \
    T shmem_##N##_atomic_fetch(const T *source, int pe); \
    T shmem_ctx_##N##_atomic_fetch(shmem_ctx_t ctx, const T *source, int pe); \
    void shmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe); \
    void shmem_ctx_##N##_atomic_fetch_nbi(shmem_ctx_t ctx, T *fetch, const T *source, int pe); \
    void shmem_##N##_atomic_set(T *dest, T value, int pe); \
    void shmem_ctx_##N##_atomic_set(shmem_ctx_t ctx, T *dest, T value, int pe); \
    T shmem_##N##_atomic_swap(T *dest, T value, int pe); \
    T shmem_ctx_##N##_atomic_swap(shmem_ctx_t ctx, T *dest, T value, int pe); \
    void shmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe); \
    void shmem_ctx_##N##_atomic_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe);
SHMEM_X_AMO_EXT(SHMEM_DECL_AMO_EXT)

#define SHMEM_DECL_AMO_STD(N, T) \
    T shmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe); \
    T shmem_ctx_##N##_atomic_compare_swap(shmem_ctx_t ctx, T *dest, T cond, T value, int pe); \
    void shmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe); \
    void shmem_ctx_##N##_atomic_compare_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T cond, \
                                                 T value, int pe); \
    T shmem_##N##_atomic_fetch_inc(T *dest, int pe); \
    T shmem_ctx_##N##_atomic_fetch_inc(shmem_ctx_t ctx, T *dest, int pe); \
    void shmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe); \
    void shmem_ctx_##N##_atomic_fetch_inc_nbi(shmem_ctx_t ctx, T *fetch, T *dest, int pe); \
    void shmem_##N##_atomic_inc(T *dest, int pe); \
    void shmem_ctx_##N##_atomic_inc(shmem_ctx_t ctx, T *dest, int pe); \
    T shmem_##N##_atomic_fetch_add(T *dest, T value, int pe); \
    T shmem_ctx_##N##_atomic_fetch_add(shmem_ctx_t ctx, T *dest, T value, int pe); \
    void shmem_##N##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe); \
    void shmem_ctx_##N##_atomic_fetch_add_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, \
                                              int pe); \
    void shmem_##N##_atomic_add(T *dest, T value, int pe); \
    void shmem_ctx_##N##_atomic_add(shmem_ctx_t ctx, T *dest, T value, int pe);
SHMEM_X_AMO_STD(SHMEM_DECL_AMO_STD)

#define SHMEM_DECL_AMO_BIT1(N, T, OP) \
    T shmem_##N##_atomic_fetch_##OP(T *dest, T value, int pe); \
    T shmem_ctx_##N##_atomic_fetch_##OP(shmem_ctx_t ctx, T *dest, T value, int pe); \
    void shmem_##N##_atomic_fetch_##OP##_nbi(T *fetch, T *dest, T value, int pe); \
    void shmem_ctx_##N##_atomic_fetch_##OP##_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, \
                                                 int pe); \
    void shmem_##N##_atomic_##OP(T *dest, T value, int pe); \
    void shmem_ctx_##N##_atomic_##OP(shmem_ctx_t ctx, T *dest, T value, int pe);
#define SHMEM_DECL_AMO_BIT(N, T) \
    SHMEM_DECL_AMO_BIT1(N, T, and) SHMEM_DECL_AMO_BIT1(N, T, or) SHMEM_DECL_AMO_BIT1(N, T, xor)
SHMEM_X_AMO_BIT(SHMEM_DECL_AMO_BIT)

#define SHMEM_DECL_AMO_DEPR_EXT(N, T) \
    T shmem_##N##_fetch(const T *source, int pe); \
    void shmem_##N##_set(T *dest, T value, int pe); \
    T shmem_##N##_swap(T *dest, T value, int pe);
SHMEM_X_AMO_DEPR_EXT(SHMEM_DECL_AMO_DEPR_EXT)
#define SHMEM_DECL_AMO_DEPR_STD(N, T) \
    T shmem_##N##_cswap(T *dest, T cond, T value, int pe); \
    T shmem_##N##_finc(T *dest, int pe); \
    void shmem_##N##_inc(T *dest, int pe); \
    T shmem_##N##_fadd(T *dest, T value, int pe); \
    void shmem_##N##_add(T *dest, T value, int pe);
SHMEM_X_AMO_DEPR_STD(SHMEM_DECL_AMO_DEPR_STD)

/* Point-to-point synchronization */
#define SHMEM_DECL_P2P(N, T) \
    void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value); \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp, \
                                    T cmp_value); \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp, \
                                      T cmp_value); \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices, \
                                       const int *status, int cmp, T cmp_value); \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, \
                                           int cmp, const T *cmp_values); \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status, \
                                             int cmp, const T *cmp_values); \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices, \
                                              const int *status, int cmp, \
                                              const T *cmp_values); \
    int shmem_##N##_test(T *ivar, int cmp, T cmp_value); \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, \
                             T cmp_value); \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp, \
                                T cmp_value); \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status, \
                                 int cmp, T cmp_value); \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp, \
                                    const T *cmp_values); \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp, \
                                       const T *cmp_values); \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices, \
                                        const int *status, int cmp, const T *cmp_values);
SHMEM_X_P2P(SHMEM_DECL_P2P)
#define SHMEM_DECL_P2P_DEPR(N, T) void shmem_##N##_wait(T *ivar, T cmp_value);
SHMEM_X_P2P_DEPR(SHMEM_DECL_P2P_DEPR)
#ifndef __cplusplus
/* Deprecated function forms for long (C++ has the overloads below instead). */
void shmem_wait(long *ivar, long cmp_value);
void shmem_wait_until(long *ivar, int cmp, long cmp_value);
#endif

/* Team reductions */
#define SHMEM_DECL_REDUCE1(N, T, OP) \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);
#define SHMEM_DECL_REDUCE_BIT(N, T) \
    SHMEM_DECL_REDUCE1(N, T, and) SHMEM_DECL_REDUCE1(N, T, or) SHMEM_DECL_REDUCE1(N, T, xor)
#define SHMEM_DECL_REDUCE_MINMAX(N, T) \
    SHMEM_DECL_REDUCE1(N, T, max) SHMEM_DECL_REDUCE1(N, T, min)
#define SHMEM_DECL_REDUCE_SUM(N, T) \
    SHMEM_DECL_REDUCE1(N, T, sum) SHMEM_DECL_REDUCE1(N, T, prod)
SHMEM_X_REDUCE_BIT(SHMEM_DECL_REDUCE_BIT)
SHMEM_X_REDUCE_MINMAX(SHMEM_DECL_REDUCE_MINMAX)
SHMEM_X_REDUCE_SUM(SHMEM_DECL_REDUCE_SUM)

/* Team scans (1.6): inclusive and exclusive prefix sums, over the types of sum_reduce. */
#define SHMEM_DECL_SCAN(N, T) \
    int shmem_##N##_sum_inscan(shmem_team_t team, T *dest, const T *source, size_t nelems); \
    int shmem_##N##_sum_exscan(shmem_team_t team, T *dest, const T *source, size_t nelems);
SHMEM_X_REDUCE_SUM(SHMEM_DECL_SCAN)

/* Deprecated active-set collectives */
#define SHMEM_DECL_ACTIVE(S) \
    void shmem_broadcast##S(void *dest, const void *source, size_t nelems, int PE_root, \
                            int PE_start, int logPE_stride, int PE_size, long *pSync); \
    void shmem_collect##S(void *dest, const void *source, size_t nelems, int PE_start, \
                          int logPE_stride, int PE_size, long *pSync); \
    void shmem_fcollect##S(void *dest, const void *source, size_t nelems, int PE_start, \
                           int logPE_stride, int PE_size, long *pSync); \
    void shmem_alltoall##S(void *dest, const void *source, size_t nelems, int PE_start, \
                           int logPE_stride, int PE_size, long *pSync); \
    void shmem_alltoalls##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                            size_t nelems, int PE_start, int logPE_stride, int PE_size, \
                            long *pSync);
SHMEM_DECL_ACTIVE(32) SHMEM_DECL_ACTIVE(64)
#define SHMEM_DECL_TO_ALL1(N, T, OP) \
    void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start, \
                                   int logPE_stride, int PE_size, T *pWrk, long *pSync);
#define SHMEM_DECL_TO_ALL_BIT(N, T) \
    SHMEM_DECL_TO_ALL1(N, T, and) SHMEM_DECL_TO_ALL1(N, T, or) SHMEM_DECL_TO_ALL1(N, T, xor)
#define SHMEM_DECL_TO_ALL_MINMAX(N, T) \
    SHMEM_DECL_TO_ALL1(N, T, max) SHMEM_DECL_TO_ALL1(N, T, min)
#define SHMEM_DECL_TO_ALL_SUM(N, T) \
    SHMEM_DECL_TO_ALL1(N, T, sum) SHMEM_DECL_TO_ALL1(N, T, prod)
SHMEM_X_TO_ALL_BIT(SHMEM_DECL_TO_ALL_BIT)
SHMEM_X_TO_ALL_MINMAX(SHMEM_DECL_TO_ALL_MINMAX)
SHMEM_X_TO_ALL_SUM(SHMEM_DECL_TO_ALL_SUM)

#ifdef __cplusplus
} /* extern "C" */
#endif

/* long double p and g, over put and get (Rust cannot pass an x87 long double by value). */
static inline void shmem_longdouble_p(long double *dest, long double value, int pe) {
    shmem_longdouble_put(dest, &value, 1, pe);
}
static inline void shmem_ctx_longdouble_p(shmem_ctx_t ctx, long double *dest, long double value,
                                          int pe) {
    shmem_ctx_longdouble_put(ctx, dest, &value, 1, pe);
}
static inline long double shmem_longdouble_g(const long double *source, int pe) {
    long double value;
    shmem_longdouble_get(&value, source, 1, pe);
    return value;
}
static inline long double shmem_ctx_longdouble_g(shmem_ctx_t ctx, const long double *source,
                                                 int pe) {
    long double value;
    shmem_ctx_longdouble_get(ctx, &value, source, 1, pe);
    return value;
}

/* ---------------------------------------------------------------- type-generic interfaces */

/* The types each generic selects on: the tables above without the fixed-size typedefs, which
 * name the same types as the standard ones. X(TYPENAME, TYPE, OP) */
#define SHMEM_XG_RMA(X, OP) \
    X(float, float, OP) X(double, double, OP) X(longdouble, long double, OP) \
    X(char, char, OP) X(schar, signed char, OP) X(short, short, OP) X(int, int, OP) \
    X(long, long, OP) X(longlong, long long, OP) X(uchar, unsigned char, OP) \
    X(ushort, unsigned short, OP) X(uint, unsigned int, OP) X(ulong, unsigned long, OP) \
    X(ulonglong, unsigned long long, OP)
#define SHMEM_XG_AMO_EXT(X, OP) \
    X(float, float, OP) X(double, double, OP) X(int, int, OP) X(long, long, OP) \
    X(longlong, long long, OP) X(uint, unsigned int, OP) X(ulong, unsigned long, OP) \
    X(ulonglong, unsigned long long, OP)
#define SHMEM_XG_AMO_STD(X, OP) \
    X(int, int, OP) X(long, long, OP) X(longlong, long long, OP) X(uint, unsigned int, OP) \
    X(ulong, unsigned long, OP) X(ulonglong, unsigned long long, OP)
#define SHMEM_XG_AMO_BIT(X, OP) \
    X(uint, unsigned int, OP) X(ulong, unsigned long, OP) X(ulonglong, unsigned long long, OP) \
    X(int32, int32_t, OP) X(int64, int64_t, OP)
#define SHMEM_XG_AMO_DEPR_EXT(X, OP) \
    X(float, float, OP) X(double, double, OP) X(int, int, OP) X(long, long, OP) \
    X(longlong, long long, OP)
#define SHMEM_XG_AMO_DEPR_STD(X, OP) X(int, int, OP) X(long, long, OP) X(longlong, long long, OP)
#define SHMEM_XG_P2P(X, OP) \
    X(short, short, OP) X(int, int, OP) X(long, long, OP) X(longlong, long long, OP) \
    X(ushort, unsigned short, OP) X(uint, unsigned int, OP) X(ulong, unsigned long, OP) \
    X(ulonglong, unsigned long long, OP)
#define SHMEM_XG_REDUCE_BIT(X, OP) \
    X(uchar, unsigned char, OP) X(ushort, unsigned short, OP) X(uint, unsigned int, OP) \
    X(ulong, unsigned long, OP) X(ulonglong, unsigned long long, OP) X(int8, int8_t, OP) \
    X(int16, int16_t, OP) X(int32, int32_t, OP) X(int64, int64_t, OP)
#define SHMEM_XG_REDUCE_MINMAX(X, OP) \
    X(char, char, OP) X(schar, signed char, OP) X(short, short, OP) X(int, int, OP) \
    X(long, long, OP) X(longlong, long long, OP) X(uchar, unsigned char, OP) \
    X(ushort, unsigned short, OP) X(uint, unsigned int, OP) X(ulong, unsigned long, OP) \
    X(ulonglong, unsigned long long, OP) X(float, float, OP) X(double, double, OP) \
    X(longdouble, long double, OP)
#define SHMEM_XG_REDUCE_SUM(X, OP) \
    SHMEM_XG_REDUCE_MINMAX(X, OP) X(complexf, float _Complex, OP) \
    X(complexd, double _Complex, OP)

#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L

/* Selected for a type without the operation: calling it with arguments does not compile. */
void shmem_generic_type_not_supported(void);

#define SHMEM_ARG1_(a, ...) a
#define SHMEM_ARG2_(a, b, ...) b
#define SHMEM_G_(N, T, OP) T *: shmem_##N##_##OP,
#define SHMEM_GC_(N, T, OP) T *: shmem_ctx_##N##_##OP,
#define SHMEM_GCONST_(N, T, OP) T *: shmem_##N##_##OP, const T *: shmem_##N##_##OP,
#define SHMEM_GCCONST_(N, T, OP) T *: shmem_ctx_##N##_##OP, const T *: shmem_ctx_##N##_##OP,

/* A generic whose optional first argument is a context: dispatch on argument 1 or 2. */
#define SHMEM_GEN_CTX_(TABLE, OP, G, GC, ...) \
    _Generic(SHMEM_ARG1_(__VA_ARGS__, 0), \
        shmem_ctx_t: _Generic(SHMEM_ARG2_(__VA_ARGS__, 0, 0), \
            TABLE(GC, OP) default: shmem_generic_type_not_supported), \
        default: _Generic(SHMEM_ARG1_(__VA_ARGS__, 0), \
            TABLE(G, OP) default: shmem_generic_type_not_supported))(__VA_ARGS__)
/* A generic without a context: dispatch on argument 1. */
#define SHMEM_GEN1_(TABLE, OP, G, ...) \
    _Generic(SHMEM_ARG1_(__VA_ARGS__, 0), \
        TABLE(G, OP) default: shmem_generic_type_not_supported)(__VA_ARGS__)
/* A team collective: dispatch on argument 2 (dest). */
#define SHMEM_GEN2_(TABLE, OP, ...) \
    _Generic(SHMEM_ARG2_(__VA_ARGS__, 0, 0), \
        TABLE(SHMEM_G_, OP) default: shmem_generic_type_not_supported)(__VA_ARGS__)

#define shmem_put(...) SHMEM_GEN_CTX_(SHMEM_XG_RMA, put, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_get(...) SHMEM_GEN_CTX_(SHMEM_XG_RMA, get, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_put_nbi(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_RMA, put_nbi, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_get_nbi(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_RMA, get_nbi, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_iput(...) SHMEM_GEN_CTX_(SHMEM_XG_RMA, iput, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_iget(...) SHMEM_GEN_CTX_(SHMEM_XG_RMA, iget, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_ibput(...) SHMEM_GEN_CTX_(SHMEM_XG_RMA, ibput, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_ibget(...) SHMEM_GEN_CTX_(SHMEM_XG_RMA, ibget, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_p(...) SHMEM_GEN_CTX_(SHMEM_XG_RMA, p, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_g(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_RMA, g, SHMEM_GCONST_, SHMEM_GCCONST_, __VA_ARGS__)
#define shmem_put_signal(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_RMA, put_signal, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_put_signal_nbi(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_RMA, put_signal_nbi, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)

#define shmem_atomic_fetch(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_EXT, atomic_fetch, SHMEM_GCONST_, SHMEM_GCCONST_, __VA_ARGS__)
#define shmem_atomic_set(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_EXT, atomic_set, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_swap(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_EXT, atomic_swap, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_compare_swap(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_STD, atomic_compare_swap, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_STD, atomic_fetch_inc, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_inc(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_STD, atomic_inc, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_fetch_add(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_STD, atomic_fetch_add, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_add(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_STD, atomic_add, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_fetch_and(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_BIT, atomic_fetch_and, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_and(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_BIT, atomic_and, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_fetch_or(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_BIT, atomic_fetch_or, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_or(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_BIT, atomic_or, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_BIT, atomic_fetch_xor, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_xor(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_BIT, atomic_xor, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)

/* The fetching non-blocking atomics select on the fetch pointer (argument 1, or 2 after a
 * context), which has the element type. */
#define shmem_atomic_fetch_nbi(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_EXT, atomic_fetch_nbi, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_swap_nbi(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_EXT, atomic_swap_nbi, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_STD, atomic_compare_swap_nbi, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_STD, atomic_fetch_inc_nbi, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_STD, atomic_fetch_add_nbi, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_BIT, atomic_fetch_and_nbi, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_BIT, atomic_fetch_or_nbi, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...) \
    SHMEM_GEN_CTX_(SHMEM_XG_AMO_BIT, atomic_fetch_xor_nbi, SHMEM_G_, SHMEM_GC_, __VA_ARGS__)

/* Deprecated generic atomics (no context forms). */
#define shmem_fetch(...) SHMEM_GEN1_(SHMEM_XG_AMO_DEPR_EXT, fetch, SHMEM_GCONST_, __VA_ARGS__)
#define shmem_set(...) SHMEM_GEN1_(SHMEM_XG_AMO_DEPR_EXT, set, SHMEM_G_, __VA_ARGS__)
#define shmem_swap(...) SHMEM_GEN1_(SHMEM_XG_AMO_DEPR_EXT, swap, SHMEM_G_, __VA_ARGS__)
#define shmem_cswap(...) SHMEM_GEN1_(SHMEM_XG_AMO_DEPR_STD, cswap, SHMEM_G_, __VA_ARGS__)
#define shmem_finc(...) SHMEM_GEN1_(SHMEM_XG_AMO_DEPR_STD, finc, SHMEM_G_, __VA_ARGS__)
#define shmem_inc(...) SHMEM_GEN1_(SHMEM_XG_AMO_DEPR_STD, inc, SHMEM_G_, __VA_ARGS__)
#define shmem_fadd(...) SHMEM_GEN1_(SHMEM_XG_AMO_DEPR_STD, fadd, SHMEM_G_, __VA_ARGS__)
#define shmem_add(...) SHMEM_GEN1_(SHMEM_XG_AMO_DEPR_STD, add, SHMEM_G_, __VA_ARGS__)

#define shmem_wait_until(...) SHMEM_GEN1_(SHMEM_XG_P2P, wait_until, SHMEM_G_, __VA_ARGS__)
#define shmem_wait_until_all(...) \
    SHMEM_GEN1_(SHMEM_XG_P2P, wait_until_all, SHMEM_G_, __VA_ARGS__)
#define shmem_wait_until_any(...) \
    SHMEM_GEN1_(SHMEM_XG_P2P, wait_until_any, SHMEM_G_, __VA_ARGS__)
#define shmem_wait_until_some(...) \
    SHMEM_GEN1_(SHMEM_XG_P2P, wait_until_some, SHMEM_G_, __VA_ARGS__)
#define shmem_wait_until_all_vector(...) \
    SHMEM_GEN1_(SHMEM_XG_P2P, wait_until_all_vector, SHMEM_G_, __VA_ARGS__)
#define shmem_wait_until_any_vector(...) \
    SHMEM_GEN1_(SHMEM_XG_P2P, wait_until_any_vector, SHMEM_G_, __VA_ARGS__)
#define shmem_wait_until_some_vector(...) \
    SHMEM_GEN1_(SHMEM_XG_P2P, wait_until_some_vector, SHMEM_G_, __VA_ARGS__)
#define shmem_test(...) SHMEM_GEN1_(SHMEM_XG_P2P, test, SHMEM_G_, __VA_ARGS__)
#define shmem_test_all(...) SHMEM_GEN1_(SHMEM_XG_P2P, test_all, SHMEM_G_, __VA_ARGS__)
#define shmem_test_any(...) SHMEM_GEN1_(SHMEM_XG_P2P, test_any, SHMEM_G_, __VA_ARGS__)
#define shmem_test_some(...) SHMEM_GEN1_(SHMEM_XG_P2P, test_some, SHMEM_G_, __VA_ARGS__)
#define shmem_test_all_vector(...) \
    SHMEM_GEN1_(SHMEM_XG_P2P, test_all_vector, SHMEM_G_, __VA_ARGS__)
#define shmem_test_any_vector(...) \
    SHMEM_GEN1_(SHMEM_XG_P2P, test_any_vector, SHMEM_G_, __VA_ARGS__)
#define shmem_test_some_vector(...) \
    SHMEM_GEN1_(SHMEM_XG_P2P, test_some_vector, SHMEM_G_, __VA_ARGS__)
#define shmem_wait(...) SHMEM_GEN1_(SHMEM_XG_AMO_DEPR_STD, wait, SHMEM_G_, __VA_ARGS__)

#define shmem_broadcast(...) SHMEM_GEN2_(SHMEM_XG_RMA, broadcast, __VA_ARGS__)
#define shmem_collect(...) SHMEM_GEN2_(SHMEM_XG_RMA, collect, __VA_ARGS__)
#define shmem_fcollect(...) SHMEM_GEN2_(SHMEM_XG_RMA, fcollect, __VA_ARGS__)
#define shmem_alltoall(...) SHMEM_GEN2_(SHMEM_XG_RMA, alltoall, __VA_ARGS__)
#define shmem_alltoalls(...) SHMEM_GEN2_(SHMEM_XG_RMA, alltoalls, __VA_ARGS__)
#define shmem_and_reduce(...) SHMEM_GEN2_(SHMEM_XG_REDUCE_BIT, and_reduce, __VA_ARGS__)
#define shmem_or_reduce(...) SHMEM_GEN2_(SHMEM_XG_REDUCE_BIT, or_reduce, __VA_ARGS__)
#define shmem_xor_reduce(...) SHMEM_GEN2_(SHMEM_XG_REDUCE_BIT, xor_reduce, __VA_ARGS__)
#define shmem_max_reduce(...) SHMEM_GEN2_(SHMEM_XG_REDUCE_MINMAX, max_reduce, __VA_ARGS__)
#define shmem_min_reduce(...) SHMEM_GEN2_(SHMEM_XG_REDUCE_MINMAX, min_reduce, __VA_ARGS__)
#define shmem_sum_reduce(...) SHMEM_GEN2_(SHMEM_XG_REDUCE_SUM, sum_reduce, __VA_ARGS__)
#define shmem_prod_reduce(...) SHMEM_GEN2_(SHMEM_XG_REDUCE_SUM, prod_reduce, __VA_ARGS__)
#define shmem_sum_inscan(...) SHMEM_GEN2_(SHMEM_XG_REDUCE_SUM, sum_inscan, __VA_ARGS__)
#define shmem_sum_exscan(...) SHMEM_GEN2_(SHMEM_XG_REDUCE_SUM, sum_exscan, __VA_ARGS__)

/* shmem_signal_add/_set with or without a context first (1.6). */
#define shmem_signal_add(...) \
    _Generic(SHMEM_ARG1_(__VA_ARGS__, 0), shmem_ctx_t: shmem_ctx_signal_add, \
             default: shmem_signal_add)(__VA_ARGS__)
#define shmem_signal_set(...) \
    _Generic(SHMEM_ARG1_(__VA_ARGS__, 0), shmem_ctx_t: shmem_ctx_signal_set, \
             default: shmem_signal_set)(__VA_ARGS__)

/* shmem_sync(team) (1.5) and shmem_sync(PE_start, logPE_stride, PE_size, pSync) (deprecated). */
#define shmem_sync(...) \
    _Generic(SHMEM_ARG1_(__VA_ARGS__, 0), shmem_team_t: shmem_team_sync, \
             default: shmem_sync)(__VA_ARGS__)

#endif /* C11 */

#ifdef __cplusplus
/* C++: overloads for the generic names. */
#define SHMEM_CXX_RMA_(N, T, OP) \
    static inline void shmem_put(T *d, const T *s, size_t n, int pe) { shmem_##N##_put(d, s, n, pe); } \
    static inline void shmem_put(shmem_ctx_t c, T *d, const T *s, size_t n, int pe) { shmem_ctx_##N##_put(c, d, s, n, pe); } \
    static inline void shmem_get(T *d, const T *s, size_t n, int pe) { shmem_##N##_get(d, s, n, pe); } \
    static inline void shmem_get(shmem_ctx_t c, T *d, const T *s, size_t n, int pe) { shmem_ctx_##N##_get(c, d, s, n, pe); } \
    static inline void shmem_put_nbi(T *d, const T *s, size_t n, int pe) { shmem_##N##_put_nbi(d, s, n, pe); } \
    static inline void shmem_put_nbi(shmem_ctx_t c, T *d, const T *s, size_t n, int pe) { shmem_ctx_##N##_put_nbi(c, d, s, n, pe); } \
    static inline void shmem_get_nbi(T *d, const T *s, size_t n, int pe) { shmem_##N##_get_nbi(d, s, n, pe); } \
    static inline void shmem_get_nbi(shmem_ctx_t c, T *d, const T *s, size_t n, int pe) { shmem_ctx_##N##_get_nbi(c, d, s, n, pe); } \
    static inline void shmem_iput(T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) { shmem_##N##_iput(d, s, dst, sst, n, pe); } \
    static inline void shmem_iput(shmem_ctx_t c, T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) { shmem_ctx_##N##_iput(c, d, s, dst, sst, n, pe); } \
    static inline void shmem_iget(T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) { shmem_##N##_iget(d, s, dst, sst, n, pe); } \
    static inline void shmem_iget(shmem_ctx_t c, T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) { shmem_ctx_##N##_iget(c, d, s, dst, sst, n, pe); } \
    static inline void shmem_ibput(T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t b, size_t n, int pe) { shmem_##N##_ibput(d, s, dst, sst, b, n, pe); } \
    static inline void shmem_ibput(shmem_ctx_t c, T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t b, size_t n, int pe) { shmem_ctx_##N##_ibput(c, d, s, dst, sst, b, n, pe); } \
    static inline void shmem_ibget(T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t b, size_t n, int pe) { shmem_##N##_ibget(d, s, dst, sst, b, n, pe); } \
    static inline void shmem_ibget(shmem_ctx_t c, T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t b, size_t n, int pe) { shmem_ctx_##N##_ibget(c, d, s, dst, sst, b, n, pe); } \
    static inline void shmem_p(T *d, T v, int pe) { shmem_##N##_p(d, v, pe); } \
    static inline void shmem_p(shmem_ctx_t c, T *d, T v, int pe) { shmem_ctx_##N##_p(c, d, v, pe); } \
    static inline T shmem_g(const T *s, int pe) { return shmem_##N##_g(s, pe); } \
    static inline T shmem_g(shmem_ctx_t c, const T *s, int pe) { return shmem_ctx_##N##_g(c, s, pe); } \
    static inline void shmem_put_signal(T *d, const T *s, size_t n, uint64_t *sig, uint64_t v, int op, int pe) { shmem_##N##_put_signal(d, s, n, sig, v, op, pe); } \
    static inline void shmem_put_signal(shmem_ctx_t c, T *d, const T *s, size_t n, uint64_t *sig, uint64_t v, int op, int pe) { shmem_ctx_##N##_put_signal(c, d, s, n, sig, v, op, pe); } \
    static inline void shmem_put_signal_nbi(T *d, const T *s, size_t n, uint64_t *sig, uint64_t v, int op, int pe) { shmem_##N##_put_signal_nbi(d, s, n, sig, v, op, pe); } \
    static inline void shmem_put_signal_nbi(shmem_ctx_t c, T *d, const T *s, size_t n, uint64_t *sig, uint64_t v, int op, int pe) { shmem_ctx_##N##_put_signal_nbi(c, d, s, n, sig, v, op, pe); } \
    static inline int shmem_broadcast(shmem_team_t t, T *d, const T *s, size_t n, int root) { return shmem_##N##_broadcast(t, d, s, n, root); } \
    static inline int shmem_collect(shmem_team_t t, T *d, const T *s, size_t n) { return shmem_##N##_collect(t, d, s, n); } \
    static inline int shmem_fcollect(shmem_team_t t, T *d, const T *s, size_t n) { return shmem_##N##_fcollect(t, d, s, n); } \
    static inline int shmem_alltoall(shmem_team_t t, T *d, const T *s, size_t n) { return shmem_##N##_alltoall(t, d, s, n); } \
    static inline int shmem_alltoalls(shmem_team_t t, T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n) { return shmem_##N##_alltoalls(t, d, s, dst, sst, n); }
SHMEM_XG_RMA(SHMEM_CXX_RMA_, _)

#define SHMEM_CXX_AMO_EXT_(N, T, OP) \
    static inline T shmem_atomic_fetch(const T *s, int pe) { return shmem_##N##_atomic_fetch(s, pe); } \
    static inline T shmem_atomic_fetch(shmem_ctx_t c, const T *s, int pe) { return shmem_ctx_##N##_atomic_fetch(c, s, pe); } \
    static inline void shmem_atomic_fetch_nbi(T *f, const T *s, int pe) { shmem_##N##_atomic_fetch_nbi(f, s, pe); } \
    static inline void shmem_atomic_fetch_nbi(shmem_ctx_t c, T *f, const T *s, int pe) { shmem_ctx_##N##_atomic_fetch_nbi(c, f, s, pe); } \
    static inline void shmem_atomic_set(T *d, T v, int pe) { shmem_##N##_atomic_set(d, v, pe); } \
    static inline void shmem_atomic_set(shmem_ctx_t c, T *d, T v, int pe) { shmem_ctx_##N##_atomic_set(c, d, v, pe); } \
    static inline T shmem_atomic_swap(T *d, T v, int pe) { return shmem_##N##_atomic_swap(d, v, pe); } \
    static inline T shmem_atomic_swap(shmem_ctx_t c, T *d, T v, int pe) { return shmem_ctx_##N##_atomic_swap(c, d, v, pe); } \
    static inline void shmem_atomic_swap_nbi(T *f, T *d, T v, int pe) { shmem_##N##_atomic_swap_nbi(f, d, v, pe); } \
    static inline void shmem_atomic_swap_nbi(shmem_ctx_t c, T *f, T *d, T v, int pe) { shmem_ctx_##N##_atomic_swap_nbi(c, f, d, v, pe); }
SHMEM_XG_AMO_EXT(SHMEM_CXX_AMO_EXT_, _)

#define SHMEM_CXX_AMO_STD_(N, T, OP) \
    static inline T shmem_atomic_compare_swap(T *d, T cond, T v, int pe) { return shmem_##N##_atomic_compare_swap(d, cond, v, pe); } \
    static inline T shmem_atomic_compare_swap(shmem_ctx_t c, T *d, T cond, T v, int pe) { return shmem_ctx_##N##_atomic_compare_swap(c, d, cond, v, pe); } \
    static inline void shmem_atomic_compare_swap_nbi(T *f, T *d, T cond, T v, int pe) { shmem_##N##_atomic_compare_swap_nbi(f, d, cond, v, pe); } \
    static inline void shmem_atomic_compare_swap_nbi(shmem_ctx_t c, T *f, T *d, T cond, T v, int pe) { shmem_ctx_##N##_atomic_compare_swap_nbi(c, f, d, cond, v, pe); } \
    static inline T shmem_atomic_fetch_inc(T *d, int pe) { return shmem_##N##_atomic_fetch_inc(d, pe); } \
    static inline T shmem_atomic_fetch_inc(shmem_ctx_t c, T *d, int pe) { return shmem_ctx_##N##_atomic_fetch_inc(c, d, pe); } \
    static inline void shmem_atomic_fetch_inc_nbi(T *f, T *d, int pe) { shmem_##N##_atomic_fetch_inc_nbi(f, d, pe); } \
    static inline void shmem_atomic_fetch_inc_nbi(shmem_ctx_t c, T *f, T *d, int pe) { shmem_ctx_##N##_atomic_fetch_inc_nbi(c, f, d, pe); } \
    static inline void shmem_atomic_inc(T *d, int pe) { shmem_##N##_atomic_inc(d, pe); } \
    static inline void shmem_atomic_inc(shmem_ctx_t c, T *d, int pe) { shmem_ctx_##N##_atomic_inc(c, d, pe); } \
    static inline T shmem_atomic_fetch_add(T *d, T v, int pe) { return shmem_##N##_atomic_fetch_add(d, v, pe); } \
    static inline T shmem_atomic_fetch_add(shmem_ctx_t c, T *d, T v, int pe) { return shmem_ctx_##N##_atomic_fetch_add(c, d, v, pe); } \
    static inline void shmem_atomic_fetch_add_nbi(T *f, T *d, T v, int pe) { shmem_##N##_atomic_fetch_add_nbi(f, d, v, pe); } \
    static inline void shmem_atomic_fetch_add_nbi(shmem_ctx_t c, T *f, T *d, T v, int pe) { shmem_ctx_##N##_atomic_fetch_add_nbi(c, f, d, v, pe); } \
    static inline void shmem_atomic_add(T *d, T v, int pe) { shmem_##N##_atomic_add(d, v, pe); } \
    static inline void shmem_atomic_add(shmem_ctx_t c, T *d, T v, int pe) { shmem_ctx_##N##_atomic_add(c, d, v, pe); }
SHMEM_XG_AMO_STD(SHMEM_CXX_AMO_STD_, _)

#define SHMEM_CXX_AMO_BIT1_(N, T, OP) \
    static inline T shmem_atomic_fetch_##OP(T *d, T v, int pe) { return shmem_##N##_atomic_fetch_##OP(d, v, pe); } \
    static inline T shmem_atomic_fetch_##OP(shmem_ctx_t c, T *d, T v, int pe) { return shmem_ctx_##N##_atomic_fetch_##OP(c, d, v, pe); } \
    static inline void shmem_atomic_fetch_##OP##_nbi(T *f, T *d, T v, int pe) { shmem_##N##_atomic_fetch_##OP##_nbi(f, d, v, pe); } \
    static inline void shmem_atomic_fetch_##OP##_nbi(shmem_ctx_t c, T *f, T *d, T v, int pe) { shmem_ctx_##N##_atomic_fetch_##OP##_nbi(c, f, d, v, pe); } \
    static inline void shmem_atomic_##OP(T *d, T v, int pe) { shmem_##N##_atomic_##OP(d, v, pe); } \
    static inline void shmem_atomic_##OP(shmem_ctx_t c, T *d, T v, int pe) { shmem_ctx_##N##_atomic_##OP(c, d, v, pe); }
SHMEM_XG_AMO_BIT(SHMEM_CXX_AMO_BIT1_, and)
SHMEM_XG_AMO_BIT(SHMEM_CXX_AMO_BIT1_, or)
SHMEM_XG_AMO_BIT(SHMEM_CXX_AMO_BIT1_, xor)

#define SHMEM_CXX_P2P_(N, T, OP) \
    static inline void shmem_wait_until(T *v, int cmp, T x) { shmem_##N##_wait_until(v, cmp, x); } \
    static inline void shmem_wait_until_all(T *v, size_t n, const int *st, int cmp, T x) { shmem_##N##_wait_until_all(v, n, st, cmp, x); } \
    static inline size_t shmem_wait_until_any(T *v, size_t n, const int *st, int cmp, T x) { return shmem_##N##_wait_until_any(v, n, st, cmp, x); } \
    static inline size_t shmem_wait_until_some(T *v, size_t n, size_t *ix, const int *st, int cmp, T x) { return shmem_##N##_wait_until_some(v, n, ix, st, cmp, x); } \
    static inline void shmem_wait_until_all_vector(T *v, size_t n, const int *st, int cmp, const T *x) { shmem_##N##_wait_until_all_vector(v, n, st, cmp, x); } \
    static inline size_t shmem_wait_until_any_vector(T *v, size_t n, const int *st, int cmp, const T *x) { return shmem_##N##_wait_until_any_vector(v, n, st, cmp, x); } \
    static inline size_t shmem_wait_until_some_vector(T *v, size_t n, size_t *ix, const int *st, int cmp, const T *x) { return shmem_##N##_wait_until_some_vector(v, n, ix, st, cmp, x); } \
    static inline int shmem_test(T *v, int cmp, T x) { return shmem_##N##_test(v, cmp, x); } \
    static inline int shmem_test_all(T *v, size_t n, const int *st, int cmp, T x) { return shmem_##N##_test_all(v, n, st, cmp, x); } \
    static inline size_t shmem_test_any(T *v, size_t n, const int *st, int cmp, T x) { return shmem_##N##_test_any(v, n, st, cmp, x); } \
    static inline size_t shmem_test_some(T *v, size_t n, size_t *ix, const int *st, int cmp, T x) { return shmem_##N##_test_some(v, n, ix, st, cmp, x); } \
    static inline int shmem_test_all_vector(T *v, size_t n, const int *st, int cmp, const T *x) { return shmem_##N##_test_all_vector(v, n, st, cmp, x); } \
    static inline size_t shmem_test_any_vector(T *v, size_t n, const int *st, int cmp, const T *x) { return shmem_##N##_test_any_vector(v, n, st, cmp, x); } \
    static inline size_t shmem_test_some_vector(T *v, size_t n, size_t *ix, const int *st, int cmp, const T *x) { return shmem_##N##_test_some_vector(v, n, ix, st, cmp, x); }
SHMEM_XG_P2P(SHMEM_CXX_P2P_, _)
static inline void shmem_wait(long *ivar, long cmp_value) { shmem_long_wait(ivar, cmp_value); }
static inline int shmem_sync(shmem_team_t team) { return shmem_team_sync(team); }

#define SHMEM_CXX_REDUCE_(N, T, OP) \
    static inline int shmem_##OP##_reduce(shmem_team_t t, T *d, const T *s, size_t n) { return shmem_##N##_##OP##_reduce(t, d, s, n); }
SHMEM_XG_REDUCE_BIT(SHMEM_CXX_REDUCE_, and)
SHMEM_XG_REDUCE_BIT(SHMEM_CXX_REDUCE_, or)
SHMEM_XG_REDUCE_BIT(SHMEM_CXX_REDUCE_, xor)
SHMEM_XG_REDUCE_MINMAX(SHMEM_CXX_REDUCE_, max)
SHMEM_XG_REDUCE_MINMAX(SHMEM_CXX_REDUCE_, min)
SHMEM_XG_REDUCE_SUM(SHMEM_CXX_REDUCE_, sum)
SHMEM_XG_REDUCE_SUM(SHMEM_CXX_REDUCE_, prod)
#define SHMEM_CXX_SCAN_(N, T, OP) \
    static inline int shmem_sum_##OP##scan(shmem_team_t t, T *d, const T *s, size_t n) { return shmem_##N##_sum_##OP##scan(t, d, s, n); }
SHMEM_XG_REDUCE_SUM(SHMEM_CXX_SCAN_, in)
SHMEM_XG_REDUCE_SUM(SHMEM_CXX_SCAN_, ex)
static inline void shmem_signal_add(shmem_ctx_t c, uint64_t *sig, uint64_t v, int pe) { shmem_ctx_signal_add(c, sig, v, pe); }
static inline void shmem_signal_set(shmem_ctx_t c, uint64_t *sig, uint64_t v, int pe) { shmem_ctx_signal_set(c, sig, v, pe); }
#endif /* __cplusplus */

#endif /* SHMEM_RS_SHMEM_H */
