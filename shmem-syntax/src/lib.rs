//! The syntax of shmem-core's macros: parsing, checking and expansion of `#[symmetric]`,
//! `#[element]`, `#[derive(Element)]` and `shmem!`, as plain functions from tokens to tokens.
//!
//! `shmem-macros` is the thin proc-macro shim over this crate; keeping the work in an ordinary
//! library lets its unit tests run everywhere, Miri included (a proc-macro crate's cannot).
//! The expansions name `::shmem_core::__private` items, so use the macros through `shmem_core`.
//!
//! - [`symmetric`](fn@symmetric): `#[symmetric]` statics.
//! - [`element`](fn@element): `#[element]` and `#[derive(Element)]`.
//! - `dsl`: `shmem!`, in stages: `ast` (parse), `check`, `expand`; `mode` holds every difference
//!   between blocking, `nbi`, `team` and `ctx` statements.
//! - `ctxt`: the error collector they share.
#![deny(missing_docs)]

mod ctxt;
mod dsl;
mod element;
mod symmetric;

use proc_macro2::TokenStream;

/// `#[symmetric]` on `item` with arguments `args`.
pub fn symmetric(args: TokenStream, item: TokenStream) -> TokenStream {
    symmetric::expand(args, item)
}

/// `#[element]` on `item` with arguments `args`.
pub fn element(args: TokenStream, item: TokenStream) -> TokenStream {
    element::attribute(args, item)
}

/// `#[derive(Element)]` on `item`.
pub fn derive_element(item: TokenStream) -> TokenStream {
    element::derive(item)
}

/// `shmem!(input)`.
pub fn shmem(input: TokenStream) -> TokenStream {
    dsl::expand(input)
}
