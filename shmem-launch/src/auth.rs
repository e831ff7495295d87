//! The job secret and what is proved with it: the launcher and every PE share a random secret
//! ([`Secret`], 256 bits from the kernel's `getrandom`), and every connection and every start-up
//! record is checked with an HMAC-SHA256 keyed by it, so that only processes that were given the
//! secret can take part in the job.
//!
//! - **Connections.** The launcher sends a fresh random nonce first ([`Msg::Challenge`]); the
//!   PE's hello carries a nonce of its own and the HMAC of both nonces and the hello's fields
//!   ([`hello_mac`]); the launcher answers with the HMAC of the nonces the other way round
//!   ([`launcher_mac`]), so each side knows the other holds the secret, and the secret never
//!   travels.
//! - **Records.** Every blob a PE contributes to an allgather carries a tag: the HMAC, under a key
//!   of that PE's own ([`record_key`]), of the job id, the collective's number and the blob
//!   ([`RecordKey::tag`]). Every PE checks every record it receives before it uses it.
//!
//! The secret reaches the PEs through the environment ([`ENV_JOB_SECRET`], hexadecimal) on the
//! launcher's host, and on the start command's standard input elsewhere: never on a command line.
//!
//! ```
//! use shmem_launch::auth::{Secret, record_key};
//!
//! let secret = Secret::from_hex(&"ab".repeat(32))?;
//! assert_eq!(Secret::from_hex(&secret.to_hex())?, secret);
//! assert_eq!(format!("{secret:?}"), "Secret(..)"); // never printed
//! let key = record_key(&secret, 3);
//! let tag = key.tag(7, 1, b"record of PE 3");
//! assert!(key.verify(7, 1, b"record of PE 3", &tag));
//! assert!(!key.verify(7, 1, b"record of PE 4", &tag));
//! assert!(!record_key(&secret, 4).verify(7, 1, b"record of PE 3", &tag));
//! # Ok::<(), String>(())
//! ```
//!
//! [`Msg::Challenge`]: crate::wire::Msg::Challenge
//! [`ENV_JOB_SECRET`]: crate::wire::ENV_JOB_SECRET

use std::io;

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Bytes of a job secret (256 bits).
pub const SECRET_BYTES: usize = 32;
/// Bytes of a nonce.
pub const NONCE_BYTES: usize = 32;
/// Bytes of an HMAC-SHA256.
pub const MAC_BYTES: usize = 32;

/// A nonce of [`NONCE_BYTES`] random bytes.
pub type Nonce = [u8; NONCE_BYTES];
/// An HMAC-SHA256.
pub type Tag = [u8; MAC_BYTES];

type HmacSha256 = Hmac<Sha256>;

/// The job's shared secret. Its `Debug` form does not show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret([u8; SECRET_BYTES]);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    /// A fresh secret from the kernel's random source (`getrandom`).
    pub fn generate() -> io::Result<Secret> {
        let mut b = [0u8; SECRET_BYTES];
        random_bytes(&mut b)?;
        Ok(Secret(b))
    }

    /// Parses [`to_hex`](Self::to_hex)'s form: exactly `2 * SECRET_BYTES` hexadecimal digits
    /// (surrounding blanks are ignored). The error does not quote the text.
    pub fn from_hex(text: &str) -> Result<Secret, String> {
        let text = text.trim().as_bytes();
        if text.len() != 2 * SECRET_BYTES {
            return Err(format!(
                "expected {} hexadecimal digits, got {}",
                2 * SECRET_BYTES,
                text.len()
            ));
        }
        let digit = |c: u8| -> Result<u8, String> {
            (c as char)
                .to_digit(16)
                .map(|d| d as u8)
                .ok_or_else(|| "not a hexadecimal number".to_string())
        };
        let mut b = [0u8; SECRET_BYTES];
        for (i, pair) in text.chunks_exact(2).enumerate() {
            b[i] = digit(pair[0])? << 4 | digit(pair[1])?;
        }
        Ok(Secret(b))
    }

    /// The secret as lowercase hexadecimal, for a PE's environment or a start command's stdin.
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// HMAC-SHA256 of `label` and `parts` under this secret (each part length-prefixed, so that
    /// no two different lists of parts give the same input).
    pub fn mac(&self, label: &str, parts: &[&[u8]]) -> Tag {
        mac_with(&self.0, label, parts)
    }

    /// Whether `tag` is [`mac`](Self::mac) of `label` and `parts`, compared in constant time.
    pub fn verify(&self, label: &str, parts: &[&[u8]], tag: &[u8]) -> bool {
        verify_with(&self.0, label, parts, tag)
    }
}

fn keyed(key: &[u8], label: &str, parts: &[&[u8]]) -> HmacSha256 {
    // HMAC takes keys of any length: `new_from_slice` cannot fail for it.
    let mut m = match HmacSha256::new_from_slice(key) {
        Ok(m) => m,
        Err(_) => unreachable!("HMAC accepts keys of every length"),
    };
    m.update(&(label.len() as u32).to_le_bytes());
    m.update(label.as_bytes());
    for p in parts {
        m.update(&(p.len() as u64).to_le_bytes());
        m.update(p);
    }
    m
}

fn mac_with(key: &[u8], label: &str, parts: &[&[u8]]) -> Tag {
    keyed(key, label, parts).finalize().into_bytes().into()
}

fn verify_with(key: &[u8], label: &str, parts: &[&[u8]], tag: &[u8]) -> bool {
    keyed(key, label, parts).verify_slice(tag).is_ok()
}

