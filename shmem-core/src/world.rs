//! [`World`]: the initialized runtime, one per process, and every job-wide operation as one of
//! its methods.
//!
//! **The top of the crate's layers** (below it only `lib.rs`, which re-exports): every method is
//! a thin delegation to the layer that implements it, with the `World`'s lifetime given to what
//! borrows it (heap arrays, teams, contexts). May use every layer.

use crate::coll::team::Team;
use crate::error::Result;
use crate::mem::allocator::Allocator;
use crate::object::heap::{MallocHints, SymArray};
use crate::object::storage::Storable;
use crate::ops::ctx::{Ctx, CtxFactory, CtxMode, CtxOptions, Shared};
use crate::ops::p2p;
use crate::ops::query::SymmetricObject;
use crate::ops::rma::{NbiScope, QuietOnDrop};
use crate::runtime::{self, Runtime};
use crate::transport::Transport;
use crate::transport::collective::barrier_all;
use std::fmt;
use std::io::Write;
use std::marker::PhantomData;
use std::sync::Mutex;

/// The initialized runtime: proof that `init` succeeded, and the handle for job-wide operations.
///
/// There is one per process. Dropping it finalizes: quiet, barrier, close the UCX endpoints,
/// release the symmetric heap. Symmetric heap arrays borrow it, so they are freed first.
///
/// ```
/// let world = shmem_core::init()?;
/// println!("PE {} of {}", world.my_pe(), world.n_pes());
/// world.barrier_all();
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[doc(alias = "shmem_finalize")]
pub struct World {
    rt: &'static Runtime,
    /// The runtime's transport (`rt.tp`), kept at hand.
    tp: &'static Transport,
    /// Collectives must be called in the same order by every PE, from one thread.
    _not_send: PhantomData<*const ()>,
}

impl fmt::Debug for World {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("World")
            .field("my_pe", &self.my_pe())
            .field("n_pes", &self.n_pes())
            .finish()
    }
}

/// Starts the runtime: joins the job started by `shmemrun` (or runs as a single PE without it),
/// maps the symmetric heap, connects to every PE and sets every `#[symmetric]` static to its
/// initial value.
///
/// A second call while the [`World`] lives returns [`Error::AlreadyInitialized`]; a call after it
/// was dropped returns [`Error::Finalized`]. A PE that does not reach the rendezvous within
/// `SHMEM_INIT_TIMEOUT` seconds (default 60) makes `init` fail on the others with
/// [`Error::RendezvousTimeout`].
///
/// [`Error::AlreadyInitialized`]: crate::Error::AlreadyInitialized
/// [`Error::Finalized`]: crate::Error::Finalized
/// [`Error::RendezvousTimeout`]: crate::Error::RendezvousTimeout
///
/// # Examples
///
/// ```
/// let world = shmem_core::init()?;
/// assert!(world.my_pe() < world.n_pes());
/// // One World per process: a second init while it lives is an error.
/// assert!(matches!(shmem_core::init(), Err(shmem_core::Error::AlreadyInitialized)));
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[doc(alias = "shmem_init")]
pub fn init() -> Result<World> {
    let rt = runtime::init()?;
    Ok(World {
        rt,
        tp: rt.tp,
        _not_send: PhantomData,
    })
}

impl World {
    /// This PE's number, `0..n_pes()` (`shmem_my_pe`).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static WHO: [usize; 1] = [usize::MAX; 1];
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// WHO.local_set(0, me);
    /// world.barrier_all();
    /// assert_eq!(WHO.g(me, 0), me);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_my_pe")]
    #[inline]
    pub fn my_pe(&self) -> usize {
        self.tp.my_pe
    }

    /// Number of PEs in the job (`shmem_n_pes`).
    ///
    /// # Examples
    ///
    /// ```
    /// let world = shmem_core::init()?;
    /// let n = world.n_pes(); // 1 for a program started without shmemrun
    /// let right = (world.my_pe() + 1) % n;
    /// assert!(n >= 1 && right < n);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_n_pes")]
    #[inline]
    pub fn n_pes(&self) -> usize {
        self.tp.n_pes
    }

