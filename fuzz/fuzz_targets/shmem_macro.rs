//! `shmem!`'s parser, checker and expansion (`shmem_syntax::shmem`) on arbitrary token
//! streams: the input's text when it tokenizes, or a stream generated from the macro's own
//! vocabulary.
//!
//! Input: a mode byte, then text (mode even) or generator choices (mode odd). Checks: no panic:
//! whatever the tokens, the macro answers with an expansion or a compile error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proc_macro2::TokenStream;
use shmem_fuzz::{Input, tokens};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mode = input.u8();
    let text = if mode % 2 == 0 {
        let Ok(text) = std::str::from_utf8(input.rest()) else {
            return;
        };
        text.to_string()
    } else {
        tokens::generate(&mut input, 256)
    };
    let Ok(stream) = text.parse::<TokenStream>() else {
        return;
    };
    let out = shmem_syntax::shmem(stream);
    std::hint::black_box(out.to_string());
});
