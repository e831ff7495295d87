//! `ucp_rkey_h`: an unpacked remote key.

use std::ffi::c_void;
use std::ptr;
use std::sync::Arc;

use crate::endpoint::EpInner;
use crate::error::{Result, check};
use crate::sys;

/// A peer's remote key, unpacked through an [`Endpoint`](crate::Endpoint)
/// ([`unpack_rkey`](crate::Endpoint::unpack_rkey)); `ucp_rkey_destroy` on drop.
///
/// UCX requires a key to be destroyed before the endpoint it was unpacked through is
/// closed; the key therefore holds that endpoint's inner state, and the endpoint is
/// closed only after its last key is dropped (see [`Endpoint::close`](crate::Endpoint::close)).
/// A key is only valid with the endpoint it came from.
#[derive(Debug)]
pub struct RemoteKey {
    raw: sys::ucp_rkey_h,
    endpoint: Arc<EpInner>,
}

// SAFETY: the key handle is not tied to a thread, and after unpacking UCX only reads it
// (ucp_rkey_ptr, RMA calls), so shared use from several threads is fine; destruction
// happens once, in Drop.
unsafe impl Send for RemoteKey {}
// SAFETY: as for Send.
unsafe impl Sync for RemoteKey {}

impl RemoteKey {
    pub(crate) fn new(raw: sys::ucp_rkey_h, endpoint: &Arc<EpInner>) -> RemoteKey {
        RemoteKey {
            raw,
            endpoint: Arc::clone(endpoint),
        }
    }

    /// Whether this key was unpacked through the endpoint owning `inner`.
    #[inline]
    pub(crate) fn endpoint_is(&self, inner: &Arc<EpInner>) -> bool {
        Arc::ptr_eq(&self.endpoint, inner)
    }

    /// A local pointer through which this process can load and store the peer's word at
    /// `remote_addr` directly (`ucp_rkey_ptr`).
    ///
    /// Fails with an error whose [`is_unreachable`](crate::Error::is_unreachable) is true
    /// when there is no shared-memory path to that memory (another node, `UCX_TLS` without
    /// a shared-memory transport, or memory UCX did not allocate itself). The offset between
    /// `remote_addr` and the result is constant for a region, so one call per region is
    /// enough.
    ///
    /// UCX (1.13) does not check that `remote_addr` lies in the key's region: for an
    /// address outside it, the result is the same offset applied, i.e. a pointer that must
    /// not be dereferenced.
    pub fn ptr(&self, remote_addr: u64) -> Result<*mut u8> {
        let mut p: *mut c_void = ptr::null_mut();
        // SAFETY: the key is alive; `p` is a valid out-pointer. Only a raw pointer comes
        // out: dereferencing it is the caller's (unsafe) business.
        let status = unsafe { sys::ucp_rkey_ptr(self.raw, remote_addr, &mut p) };
        check("ucp_rkey_ptr", status)?;
        Ok(p.cast())
    }

    /// The raw `ucp_rkey_h`, valid while this `RemoteKey` lives.
    #[inline]
    pub fn raw(&self) -> sys::ucp_rkey_h {
        self.raw
    }
}

impl Drop for RemoteKey {
    fn drop(&mut self) {
        // SAFETY: `raw` came from ucp_ep_rkey_unpack and is destroyed once, while its
        // endpoint is still open (`endpoint` is dropped after this body).
        unsafe { sys::ucp_rkey_destroy(self.raw) };
    }
}
