//! `ucp_context_h`: the UCP application context.

use std::ptr;
use std::sync::Arc;

use crate::error::{Error, Result, check};
use crate::mem::MemHandle;
use crate::sys;
use crate::worker::Worker;

/// What a [`Context`] is created for (`ucp_params_t`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextParams {
    /// Remote memory access: put and get (`UCP_FEATURE_RMA`).
    pub rma: bool,
    /// 32-bit remote atomics (`UCP_FEATURE_AMO32`).
    pub amo32: bool,
    /// 64-bit remote atomics (`UCP_FEATURE_AMO64`).
    pub amo64: bool,
    /// Whether workers of this context may be used from several threads at once
    /// (`UCP_PARAM_FIELD_MT_WORKERS_SHARED`): UCX then locks the context's shared state
    /// (memory registration, worker creation). Leave it `true` unless only one thread ever
    /// touches the context and everything made from it.
    pub multi_threaded: bool,
    /// Expected number of endpoints, a sizing hint (`UCP_PARAM_FIELD_ESTIMATED_NUM_EPS`).
    pub estimated_num_eps: Option<usize>,
    /// Event notification (`UCP_FEATURE_WAKEUP`): lets a thread sleep until a worker has
    /// something to progress ([`Worker::wait_for_events`]).
    pub wakeup: bool,
}

impl Default for ContextParams {
    /// RMA and 32/64-bit atomics, thread-shared, no endpoint estimate.
    fn default() -> Self {
        ContextParams {
            rma: true,
            amo32: true,
            amo64: true,
            multi_threaded: true,
            estimated_num_eps: None,
            wakeup: false,
        }
    }
}

/// How a [`Worker`] may be used by threads (`ucs_thread_mode_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ThreadMode {
    /// Only one thread ever uses the worker and its endpoints (`UCS_THREAD_MODE_SINGLE`).
    Single,
    /// Several threads, never at the same time (`UCS_THREAD_MODE_SERIALIZED`).
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

// SAFETY: the context handle is not tied to a thread. Concurrent use of its shared state
// is serialized by UCX when the context is created with `mt_workers_shared` (the default
// of ContextParams); see `ContextParams::multi_threaded` for the other case.
unsafe impl Send for ContextInner {}
// SAFETY: as for Send.
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
/// ([`Worker`]s, [`MemHandle`]s, and through them endpoints and keys) are dropped.
///
/// # Thread safety
/// With [`ContextParams::multi_threaded`] `false`, UCX does not lock the context: the
/// caller must then not create workers or map/unmap memory from several threads at once.
#[derive(Debug, Clone)]
pub struct Context {
    inner: Arc<ContextInner>,
}

impl Context {
    /// Creates a context (`ucp_config_read` + `ucp_init`).
    ///
    /// The configuration is read from the environment, so `UCX_*` variables (`UCX_TLS`,
    /// `UCX_NET_DEVICES`, ...) set before this call apply.
    pub fn new(params: &ContextParams) -> Result<Context> {
        let mut config: *mut sys::ucp_config_t = ptr::null_mut();
        // SAFETY: NULL prefix and file name are allowed ("UCX_" prefix, no file); `config`
        // is a valid out-pointer.
        let status = unsafe { sys::ucp_config_read(ptr::null(), ptr::null(), &mut config) };
        check("ucp_config_read", status)?;

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
        let mut p = sys::ucp_params_t {
            field_mask: u64::from(
                sys::UCP_PARAM_FIELD_FEATURES | sys::UCP_PARAM_FIELD_MT_WORKERS_SHARED,
            ),
            features,
            mt_workers_shared: i32::from(params.multi_threaded),
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

    /// Creates a worker with the given thread mode (`ucp_worker_create`).
    ///
    /// Fails with `UCS_ERR_UNSUPPORTED` if UCX grants a weaker thread mode than asked for
    /// (a UCX built without `--enable-mt` downgrades `Multi`). See [`Worker`] on what each
    /// mode allows.
    pub fn create_worker(&self, mode: ThreadMode) -> Result<Worker> {
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
        if length == 0 {
            return Err(Error::with_detail(
                "ucp_mem_map",
                sys::UCS_ERR_INVALID_PARAM,
                "length must not be zero",
            ));
        }
        MemHandle::alloc(&self.inner, length)
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
