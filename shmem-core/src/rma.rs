//! Remote memory access: typed put, get, p, g, iput, iget and their non-blocking forms.
//!
//! Every operation checks its PE, range and lengths before any byte moves and panics with a
//! message that names the values; then it is one copy (same node) or one UCX call (otherwise).

use crate::amo::Remote;
use crate::element::Element;
use crate::runtime::Runtime;
use crate::signal::{Signal, SignalOp};
use crate::strided::SignalKind;
use crate::transport::{Completion, Dir, Peer, Transport};
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use zerocopy::IntoBytes;

pub(crate) mod sealed {
    use crate::runtime::Runtime;

    /// Only this crate's symmetric objects implement [`SymmetricArray`](super::SymmetricArray);
    /// this supertrait carries what the runtime needs of them and users never see.
    pub trait Sealed {
        /// Byte offset of element 0 in the symmetric heap. Panics if the runtime is not
        /// initialized.
        fn __heap_offset(&self) -> usize;
        /// The runtime the object lives in: the one a heap array carries, or the process's for
        /// a static. Panics if the runtime is not initialized.
        fn __runtime(&self) -> &'static Runtime;
    }
}

/// Resolves `range` against an object of `len` elements: `(start, count)`, or a panic naming the
/// range and the length.
#[inline]
#[track_caller]
pub(crate) fn resolve<R: RangeBounds<usize>>(range: &R, len: usize, op: &str) -> (usize, usize) {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e
            .checked_add(1)
            .unwrap_or_else(|| bad_range(op, start, usize::MAX, len)),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    if start > end || end > len {
        bad_range(op, start, end, len);
    }
    (start, end - start)
}

/// Heap offset of elements `range` of `target`, after checking the range against the object and
/// its element count against the local buffer's (`local_len` elements, named `what` in the panic).
#[inline]
#[track_caller]
pub(crate) fn checked_offset<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
    target: &A,
    range: &R,
    local_len: usize,
    op: &str,
    what: &str,
) -> usize {
    let (start, count) = resolve(range, target.len(), op);
    if count != local_len {
        len_mismatch(op, count, what, local_len);
    }
    elem_offset::<E>(target.__heap_offset(), start)
}

/// Number of elements that `start..start+span` selects with `stride`.
#[inline]
#[track_caller]
fn strided_count(span: usize, stride: usize, op: &str, which: &str) -> usize {
    if stride == 0 {
        zero_stride(op, which);
    }
    span.div_ceil(stride)
}

/// The one check of a strided transfer: `(start, count)` of the elements that `range` with
/// `stride` selects in a symmetric object of `len` elements, after checking both strides and
/// that the local side (`local_len` elements at `local_stride`) selects as many. `sides` names
/// the symmetric and the local side in the panics (`("target", "source")` for a put).
#[inline]
#[track_caller]
fn strided_selection<R: RangeBounds<usize>>(
    op: &str,
    (range, len, stride): (&R, usize, usize),
    (local_len, local_stride): (usize, usize),
    (sym_side, local_side): (&str, &str),
) -> (usize, usize) {
    let (start, span) = resolve(range, len, op);
    let count = strided_count(span, stride, op, sym_side);
    let have = strided_count(local_len, local_stride, op, local_side);
    if count != have {
        strided_mismatch(op, count, local_side, have);
    }
    (start, count)
}

#[cold]
#[inline(never)]
#[track_caller]
fn strided_mismatch(op: &str, count: usize, local_side: &str, have: usize) -> ! {
    len_mismatch(op, count, &format!("strided {local_side}"), have)
}

#[cold]
#[inline(never)]
#[track_caller]
fn bad_range(op: &str, start: usize, end: usize, len: usize) -> ! {
    if start > end {
        panic!("shmem: {op}: range {start}..{end} is reversed (start > end)")
    }
    panic!("shmem: {op}: range {start}..{end} is outside the symmetric object of length {len}")
}

