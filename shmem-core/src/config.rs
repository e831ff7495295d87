//! Run-time configuration from environment variables.
//!
//! Base layer: uses `error` only (the runtime reads the settings at start-up).

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Default size of the user part of the symmetric heap: 256 MiB per PE. Pages are only backed when
/// touched, so 16 PEs on a 24 GiB machine fit comfortably.
pub(crate) const DEFAULT_HEAP_SIZE: usize = 256 << 20;

/// Parses a size with an optional K/M/G/T suffix (powers of 1024, either case, optional trailing
/// `B`), as the OpenSHMEM specification allows for `SHMEM_SYMMETRIC_SIZE`.
pub(crate) fn parse_size(text: &str) -> Option<usize> {
    let t = text.trim();
    let t = t.strip_suffix(['b', 'B']).unwrap_or(t);
    let (digits, shift) = match t.chars().last()? {
        'k' | 'K' => (&t[..t.len() - 1], 10),
        'm' | 'M' => (&t[..t.len() - 1], 20),
        'g' | 'G' => (&t[..t.len() - 1], 30),
        't' | 'T' => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    let n: usize = digits.trim().parse().ok()?;
    n.checked_mul(1usize.checked_shl(shift)?)
}

/// The user heap size: `SHMEM_SYMMETRIC_SIZE`, or [`DEFAULT_HEAP_SIZE`].
///
/// Sizes above the machine's physical memory are refused: the heap costs memory only for the
/// pages a program touches, but a size no machine could back is a typo, better refused at once.
pub(crate) fn heap_size() -> Result<usize> {
    let Ok(v) = std::env::var("SHMEM_SYMMETRIC_SIZE") else {
        return Ok(DEFAULT_HEAP_SIZE);
    };
    let bad = |reason: String| Error::BadEnv {
        name: "SHMEM_SYMMETRIC_SIZE",
        value: v.clone(),
        reason,
    };
    let size = parse_size(&v).ok_or_else(|| {
        bad("expected a byte count with an optional K, M, G or T suffix, such as 512M".into())
    })?;
    let phys = physical_memory();
    if size == 0 || size > phys {
        return Err(bad(format!(
            "must be between 1 byte and this machine's physical memory ({phys} bytes)"
        )));
    }
    Ok(size)
}

/// Heap bytes per PE that a foreign-language layer keeps for itself (see
/// `raw::reserve_heap_per_pe`), mapped on top of `SHMEM_SYMMETRIC_SIZE`.
static HEAP_RESERVE_PER_PE: AtomicUsize = AtomicUsize::new(0);

/// Adds `bytes` per PE to the heap that start-up maps on top of the user's size.
pub(crate) fn reserve_heap_per_pe(bytes: usize) {
    let _ = HEAP_RESERVE_PER_PE.fetch_update(Ordering::AcqRel, Ordering::Acquire, |r| {
        Some(r.saturating_add(bytes))
    });
}

/// The bytes to map on top of the user heap for a job of `n_pes` PEs: the reservations of
/// [`reserve_heap_per_pe`] times `n_pes`, each rounded up to whole blocks of `block` bytes
/// (the allocator's granule); `None` on overflow.
pub(crate) fn heap_reserve(n_pes: usize, block: usize) -> Option<usize> {
    HEAP_RESERVE_PER_PE
        .load(Ordering::Acquire)
        .checked_mul(n_pes)?
        .checked_next_multiple_of(block)
}

/// Physical memory in bytes (`usize::MAX` if it cannot be determined).
fn physical_memory() -> usize {
    // SAFETY: sysconf only reads system configuration.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages <= 0 || page <= 0 {
        return usize::MAX;
    }
    (pages as usize).saturating_mul(page as usize)
}

/// The value of an on/off setting, trimmed and lower-cased: `Some` for 1/on/yes/true and
/// 0/off/no/false, `None` for anything else.
fn switch(v: &str) -> Option<bool> {
    match v {
        "1" | "on" | "yes" | "true" => Some(true),
        "0" | "off" | "no" | "false" => Some(false),
        _ => None,
    }
}

