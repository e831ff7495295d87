//! `ucp_worker_h`: the progress engine and its communication resources.

use std::ptr;
use std::slice;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::context::{ContextInner, thread_mode_error};
use crate::endpoint::Endpoint;
use crate::error::{Error, Result, check};
use crate::request::{complete, events, progress_counted, progress_until};
use crate::sys;

/// Owner of the raw worker; endpoints and requests hold an `Arc` of it.
#[derive(Debug)]
pub(crate) struct WorkerInner {
    pub(crate) raw: sys::ucp_worker_h,
    /// 0, or one more than [`events`] just before the latest put through an endpoint whose
    /// RMA UCX emulates with active messages ([`Endpoint::rma_over_am`]) since the last flush:
    /// the next flush first waits for an event after that put (see [`Worker::flush`]).
    am_put_mark: AtomicU64,
    /// How many waits for the reply of an emulated put in a row ran out
    /// ([`AM_PUT_REPLY_WAIT`]); from [`AM_PUT_REPLY_GIVE_UP`] on, flushes no longer wait.
    am_put_timeouts: AtomicU32,
    _context: Arc<ContextInner>,
}

/// The longest a flush waits for the reply of a put that UCX emulated with active messages
/// before it flushes anyway (see [`Worker::flush`]). The flush cannot complete before that
/// reply is in, so while UCX sends replies the wait costs nothing, even when it runs out
/// because the target is busy elsewhere; the bound caps the loss should a UCX version send
/// none.
const AM_PUT_REPLY_WAIT: Duration = Duration::from_millis(2);

/// After this many waits in a row ran out ([`AM_PUT_REPLY_WAIT`]), a worker's flushes stop
/// waiting for replies of emulated puts: UCX apparently sends none.
const AM_PUT_REPLY_GIVE_UP: u32 = 8;

impl WorkerInner {
    /// Notes that a put through an endpoint whose RMA UCX emulates is about to start: the next
    /// flush waits for an event after this point before flushing.
    #[inline]
    pub(crate) fn note_am_put(&self) {
        self.am_put_mark.store(events() + 1, Ordering::Release);
    }

    /// [`Worker::flush`], also used by [`Endpoint::flush`](crate::Endpoint::flush) where UCX
    /// emulates the endpoint's RMA.
    pub(crate) fn flush(&self) -> Result<()> {
        let mark = self.am_put_mark.swap(0, Ordering::AcqRel);
        if mark != 0 && self.am_put_timeouts.load(Ordering::Relaxed) < AM_PUT_REPLY_GIVE_UP {
            self.wait_am_put_reply(mark);
        }
        let param = sys::ucp_request_param_t::default();
        // SAFETY: the worker is alive while `self` is; `param` selects no optional field
        // (op_attr_mask 0) and lives across the call; the result is handed to `complete`
        // untouched.
        unsafe {
            let ptr = sys::ucp_worker_flush_nbx(self.raw, &param);
            complete(self.raw, ptr, "ucp_worker_flush_nbx")
        }
    }

    /// Progresses until an event arrives after the put that set `mark` (see
    /// [`Worker::flush`]), or [`AM_PUT_REPLY_WAIT`] passes.
    #[cold]
    fn wait_am_put_reply(&self, mark: u64) {
        let start = Instant::now();
        let mut timed_out = false;
        // SAFETY: the worker is alive for the lifetime of `self`.
        unsafe {
            progress_until(self.raw, || {
                if events() + 1 != mark {
                    return true;
                }
                timed_out = start.elapsed() > AM_PUT_REPLY_WAIT;
                timed_out
            });
        }
        let timeouts = &self.am_put_timeouts;
        if timed_out {
            timeouts.fetch_add(1, Ordering::Relaxed);
        } else if timeouts.load(Ordering::Relaxed) != 0 {
            timeouts.store(0, Ordering::Relaxed);
        }
    }
}

// SAFETY: a `ucp_worker_h` is a heap object that UCX does not tie to the creating thread; it
// is destroyed once, by Drop, after every Arc holder (Worker, endpoints, requests) is gone,
// while the context it needs is still alive (`_context`). Single-mode workers, which UCX
// does tie to one thread, come only from the unsafe `create_worker_unsynchronized`, whose
// caller promises to keep them there.
unsafe impl Send for WorkerInner {}
// SAFETY: workers from the safe `Context::create_worker` are UCS_THREAD_MODE_MULTI (checked
// with ucp_worker_query in `create`), and in that mode UCX takes the worker's lock in every
// call on the worker, its endpoints, keys and requests. Workers in the other modes come only
// from the unsafe `create_worker_unsynchronized`, whose caller promises the exclusion.
unsafe impl Sync for WorkerInner {}

