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
//!
//! Part of the operations layer, its top; uses `ops::amo`, `ops::rma`, `ops::signal`, `object`,
//! `transport::route`.

use super::amo::Remote;
use super::rma::{
    NbiScope, SymmetricArray, ibget_via, ibput_via, iget_via, iput_via, put_signal_via,
};
use super::signal::{Signal, SignalOp};
use crate::element::Element;
use crate::error::Result;
use crate::object::bounds::{check_index, checked_offset};
use crate::transport::{Peer, Transport};
use shmem_ucx::Worker;
use std::cell::Cell;
use std::marker::PhantomData;
use std::ops::RangeBounds;

mod sealed {
    pub trait Mode {}
}

/// The thread mode of a context, as a type. Implemented by [`Private`], [`Serialized`] and
/// [`Shared`].
///
/// # Examples
///
/// ```
/// use shmem_core::CtxMode;
/// use shmem_core::prelude::*;
/// #[symmetric]
/// static OUT: [u32; 4] = [0; 4];
/// // Works with a context of any mode.
/// fn fill<M: CtxMode>(ctx: &Ctx<'_, M>, pe: usize, value: u32) {
///     ctx.put(&OUT, pe, .., &[value; 4]);
///     ctx.quiet();
/// }
/// let world = shmem_core::init()?;
/// let me = world.my_pe();
/// fill(&world.ctx_create::<Private>(CtxOptions::default())?, me, 1);
/// fill(&world.ctx_default(), me, 2);
/// assert_eq!(OUT.local_get(3), 2);
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub trait CtxMode: sealed::Mode {}

/// `SHMEM_CTX_PRIVATE`: used only by the thread that created it.
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// #[symmetric]
/// static A: [u64; 2] = [0; 2];
/// let world = shmem_core::init()?;
/// // Used only by this thread: the type is neither Send nor Sync.
/// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
/// ctx.p(&A, world.my_pe(), 0, 5);
/// ctx.quiet();
/// assert_eq!(A.local_get(0), 5);
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[derive(Debug)]
pub struct Private(PhantomData<*const ()>);
/// `SHMEM_CTX_SERIALIZED`: may move between threads, used by one at a time.
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// #[symmetric]
/// static A: [u64; 2] = [0; 2];
/// let world = shmem_core::init()?;
/// let me = world.my_pe();
/// let ctx = world.ctx_create::<Serialized>(CtxOptions::default())?;
/// // A Serialized context may move to another thread (it is Send, not Sync).
/// let ctx = std::thread::scope(|s| {
///     s.spawn(move || {
///         ctx.p(&A, me, 1, 9);
///         ctx.quiet();
///         ctx
///     })
///     .join()
///     .expect("worker")
/// });
/// assert_eq!(ctx.g(&A, me, 1), 9);
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[derive(Debug)]
pub struct Serialized(PhantomData<Cell<()>>);
/// Shared: any thread may use it concurrently.
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// #[symmetric]
/// static HITS: [u64; 1] = [0; 1];
/// let world = shmem_core::init()?;
/// let me = world.my_pe();
/// // A Shared context is used by several threads at once (it is Sync).
/// let ctx = world.ctx_create::<Shared>(CtxOptions::default())?;
/// std::thread::scope(|s| {
///     for _ in 0..4 {
///         s.spawn(|| ctx.at(&HITS, me, 0).inc());
///     }
/// });
/// ctx.quiet();
/// assert_eq!(HITS.local_get(0), 4);
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[derive(Debug)]
pub struct Shared;

impl sealed::Mode for Private {}
impl sealed::Mode for Serialized {}
impl sealed::Mode for Shared {}
impl CtxMode for Private {}
impl CtxMode for Serialized {}
impl CtxMode for Shared {}

/// Options of [`World::ctx_create`](crate::World::ctx_create) besides the thread mode.
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// let world = shmem_core::init()?;
/// let options = CtxOptions { nostore: true };
/// let ctx = world.ctx_create::<Private>(options)?;
/// assert_eq!(ctx.options(), options);
/// assert!(!CtxOptions::default().nostore);
/// # Ok::<(), shmem_core::Error>(())
/// ```
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
    tp: &'static Transport,
    route: Route,
    options: CtxOptions,
    _mode: PhantomData<M>,
    /// Borrows the `World` for `'w`.
    _world: PhantomData<fn() -> &'w ()>,
}

