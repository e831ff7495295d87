//! The fast path of a foreign layer, for RMA: [`locate`] translates an address and checks the
//! PE in a few compares, and the [`Located`] elements it finds are put and read with plain
//! copies on a mapped peer (UCX otherwise). The atomics on a located word are in `word.rs`.

use crate::element::Element;
use crate::mem::copy::{copy_bytes, copy_elem};
use crate::mem::dataseg::DATA_OFFSET;
use crate::object::bounds::check_index;
use crate::ops::amo::Remote;
use crate::transport::rma::{Completion, Dir};
use crate::transport::{Peer, Transport};
use std::marker::PhantomData;

/// [`translate`] as the region and the offset in it: `(false, at)` for byte `at` of the heap,
/// `(true, at)` for byte `at` of the data segment.
///
/// [`translate`]: super::translate
#[inline(always)]
pub(super) fn translate_in(tp: &Transport, addr: *const u8, bytes: usize) -> Option<(bool, usize)> {
    let a = addr as usize;
    let past_statics = a.wrapping_sub(tp.statics_at);
    // One compare for `heap + statics <= a < heap + total` (a below the heap wraps around).
    if past_statics < tp.statics_span {
        let in_heap = a - tp.base() as usize;
        return (bytes <= tp.statics_span - past_statics).then_some((false, in_heap));
    }
    let (data, data_len) = tp.data_segment();
    let in_data = a.wrapping_sub(data as usize);
    // A job without a data segment has (null, 0): nothing is below 0.
    if in_data < data_len && bytes <= data_len - in_data {
        return Some((true, in_data));
    }
    None
}

/// `len` elements of `E` at one address of this PE's symmetric memory, on one PE: what
/// [`locate`] finds, for the few operations of a foreign layer's fast path (a C `shmem_long_p`
/// with the default context). The operations are those of the default context, with its
/// completion and ordering: a put is complete at the next quiet of the runtime, as with
/// [`Ctx::put`](crate::Ctx::put) on `world.ctx_default()`.
///
/// ```
/// use shmem_core::prelude::*;
/// let world = shmem_core::init()?;
/// let a = world.alloc::<u64>(4);
/// let base = shmem_core::raw::local_addr(&a);
/// // SAFETY: element 3 of `a`, which lives until the end of this example.
/// let at = unsafe { shmem_core::raw::locate(base.wrapping_add(3), 1, world.my_pe()) };
/// let at = at.expect("symmetric, and a PE of the job");
/// at.p(7);
/// world.quiet();
/// assert_eq!((at.g(), a.local_get(3)), (7, 7));
/// let local = 0u64;
/// // SAFETY: nothing is located (a local is not symmetric), so nothing is used.
/// assert!(unsafe { shmem_core::raw::locate(&raw const local, 1, world.my_pe()) }.is_none());
/// // SAFETY: as above (no such PE).
/// assert!(unsafe { shmem_core::raw::locate(base, 1, world.n_pes()) }.is_none());
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub struct Located<E> {
    pub(super) tp: &'static Transport,
    pub(super) peer: &'static Peer,
    pub(super) offset: usize,
    /// The first element's address in this process (in the peer's mapping), or null when only
    /// UCX reaches the peer.
    pub(super) mapped: *mut u8,
    len: usize,
    _e: PhantomData<*const E>,
}

impl<E> Clone for Located<E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for Located<E> {}

impl<E> std::fmt::Debug for Located<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Located")
            .field("type", &std::any::type_name::<E>())
            .field("offset", &self.offset)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

