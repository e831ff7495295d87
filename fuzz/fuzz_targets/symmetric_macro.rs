//! `#[symmetric]`'s expansion (`shmem_syntax::symmetric`) on arbitrary arguments and items, and
//! `#[element]` and `#[derive(Element)]` on the same items: the input's text when it tokenizes,
//! or streams generated from the macros' vocabulary.
//!
//! Input: a mode byte, then the arguments and the item (text split at the first NUL byte, mode
//! even; generator choices, mode odd). Checks: no panic: every item gets an expansion or a
//! compile error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proc_macro2::TokenStream;
use shmem_fuzz::{Input, tokens};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mode = input.u8();
    let (args, item) = if mode % 2 == 0 {
        let rest = input.rest();
        let (args, item) = match rest.iter().position(|&b| b == 0) {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            None => (&[][..], rest),
        };
        let (Ok(args), Ok(item)) = (std::str::from_utf8(args), std::str::from_utf8(item)) else {
            return;
        };
        (args.to_string(), item.to_string())
    } else {
        let args = if mode & 2 != 0 {
            tokens::generate(&mut input, 4)
        } else {
            String::new()
        };
        (args, tokens::generate(&mut input, 128))
    };
    let (Ok(args), Ok(item)) = (args.parse::<TokenStream>(), item.parse::<TokenStream>()) else {
        return;
    };
    let out = shmem_syntax::symmetric(args.clone(), item.clone());
    std::hint::black_box(out.to_string());
    if mode & 4 != 0 {
        std::hint::black_box(shmem_syntax::element(args, item.clone()).to_string());
        std::hint::black_box(shmem_syntax::derive_element(item).to_string());
    }
});
