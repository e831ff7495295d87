//! Queries and job control: the library's version (`shmem_info_get_version`, `..._name`),
//! accessibility (`shmem_pe_accessible`, `shmem_addr_accessible`), direct pointers to a peer's
//! copy (`shmem_ptr`) and ending the whole job (`shmem_global_exit`).
//!
//! Part of the operations layer; uses `ops::rma`, `object`, `transport`.

use super::rma::SymmetricArray;
use crate::element::Element;
use crate::object::bounds::check_index;
use crate::object::heap::SymArray;
use crate::object::sealed::Placed;
use crate::object::statics::Symmetric;
use crate::transport::Transport;
use std::fmt;
use std::marker::PhantomData;

/// The OpenSHMEM specification version this library follows, as `(major, minor)`
/// (`SHMEM_MAJOR_VERSION`, `SHMEM_MINOR_VERSION`, `shmem_info_get_version`).
///
/// ```
/// assert_eq!(shmem_core::VERSION, (1, 6));
/// ```
pub const VERSION: (u32, u32) = (1, 6);

/// The vendor string (`SHMEM_VENDOR_STRING`, `shmem_info_get_name`): this library's name and
/// version.
///
/// ```
/// assert!(shmem_core::VENDOR_STRING.starts_with("shmem-rs"));
/// assert!(shmem_core::VENDOR_STRING.len() < shmem_core::MAX_NAME_LEN);
/// ```
pub const VENDOR_STRING: &str = concat!("shmem-rs ", env!("CARGO_PKG_VERSION"));

/// Upper bound on the length of [`VENDOR_STRING`] (`SHMEM_MAX_NAME_LEN`).
///
/// ```
/// assert_eq!(shmem_core::MAX_NAME_LEN, 256);
/// ```
pub const MAX_NAME_LEN: usize = 256;

mod sealed {
    /// Only this crate's symmetric objects are [`SymmetricObject`](super::SymmetricObject)s.
    pub trait Object {}
}

/// Any symmetric object: a `#[symmetric]` static of any element type or a [`SymArray`]. Used by
/// [`World::addr_accessible`](crate::World::addr_accessible).
///
/// ```
/// use shmem_core::prelude::*;
/// use shmem_core::SymmetricObject;
/// #[symmetric]
/// static X: f64 = 0.0;
/// fn check(world: &World, o: &impl SymmetricObject) -> bool {
///     world.addr_accessible(o, 0)
/// }
/// let world = shmem_core::init()?;
/// assert!(check(&world, &X));
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub trait SymmetricObject: sealed::Object {
    /// Byte offset of the object in the symmetric heap. Panics if the runtime is not initialized.
    #[doc(hidden)]
    fn __object_offset(&self) -> usize;
}

impl<T: Element> sealed::Object for Symmetric<T> {}
impl<T: Element> SymmetricObject for Symmetric<T> {
    fn __object_offset(&self) -> usize {
        self.heap_offset()
    }
}

impl<E: Element> sealed::Object for SymArray<'_, E> {}
impl<E: Element> SymmetricObject for SymArray<'_, E> {
    fn __object_offset(&self) -> usize {
        self.__heap_offset()
    }
}

/// A typed window onto a peer's copy of a symmetric array that is mapped into this process
/// (`shmem_ptr`): the elements are read and written with plain loads and stores, no library call.
/// Made by [`PeerAccess::peer_slice`].
///
/// Other PEs may write the memory at any time, so the safe accessors copy one element at a time
/// (volatile loads and stores); [`as_slice`](Self::as_slice) lends the memory as a slice for code
/// that knows nobody writes it meanwhile.
///
/// ```
/// use shmem_core::prelude::*;
/// let world = shmem_core::init()?;
/// let a = world.alloc::<u64>(4);
/// let me = world.my_pe();
/// // This PE's own copy is always mapped.
/// let view = a.peer_slice(me).expect("own copy");
/// view.write(2, 42);
/// assert_eq!(a.local_get(2), 42);
/// assert_eq!(view.read(2), 42);
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub struct PeerView<'a, E> {
    tp: &'static Transport,
    ptr: *mut E,
    len: usize,
    pe: usize,
    _obj: PhantomData<&'a E>,
}

impl<E> fmt::Debug for PeerView<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PeerView")
            .field("pe", &self.pe)
            .field("len", &self.len)
            .field("ptr", &self.ptr)
            .finish()
    }
}