/// The `len` elements of `E` at `addr` in this PE's symmetric memory, on PE `pe`: the
/// translation and checks of [`sym`], and of the PE, in a few compares, for the fast path of a
/// foreign layer. `None` whenever the general path has something to say: before `init` or
/// after finalize, a PE outside the job, a range that is not all in the symmetric heap or
/// (with [`enable_data_segment`]) the data segment, or a length whose bytes overflow. The
/// layer then takes its general path, which names the problem. Peers reached through UCX are
/// located too (the operations go through UCX for them).
///
/// # Safety
/// As [`sym`]: while the result is used, the bytes are an object meant to be symmetric on every
/// PE, and no Rust reference covers them.
///
/// # Examples
///
/// ```
/// use shmem_core::raw;
/// let world = shmem_core::init()?;
/// let a = world.alloc::<i32>(3);
/// let base = raw::local_addr(&a);
/// // SAFETY: the elements of `a`, which lives until the end of this example.
/// let all = unsafe { raw::locate(base, 3, world.my_pe()) }.expect("symmetric, a PE of the job");
/// assert_eq!(all.len(), 3);
/// // SAFETY: as above; the range runs past the end of the heap, so nothing is located.
/// assert!(unsafe { raw::locate(base, usize::MAX / 8, world.my_pe()) }.is_none());
/// # Ok::<(), shmem_core::Error>(())
/// ```
///
/// [`sym`]: super::sym
/// [`enable_data_segment`]: super::enable_data_segment
#[inline(always)]
pub unsafe fn locate<E: Element>(addr: *const E, len: usize, pe: usize) -> Option<Located<E>> {
    let tp = crate::transport::try_live_transport()?;
    let peer = tp.try_peer(pe)?;
    let bytes = len.checked_mul(size_of::<E>())?;
    let (data, at) = translate_in(tp, addr.cast(), bytes)?;
    Some(Located {
        tp,
        peer,
        offset: if data { DATA_OFFSET + at } else { at },
        // SAFETY: byte `at` of the heap or the data segment (translated above).
        mapped: unsafe { peer.direct_in(data, at) },
        len,
        _e: PhantomData,
    })
}

