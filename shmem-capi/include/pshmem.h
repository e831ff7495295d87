/* pshmem.h: the OpenSHMEM profiling interface header. shmem-rs declares no separate pshmem_
 * names; this header only brings in shmem.h. */
#ifndef SHMEM_RS_PSHMEM_H
#define SHMEM_RS_PSHMEM_H
#include <shmem.h>
#endif
