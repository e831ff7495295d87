//! `ucp_mem_h`: memory allocated and registered by UCX.

use std::ffi::c_void;
use std::ptr;
use std::slice;
use std::sync::Arc;

use crate::context::ContextInner;
use crate::error::{Result, check};
use crate::sys;

/// A memory region allocated and registered by UCX (`ucp_mem_map` with
/// `UCP_MEM_MAP_ALLOCATE`); `ucp_mem_unmap` on drop.
///
/// Keeps its context alive. The memory itself is only reachable through the raw
/// [`address`](MemHandle::address); reading and writing it is the caller's business
/// (peers may write it at any time through RMA).
#[derive(Debug)]
pub struct MemHandle {
    raw: sys::ucp_mem_h,
    address: *mut u8,
    len: usize,
    context: Arc<ContextInner>,
}

// SAFETY: a `ucp_mem_h` belongs to its context, not to a thread, and is unmapped once, in
// Drop, while the context is alive (`context`). `address` is only a number to this type: the
// memory is never read or written here, and is handed out only as a raw pointer, whose use
// is unsafe and the caller's to get right.
unsafe impl Send for MemHandle {}
// SAFETY: `&MemHandle` only reads the fields and packs keys (`ucp_rkey_pack`), which UCX
// serializes with the context lock of thread-shared contexts (every context but those from
// the unsafe `Context::new_unsynchronized`, whose caller promises the exclusion).
unsafe impl Sync for MemHandle {}

impl MemHandle {
    /// Allocates `length` bytes, at `hint` if UCX can (null: anywhere), or exactly there with
    /// `fixed` (the caller then owns the range, see `Context::mem_map_alloc_fixed`).
    pub(crate) fn alloc(
        context: &Arc<ContextInner>,
        length: usize,
        hint: *mut u8,
        fixed: bool,
    ) -> Result<MemHandle> {
        let mut flags = sys::UCP_MEM_MAP_ALLOCATE;
        if fixed {
            flags |= sys::UCP_MEM_MAP_FIXED;
        }
        Self::map(context, length, hint, flags)
    }

    /// Registers `length` bytes the caller already mapped at `address` (`ucp_mem_map` without
    /// `UCP_MEM_MAP_ALLOCATE`, with `UCP_MEM_MAP_NONBLOCK`: transports that can register pages
    /// on demand do, instead of pinning the whole range); see `Context::mem_map_register`.
    pub(crate) fn register(
        context: &Arc<ContextInner>,
        length: usize,
        address: *mut u8,
    ) -> Result<MemHandle> {
        Self::map(context, length, address, sys::UCP_MEM_MAP_NONBLOCK)
    }

    /// `ucp_mem_map` with `flags`, then the region's address and length as UCX reports them.
    fn map(
        context: &Arc<ContextInner>,
        length: usize,
        hint: *mut u8,
        flags: u32,
    ) -> Result<MemHandle> {
        let params = sys::ucp_mem_map_params_t {
            field_mask: u64::from(
                sys::UCP_MEM_MAP_PARAM_FIELD_ADDRESS
                    | sys::UCP_MEM_MAP_PARAM_FIELD_LENGTH
                    | sys::UCP_MEM_MAP_PARAM_FIELD_FLAGS,
            ),
            address: hint.cast::<c_void>(),
            length,
            flags: flags as std::ffi::c_uint,
            ..Default::default()
        };
        let mut raw: sys::ucp_mem_h = ptr::null_mut();
        // SAFETY: the context is alive; with UCP_MEM_MAP_ALLOCATE `params` asks UCX to
        // allocate `length` bytes at an address of its choice (`hint` is only a hint: without
        // UCP_MEM_MAP_FIXED nothing already mapped there is replaced; with it, the caller owns
        // the range); without it, UCX registers the caller's mapping at `hint` (the caller
        // keeps it mapped while the handle lives); `raw` is a valid out-pointer.
        let status = unsafe { sys::ucp_mem_map(context.raw, &params, &mut raw) };
        check("ucp_mem_map", status)?;

        let mut attr = sys::ucp_mem_attr_t {
            field_mask: u64::from(sys::UCP_MEM_ATTR_FIELD_ADDRESS | sys::UCP_MEM_ATTR_FIELD_LENGTH),
            ..Default::default()
        };
        // SAFETY: `raw` is the live handle just mapped; `attr` is a valid out-struct.
        let status = unsafe { sys::ucp_mem_query(raw, &mut attr) };
        if let Err(e) = check("ucp_mem_query", status) {
            // SAFETY: unmapping the handle mapped above, once, on this error path.
            unsafe { sys::ucp_mem_unmap(context.raw, raw) };
            return Err(e);
        }
        Ok(MemHandle {
            raw,
            address: attr.address.cast(),
            len: attr.length,
            context: Arc::clone(context),
        })
    }

    /// Start of the region (as reported by `ucp_mem_query`).
    ///
    /// The region stays mapped, and the pointer valid for [`len`](MemHandle::len) bytes,
    /// while this `MemHandle` lives. Peers may write it at any time through RMA, so access
    /// it with volatile or atomic operations, or after synchronizing with them.
    #[inline]
    pub fn address(&self) -> *mut u8 {
        self.address
    }

    /// Length of the region in bytes (as reported by `ucp_mem_query`; at least the
    /// length asked for).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the region is empty (never, for a successful [`mem_map_alloc`](crate::Context::mem_map_alloc)).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Packs a remote key for this region (`ucp_rkey_pack`), for peers to
    /// [`unpack`](crate::Endpoint::unpack_rkey).
    pub fn pack_rkey(&self) -> Result<Vec<u8>> {
        let mut buf: *mut c_void = ptr::null_mut();
        let mut size = 0usize;
        // SAFETY: context and handle are alive; `buf` and `size` are valid out-pointers.
        let status = unsafe { sys::ucp_rkey_pack(self.context.raw, self.raw, &mut buf, &mut size) };
        check("ucp_rkey_pack", status)?;
        // SAFETY: on success UCX returns `size` bytes at `buf`, valid until
        // ucp_rkey_buffer_release; we copy them first and release the buffer once.
        let bytes = unsafe {
            let v = slice::from_raw_parts(buf.cast::<u8>(), size).to_vec();
            sys::ucp_rkey_buffer_release(buf);
            v
        };
        Ok(bytes)
    }

    /// The raw `ucp_mem_h`, valid while this `MemHandle` lives.
    pub fn raw(&self) -> sys::ucp_mem_h {
        self.raw
    }
}

impl Drop for MemHandle {
    fn drop(&mut self) {
        // SAFETY: `raw` was mapped on this context, which is alive (`context` is dropped
        // after this body), and is unmapped once. Keys packed from it are plain bytes.
        let status = unsafe { sys::ucp_mem_unmap(self.context.raw, self.raw) };
        debug_assert_eq!(status, sys::UCS_OK, "ucp_mem_unmap failed");
    }
}