impl<E: Element> Located<E> {
    /// The number of elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::raw;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u8>(10);
    /// // SAFETY: elements 2..6 of `a`, which lives until the end of this example.
    /// let four = unsafe { raw::locate(raw::local_addr(&a).wrapping_add(2), 4, world.my_pe()) };
    /// assert_eq!(four.map(|l| l.len()), Some(4));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::raw;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u8>(10);
    /// // SAFETY: no element of `a`, which lives until the end of this example.
    /// let none = unsafe { raw::locate(raw::local_addr(&a), 0, world.my_pe()) };
    /// assert!(none.expect("symmetric").is_empty());
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `shmem_put` of all the elements from `src` (blocking: `src` may be reused on return;
    /// complete at the next quiet). On a mapped peer, the copy alone: `locate` checked the
    /// rest.
    ///
    /// # Safety
    /// `src` points to `len` readable elements, outside the target's bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::{SymmetricArray, raw};
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(4);
    /// // SAFETY: the elements of `a`, which lives until the end of this example.
    /// let at = unsafe { raw::locate(raw::local_addr(&a), 4, world.my_pe()) }.expect("symmetric");
    /// let src = [1u32, 2, 3, 4];
    /// // SAFETY: `src` holds the 4 elements, outside `a`.
    /// unsafe { at.put(src.as_ptr()) };
    /// world.quiet();
    /// assert_eq!(a.local_get(3), 4);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    #[track_caller]
    pub unsafe fn put(self, src: *const E) {
        let bytes = self.len * size_of::<E>();
        // SAFETY: `locate` checked the range (heap or data segment); `src` per the caller.
        unsafe {
            match self.direct() {
                // One element: one move of its size (the common C call, `shmem_long_put(.., 1,
                // pe)`), else the copy engine.
                Some(dst) if self.len == 1 => copy_elem(dst, src.cast(), bytes),
                Some(dst) => copy_bytes(dst, src.cast(), bytes),
                None => self.tp.put_bytes(self.peer, self.offset, src.cast(), bytes),
            }
        }
    }

    /// `shmem_get` of all the elements into `dst` (complete on return). On a mapped peer, a
    /// round of progress (free unless some peer is reached through UCX) and the copy.
    ///
    /// # Safety
    /// `dst` points to `len` writable elements, outside the target's bytes, that nothing else
    /// reads or writes during the call.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::{SymmetricArray, raw};
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(4);
    /// a.local_write(.., &[4, 3, 2, 1]);
    /// // SAFETY: the elements of `a`, which lives until the end of this example.
    /// let at = unsafe { raw::locate(raw::local_addr(&a), 4, world.my_pe()) }.expect("symmetric");
    /// let mut dst = [0u32; 4];
    /// // SAFETY: `dst` has room for the 4 elements, lies outside `a`, and nothing else uses it.
    /// unsafe { at.get(dst.as_mut_ptr()) };
    /// assert_eq!(dst, [4, 3, 2, 1]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    #[track_caller]
    pub unsafe fn get(self, dst: *mut E) {
        let bytes = self.len * size_of::<E>();
        // SAFETY: `locate` checked the range (heap or data segment); `dst` per the caller.
        unsafe {
            match self.direct() {
                Some(src) => {
                    // As every read of mapped memory: a loop polling with it drives UCX too.
                    self.tp.progress();
                    if self.len == 1 {
                        copy_elem(dst.cast(), src, bytes)
                    } else {
                        copy_bytes(dst.cast(), src, bytes)
                    }
                }
                None => self.tp.get_bytes(self.peer, self.offset, dst.cast(), bytes),
            }
        }
    }

    /// `shmem_put_nbi` of all the elements from `src`: complete at the runtime's next quiet. On
    /// a mapped peer, the copy (complete at once, as [`put`](Self::put)); otherwise the
    /// non-blocking transfer through UCX.
    ///
    /// # Safety
    /// `src` points to `len` readable elements, outside the target's bytes, that stay valid and
    /// unchanged until the next quiet.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::{SymmetricArray, raw};
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(4);
    /// // SAFETY: the elements of `a`, which lives until the end of this example.
    /// let at = unsafe { raw::locate(raw::local_addr(&a), 4, world.my_pe()) }.expect("symmetric");
    /// let src = [1u32, 2, 3, 4];
    /// // SAFETY: `src` holds the 4 elements, outside `a`, unchanged until the quiet.
    /// unsafe { at.put_nbi(src.as_ptr()) };
    /// world.quiet();
    /// assert_eq!(a.local_get(3), 4);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    #[track_caller]
    pub unsafe fn put_nbi(self, src: *const E) {
        let bytes = self.len * size_of::<E>();
        // SAFETY: `locate` checked the range (heap or data segment); `src` per the caller
        // (readable until the quiet, so also for the blocking copy).
        unsafe {
            match self.direct() {
                Some(_) => self.put(src),
                None => self.tp.rma(
                    self.peer,
                    Dir::Put,
                    Completion::Nbi,
                    self.offset,
                    src.cast_mut().cast(),
                    bytes,
                ),
            }
        }
    }

    /// `shmem_get_nbi` of all the elements into `dst`: `dst` holds them after the runtime's
    /// next quiet. On a mapped peer, as [`get`](Self::get) (complete at once); otherwise the
    /// non-blocking transfer through UCX.
    ///
    /// # Safety
    /// `dst` points to `len` writable elements, outside the target's bytes, that stay valid and
    /// that nothing else reads or writes until the next quiet.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::{SymmetricArray, raw};
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(4);
    /// a.local_write(.., &[4, 3, 2, 1]);
    /// // SAFETY: the elements of `a`, which lives until the end of this example.
    /// let at = unsafe { raw::locate(raw::local_addr(&a), 4, world.my_pe()) }.expect("symmetric");
    /// let mut dst = [0u32; 4];
    /// // SAFETY: `dst` has room for the 4 elements, lies outside `a`, and nothing else uses it
    /// // until the quiet.
    /// unsafe { at.get_nbi(dst.as_mut_ptr()) };
    /// world.quiet();
    /// assert_eq!(dst, [4, 3, 2, 1]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    #[track_caller]
    pub unsafe fn get_nbi(self, dst: *mut E) {
        let bytes = self.len * size_of::<E>();
        // SAFETY: `locate` checked the range (heap or data segment); `dst` per the caller
        // (writable and untouched until the quiet, so also for the blocking copy).
        unsafe {
            match self.direct() {
                Some(_) => self.get(dst),
                None => self.tp.rma(
                    self.peer,
                    Dir::Get,
                    Completion::Nbi,
                    self.offset,
                    dst.cast(),
                    bytes,
                ),
            }
        }
    }

    /// `shmem_p` of the first element; panics if there is none. On a mapped peer, one store
    /// of the element.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::{SymmetricArray, raw};
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<f64>(2);
    /// // SAFETY: element 1 of `a`, which lives until the end of this example.
    /// let at = unsafe { raw::locate(raw::local_addr(&a).wrapping_add(1), 1, world.my_pe()) };
    /// at.expect("symmetric").p(2.5);
    /// world.quiet();
    /// assert_eq!(a.local_get(1), 2.5);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn p(self, value: E) {
        check_index("at", 0, self.len);
        // SAFETY: `locate` checked the range, which holds the element (checked above); `value`
        // is a local of its size.
        unsafe {
            match self.direct() {
                Some(dst) => copy_elem(dst, (&raw const value).cast(), size_of::<E>()),
                None => Remote::new(self.tp, self.peer, self.offset).put(value),
            }
        }
    }