impl<E: Element> PeerView<'_, E> {
    /// Number of elements.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u8>(5);
    /// assert_eq!(a.peer_slice(world.my_pe()).map(|v| v.len()), Some(5));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the array has no elements.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u8>(0);
    /// assert!(a.peer_slice(world.my_pe()).is_some_and(|v| v.is_empty()));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The PE whose copy this is.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u8>(1);
    /// assert_eq!(a.peer_slice(0).map(|v| v.pe()).unwrap_or(0), 0);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    pub fn pe(&self) -> usize {
        self.pe
    }

    #[inline]
    #[track_caller]
    fn slot(&self, index: usize, op: &str) -> *mut E {
        self.tp.check_live();
        check_index(op, index, self.len);
        // SAFETY: index < len, and the view covers `len` elements of the mapped copy.
        unsafe { self.ptr.add(index) }
    }

    /// Loads element `index` from the peer's copy.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<i32>(3);
    /// a.local_set(1, -7);
    /// assert_eq!(a.peer_slice(world.my_pe()).map(|v| v.read(1)), Some(-7));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline]
    #[track_caller]
    pub fn read(&self, index: usize) -> E {
        let p = self.slot(index, "peer_slice read");
        // SAFETY: `p` is an aligned element of the peer's mapped copy, valid while the array
        // lives (borrowed by the view); every bit pattern is a valid `E`. Concurrent writers are
        // other processes, as for any OpenSHMEM load through `shmem_ptr`.
        unsafe { p.read_volatile() }
    }

    /// Stores `value` into element `index` of the peer's copy.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<f32>(2);
    /// if let Some(v) = a.peer_slice(world.my_pe()) {
    ///     v.write(0, 1.5);
    /// }
    /// assert_eq!(a.local_get(0), 1.5);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline]
    #[track_caller]
    pub fn write(&self, index: usize, value: E) {
        let p = self.slot(index, "peer_slice write");
        // SAFETY: as in `read`; `E` has no invalid bit patterns and no drop glue.
        unsafe { p.write_volatile(value) }
    }

    /// Copies the whole peer copy into `dst` (whose length must match).
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u16>(3);
    /// let mut out = [9u16; 3];
    /// if let Some(v) = a.peer_slice(world.my_pe()) {
    ///     v.copy_to(&mut out);
    /// }
    /// assert_eq!(out, [0, 0, 0]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[track_caller]
    pub fn copy_to(&self, dst: &mut [E]) {
        if dst.len() != self.len {
            panic!(
                "shmem: peer_slice copy_to: the view has {} elements but the destination has {}; \
                 lengths must match",
                self.len,
                dst.len()
            );
        }
        for (i, d) in dst.iter_mut().enumerate() {
            *d = self.read(i);
        }
    }

    /// The raw pointer to element 0 of the peer's copy (valid while the array lives).
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u64>(1);
    /// assert!(a.peer_slice(world.my_pe()).is_some_and(|v| !v.as_ptr().is_null()));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    pub fn as_ptr(&self) -> *mut E {
        self.ptr
    }

    /// The peer's copy as a slice.
    ///
    /// # Safety
    /// No PE (this one included, through any path) may write the array while the slice lives.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u8>(4);
    /// world.barrier_all();
    /// if let Some(v) = a.peer_slice(world.my_pe()) {
    ///     // SAFETY: between the barriers nobody writes `a`.
    ///     let s = unsafe { v.as_slice() };
    ///     assert_eq!(s, &[0, 0, 0, 0]);
    /// }
    /// world.barrier_all();
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    pub unsafe fn as_slice(&self) -> &[E] {
        // SAFETY: `ptr` points to `len` initialized, aligned elements of a mapping that outlives
        // the borrow; the caller promises there are no concurrent writes.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// Load/store access to a peer's copy of a symmetric array when it is mapped into this process
/// (`shmem_ptr`). Implemented for every [`SymmetricArray`].
///
/// ```
/// use shmem_core::prelude::*;
/// #[symmetric]
/// static A: [u32; 8] = [0; 8];
/// let world = shmem_core::init()?;
/// let right = (world.my_pe() + 1) % world.n_pes();
/// match A.peer_slice(right) {
///     Some(view) => view.write(0, 5),    // same node: a plain store
///     None => A.p(right, 0, 5),          // otherwise: through the library
/// }
/// world.barrier_all();
/// assert_eq!(A.local_get(0), 5);
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub trait PeerAccess<E: Element>: SymmetricArray<E> {
    /// PE `pe`'s copy of this array as a [`PeerView`], when it is mapped into this process (a PE
    /// on this node with shared-memory transports enabled, and always this PE's own copy);
    /// `None` when it is reached only through the network. Panics if `pe` is out of range.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(4);
    /// let me = world.my_pe();
    /// // This PE's own copy is always mapped.
    /// let mine = a.peer_slice(me).expect("own copy");
    /// mine.write(2, 11);
    /// assert_eq!((mine.len(), a.local_get(2)), (4, 11));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_ptr")]
    #[track_caller]
    fn peer_slice(&self, pe: usize) -> Option<PeerView<'_, E>> {
        let tp = self.__transport();
        let peer = tp.peer(pe);
        if !tp.is_direct(peer) {
            return None;
        }
        let len = self.len();
        let ptr = if len == 0 {
            std::ptr::NonNull::<E>::dangling().as_ptr()
        } else {
            tp.direct_ptr(peer, self.__heap_offset()).cast::<E>()
        };
        Some(PeerView {
            tp,
            ptr,
            len,
            pe,
            _obj: PhantomData,
        })
    }
}

impl<E: Element, T: SymmetricArray<E> + ?Sized> PeerAccess<E> for T {}
