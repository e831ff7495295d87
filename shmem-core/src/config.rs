//! Run-time configuration from environment variables.

use crate::error::{Error, Result};
use std::time::Duration;

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
pub(crate) fn heap_size() -> Result<usize> {
    match std::env::var("SHMEM_SYMMETRIC_SIZE") {
        Err(_) => Ok(DEFAULT_HEAP_SIZE),
        Ok(v) => parse_size(&v).ok_or_else(|| Error::BadEnv {
            name: "SHMEM_SYMMETRIC_SIZE",
            value: v.clone(),
            reason: "expected a byte count with an optional K, M, G or T suffix, such as 512M".into(),
        }),
    }
}

/// How long `init` waits for every PE at the rendezvous (`SHMEM_INIT_TIMEOUT`, seconds).
#[allow(dead_code)]
pub(crate) fn init_timeout() -> Result<Duration> {
    match std::env::var("SHMEM_INIT_TIMEOUT") {
        Err(_) => Ok(Duration::from_secs(60)),
        Ok(v) => v
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| Error::BadEnv {
                name: "SHMEM_INIT_TIMEOUT",
                value: v.clone(),
                reason: "expected a positive number of seconds".into(),
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
}
