//! Examples for `shmem-core`; the programs are in `src/bin`. Run them with the launcher, e.g.
//! `target/release/shmemrun -n 4 target/release/heat`.