/// The one index check: panics naming the operation, the index and the length unless
/// `index < len`.
#[inline]
#[track_caller]
pub(crate) fn check_index(op: &str, index: usize, len: usize) {
    if index >= len {
        bad_index(op, index, len);
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn bad_index(op: &str, index: usize, len: usize) -> ! {
    panic!("shmem: {op}: index {index} is outside the symmetric object of length {len}")
}

#[cold]
#[inline(never)]
#[track_caller]
fn zero_stride(op: &str, which: &str) -> ! {
    panic!("shmem: {op}: the {which} stride is 0; strides must be positive")
}

#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn len_mismatch(op: &str, target: usize, local_what: &str, local: usize) -> ! {
    panic!(
        "shmem: {op}: the symmetric range selects {target} elements but the {local_what} has {local}; \
         lengths must match"
    )
}

/// Remote access to a symmetric array: a [`SymArray`](crate::SymArray) on the heap or a
/// `#[symmetric]` static array.
///
/// Ranges select elements of the symmetric object (`2..6`, `..`, `3..=4`); the local buffer must
/// hold exactly as many elements. PE numbers and ranges are checked before anything moves.
///
/// ```
/// use shmem_core::prelude::*;
///
/// #[symmetric]
/// static GRID: [f64; 16] = [0.0; 16];
///
/// let world = shmem_core::init()?;
/// let right = (world.my_pe() + 1) % world.n_pes();
/// GRID.put(right, 0..4, &[1.0, 2.0, 3.0, 4.0]);       // contiguous put
/// GRID.iput(right, 8..16, 2, &[5.0, 6.0, 7.0, 8.0], 1); // elements 8, 10, 12, 14
/// world.barrier_all();
/// let mut back = [0.0; 4];
/// GRID.get(right, 0..4, &mut back);
/// assert_eq!(back, [1.0, 2.0, 3.0, 4.0]);
/// assert_eq!(GRID.g(right, 12), 7.0);
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a symmetric array",
    label = "expected a `#[symmetric]` static array or a `SymArray`",
    note = "`shmem!` targets and remote-access methods work on `#[symmetric]` statics and on \
            `SymArray`s from `World::alloc`; a scalar `#[symmetric]` static is addressed as `NAME[pe]`"
)]
pub trait SymmetricArray<E: Element>: sealed::Sealed {
    /// Length known at compile time (`usize::MAX` when not known), for `shmem!`'s checks.
    #[doc(hidden)]
    const CONST_LEN: usize = usize::MAX;

    /// Number of elements.
    fn len(&self) -> usize;

