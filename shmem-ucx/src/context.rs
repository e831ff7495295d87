//! `ucp_context_h`: the UCP application context.

use std::ptr;
use std::sync::Arc;

use crate::error::{Error, Result, check};
use crate::mem::MemHandle;
use crate::sys;
use crate::worker::Worker;

/// What a [`Context`] is created for (`ucp_params_t`).
///
/// Every context is created thread-shared (`mt_workers_shared`, UCX locks the context's
/// shared state) by [`Context::new`]; only the `unsafe`
/// [`Context::new_unsynchronized`] leaves that lock out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextParams {
    /// Remote memory access: put and get (`UCP_FEATURE_RMA`).
    pub rma: bool,
    /// 32-bit remote atomics (`UCP_FEATURE_AMO32`).
    pub amo32: bool,
    /// 64-bit remote atomics (`UCP_FEATURE_AMO64`).
    pub amo64: bool,
    /// Expected number of endpoints, a sizing hint (`UCP_PARAM_FIELD_ESTIMATED_NUM_EPS`).
    pub estimated_num_eps: Option<usize>,
    /// Event notification (`UCP_FEATURE_WAKEUP`): lets a thread sleep until a worker has
    /// something to progress ([`Worker::wait_for_events`]).
    pub wakeup: bool,
    /// Active messages (`UCP_FEATURE_AM`): [`Endpoint::am_send`](crate::Endpoint::am_send) and
    /// [`Worker::set_am_handler`](crate::Worker::set_am_handler).
    pub am: bool,
    /// UCX settings as `(name, value)` without the `UCX_` prefix (`("MAX_RNDV_LANES", "1")`),
    /// applied with `ucp_config_modify` unless the environment sets `UCX_<name>`: defaults
    /// that the user can still override.
    pub config_defaults: Vec<(&'static str, &'static str)>,
}

impl Default for ContextParams {
    /// RMA and 32/64-bit atomics, no endpoint estimate, no wake-up events, no active messages.
    fn default() -> Self {
        ContextParams {
            rma: true,
            amo32: true,
            amo64: true,
            estimated_num_eps: None,
            wakeup: false,
            am: false,
            config_defaults: Vec::new(),
        }
    }
}

/// How a [`Worker`] may be used by threads (`ucs_thread_mode_t`).
///
/// [`Worker`] is `Send + Sync`, which only `Multi` backs up by itself: the safe
/// [`Context::create_worker`] makes `Multi` workers, and the other modes need the `unsafe`
/// [`Context::create_worker_unsynchronized`], whose caller takes over UCX's locking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ThreadMode {
    /// Only one thread ever uses the worker and what is made from it, the thread that created
    /// it (`UCS_THREAD_MODE_SINGLE`): no locking.
    Single,
    /// Several threads, never at the same time (`UCS_THREAD_MODE_SERIALIZED`): no locking.
    Serialized,
    /// Any threads at any time: UCX locks internally (`UCS_THREAD_MODE_MULTI`).
    Multi,
}

impl ThreadMode {
    fn to_sys(self) -> sys::ucs_thread_mode_t {
        match self {
            ThreadMode::Single => sys::UCS_THREAD_MODE_SINGLE,
            ThreadMode::Serialized => sys::UCS_THREAD_MODE_SERIALIZED,
            ThreadMode::Multi => sys::UCS_THREAD_MODE_MULTI,
        }
    }
}

/// Owner of the raw context; everything made from the context holds an `Arc` of it, so
/// `ucp_cleanup` runs after all of them are gone.
#[derive(Debug)]
pub(crate) struct ContextInner {
    pub(crate) raw: sys::ucp_context_h,
}

// SAFETY: a `ucp_context_h` is a heap object that UCX does not tie to the thread that made
// it, and it is cleaned up once, by Drop, after every Arc holder is gone, so moving the
// owner to another thread cannot leave a user behind.
unsafe impl Send for ContextInner {}
// SAFETY: what `&ContextInner` allows (worker creation, mem map/unmap, rkey packing, and the
// context state those and the workers touch) UCX serializes with the context lock, which
// `Context::new` always turns on (`mt_workers_shared = 1`); a context without it comes only
// from the unsafe `Context::new_unsynchronized`, whose caller promises the exclusion instead.
unsafe impl Sync for ContextInner {}

