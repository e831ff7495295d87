//! The guide to shmem-rs (the mdBook in `docs/`), as doctests.
//!
//! This crate has no API: it exists so that `cargo test` (`cargo test -p shmem-guide --doc`)
//! compiles every ```` ```rust ```` block of every chapter in `docs/src/`, and runs those that
//! run on one PE (a program started without `shmemrun` is a one-PE job). Blocks marked `no_run`
//! (multi-PE programs) are compiled only; `compile_fail` blocks (the forms the `shmem!` DSL
//! rejects) must fail to compile. `build.rs` makes one module per chapter, present only when
//! rustdoc collects doctests (`#[cfg(doctest)]`), so the chapters are not part of any build.
//!
//! Build the book itself with `mdbook build docs`; `scripts/guide.sh` builds it and runs the
//! shell commands of "Getting started".

include!(concat!(env!("OUT_DIR"), "/chapters.rs"));
