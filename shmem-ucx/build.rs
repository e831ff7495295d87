//! Finds UCX with pkg-config and generates the `sys` bindings with bindgen.
//!
//! A normal build always runs bindgen on the system's headers (`libucx-dev`), so the bindings
//! match the UCX that is linked. With `DOCS_RS` set (docs.rs, whose builders have no UCX), the
//! build uses the checked-in copy `src/bindings/ucx.rs` instead and runs neither pkg-config nor
//! bindgen, and prints no link directives: documentation is all that such a build makes.
//! `scripts/regen-bindings.sh` regenerates the copy from this script's own output.

use std::env;
use std::path::PathBuf;

/// The checked-in bindings that a `DOCS_RS` build uses, relative to the crate's directory.
const CHECKED_IN: &str = "src/bindings/ucx.rs";

/// Oldest UCX whose `*_nbx` API and `ucp_request_param_t` layout this crate relies on.
const MIN_VERSION: (u32, u32) = (1, 12);

/// UCP functions the safe layer calls.
const FUNCTIONS: &str = "ucp_(init_version|cleanup|config_read|config_release|config_modify|get_version|\
worker_create|worker_destroy|worker_query|worker_get_address|worker_release_address|\
worker_progress|worker_flush_nbx|worker_fence|worker_get_efd|worker_arm|worker_signal|ep_create|ep_close_nbx|ep_flush_nbx|mem_map|\
mem_unmap|mem_query|rkey_pack|rkey_buffer_release|ep_rkey_unpack|rkey_ptr|rkey_destroy|\
put_nbx|get_nbx|atomic_op_nbx|request_check_status|request_free|worker_set_am_recv_handler|\
am_send_nbx|ep_print_info)|ucs_status_string";

/// Types whose fields or enum constants the safe layer uses.
const TYPES: &str = "ucs_status_t|ucs_status_ptr_t|ucs_thread_mode_t|ucs_memory_type_t|\
ucp_(context_h|worker_h|ep_h|mem_h|rkey_h|config_t|address_t|params_t|worker_params_t|\
worker_attr_t|ep_params_t|mem_map_params_t|mem_attr_t|request_param_t|datatype_t|\
atomic_op_t|feature|params_field|worker_params_field|worker_attr_field|ep_params_field|\
err_handling_mode_t|mem_map_params_field|mem_attr_field|op_attr_t|\
ep_close_flags_t|dt_type|am_handler_param_t|am_handler_param_field|am_recv_param_t|\
am_recv_attr_t|am_recv_callback_t|am_cb_flags|send_am_flags|send_nbx_callback_t)";

/// `#define`d constants the safe layer uses.
const VARS: &str = "UCP_API_(MAJOR|MINOR)|UCP_MEM_MAP_(ALLOCATE|FIXED)";

fn parse_version(v: &str) -> Option<(u32, u32)> {
    let mut it = v.trim().split('.');
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    Some((major, minor))
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=wrapper.h");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=DOCS_RS");

    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("ucp.rs");
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

    let ucx = match pkg_config::Config::new().probe("ucx") {
        Ok(lib) => lib,
        Err(e) => panic!(
            "shmem-ucx needs UCX >= {}.{} found through pkg-config (`pkg-config --libs ucx`), \
             but the probe failed: {e}\nOn Debian/Ubuntu: apt-get install libucx-dev",
            MIN_VERSION.0, MIN_VERSION.1
        ),
    };
    match parse_version(&ucx.version) {
        Some(v) if v >= MIN_VERSION => {}
        _ => panic!(
            "shmem-ucx needs UCX >= {}.{}, but pkg-config found UCX {:?}.\n\
             Install a newer one (Debian/Ubuntu: apt-get install libucx-dev) or point \
             PKG_CONFIG_PATH at it.",
            MIN_VERSION.0, MIN_VERSION.1, ucx.version
        ),
    }
    // pkg-config's probe has already printed cargo:rustc-link-{search,lib} for ucp/uct/ucs.
    // `links = "ucp"` requires at least one rustc-link-lib; make sure ucp itself is there.
    if !ucx.libs.iter().any(|l| l == "ucp") {
        println!("cargo:rustc-link-lib=ucp");
        println!("cargo:rustc-link-lib=ucs");
    }
    println!("cargo:version={}", ucx.version);

    let mut builder = bindgen::Builder::default()
        .header("wrapper.h")
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .allowlist_function(FUNCTIONS)
        .allowlist_type(TYPES)
        .allowlist_var(VARS)
        // Plain integer constants: a C enum may hold values Rust enums would make UB.
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .derive_default(true)
        .layout_tests(false)
        .generate_comments(false);
    for inc in &ucx.include_paths {
        builder = builder.clang_arg(format!("-I{}", inc.display()));
    }
    let bindings = builder
        .generate()
        .unwrap_or_else(|e| panic!("bindgen failed on <ucp/api/ucp.h>: {e}"));
    bindings
        .write_to_file(&out)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
}