/// Fills `buf` from the kernel's random source (the `getrandom` system call, which blocks only
/// until the pool is first initialized at boot).
pub fn random_bytes(buf: &mut [u8]) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        // SAFETY: `rest` is a live, exclusively borrowed buffer of `rest.len()` bytes; getrandom
        // writes at most that many bytes into it.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        done += n as usize;
    }
    Ok(())
}

/// A fresh random nonce.
pub fn nonce() -> io::Result<Nonce> {
    let mut n = [0u8; NONCE_BYTES];
    random_bytes(&mut n)?;
    Ok(n)
}

/// Whether two tags are equal, in time that does not depend on where they differ.
pub fn tags_equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Which connection a hello opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// The synchronous rendezvous connection ([`Msg::Hello`](crate::wire::Msg::Hello)).
    Rendezvous,
    /// The control connection ([`Msg::ControlHello`](crate::wire::Msg::ControlHello)).
    Control,
    /// A host agent's connection ([`Msg::AgentHello`](crate::wire::Msg::AgentHello)).
    Agent,
}

impl Channel {
    fn label(self) -> &'static [u8] {
        match self {
            Channel::Rendezvous => b"rendezvous",
            Channel::Control => b"control",
            Channel::Agent => b"agent",
        }
    }
}

/// The PE's proof in a hello: the HMAC of the launcher's nonce, the PE's nonce, the channel and
/// the hello's fields (`fields`: the message's integers, little-endian, in order).
pub fn hello_mac(
    secret: &Secret,
    channel: Channel,
    launcher_nonce: &Nonce,
    pe_nonce: &Nonce,
    fields: &[u8],
) -> Tag {
    secret.mac(
        "shmem-pe-hello",
        &[channel.label(), launcher_nonce, pe_nonce, fields],
    )
}

/// The launcher's proof in its answer to a good hello: the HMAC of the PE's nonce and the
/// launcher's, in that order, with the channel and the PE number.
pub fn launcher_mac(
    secret: &Secret,
    channel: Channel,
    launcher_nonce: &Nonce,
    pe_nonce: &Nonce,
    pe: u32,
) -> Tag {
    secret.mac(
        "shmem-launcher",
        &[channel.label(), pe_nonce, launcher_nonce, &pe.to_le_bytes()],
    )
}

/// The key with which PE `pe` tags its records.
pub fn record_key(secret: &Secret, pe: u32) -> RecordKey {
    RecordKey(secret.mac("shmem-record-key", &[&pe.to_le_bytes()]))
}

/// A PE's record key (from [`record_key`]). Its `Debug` form does not show it.
#[derive(Clone)]
pub struct RecordKey(Tag);

impl std::fmt::Debug for RecordKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RecordKey(..)")
    }
}

impl RecordKey {
    /// The tag of `blob`, contributed to collective `epoch` of job `job_id`.
    pub fn tag(&self, job_id: u64, epoch: u64, blob: &[u8]) -> Tag {
        mac_with(
            &self.0,
            "shmem-record",
            &[&job_id.to_le_bytes(), &epoch.to_le_bytes(), blob],
        )
    }

    /// Whether `tag` is [`tag`](Self::tag) of these, compared in constant time.
    pub fn verify(&self, job_id: u64, epoch: u64, blob: &[u8], tag: &[u8]) -> bool {
        verify_with(
            &self.0,
            "shmem-record",
            &[&job_id.to_le_bytes(), &epoch.to_le_bytes(), blob],
            tag,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_rejects_garbage() {
        let s = Secret::generate().unwrap();
        assert_eq!(Secret::from_hex(&s.to_hex()).unwrap(), s);
        assert_eq!(s.to_hex().len(), 64);
        for bad in ["", "00", &"g".repeat(64), &"0".repeat(65)] {
            assert!(Secret::from_hex(bad).is_err(), "{bad}");
        }
        // Two secrets differ (256 random bits).
        assert_ne!(Secret::generate().unwrap(), s);
    }

    #[test]
    fn proofs_depend_on_every_input() {
        let s = Secret::from_hex(&"11".repeat(32)).unwrap();
        let t = Secret::from_hex(&"12".repeat(32)).unwrap();
        let (a, b) = ([1u8; 32], [2u8; 32]);
        let m = hello_mac(&s, Channel::Rendezvous, &a, &b, b"x");
        assert_ne!(m, hello_mac(&t, Channel::Rendezvous, &a, &b, b"x"));
        assert_ne!(m, hello_mac(&s, Channel::Control, &a, &b, b"x"));
        assert_ne!(m, hello_mac(&s, Channel::Rendezvous, &b, &a, b"x"));
        assert_ne!(m, hello_mac(&s, Channel::Rendezvous, &a, &b, b"y"));
        assert!(s.verify("shmem-pe-hello", &[b"rendezvous", &a, &b, b"x"], &m));
        assert!(!s.verify("shmem-pe-hello", &[b"rendezvous", &a, &b, b"x"], &m[..31]));
        let l = launcher_mac(&s, Channel::Rendezvous, &a, &b, 0);
        assert_ne!(l, launcher_mac(&s, Channel::Rendezvous, &a, &b, 1));
        assert_ne!(l, launcher_mac(&s, Channel::Rendezvous, &b, &a, 0));
        let k = record_key(&s, 0);
        let tag = k.tag(1, 2, b"blob");
        assert!(k.verify(1, 2, b"blob", &tag));
        assert!(!k.verify(1, 3, b"blob", &tag));
        assert!(!k.verify(2, 2, b"blob", &tag));
    }
}
