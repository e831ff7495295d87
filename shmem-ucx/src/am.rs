//! Active messages: `ucp_am_send_nbx` and `ucp_worker_set_am_recv_handler`.
//!
//! A message is one owned buffer, a header followed by the data, that UCX keeps until the send
//! completes and this crate then frees: the sender never waits for it. The receiving worker
//! runs an [`AmHandler`] for it inside `ucp_worker_progress`, with the whole message in hand
//! (`UCP_AM_FLAG_WHOLE_MSG`); the handler may answer on the sender's endpoint with
//! [`AmMessage::reply`]. The context needs [`ContextParams::am`](crate::ContextParams::am).

use std::ffi::c_void;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::slice;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::endpoint::Endpoint;
use crate::error::{Error, Result, check};
use crate::request::{ptr_is_err, ptr_status};
use crate::sys;
use crate::worker::Worker;

/// How an active message is sent (`ucp_send_am_flags`); combine with `|`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AmFlags(u32);

impl AmFlags {
    /// No flags: UCX picks the protocol by size.
    pub const NONE: AmFlags = AmFlags(0);
    /// Tell the receiver which endpoint leads back to the sender, so that its handler can
    /// [`reply`](AmMessage::reply) (`UCP_AM_SEND_FLAG_REPLY`).
    pub const REPLY: AmFlags = AmFlags(sys::UCP_AM_SEND_FLAG_REPLY);
    /// Eager protocol only, never rendezvous (`UCP_AM_SEND_FLAG_EAGER`): the handler always
    /// gets the data itself ([`AmMessage::data`] is `Some`).
    pub const EAGER: AmFlags = AmFlags(sys::UCP_AM_SEND_FLAG_EAGER);
}

impl std::ops::BitOr for AmFlags {
    type Output = AmFlags;
    fn bitor(self, rhs: AmFlags) -> AmFlags {
        AmFlags(self.0 | rhs.0)
    }
}

/// An outgoing message, owned by UCX (through the send's user data) until the send completes.
struct Pending {
    bytes: Vec<u8>,
    on_error: fn(Error),
}

/// Sends of this process that UCX has accepted but not finished (they complete inside some
/// worker's progress).
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// How many active messages of this process UCX has accepted but not yet sent off (each
/// completes, or fails, inside the progress of its worker). Zero means every message sent so
/// far has left this process: a sender that must not go on computing while one of its
/// messages waits for its own progress waits for this to reach zero.
pub fn am_sends_in_flight() -> usize {
    IN_FLIGHT.load(Ordering::Acquire)
}

/// Active messages this process has handed to UCX so far.
static SENT: AtomicU64 = AtomicU64::new(0);

/// How many active messages this process has handed to UCX since it started (whatever became
/// of them): for tests and diagnostics that check which operations travel through UCX.
pub fn am_sends_total() -> u64 {
    SENT.load(Ordering::Relaxed)
}

/// Completion callback of a send that did not complete at once: frees the message and the
/// request, and reports a failure to the message's `on_error`.
unsafe extern "C" fn send_done(request: *mut c_void, status: sys::ucs_status_t, user: *mut c_void) {
    // SAFETY: `user` is the `Box<Pending>` leaked by `send_raw` for exactly this request;
    // UCX calls this callback once per request, so the box is taken back once.
    let pending = unsafe { Box::from_raw(user.cast::<Pending>()) };
    // SAFETY: `request` is the completed request this callback is for; nobody else frees it
    // (`send_raw` hands it to no one), and freeing inside the callback is allowed: UCX then
    // returns it to its pool once the callback has returned.
    unsafe { sys::ucp_request_free(request) };
    IN_FLIGHT.fetch_sub(1, Ordering::AcqRel);
    if status != sys::UCS_OK {
        (pending.on_error)(Error::from_status("ucp_am_send_nbx", status));
    }
    drop(pending);
}

