/* shmemx.h: shmem-rs extensions to OpenSHMEM 1.6. */
#ifndef SHMEM_RS_SHMEMX_H
#define SHMEM_RS_SHMEMX_H
#include <shmem.h>
#ifdef __cplusplus
extern "C" {
#endif
/* Seconds since an arbitrary point in the past (monotonic clock). */
double shmemx_wtime(void);
#ifdef __cplusplus
}
#endif
#endif
