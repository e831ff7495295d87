//! Finds the PMIx client library with pkg-config, links it with an rpath, and generates the
//! `sys` bindings with bindgen.
//!
//! A normal build always runs bindgen on the system's headers (`libpmix-dev`), so the bindings
//! match the PMIx that is linked. With `DOCS_RS` set (docs.rs, whose builders have no PMIx), the
//! build uses the checked-in copy `src/bindings/pmix.rs` instead and runs neither pkg-config nor
//! bindgen, and prints no link directives: documentation is all that such a build makes.
//! `scripts/regen-bindings.sh` regenerates the copy from this script's own output.

use std::env;
use std::path::PathBuf;

/// The checked-in bindings that a `DOCS_RS` build uses, relative to the crate's directory.
const CHECKED_IN: &str = "src/bindings/pmix.rs";

/// Oldest PMIx this crate is built and tested against (`PMIx_Value_destruct` is a function,
/// not a macro, from here on).
const MIN_VERSION: (u32, u32) = (4, 2);

/// PMIx functions the safe layer calls.
const FUNCTIONS: &str = "PMIx_(Init|Initialized|Finalize|Get|Put|Commit|Fence_nb|Abort|Error_string|\
Value_destruct)";

/// Types whose fields the safe layer sets by hand (the PMIX_* "functions" that are macros).
const TYPES: &str = "pmix_(status_t|rank_t|scope_t|data_type_t|proc_t|value_t|info_t|\
byte_object_t|op_cbfunc_t)";

/// `#define`d constants the safe layer uses: statuses, data types, scope, attribute keys.
const VARS: &str = "PMIX_(SUCCESS|OPERATION_SUCCEEDED|ERR_NOT_FOUND|ERR_BAD_PARAM|\
ERR_TYPE_MISMATCH|ERR_UNREACH|BOOL|STRING|SIZE|INT|INT32|UINT|UINT8|UINT16|UINT32|UINT64|\
PROC_RANK|BYTE_OBJECT|GLOBAL|MAX_NSLEN|MAX_KEYLEN|JOB_SIZE|LOCAL_PEERS|COLLECT_DATA)";

/// Gives the `#define`d integer constants the C type they are used as, so that the safe layer
/// needs no casts: statuses are `pmix_status_t`, data types `pmix_data_type_t`, scopes
/// `pmix_scope_t`.
#[derive(Debug)]
struct ConstTypes;

impl bindgen::callbacks::ParseCallbacks for ConstTypes {
    fn int_macro(&self, name: &str, _value: i64) -> Option<bindgen::callbacks::IntKind> {
        use bindgen::callbacks::IntKind;
        let kind = match name {
            "PMIX_SUCCESS" | "PMIX_OPERATION_SUCCEEDED" => IntKind::Int,
            n if n.starts_with("PMIX_ERR_") => IntKind::Int,
            "PMIX_GLOBAL" => IntKind::U8,
            "PMIX_MAX_NSLEN" | "PMIX_MAX_KEYLEN" => IntKind::Custom {
                name: "usize",
                is_signed: false,
            },
            // The remaining allowlisted integer macros are data types.
            n if n.starts_with("PMIX_") => IntKind::U16,
            _ => return None,
        };
        Some(kind)
    }
}

fn parse_version(v: &str) -> Option<(u32, u32)> {
    let mut it = v.trim().split('.');
    let major = it.next()?.parse().ok()?;
    // "4.2.2rc2": only the leading digits of each part count.
    let minor: String = it
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some((major, minor.parse().ok()?))
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=wrapper.h");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=DOCS_RS");

    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("pmix.rs");
    if env::var_os("DOCS_RS").is_some() {
        println!("cargo:rerun-if-changed={CHECKED_IN}");
        if let Err(e) = std::fs::copy(CHECKED_IN, &out) {
            panic!(
                "DOCS_RS: cannot copy {CHECKED_IN} to {}: {e}",
                out.display()
            );
        }
        return;
    }

    // Metadata off: the link lines are printed below, with the rpath in one argument.
    let pmix = match pkg_config::Config::new()
        .cargo_metadata(false)
        .probe("pmix")
    {
        Ok(lib) => lib,
        Err(e) => panic!(
            "shmem-pmix needs the PMIx client library >= {}.{} found through pkg-config \
             (`pkg-config --libs pmix`), but the probe failed: {e}\n\
             On Debian/Ubuntu: apt-get install libpmix-dev",
            MIN_VERSION.0, MIN_VERSION.1
        ),
    };
    match parse_version(&pmix.version) {
        Some(v) if v >= MIN_VERSION => {}
        _ => panic!(
            "shmem-pmix needs PMIx >= {}.{}, but pkg-config found PMIx {:?}.\n\
             Install a newer one (Debian/Ubuntu: apt-get install libpmix-dev) or point \
             PKG_CONFIG_PATH at it.",
            MIN_VERSION.0, MIN_VERSION.1, pmix.version
        ),
    }

    for dir in &pmix.link_paths {
        println!("cargo:rustc-link-search=native={}", dir.display());
        // Debian keeps libpmix in a private directory (…/pmix2/lib), which pkg-config also
        // names as an rpath. The rpath reaches this crate's own tests and examples; crates
        // that link their binaries against shmem-pmix can repeat it from DEP_PMIX_RPATH.
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    }
    for lib in &pmix.libs {
        println!("cargo:rustc-link-lib={lib}");
    }
    if !pmix.libs.iter().any(|l| l == "pmix") {
        println!("cargo:rustc-link-lib=pmix");
    }
    let rpath: Vec<String> = pmix
        .link_paths
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    println!("cargo:rpath={}", rpath.join(":"));
    println!("cargo:version={}", pmix.version);

    let mut builder = bindgen::Builder::default()
        .header("wrapper.h")
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .parse_callbacks(Box::new(ConstTypes))
        .allowlist_function(FUNCTIONS)
        .allowlist_type(TYPES)
        .allowlist_var(VARS)
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .derive_default(true)
        .layout_tests(false)
        .generate_comments(false);
    // pkg-config also lists /usr/include, which clang searches anyway; naming it with -I would
    // put it ahead of clang's own headers.
    for inc in pmix
        .include_paths
        .iter()
        .filter(|p| p.as_path() != std::path::Path::new("/usr/include"))
    {
        builder = builder.clang_arg(format!("-I{}", inc.display()));
    }
    let bindings = builder
        .generate()
        .unwrap_or_else(|e| panic!("bindgen failed on <pmix.h>: {e}"));
    bindings
        .write_to_file(&out)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
}