/// Where a context's operations go.
enum Route {
    /// Its own worker and endpoints.
    Own {
        // Field order is drop order: endpoints (in `peers`) before their worker.
        peers: Box<[Peer]>,
        worker: Worker,
        any_ucx: bool,
    },
    /// The default context: the runtime's own worker and endpoints (`SHMEM_CTX_DEFAULT`).
    Default,
}

// No `unsafe impl Send/Sync`: every field is Send and Sync (the transport, the peers and the
// multi-threaded worker say why in their own SAFETY notes), so the mode marker `M` alone decides,
// by the compiler's auto traits, which threads may use the context.

impl<M: CtxMode> std::fmt::Debug for Ctx<'_, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx")
            .field("options", &self.options)
            .finish()
    }
}

/// Creates contexts from any thread: made by [`World::ctx_factory`], `Send`, `Sync` and
/// `Copy`, and bound to the `World`'s lifetime.
///
/// [`World::ctx_factory`]: crate::World::ctx_factory
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// #[symmetric]
/// static PER_THREAD: [u32; 3] = [0; 3];
/// let world = shmem_core::init()?;
/// let me = world.my_pe();
/// let factory = world.ctx_factory(); // Copy, Send and Sync
/// std::thread::scope(|s| {
///     for t in 0..3 {
///         s.spawn(move || {
///             let ctx = factory.ctx_create::<Private>(CtxOptions::default()).expect("context");
///             ctx.p(&PER_THREAD, me, t, t as u32 + 1);
///             ctx.quiet();
///         });
///     }
/// });
/// assert_eq!(PER_THREAD.local_get(2), 3);
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct CtxFactory<'w> {
    tp: &'static Transport,
    /// Borrows the `World` for `'w`.
    _world: PhantomData<fn() -> &'w ()>,
}

impl std::fmt::Debug for CtxFactory<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CtxFactory").finish_non_exhaustive()
    }
}

impl<'w> CtxFactory<'w> {
    /// The factory of the transport `tp`; the caller ties `'w` to the `World`.
    pub(crate) fn new(tp: &'static Transport) -> CtxFactory<'w> {
        CtxFactory {
            tp,
            _world: PhantomData,
        }
    }

    /// `shmem_ctx_create` on the calling thread: as [`World::ctx_create`].
    ///
    /// [`World::ctx_create`]: crate::World::ctx_create
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static A: [u8; 4] = [0; 4];
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// let factory = world.ctx_factory();
    /// std::thread::scope(|s| {
    ///     s.spawn(move || -> shmem_core::Result<()> {
    ///         let ctx = factory.ctx_create::<Private>(CtxOptions::default())?;
    ///         ctx.put(&A, me, .., &[1, 2, 3, 4]);
    ///         ctx.quiet();
    ///         Ok(())
    ///     })
    ///     .join()
    ///     .expect("worker")
    /// })?;
    /// assert_eq!(A.local_get(3), 4);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_ctx_create")]
    pub fn ctx_create<M: CtxMode>(&self, options: CtxOptions) -> Result<Ctx<'w, M>> {
        let (worker, peers, any_ucx) = self.tp.context_route()?;
        Ok(Ctx {
            tp: self.tp,
            route: Route::Own {
                peers,
                worker,
                any_ucx,
            },
            options,
            _mode: PhantomData,
            _world: PhantomData,
        })
    }
}

impl<'w> Ctx<'w, Shared> {
    /// The default context of the transport `tp` (`SHMEM_CTX_DEFAULT`); the caller ties `'w` to
    /// the `World`.
    pub(crate) fn default_of(tp: &'static Transport) -> Ctx<'w, Shared> {
        Ctx {
            tp,
            route: Route::Default,
            options: CtxOptions::default(),
            _mode: PhantomData,
            _world: PhantomData,
        }
    }
}

impl<M: CtxMode> Ctx<'_, M> {
    /// The options the context was made with (`shmem_ctx_get_options` style).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let ctx = world.ctx_create::<Private>(CtxOptions { nostore: true })?;
    /// assert!(ctx.options().nostore);
    /// assert_eq!(world.ctx_default().options(), CtxOptions::default());
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_ctx_get_options")]
    pub fn options(&self) -> CtxOptions {
        self.options
    }

    #[inline]
    #[track_caller]
    pub(crate) fn peer(&self, pe: usize) -> &Peer {
        // The runtime's check gives the standard message for a bad PE.
        let main = self.tp.peer(pe);
        match &self.route {
            Route::Own { peers, .. } => &peers[pe],
            Route::Default => main,
        }
    }