impl Drop for ContextInner {
    fn drop(&mut self) {
        // SAFETY: `raw` came from a successful ucp_init_version and is cleaned up once;
        // every worker and memory handle of it held an Arc of this, so all are destroyed.
        unsafe { sys::ucp_cleanup(self.raw) };
    }
}

/// A UCP context (`ucp_context_h`): the root of every other UCX object.
///
/// `Send + Sync`; `ucp_cleanup` runs when the `Context` and everything made from it
/// ([`Worker`]s, [`MemHandle`]s, and through them endpoints and keys) are dropped, in
/// whatever order the owners drop them.
///
/// # Thread safety
/// A context from [`Context::new`] is thread-shared: UCX locks its shared state, so any
/// threads may create workers, map memory and pack keys at any time, and workers of it may
/// run on different threads at once.
#[derive(Debug, Clone)]
pub struct Context {
    inner: Arc<ContextInner>,
}

/// Applies each `(name, value)` to `config` unless the environment sets `UCX_<name>`.
fn apply_defaults(
    config: *mut sys::ucp_config_t,
    defaults: &[(&'static str, &'static str)],
) -> Result<()> {
    for &(name, value) in defaults {
        if std::env::var_os(format!("UCX_{name}")).is_some() {
            continue;
        }
        let bad = || {
            Error::with_detail(
                "ucp_config_modify",
                sys::UCS_ERR_INVALID_PARAM,
                &format!("setting {name}={value:?} contains a NUL byte"),
            )
        };
        let c_name = std::ffi::CString::new(name).map_err(|_| bad())?;
        let c_value = std::ffi::CString::new(value).map_err(|_| bad())?;
        // SAFETY: `config` is a live configuration from ucp_config_read; both strings are
        // NUL-terminated and read only during the call.
        let status = unsafe { sys::ucp_config_modify(config, c_name.as_ptr(), c_value.as_ptr()) };
        check("ucp_config_modify", status).map_err(|mut e| {
            e.message.push_str(&format!(" (setting {name}={value})"));
            e
        })?;
    }
    Ok(())
}

impl Context {
    /// Creates a context (`ucp_config_read` + `ucp_init`).
    ///
    /// The configuration is read from the environment, so `UCX_*` variables (`UCX_TLS`,
    /// `UCX_NET_DEVICES`, ...) set before this call apply.
    pub fn new(params: &ContextParams) -> Result<Context> {
        Context::init(params, true)
    }

    /// Like [`new`](Context::new), without UCX's lock on the context's shared state
    /// (`mt_workers_shared = 0`): a little cheaper for a context that one thread uses.
    ///
    /// # Safety
    /// No two threads may use the context at the same time. That covers its own methods
    /// (creating workers, mapping memory, packing keys, dropping a [`MemHandle`] or the last
    /// handle to it) and the context state its workers use: either the context has one
    /// worker only, or all its workers and what is made from them are used by one thread at
    /// a time. (UCX's own example of the second case: worker 1 on thread 1 and worker 2 on
    /// thread 2 need a thread-shared context.)
    pub unsafe fn new_unsynchronized(params: &ContextParams) -> Result<Context> {
        Context::init(params, false)
    }

