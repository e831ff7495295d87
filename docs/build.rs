//! Lists the chapters (`src/*.md`, SUMMARY.md aside) and writes `chapters.rs` into `OUT_DIR`: one
//! module per chapter whose docs are the chapter's text (`#[doc = include_str!(...)]`), so that
//! rustdoc tests every code block of the book, and of the workspace's README. A chapter added to `src/` is covered without a
//! change here.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    let src = manifest.join("src");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=build.rs");

    let mut chapters: Vec<PathBuf> = std::fs::read_dir(&src)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", src.display()))
        .map(|entry| entry.expect("a readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .filter(|p| p.file_name().is_some_and(|n| n != "SUMMARY.md"))
        .collect();
    chapters.sort();
    // The README's first programs too (its Rust block runs on one PE).
    let readme = manifest.join("../README.md");
    println!("cargo:rerun-if-changed=../README.md");
    chapters.push(readme);

    let mut code = String::new();
    for path in &chapters {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_else(|| panic!("{}: not a UTF-8 file name", path.display()));
        let module: String = stem
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        let text = path
            .to_str()
            .unwrap_or_else(|| panic!("{}: not a UTF-8 path", path.display()));
        writeln!(
            code,
            "#[doc = include_str!({text:?})]\n#[cfg(doctest)]\npub mod chapter_{module} {{}}\n"
        )
        .expect("writing to a String");
    }
    std::fs::write(out.join("chapters.rs"), code).expect("writing chapters.rs");
}