    /// `shmem_g` of the first element; panics if there is none. On a mapped peer, a round of
    /// progress (free unless some peer is reached through UCX) and one load of the element.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::{SymmetricArray, raw};
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<f64>(2);
    /// a.local_set(0, -1.0);
    /// // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// let at = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }.expect("symmetric");
    /// assert_eq!(at.g(), -1.0);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn g(self) -> E {
        check_index("at", 0, self.len);
        // SAFETY: `locate` checked the range, which holds the element (checked above); `value`
        // is a local of its size.
        unsafe {
            match self.direct() {
                Some(src) => {
                    self.tp.progress();
                    let mut value = E::new_zeroed();
                    copy_elem((&raw mut value).cast(), src, size_of::<E>());
                    value
                }
                None => Remote::new(self.tp, self.peer, self.offset).get(),
            }
        }
    }

    /// Whether every operation on the elements is plain loads, stores or CPU atomics: the peer
    /// is mapped here and no peer is reached through UCX (so that reads owe no round of
    /// progress). A foreign layer keeps such calls inline and sends the others out of line.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::{SymmetricArray, raw};
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u64>(1);
    /// a.local_set(0, 3);
    /// // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// let at = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }.expect("symmetric");
    /// // A foreign layer's fast path: inline when plain, the general path otherwise.
    /// let value = if at.is_plain() { at.g() } else { a.g(world.my_pe(), 0) };
    /// assert_eq!(value, 3);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn is_plain(&self) -> bool {
        !self.mapped.is_null() && !self.tp.any_ucx()
    }

    /// The first element's address in the peer's mapping, `None` when only UCX reaches it.
    #[inline(always)]
    fn direct(&self) -> Option<*mut u8> {
        (!self.mapped.is_null()).then_some(self.mapped)
    }

    /// The first element as a [`Remote`], for atomics; `None` when there is none or its
    /// address is not aligned for `E` (atomics need an aligned word).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::{SymmetricArray, raw};
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(2);
    /// let base = raw::local_addr(&a);
    /// // SAFETY: the elements of `a`, which lives until the end of this example.
    /// let at = unsafe { raw::locate(base, 2, world.my_pe()) }.expect("symmetric");
    /// assert_eq!(at.remote().map(|r| r.fetch_add(2)), Some(0));
    /// assert_eq!(a.local_get(0), 2);
    /// // SAFETY: as above. Byte 1 of `a` is not aligned for a u32: no atomics there.
    /// let byte1 = base.cast::<u8>().wrapping_add(1).cast::<u32>();
    /// let odd = unsafe { raw::locate(byte1, 1, world.my_pe()) };
    /// assert!(odd.expect("symmetric").remote().is_none());
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn remote(self) -> Option<Remote<'static, E>> {
        self.aligned_first()
            .then(|| Remote::new(self.tp, self.peer, self.offset))
    }

    /// Whether there is a first element and it is aligned for `E`.
    #[inline(always)]
    pub(super) fn aligned_first(&self) -> bool {
        // Every region is mapped at a page boundary and starts at an offset that is a multiple
        // of a page, so the offset's alignment is the address's, here and in the peer's mapping.
        self.len > 0 && self.offset.is_multiple_of(align_of::<E>())
    }
}