/// Sends `bytes` (header: the first `header_len`) as active message `id` on `ep`.
///
/// # Safety
/// `ep` must be a live endpoint (of a live worker), for the duration of the call.
unsafe fn send_raw(
    ep: sys::ucp_ep_h,
    id: u16,
    bytes: Vec<u8>,
    header_len: usize,
    flags: AmFlags,
    on_error: fn(Error),
) -> Result<()> {
    if header_len > bytes.len() {
        return Err(Error::with_detail(
            "ucp_am_send_nbx",
            sys::UCS_ERR_INVALID_PARAM,
            &format!(
                "header of {header_len} bytes in a message of {} bytes",
                bytes.len()
            ),
        ));
    }
    let pending = Box::into_raw(Box::new(Pending { bytes, on_error }));
    // SAFETY: `pending` was just made from a Box and is not freed before the send below is
    // done with it; the Vec's buffer does not move while the Box owns it.
    let (head, head_len, data, data_len) = unsafe {
        let b = &(*pending).bytes;
        let base = b.as_ptr();
        (base, header_len, base.add(header_len), b.len() - header_len)
    };
    let param = sys::ucp_request_param_t {
        op_attr_mask: sys::UCP_OP_ATTR_FIELD_CALLBACK
            | sys::UCP_OP_ATTR_FIELD_USER_DATA
            | sys::UCP_OP_ATTR_FIELD_FLAGS,
        flags: flags.0,
        cb: sys::ucp_request_param_t__bindgen_ty_1 {
            send: Some(send_done),
        },
        user_data: pending.cast(),
        ..Default::default()
    };
    SENT.fetch_add(1, Ordering::Relaxed);
    // Counted before UCX may complete it (on another thread that progresses the worker).
    IN_FLIGHT.fetch_add(1, Ordering::AcqRel);
    // SAFETY: `ep` is live (caller's contract); header and data point into the buffer owned by
    // `pending`, which stays allocated until the send is complete: freed below if it completed
    // (or failed) at once, else by `send_done`, which UCX calls exactly once for a returned
    // request. The default datatype is contiguous bytes, so `data_len` is the byte count.
    let status_ptr = unsafe {
        sys::ucp_am_send_nbx(
            ep,
            u32::from(id),
            head.cast(),
            head_len,
            data.cast(),
            data_len,
            &param,
        )
    };
    if status_ptr.is_null() || ptr_is_err(status_ptr) {
        // Completed or failed at once: the callback will not run, the message is ours again.
        IN_FLIGHT.fetch_sub(1, Ordering::AcqRel);
        // SAFETY: made by Box::into_raw above and not given to anyone (no request exists).
        drop(unsafe { Box::from_raw(pending) });
        if status_ptr.is_null() {
            return Ok(());
        }
        return Err(Error::from_status(
            "ucp_am_send_nbx",
            ptr_status(status_ptr),
        ));
    }
    // A request: `send_done` frees it and the message when the send completes.
    Ok(())
}

impl Endpoint {
    /// Sends active message `id` to the peer (`ucp_am_send_nbx`) and returns without waiting:
    /// `msg` holds the header (its first `header_len` bytes) and then the data, and is freed
    /// once UCX is done with it. A failure UCX reports at once is returned; one it reports
    /// later goes to `on_error`, which runs inside the worker's progress (on whichever thread
    /// progresses it) and must not block or progress the worker.
    ///
    /// The peer's worker runs the [`AmHandler`] registered for `id` when the message arrives;
    /// a flush of this endpoint says only that the message left, not that the handler ran
    /// (an acknowledgement is the caller's protocol). The context needs
    /// [`ContextParams::am`](crate::ContextParams::am).
    pub fn am_send(
        &self,
        id: u16,
        msg: Vec<u8>,
        header_len: usize,
        flags: AmFlags,
        on_error: fn(Error),
    ) -> Result<()> {
        // SAFETY: the endpoint (and through it its worker) lives as long as `self`.
        unsafe { send_raw(self.raw(), id, msg, header_len, flags, on_error) }
    }
}

/// A receiver of active messages of one id, registered with [`Worker::set_am_handler`].
///
/// `receive` runs inside `ucp_worker_progress` on whichever thread progresses the worker (a
/// progress thread included), possibly on several threads in turn, never on two at once for
/// one worker (UCX holds the worker's lock). It must not progress the worker, wait for
/// anything that needs this worker's progress, or take a lock that a thread may hold while it
/// progresses the worker. A panic in it aborts the process (it cannot unwind through UCX):
/// the panic message is printed first.
pub trait AmHandler: Sync + 'static {
    /// Handles one whole message.
    fn receive(&self, msg: &AmMessage<'_>);
}

/// An incoming active message, valid only during [`AmHandler::receive`].
#[derive(Debug)]
pub struct AmMessage<'a> {
    header: &'a [u8],
    data: Option<&'a [u8]>,
    data_len: usize,
    reply_ep: sys::ucp_ep_h,
    /// Ties the message to the callback's thread and frame.
    _callback: PhantomData<*const ()>,
}