    /// `shmem_barrier_all`: completes this PE's outstanding operations (quiet), then waits until
    /// every PE has arrived.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static FROM_LEFT: [usize; 1] = [0; 1];
    /// let world = shmem_core::init()?;
    /// let (me, n) = (world.my_pe(), world.n_pes());
    /// FROM_LEFT.p((me + 1) % n, 0, me);
    /// world.barrier_all(); // every PE's put is complete and every PE has arrived
    /// assert_eq!(FROM_LEFT.local_get(0), (me + n - 1) % n);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_barrier_all")]
    pub fn barrier_all(&self) {
        barrier_all(self.tp);
    }

    /// `shmem_sync_all`: waits until every PE has arrived, without completing outstanding puts
    /// (use [`barrier_all`](Self::barrier_all) for that).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static SEEN: [u64; 1] = [0; 1];
    /// let world = shmem_core::init()?;
    /// let (me, n) = (world.my_pe(), world.n_pes());
    /// SEEN.p((me + 1) % n, 0, 1);
    /// world.quiet();    // this PE's put is complete ...
    /// world.sync_all(); // ... and so is every other PE's, once all have arrived
    /// assert_eq!(SEEN.local_get(0), 1);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_sync_all")]
    pub fn sync_all(&self) {
        self.team_world().sync();
    }

    /// `shmem_quiet`: every put, get and non-blocking operation this PE issued is complete and
    /// visible at its target.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(4);
    /// let me = world.my_pe();
    /// a.put(me, .., &[1, 2, 3, 4]);
    /// world.quiet(); // the put is complete at its target
    /// assert_eq!(a.local_get(3), 4);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_quiet")]
    pub fn quiet(&self) {
        self.tp.quiet();
    }

    /// `shmem_fence`: puts to any one PE issued before the fence are delivered before puts to
    /// that PE issued after it. (Puts to different PEs are not ordered; use [`quiet`](Self::quiet).)
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static DATA: [u64; 4] = [0; 4];
    /// #[symmetric]
    /// static READY: [u64; 1] = [0; 1];
    /// let world = shmem_core::init()?;
    /// let (me, n) = (world.my_pe(), world.n_pes());
    /// let right = (me + 1) % n;
    /// DATA.put(right, .., &[7; 4]);
    /// world.fence(); // the data reaches `right` before the flag
    /// READY.p(right, 0, 1);
    /// READY.wait_until(0, Cmp::Eq, 1);
    /// assert_eq!(DATA.local_get(3), 7);
    /// # world.barrier_all();
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_fence")]
    pub fn fence(&self) {
        self.tp.fence();
    }