    /// True when the array has no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Elements `range` of this object as a symmetric object of their own (C's `&dest[k]`),
    /// accepted wherever a symmetric object is: RMA, atomics, waits, signals, collectives,
    /// contexts. Checks the range; the view borrows this object.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static ROWS: [f64; 12] = [0.0; 12];
    /// let world = shmem_core::init()?;
    /// let row1 = ROWS.slice(4..8);
    /// world.team_world().broadcast(&row1, &[1.0, 2.0, 3.0, 4.0], 0);
    /// assert_eq!(ROWS.local_get(5), 2.0);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[track_caller]
    fn slice<R: RangeBounds<usize>>(&self, range: R) -> crate::view::SymSlice<'_, E> {
        crate::view::SymSlice::of(self, range)
    }

    /// `shmem_put`: copies `src` into elements `range` of this array on PE `pe`. `src` may be
    /// reused on return; the data is delivered by the next [`quiet`](crate::World::quiet).
    #[doc(alias = "shmem_put")]
    #[inline]
    #[track_caller]
    fn put<R: RangeBounds<usize>>(&self, pe: usize, range: R, src: &[E]) {
        let rt = self.__runtime();
        let at = checked_offset(self, &range, src.len(), "put", "source");
        let peer = rt.peer(pe);
        // SAFETY: the range was checked against the object, which lies in the heap.
        unsafe { rt.put_bytes(peer, at, src.as_ptr().cast(), size_of_val(src)) }
    }

    /// `shmem_put_signal`: copies `src` into elements `range` on PE `pe`, then updates `signal`
    /// on that PE (set or add) once the data is delivered there. `src` may be reused on return.
    #[doc(alias = "shmem_put_signal")]
    #[inline]
    #[track_caller]
    fn put_signal<R: RangeBounds<usize>>(
        &self,
        pe: usize,
        range: R,
        src: &[E],
        signal: Signal<'_>,
        op: SignalOp,
    ) {
        let rt = self.__runtime();
        put_signal_via(rt, rt.peer(pe), self, range, src, signal, op);
    }

    /// `shmem_get`: copies elements `range` of this array on PE `pe` into `dst`.
    #[doc(alias = "shmem_get")]
    #[inline]
    #[track_caller]
    fn get<R: RangeBounds<usize>>(&self, pe: usize, range: R, dst: &mut [E]) {
        let rt = self.__runtime();
        let at = checked_offset(self, &range, dst.len(), "get", "destination");
        let peer = rt.peer(pe);
        let len = size_of_val(dst);
        // SAFETY: the range was checked against the object; `dst` is a unique borrow of `len` bytes.
        unsafe { rt.get_bytes(peer, at, dst.as_mut_ptr().cast(), len) }
    }

    /// `shmem_p`: writes one element on PE `pe`.
    #[doc(alias = "shmem_p")]
    #[inline]
    #[track_caller]
    fn p(&self, pe: usize, index: usize, value: E) {
        let rt = self.__runtime();
        check_index("p", index, self.len());
        let peer = rt.peer(pe);
        // SAFETY: index checked; `value` lives across the blocking put.
        unsafe {
            rt.put_bytes(
                peer,
                elem_offset::<E>(self.__heap_offset(), index),
                (&raw const value).cast(),
                size_of::<E>(),
            )
        }
    }

    /// `shmem_g`: reads one element from PE `pe`.
    #[doc(alias = "shmem_g")]
    #[inline]
    #[track_caller]
    fn g(&self, pe: usize, index: usize) -> E {
        let rt = self.__runtime();
        check_index("g", index, self.len());
        let peer = rt.peer(pe);
        let mut value = E::new_zeroed();
        // SAFETY: index checked; `value` is a local of the element's size.
        unsafe {
            rt.get_bytes(
                peer,
                elem_offset::<E>(self.__heap_offset(), index),
                (&raw mut value).cast(),
                size_of::<E>(),
            )
        }
        value
    }

    /// Element `index` of this array on PE `pe`, as a [`Remote`] for atomics and single-element
    /// access (`A.at(pe, i).fetch_add(1)`). Checks the PE and the index.
    #[inline]
    #[track_caller]
    fn at(&self, pe: usize, index: usize) -> Remote<'_, E> {
        let rt = self.__runtime();
        check_index("at", index, self.len());
        let peer = rt.peer(pe);
        Remote::new(rt, peer, elem_offset::<E>(self.__heap_offset(), index))
    }

    /// `shmem_iput`: strided put. Writes the elements `range.start, range.start + stride, ...`
    /// (below the range's end) on PE `pe` from `src[0], src[src_stride], ...`. Both sides must
    /// select the same number of elements; strides must be positive.
    #[doc(alias = "shmem_iput")]
    #[track_caller]
    fn iput<R: RangeBounds<usize>>(
        &self,
        pe: usize,
        range: R,
        stride: usize,
        src: &[E],
        src_stride: usize,
    ) {
        let rt = self.__runtime();
        iput_via(rt, rt.peer(pe), self, range, stride, src, src_stride);
    }

    /// `shmem_iget`: strided get. Reads the elements `range.start, range.start + stride, ...` of
    /// PE `pe` into `dst[0], dst[dst_stride], ...`. Both sides must select the same number of
    /// elements; strides must be positive.
    #[doc(alias = "shmem_iget")]
    #[track_caller]
    fn iget<R: RangeBounds<usize>>(
        &self,
        pe: usize,
        range: R,
        stride: usize,
        dst: &mut [E],
        dst_stride: usize,
    ) {
        let rt = self.__runtime();
        iget_via(rt, rt.peer(pe), self, range, stride, dst, dst_stride);
    }

    /// `shmem_get` into a symmetric destination: copies elements `range` of this array on PE
    /// `pe` into this PE's own copy of `dest` (all of it; use [`slice`](Self::slice) to place
    /// them), as C programs pass `&sym[k]` as the destination. Lengths must match; `pe` may be
    /// this PE, and the two may overlap then.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// let a = world.alloc::<u32>(6);
    /// a.local_write(0..3, &[1, 2, 3]);
    /// a.get_to(me, 0..3, &a.slice(2..5)); // overlapping: a = [1, 2, 1, 2, 3, 0]
    /// let mut all = [0; 6];
    /// a.local_read(.., &mut all);
    /// assert_eq!(all, [1, 2, 1, 2, 3, 0]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_get")]
    #[track_caller]
    fn get_to<D: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
        &self,
        pe: usize,
        range: R,
        dest: &D,
    ) {
        let rt = self.__runtime();
        let at = checked_offset(self, &range, dest.len(), "get_to", "destination");
        let peer = rt.peer(pe);
        let dst = rt.local(dest.__heap_offset());
        let len = dest.len() * size_of::<E>();
        if pe == rt.my_pe {
            // SAFETY: both ranges were checked against their objects in this PE's heap; `copy`
            // allows them to overlap.
            unsafe { std::ptr::copy(rt.local(at), dst, len) };
            return;
        }
        // SAFETY: the source range was checked against this object; `dst` is `dest`'s own copy
        // (`len` bytes of this PE's heap, not the peer's mapping of them).
        unsafe { rt.get_bytes(peer, at, dst, len) }
    }

    /// `shmem_iget` into a symmetric destination: reads elements `range.start, range.start +
    /// stride, ...` of PE `pe` into this PE's own copy of `dest` at `0, dest_stride, ...`.
    /// Both sides must select the same number of elements; strides must be positive.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// let a = world.alloc::<u16>(8);
    /// a.local_write(0..4, &[1, 2, 3, 4]);
    /// a.iget_to(me, 0..4, 2, &a.slice(4..8), 2); // a[4] = a[0], a[6] = a[2]
    /// assert_eq!((a.local_get(4), a.local_get(5), a.local_get(6)), (1, 0, 3));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_iget")]
    #[track_caller]
    fn iget_to<D: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
        &self,
        pe: usize,
        range: R,
        stride: usize,
        dest: &D,
        dest_stride: usize,
    ) {
        let rt = self.__runtime();
        let (start, count) = strided_selection(
            "iget_to",
            (&range, self.len(), stride),
            (dest.len(), dest_stride),
            ("source", "destination"),
        );
        let peer = rt.peer(pe);
        let (base, dbase) = (self.__heap_offset(), dest.__heap_offset());
        if pe == rt.my_pe {
            // Source and destination may overlap in this PE's heap: gather, then scatter.
            let mut tmp = vec![E::new_zeroed(); count];
            for (k, t) in tmp.iter_mut().enumerate() {
                *t = self.local_get(start + k * stride);
            }
            for (k, t) in tmp.into_iter().enumerate() {
                dest.local_set(k * dest_stride, t);
            }
            return;
        }
        let elems = (0..count).map(|k| {
            (
                elem_offset::<E>(base, start + k * stride),
                rt.local(elem_offset::<E>(dbase, k * dest_stride)),
            )
        });
        // SAFETY: every source offset lies inside this object (checked); every destination is
        // an element of `dest`'s own copy in this PE's heap, disjoint from the peer's mapping.
        unsafe { rt.get_elems(peer, elems, size_of::<E>()) }
    }

    /// Reads element `index` of this PE's own copy.
    #[inline]
    #[track_caller]
    fn local_get(&self, index: usize) -> E {
        let rt = self.__runtime();
        check_index("local_get", index, self.len());
        // A loop polling its own copy drives UCX, so that peers' puts over tcp land.
        rt.progress();
        // SAFETY: index checked; the element is plain data, read by value (a concurrent remote
        // write may be observed torn, as in OpenSHMEM).
        unsafe {
            rt.local(elem_offset::<E>(self.__heap_offset(), index))
                .cast::<E>()
                .read_volatile()
        }
    }

    /// Writes element `index` of this PE's own copy.
    #[inline]
    #[track_caller]
    fn local_set(&self, index: usize, value: E) {
        let rt = self.__runtime();
        check_index("local_set", index, self.len());
        // SAFETY: index checked; plain data written by value.
        unsafe {
            rt.local(elem_offset::<E>(self.__heap_offset(), index))
                .cast::<E>()
                .write_volatile(value)
        }
    }

    /// Copies elements `range` of this PE's own copy into `dst`.
    #[track_caller]
    fn local_read<R: RangeBounds<usize>>(&self, range: R, dst: &mut [E]) {
        let rt = self.__runtime();
        let at = checked_offset(self, &range, dst.len(), "local_read", "destination");
        let src = rt.local(at);
        // SAFETY: range checked; `dst` is a unique local borrow, disjoint from the heap.
        unsafe { crate::copy::copy_bytes(dst.as_mut_ptr().cast(), src, size_of_val(dst)) }
    }

    /// Copies `src` into elements `range` of this PE's own copy.
    #[track_caller]
    fn local_write<R: RangeBounds<usize>>(&self, range: R, src: &[E]) {
        let rt = self.__runtime();
        let at = checked_offset(self, &range, src.len(), "local_write", "source");
        let dst = rt.local(at);
        // SAFETY: range checked; `src` is a local borrow, disjoint from the heap.
        unsafe { crate::copy::copy_bytes(dst, src.as_ptr().cast(), size_of_val(src)) }
    }

    /// This PE's own copy as a slice.
    ///
    /// # Safety
    /// While the slice lives, no PE may write to this array on this PE (for example, use it only
    /// between two barriers in a phase where the others do not put here), and nothing may take a
    /// [`local_slice_mut`](Self::local_slice_mut) of it.
    #[track_caller]
    unsafe fn local_slice(&self) -> &[E] {
        let rt = self.__runtime();
        let p = rt.local(self.__heap_offset()).cast::<E>();
        // SAFETY: the object is `len` aligned elements inside the heap; the caller rules out writes.
        unsafe { std::slice::from_raw_parts(p, self.len()) }
    }

    /// This PE's own copy as a mutable slice.
    ///
    /// # Safety
    /// While the slice lives, no PE may read or write this array on this PE and no other slice of
    /// it may exist.
    #[track_caller]
    #[allow(clippy::mut_from_ref)]
    unsafe fn local_slice_mut(&self) -> &mut [E] {
        let rt = self.__runtime();
        let p = rt.local(self.__heap_offset()).cast::<E>();
        // SAFETY: as `local_slice`, and the caller guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(p, self.len()) }
    }
}

