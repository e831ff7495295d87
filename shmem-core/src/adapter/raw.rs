//! Address-based access for foreign-language layers: the OpenSHMEM C API (`shmem-capi`) is
//! built on this module. Rust programs use the typed API instead.
//!
//! C names symmetric objects by address: a pointer into the symmetric heap, or to a global or
//! static variable. [`sym`] turns such an address into a [`SymSlice`], after which every typed
//! operation of this crate applies (RMA, atomics, waits, signals, collectives, contexts), with
//! its checks. What the typed API expresses with scopes and borrows (non-blocking transfers
//! complete at the next quiet) is here an `unsafe fn` whose caller keeps the buffers valid, as
//! the C standard asks of its users.
//!
//! Global and static variables of a C program are symmetric only when the layer calls
//! [`enable_data_segment`] before `init`: the program's `.data` and `.bss` are then moved into
//! shared memory at the same addresses and registered with UCX.
//!
//! ```
//! use shmem_core::prelude::*;
//! let world = shmem_core::init()?;
//! let a = world.alloc::<u64>(4);
//! let addr = a.peer_slice(world.my_pe()).map(|v| v.as_ptr()).unwrap_or(std::ptr::null_mut());
//! // The address of element 1, as a C program would pass it:
//! // SAFETY: elements 1 and 2 of `a`, which lives until the end of this example.
//! let one = unsafe { shmem_core::raw::sym::<u64>(addr.wrapping_add(1), 2) }.expect("symmetric");
//! one.put(world.my_pe(), .., &[7, 8]);
//! world.quiet();
//! assert_eq!((a.local_get(1), a.local_get(2)), (7, 8));
//! assert!(shmem_core::raw::offset_of((&0u64 as *const u64).cast(), 8).is_none()); // a local is not
//! # Ok::<(), shmem_core::Error>(())
//! ```

use crate::element::Element;
use crate::mem::copy::{copy_bytes, copy_elem};
use crate::mem::dataseg::DATA_OFFSET;
use crate::object::bounds::{check_index, checked_offset};
use crate::object::sealed::Placed;
use crate::object::view::SymSlice;
use crate::ops::amo::{AmoBitwise, AmoExtended, AmoStandard, AmoWord, Remote};
use crate::ops::ctx::{Ctx, CtxMode};
use crate::ops::lock::LockRef;
use crate::ops::rma::SymmetricArray;
use crate::transport::atomic::AmoOp;
use crate::transport::rma::{Completion, Dir};
use crate::transport::{Peer, Transport, transport};
use std::marker::PhantomData;

/// Asks the next `init` to make the main program's global and static variables (`.data` and
/// `.bss`) symmetric. Call it before `init`, from the only thread of the program: the segment is
/// moved into shared memory in place while `init` starts, and a write by another thread during
/// that moment would be lost.
///
/// # Examples
///
/// Not run here: a test harness does not promise that the example has the program to itself.
///
/// ```no_run
/// use shmem_core::SymmetricArray;
/// // A global variable, as C programs have them: symmetric once the data segment is.
/// static mut STEPS: u64 = 0;
///
/// shmem_core::raw::enable_data_segment();
/// let world = shmem_core::init()?;
/// // SAFETY: STEPS is symmetric on every PE (the same program), and no Rust reference to it is
/// // taken while the view is used.
/// let steps = unsafe { shmem_core::raw::sym(&raw const STEPS, 1) }.expect("in the data segment");
/// steps.p((world.my_pe() + 1) % world.n_pes(), 0, 1);
/// world.barrier_all();
/// assert_eq!(steps.local_get(0), 1);
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub fn enable_data_segment() {
    crate::mem::dataseg::want();
}