    /// Collectively allocates `len` zeroed elements on the symmetric heap (`shmem_calloc`).
    /// Every PE must call it with the same `len`, in the same order.
    ///
    /// # Panics
    /// When the PEs ask for different sizes (the message names both) or the heap is exhausted (the
    /// message gives requested and free bytes). [`try_alloc`](Self::try_alloc) returns these as
    /// errors instead.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<f64>(1000);
    /// assert_eq!(a.len(), 1000);
    /// assert_eq!(a.local_get(999), 0.0);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_malloc")]
    #[doc(alias = "shmem_calloc")]
    #[track_caller]
    pub fn alloc<E: Storable>(&self, len: usize) -> SymArray<'_, E> {
        match self.try_alloc(len) {
            Ok(a) => a,
            Err(e) => panic!(
                "shmem: alloc of {len} x {}: {e}",
                std::any::type_name::<E>()
            ),
        }
    }

    /// Like [`alloc`](Self::alloc), returning [`Error::AllocMismatch`](crate::Error::AllocMismatch) or
    /// [`Error::HeapExhausted`](crate::Error::HeapExhausted) instead of panicking. Either way the failure is the same on every
    /// PE, so the job stays consistent.
    ///
    /// [`Error::AllocMismatch`]: crate::Error::AllocMismatch
    /// [`Error::HeapExhausted`]: crate::Error::HeapExhausted
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.try_alloc::<u64>(1024)?;
    /// assert_eq!(a.len(), 1024);
    /// // Far more than any heap: an error on every PE, not a panic.
    /// let huge = world.try_alloc::<u8>(1 << 50);
    /// assert!(matches!(huge, Err(shmem_core::Error::HeapExhausted { .. })));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    pub fn try_alloc<E: Storable>(&self, len: usize) -> Result<SymArray<'_, E>> {
        SymArray::alloc(self.heap(), len, None, None)
    }

    /// Runs `f` with a scope for non-blocking puts and gets (`shmem_put_nbi`, `shmem_get_nbi`) and
    /// quiets when it ends. Buffers passed to the scope stay borrowed until then, so they cannot
    /// be reused while a transfer is in flight.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(8);
    /// let me = world.my_pe();
    /// let src = [me as u32; 8];
    /// let mut back = [0u32; 8];
    /// world.nbi(|s| s.put(&a, me, .., &src));
    /// world.nbi(|s| s.get(&a, me, .., &mut back));
    /// assert_eq!(back, src);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_put_nbi")]
    #[doc(alias = "shmem_get_nbi")]
    pub fn nbi<'buf, R>(&self, f: impl FnOnce(&NbiScope<'buf>) -> R) -> R {
        let _quiet = QuietOnDrop(self.tp);
        let scope = NbiScope::new(self.tp);
        f(&scope)
    }

    /// The handles a heap allocation needs: the transport and the allocator.
    /// What this PE's runtime holds now, for watching a long job for leaks: the symmetric
    /// heap's free space, the teams and the contexts alive. Local, not collective.
    ///
    /// ```no_run
    /// let world = shmem_core::init()?;
    /// let before = world.usage();
    /// {
    ///     let a = world.alloc::<u64>(1000);
    ///     let team = world.team_world().split_strided(0, 1, world.n_pes(), Default::default())?;
    ///     let ctx = world.ctx_create::<shmem_core::Private>(Default::default())?;
    ///     assert!(world.usage().heap_free < before.heap_free);
    ///     assert_eq!(world.usage().contexts, before.contexts + 1);
    ///     drop((ctx, team, a));
    /// }
    /// assert_eq!(world.usage(), before);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    pub fn usage(&self) -> Usage {
        let (heap_free, heap_largest_free, heap_free_ranges) = self
            .rt
            .allocator
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .stats();
        Usage {
            heap_free,
            heap_largest_free,
            heap_free_ranges,
            teams: self.tp.slots.mask().count_ones() as usize,
            contexts: self.tp.routes.load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    fn heap(&self) -> (&'static Transport, &'static Mutex<Allocator>) {
        (self.tp, &self.rt.allocator)
    }

    /// `shmem_align` with `shmem_calloc`'s zeroing: collectively allocates `len` zeroed elements
    /// whose address is a multiple of `align` on every PE. `align` must be a power of two; one
    /// below `align_of::<E>()` is raised to it (C's `shmem_align` is untyped). Every PE must pass
    /// the same `len` and `align`.
    ///
    /// Every PE's heap is mapped at a multiple of 1 GiB, so alignments up to 1 GiB work (the
    /// same offset is aligned everywhere). Should UCX not have placed a heap there, a large
    /// alignment that cannot be met at one offset on every PE makes every PE panic, saying so.
    ///
    /// # Panics
    /// When `align` is not a power of two, when the PEs pass different alignments, and in the
    /// cases of [`alloc`](Self::alloc).
    /// [`try_alloc_aligned`](Self::try_alloc_aligned) returns size mismatches and heap exhaustion
    /// as errors.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc_aligned::<u64>(10, 4096);
    /// let addr = a.peer_slice(world.my_pe()).map(|v| v.as_ptr() as usize);
    /// assert_eq!(addr.map(|p| p % 4096), Some(0));
    /// assert_eq!(a.local_get(9), 0);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_align")]
    #[doc(alias = "shmem_calloc")]
    #[track_caller]
    pub fn alloc_aligned<E: Storable>(&self, len: usize, align: usize) -> SymArray<'_, E> {
        match self.try_alloc_aligned(len, align) {
            Ok(a) => a,
            Err(e) => panic!(
                "shmem: alloc_aligned of {len} x {} at alignment {align}: {e}",
                std::any::type_name::<E>()
            ),
        }
    }

    /// Like [`alloc_aligned`](Self::alloc_aligned), returning [`Error::AllocMismatch`](crate::Error::AllocMismatch) (PEs that
    /// disagree on `len`) and [`Error::HeapExhausted`](crate::Error::HeapExhausted) as errors. A bad or disagreeing `align`
    /// still panics: it is a bug at the call site.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.try_alloc_aligned::<u8>(3, 256)?;
    /// assert_eq!(a.len(), 3);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[track_caller]
    pub fn try_alloc_aligned<E: Storable>(
        &self,
        len: usize,
        align: usize,
    ) -> Result<SymArray<'_, E>> {
        if !align.is_power_of_two() {
            panic!("shmem: alloc_aligned: alignment {align} must be a power of two");
        }
        // As C's untyped `shmem_align`: an alignment below the element's own is met anyway.
        SymArray::alloc(self.heap(), len, Some(align.max(align_of::<E>())), None)
    }

    /// `shmem_malloc_with_hints` (zeroed): collectively allocates `len` elements, telling the
    /// library how they will be used. Every PE must pass the same `len` and `hints`.
    ///
    /// # Panics
    /// When the PEs disagree on `len` or `hints` or the heap is exhausted.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// use shmem_core::MallocHints;
    /// let world = shmem_core::init()?;
    /// let flags = world.alloc_with_hints::<u64>(4, MallocHints::SIGNAL_REMOTE);
    /// assert_eq!(flags.local_get(3), 0);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_malloc_with_hints")]
    #[track_caller]
    pub fn alloc_with_hints<E: Storable>(&self, len: usize, hints: MallocHints) -> SymArray<'_, E> {
        match SymArray::alloc(self.heap(), len, None, Some(hints)) {
            Ok(a) => a,
            Err(e) => panic!(
                "shmem: alloc_with_hints of {len} x {} with {hints:?}: {e}",
                std::any::type_name::<E>()
            ),
        }
    }

    /// The team of all PEs (`SHMEM_TEAM_WORLD`).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let all = world.team_world();
    /// assert_eq!((all.my_pe(), all.n_pes()), (world.my_pe(), world.n_pes()));
    /// let total = world.alloc::<u64>(1);
    /// all.sum_reduce(&total, &[1]);
    /// assert_eq!(total.local_get(0), world.n_pes() as u64);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "SHMEM_TEAM_WORLD")]
    pub fn team_world(&self) -> Team<'_> {
        Team::world(self.tp)
    }

    /// The PEs that share this node's memory with this PE (`SHMEM_TEAM_SHARED`): those whose
    /// heap is mapped here. Collective over the world team (every PE calls it). They must form an
    /// arithmetic progression of world PEs, as they do when `shmemrun` starts the job.
    ///
    /// # Panics
    /// If the node's PEs are not evenly spaced in the world numbering.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let node = world.team_shared();
    /// let a = world.alloc::<u32>(1);
    /// // Every member of the node team is mapped here: plain loads and stores reach it.
    /// for pe in 0..node.n_pes() {
    ///     assert!(node.ptr(&a, pe).is_some());
    /// }
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "SHMEM_TEAM_SHARED")]
    pub fn team_shared(&self) -> Team<'_> {
        Team::shared(self.tp)
    }

    /// `shmem_ctx_create`: a new context of mode `M` ([`Private`](crate::Private), [`Serialized`](crate::Serialized) or
    /// [`Shared`]). Not collective. Fails only if UCX cannot make a worker or endpoints.
    ///
    /// A context has a UCX worker of its own and, to each PE reached through UCX, an endpoint
    /// made at its first operation there. A dropped context's worker and endpoints are kept
    /// (up to 8) for the next `ctx_create`, so a loop that makes and drops contexts connects
    /// once and costs no memory per context.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static A: [u64; 4] = [0; 4];
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
    /// ctx.put(&A, me, .., &[1, 2, 3, 4]);
    /// ctx.quiet(); // completes this context's puts only
    /// assert_eq!(A.local_get(3), 4);
    /// assert_eq!(world.usage().contexts, 1);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_ctx_create")]
    pub fn ctx_create<M: CtxMode>(&self, options: CtxOptions) -> Result<Ctx<'_, M>> {
        self.ctx_factory().ctx_create(options)
    }

    /// `SHMEM_CTX_DEFAULT`: the default context, whose operations are the plain ones (the
    /// runtime's own worker and endpoints; its `quiet` is [`World::quiet`]). Dropping it
    /// destroys nothing.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static X: [u32; 2] = [0; 2];
    /// let world = shmem_core::init()?;
    /// let ctx = world.ctx_default();
    /// ctx.p(&X, world.my_pe(), 1, 7);
    /// ctx.quiet();
    /// assert_eq!(X.local_get(1), 7);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "SHMEM_CTX_DEFAULT")]
    pub fn ctx_default(&self) -> Ctx<'_, Shared> {
        Ctx::default_of(self.tp)
    }

    /// A handle that creates contexts and can be shared with other threads (it is `Send`
    /// and `Sync`; the `World` is not, because collectives must be called from one thread in
    /// the same order on every PE). A worker thread makes its own `Private` contexts with it,
    /// instead of receiving ones made on the main thread; it borrows the `World`, so scoped
    /// threads use it.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static SLOTS: [u64; 4] = [0; 4];
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// let factory = world.ctx_factory();
    /// std::thread::scope(|s| {
    ///     for t in 0..2 {
    ///         s.spawn(move || {
    ///             let ctx = factory.ctx_create::<Private>(CtxOptions::default()).expect("ctx");
    ///             ctx.p(&SLOTS, me, t, 10 + t as u64);
    ///             ctx.quiet();
    ///         });
    ///     }
    /// });
    /// assert_eq!((SLOTS.local_get(0), SLOTS.local_get(1)), (10, 11));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    pub fn ctx_factory(&self) -> CtxFactory<'_> {
        CtxFactory::new(self.tp)
    }

    /// `shmem_pe_quiet` (OpenSHMEM 1.6): completes every put, get and non-blocking operation this
    /// PE issued to the PEs in `pes` (and only those need be waited for); afterwards they are
    /// visible there. Panics if a PE is out of range.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static DATA: [u32; 4] = [0; 4];
    /// #[symmetric]
    /// static READY: u64 = 0;
    /// let world = shmem_core::init()?;
    /// let right = (world.my_pe() + 1) % world.n_pes();
    /// DATA.put(right, .., &[1, 2, 3, 4]);
    /// world.pe_quiet(&[right]);          // the data is at `right` ...
    /// READY.signal().set(right, 1);      // ... before the flag
    /// READY.signal().wait_until(Cmp::Eq, 1);
    /// assert_eq!(DATA.local_get(3), 4);
    /// # world.barrier_all();
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_pe_quiet")]
    #[track_caller]
    pub fn pe_quiet(&self, pes: &[usize]) {
        p2p::pe_quiet(self.tp, pes);
    }

    /// `shmem_pe_accessible`: whether PE `pe` can be reached by puts, gets and atomics; true for
    /// every PE of the job (`0..n_pes()`), false for any other number.
    ///
    /// ```
    /// let world = shmem_core::init()?;
    /// assert!(world.pe_accessible(world.my_pe()));
    /// assert!(!world.pe_accessible(world.n_pes()));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_pe_accessible")]
    pub fn pe_accessible(&self, pe: usize) -> bool {
        pe < self.n_pes()
    }

    /// `shmem_addr_accessible`: whether `obj` can be reached on PE `pe`. Every symmetric object
    /// (static or heap) exists on every PE of the job, so this is true exactly when
    /// [`pe_accessible`](Self::pe_accessible) is.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static A: [u32; 4] = [0; 4];
    /// let world = shmem_core::init()?;
    /// let h = world.alloc::<u8>(16);
    /// assert!(world.addr_accessible(&A, 0));
    /// assert!(world.addr_accessible(&h, world.n_pes() - 1));
    /// assert!(!world.addr_accessible(&h, world.n_pes()));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_addr_accessible")]
    pub fn addr_accessible<O: SymmetricObject + ?Sized>(&self, obj: &O, pe: usize) -> bool {
        // The object is symmetric by construction; asking for its offset checks it is placed.
        let _ = obj.__object_offset();
        self.pe_accessible(pe)
    }

    /// `shmem_global_exit`: ends every PE of the job, which exits with `status`.
    ///
    /// Under `shmemrun` the launcher is told first: it prints
    /// `shmemrun: PE i called global_exit(status)`, terminates every other PE (wherever it is,
    /// even inside a barrier) and exits with `status`. A program run without the launcher just
    /// exits. Nothing is finalized and no destructor runs; standard output and error are flushed.
    ///
    /// ```no_run
    /// let world = shmem_core::init()?;
    /// if world.my_pe() == 0 {
    ///     eprintln!("bad input; giving up");
    ///     world.global_exit(2);
    /// }
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_global_exit")]
    pub fn global_exit(&self, status: i32) -> ! {
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        self.rt.with_bootstrap(|b| b.global_exit(status));
        std::process::exit(status)
    }
}

