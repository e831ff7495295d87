/* Every PE makes the library warn ROUNDS times at once (shmem_align with an alignment that is no
 * power of two); each warning must reach stderr as one whole line. */
#include <shmem.h>
#include <stdio.h>

#define ROUNDS 200

int main(void) {
    shmem_init();
    int bad = 0;
    for (int i = 0; i < ROUNDS; i++)
        bad += shmem_align(3, 8) != NULL;
    if (bad)
        fprintf(stderr, "warn_lines: PE %d: %d non-NULL blocks\n", shmem_my_pe(), bad);
    shmem_finalize();
    return bad != 0;
}