/// Keeps `bytes_per_pe` bytes per PE of the symmetric heap for the layer's own blocks (such as
/// one word per PE of scratch space): `init` maps that much (times the number of PEs, rounded up
/// to whole cache lines) on top of `SHMEM_SYMMETRIC_SIZE`, so that the program can still
/// allocate all of `SHMEM_SYMMETRIC_SIZE` in one block. Calls add up; only calls before `init`
/// count.
///
/// ```
/// shmem_core::raw::reserve_heap_per_pe(8);
/// let world = shmem_core::init()?;
/// let scratch = world.alloc::<u64>(world.n_pes()); // from the reserve
/// let all = world.try_alloc::<u8>(256 << 20); // the default SHMEM_SYMMETRIC_SIZE, whole
/// assert!(all.is_ok() || std::env::var_os("SHMEM_SYMMETRIC_SIZE").is_some());
/// # drop((scratch, all));
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub fn reserve_heap_per_pe(bytes_per_pe: usize) {
    crate::config::reserve_heap_per_pe(bytes_per_pe);
}

/// Writes `msg` and a newline to stderr in one write, so that the messages of PEs sharing a
/// terminal or pipe never mix mid-line (`eprintln!` writes in pieces). For the layer's
/// warnings, which start with `shmem: ` like the runtime's.
///
/// ```
/// shmem_core::raw::eprint_line(format_args!("shmem: example: {} is just a warning", 42));
/// ```
pub fn eprint_line(msg: std::fmt::Arguments<'_>) {
    crate::error::eprint_line(msg);
}

/// The runtime's offset of `bytes` bytes at `addr` in this PE's symmetric memory (the statics
/// and the heap, or the data segment), or `None` when they are not all inside one of them (the
/// start of the heap mapping, before the statics, is not symmetric memory: the runtime keeps
/// its own words elsewhere). Panics before `init`.
///
/// # Examples
///
/// ```
/// use shmem_core::raw;
/// let world = shmem_core::init()?;
/// let a = world.alloc::<u64>(4);
/// let base = raw::local_addr(&a);
/// let start = raw::offset_of(base.cast(), 32).expect("all of `a` is symmetric");
/// assert_eq!(raw::offset_of(base.wrapping_add(1).cast(), 8), Some(start + 8));
/// let local = [0u64; 4];
/// assert_eq!(raw::offset_of(local.as_ptr().cast(), 32), None); // a local is not symmetric
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[track_caller]
pub fn offset_of(addr: *const u8, bytes: usize) -> Option<usize> {
    translate(transport(), addr, bytes)
}

/// [`offset_of`] in the transport `tp`: a subtract and a compare against the heap's bounds, the
/// data segment as the second case.
#[inline(always)]
fn translate(tp: &Transport, addr: *const u8, bytes: usize) -> Option<usize> {
    translate_in(tp, addr, bytes).map(|(data, at)| if data { DATA_OFFSET + at } else { at })
}

/// [`translate`] as the region and the offset in it: `(false, at)` for byte `at` of the heap,
/// `(true, at)` for byte `at` of the data segment.
#[inline(always)]
fn translate_in(tp: &Transport, addr: *const u8, bytes: usize) -> Option<(bool, usize)> {
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
    tp: &'static Transport,
    peer: &'static Peer,
    offset: usize,
    /// The first element's address in this process (in the peer's mapping), or null when only
    /// UCX reaches the peer.
    mapped: *mut u8,
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
    fn aligned_first(&self) -> bool {
        // Every region is mapped at a page boundary and starts at an offset that is a multiple
        // of a page, so the offset's alignment is the address's, here and in the peer's mapping.
        self.len > 0 && self.offset.is_multiple_of(align_of::<E>())
    }
}

impl<E: AmoWord> Located<E> {
    /// The first element as the target of atomics, `None` when there is none or its address is
    /// not aligned for `E`: [`remote`](Self::remote) without its second look at the liveness
    /// and the range (`locate` checked them), the same atomic instructions.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u64>(2);
    /// let base = shmem_core::raw::local_addr(&a);
    /// // SAFETY: element 1 of `a`, which lives until the end of this example.
    /// let at = unsafe { shmem_core::raw::locate(base.wrapping_add(1), 1, world.my_pe()) };
    /// let word = at.and_then(|l| l.word()).expect("symmetric and aligned");
    /// word.add(5);
    /// assert_eq!((word.fetch_add(1), word.compare_swap(6, 9), word.swap(2)), (5, 6, 9));
    /// assert_eq!(a.local_get(1), 2);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn word(self) -> Option<LocatedWord<E>> {
        self.aligned_first().then_some(LocatedWord {
            tp: self.tp,
            peer: self.peer,
            offset: self.offset,
            mapped: self.mapped,
            _e: PhantomData,
        })
    }
}