impl Drop for World {
    fn drop(&mut self) {
        runtime::finalize();
    }
}

/// Thread support levels (`SHMEM_THREAD_*`).
///
/// # Examples
///
/// ```
/// use shmem_core::ThreadLevel;
/// let (world, provided) = shmem_core::init_thread(ThreadLevel::Multiple)?;
/// assert_eq!(provided, ThreadLevel::Multiple);
/// assert!(ThreadLevel::Single < ThreadLevel::Funneled && ThreadLevel::Serialized < provided);
/// # drop(world);
/// # Ok::<(), shmem_core::Error>(())
/// ```
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

/// `shmem_init_thread`: like [`init`], and returns the thread level provided, which is always
/// the level requested (the default UCX worker is multi-threaded and the runtime's state is
/// thread-safe). What may cross threads is in the types: `#[symmetric]` statics and `&SymArray`
/// (`Sync`) for RMA from any thread; contexts by their mode ([`Private`](crate::Private),
/// [`Serialized`](crate::Serialized), [`Shared`]); the [`World`] and the ownership of heap
/// arrays (collectives: allocation, free, barriers) stay on the initializing thread.
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// use shmem_core::ThreadLevel;
/// #[symmetric]
/// static SLOTS: [u32; 2] = [0; 2];
/// let (world, level) = shmem_core::init_thread(ThreadLevel::Multiple)?;
/// assert_eq!(level, ThreadLevel::Multiple);
/// let me = world.my_pe();
/// // Statics may be accessed from any thread.
/// std::thread::scope(|s| {
///     for t in 0..2 {
///         s.spawn(move || SLOTS.p(me, t, t as u32 + 1));
///     }
/// });
/// world.quiet();
/// assert_eq!((SLOTS.local_get(0), SLOTS.local_get(1)), (1, 2));
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[doc(alias = "shmem_init_thread")]
pub fn init_thread(requested: ThreadLevel) -> Result<(World, ThreadLevel)> {
    let world = init()?;
    Ok((world, requested))
}

/// What a PE's runtime holds at one moment ([`World::usage`]): compare two of them to see
/// whether a loop gives back what it takes.
///
/// # Examples
///
/// ```
/// let world = shmem_core::init()?;
/// let before = world.usage();
/// let a = world.alloc::<u64>(1 << 16);
/// assert!(world.usage().heap_free <= before.heap_free - 8 * (1 << 16));
/// drop(a);
/// assert_eq!(world.usage(), before); // nothing leaked
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// Free bytes of the symmetric heap.
    pub heap_free: usize,
    /// The largest free range of the heap, in bytes (the largest allocation that could succeed).
    pub heap_largest_free: usize,
    /// The number of free ranges (1 when nothing is allocated: a measure of fragmentation).
    pub heap_free_ranges: usize,
    /// Team blocks in use, the world's and the node's own teams included.
    pub teams: usize,
    /// Contexts made with `ctx_create` and not yet dropped.
    pub contexts: usize,
}