    /// `ucp_config_read` + `ucp_init` with the context lock on or off.
    fn init(params: &ContextParams, thread_shared: bool) -> Result<Context> {
        let mut config: *mut sys::ucp_config_t = ptr::null_mut();
        // SAFETY: NULL prefix and file name are allowed ("UCX_" prefix, no file); `config`
        // is a valid out-pointer.
        let status = unsafe { sys::ucp_config_read(ptr::null(), ptr::null(), &mut config) };
        check("ucp_config_read", status)?;
        if let Err(e) = apply_defaults(config, &params.config_defaults) {
            // SAFETY: `config` came from ucp_config_read above and is released once.
            unsafe { sys::ucp_config_release(config) };
            return Err(e);
        }

        let mut features = 0u64;
        if params.rma {
            features |= u64::from(sys::UCP_FEATURE_RMA);
        }
        if params.amo32 {
            features |= u64::from(sys::UCP_FEATURE_AMO32);
        }
        if params.amo64 {
            features |= u64::from(sys::UCP_FEATURE_AMO64);
        }
        if params.wakeup {
            features |= u64::from(sys::UCP_FEATURE_WAKEUP);
        }
        if params.am {
            features |= u64::from(sys::UCP_FEATURE_AM);
        }
        let mut p = sys::ucp_params_t {
            field_mask: u64::from(
                sys::UCP_PARAM_FIELD_FEATURES | sys::UCP_PARAM_FIELD_MT_WORKERS_SHARED,
            ),
            features,
            mt_workers_shared: i32::from(thread_shared),
            ..Default::default()
        };
        if let Some(n) = params.estimated_num_eps {
            p.field_mask |= u64::from(sys::UCP_PARAM_FIELD_ESTIMATED_NUM_EPS);
            p.estimated_num_eps = n;
        }

        let mut raw: sys::ucp_context_h = ptr::null_mut();
        // SAFETY: `p` is fully initialized (unused fields zero and masked out), `config`
        // came from ucp_config_read above, `raw` is a valid out-pointer. Passing the header's
        // API version is what the static inline ucp_init does.
        let status = unsafe {
            sys::ucp_init_version(sys::UCP_API_MAJOR, sys::UCP_API_MINOR, &p, config, &mut raw)
        };
        // SAFETY: `config` is released exactly once; ucp_init_version copied what it needs.
        unsafe { sys::ucp_config_release(config) };
        check("ucp_init", status)?;
        Ok(Context {
            inner: Arc::new(ContextInner { raw }),
        })
    }

    /// Creates a worker (`ucp_worker_create`) that any threads may use at any time: `mode`
    /// must be [`ThreadMode::Multi`].
    ///
    /// The other modes leave the locking to the caller, which safe code cannot promise
    /// ([`Worker`] is `Sync`): they fail with `UCS_ERR_INVALID_PARAM` here; use the `unsafe`
    /// [`create_worker_unsynchronized`](Context::create_worker_unsynchronized) for them.
    /// Fails with `UCS_ERR_UNSUPPORTED` if UCX grants a weaker thread mode than `Multi` (a
    /// UCX built without `--enable-mt`).
    ///
    /// ```
    /// use shmem_ucx::{Context, ContextParams, ThreadMode};
    ///
    /// # fn main() -> shmem_ucx::Result<()> {
    /// let context = Context::new(&ContextParams::default())?;
    /// let worker = context.create_worker(ThreadMode::Multi)?;
    /// std::thread::scope(|s| {
    ///     s.spawn(|| worker.progress());
    ///     worker.progress();
    /// });
    /// # Ok(())
    /// # }
    /// ```
    pub fn create_worker(&self, mode: ThreadMode) -> Result<Worker> {
        if mode != ThreadMode::Multi {
            return Err(Error::with_detail(
                "ucp_worker_create",
                sys::UCS_ERR_INVALID_PARAM,
                &format!(
                    "thread mode {mode:?} needs the caller's locking: use the unsafe \
                     Context::create_worker_unsynchronized"
                ),
            ));
        }
        Worker::create(&self.inner, mode.to_sys())
    }

    /// Creates a worker with any thread mode (`ucp_worker_create`); UCX does no locking for
    /// `Single` and `Serialized`, which saves a lock and unlock per operation.
    ///
    /// Fails with `UCS_ERR_UNSUPPORTED` if UCX grants a weaker thread mode than asked for.
    ///
    /// # Safety
    /// With `Serialized`, no two threads may use the worker, its endpoints, remote keys and
    /// requests at the same time (dropping them included). With `Single`, only the thread
    /// that calls this may use them, ever. (`Multi` asks for nothing.)
    pub unsafe fn create_worker_unsynchronized(&self, mode: ThreadMode) -> Result<Worker> {
        Worker::create(&self.inner, mode.to_sys())
    }