/// One aligned element that [`locate`] found, as the target of atomics ([`Located::word`]):
/// the OpenSHMEM AMOs of the element's type, as [`Remote`] has them, with the default
/// context's completion (a non-fetching AMO on a peer reached through UCX is complete at the
/// next quiet of the runtime). On a mapped peer each is a round of progress (free unless some
/// peer is reached through UCX) and one CPU atomic, the one [`Remote`] uses.
///
/// # Examples
///
/// ```
/// use shmem_core::{SymmetricArray, raw};
/// let world = shmem_core::init()?;
/// let counters = world.alloc::<u64>(1);
/// // SAFETY: the element of `counters`, which lives until the end of this example.
/// let at = unsafe { raw::locate(raw::local_addr(&counters), 1, world.my_pe()) };
/// let word = at.and_then(|l| l.word()).expect("symmetric and aligned");
/// assert_eq!((word.fetch_inc(), word.fetch_inc()), (0, 1));
/// assert_eq!(counters.local_get(0), 2);
/// # Ok::<(), shmem_core::Error>(())
/// ```
pub struct LocatedWord<E> {
    tp: &'static Transport,
    peer: &'static Peer,
    offset: usize,
    mapped: *mut u8,
    _e: PhantomData<*const E>,
}

impl<E> Clone for LocatedWord<E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for LocatedWord<E> {}

impl<E> std::fmt::Debug for LocatedWord<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocatedWord")
            .field("type", &std::any::type_name::<E>())
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

impl<E: AmoWord> LocatedWord<E> {
    /// Whether each AMO on the word is one CPU atomic and nothing else ([`Located::is_plain`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// // Inline when the AMO is one CPU atomic; a foreign layer sends the others out of line.
    /// let old = if word.is_plain() {
    ///     word.fetch_add(1)
    /// } else {
    ///     a.at(world.my_pe(), 0).fetch_add(1)
    /// };
    /// assert_eq!((old, word.fetch()), (0, 1));
    /// # use shmem_core::SymmetricArray;
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn is_plain(&self) -> bool {
        !self.mapped.is_null() && !self.tp.any_ucx()
    }

    /// One AMO on the word.
    #[inline(always)]
    fn amo(self, op: AmoOp, value: E, compare: E) -> E {
        let (v, c) = (value.to_bits(), compare.to_bits());
        // SAFETY: `locate` checked the liveness and that the word lies in the heap or the data
        // segment; `word` checked its alignment; `mapped` is its address here, or null.
        let old = unsafe {
            self.tp
                .atomic_at(self.peer, self.offset, self.mapped, E::SIZE, op, (v, c))
        };
        E::from_bits(old)
    }
}

impl<E: AmoExtended> LocatedWord<E> {
    /// `shmem_atomic_fetch` ([`Remote::fetch`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// # use shmem_core::SymmetricArray;
    /// a.local_set(0, 12);
    /// assert_eq!(word.fetch(), 12);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn fetch(self) -> E {
        self.amo(AmoOp::Fetch, E::from_bits(0), E::from_bits(0))
    }

    /// `shmem_atomic_set` ([`Remote::set`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// word.set(8);
    /// assert_eq!(word.fetch(), 8);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn set(self, value: E) {
        self.amo(AmoOp::Set, value, value);
    }

    /// `shmem_atomic_swap` ([`Remote::swap`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// word.set(1);
    /// assert_eq!(word.swap(2), 1);
    /// assert_eq!(word.fetch(), 2);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn swap(self, value: E) -> E {
        self.amo(AmoOp::Swap, value, value)
    }
}

