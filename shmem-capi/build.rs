//! Writes the compiler wrappers `shmemcc` and `shmemc++` into the target profile directory
//! (`target/<profile>/`, next to `libshmem.so` and `shmemrun`), so that C programs build with
//! nothing installed: `target/release/shmemcc -o hello hello.c`.

use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let include = manifest.join("include");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=include");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    // OUT_DIR is target/<profile>/build/<package>-<hash>/out.
    let Some(profile) = out.ancestors().nth(3) else {
        println!("cargo:warning=cannot tell the profile directory from OUT_DIR; no shmemcc");
        return;
    };
    write_wrapper(&profile.join("shmemcc"), "SHMEM_CC", "cc", &include);
    write_wrapper(&profile.join("shmemc++"), "SHMEM_CXX", "c++", &include);
}

fn write_wrapper(path: &Path, var: &str, default: &str, include: &Path) {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("shmemcc");
    let script = format!(
        r#"#!/bin/sh
# {name}: compiles (and links) OpenSHMEM programs against the libshmem next to this script.
# Written by the shmem-capi build. ${var} chooses the compiler (default: {default}).
# Compile-only runs (-c, -E, -S, -M, -MM) get no link flags.
dir=$(cd "$(dirname "$0")" && pwd)
compiler=${{{var}:-{default}}}
link=1
for arg in "$@"; do
  case "$arg" in
    -c|-E|-S|-M|-MM) link=0 ;;
  esac
done
if [ "$link" = 1 ]; then
  exec $compiler -I'{include}' "$@" -L"$dir" -lshmem -Wl,-rpath,"$dir"
else
  exec $compiler -I'{include}' "$@"
fi
"#,
        include = include.display()
    );
    if std::fs::read_to_string(path).ok().as_deref() != Some(script.as_str())
        && let Err(e) = std::fs::write(path, &script)
    {
        println!("cargo:warning=cannot write {}: {e}", path.display());
        return;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Err(e) = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)) {
            println!(
                "cargo:warning=cannot make {} executable: {e}",
                path.display()
            );
        }
    }
}
