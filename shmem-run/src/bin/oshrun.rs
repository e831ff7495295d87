//! `oshrun`: `shmemrun` under the name OpenSHMEM users type; the same program, whose messages
//! name the launcher as it was called.

fn main() {
    shmem_run::main()
}
