//! Tests that need root: skipped, loudly, where they cannot run, unless they are required.

use std::io::Write;

/// Environment variable: when set (to anything but empty or `0`), a test that needs root fails
/// where it cannot run instead of being skipped. CI (`.ci/run`, as root) sets it, so that the
/// two-host tests can never pass there without running.
pub const REQUIRE_ROOT_VAR: &str = "SHMEM_TEST_REQUIRE_ROOT";

/// Whether the test `test`, which needs root for network namespaces, can run: true when this
/// process runs as root. Otherwise it prints
/// `SKIPPED <test>: needs root for network namespaces; set SHMEM_TEST_REQUIRE_ROOT=1 to make this
/// a failure` straight to stderr (past the test harness's capture, so that it shows in every
/// run) and returns false, or panics when [`REQUIRE_ROOT_VAR`] is set.
///
/// ```
/// if !shmem_testkit::root_or_skip("my_two_host_test") {
///     return;
/// }
/// // ... create network namespaces ...
/// ```
pub fn root_or_skip(test: &str) -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    let required = std::env::var_os(REQUIRE_ROOT_VAR).is_some_and(|v| !v.is_empty() && v != "0");
    if required {
        panic!(
            "{test} needs root for network namespaces, and {REQUIRE_ROOT_VAR} is set: run the \
             tests as root, or unset {REQUIRE_ROOT_VAR} to skip it"
        );
    }
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}: needs root for network namespaces; set {REQUIRE_ROOT_VAR}=1 to make \
         this a failure"
    );
    false
}
