//! C programs built with the `shmemcc` wrapper that the build writes next to `libshmem.so`, run
//! under `shmemrun` at 1 to 4 PEs. Each program checks its own results and exits nonzero on a
//! wrong value; the job must exit 0.

use shmem_testkit::{Finished, Path, one_job_at_a_time, run_job_status, shmemrun, start};
use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// No job or wrapper run of these tests may take longer; a hang fails the test.
const LIMIT: Duration = Duration::from_secs(60);

/// The variables the compiler wrappers read, which the tests set themselves.
const WRAPPER_VARS: [&str; 5] = [
    "SHMEM_WRAPPER_CC",
    "SHMEM_WRAPPER_CXX",
    "SHMEM_CC",
    "SHMEM_CXX",
    "SHMEM_WRAPPER_ACTIVE",
];

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

/// A command that runs the compiler wrapper `wrapper` of this profile with none of the
/// variables that choose its compiler set.
fn wrapper_command(wrapper: &str) -> Command {
    let mut cmd = Command::new(profile_dir().join(wrapper));
    for v in WRAPPER_VARS {
        cmd.env_remove(v);
    }
    cmd
}

/// Runs the compiler wrapper `wrapper` (`shmemcc` or `shmemc++` of this profile) with `args`;
/// panics with its output, naming `what`, unless it succeeds. Returns its standard output.
fn run_wrapper<A: AsRef<OsStr>>(wrapper: &str, args: &[A], what: &str) -> String {
    let cc = profile_dir().join(wrapper);
    assert!(
        cc.is_file(),
        "{} is missing: the shmem-capi build writes it",
        cc.display()
    );
    let out = wrapper_command(wrapper)
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
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Builds `tests/c/{name}` with `wrapper` into a temporary directory (a binary per source and
/// wrapper, so that tests running at once never rewrite each other's); returns the binary.
fn build(wrapper: &str, name: &str, extra: &[&str]) -> PathBuf {
    ensure_library();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(name);
    let out_dir = profile_dir().join("capi-tests");
    std::fs::create_dir_all(&out_dir).expect("output directory");
    let bin = out_dir.join(format!("{}-{wrapper}", name.replace('.', "_")));
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

/// The strided all-to-all, deprecated active-set and team forms (`alltoalls.c`).
#[test]
fn strided_alltoalls() {
    run_everywhere("alltoalls.c");
}

/// A collective writes a PE's `dest` only once that PE has called it: one PE at a time reads its
/// result slowly while the others go on to the next call, no barrier between (`dest_kept.c`).
#[test]
fn dest_kept_until_its_pe_calls_again() {
    run_everywhere("dest_kept.c");
}

#[test]
fn team_split() {
    run_everywhere("teams.c");
}

/// Runs `name` over UCX's tcp at each of `pes` PEs.
fn run_over_ucx(name: &'static str, pes: &[usize]) {
    let bin = program(name);
    for &n in pes {
        let (status, stdout, stderr) = run_job_status(n, Path::Ucx, bin, &[]);
        assert!(
            status.success(),
            "{name} on {n} PEs over UCX failed: {status}\n{stdout}\n{stderr}"
        );
    }
}

/// OpenSHMEM 1.6 `shmem_ibput`/`shmem_ibget`: typed, sized, context and generic forms.
#[test]
fn blocked_strided_put_and_get() {
    run_everywhere("blocked.c");
    run_over_ucx("blocked.c", &[3]);
}

/// OpenSHMEM 1.6 `shmem_signal_add`/`_set` and `shmem_[ctx_]pe_quiet`.
#[test]
fn signal_updates_and_pe_quiet() {
    run_everywhere("signal_ops.c");
    run_over_ucx("signal_ops.c", &[3]);
}

/// OpenSHMEM 1.6 `shmem_sum_inscan`/`_exscan`.
#[test]
fn scans() {
    run_everywhere("scan.c");
    run_over_ucx("scan.c", &[3]);
}

/// OpenSHMEM 1.6 `shmem_query_initialized`, repeated initialization, sessions, `shmem_team_ptr`.
#[test]
fn repeated_init_query_and_sessions() {
    run_everywhere("init_query.c");
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

/// shmem4py's `PySHMEM_HAVE_*` macros in shmem.h promise features: each one's calls must be
/// declared and exported (else `pip install shmem4py` builds a module that cannot load).
#[test]
fn pyshmem_have_macros_name_real_calls() {
    let bin = build("shmemcc", "pyshmem_have.c", &["-std=c99", "-Werror"]);
    let bin = bin.display().to_string();
    let (status, stdout, stderr) = run_job_status(1, Path::Direct, &bin, &[]);
    assert!(status.success(), "{status}\n{stdout}\n{stderr}");
    assert!(stdout.contains(" calls, hints 3,"), "{stdout}");
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

/// `oshrun` of this profile (the launcher under its OpenSHMEM name), built with the rest of the
/// shmem-run package when it is missing.
fn oshrun() -> PathBuf {
    let shmemrun = shmem_testkit::shmemrun();
    let oshrun = shmemrun.with_file_name("oshrun");
    if !oshrun.is_file() {
        let dir = profile_dir();
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args([
            "build",
            "-p",
            "shmem-run",
            "--bin",
            "oshrun",
            "--target-dir",
        ])
        .arg(dir.parent().expect("target directory"));
        if dir.file_name().and_then(|p| p.to_str()) == Some("release") {
            cmd.arg("--release");
        }
        let out = cmd.output().expect("run cargo build -p shmem-run");
        assert!(
            out.status.success(),
            "cargo build --bin oshrun failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    oshrun
}

/// Runs `launcher -np N program` with `env` added; the job's outcome and output.
fn job(launcher: &std::path::Path, n: usize, program: &str, env: &[(&str, &str)]) -> Finished {
    let mut cmd = Command::new(launcher);
    cmd.args(["-np", &n.to_string(), program])
        .envs(env.iter().copied())
        .env_remove("UCX_TLS")
        .stdin(Stdio::null());
    let _one = one_job_at_a_time();
    start(cmd).finish(LIMIT)
}

/// Runs the wrapper `name` on `hello.c` with the variable `var` set to `value`, building
/// `capi-tests/{out}`; the wrapper must end within [`LIMIT`] (a wrapper that runs itself again
/// would never end).
fn wrapper_with(name: &str, var: &str, value: &OsStr, out: &str) -> Finished {
    ensure_library();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/c/hello.c");
    let out = profile_dir().join("capi-tests").join(out);
    std::fs::create_dir_all(out.parent().expect("dir")).expect("output directory");
    let mut cmd = wrapper_command(name);
    cmd.env(var, value)
        .arg("-o")
        .arg(&out)
        .arg(&src)
        .stdin(Stdio::null());
    start(cmd).finish(LIMIT)
}

#[test]
fn a_wrapper_named_as_its_own_compiler_fails_at_once_saying_so() {
    for (name, var, lang) in [
        ("oshcc", "SHMEM_WRAPPER_CC", "a C compiler"),
        ("shmemcc", "SHMEM_WRAPPER_CC", "a C compiler"),
        ("oshc++", "SHMEM_WRAPPER_CXX", "a C++ compiler"),
        ("oshCC", "SHMEM_WRAPPER_CXX", "a C++ compiler"),
    ] {
        let me = profile_dir().join(name);
        let r = wrapper_with(name, var, me.as_os_str(), "hello_never_built");
        assert_eq!(
            r.code(),
            Some(1),
            "{name} with {var}={}: {r:?}",
            me.display()
        );
        let expected = format!(
            "{name}: the underlying compiler is this wrapper itself (via {var}={}); set {var} to \
             {lang}\n",
            me.display()
        );
        assert_eq!(r.stderr, expected, "{name}: {r:?}");
    }
    // SHMEM_CC naming a command that runs a wrapper (not the wrapper's file, which would be
    // ignored): the wrapper it runs refuses, naming SHMEM_CC and the variable to set instead.
    let cc = profile_dir().join("shmemcc");
    let via_sh = format!("sh {}", cc.display());
    let r = wrapper_with(
        "oshcc",
        "SHMEM_CC",
        OsStr::new(&via_sh),
        "hello_never_built",
    );
    assert_eq!(r.code(), Some(1), "{r:?}");
    assert_eq!(
        r.stderr,
        format!(
            "shmemcc: the underlying compiler is this wrapper itself (via SHMEM_CC={via_sh}); \
             set SHMEM_WRAPPER_CC to a C compiler\n"
        ),
        "{r:?}"
    );
}

/// Build systems set SHMEM_CC to the wrapper (`make SHMEM_CC=.../oshcc`): the wrapper then
/// ignores it and compiles with the default compiler.
/// `hello.c` ran on 2 PEs: status 0 and one greeting from each PE.
fn assert_hello_from_two_pes(r: &Finished) {
    assert_eq!(r.code(), Some(0), "{r:?}");
    let mut lines: Vec<&str> = r.stdout.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        ["hello from PE 0 of 2", "hello from PE 1 of 2"],
        "{r:?}"
    );
}

#[test]
fn shmem_cc_naming_a_wrapper_is_ignored_and_the_program_builds() {
    for wrapper in ["shmemcc", "oshcc"] {
        let named = profile_dir().join(wrapper);
        let r = wrapper_with("oshcc", "SHMEM_CC", named.as_os_str(), "hello_shmem_cc");
        assert_eq!(r.code(), Some(0), "SHMEM_CC={}: {r:?}", named.display());
    }
    let bin = profile_dir().join("capi-tests").join("hello_shmem_cc");
    let r = job(&oshrun(), 2, &bin.display().to_string(), &[]);
    assert_hello_from_two_pes(&r);
}

#[test]
fn oshcc_builds_and_oshrun_np_2_runs_a_c_program() {
    let bin = build("oshcc", "hello.c", &["-std=c11"]);
    let r = job(&oshrun(), 2, &bin.display().to_string(), &[]);
    assert_hello_from_two_pes(&r);
    assert_eq!(r.stderr, "", "{r:?}");
}

#[test]
fn allocations_that_cannot_be_met_return_null_and_the_whole_heap_fits_once() {
    let bin = program("mem_edges.c");
    for n in [2, 3] {
        let r = job(&oshrun(), n, bin, &[("SHMEM_SYMMETRIC_SIZE", "1048576")]);
        assert_eq!(r.code(), Some(0), "{n} PEs: {r:?}");
        let mut lines: Vec<&str> = r.stdout.lines().collect();
        lines.sort_unstable();
        let expected: Vec<String> = (0..n)
            .map(|pe| format!("mem_edges: PE {pe} of {n}: OK"))
            .collect();
        assert_eq!(lines, expected, "{n} PEs: {r:?}");
        // Every PE warned about each NULL, with the value that caused it.
        for warning in [
            "shmem: shmem_align: alignment 0 is not a power of two; returning NULL",
            "shmem: shmem_align: alignment 3 is not a power of two; returning NULL",
            "shmem: shmem_align: alignment 24 is not a power of two; returning NULL",
        ] {
            let count = r.stderr.lines().filter(|l| *l == warning).count();
            assert_eq!(count, n, "{warning:?} on {n} PEs: {r:?}");
        }
        let realloc = "is not the address of a live shmem_malloc block; returning NULL";
        let count = r.stderr.lines().filter(|l| l.ends_with(realloc)).count();
        assert_eq!(count, 2 * n, "{r:?}");
        assert!(r.stderr.lines().all(|l| l.starts_with("shmem: ")), "{r:?}");
    }
}

#[test]
fn warnings_of_many_pes_at_once_come_out_as_whole_lines() {
    let bin = program("warn_lines.c");
    let n = 6;
    let r = job(&oshrun(), n, bin, &[]);
    assert_eq!(r.code(), Some(0), "{r:?}");
    let warning = "shmem: shmem_align: alignment 3 is not a power of two; returning NULL";
    let bad: Vec<&str> = r.stderr.lines().filter(|l| *l != warning).collect();
    assert!(
        bad.is_empty(),
        "{} of {} lines are not one whole warning, e.g. {:?}",
        bad.len(),
        r.stderr.lines().count(),
        &bad[..bad.len().min(5)]
    );
    assert_eq!(r.stderr.lines().count(), n * 200);
    assert!(r.stderr.ends_with('\n'));
}

#[test]
fn a_pe_that_finalizes_while_the_others_wait_in_shmem_barrier_all_is_named() {
    let bin = program("finalize_early.c");
    for path in [Path::Direct, Path::Ucx] {
        for (n, early) in [(3, 1), (2, 1), (5, 4)] {
            let mut cmd = Command::new(shmemrun());
            cmd.args(["-n", &n.to_string(), bin, &early.to_string()])
                // One line per message: no backtrace after it.
                .env("RUST_BACKTRACE", "0")
                .stdin(Stdio::null());
            path.apply(&mut cmd);
            let started = Instant::now();
            let r = {
                let _one = one_job_at_a_time();
                start(cmd).finish(LIMIT)
            };
            let took = started.elapsed();
            let case = format!("{n} PEs, PE {early} early, {path:?} path");
            assert_eq!(r.code(), Some(1), "{case}: {r:?}");
            assert_eq!(
                r.stdout, "",
                "{case}: a barrier passed for a finalize: {r:?}"
            );
            let named = format!("shmem: PE {early} finalized ");
            assert!(
                r.stderr
                    .lines()
                    .any(|l| l.starts_with(&named) && l.contains(" waits for it in a barrier")),
                "{case}: no line names PE {early}: {r:?}"
            );
            // Whole lines of the library and the launcher only (no abort after the message).
            assert!(
                r.stderr
                    .lines()
                    .all(|l| l.starts_with("shmem: ") || l.starts_with("shmemrun: ")),
                "{case}: {r:?}"
            );
            // The whole job, start-up included.
            assert!(took < Duration::from_secs(3), "{case}: took {took:?}");
            eprintln!("{case}: the job took {took:.2?}");
        }
    }
}

#[test]
fn deprecated_cache_routines_are_no_ops_and_say_they_are_deprecated() {
    // Built with -Wno-deprecated-declarations: the calls link and do nothing.
    let bin = build(
        "shmemcc",
        "cache_noops.c",
        &["-std=c11", "-Wno-deprecated-declarations"],
    );
    let bin = bin.display().to_string();
    for n in [1, 3] {
        let (status, stdout, stderr) = run_job_status(n, Path::Direct, &bin, &[]);
        assert!(
            status.success(),
            "cache_noops on {n} PEs failed: {status}\n{stdout}\n{stderr}"
        );
    }
    // With deprecations as errors the header's attribute stops the build, naming a routine.
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/c/cache_noops.c");
    let obj = profile_dir().join("capi-tests").join("cache_noops.o");
    let out = wrapper_command("oshcc")
        .args(["-std=c11", "-Werror=deprecated-declarations", "-c", "-o"])
        .arg(&obj)
        .arg(&src)
        .output()
        .expect("run oshcc");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("shmem_udcflush"),
        "expected a deprecation error naming shmem_udcflush, got {}:\n{err}",
        out.status
    );
}

/// Runs the wrapper `name` with `args` (no build); its standard output, which must not be
/// empty, without the final newline.
fn wrapper_says(name: &str, args: &[&str]) -> String {
    ensure_library();
    let text = run_wrapper(name, args, "asked for its flags")
        .trim_end()
        .to_string();
    assert!(!text.is_empty(), "{name} {args:?} printed nothing");
    text
}

#[test]
fn wrappers_answer_showme_as_open_mpi_s_do() {
    let include = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include");
    let dir = profile_dir();
    let compile = wrapper_says("oshcc", &["--showme:compile"]);
    assert_eq!(compile, format!("-I{}", include.display()));
    let link = wrapper_says("oshcc", &["--showme:link"]);
    assert!(
        link.contains(&format!("-L{}", dir.display())) && link.contains("-lshmem"),
        "--showme:link said {link:?}"
    );
    // The command it would run: compiler, include, the arguments in place, the link flags.
    for flag in ["--showme", "-showme", "-show"] {
        let all = wrapper_says("oshcc", &[flag, "prog.c", "-o", "prog"]);
        assert_eq!(all, format!("cc {compile} prog.c -o prog {link}"), "{flag}");
    }
    // Compile-only: no link flags, as when it runs.
    let c = wrapper_says("oshc++", &["-showme", "-c", "x.cpp"]);
    assert_eq!(c, format!("c++ {compile} -c x.cpp"));
    assert_eq!(wrapper_says("oshc++", &["--showme:command"]), "c++");
    assert_eq!(wrapper_says("oshcc", &["--showme:libs"]), "shmem");
    let version = wrapper_says("oshcc", &["--showme:version"]);
    assert!(
        version.starts_with("oshcc: shmem-rs ") && version.contains("(OpenSHMEM 1."),
        "--showme:version said {version:?}"
    );
    // --version goes to the compiler, as with Open MPI's wrappers.
    let cc_version = wrapper_says("oshcc", &["--version"]);
    assert!(!cc_version.contains("shmem-rs"), "{cc_version}");
    // An unknown part is an error naming it.
    let out = wrapper_command("oshcc")
        .arg("--showme:nonsense")
        .output()
        .expect("run oshcc");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("-showme:nonsense"));
    // The flags it reports build a working program with the plain compiler.
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/c/hello.c");
    let bin = dir.join("capi-tests").join("hello_by_showme");
    std::fs::create_dir_all(bin.parent().expect("dir")).expect("output directory");
    let mut cmd = Command::new("cc");
    cmd.args(compile.split_whitespace())
        .arg("-o")
        .arg(&bin)
        .arg(&src)
        .args(link.split_whitespace());
    let out = cmd.output().expect("run cc");
    assert!(
        out.status.success(),
        "cc with --showme flags failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_hello_from_two_pes(&job(&oshrun(), 2, &bin.display().to_string(), &[]));
}