impl<E: AmoStandard> LocatedWord<E> {
    /// `shmem_atomic_compare_swap` ([`Remote::compare_swap`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// assert_eq!(word.compare_swap(0, 5), 0); // was 0: now 5
    /// assert_eq!(word.compare_swap(0, 6), 5); // was not 0: unchanged
    /// assert_eq!(word.fetch(), 5);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn compare_swap(self, cond: E, value: E) -> E {
        self.amo(AmoOp::Cswap, value, cond)
    }

    /// `shmem_atomic_fetch_add` ([`Remote::fetch_add`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// assert_eq!(word.fetch_add(10), 0);
    /// assert_eq!(word.fetch_add(10), 10);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn fetch_add(self, value: E) -> E {
        self.amo(AmoOp::FetchAdd, value, value)
    }

    /// `shmem_atomic_add` ([`Remote::add`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// word.add(3);
    /// word.add(4);
    /// assert_eq!(word.fetch(), 7);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn add(self, value: E) {
        self.amo(AmoOp::Add, value, value);
    }

    /// `shmem_atomic_fetch_inc` ([`Remote::fetch_inc`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// assert_eq!((word.fetch_inc(), word.fetch_inc()), (0, 1));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn fetch_inc(self) -> E {
        self.fetch_add(E::from_bits(1))
    }

    /// `shmem_atomic_inc` ([`Remote::inc`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// word.inc();
    /// word.inc();
    /// assert_eq!(word.fetch(), 2);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn inc(self) {
        self.add(E::from_bits(1));
    }
}

impl<E: AmoBitwise> LocatedWord<E> {
    /// `shmem_atomic_fetch_and` ([`Remote::fetch_and`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// word.set(0b1100);
    /// assert_eq!(word.fetch_and(0b0110), 0b1100);
    /// assert_eq!(word.fetch(), 0b0100);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn fetch_and(self, value: E) -> E {
        self.amo(AmoOp::FetchAnd, value, value)
    }

    /// `shmem_atomic_and` ([`Remote::and`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// word.set(0xff);
    /// word.and(0x0f);
    /// assert_eq!(word.fetch(), 0x0f);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn and(self, value: E) {
        self.amo(AmoOp::And, value, value);
    }

    /// `shmem_atomic_fetch_or` ([`Remote::fetch_or`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// assert_eq!(word.fetch_or(0b01), 0);
    /// assert_eq!(word.fetch_or(0b10), 0b01);
    /// assert_eq!(word.fetch(), 0b11);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn fetch_or(self, value: E) -> E {
        self.amo(AmoOp::FetchOr, value, value)
    }

    /// `shmem_atomic_or` ([`Remote::or`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// word.or(1 << 5);
    /// assert_eq!(word.fetch(), 32);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn or(self, value: E) {
        self.amo(AmoOp::Or, value, value);
    }

    /// `shmem_atomic_fetch_xor` ([`Remote::fetch_xor`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// word.set(0b11);
    /// assert_eq!(word.fetch_xor(0b01), 0b11);
    /// assert_eq!(word.fetch(), 0b10);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn fetch_xor(self, value: E) -> E {
        self.amo(AmoOp::FetchXor, value, value)
    }

    /// `shmem_atomic_xor` ([`Remote::xor`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use shmem_core::raw;
    /// # let world = shmem_core::init()?;
    /// # let a = world.alloc::<u64>(1);
    /// # // SAFETY: element 0 of `a`, which lives until the end of this example.
    /// # let word = unsafe { raw::locate(raw::local_addr(&a), 1, world.my_pe()) }
    /// #     .and_then(|l| l.word())
    /// #     .expect("symmetric and aligned");
    /// word.xor(0b101);
    /// word.xor(0b100);
    /// assert_eq!(word.fetch(), 0b001);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn xor(self, value: E) {
        self.amo(AmoOp::Xor, value, value);
    }
}

