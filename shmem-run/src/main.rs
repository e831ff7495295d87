//! `shmemrun`: the launcher (see the `shmem_run` library, which is all of it).

fn main() {
    shmem_run::main()
}