/// `put_signal` of `target` through `peer` (the runtime's own, or a context's).
#[track_caller]
pub(crate) fn put_signal_via<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
    rt: &Transport,
    peer: &Peer,
    target: &A,
    range: R,
    src: &[E],
    signal: Signal<'_>,
    op: SignalOp,
) {
    let at = checked_offset(target, &range, src.len(), "put_signal", "source");
    let (kind, value) = match op {
        SignalOp::Set(v) => (SignalKind::Set, v),
        SignalOp::Add(v) => (SignalKind::Add, v),
    };
    // The range was checked against the object, which lies in the heap; a signal word is an
    // aligned word of the heap.
    rt.put_with_signal(
        peer,
        (at, &[src.as_bytes()]),
        (signal.heap_offset(), kind, value),
    );
}

/// `iput` into `target` through `peer` (the runtime's own, or a context's).
#[track_caller]
pub(crate) fn iput_via<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
    rt: &Transport,
    peer: &Peer,
    target: &A,
    range: R,
    stride: usize,
    src: &[E],
    src_stride: usize,
) {
    let (start, count) = strided_selection(
        "iput",
        (&range, target.len(), stride),
        (src.len(), src_stride),
        ("target", "source"),
    );
    let base = target.__heap_offset();
    let elems = (0..count).map(|k| {
        (
            elem_offset::<E>(base, start + k * stride),
            // SAFETY: k * src_stride < src.len() (the counts match, checked above).
            unsafe { src.as_ptr().add(k * src_stride) }.cast::<u8>(),
        )
    });
    // SAFETY: every offset lies inside the object (k < count, checked by strided_selection);
    // every source is an element of `src`.
    unsafe { rt.put_elems(peer, elems, size_of::<E>()) }
}