/// `shmem_quiet` of the default context ([`World::quiet`](crate::World::quiet)) when it is one
/// fence: the runtime is live and no peer is reached through UCX (a put to a mapped peer is
/// complete when its stores are, and the fence orders them before what follows). Returns
/// whether it did so; `false`, having done nothing, before `init`, after finalize or in a job
/// with UCX peers, for a foreign layer's general path.
///
/// ```
/// let world = shmem_core::init()?;
/// if !shmem_core::raw::quiet_if_plain() {
///     world.quiet();
/// }
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[inline(always)]
pub fn quiet_if_plain() -> bool {
    let Some(tp) = crate::transport::try_live_transport() else {
        return false;
    };
    if tp.any_ucx() {
        return false;
    }
    // What `Transport::quiet` does after its checks when no peer is reached through UCX.
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    true
}

/// The `len` elements of `E` at `addr` in this PE's symmetric memory as a symmetric object, or
/// `None` when they do not all lie in the symmetric heap or (with [`enable_data_segment`]) the
/// data segment. Every PE that passes the address of the same object gets the same object.
/// The address need not be aligned for `E` (typed operations copy bytes; atomics and waits check
/// alignment themselves).
///
/// # Safety
/// The returned object has no lifetime to tie it to what lives at `addr`, and other PEs write
/// through it. The caller makes sure that, while it or anything made from it is used, the bytes
/// are an object meant to be symmetric on every PE (a heap block that is not freed, a global
/// that the program treats as symmetric), and that no Rust reference (`&T` without interior
/// mutability, `&mut T`) covers them: as C's rules for symmetric objects ask of C programs.
///
/// # Examples
///
/// ```
/// use shmem_core::{SymmetricArray, raw};
/// let world = shmem_core::init()?;
/// let a = world.alloc::<f32>(4);
/// // The address of element 1, as a C caller passes `&a[1]`.
/// let at1 = raw::local_addr(&a).wrapping_add(1);
/// // SAFETY: elements 1..4 of `a`, which lives until the end of this example.
/// let tail = unsafe { raw::sym(at1, 3) }.expect("symmetric");
/// tail.p(world.my_pe(), 0, 1.5);
/// world.quiet();
/// assert_eq!(a.local_get(1), 1.5);
/// let local = [0f32; 4];
/// // SAFETY: nothing is made (a local array is not symmetric).
/// assert!(unsafe { raw::sym(local.as_ptr(), 4) }.is_none());
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[track_caller]
pub unsafe fn sym<E: Element>(addr: *const E, len: usize) -> Option<SymSlice<'static, E>> {
    let bytes = len.checked_mul(size_of::<E>())?;
    let offset = offset_of(addr.cast(), bytes)?;
    Some(SymSlice::from_offset(transport(), offset, len))
}

/// The address of this PE's copy of `obj` (the inverse of [`sym`]).
///
/// # Examples
///
/// ```
/// use shmem_core::{SymmetricArray, raw};
/// let world = shmem_core::init()?;
/// let a = world.alloc::<u32>(2);
/// a.local_set(1, 9);
/// let p = raw::local_addr(&a);
/// // SAFETY: element 1 of this PE's copy of `a`, which no PE writes meanwhile.
/// assert_eq!(unsafe { p.add(1).read() }, 9);
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[track_caller]
pub fn local_addr<E: Element, A: SymmetricArray<E> + ?Sized>(obj: &A) -> *mut E {
    obj.__transport().local(obj.__heap_offset()).cast()
}

/// The lock whose word is the 8 bytes at `addr` (a C `long` in symmetric memory, zero when
/// unlocked), or `None` when they are not symmetric or not 8-byte aligned.
///
/// # Safety
/// As [`sym`]: the word stays a symmetric lock word, covered by no Rust reference, while the
/// lock is used.
///
/// # Examples
///
/// ```
/// use shmem_core::raw;
/// let world = shmem_core::init()?;
/// let word = world.alloc::<i64>(1); // a C `long` lock: zero is unlocked
/// // SAFETY: `word` stays a lock word, covered by no reference, until the end of this example.
/// let lock = unsafe { raw::lock_at(raw::local_addr(&word)) }.expect("symmetric and aligned");
/// {
///     let _held = lock.lock();
///     // ... the critical section ...
/// }
/// world.barrier_all();
/// let local = 0i64;
/// // SAFETY: nothing is made (a local is not symmetric).
/// assert!(unsafe { raw::lock_at(&raw const local) }.is_none());
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[track_caller]
pub unsafe fn lock_at(addr: *const i64) -> Option<LockRef<'static>> {
    if !(addr as usize).is_multiple_of(8) {
        return None;
    }
    let offset = offset_of(addr.cast(), 8)?;
    Some(LockRef::at_offset(transport(), offset))
}