impl AmMessage<'_> {
    /// The header the sender passed (possibly empty).
    pub fn header(&self) -> &[u8] {
        self.header
    }

    /// The data, or `None` when UCX chose the rendezvous protocol and only announced it (the
    /// sender did not force [`AmFlags::EAGER`]); it is then dropped when the handler returns.
    pub fn data(&self) -> Option<&[u8]> {
        self.data
    }

    /// The data's length in bytes (also for an announced rendezvous message).
    pub fn data_len(&self) -> usize {
        self.data_len
    }

    /// Whether the sender asked for a reply endpoint ([`AmFlags::REPLY`]).
    pub fn can_reply(&self) -> bool {
        !self.reply_ep.is_null()
    }

    /// Sends active message `id` back to the sender, as [`Endpoint::am_send`] does; fails with
    /// `UCS_ERR_INVALID_PARAM` when the sender did not ask for a reply endpoint.
    pub fn reply(
        &self,
        id: u16,
        msg: Vec<u8>,
        header_len: usize,
        flags: AmFlags,
        on_error: fn(Error),
    ) -> Result<()> {
        if self.reply_ep.is_null() {
            return Err(Error::with_detail(
                "ucp_am_send_nbx",
                sys::UCS_ERR_INVALID_PARAM,
                "the message came without a reply endpoint (no UCP_AM_SEND_FLAG_REPLY)",
            ));
        }
        // SAFETY: UCX hands the reply endpoint to the callback for this use; it is live while
        // the callback runs, which `&self` (valid only then) covers. Sending from inside a
        // callback is allowed; the send does not wait.
        unsafe { send_raw(self.reply_ep, id, msg, header_len, flags, on_error) }
    }
}

/// The C callback UCX calls for a handler of type `H`.
///
/// # Safety
/// Called by UCX only, as a `ucp_am_recv_callback_t` registered by [`Worker::set_am_handler`]
/// with `arg` pointing to a `&'static H`.
unsafe extern "C" fn trampoline<H: AmHandler>(
    arg: *mut c_void,
    header: *const c_void,
    header_length: usize,
    data: *mut c_void,
    length: usize,
    param: *const sys::ucp_am_recv_param_t,
) -> sys::ucs_status_t {
    let run = AssertUnwindSafe(|| {
        // SAFETY: `arg` is the `&'static H` given to `set_am_handler` (it never dangles).
        let handler = unsafe { &*arg.cast_const().cast::<H>() };
        // SAFETY: UCX passes the receive parameters for the duration of the call.
        let recv_attr = unsafe { (*param).recv_attr };
        let reply_ep = if recv_attr & u64::from(sys::UCP_AM_RECV_ATTR_FIELD_REPLY_EP) != 0 {
            // SAFETY: as above; the field is valid because its bit is set.
            unsafe { (*param).reply_ep }
        } else {
            ptr::null_mut()
        };
        let header = if header_length == 0 || header.is_null() {
            &[][..]
        } else {
            // SAFETY: UCX passes `header_length` readable bytes at `header` for the duration
            // of the call; the slice does not outlive it (`msg` borrows it below).
            unsafe { slice::from_raw_parts(header.cast::<u8>(), header_length) }
        };
        let rndv = recv_attr & u64::from(sys::UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
        let body = if rndv {
            None
        } else if length == 0 || data.is_null() {
            Some(&[][..])
        } else {
            // SAFETY: without the rendezvous flag, `data` points to `length` received bytes,
            // valid for the duration of the call (we return UCS_OK: UCX keeps no data).
            Some(unsafe { slice::from_raw_parts(data.cast_const().cast::<u8>(), length) })
        };
        let msg = AmMessage {
            header,
            data: body,
            data_len: length,
            reply_ep,
            _callback: PhantomData,
        };
        handler.receive(&msg);
    });
    if catch_unwind(run).is_err() {
        // The panic hook has printed the message; unwinding into UCX is not an option.
        std::process::abort();
    }
    // The data is not kept (a rendezvous one is dropped; its sender completes normally).
    sys::UCS_OK
}

impl Worker {
    /// Registers `handler` for active messages `id` on this worker
    /// (`ucp_worker_set_am_recv_handler`, whole messages only); replaces an earlier handler of
    /// the id. The context needs [`ContextParams::am`](crate::ContextParams::am). Register
    /// before any peer can send the id: a message without a handler is dropped by UCX.
    pub fn set_am_handler<H: AmHandler>(&self, id: u16, handler: &'static H) -> Result<()> {
        let param = sys::ucp_am_handler_param_t {
            field_mask: u64::from(
                sys::UCP_AM_HANDLER_PARAM_FIELD_ID
                    | sys::UCP_AM_HANDLER_PARAM_FIELD_FLAGS
                    | sys::UCP_AM_HANDLER_PARAM_FIELD_CB
                    | sys::UCP_AM_HANDLER_PARAM_FIELD_ARG,
            ),
            id: u32::from(id),
            flags: sys::UCP_AM_FLAG_WHOLE_MSG,
            cb: Some(trampoline::<H>),
            arg: ptr::from_ref(handler).cast_mut().cast(),
        };
        // SAFETY: the worker is alive; `param` is fully initialized and read during the call
        // only; `arg` is a `&'static H`, valid whenever UCX calls the trampoline, which reads
        // it only as `&H` (H: Sync, since any progressing thread may run it).
        let status = unsafe { sys::ucp_worker_set_am_recv_handler(self.raw(), &param) };
        check("ucp_worker_set_am_recv_handler", status)
    }
}
