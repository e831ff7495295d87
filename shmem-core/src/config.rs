//! Run-time configuration from environment variables.
//!
//! Base layer: uses `error` only (the runtime reads the settings at start-up).

use crate::error::{Error, Result};

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
/// Sizes above the machine's physical memory are refused: the heap is shared memory that UCX
/// backs with a file in `/dev/shm`, and an absurd size would fill it (and the machine's memory)
/// instead of failing.
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

/// Whether to run a progress thread: `SHMEM_PROGRESS_THREAD` is `auto` (the default: only when
/// the job spans nodes, where atomics over the network need the target's progress), `on` or
/// `off` (also 1/0, yes/no, true/false).
pub(crate) fn progress_thread(spans_nodes: bool) -> Result<bool> {
    parse_progress_thread(std::env::var("SHMEM_PROGRESS_THREAD").ok(), spans_nodes)
}

fn parse_progress_thread(value: Option<String>, spans_nodes: bool) -> Result<bool> {
    let Some(v) = value else {
        return Ok(spans_nodes);
    };
    match v.trim().to_ascii_lowercase().as_str() {
        "" | "auto" => Ok(spans_nodes),
        "1" | "on" | "yes" | "true" => Ok(true),
        "0" | "off" | "no" | "false" => Ok(false),
        _ => Err(Error::BadEnv {
            name: "SHMEM_PROGRESS_THREAD",
            value: v.clone(),
            reason: "expected auto, on or off".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_size;

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
