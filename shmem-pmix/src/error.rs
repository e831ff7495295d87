//! PMIx status codes as a Rust error type.

use std::ffi::CStr;

use crate::sys;

/// A failed PMIx operation.
///
/// The text names what was being done, e.g.
/// `PMIx_Get(rank 3, "shmem.peer"): NOT-FOUND (PMIx status -46)`.
///
/// ```
/// use shmem_pmix::Error;
///
/// fn explain(e: &Error) -> String {
///     match e.status() {
///         Some(s) => format!("PMIx said {s}: {e}"),
///         None => format!("refused: {e}"),
///     }
/// }
/// # let _ = explain;
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A PMIx call, or the completion callback of a non-blocking one, reported a failure.
    #[error("{op}: {message} (PMIx status {status})")]
    Status {
        /// The call and its arguments, e.g. `PMIx_Get(rank 3, "shmem.peer")`.
        op: String,
        /// The `pmix_status_t` (negative, e.g. `-46` for `PMIX_ERR_NOT_FOUND`).
        status: i32,
        /// PMIx's text for `status` (`PMIx_Error_string`), e.g. `NOT-FOUND`.
        message: String,
    },
    /// Refused by this crate: an argument PMIx would silently mangle (a key too long or with
    /// a NUL byte), a second [`Pmix`](crate::Pmix) in one process, or an answer of a type
    /// this crate cannot use.
    #[error("{op}: {reason}")]
    Invalid {
        /// The call that was refused, with its arguments.
        op: String,
        /// Why.
        reason: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The error for a non-success `status` returned by (or delivered to the callback of) `op`.
    #[cold]
    #[inline(never)]
    pub(crate) fn from_status(op: String, status: sys::pmix_status_t) -> Error {
        Error::Status {
            op,
            status,
            message: status_text(status),
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn invalid(op: String, reason: impl Into<String>) -> Error {
        Error::Invalid {
            op,
            reason: reason.into(),
        }
    }

    /// The `pmix_status_t` PMIx reported, or `None` when this crate refused the operation
    /// itself ([`Error::Invalid`]).
    ///
    /// ```
    /// # let e = shmem_pmix::Error::Status { op: "PMIx_Commit".into(), status: -1, message: "ERROR".into() };
    /// assert_eq!(e.status(), Some(-1));
    /// ```
    pub fn status(&self) -> Option<i32> {
        match self {
            Error::Status { status, .. } => Some(*status),
            Error::Invalid { .. } => None,
        }
    }

    /// Whether PMIx answered `PMIX_ERR_NOT_FOUND`, e.g. for a key no rank put.
    ///
    /// ```
    /// # let e = shmem_pmix::Error::Status { op: "PMIx_Get".into(), status: -46, message: "NOT-FOUND".into() };
    /// assert!(e.is_not_found());
    /// ```
    pub fn is_not_found(&self) -> bool {
        self.status() == Some(sys::PMIX_ERR_NOT_FOUND)
    }
}

/// PMIx's text for `status`.
fn status_text(status: sys::pmix_status_t) -> String {
    // SAFETY: PMIx_Error_string only looks `status` up in a static table (it needs no
    // initialized library) and returns a static NUL-terminated string, or NULL in theory; we
    // copy it at once.
    unsafe {
        let text = sys::PMIx_Error_string(status);
        if text.is_null() {
            format!("unknown PMIx status {status}")
        } else {
            CStr::from_ptr(text).to_string_lossy().into_owned()
        }
    }
}

/// `Ok(())` for `PMIX_SUCCESS`, else the error for the operation `op` describes (built only on
/// failure).
#[inline]
pub(crate) fn check(status: sys::pmix_status_t, op: impl FnOnce() -> String) -> Result<()> {
    if status == sys::PMIX_SUCCESS {
        Ok(())
    } else {
        Err(Error::from_status(op(), status))
    }
}