/// Whether to run a progress thread: `SHMEM_PROGRESS_THREAD` is `auto` (the default: when some
/// peer is reached through the network, that is when the job spans nodes or `UCX_TLS` leaves
/// out shared memory (`through_network`), because puts, gets and atomics over the network need
/// the target's progress), `on` or `off` (also 1/0, yes/no, true/false).
pub(crate) fn progress_thread(through_network: bool) -> Result<bool> {
    parse_progress_thread(std::env::var("SHMEM_PROGRESS_THREAD").ok(), through_network)
}

pub(crate) fn parse_progress_thread(value: Option<String>, through_network: bool) -> Result<bool> {
    let Some(v) = value else {
        return Ok(through_network);
    };
    let t = v.trim().to_ascii_lowercase();
    match switch(&t) {
        Some(on) => Ok(on),
        None if t.is_empty() || t == "auto" => Ok(through_network),
        None => Err(Error::BadEnv {
            name: "SHMEM_PROGRESS_THREAD",
            value: v.clone(),
            reason: "expected auto, on or off".into(),
        }),
    }
}

/// Whether small puts in a stream may wait in batches, and small non-blocking gets join runs,
/// where UCX emulates RMA (see `transport::am::coalesces` and `transport::am::runs`):
/// `SHMEM_COALESCE` is `on` (the default) or `off` (also 1/0, yes/no, true/false). Batches
/// need a progress thread that waits for events (without one no put waits); runs do not.
pub(crate) fn coalesce() -> Result<bool> {
    parse_coalesce(std::env::var("SHMEM_COALESCE").ok())
}

pub(crate) fn parse_coalesce(value: Option<String>) -> Result<bool> {
    let Some(v) = value else {
        return Ok(true);
    };
    let t = v.trim().to_ascii_lowercase();
    match switch(&t) {
        Some(on) => Ok(on),
        None if t.is_empty() => Ok(true),
        None => Err(Error::BadEnv {
            name: "SHMEM_COALESCE",
            value: v.clone(),
            reason: "expected on or off".into(),
        }),
    }
}

/// Up to this many PEs reached through UCX, `SHMEM_CONNECT=auto` connects their endpoints at
/// start-up; beyond, at first contact. Making a UCX endpoint over tcp costs about 1-2 ms of CPU
/// here (lane selection, keys): at start-up, while every PE progresses, that is a fraction of a
/// second for a few hundred peers and the first operation to each is as fast as any other; for
/// thousands of peers it would be seconds and memory spent on peers a program may never touch.
pub(crate) const EAGER_CONNECT_LIMIT: usize = 256;

/// Whether start-up connects the endpoints to the `ucx_peers` PEs reached through UCX:
/// `SHMEM_CONNECT` is `auto` (the default: up to [`EAGER_CONNECT_LIMIT`] such PEs), `eager`
/// (always) or `lazy` (never: each at first contact).
pub(crate) fn connect_at_start(ucx_peers: usize) -> Result<bool> {
    parse_connect(std::env::var("SHMEM_CONNECT").ok(), ucx_peers)
}

pub(crate) fn parse_connect(value: Option<String>, ucx_peers: usize) -> Result<bool> {
    match value
        .as_deref()
        .map(|v| v.trim().to_ascii_lowercase())
        .as_deref()
    {
        None | Some("") | Some("auto") => Ok(ucx_peers <= EAGER_CONNECT_LIMIT),
        Some("eager") => Ok(true),
        Some("lazy") => Ok(false),
        Some(_) => Err(Error::BadEnv {
            name: "SHMEM_CONNECT",
            value: value.unwrap_or_default(),
            reason: "expected auto, eager or lazy".into(),
        }),
    }
}

/// Whether PEs of one node may reach each other's memory by load and store: yes unless the
/// user's `UCX_TLS` leaves out shared memory (`UCX_TLS=tcp,self` is how a job on one node sends
/// everything through UCX, as it would across nodes).
pub(crate) fn shared_memory_allowed() -> bool {
    tls_allows_shared_memory(std::env::var("UCX_TLS").ok().as_deref())
}

