/* PE argv[1] calls shmem_finalize at once while the others call shmem_barrier_all: the job must
 * end naming it, not let its finalize's barrier pass for theirs (the others would then hang in
 * their own shmem_finalize). */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    shmem_init();
    int early = argc > 1 ? atoi(argv[1]) : 1;
    if (shmem_my_pe() != early) {
        shmem_barrier_all();
        printf("finalize_early: barrier_all returned on PE %d\n", shmem_my_pe());
    }
    shmem_finalize();
    return 0;
}
