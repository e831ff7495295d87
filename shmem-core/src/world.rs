//! [`World`]: the initialized runtime, one per process.

use crate::error::Result;
use crate::heap::SymArray;
use crate::rma::{NbiScope, QuietOnDrop};
use crate::runtime::{self, Runtime};
use crate::storage::Storable;
use crate::sync;
use std::fmt;
use std::marker::PhantomData;

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
    pub(crate) rt: &'static Runtime,
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
#[doc(alias = "shmem_init")]
pub fn init() -> Result<World> {
    let rt = runtime::init()?;
    Ok(World {
        rt,
        _not_send: PhantomData,
    })
}

impl World {
    /// This PE's number, `0..n_pes()` (`shmem_my_pe`).
    #[doc(alias = "shmem_my_pe")]
    #[inline]
    pub fn my_pe(&self) -> usize {
        self.rt.my_pe
    }

    /// Number of PEs in the job (`shmem_n_pes`).
    #[doc(alias = "shmem_n_pes")]
    #[inline]
    pub fn n_pes(&self) -> usize {
        self.rt.n_pes
    }

    /// `shmem_barrier_all`: completes this PE's outstanding operations (quiet), then waits until
    /// every PE has arrived.
    #[doc(alias = "shmem_barrier_all")]
    pub fn barrier_all(&self) {
        sync::barrier_all(self.rt);
    }

    /// `shmem_sync_all`: waits until every PE has arrived, without completing outstanding puts
    /// (use [`barrier_all`](Self::barrier_all) for that).
    #[doc(alias = "shmem_sync_all")]
    pub fn sync_all(&self) {
        crate::collectives::team_sync(&self.team_world());
    }

    /// `shmem_quiet`: every put, get and non-blocking operation this PE issued is complete and
    /// visible at its target.
    #[doc(alias = "shmem_quiet")]
    pub fn quiet(&self) {
        self.rt.quiet();
    }

    /// `shmem_fence`: puts to any one PE issued before the fence are delivered before puts to
    /// that PE issued after it. (Puts to different PEs are not ordered; use [`quiet`](Self::quiet).)
    #[doc(alias = "shmem_fence")]
    pub fn fence(&self) {
        self.rt.fence();
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

    /// Like [`alloc`](Self::alloc), returning [`Error::AllocMismatch`] or
    /// [`Error::HeapExhausted`] instead of panicking. Either way the failure is the same on every
    /// PE, so the job stays consistent.
    ///
    /// [`Error::AllocMismatch`]: crate::Error::AllocMismatch
    /// [`Error::HeapExhausted`]: crate::Error::HeapExhausted
    pub fn try_alloc<E: Storable>(&self, len: usize) -> Result<SymArray<'_, E>> {
        SymArray::alloc(self, len)
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
        let _quiet = QuietOnDrop(self.rt);
        let scope = NbiScope::new(self.rt);
        f(&scope)
    }
}

impl Drop for World {
    fn drop(&mut self) {
        runtime::finalize();
    }
}
