//! C programs built with the `shmemcc` wrapper that the build writes next to `libshmem.so`, run
//! under `shmemrun` at 1 to 4 PEs. Each program checks its own results and exits nonzero on a
//! wrong value; the job must exit 0.

use shmem_testkit::{Path, run_job_status};
use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// `target/<profile>`, where this test binary's `deps` directory lies.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let deps = exe.parent().expect("deps");
    deps.parent().expect("profile dir").to_path_buf()
}

/// Builds `libshmem.so` (and the wrappers) into this test's profile directory, once: `cargo
/// test` links the tests against the rlib only, and the C programs need the shared library.
fn ensure_library() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = profile_dir();
        let profile = dir.file_name().and_then(|p| p.to_str()).unwrap_or("debug");
        let target_dir = dir.parent().expect("target directory");
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "-p", "shmem-capi", "--target-dir"])
            .arg(target_dir);
        match profile {
            "debug" => {}
            "release" => {
                cmd.arg("--release");
            }
            other => {
                cmd.args(["--profile", other]);
            }
        }
        let out = cmd.output().expect("run cargo build -p shmem-capi");
        assert!(
            out.status.success(),
            "cargo build -p shmem-capi failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
}

/// Runs the compiler wrapper `wrapper` (`shmemcc` or `shmemc++` of this profile) with `args`;
/// panics with its output, naming `what`, unless it succeeds.
fn run_wrapper<A: AsRef<OsStr>>(wrapper: &str, args: &[A], what: &str) {
    let cc = profile_dir().join(wrapper);
    assert!(
        cc.is_file(),
        "{} is missing: the shmem-capi build writes it",
        cc.display()
    );
    let out = Command::new(&cc)
        .args(args)
        .output()
        .expect("run the compiler wrapper");
    assert!(
        out.status.success(),
        "{} ({what}) failed:\n{}{}",
        cc.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Builds `tests/c/{name}` with `wrapper` into a temporary directory; returns the binary.
fn build(wrapper: &str, name: &str, extra: &[&str]) -> PathBuf {
    ensure_library();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(name);
    let out_dir = profile_dir().join("capi-tests");
    std::fs::create_dir_all(&out_dir).expect("output directory");
    let bin = out_dir.join(name.replace('.', "_"));
    let mut args: Vec<&OsStr> = extra.iter().map(OsStr::new).collect();
    args.extend([OsStr::new("-O1"), OsStr::new("-Wall"), OsStr::new("-o")]);
    args.extend([bin.as_os_str(), src.as_os_str()]);
    run_wrapper(wrapper, &args, name);
    bin
}

/// Builds the C program once per test process.
fn program(name: &'static str) -> &'static str {
    static BUILT: OnceLock<std::sync::Mutex<std::collections::HashMap<&str, String>>> =
        OnceLock::new();
    let map = BUILT.get_or_init(Default::default);
    let mut m = map.lock().unwrap_or_else(|p| p.into_inner());
    let path = m
        .entry(name)
        .or_insert_with(|| build("shmemcc", name, &["-std=c11"]).display().to_string());
    Box::leak(path.clone().into_boxed_str())
}

/// Runs `name` at 1, 2, 3 and 4 PEs on the direct path (and at 2 PEs over UCX's tcp).
fn run_everywhere(name: &'static str) {
    let bin = program(name);
    for n in [1, 2, 3, 4] {
        let (status, stdout, stderr) = run_job_status(n, Path::Direct, bin, &[]);
        assert!(
            status.success(),
            "{name} on {n} PEs failed: {status}\n{stdout}\n{stderr}"
        );
    }
    let (status, stdout, stderr) = run_job_status(2, Path::Ucx, bin, &[]);
    assert!(
        status.success(),
        "{name} on 2 PEs over UCX failed: {status}\n{stdout}\n{stderr}"
    );
}

#[test]
fn hello() {
    let bin = program("hello.c");
    for n in [1, 2, 3, 4] {
        let (status, stdout, stderr) = run_job_status(n, Path::Direct, bin, &[]);
        assert!(status.success(), "hello on {n} PEs: {status}\n{stderr}");
        for pe in 0..n {
            let line = format!("hello from PE {pe} of {n}");
            assert!(stdout.contains(&line), "missing {line:?} in:\n{stdout}");
        }
    }
}

#[test]
fn put_get_into_globals_and_heap() {
    run_everywhere("rma.c");
}

#[test]
fn atomic_fetch_add_on_a_global() {
    run_everywhere("atomics.c");
}

#[test]
fn reductions() {
    run_everywhere("reduce.c");
}

#[test]
fn team_split() {
    run_everywhere("teams.c");
}

#[test]
fn header_compiles_as_cxx11_and_runs() {
    let bin = build("shmemc++", "cxx_header.cpp", &["-std=c++11"]);
    let bin = bin.display().to_string();
    let (status, stdout, stderr) = run_job_status(2, Path::Direct, &bin, &[]);
    assert!(status.success(), "{status}\n{stdout}\n{stderr}");
}

#[test]
fn header_compiles_as_c99_and_c11() {
    ensure_library();
    let header = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include/shmem.h");
    for std in ["-std=c99", "-std=c11"] {
        let mut args: Vec<&OsStr> = [std, "-Wall", "-Werror", "-fsyntax-only", "-c", "-x", "c"]
            .map(OsStr::new)
            .to_vec();
        args.push(header.as_os_str());
        run_wrapper("shmemcc", &args, &format!("shmem.h with {std}"));
    }
}

#[test]
fn wrapper_adds_no_link_flags_when_compiling_only() {
    ensure_library();
    let dir = profile_dir().join("capi-tests");
    std::fs::create_dir_all(&dir).expect("dir");
    let obj = dir.join("hello.o");
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/c/hello.c");
    let c = OsStr::new;
    run_wrapper(
        "shmemcc",
        &[c("-c"), c("-o"), obj.as_os_str(), src.as_os_str()],
        "compile only",
    );
    // Linking the object needs the wrapper's link flags.
    let exe = dir.join("hello_linked");
    run_wrapper(
        "shmemcc",
        &[c("-o"), exe.as_os_str(), obj.as_os_str()],
        "link",
    );
}
