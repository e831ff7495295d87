//! Writes the compiler wrappers into the target profile directory (`target/<profile>/`, next to
//! `libshmem.so` and the launcher), so that C programs build with nothing installed:
//! `target/release/oshcc -o hello hello.c`. The C wrapper is written as `shmemcc` and `oshcc`,
//! the C++ one as `shmemc++`, `oshc++` and `oshCC` (the names OpenSHMEM users type).
//!
//! The underlying compiler comes from `SHMEM_WRAPPER_CC` (C++: `SHMEM_WRAPPER_CXX`), as Open
//! MPI's `mpicc` takes `OMPI_CC`: build systems set `SHMEM_CC` to the wrapper itself
//! (`SHMEM_CC ?= oshcc`), so `SHMEM_CC` (`SHMEM_CXX`) only counts when it does not name one of
//! these wrappers. A wrapper that is started again by the compiler it runs says so and fails
//! instead of running itself forever.

use std::path::{Path, PathBuf};

/// The first line after the shebang of every wrapper: how a wrapper recognizes another one
/// named in `SHMEM_CC`.
const MARKER: &str = "# shmem-capi compiler wrapper";

/// One language's wrapper: its names, the variables that choose its compiler and the default.
struct Wrapper {
    names: &'static [&'static str],
    lang: &'static str,
    var: &'static str,
    legacy_var: &'static str,
    default: &'static str,
}

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
    // oshCC and oshcc are one file where names ignore case.
    let case_blind = matches!(
        std::env::var("CARGO_CFG_TARGET_OS").as_deref(),
        Ok("macos" | "ios" | "windows")
    );
    let cxx_names: &[&str] = if case_blind {
        &["shmemc++", "oshc++"]
    } else {
        &["shmemc++", "oshc++", "oshCC"]
    };
    let wrappers = [
        Wrapper {
            names: &["shmemcc", "oshcc"],
            lang: "C",
            var: "SHMEM_WRAPPER_CC",
            legacy_var: "SHMEM_CC",
            default: "cc",
        },
        Wrapper {
            names: cxx_names,
            lang: "C++",
            var: "SHMEM_WRAPPER_CXX",
            legacy_var: "SHMEM_CXX",
            default: "c++",
        },
    ];
    let spec = spec_version(&include.join("shmem.h"));
    let version = format!(
        "shmem-rs {} (OpenSHMEM {spec})",
        std::env::var("CARGO_PKG_VERSION").unwrap_or_default()
    );
    for w in &wrappers {
        let script = script(w, &include, &version);
        for name in w.names {
            write_wrapper(&profile.join(name), &script);
        }
    }
}

/// `MAJOR.MINOR` from the header's `SHMEM_MAJOR_VERSION` and `SHMEM_MINOR_VERSION`.
fn spec_version(header: &Path) -> String {
    let text = std::fs::read_to_string(header).unwrap_or_default();
    let find = |name: &str| {
        text.lines()
            .find_map(|l| {
                l.strip_prefix("#define ")?
                    .strip_prefix(name)?
                    .trim()
                    .parse::<u32>()
                    .ok()
            })
            .map_or_else(|| "?".to_string(), |v| v.to_string())
    };
    format!(
        "{}.{}",
        find("SHMEM_MAJOR_VERSION "),
        find("SHMEM_MINOR_VERSION ")
    )
}

/// The wrapper's shell script. `SHMEM_WRAPPER_ACTIVE` (set before the exec, to the variable
/// and compiler chosen) is the loop guard: a wrapper that finds it set was started by the
/// compiler another one runs, which is then that wrapper itself.
fn script(w: &Wrapper, include: &Path, version: &str) -> String {
    let Wrapper {
        names,
        lang,
        var,
        legacy_var,
        default,
    } = w;
    let all = names.join(", ");
    format!(
        r#"#!/bin/sh
{MARKER} ({all}): compiles (and links) OpenSHMEM programs against the libshmem next to it.
# Written by the shmem-capi build. The {lang} compiler it runs: ${var}, else ${legacy_var} unless
# that names one of these wrappers (build systems set it to the wrapper), else {default}.
# Compile-only runs (-c, -E, -S, -M, -MM) get no link flags. As Open MPI's wrappers,
# --showme (also -showme, -show) prints the command instead of running it, and
# --showme:compile|link|command|incdirs|libdirs|libs|version|help the part asked for.
me=$(basename "$0")
show=""
for arg in "$@"; do
  case "$arg" in
    -showme|--showme|-show) show=all ;;
    -showme:*|--showme:*) show=${{arg#*:}} ;;
  esac
done
if [ -n "$show" ]; then
  count=$#
  for arg in "$@"; do
    case "$arg" in
      -showme|--showme|-show|-showme:*|--showme:*) ;;
      *) set -- "$@" "$arg" ;;
    esac
  done
  shift "$count"
