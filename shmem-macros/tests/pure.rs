//! The macro crate's own modules compiled into an ordinary test crate, so that their unit tests
//! (all pure: token scanning, parsing, checks, expansion to tokens, the error collector) also run
//! where a proc-macro crate's cannot, under Miri:
//! `cargo +nightly miri test -p shmem-macros --test pure`.
//! Under `cargo test` they run here as well as in the library's unit tests (a fraction of a second).

#![allow(dead_code)]

#[path = "../src/ctxt.rs"]
mod ctxt;
#[path = "../src/dsl/mod.rs"]
mod dsl;
#[path = "../src/element.rs"]
mod element;
#[path = "../src/symmetric.rs"]
mod symmetric;