    /// Allocates and registers `length` bytes with UCX (`ucp_mem_map` with
    /// `UCP_MEM_MAP_ALLOCATE`, address chosen by UCX).
    ///
    /// Memory UCX allocates itself is shared memory when a shared-memory transport is
    /// enabled, so peers on the node can reach it with [`RemoteKey::ptr`](crate::RemoteKey::ptr).
    /// UCX may round the length up: see [`MemHandle::len`]. The content is unspecified
    /// (in practice zero pages).
    pub fn mem_map_alloc(&self, length: usize) -> Result<MemHandle> {
        self.mem_map_alloc_near(length, std::ptr::null_mut())
    }

    /// Like [`mem_map_alloc`](Self::mem_map_alloc), asking UCX to place the region at `hint`
    /// (a page-aligned address; a hint only: UCX may choose another place, so check
    /// [`MemHandle::address`]).
    pub fn mem_map_alloc_near(&self, length: usize, hint: *mut u8) -> Result<MemHandle> {
        MemHandle::alloc(&self.inner, nonzero(length)?, hint, false)
    }

    /// Like [`mem_map_alloc`](Self::mem_map_alloc), placing the region exactly at `address`
    /// (`UCP_MEM_MAP_FIXED`), or failing.
    ///
    /// # Safety
    /// `address` is page-aligned and `[address, address + length)` is address space this
    /// process owns and gives up (for example its own `PROT_NONE` reservation): UCX may map over
    /// whatever is there.
    pub unsafe fn mem_map_alloc_fixed(&self, length: usize, address: *mut u8) -> Result<MemHandle> {
        MemHandle::alloc(&self.inner, nonzero(length)?, address, true)
    }

    /// Registers `length` bytes that this process already mapped at `address` (`ucp_mem_map`
    /// without `UCP_MEM_MAP_ALLOCATE`), so that peers can reach them through UCX with the
    /// handle's packed key. Peers on the node cannot map such memory with
    /// [`RemoteKey::ptr`](crate::RemoteKey::ptr) unless UCX allocated it; share it by other
    /// means for load/store. The mapping is non-blocking (`UCP_MEM_MAP_NONBLOCK`): transports
    /// that can register pages when they are first used (InfiniBand with on-demand paging) do
    /// so rather than pinning, and so committing, the whole range up front.
    ///
    /// # Safety
    /// `[address, address + length)` is mapped read-write and stays mapped while the returned
    /// handle lives; peers may write it at any time through RMA.
    pub unsafe fn mem_map_register(&self, length: usize, address: *mut u8) -> Result<MemHandle> {
        MemHandle::register(&self.inner, nonzero(length)?, address)
    }

    /// The raw `ucp_context_h`, valid while this `Context` (or anything made from it) lives.
    pub fn raw(&self) -> sys::ucp_context_h {
        self.inner.raw
    }
}

/// `Error` with this crate's detail for a thread mode UCX did not grant.
pub(crate) fn thread_mode_error(
    asked: sys::ucs_thread_mode_t,
    got: sys::ucs_thread_mode_t,
) -> Error {
    Error::with_detail(
        "ucp_worker_create",
        sys::UCS_ERR_UNSUPPORTED,
        &format!(
            "asked for thread mode {asked}, UCX granted {got} (UCX built without --enable-mt?)"
        ),
    )
}

/// `length`, or the error of `ucp_mem_map` for a zero length.
fn nonzero(length: usize) -> Result<usize> {
    if length == 0 {
        return Err(Error::with_detail(
            "ucp_mem_map",
            sys::UCS_ERR_INVALID_PARAM,
            "length must not be zero",
        ));
    }
    Ok(length)
}