    /// The peers of this context's own route (`None` for the default context), for
    /// [`NbiScope`]s.
    fn own_peers(&self) -> Option<&[Peer]> {
        match &self.route {
            Route::Own { peers, .. } => Some(peers),
            Route::Default => None,
        }
    }

    /// `shmem_ctx_put_signal`: like [`SymmetricArray::put_signal`], on this context.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static ROW: [f32; 4] = [0.0; 4];
    /// #[symmetric]
    /// static DONE: u64 = 0;
    /// let world = shmem_core::init()?;
    /// let (me, n) = (world.my_pe(), world.n_pes());
    /// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
    /// ctx.put_signal(&ROW, (me + 1) % n, .., &[me as f32; 4], DONE.signal(), SignalOp::Set(1));
    /// DONE.signal().wait_until(Cmp::Eq, 1); // the row from the left is here
    /// assert_eq!(ROW.local_get(0), ((me + n - 1) % n) as f32);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_ctx_put_signal")]
    #[track_caller]
    pub fn put_signal<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
        &self,
        target: &A,
        pe: usize,
        range: R,
        src: &[E],
        signal: Signal<'_>,
        op: SignalOp,
    ) {
        put_signal_via(self.tp, self.peer(pe), target, range, src, signal, op);
    }

    /// `shmem_ctx_iput`: like [`SymmetricArray::iput`], on this context.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static EVENS: [i32; 6] = [0; 6];
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
    /// ctx.iput(&EVENS, me, 0..6, 2, &[7, 8, 9], 1); // elements 0, 2 and 4
    /// ctx.quiet();
    /// let mut all = [0; 6];
    /// EVENS.local_read(.., &mut all);
    /// assert_eq!(all, [7, 0, 8, 0, 9, 0]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_ctx_iput")]
    #[track_caller]
    pub fn iput<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
        &self,
        target: &A,
        pe: usize,
        range: R,
        stride: usize,
        src: &[E],
        src_stride: usize,
    ) {
        iput_via(
            self.tp,
            self.peer(pe),
            target,
            range,
            stride,
            src,
            src_stride,
        );
    }

    /// `shmem_ctx_iget`: like [`SymmetricArray::iget`], on this context.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static PAIRS: [i32; 6] = [1, -1, 2, -2, 3, -3];
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
    /// let mut negatives = [0; 3];
    /// ctx.iget(&PAIRS, me, 1..6, 2, &mut negatives, 1); // elements 1, 3 and 5
    /// assert_eq!(negatives, [-1, -2, -3]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_ctx_iget")]
    #[track_caller]
    pub fn iget<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
        &self,
        target: &A,
        pe: usize,
        range: R,
        stride: usize,
        dst: &mut [E],
        dst_stride: usize,
    ) {
        iget_via(
            self.tp,
            self.peer(pe),
            target,
            range,
            stride,
            dst,
            dst_stride,
        );
    }

    /// `shmem_ctx_ibput` (OpenSHMEM 1.6): like [`SymmetricArray::ibput`], on this context.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static PAIRS: [i32; 8] = [0; 8];
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
    /// // Two blocks of two, four apart, from two blocks of two, three apart.
    /// ctx.ibput(&PAIRS, me, .., 4, &[1, 2, 0, 3, 4], 3, 2);
    /// ctx.quiet();
    /// let mut all = [0; 8];
    /// PAIRS.local_read(.., &mut all);
    /// assert_eq!(all, [1, 2, 0, 0, 3, 4, 0, 0]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_ctx_ibput")]
    #[track_caller]
    #[allow(clippy::too_many_arguments)] // the standard's argument list, less the pointers
    pub fn ibput<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
        &self,
        target: &A,
        pe: usize,
        range: R,
        stride: usize,
        src: &[E],
        src_stride: usize,
        block: usize,
    ) {
        ibput_via(
            self.tp,
            self.peer(pe),
            target,
            range,
            (stride, block),
            src,
            src_stride,
        );
    }

    /// `shmem_ctx_ibget` (OpenSHMEM 1.6): like [`SymmetricArray::ibget`], on this context.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static ROWS: [i32; 6] = [1, 2, 3, 4, 5, 6];
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
    /// let mut firsts = [0; 4];
    /// ctx.ibget(&ROWS, me, .., 3, &mut firsts, 2, 2); // the first two of each row of three
    /// assert_eq!(firsts, [1, 2, 4, 5]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_ctx_ibget")]
    #[track_caller]
    #[allow(clippy::too_many_arguments)] // the standard's argument list, less the pointers
    pub fn ibget<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
        &self,
        target: &A,
        pe: usize,
        range: R,
        stride: usize,
        dst: &mut [E],
        dst_stride: usize,
        block: usize,
    ) {
        ibget_via(
            self.tp,
            self.peer(pe),
            target,
            range,
            (stride, block),
            dst,
            dst_stride,
        );
    }

    /// `shmem_ctx_signal_add` (OpenSHMEM 1.6): like [`Signal::add`], on this context.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static HITS: u64 = 0;
    /// let world = shmem_core::init()?;
    /// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
    /// ctx.signal_add(HITS.signal(), 0, 2);
    /// ctx.quiet();
    /// if world.my_pe() == 0 {
    ///     HITS.signal().wait_until(Cmp::Eq, 2 * world.n_pes() as u64);
    /// }
    /// # world.barrier_all();
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_ctx_signal_add")]
    #[track_caller]
    pub fn signal_add(&self, signal: Signal<'_>, pe: usize, value: u64) {
        signal.remote_update_via(self.peer(pe), true, value);
    }

    /// `shmem_ctx_signal_set` (OpenSHMEM 1.6): like [`Signal::set`], on this context.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static GO: u64 = 0;
    /// let world = shmem_core::init()?;
    /// let right = (world.my_pe() + 1) % world.n_pes();
    /// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
    /// ctx.signal_set(GO.signal(), right, 7);
    /// assert_eq!(GO.signal().wait_until(Cmp::Eq, 7), 7);
    /// # world.barrier_all();
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_ctx_signal_set")]
    #[track_caller]
    pub fn signal_set(&self, signal: Signal<'_>, pe: usize, value: u64) {
        signal.remote_update_via(self.peer(pe), false, value);
    }

    /// `shmem_ctx_pe_quiet` (OpenSHMEM 1.6): completes this context's operations to the PEs in
    /// `pes` (as [`quiet`](Self::quiet), for those PEs only). Panics if a PE is out of range.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static DATA: [u32; 2] = [0; 2];
    /// #[symmetric]
    /// static READY: u64 = 0;
    /// let world = shmem_core::init()?;
    /// let right = (world.my_pe() + 1) % world.n_pes();
    /// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
    /// ctx.put(&DATA, right, .., &[5, 6]);
    /// ctx.pe_quiet(&[right]); // the data is at `right` ...
    /// READY.signal().set(right, 1); // ... before the flag
    /// READY.signal().wait_until(Cmp::Eq, 1);
    /// assert_eq!(DATA.local_get(1), 6);
    /// # world.barrier_all();
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_ctx_pe_quiet")]
    #[track_caller]
    pub fn pe_quiet(&self, pes: &[usize]) {
        for &pe in pes {
            self.tp.flush_peer(self.peer(pe));
        }
        // Direct stores become visible in program order once fenced.
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    }

    /// Non-blocking operations on this context (`shmem_ctx_put_nbi`, `shmem_ctx_get_nbi`,
    /// `shmem_ctx_put_signal_nbi`, the fetching atomics' `_nbi` forms): as [`World::nbi`],
    /// and the scope ends with this context's `quiet` (also when it ends by a panic).
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static A: [u64; 4] = [0; 4];
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
    /// let src = [1, 2, 3, 4];
    /// let mut back = [0; 4];
    /// let mut old = 0;
    /// ctx.nbi(|s| {
    ///     s.put(&A, me, .., &src);
    ///     s.fetch(&mut old, || ctx.at(&A, me, 0).fetch_add(0));
    /// });
    /// ctx.nbi(|s| s.get(&A, me, .., &mut back));
    /// assert_eq!(back, src);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    ///
    /// [`World::nbi`]: crate::World::nbi
    #[doc(alias = "shmem_ctx_put_nbi")]
    #[doc(alias = "shmem_ctx_get_nbi")]
    pub fn nbi<'buf, R>(&'buf self, f: impl FnOnce(&NbiScope<'buf>) -> R) -> R {
        /// Quiets the context when the scope ends, also by a panic.
        struct Quiet<'c, 'w, M: CtxMode>(&'c Ctx<'w, M>);
        impl<M: CtxMode> Drop for Quiet<'_, '_, M> {
            fn drop(&mut self) {
                self.0.quiet();
            }
        }
        let _quiet = Quiet(self);
        let scope = NbiScope::on_route(self.tp, self.own_peers());
        f(&scope)
    }

    /// `shmem_ctx_put`: like [`SymmetricArray::put`], on this context.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u64>(4);
    /// let (me, n) = (world.my_pe(), world.n_pes());
    /// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
    /// ctx.put(&a, (me + 1) % n, 1..3, &[me as u64, 100]);
    /// ctx.quiet(); // this context's puts are complete
    /// world.barrier_all();
    /// assert_eq!((a.local_get(1), a.local_get(2)), (((me + n - 1) % n) as u64, 100));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
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
            self.tp
                .put_bytes(peer, at, src.as_ptr().cast(), size_of_val(src))
        }
    }

    /// `shmem_ctx_get`: like [`SymmetricArray::get`], on this context.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static WORDS: [u32; 3] = [4, 5, 6];
    /// let world = shmem_core::init()?;
    /// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
    /// let mut back = [0; 2];
    /// ctx.get(&WORDS, 0, 1.., &mut back); // from PE 0
    /// assert_eq!(back, [5, 6]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
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
        unsafe { self.tp.get_bytes(peer, at, dst.as_mut_ptr().cast(), len) }
    }

    /// `shmem_ctx_p`.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<i16>(2);
    /// let me = world.my_pe();
    /// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
    /// ctx.p(&a, me, 1, -7);
    /// ctx.quiet();
    /// assert_eq!(a.local_get(1), -7);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static LIMITS: [u32; 2] = [16, 4096];
    /// let world = shmem_core::init()?;
    /// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
    /// assert_eq!(ctx.g(&LIMITS, 0, 1), 4096); // from PE 0
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static COUNT: [u64; 1] = [0; 1];
    /// let world = shmem_core::init()?;
    /// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
    /// ctx.at(&COUNT, 0, 0).add(1); // shmem_ctx_atomic_add on PE 0
    /// ctx.quiet();
    /// world.barrier_all();
    /// if world.my_pe() == 0 {
    ///     assert_eq!(COUNT.local_get(0), world.n_pes() as u64);
    /// }
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[track_caller]
    pub fn at<'a, E: Element, A: SymmetricArray<E> + ?Sized>(
        &'a self,
        target: &'a A,
        pe: usize,
        index: usize,
    ) -> Remote<'a, E> {
        check_index("at", index, target.len());
        let peer = self.peer(pe);
        Remote::new(
            self.tp,
            peer,
            target.__heap_offset() + index * size_of::<E>(),
        )
    }

    /// `shmem_ctx_fence`: orders this context's puts to each PE.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static DATA: [u64; 1] = [0; 1];
    /// #[symmetric]
    /// static FLAG: [u64; 1] = [0; 1];
    /// let world = shmem_core::init()?;
    /// let (me, n) = (world.my_pe(), world.n_pes());
    /// let right = (me + 1) % n;
    /// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
    /// ctx.p(&DATA, right, 0, 42);
    /// ctx.fence(); // the data reaches `right` before the flag
    /// ctx.p(&FLAG, right, 0, 1);
    /// FLAG.wait_until(0, Cmp::Eq, 1);
    /// assert_eq!(DATA.local_get(0), 42);
    /// # ctx.quiet();
    /// # world.barrier_all();
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_ctx_fence")]
    #[track_caller]
    pub fn fence(&self) {
        let Route::Own {
            worker, any_ucx, ..
        } = &self.route
        else {
            return self.tp.fence();
        };
        std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
        if *any_ucx && let Err(e) = worker.fence() {
            panic!("shmem: ctx fence failed in UCX: {e}");
        }
    }

    /// `shmem_ctx_quiet`: completes every operation issued on this context.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(8);
    /// let me = world.my_pe();
    /// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
    /// for i in 0..8 {
    ///     ctx.p(&a, me, i, i as u32);
    /// }
    /// ctx.quiet(); // all eight are complete; other contexts' operations need not be
    /// assert_eq!(a.local_get(7), 7);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_ctx_quiet")]
    #[track_caller]
    pub fn quiet(&self) {
        let Route::Own {
            worker, any_ucx, ..
        } = &self.route
        else {
            return self.tp.quiet();
        };
        if *any_ucx && let Err(e) = worker.flush() {
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
        if matches!(self.route, Route::Own { .. }) {
            self.quiet();
            if let Route::Own {
                peers,
                worker,
                any_ucx,
            } = std::mem::replace(&mut self.route, Route::Default)
            {
                self.tp.retire_route((worker, peers, any_ucx));
            }
        }
    }
}
