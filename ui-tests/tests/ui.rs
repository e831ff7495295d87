//! Compile-fail cases with reviewed `.stderr` files, and cases that must compile and run.
//! Regenerate the expected output after a deliberate change with `TRYBUILD=overwrite`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/pass/*.rs");
}
