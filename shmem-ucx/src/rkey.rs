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

// SAFETY: a `ucp_rkey_h` is a heap object of its worker, not of a thread. It is destroyed
// once, in Drop, while the endpoint it was unpacked through is still open and its worker
// alive (`endpoint` holds both), so any thread may drop it.
unsafe impl Send for RemoteKey {}
// SAFETY: UCX writes a key after unpacking only inside RMA and atomic calls (its lazily
// resolved protocol cache), which `Endpoint::check_rkey` limits to the endpoint the key
// came from, so they all run under that one worker's lock in thread mode Multi (other modes:
// the promise of the unsafe `create_worker_unsynchronized`'s caller); `ucp_rkey_ptr` only
// reads the unpacked transport keys, which nothing writes after unpacking.
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
    ///
    /// The pointer is only valid while this `RemoteKey` lives (UCX maps the peer's memory
    /// into this process when it unpacks the key, and unmaps it when the key is destroyed)
    /// and while the peer keeps the region mapped; it is up to the caller to ensure both
    /// before dereferencing it, and to synchronize with the peer's own accesses.
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
