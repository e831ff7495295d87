//! Compile-fail cases with reviewed `.stderr` files, grouped by topic in `tests/ui/<topic>/`, and
//! cases that must compile and run, in `tests/pass/`. Regenerate the expected output after a
//! deliberate change with `TRYBUILD=overwrite`, then review every changed `.stderr`.
//!
//! All of them run as one trybuild project. Because it has pass cases, trybuild builds it with
//! `cargo build`, not `cargo check`; the compile-time bounds check of `shmem!` (`tests/ui/bounds`)
//! is evaluated at monomorphization and shows only in a build. Filter with a pass case in the
//! set, e.g. `cargo test -p shmem-ui-tests -- ui trybuild=bounds/ trybuild=pass/`.

/// The topics of `tests/ui`, one folder each.
const TOPICS: &[&str] = &[
    "amo",       // atomics: operators and element types that have no atomic
    "bounds",    // constant indices, ranges and element counts checked at compile time
    "ctx",       // communication contexts
    "element",   // element types of one's own: #[element], #[derive(Element)]
    "lifetimes", // heap arrays, teams, contexts and their handles cannot outlive the World
    "nbi",       // the non-blocking form `nbi s: ...`
    "signal",    // put-with-signal `... => SIG += v`
    "stride",    // strided selections, on either side
    "symmetric", // #[symmetric] on what it does not apply to, and non-element statics
    "syntax",    // malformed shmem! statements
    "target",    // targets that are not symmetric, or not of the shape used
    "types",     // element, index and PE types of the user's expressions
];

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    for topic in TOPICS {
        t.compile_fail(format!("tests/ui/{topic}/*.rs"));
    }
    t.pass("tests/pass/*.rs");
}

/// Every folder of `tests/ui` is a topic that `ui` runs, and there are no cases outside them.
#[test]
fn every_topic_runs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui");
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/ui")
        .map(|e| e.expect("an entry of tests/ui").path())
        .inspect(|p| assert!(p.is_dir(), "{} is outside a topic folder", p.display()))
        .map(|p| {
            p.file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    found.sort();
    assert_eq!(found, TOPICS);
}
