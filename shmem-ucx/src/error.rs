//! UCX status codes as a Rust error type.

use std::ffi::CStr;
use std::sync::{Mutex, PoisonError};

use crate::sys;

/// A failed UCX call: which call, its `ucs_status_t` and UCX's text for it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{op}: {message} (UCX status {status})")]
pub struct Error {
    /// The UCX function (or operation of this crate) that failed, e.g. `"ucp_put_nbx"`.
    pub op: &'static str,
    /// The `ucs_status_t` value (negative, e.g. `-6` for `UCS_ERR_UNREACHABLE`).
    pub status: i32,
    /// UCX's description of `status` (`ucs_status_string`), sometimes with detail added by
    /// this crate.
    pub message: String,
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Builds the error for a non-OK `status` returned by `op`.
    #[cold]
    #[inline(never)]
    pub(crate) fn from_status(op: &'static str, status: sys::ucs_status_t) -> Error {
        // For codes it does not know, ucs_status_string formats into one static buffer: two
        // threads doing that at once would race on it, so this crate's calls take turns.
        static TURN: Mutex<()> = Mutex::new(());
        let _turn = TURN.lock().unwrap_or_else(PoisonError::into_inner);
        // SAFETY: ucs_status_string accepts any status value and returns either NULL or a
        // pointer to a NUL-terminated string: static text, or the static buffer above, which
        // no call of this crate rewrites while `_turn` is held; we copy it before releasing.
        let message = unsafe {
            let text = sys::ucs_status_string(status);
            if text.is_null() {
                format!("unknown UCX status {status}")
            } else {
                CStr::from_ptr(text).to_string_lossy().into_owned()
            }
        };
        Error {
            op,
            status: i32::from(status),
            message,
        }
    }

    /// Like [`Error::from_status`], with an explanation appended to UCX's text.
    #[cold]
    #[inline(never)]
    pub(crate) fn with_detail(op: &'static str, status: sys::ucs_status_t, detail: &str) -> Error {
        let mut e = Error::from_status(op, status);
        e.message.push_str(": ");
        e.message.push_str(detail);
        e
    }

    /// Whether UCX reported `UCS_ERR_UNREACHABLE` ("Destination is unreachable"), e.g. from
    /// [`RemoteKey::ptr`](crate::RemoteKey::ptr) when there is no shared-memory path to the
    /// peer's memory.
    pub fn is_unreachable(&self) -> bool {
        self.status == i32::from(sys::UCS_ERR_UNREACHABLE)
    }
}

/// `Ok(())` for `UCS_OK`, else the error for `op`.
#[inline]
pub(crate) fn check(op: &'static str, status: sys::ucs_status_t) -> Result<()> {
    if status == sys::UCS_OK {
        Ok(())
    } else {
        Err(Error::from_status(op, status))
    }
}
