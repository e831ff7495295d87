//! Where the tests find `shmemrun`.
//!
//! `shmemrun` is the binary of the `shmem-run` package, so the tests of other packages cannot
//! name it with `env!("CARGO_BIN_EXE_shmemrun")`. They look for it in the target profile
//! directory of the running test binary (`target/<profile>/deps/<test>-<hash>` runs, so
//! `target/<profile>/shmemrun`), where `cargo build` and `cargo test --workspace` put it; when it
//! is not there, it is built once with `$CARGO build -p shmem-run` in the same profile.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Environment variable: the `shmemrun` to use, instead of the one next to the test binary.
pub const SHMEMRUN_VAR: &str = "SHMEMRUN";

/// The `shmemrun` the tests run: `$SHMEMRUN` when set, else `shmemrun` in the target profile
/// directory of this test binary, built with `$CARGO build -p shmem-run` (`--release` for a
/// release test binary) the first time it is missing. Panics saying what to do when there is
/// none and it cannot be built.
///
/// A `shmemrun` that is there is used as it is: after changing the launcher, `cargo build` (or
/// `cargo test --workspace`, or `cargo test -p shmem-run`) brings it up to date.
pub fn shmemrun() -> &'static Path {
    static FOUND: OnceLock<PathBuf> = OnceLock::new();
    FOUND.get_or_init(|| locate().unwrap_or_else(|why| panic!("shmem-testkit: {why}")))
}

fn locate() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(SHMEMRUN_VAR).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!("{SHMEMRUN_VAR}={} is not a file", path.display()))
        };
    }
    let exe = std::env::current_exe().map_err(|e| {
        format!("cannot find the running test binary, to look for shmemrun next to it: {e}")
    })?;
    let profile_dir = profile_dir(&exe).ok_or_else(|| {
        format!(
            "cannot tell the target directory of {}; set {SHMEMRUN_VAR}=/path/to/shmemrun",
            exe.display()
        )
    })?;
    let path = profile_dir.join("shmemrun");
    if !path.is_file() {
        build(&profile_dir, &path)?;
    }
    Ok(path)
}

/// `target/<profile>` (or `target/<triple>/<profile>`) for a binary in it or in its `deps`.
fn profile_dir(exe: &Path) -> Option<PathBuf> {
    let dir = exe.parent()?;
    let dir = if dir.file_name()? == "deps" {
        dir.parent()?
    } else {
        dir
    };
    Some(dir.to_path_buf())
}

/// The cargo options that build into `profile_dir`: profile, target directory and, for
/// `target/<triple>/<profile>`, the target.
fn cargo_options(profile_dir: &Path) -> Option<Vec<OsString>> {
    let profile = profile_dir.file_name()?.to_str()?;
    let mut options: Vec<OsString> = match profile {
        "debug" => vec![],
        "release" => vec!["--release".into()],
        other => vec!["--profile".into(), other.into()],
    };
    let parent = profile_dir.parent()?;
    // Cargo marks the root of every target directory with CACHEDIR.TAG.
    let (target_dir, triple) = match parent.parent() {
        Some(root)
            if !parent.join("CACHEDIR.TAG").exists() && root.join("CACHEDIR.TAG").exists() =>
        {
            (root, Some(parent.file_name()?))
        }
        _ => (parent, None),
    };
    options.push("--target-dir".into());
    options.push(target_dir.into());
    if let Some(triple) = triple {
        options.push("--target".into());
        options.push(triple.into());
    }
    Some(options)
}

/// Builds `shmemrun` into `profile_dir` with the cargo that runs the tests.
fn build(profile_dir: &Path, path: &Path) -> Result<(), String> {
    let advice = format!(
        "build it (`cargo build -p shmem-run`, with --release for release tests) or set \
         {SHMEMRUN_VAR}=/path/to/shmemrun"
    );
    let Some(cargo) = std::env::var_os("CARGO") else {
        return Err(format!(
            "{} is missing, and this test was not started by cargo (CARGO is not set) to build \
             it: {advice}",
            path.display()
        ));
    };
    let options = cargo_options(profile_dir).ok_or_else(|| {
        format!(
            "{} is missing, and {} does not look like a cargo target directory: {advice}",
            path.display(),
            profile_dir.display()
        )
    })?;
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "-p", "shmem-run", "--bin", "shmemrun"])
        .args(&options);
    // Straight to the process's stderr, past the test harness's capture: a build takes a while.
    let _ = writeln!(
        std::io::stderr(),
        "shmem-testkit: {} is missing; building it: {cmd:?}",
        path.display()
    );
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {cmd:?} to build shmemrun: {e}; {advice}"))?;
    if !status.success() {
        return Err(format!(
            "{cmd:?} failed ({status}); its errors are above (or set \
             {SHMEMRUN_VAR}=/path/to/shmemrun)"
        ));
    }
    if !path.is_file() {
        return Err(format!(
            "{cmd:?} succeeded, but {} is still missing: {advice}",
            path.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_directories_and_their_cargo_options() {
        let exe = Path::new("/w/target/release/deps/rma-0123abcd");
        let dir = profile_dir(exe).unwrap();
        assert_eq!(dir, Path::new("/w/target/release"));
        let options = cargo_options(&dir).unwrap();
        assert_eq!(
            options,
            ["--release", "--target-dir", "/w/target"].map(OsString::from)
        );
        let dir = profile_dir(Path::new("/w/target/debug/deps/rma-1")).unwrap();
        assert_eq!(
            cargo_options(&dir).unwrap(),
            ["--target-dir", "/w/target"].map(OsString::from)
        );
        let dir = profile_dir(Path::new("/w/target/profiling/deps/rma-1")).unwrap();
        assert_eq!(
            cargo_options(&dir).unwrap(),
            ["--profile", "profiling", "--target-dir", "/w/target"].map(OsString::from)
        );
    }

    #[test]
    fn this_test_binary_finds_its_target_directory() {
        // A real layout: the target directory holds CACHEDIR.TAG, the profile does not.
        let exe = std::env::current_exe().unwrap();
        let dir = profile_dir(&exe).unwrap();
        let options = cargo_options(&dir).unwrap();
        let at = options.iter().position(|o| o == "--target-dir").unwrap();
        let target_dir = Path::new(&options[at + 1]);
        assert!(
            target_dir.join("CACHEDIR.TAG").exists(),
            "{options:?} for {}",
            exe.display()
        );
    }
}
