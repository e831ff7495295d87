//! The `SHMEM_*` settings a PE reads: the launcher's environment
//! (`shmem_launch::client::LaunchEnv::from_vars`, with any variable set to any bytes, UTF-8 or
//! not, or unset), the rendezvous timeout, and shmem-core's `SHMEM_SYMMETRIC_SIZE`,
//! `SHMEM_PROGRESS_THREAD`, `SHMEM_COALESCE`, `SHMEM_CONNECT` and `UCX_TLS`.
//!
//! Input: per variable a presence byte and a short value; then the same values go to the
//! other parsers. Checks: no panic; what `from_vars` accepts is consistent (PE below the job
//! size, node and local rank below their counts, counts within the job, a positive timeout);
//! a size is what its digits and suffix say.
#![no_main]

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use libfuzzer_sys::fuzz_target;
use shmem_fuzz::Input;
use shmem_launch::auth::Secret;
use shmem_launch::client::LaunchEnv;
use shmem_launch::wire::{self, parse_timeout_secs};

const VARS: [&str; 11] = [
    wire::ENV_RENDEZVOUS,
    wire::ENV_PE,
    wire::ENV_NPES,
    wire::ENV_JOB_ID,
    wire::ENV_JOB_SECRET,
    wire::ENV_INIT_TIMEOUT,
    wire::ENV_NODE,
    wire::ENV_NNODES,
    wire::ENV_LOCAL_RANK,
    wire::ENV_LOCAL_SIZE,
    wire::ENV_BIND_TO,
];

/// `parse_size`'s answer recomputed the slow way (u128, no suffix tricks).
fn size_model(text: &str) -> Option<usize> {
    let t = text.trim();
    let t = t.strip_suffix(['b', 'B']).unwrap_or(t);
    let (digits, shift) = match t.as_bytes().last()? {
        b'k' | b'K' => (&t[..t.len() - 1], 10),
        b'm' | b'M' => (&t[..t.len() - 1], 20),
        b'g' | b'G' => (&t[..t.len() - 1], 30),
        b't' | b'T' => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    let n: u128 = digits.trim().parse().ok()?;
    if n > usize::MAX as u128 {
        return None;
    }
    usize::try_from(n << shift).ok()
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut values: Vec<Option<Vec<u8>>> = Vec::new();
    for name in VARS {
        let present = input.u8();
        let v = input.short().to_vec();
        // Mostly valid values, so that the later checks are reached.
        let v = match (present % 4, name) {
            (0, _) => None,
            (1, n) if n == wire::ENV_JOB_SECRET => Some("3c".repeat(32).into_bytes()),
            _ => Some(v),
        };
        values.push(v);
    }
    let get = |name: &'static str| -> Option<OsString> {
        let i = VARS.iter().position(|&n| n == name)?;
        values[i].clone().map(OsString::from_vec)
    };
    if let Ok(Some(env)) = LaunchEnv::from_vars(get) {
        assert!(env.npes >= 1 && env.pe < env.npes, "{env:?}");
        assert!(env.nnodes >= 1 && env.nnodes <= env.npes && env.node < env.nnodes);
        if let Some((rank, size)) = env.local {
            assert!(size >= 1 && size <= env.npes && rank < size);
        }
        assert!(!env.timeout.is_zero());
        assert!(!env.rendezvous.trim().is_empty());
    }
    for v in values.iter().flatten() {
        let text = String::from_utf8_lossy(v);
        if let Ok(d) = parse_timeout_secs(&text) {
            assert!(!d.is_zero() && d.as_secs() <= 1_000_000_000);
        }
        if let Ok(s) = Secret::from_hex(&text) {
            assert_eq!(s.to_hex(), text.trim().to_ascii_lowercase());
        }
        assert_eq!(
            shmem_core::fuzzing::parse_size(&text),
            size_model(&text),
            "{text:?}"
        );
        for spans in [false, true] {
            let _ = shmem_core::fuzzing::progress_thread(Some(&text), spans);
        }
        if let Ok(on) = shmem_core::fuzzing::coalesce(Some(&text)) {
            let t = text.trim().to_ascii_lowercase();
            let known = ["", "1", "on", "yes", "true", "0", "off", "no", "false"];
            assert!(known.contains(&t.as_str()), "{text:?}");
            assert_eq!(on, !["0", "off", "no", "false"].contains(&t.as_str()));
        }
        let n = v.len() * 37;
        if let Ok(eager) = shmem_core::fuzzing::connect_at_start(Some(&text), n) {
            let t = text.trim().to_ascii_lowercase();
            assert!(t.is_empty() || ["auto", "eager", "lazy"].contains(&t.as_str()));
            assert!(eager || t != "eager");
        }
        let _ = shmem_core::fuzzing::shared_memory_allowed(Some(&text));
    }
});