/// The rule of [`shared_memory_allowed`] for a `UCX_TLS` value. UCX's names for its
/// shared-memory transports: `sm` and `shm` (all of them), `mm` (the mapped ones), `posix`,
/// `sysv`, `xpmem`; `all` names every transport; a list that starts with `^` names those left
/// out. Copy-only transports (`cma`, `knem`) map nothing, so they do not count.
pub(crate) fn tls_allows_shared_memory(tls: Option<&str>) -> bool {
    let Some(tls) = tls.map(str::trim).filter(|t| !t.is_empty()) else {
        return true;
    };
    let (negated, list) = match tls.strip_prefix('^') {
        Some(rest) => (true, rest),
        None => (false, tls),
    };
    let names: Vec<String> = list
        .split(',')
        .map(|n| {
            n.trim()
                .split(':')
                .next()
                .unwrap_or("")
                .to_ascii_lowercase()
        })
        .collect();
    let has = |n: &str| names.iter().any(|x| x == n);
    if negated {
        !(has("sm") || has("shm") || has("mm") || has("all") || (has("posix") && has("sysv")))
    } else {
        ["all", "sm", "shm", "mm", "posix", "sysv", "xpmem"]
            .iter()
            .any(|n| has(n))
    }
}

#[cfg(test)]
mod tests {
    use super::{EAGER_CONNECT_LIMIT, parse_connect, parse_size, tls_allows_shared_memory};

    #[test]
    fn connect_setting() {
        let at = |v: Option<&str>, n| parse_connect(v.map(String::from), n);
        assert!(at(None, 0).expect("default"));
        assert!(at(None, EAGER_CONNECT_LIMIT).expect("default"));
        assert!(!at(None, EAGER_CONNECT_LIMIT + 1).expect("default"));
        assert!(at(Some(" Eager "), 1 << 20).expect("eager"));
        assert!(!at(Some("lazy"), 1).expect("lazy"));
        assert!(at(Some("auto"), 3).expect("auto"));
        let e = at(Some("soon"), 1).expect_err("bad value");
        assert!(e.to_string().contains("SHMEM_CONNECT"), "{e}");
    }

    #[test]
    fn shared_memory_follows_ucx_tls() {
        for (tls, want) in [
            (None, true),
            (Some(""), true),
            (Some("tcp,self"), false),
            (Some("tcp"), false),
            (Some("cma,tcp,self"), false),
            (Some("sm,self"), true),
            (Some("shm,tcp"), true),
            (Some("posix,self"), true),
            (Some("SysV"), true),
            (Some("all"), true),
            (Some("^tcp"), true),
            (Some("^sm"), false),
            (Some("^mm,ib"), false),
            (Some("^posix"), true),
            (Some("^posix,sysv"), false),
            (Some(" tcp:aux , self "), false),
        ] {
            assert_eq!(tls_allows_shared_memory(tls), want, "UCX_TLS={tls:?}");
        }
    }

    #[test]
    fn sizes_with_suffixes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("64K"), Some(64 << 10));
        assert_eq!(parse_size("512m"), Some(512 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("1GB"), Some(1 << 30));
        assert_eq!(parse_size(" 3 M "), Some(3 << 20));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("-1K"), None);
        assert_eq!(parse_size("99999999999999999999T"), None);
    }

    #[test]
    fn coalesce_setting() {
        let p = |v: Option<&str>| super::parse_coalesce(v.map(String::from));
        assert!(p(None).unwrap() && p(Some("on")).unwrap() && p(Some(" TRUE ")).unwrap());
        assert!(!p(Some("off")).unwrap() && !p(Some("0")).unwrap());
        let e = p(Some("sometimes")).unwrap_err().to_string();
        assert!(
            e.contains("SHMEM_COALESCE") && e.contains("sometimes"),
            "{e}"
        );
    }

    #[test]
    fn progress_thread_setting() {
        let p = |v: Option<&str>, spans| super::parse_progress_thread(v.map(String::from), spans);
        assert!(!p(None, false).unwrap() && p(None, true).unwrap());
        assert!(p(Some("auto"), true).unwrap() && !p(Some(" Auto "), false).unwrap());
        assert!(p(Some("on"), false).unwrap() && p(Some("1"), false).unwrap());
        assert!(!p(Some("OFF"), true).unwrap() && !p(Some("no"), true).unwrap());
        let e = p(Some("sometimes"), true).unwrap_err().to_string();
        assert!(
            e.contains("SHMEM_PROGRESS_THREAD") && e.contains("sometimes"),
            "{e}"
        );
    }
}
