//! `#[symmetric]` statics: storage with a fixed place in the symmetric heap.
//!
//! The attribute turns `static A: T = init;` into a [`Symmetric<T>`] and registers it in a
//! link-time list ([`linkme`]). `init()` walks the list in link order (identical in every PE, which
//! all run the same binary), gives each static an aligned offset in the statics region of the heap,
//! copies the initial value there and records the offset in the static. From then on the static is
//! exactly as fast as a heap array: `heap base + offset`.
//!
//! Part of the object layer; uses `object::storage`, `transport`, `mem::layout`.

use super::SymObject;
use super::sealed::Placed;
use super::storage::Storable;
use crate::element::Element;
use crate::mem::layout::place;
use crate::transport::{Transport, not_initialized, transport};
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Every `#[symmetric]` static of the program, collected at link time.
#[linkme::distributed_slice]
pub static SYMMETRIC_STATICS: [&'static dyn StaticObject];

mod private {
    /// Only this crate can make one, so only this crate can call [`StaticObject`](super::StaticObject)'s
    /// methods (the trait must be public: the attribute's expansion names `dyn StaticObject`).
    pub struct Token(pub(super) ());
    /// Only [`Symmetric`](super::Symmetric) implements [`StaticObject`](super::StaticObject).
    pub trait Sealed {}
}

use private::Token;

/// What `init` needs to know about a registered static. Implemented by [`Symmetric`] only, and
/// callable only by this crate (its methods take a private token), so no user code can move a
/// static's heap offset.
#[doc(hidden)]
pub trait StaticObject: Sync + private::Sealed {
    /// Size and alignment of the value.
    fn layout(&self, _: Token) -> (usize, usize);
    /// The initial value's bytes (exactly the size `layout` gives).
    fn init_bytes(&self, _: Token) -> &[u8];
    /// Records the heap offset assigned by `init`.
    fn set_offset(&self, offset: usize, _: Token);
}

/// A value of type `T` in symmetric memory, made by `#[symmetric] static NAME: T = init;`.
///
/// Every PE has its own copy, set to `init` by [`shmem_core::init`](crate::init); any PE can read
/// and write any PE's copy. A `Symmetric<[E; N]>` is a [`SymmetricArray<E>`](crate::SymmetricArray) with `put`, `get`,
/// `iput`, `iget`, `p`, `g` and the local accessors; any `Symmetric<T>` moves its whole value with
/// [`put_value`](Self::put_value) and [`get_value`](Self::get_value).
///
/// ```
/// use shmem_core::prelude::*;
///
/// #[symmetric]
/// static COUNTER: u64 = 7;
///
/// let world = shmem_core::init()?;
/// assert_eq!(COUNTER.local(), 7);
/// let right = (world.my_pe() + 1) % world.n_pes();
/// world.barrier_all();
/// COUNTER.put_value(right, 42);
/// world.barrier_all();
/// assert_eq!(COUNTER.local(), 42);
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub struct Symmetric<T> {
    init: T,
    /// Heap offset + 1; 0 until `init` places the static (so all-zero statics stay in `.bss`).
    slot: AtomicUsize,
}

impl<T> Symmetric<T> {
    /// A symmetric static with initial value `init`. Used by the `#[symmetric]` attribute; the
    /// static must also be registered, which the attribute does. (No `Element` bound here, so a
    /// wrong type is reported once, by [`register`].)
    #[doc(hidden)]
    pub const fn new(init: T) -> Symmetric<T> {
        Symmetric {
            init,
            slot: AtomicUsize::new(0),
        }
    }
}

/// The registration entry of a `#[symmetric]` static; the one place its type is checked.
#[doc(hidden)]
pub const fn register<T: Storable>(s: &'static Symmetric<T>) -> &'static dyn StaticObject {
    s
}

impl<T> Symmetric<T> {
    /// Byte offset in the symmetric heap; panics before `init`.
    #[inline]
    #[track_caller]
    pub(crate) fn heap_offset(&self) -> usize {
        match self.slot.load(Ordering::Relaxed) {
            0 => not_initialized(),
            s => s - 1,
        }
    }
}

impl<T: Element> Symmetric<T> {
    /// Writes the whole value into PE `pe`'s copy (`shmem_put` of one `T`).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[element]
    /// #[derive(Clone, Copy, Debug, PartialEq)]
    /// struct Point {
    ///     x: f64,
    ///     y: f64,
    /// }
    /// #[symmetric]
    /// static ORIGIN: Point = Point { x: 0.0, y: 0.0 };
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// ORIGIN.put_value(me, Point { x: 1.0, y: -1.0 }); // the whole struct in one put
    /// world.quiet();
    /// assert_eq!(ORIGIN.local(), Point { x: 1.0, y: -1.0 });
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_put")]
    #[inline]
    #[track_caller]
    pub fn put_value(&self, pe: usize, value: T) {
        let tp = transport();
        let peer = tp.peer(pe);
        // SAFETY: the static occupies size_of::<T>() bytes at its offset; `value` outlives the put.
        unsafe {
            tp.put_bytes(
                peer,
                self.heap_offset(),
                (&raw const value).cast(),
                size_of::<T>(),
            )
        }
    }

    /// Reads the whole value from PE `pe`'s copy (`shmem_get` of one `T`).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static RANK: u32 = 0;
    /// let world = shmem_core::init()?;
    /// RANK.set_local(world.my_pe() as u32);
    /// world.barrier_all();
    /// assert_eq!(RANK.get_value(0), 0); // PE 0's copy
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_get")]
    #[inline]
    #[track_caller]
    pub fn get_value(&self, pe: usize) -> T {
        let tp = transport();
        let peer = tp.peer(pe);
        let mut value = T::new_zeroed();
        // SAFETY: as in `put_value`; `value` is a local of the right size.
        unsafe {
            tp.get_bytes(
                peer,
                self.heap_offset(),
                (&raw mut value).cast(),
                size_of::<T>(),
            )
        }
        value
    }

    /// This PE's own value (a copy; a concurrent remote write may be observed torn).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static SCALE: f32 = 2.5;
    /// let world = shmem_core::init()?;
    /// assert_eq!(SCALE.local(), 2.5);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline]
    #[track_caller]
    pub fn local(&self) -> T {
        let tp = transport();
        // SAFETY: the static's bytes lie in the heap at its offset, aligned for T.
        unsafe { tp.local(self.heap_offset()).cast::<T>().read_volatile() }
    }

    /// Sets this PE's own value.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static EPOCH: u64 = 0;
    /// let world = shmem_core::init()?;
    /// EPOCH.set_local(3);
    /// assert_eq!(EPOCH.local(), 3);
    /// assert_eq!(EPOCH.get_value(world.my_pe()), 3);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline]
    #[track_caller]
    pub fn set_local(&self, value: T) {
        let tp = transport();
        // SAFETY: as in `local`.
        unsafe {
            tp.local(self.heap_offset())
                .cast::<T>()
                .write_volatile(value)
        }
    }

    /// The initial value given in the declaration.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static LIMIT: u32 = 100;
    /// let world = shmem_core::init()?;
    /// LIMIT.set_local(5);
    /// assert_eq!((LIMIT.local(), *LIMIT.initial()), (5, 100));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    pub fn initial(&self) -> &T {
        &self.init
    }
}

impl<T> fmt::Debug for Symmetric<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Symmetric")
            .field("type", &std::any::type_name::<T>())
            .field(
                "heap_offset",
                &self.slot.load(Ordering::Relaxed).checked_sub(1),
            )
            .finish()
    }
}