impl Drop for WorkerInner {
    fn drop(&mut self) {
        // SAFETY: `raw` came from ucp_worker_create and is destroyed once, after every
        // endpoint and request of it (they hold an Arc of this); the context outlives it
        // (`_context` is dropped after this body).
        unsafe { sys::ucp_worker_destroy(self.raw) };
    }
}

/// A UCP worker (`ucp_worker_h`): the progress engine that endpoints and requests use.
///
/// `ucp_worker_destroy` runs when the `Worker` and all endpoints and requests made from it
/// are dropped.
///
/// # Thread safety
/// `Worker` (and [`Endpoint`], [`RemoteKey`](crate::RemoteKey)) are `Send + Sync`. A worker
/// from [`Context::create_worker`](crate::Context::create_worker) has thread mode `Multi`:
/// UCX locks internally and concurrent use from any threads is sound. Workers with
/// `Single` or `Serialized` mode come only from the `unsafe`
/// [`Context::create_worker_unsynchronized`](crate::Context::create_worker_unsynchronized),
/// whose caller makes sure that no two threads use the worker or what is made from it at
/// the same time (`Single`: only the creating thread ever does).
#[derive(Debug, Clone)]
pub struct Worker {
    raw: sys::ucp_worker_h,
    inner: Arc<WorkerInner>,
}

// SAFETY: `raw` is a copy of `inner.raw` (kept for the hot path) that lives no longer than
// `inner`, which keeps the worker alive, so Worker is exactly as Send as WorkerInner.
unsafe impl Send for Worker {}
// SAFETY: as for Send, with WorkerInner's Sync argument (Multi mode, or the caller's promise).
unsafe impl Sync for Worker {}

impl Worker {
    pub(crate) fn create(
        context: &Arc<ContextInner>,
        mode: sys::ucs_thread_mode_t,
    ) -> Result<Worker> {
        let params = sys::ucp_worker_params_t {
            field_mask: u64::from(sys::UCP_WORKER_PARAM_FIELD_THREAD_MODE),
            thread_mode: mode,
            ..Default::default()
        };
        let mut raw: sys::ucp_worker_h = ptr::null_mut();
        // SAFETY: the context is alive (we hold an Arc), `params` is initialized with only
        // the thread mode selected, `raw` is a valid out-pointer.
        let status = unsafe { sys::ucp_worker_create(context.raw, &params, &mut raw) };
        check("ucp_worker_create", status)?;
        let worker = Worker {
            raw,
            inner: Arc::new(WorkerInner {
                raw,
                am_put_mark: AtomicU64::new(0),
                am_put_timeouts: AtomicU32::new(0),
                _context: Arc::clone(context),
            }),
        };

        let mut attr = sys::ucp_worker_attr_t {
            field_mask: u64::from(sys::UCP_WORKER_ATTR_FIELD_THREAD_MODE),
            ..Default::default()
        };
        // SAFETY: `raw` is the live worker just created; `attr` asks only for the mode.
        let status = unsafe { sys::ucp_worker_query(raw, &mut attr) };
        check("ucp_worker_query", status)?;
        // The modes are ordered SINGLE < SERIALIZED < MULTI.
        if attr.thread_mode < mode {
            return Err(thread_mode_error(mode, attr.thread_mode));
        }
        Ok(worker)
    }

    /// This worker's address (`ucp_worker_get_address`), to send to peers so that they can
    /// [`connect`](Worker::connect) to it.
    pub fn address(&self) -> Result<Vec<u8>> {
        let mut addr: *mut sys::ucp_address_t = ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: the worker is alive; `addr` and `len` are valid out-pointers.
        let status = unsafe { sys::ucp_worker_get_address(self.raw, &mut addr, &mut len) };
        check("ucp_worker_get_address", status)?;
        // SAFETY: on success UCX returns a buffer of `len` bytes at `addr`, which stays
        // valid until ucp_worker_release_address; we copy it first and release it once.
        let bytes = unsafe {
            let v = slice::from_raw_parts(addr.cast::<u8>(), len).to_vec();
            sys::ucp_worker_release_address(self.raw, addr);
            v
        };
        Ok(bytes)
    }

    /// Creates an endpoint to the worker whose [`address`](Worker::address) is given
    /// (`ucp_ep_create`, error handling mode none). A worker may connect to itself.
    ///
    /// The first operation on a new endpoint may need the peer to progress; see
    /// [`Endpoint::flush_start`].
    ///
    /// An empty slice is rejected.
    ///
    /// # Safety
    /// `remote_worker_address` must be the unmodified bytes of some worker's
    /// [`address`](Worker::address) (in this or another process using the same UCX
    /// version): UCX parses it without knowing its length and trusts its content, so
    /// other bytes can make it read out of bounds.
    pub unsafe fn connect(&self, remote_worker_address: &[u8]) -> Result<Endpoint> {
        if remote_worker_address.is_empty() {
            return Err(Error::with_detail(
                "ucp_ep_create",
                sys::UCS_ERR_INVALID_PARAM,
                "empty worker address",
            ));
        }
        let params = sys::ucp_ep_params_t {
            field_mask: u64::from(
                sys::UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | sys::UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
            ),
            address: remote_worker_address.as_ptr().cast(),
            err_mode: sys::UCP_ERR_HANDLING_MODE_NONE,
            ..Default::default()
        };
        let mut ep: sys::ucp_ep_h = ptr::null_mut();
        // SAFETY: the worker is alive; `params.address` points to a genuine worker address
        // (caller's contract), which UCX reads only during this call; `ep` is a valid
        // out-pointer.
        let status = unsafe { sys::ucp_ep_create(self.raw, &params, &mut ep) };
        check("ucp_ep_create", status)?;
        Ok(Endpoint::new(ep, &self.inner))
    }

