//! The 8-byte words that PEs update in each other's memory: signal words (`put_signal`) and the
//! runtime's epoch flags. How one is updated travels with the data ([`SignalKind`]), and the
//! update is one atomic with release ordering, whoever applies it (the writer through a mapping,
//! or the target's handler of an active message).
//!
//! Part of the memory layer: uses nothing of the crate.

use std::sync::atomic::{AtomicU64, Ordering};

/// How a put with signal updates its signal word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SignalKind {
    /// Store the value (`SHMEM_SIGNAL_SET`).
    Set = 0,
    /// Add the value (`SHMEM_SIGNAL_ADD`).
    Add = 1,
    /// Raise the word to at least the value (an epoch flag).
    Max = 2,
}

impl SignalKind {
    /// The kind sent as `code` in a message, if it is one.
    pub(crate) fn from_wire(code: u64) -> Option<SignalKind> {
        match code {
            0 => Some(SignalKind::Set),
            1 => Some(SignalKind::Add),
            2 => Some(SignalKind::Max),
            _ => None,
        }
    }

    /// Updates `word` with `value` as this kind says, with release ordering: whoever sees the
    /// new value sees what this thread wrote (or had delivered) before.
    pub(crate) fn apply(self, word: &AtomicU64, value: u64) {
        match self {
            SignalKind::Set => word.store(value, Ordering::Release),
            SignalKind::Add => {
                word.fetch_add(value, Ordering::Release);
            }
            SignalKind::Max => {
                word.fetch_max(value, Ordering::Release);
            }
        }
    }
}
