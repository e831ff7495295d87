//! Communication contexts (`shmem_ctx_*`) and thread levels (`shmem_init_thread`).
//!
//! A context is an independent stream of RMA and AMO operations with its own `fence` and
//! `quiet`: its own UCX worker and its own endpoints to every PE reached through UCX (peers
//! mapped into this process stay direct loads and stores). The context's mode fixes, in the
//! type, which threads may use it:
//!
//! | mode | OpenSHMEM option | Rust |
//! |---|---|---|
//! | [`Private`] | `SHMEM_CTX_PRIVATE` | neither `Send` nor `Sync`: the creating thread only |
//! | [`Serialized`] | `SHMEM_CTX_SERIALIZED` | `Send`, not `Sync`: one thread at a time |
//! | [`Shared`] | (default) | `Send` and `Sync`: any thread, concurrently |
//!
//! The UCX workers of contexts are multi-threaded in every mode: over transports that need the
//! target's progress (tcp), UCX's traffic for one worker can wait on another worker of the same
//! process, so every wait of the runtime progresses all of them, from whichever thread waits.

use crate::amo::Remote;
use crate::element::Element;
use crate::error::Result;
use crate::rma::{SymmetricArray, checked_offset};
use crate::transport::{Peer, Transport};
use crate::world::World;
use shmem_ucx::Worker;
use std::cell::Cell;
use std::marker::PhantomData;
use std::ops::RangeBounds;

mod sealed {
    pub trait Mode {}
}

/// The thread mode of a context, as a type. Implemented by [`Private`], [`Serialized`] and
/// [`Shared`].
pub trait CtxMode: sealed::Mode {}

/// `SHMEM_CTX_PRIVATE`: used only by the thread that created it.
#[derive(Debug)]
pub struct Private(PhantomData<*const ()>);
/// `SHMEM_CTX_SERIALIZED`: may move between threads, used by one at a time.
#[derive(Debug)]
pub struct Serialized(PhantomData<Cell<()>>);
/// Shared: any thread may use it concurrently.
#[derive(Debug)]
pub struct Shared;

impl sealed::Mode for Private {}
impl sealed::Mode for Serialized {}
impl sealed::Mode for Shared {}
impl CtxMode for Private {}
impl CtxMode for Serialized {}
impl CtxMode for Shared {}

/// Options of [`World::ctx_create`] besides the thread mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CtxOptions {
    /// `SHMEM_CTX_NOSTORE`: the program promises not to need `quiet`/`fence` to order stores on
    /// this context. Accepted as a hint (the context behaves the same).
    pub nostore: bool,
}

/// A communication context: RMA and atomics whose completion (`quiet`) and ordering (`fence`)
/// are independent of other contexts.
///
/// ```
/// use shmem_core::prelude::*;
///
/// #[symmetric]
/// static BOARD: [u64; 8] = [0; 8];
///
/// let world = shmem_core::init()?;
/// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
/// let pe = (world.my_pe() + 1) % world.n_pes();
/// ctx.put(&BOARD, pe, 0..2, &[4, 5]);
/// ctx.at(&BOARD, pe, 7).add(1);
/// ctx.quiet(); // completes this context's operations only
/// world.barrier_all();
/// assert_eq!(BOARD.local_get(1), 5);
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub struct Ctx<'w, M: CtxMode> {
    rt: &'static Transport,
    // Field order is drop order: endpoints (in `peers`) before their worker.
    peers: Box<[Peer]>,
    worker: Worker,
    any_ucx: bool,
    options: CtxOptions,
    _mode: PhantomData<M>,
    _world: PhantomData<fn() -> &'w World>,
}

// No `unsafe impl Send/Sync`: every field is Send and Sync (the transport, the peers and the
// multi-threaded worker say why in their own SAFETY notes), so the mode marker `M` alone decides,
// by the compiler's auto traits, which threads may use the context.

impl std::fmt::Debug for Ctx<'_, Private> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx")
            .field("options", &self.options)
            .finish()
    }
}

impl World {
    /// `shmem_ctx_create`: a new context of mode `M` ([`Private`], [`Serialized`] or
    /// [`Shared`]). Not collective. Fails only if UCX cannot make a worker or endpoints.
    #[doc(alias = "shmem_ctx_create")]
    pub fn ctx_create<M: CtxMode>(&self, options: CtxOptions) -> Result<Ctx<'_, M>> {
        let rt: &'static Transport = self.rt;
        let (worker, peers, any_ucx) = rt.context_route()?;
        Ok(Ctx {
            rt,
            peers,
            worker,
            any_ucx,
            options,
            _mode: PhantomData,
            _world: PhantomData,
        })
    }
}