/// `iget` from `target` through `peer` (the runtime's own, or a context's).
#[track_caller]
pub(crate) fn iget_via<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
    rt: &Transport,
    peer: &Peer,
    target: &A,
    range: R,
    stride: usize,
    dst: &mut [E],
    dst_stride: usize,
) {
    let (start, count) = strided_selection(
        "iget",
        (&range, target.len(), stride),
        (dst.len(), dst_stride),
        ("source", "destination"),
    );
    let base = target.__heap_offset();
    let elems = (0..count).map(|k| {
        (
            elem_offset::<E>(base, start + k * stride),
            // SAFETY: k * dst_stride < dst.len() (the counts match, checked above).
            unsafe { dst.as_mut_ptr().add(k * dst_stride) }.cast::<u8>(),
        )
    });
    // SAFETY: every offset lies inside the object (k < count, checked by strided_selection);
    // every local pointer is an element of `dst`, a unique borrow that outlives the call.
    unsafe { rt.get_elems(peer, elems, size_of::<E>()) }
}

#[inline(always)]
fn elem_offset<E>(base: usize, index: usize) -> usize {
    base + index * size_of::<E>()
}

/// A region in which non-blocking puts and gets may be issued; made by [`World::nbi`].
///
/// Every local buffer handed to the scope stays borrowed until the scope ends with a quiet, so
/// touching a buffer while its transfer may still be in flight does not compile:
///
/// ```compile_fail
/// use shmem_core::prelude::*;
/// # let world = shmem_core::init().unwrap();
/// let arr = world.alloc::<u32>(4);
/// let mut buf = [1u32, 2, 3, 4];
/// world.nbi(|s| {
///     s.put(&arr, 0, .., &buf);
///     buf[0] = 9; // error: `buf` is borrowed until the scope's quiet
/// });
/// ```
///
/// [`World::nbi`]: crate::World::nbi
pub struct NbiScope<'buf> {
    rt: &'static Transport,
    /// A context's own peers, or `None` for the runtime's.
    peers: Option<&'buf [Peer]>,
    /// Invariant in `'buf`: the scope cannot be shortened to accept buffers that die inside it.
    _buf: PhantomData<fn(&'buf ()) -> &'buf ()>,
    /// Tied to the thread that quiets it.
    _not_send: PhantomData<*const ()>,
}