impl<T: Storable> private::Sealed for Symmetric<T> {}

impl<T: Storable> StaticObject for Symmetric<T> {
    fn layout(&self, _: Token) -> (usize, usize) {
        (size_of::<T>(), align_of::<T>())
    }

    fn init_bytes(&self, _: Token) -> &[u8] {
        self.init.as_bytes()
    }

    fn set_offset(&self, offset: usize, _: Token) {
        self.slot.store(offset + 1, Ordering::Relaxed);
    }
}

// Contract of `SymObject`: the static's N elements lie at its offset in the statics region of
// the process's heap.
impl<E: Storable, const N: usize> Placed for Symmetric<[E; N]> {
    #[inline]
    #[track_caller]
    fn __heap_offset(&self) -> usize {
        self.heap_offset()
    }

    #[inline]
    #[track_caller]
    fn __transport(&self) -> &'static Transport {
        transport()
    }
}

impl<E: Element, const N: usize> SymObject<E> for Symmetric<[E; N]> {
    const CONST_LEN: usize = N;

    #[inline]
    fn __len(&self) -> usize {
        N
    }
}

/// Size of the statics region and a signature of its layout (compared between PEs so that PEs
/// running different programs are caught at start-up).
pub(crate) fn layout() -> (usize, u64) {
    let mut end = 0;
    let mut sig: u64 = 0xcbf2_9ce4_8422_2325; // FNV-1a
    for s in SYMMETRIC_STATICS.iter() {
        let (size, align) = s.layout(Token(()));
        end = place(end, align) + size;
        for v in [size as u64, align as u64] {
            sig = (sig ^ v).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    (end, sig)
}

/// Copies every static's initial value into the statics region and records its offset.
///
/// # Safety
/// `region` points to at least `layout().0` writable bytes; `region_offset` is its heap offset.
pub(crate) unsafe fn place_all(region: *mut u8, region_offset: usize) {
    let mut cursor = 0;
    for s in SYMMETRIC_STATICS.iter() {
        let (size, align) = s.layout(Token(()));
        let at = place(cursor, align);
        let bytes = s.init_bytes(Token(()));
        assert_eq!(
            bytes.len(),
            size,
            "a static's initial value has the wrong size"
        );
        // SAFETY: `at + size <= layout().0`, inside the region; the init value is a distinct static.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), region.add(at), size) };
        s.set_offset(region_offset + at, Token(()));
        cursor = at + size;
    }
}