/// `shmem_put_nbi` (with `ctx`: `shmem_ctx_put_nbi`): starts copying `src.len()` elements into
/// elements `at..` of `dest` on PE `pe`; complete at the next quiet of the route (the context's,
/// or the runtime's for `None`). Checks the PE and the range before any byte moves.
///
/// # Safety
/// `src` points to `len` readable elements that stay valid and unchanged until that quiet.
///
/// # Examples
///
/// ```
/// use shmem_core::{Shared, SymmetricArray, raw};
/// let world = shmem_core::init()?;
/// let a = world.alloc::<u64>(4);
/// let src = [1u64, 2, 3, 4];
/// // SAFETY: `src` lives and stays unchanged until the quiet below.
/// unsafe { raw::put_nbi::<u64, Shared>(None, &a.slice(..), world.my_pe(), src.as_ptr(), 4) };
/// world.quiet();
/// assert_eq!(a.local_get(3), 4);
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[track_caller]
pub unsafe fn put_nbi<E: Element, M: CtxMode>(
    ctx: Option<&Ctx<'_, M>>,
    dest: &SymSlice<'_, E>,
    pe: usize,
    src: *const E,
    len: usize,
) {
    // SAFETY: forwarded contract; a put only reads `src`.
    unsafe { nbi(ctx, dest, pe, Dir::Put, src.cast_mut(), len) }
}

/// `shmem_get_nbi` (with `ctx`: `shmem_ctx_get_nbi`): starts copying `len` elements of `src`
/// on PE `pe` into `dst`; `dst` holds them after the next quiet of the route. Checks the PE and
/// the range before any byte moves.
///
/// # Safety
/// `dst` points to `len` writable elements that stay valid, and that nothing else reads or
/// writes, until that quiet.
///
/// # Examples
///
/// ```
/// use shmem_core::{CtxOptions, Private, SymmetricArray, raw};
/// let world = shmem_core::init()?;
/// let a = world.alloc::<u64>(4);
/// a.local_write(.., &[5, 6, 7, 8]);
/// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
/// let mut back = [0u64; 4];
/// // SAFETY: nothing reads or writes `back` until the context's quiet below.
/// unsafe { raw::get_nbi(Some(&ctx), &a.slice(..), world.my_pe(), back.as_mut_ptr(), 4) };
/// ctx.quiet();
/// assert_eq!(back, [5, 6, 7, 8]);
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[track_caller]
pub unsafe fn get_nbi<E: Element, M: CtxMode>(
    ctx: Option<&Ctx<'_, M>>,
    src: &SymSlice<'_, E>,
    pe: usize,
    dst: *mut E,
    len: usize,
) {
    // SAFETY: forwarded contract.
    unsafe { nbi(ctx, src, pe, Dir::Get, dst, len) }
}

/// The one non-blocking transfer of this module.
///
/// # Safety
/// As [`put_nbi`] and [`get_nbi`].
#[track_caller]
unsafe fn nbi<E: Element, M: CtxMode>(
    ctx: Option<&Ctx<'_, M>>,
    obj: &SymSlice<'_, E>,
    pe: usize,
    dir: Dir,
    local: *mut E,
    len: usize,
) {
    let op = match dir {
        Dir::Put => "put_nbi",
        Dir::Get => "get_nbi",
    };
    let at = checked_offset(obj, &(0..len), len, op, "local buffer");
    let tp = obj.__transport();
    let peer = match ctx {
        Some(c) => c.peer(pe),
        None => tp.peer(pe),
    };
    // SAFETY: the range lies inside the object (checked); the caller keeps `local` valid until
    // the quiet that completes the transfer.
    unsafe {
        tp.rma(
            peer,
            dir,
            Completion::Nbi,
            at,
            local.cast(),
            len * size_of::<E>(),
        )
    }
}