impl<'buf> NbiScope<'buf> {
    pub(crate) fn new(rt: &'static Runtime) -> NbiScope<'buf> {
        NbiScope::on_route(rt, None)
    }

    /// A scope whose operations go through `peers` (a context's), or the runtime's own.
    pub(crate) fn on_route(rt: &'static Transport, peers: Option<&'buf [Peer]>) -> NbiScope<'buf> {
        NbiScope {
            rt,
            peers,
            _buf: PhantomData,
            _not_send: PhantomData,
        }
    }

    /// Peer `pe` on this scope's route (the runtime checks the PE).
    #[inline]
    #[track_caller]
    fn peer(&self, pe: usize) -> &Peer {
        let main = self.rt.peer(pe);
        self.peers.map_or(main, |p| &p[pe])
    }

    /// `shmem_put_nbi`: starts copying `src` into elements `range` of `target` on PE `pe`. `src`
    /// stays borrowed until the scope's quiet.
    #[doc(alias = "shmem_put_nbi")]
    #[track_caller]
    pub fn put<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
        &self,
        target: &A,
        pe: usize,
        range: R,
        src: &'buf [E],
    ) {
        let at = checked_offset(target, &range, src.len(), "put_nbi", "source");
        let peer = self.peer(pe);
        // SAFETY: range checked; `src` is borrowed for 'buf, which outlives the quiet at scope end.
        unsafe {
            self.rt.rma(
                peer,
                Dir::Put,
                Completion::Nbi,
                at,
                src.as_ptr().cast_mut().cast(),
                size_of_val(src),
            )
        }
    }

    /// `shmem_get_nbi`: starts copying elements `range` of `target` on PE `pe` into `dst`. `dst`
    /// holds the data after the scope ends.
    #[doc(alias = "shmem_get_nbi")]
    #[track_caller]
    pub fn get<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
        &self,
        target: &A,
        pe: usize,
        range: R,
        dst: &'buf mut [E],
    ) {
        let at = checked_offset(target, &range, dst.len(), "get_nbi", "destination");
        let peer = self.peer(pe);
        let len = size_of_val(dst);
        // SAFETY: range checked; `dst` is uniquely borrowed for 'buf, past the quiet at scope end.
        unsafe {
            self.rt.rma(
                peer,
                Dir::Get,
                Completion::Nbi,
                at,
                dst.as_mut_ptr().cast(),
                len,
            )
        }
    }
}

