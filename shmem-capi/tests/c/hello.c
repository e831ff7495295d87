/* Every PE reports its number; PE numbers and the job size must be consistent. */
#include <shmem.h>
#include <stdio.h>

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (me < 0 || me >= n) {
        fprintf(stderr, "bad PE %d of %d\n", me, n);
        return 1;
    }
    printf("hello from PE %d of %d\n", me, n);
    shmem_finalize();
    return 0;
}
