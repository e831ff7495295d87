//! A generator of token streams for the macro targets: the fuzzer's bytes pick words from the
//! macros' own vocabulary (the names, operators and literals of `shmem!` statements and
//! `#[symmetric]` items) and nest them in balanced groups, so that most inputs tokenize and
//! reach the parsers' deeper rules (arbitrary UTF-8 rarely does).

use crate::Input;

/// Words of `shmem!` and `#[symmetric]` input.
const WORDS: &[&str] = &[
    "A",
    "B",
    "HALO",
    "SIG",
    "hits",
    "pe",
    "me",
    "i",
    "n",
    "x",
    "buf",
    "back",
    "world",
    "nbi",
    "team",
    "ctx",
    "s",
    "t",
    "c",
    "static",
    "mut",
    "const",
    "pub",
    "pub(crate)",
    "thread_local!",
    "Symmetric",
    "u8",
    "u64",
    "i32",
    "f64",
    "bool",
    "usize",
    "[u64; 4]",
    "(u8, u16)",
    "fetch",
    "swap",
    "compare_swap",
    "wait_until",
    "set",
    "add",
    "max",
    "Cmp::Eq",
    "as",
    "self",
    "super",
    "fn",
    "let",
    "struct",
    "enum",
    "impl",
    "where",
    "#[symmetric]",
    "#[doc = \"x\"]",
    "#[allow(x)]",
    "=",
    "+=",
    "-=",
    "&=",
    "|=",
    "^=",
    "*=",
    "<<=",
    "=>",
    "==",
    ",",
    ";",
    ":",
    "::",
    "..",
    "..=",
    "&",
    "&&",
    "&mut",
    "*",
    ".",
    "!",
    "-",
    "+",
    "<",
    ">",
    "?",
    "#",
    "'a",
    "_",
    "0",
    "1",
    "2",
    "7u8",
    "255",
    "1.0",
    "-1",
    "u64::MAX",
    "\"s\"",
    "'c'",
    "b'x'",
    "0..n",
    "a..b",
    "..",
    "1..",
    "..=3",
];

/// A token stream's text, generated from `input` (at most `budget` words).
pub fn generate(input: &mut Input<'_>, budget: usize) -> String {
    let mut out = String::new();
    let mut left = budget;
    group(input, &mut out, &mut left, 0);
    out
}

fn group(input: &mut Input<'_>, out: &mut String, left: &mut usize, depth: usize) {
    while *left > 0 && !input.is_empty() {
        *left -= 1;
        let b = input.u8();
        match b {
            0..=219 => {
                out.push_str(WORDS[b as usize % WORDS.len()]);
                out.push(' ');
            }
            220..=249 if depth < 6 => {
                let (open, close) = [("[", "]"), ("(", ")"), ("{", "}")][(b % 3) as usize];
                out.push_str(open);
                group(input, out, left, depth + 1);
                out.push_str(close);
                out.push(' ');
            }
            250..=253 => {
                // An identifier or number of the input's own.
                let n = input.u8();
                out.push_str(&format!("v{n} "));
            }
            _ => return,
        }
    }
}