impl<'buf> NbiScope<'buf> {
    /// `shmem_put_signal_nbi`: like [`SymmetricArray::put_signal`]; `src` stays borrowed until
    /// the scope's quiet.
    #[doc(alias = "shmem_put_signal_nbi")]
    #[track_caller]
    pub fn put_signal<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
        &self,
        target: &A,
        pe: usize,
        range: R,
        src: &'buf [E],
        signal: Signal<'_>,
        op: SignalOp,
    ) {
        // Completing before the scope ends is a valid non-blocking implementation.
        put_signal_via(self.rt, self.peer(pe), target, range, src, signal, op);
    }

    /// `shmem_atomic_fetch_nbi` and the other fetching non-blocking atomics: runs `op` on
    /// `remote` and stores its result in `result`, which holds it once the scope has ended.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static COUNT: [u64; 1] = [0; 1];
    /// let world = shmem_core::init()?;
    /// let (mut a, mut b) = (0, 0);
    /// world.nbi(|s| {
    ///     s.fetch(&mut a, || COUNT.at(0, 0).fetch_add(1));
    ///     s.fetch(&mut b, || COUNT.at(0, 0).fetch_add(1));
    /// });
    /// assert_eq!(b, a + 1);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_atomic_fetch_nbi")]
    pub fn fetch<T>(&self, result: &'buf mut T, op: impl FnOnce() -> T) {
        *result = op();
    }
}

/// Quiets when the scope ends, also when it ends by a panic.
pub(crate) struct QuietOnDrop(pub(crate) &'static Runtime);

impl Drop for QuietOnDrop {
    fn drop(&mut self) {
        self.0.quiet();
    }
}