impl<M: CtxMode> Ctx<'_, M> {
    /// The options the context was made with (`shmem_ctx_get_options` style).
    #[doc(alias = "shmem_ctx_get_options")]
    pub fn options(&self) -> CtxOptions {
        self.options
    }

    #[inline]
    #[track_caller]
    fn peer(&self, pe: usize) -> &Peer {
        // The runtime's check gives the standard message for a bad PE.
        let _ = self.rt.peer(pe);
        &self.peers[pe]
    }

    /// `shmem_ctx_put`: like [`SymmetricArray::put`], on this context.
    #[doc(alias = "shmem_ctx_put")]
    #[track_caller]
    pub fn put<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
        &self,
        target: &A,
        pe: usize,
        range: R,
        src: &[E],
    ) {
        let at = checked_offset(target, &range, src.len(), "put", "source");
        let peer = self.peer(pe);
        // SAFETY: range checked against the object, which lies in the heap.
        unsafe {
            self.rt
                .put_bytes(peer, at, src.as_ptr().cast(), size_of_val(src))
        }
    }

    /// `shmem_ctx_get`: like [`SymmetricArray::get`], on this context.
    #[doc(alias = "shmem_ctx_get")]
    #[track_caller]
    pub fn get<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
        &self,
        target: &A,
        pe: usize,
        range: R,
        dst: &mut [E],
    ) {
        let at = checked_offset(target, &range, dst.len(), "get", "destination");
        let peer = self.peer(pe);
        let len = size_of_val(dst);
        // SAFETY: range checked; `dst` is a unique borrow of `len` bytes.
        unsafe { self.rt.get_bytes(peer, at, dst.as_mut_ptr().cast(), len) }
    }

    /// `shmem_ctx_p`.
    #[doc(alias = "shmem_ctx_p")]
    #[track_caller]
    pub fn p<E: Element, A: SymmetricArray<E> + ?Sized>(
        &self,
        target: &A,
        pe: usize,
        index: usize,
        value: E,
    ) {
        self.at(target, pe, index).put(value)
    }

    /// `shmem_ctx_g`.
    #[doc(alias = "shmem_ctx_g")]
    #[track_caller]
    pub fn g<E: Element, A: SymmetricArray<E> + ?Sized>(
        &self,
        target: &A,
        pe: usize,
        index: usize,
    ) -> E {
        self.at(target, pe, index).get()
    }

    /// Element `index` of `target` on PE `pe`, for atomics on this context (`shmem_ctx_atomic_*`).
    #[track_caller]
    pub fn at<'a, E: Element, A: SymmetricArray<E> + ?Sized>(
        &'a self,
        target: &'a A,
        pe: usize,
        index: usize,
    ) -> Remote<'a, E> {
        crate::rma::check_index("at", index, target.len());
        let peer = self.peer(pe);
        Remote::new(
            self.rt,
            peer,
            target.__heap_offset() + index * size_of::<E>(),
        )
    }

    /// `shmem_ctx_fence`: orders this context's puts to each PE.
    #[doc(alias = "shmem_ctx_fence")]
    pub fn fence(&self) {
        std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
        if self.any_ucx
            && let Err(e) = self.worker.fence()
        {
            panic!("shmem: ctx fence failed in UCX: {e}");
        }
    }

    /// `shmem_ctx_quiet`: completes every operation issued on this context.
    #[doc(alias = "shmem_ctx_quiet")]
    pub fn quiet(&self) {
        if self.any_ucx
            && let Err(e) = self.worker.flush()
        {
            panic!("shmem: ctx quiet failed in UCX: {e}");
        }
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    }
}

impl<M: CtxMode> Drop for Ctx<'_, M> {
    /// `shmem_ctx_destroy`: quiets, then closes the context's endpoints and worker.
    #[doc(alias = "shmem_ctx_destroy")]
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        self.quiet();
        self.rt.close_route(&self.worker, &self.peers);
    }
}

/// Thread support levels (`SHMEM_THREAD_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ThreadLevel {
    /// One thread in the program.
    Single,
    /// Many threads; only the one that initialized calls the library.
    Funneled,
    /// Many threads call the library, one at a time.
    Serialized,
    /// Many threads call the library concurrently.
    Multiple,
}

/// `shmem_init_thread`: like [`init`](crate::init), and returns the thread level provided,
/// which is always the level requested (the default UCX worker is multi-threaded and the
/// runtime's state is thread-safe). What may cross threads is in the types: `#[symmetric]`
/// statics and `&SymArray` (`Sync`) for RMA from any thread; contexts by their mode
/// ([`Private`], [`Serialized`], [`Shared`]); the [`World`] and the ownership of heap arrays
/// (collectives: allocation, free, barriers) stay on the initializing thread.
#[doc(alias = "shmem_init_thread")]
pub fn init_thread(requested: ThreadLevel) -> Result<(World, ThreadLevel)> {
    let world = crate::init()?;
    Ok((world, requested))
}