fi
if [ -z "$show" ] && [ -n "${{SHMEM_WRAPPER_ACTIVE:-}}" ]; then
  guard=${{SHMEM_WRAPPER_ACTIVE%%=*}}
  case "$guard" in
    *CXX*|*C++*) want="SHMEM_WRAPPER_CXX to a C++ compiler" ;;
    *) want="SHMEM_WRAPPER_CC to a C compiler" ;;
  esac
  echo "$me: the underlying compiler is this wrapper itself (via $SHMEM_WRAPPER_ACTIVE); set $want" >&2
  exit 1
fi
dir=$(cd "$(dirname "$0")" && pwd)
compiler=${{{var}:-}}
via={var}
if [ -z "$compiler" ] && [ -n "${{{legacy_var}:-}}" ]; then
  first=${{{legacy_var}%% *}}
  found=$(command -v "$first" 2>/dev/null || true)
  if [ -z "$found" ] || [ ! -f "$found" ] || ! grep -q '^{MARKER}' "$found" 2>/dev/null; then
    compiler=${legacy_var}
    via={legacy_var}
  fi
fi
if [ -z "$compiler" ]; then
  compiler={default}
  via="default {lang} compiler"
fi
SHMEM_WRAPPER_ACTIVE="$via=$compiler"
export SHMEM_WRAPPER_ACTIVE
link=1
for arg in "$@"; do
  case "$arg" in
    -c|-E|-S|-M|-MM) link=0 ;;
  esac
done
libflags="-L$dir -lshmem -Wl,-rpath,$dir"
case "$show" in
  "") ;;
  all)
    if [ "$link" = 1 ]; then
      echo "$compiler -I{include} $* $libflags"
    else
      echo "$compiler -I{include} $*"
    fi
    exit 0 ;;
  compile) echo "-I{include}"; exit 0 ;;
  link) echo "$libflags"; exit 0 ;;
  command) echo "$compiler"; exit 0 ;;
  incdirs) echo "{include}"; exit 0 ;;
  libdirs) echo "$dir"; exit 0 ;;
  libs) echo "shmem"; exit 0 ;;
  version) echo "$me: {version} (Language: {lang})"; exit 0 ;;
  help)
    echo "$me [-showme[:<command,compile,link,incdirs,libdirs,libs,version,help>]] args"
    echo "  -showme            show the command that would run, then exit (also -show)"
    echo "  -showme:command    the underlying {lang} compiler"
    echo "  -showme:compile    the flags added when compiling"
    echo "  -showme:link       the flags added when linking"
    echo "  -showme:incdirs    the include directory added"
    echo "  -showme:libdirs    the library directory added"
    echo "  -showme:libs       the libraries added"
    echo "  -showme:version    this library's version"
    echo "  -showme:help       this help"
    exit 0 ;;
  *) echo "$me: unknown option -showme:$show (try -showme:help)" >&2; exit 1 ;;
esac
if [ "$link" = 1 ]; then
  exec $compiler -I'{include}' "$@" -L"$dir" -lshmem -Wl,-rpath,"$dir"
else
  exec $compiler -I'{include}' "$@"
fi
"#,
        include = include.display()
    )
}

/// Writes `script` to `path` (unless it is there already) and makes it executable.
fn write_wrapper(path: &Path, script: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(script)
        && let Err(e) = std::fs::write(path, script)
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