    /// Makes one round of progress on all transports (`ucp_worker_progress`); returns
    /// whether anything happened (non-zero).
    #[inline]
    pub fn progress(&self) -> u32 {
        // SAFETY: the worker is alive for the lifetime of `self`.
        unsafe { progress_counted(self.raw) }
    }

    /// Waits until every operation started on this worker's endpoints is complete, remote
    /// completion included (`ucp_worker_flush_nbx`, then progress until done). This is
    /// what completes [`Endpoint::put_nbi`] and [`Endpoint::get_nbi`].
    ///
    /// Where UCX emulates RMA with active messages ([`Endpoint::rma_over_am`]: tcp), the
    /// target answers every put with a completion message, and a flush started before that
    /// message is in also makes the transport send a zero-length put and wait for its
    /// acknowledgement: a second exchange. So after such a put this first progresses the worker
    /// until an event arrives (for at most 2 ms); when that event was the put's
    /// completion, the flush then finds nothing outstanding and returns at once. A put + flush
    /// over tcp is then one exchange, as a get is (8 B between 2 processes on loopback, in
    /// alternating jobs: 17.3 - 21.4 us before, 9.6 - 11.2 after). Any other outcome (the event
    /// was something else, or several puts are outstanding) leaves a plain flush, which is
    /// always correct.
    pub fn flush(&self) -> Result<()> {
        self.inner.flush()
    }

    /// Orders the operations issued before it on this worker before those issued after it
    /// (`ucp_worker_fence`); does not wait for completion.
    pub fn fence(&self) -> Result<()> {
        // SAFETY: the worker is alive.
        let status = unsafe { sys::ucp_worker_fence(self.raw) };
        check("ucp_worker_fence", status)
    }

    /// Blocks until this worker has something to progress, another thread calls
    /// [`signal`](Worker::signal), or `timeout` passes; returns at once when events are already
    /// pending. It arms the worker's event file descriptor (`ucp_worker_arm`, then `poll` on
    /// `ucp_worker_get_efd`), so the context needs
    /// [`ContextParams::wakeup`](crate::ContextParams::wakeup). Call
    /// [`progress`](Worker::progress) until it returns 0 before waiting: an armed worker only
    /// wakes for events that arrive after arming.
    pub fn wait_for_events(&self, timeout: std::time::Duration) -> Result<()> {
        let mut fd: std::os::fd::RawFd = -1;
        // SAFETY: the worker is alive; `fd` is a valid out-pointer.
        let status = unsafe { sys::ucp_worker_get_efd(self.raw, &mut fd) };
        check("ucp_worker_get_efd", status)?;
        // SAFETY: the worker is alive.
        let status = unsafe { sys::ucp_worker_arm(self.raw) };
        if status == sys::UCS_ERR_BUSY {
            return Ok(());
        }
        check("ucp_worker_arm", status)?;
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // To the microsecond (`poll`'s milliseconds would make a wait under 1 ms a busy loop).
        let ts = libc::timespec {
            tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
            tv_nsec: libc::c_long::from(timeout.subsec_nanos() as i32),
        };
        // SAFETY: one valid pollfd and timespec for the duration of the call; the descriptor
        // belongs to the live worker; no signal mask is changed.
        if unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) } < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(Error::with_detail(
                    "ppoll(ucp_worker_get_efd)",
                    sys::UCS_ERR_IO_ERROR,
                    &e.to_string(),
                ));
            }
        }
        Ok(())
    }

    /// Wakes a thread blocked in [`wait_for_events`](Worker::wait_for_events) on this worker
    /// (`ucp_worker_signal`).
    pub fn signal(&self) -> Result<()> {
        // SAFETY: the worker is alive; UCX allows signalling from any thread.
        let status = unsafe { sys::ucp_worker_signal(self.raw) };
        check("ucp_worker_signal", status)
    }

    /// The raw `ucp_worker_h`, valid while this `Worker` (or an endpoint or request of it)
    /// lives. Calls on it must respect the worker's thread mode.
    #[inline]
    pub fn raw(&self) -> sys::ucp_worker_h {
        self.raw
    }
}
