//! [`SymmetricArray`], the remote-access methods of every symmetric object of elements (put,
//! get, p, g, iput, iget, their symmetric-destination forms and this PE's own copy), and the
//! forms of `put_signal`, `iput` and `iget` that take their route (the runtime's peers or a
//! context's), shared with contexts and non-blocking scopes.

use crate::element::Element;
use crate::mem::word::SignalKind;
use crate::object::SymObject;
use crate::object::bounds::{
    blocked_selection, check_index, checked_offset, elem_offset, strided_selection,
};
use crate::object::heap::SymArray;
use crate::object::statics::Symmetric;
use crate::object::view::SymSlice;
use crate::ops::amo::Remote;
use crate::ops::signal::{Signal, SignalOp};
use crate::transport::{Peer, Transport};
use std::ops::RangeBounds;
use zerocopy::IntoBytes;

/// Remote access to a symmetric array: a [`SymArray`] on the heap or a
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
pub trait SymmetricArray<E: Element>: SymObject<E> {
    /// Length known at compile time (`usize::MAX` when not known), for `shmem!`'s checks.
    #[doc(hidden)]
    const CONST_LEN: usize = <Self as SymObject<E>>::CONST_LEN;

    /// Number of elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static ROW: [f32; 6] = [0.0; 6];
    /// let world = shmem_core::init()?;
    /// let heap = world.alloc::<u8>(100);
    /// assert_eq!((ROW.len(), heap.len(), ROW.slice(2..).len()), (6, 100, 4));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline]
    fn len(&self) -> usize {
        self.__len()
    }

    /// True when the array has no elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(4);
    /// assert!(!a.is_empty());
    /// assert!(a.slice(4..).is_empty());
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
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
    fn slice<R: RangeBounds<usize>>(&self, range: R) -> SymSlice<'_, E> {
        SymSlice::of(self, range)
    }

    /// `shmem_put`: copies `src` into elements `range` of this array on PE `pe`. `src` may be
    /// reused on return; the data is delivered by the next [`quiet`](crate::World::quiet).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static INBOX: [i32; 8] = [0; 8];
    /// let world = shmem_core::init()?;
    /// let (me, n) = (world.my_pe(), world.n_pes());
    /// // Each PE writes its number into elements 2..4 of its right neighbour's INBOX.
    /// INBOX.put((me + 1) % n, 2..4, &[me as i32, -(me as i32)]);
    /// world.barrier_all();
    /// let left = ((me + n - 1) % n) as i32;
    /// assert_eq!((INBOX.local_get(2), INBOX.local_get(3)), (left, -left));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_put")]
    #[inline]
    #[track_caller]
    fn put<R: RangeBounds<usize>>(&self, pe: usize, range: R, src: &[E]) {
        let tp = self.__transport();
        let at = checked_offset(self, &range, src.len(), "put", "source");
        let peer = tp.peer(pe);
        // SAFETY: the range was checked against the object, which lies in the heap.
        unsafe { tp.put_bytes(peer, at, src.as_ptr().cast(), size_of_val(src)) }
    }

    /// `shmem_put_signal`: copies `src` into elements `range` on PE `pe`, then updates `signal`
    /// on that PE (set or add) once the data is delivered there. `src` may be reused on return.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static BLOCK: [u8; 16] = [0; 16];
    /// #[symmetric]
    /// static ARRIVED: u64 = 0;
    /// let world = shmem_core::init()?;
    /// let (me, n) = (world.my_pe(), world.n_pes());
    /// BLOCK.put_signal((me + 1) % n, .., &[me as u8; 16], ARRIVED.signal(), SignalOp::Set(1));
    /// ARRIVED.signal().wait_until(Cmp::Eq, 1); // the block from the left is here
    /// assert_eq!(BLOCK.local_get(15), ((me + n - 1) % n) as u8);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
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
        let tp = self.__transport();
        put_signal_via(tp, tp.peer(pe), self, range, src, signal, op);
    }

    /// `shmem_get`: copies elements `range` of this array on PE `pe` into `dst`.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static IDS: [u64; 4] = [0; 4];
    /// let world = shmem_core::init()?;
    /// let (me, n) = (world.my_pe(), world.n_pes());
    /// IDS.local_write(.., &[me as u64; 4]);
    /// world.barrier_all();
    /// let right = (me + 1) % n;
    /// let mut got = [0u64; 2];
    /// IDS.get(right, 1..3, &mut got);
    /// assert_eq!(got, [right as u64; 2]);
    /// # world.barrier_all();
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_get")]
    #[inline]
    #[track_caller]
    fn get<R: RangeBounds<usize>>(&self, pe: usize, range: R, dst: &mut [E]) {
        let tp = self.__transport();
        let at = checked_offset(self, &range, dst.len(), "get", "destination");
        let peer = tp.peer(pe);
        let len = size_of_val(dst);
        // SAFETY: the range was checked against the object; `dst` is a unique borrow of `len` bytes.
        unsafe { tp.get_bytes(peer, at, dst.as_mut_ptr().cast(), len) }
    }

    /// `shmem_p`: writes one element on PE `pe`.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static VOTES: [u8; 64] = [0; 64];
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// // Every PE writes one byte into its own slot on PE 0 (up to 64 PEs).
    /// if me < 64 {
    ///     VOTES.p(0, me, 1);
    /// }
    /// world.barrier_all();
    /// if me == 0 {
    ///     assert_eq!(VOTES.local_get(0), 1);
    /// }
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_p")]
    #[inline]
    #[track_caller]
    fn p(&self, pe: usize, index: usize, value: E) {
        let tp = self.__transport();
        check_index("p", index, self.len());
        let peer = tp.peer(pe);
        // SAFETY: index checked; `value` lives across the blocking put.
        unsafe {
            tp.put_bytes(
                peer,
                elem_offset::<E>(self.__heap_offset(), index),
                (&raw const value).cast(),
                size_of::<E>(),
            )
        }
    }

    /// `shmem_g`: reads one element from PE `pe`.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static CONFIG: [u32; 2] = [640, 480];
    /// let world = shmem_core::init()?;
    /// // Every PE reads PE 0's settings.
    /// assert_eq!(CONFIG.g(0, 1), 480);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_g")]
    #[inline]
    #[track_caller]
    fn g(&self, pe: usize, index: usize) -> E {
        let tp = self.__transport();
        check_index("g", index, self.len());
        let peer = tp.peer(pe);
        let mut value = E::new_zeroed();
        // SAFETY: index checked; `value` is a local of the element's size.
        unsafe {
            tp.get_bytes(
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
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static HISTOGRAM: [u64; 10] = [0; 10];
    /// let world = shmem_core::init()?;
    /// let bin = world.my_pe() % 10;
    /// HISTOGRAM.at(0, bin).inc(); // atomic, so concurrent PEs lose no count
    /// world.barrier_all();
    /// if world.my_pe() == 0 {
    ///     let mut all = [0u64; 10];
    ///     HISTOGRAM.local_read(.., &mut all);
    ///     assert_eq!(all.iter().sum::<u64>(), world.n_pes() as u64);
    /// }
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline]
    #[track_caller]
    fn at(&self, pe: usize, index: usize) -> Remote<'_, E> {
        let tp = self.__transport();
        check_index("at", index, self.len());
        let peer = tp.peer(pe);
        Remote::new(tp, peer, elem_offset::<E>(self.__heap_offset(), index))
    }

    /// `shmem_iput`: strided put. Writes the elements `range.start, range.start + stride, ...`
    /// (below the range's end) on PE `pe` from `src[0], src[src_stride], ...`. Both sides must
    /// select the same number of elements; strides must be positive.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// let grid = world.alloc::<f64>(12); // a 3 x 4 matrix, row-major
    /// // Column 1 gets elements 0, 2 and 4 of `src`.
    /// let src = [1.0, -1.0, 2.0, -1.0, 3.0];
    /// grid.iput(me, 1..12, 4, &src, 2);
    /// world.quiet();
    /// assert_eq!((grid.local_get(1), grid.local_get(5), grid.local_get(9)), (1.0, 2.0, 3.0));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
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
        let tp = self.__transport();
        iput_via(tp, tp.peer(pe), self, range, stride, src, src_stride);
    }

    /// `shmem_iget`: strided get. Reads the elements `range.start, range.start + stride, ...` of
    /// PE `pe` into `dst[0], dst[dst_stride], ...`. Both sides must select the same number of
    /// elements; strides must be positive.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// let grid = world.alloc::<i32>(12); // a 3 x 4 matrix, row-major
    /// grid.local_write(.., &[0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23]);
    /// // Column 2, read into every other element of `col`.
    /// let mut col = [0; 5];
    /// grid.iget(me, 2..12, 4, &mut col, 2);
    /// assert_eq!(col, [2, 0, 12, 0, 22]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
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
        let tp = self.__transport();
        iget_via(tp, tp.peer(pe), self, range, stride, dst, dst_stride);
    }

    /// `shmem_ibput` (OpenSHMEM 1.6): blocked strided put. Writes blocks of `block` contiguous
    /// elements on PE `pe`, one starting every `stride` elements from the start of `range` (the
    /// blocks that end inside it), from blocks of `src` starting every `src_stride` elements. Both
    /// sides must hold the same number of blocks; a block holds at least one element and neither
    /// stride may be less than it. With `block == 1` this is [`iput`](Self::iput).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// let grid = world.alloc::<u32>(12); // a 3 x 4 matrix, row-major
    /// // Columns 1 and 2 of every row, from the pairs of `src` (every third element is skipped).
    /// let src = [1, 2, 0, 3, 4, 0, 5, 6];
    /// grid.ibput(me, 1..12, 4, &src, 3, 2);
    /// world.quiet();
    /// let mut all = [0; 12];
    /// grid.local_read(.., &mut all);
    /// assert_eq!(all, [0, 1, 2, 0, 0, 3, 4, 0, 0, 5, 6, 0]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_ibput")]
    #[track_caller]
    fn ibput<R: RangeBounds<usize>>(
        &self,
        pe: usize,
        range: R,
        stride: usize,
        src: &[E],
        src_stride: usize,
        block: usize,
    ) {
        let tp = self.__transport();
        ibput_via(
            tp,
            tp.peer(pe),
            self,
            range,
            (stride, block),
            src,
            src_stride,
        );
    }

    /// `shmem_ibget` (OpenSHMEM 1.6): blocked strided get. Reads blocks of `block` contiguous
    /// elements of PE `pe`, one starting every `stride` elements from the start of `range` (the
    /// blocks that end inside it), into blocks of `dst` starting every `dst_stride` elements.
    /// Both sides must hold the same number of blocks; a block holds at least one element and
    /// neither stride may be less than it. With `block == 1` this is [`iget`](Self::iget).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let me = world.my_pe();
    /// let grid = world.alloc::<i32>(12); // a 3 x 4 matrix, row-major
    /// grid.local_write(.., &[0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23]);
    /// // The first two columns of every row, packed.
    /// let mut left = [0; 6];
    /// grid.ibget(me, .., 4, &mut left, 2, 2);
    /// assert_eq!(left, [0, 1, 10, 11, 20, 21]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_ibget")]
    #[track_caller]
    fn ibget<R: RangeBounds<usize>>(
        &self,
        pe: usize,
        range: R,
        stride: usize,
        dst: &mut [E],
        dst_stride: usize,
        block: usize,
    ) {
        let tp = self.__transport();
        ibget_via(
            tp,
            tp.peer(pe),
            self,
            range,
            (stride, block),
            dst,
            dst_stride,
        );
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
        let tp = self.__transport();
        let at = checked_offset(self, &range, dest.len(), "get_to", "destination");
        let peer = tp.peer(pe);
        let dst = tp.local(dest.__heap_offset());
        let len = dest.len() * size_of::<E>();
        if pe == tp.my_pe {
            // SAFETY: both ranges were checked against their objects in this PE's heap; `copy`
            // allows them to overlap.
            unsafe { std::ptr::copy(tp.local(at), dst, len) };
            return;
        }
        // SAFETY: the source range was checked against this object; `dst` is `dest`'s own copy
        // (`len` bytes of this PE's heap, not the peer's mapping of them).
        unsafe { tp.get_bytes(peer, at, dst, len) }
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
        let tp = self.__transport();
        let (start, count) = strided_selection(
            "iget_to",
            (&range, self.len(), stride),
            (dest.len(), dest_stride),
            ("source", "destination"),
        );
        let peer = tp.peer(pe);
        let (base, dbase) = (self.__heap_offset(), dest.__heap_offset());
        if pe == tp.my_pe {
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
                tp.local(elem_offset::<E>(dbase, k * dest_stride)),
            )
        });
        // SAFETY: every source offset lies inside this object (checked); every destination is
        // an element of `dest`'s own copy in this PE's heap, disjoint from the peer's mapping.
        unsafe { tp.get_elems(peer, elems, size_of::<E>()) }
    }

    /// Reads element `index` of this PE's own copy.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static PRIMES: [u16; 4] = [2, 3, 5, 7];
    /// let world = shmem_core::init()?;
    /// assert_eq!(PRIMES.local_get(3), 7); // this PE's copy: no communication
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline]
    #[track_caller]
    fn local_get(&self, index: usize) -> E {
        let tp = self.__transport();
        check_index("local_get", index, self.len());
        // A loop polling its own copy drives UCX, so that peers' puts over tcp land.
        tp.progress();
        // SAFETY: index checked; the element is plain data, read by value (a concurrent remote
        // write may be observed torn, as in OpenSHMEM).
        unsafe {
            tp.local(elem_offset::<E>(self.__heap_offset(), index))
                .cast::<E>()
                .read_volatile()
        }
    }

    /// Writes element `index` of this PE's own copy.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<i8>(3);
    /// a.local_set(2, -5);
    /// world.barrier_all(); // now other PEs may read it
    /// assert_eq!(a.g(world.my_pe(), 2), -5);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[inline]
    #[track_caller]
    fn local_set(&self, index: usize, value: E) {
        let tp = self.__transport();
        check_index("local_set", index, self.len());
        // SAFETY: index checked; plain data written by value.
        unsafe {
            tp.local(elem_offset::<E>(self.__heap_offset(), index))
                .cast::<E>()
                .write_volatile(value)
        }
    }

    /// Copies elements `range` of this PE's own copy into `dst`.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static SAMPLES: [f32; 5] = [0.5, 1.5, 2.5, 3.5, 4.5];
    /// let world = shmem_core::init()?;
    /// let mut mid = [0.0; 3];
    /// SAMPLES.local_read(1..4, &mut mid);
    /// assert_eq!(mid, [1.5, 2.5, 3.5]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[track_caller]
    fn local_read<R: RangeBounds<usize>>(&self, range: R, dst: &mut [E]) {
        let tp = self.__transport();
        let at = checked_offset(self, &range, dst.len(), "local_read", "destination");
        let src = tp.local(at);
        // SAFETY: range checked; `dst` is a unique local borrow, disjoint from the heap.
        unsafe { crate::mem::copy::copy_bytes(dst.as_mut_ptr().cast(), src, size_of_val(dst)) }
    }

    /// Copies `src` into elements `range` of this PE's own copy.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u64>(4);
    /// a.local_write(2.., &[8, 9]);
    /// let mut all = [0; 4];
    /// a.local_read(.., &mut all);
    /// assert_eq!(all, [0, 0, 8, 9]);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[track_caller]
    fn local_write<R: RangeBounds<usize>>(&self, range: R, src: &[E]) {
        let tp = self.__transport();
        let at = checked_offset(self, &range, src.len(), "local_write", "source");
        let dst = tp.local(at);
        // SAFETY: range checked; `src` is a local borrow, disjoint from the heap.
        unsafe { crate::mem::copy::copy_bytes(dst, src.as_ptr().cast(), size_of_val(src)) }
    }

    /// This PE's own copy as a slice.
    ///
    /// # Safety
    /// While the slice lives, no PE may write to this array on this PE (for example, use it only
    /// between two barriers in a phase where the others do not put here), and nothing may take a
    /// [`local_slice_mut`](Self::local_slice_mut) of it.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<u32>(4);
    /// a.local_write(.., &[1, 2, 3, 4]);
    /// world.barrier_all();
    /// // SAFETY: between the barriers no PE writes `a` (the program's phases say so), and no
    /// // mutable slice of it exists.
    /// let sum: u32 = unsafe { a.local_slice() }.iter().sum();
    /// world.barrier_all();
    /// assert_eq!(sum, 10);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[track_caller]
    unsafe fn local_slice(&self) -> &[E] {
        let tp = self.__transport();
        let p = tp.local(self.__heap_offset()).cast::<E>();
        // SAFETY: the object is `len` aligned elements inside the heap; the caller rules out writes.
        unsafe { std::slice::from_raw_parts(p, self.len()) }
    }

    /// This PE's own copy as a mutable slice.
    ///
    /// # Safety
    /// While the slice lives, no PE may read or write this array on this PE and no other slice of
    /// it may exist.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let a = world.alloc::<f64>(3);
    /// {
    ///     // SAFETY: in this phase no PE reads or writes `a` on this PE, and this is its only
    ///     // slice.
    ///     let mine = unsafe { a.local_slice_mut() };
    ///     mine.copy_from_slice(&[1.0, 2.0, 3.0]);
    ///     mine.reverse();
    /// }
    /// world.barrier_all(); // the others may read it from here on
    /// assert_eq!(a.local_get(0), 3.0);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[track_caller]
    #[allow(clippy::mut_from_ref)]
    unsafe fn local_slice_mut(&self) -> &mut [E] {
        let tp = self.__transport();
        let p = tp.local(self.__heap_offset()).cast::<E>();
        // SAFETY: as `local_slice`, and the caller guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(p, self.len()) }
    }
}

// Every symmetric object of elements has the remote-access methods. (Written out per object,
// not as a blanket impl over `SymObject`: a type that is not symmetric is then reported as not
// implementing `SymmetricArray`, the trait users know, with its message and nothing more.)
impl<E: Element> SymmetricArray<E> for SymArray<'_, E> {}
impl<E: Element> SymmetricArray<E> for SymSlice<'_, E> {}
impl<E: Element, const N: usize> SymmetricArray<E> for Symmetric<[E; N]> {}

/// `put_signal` of `target` through `peer` (the runtime's own, or a context's).
#[track_caller]
pub(crate) fn put_signal_via<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
    tp: &Transport,
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
    tp.put_with_signal(
        peer,
        (at, &[src.as_bytes()]),
        (signal.heap_offset(), kind, value),
    );
}

/// `iput` into `target` through `peer` (the runtime's own, or a context's).
#[track_caller]
pub(crate) fn iput_via<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
    tp: &Transport,
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
    unsafe { tp.put_elems(peer, elems, size_of::<E>()) }
}

/// `iget` from `target` through `peer` (the runtime's own, or a context's).
#[track_caller]
pub(crate) fn iget_via<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
    tp: &Transport,
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
    unsafe { tp.get_elems(peer, elems, size_of::<E>()) }
}

/// `ibput` into `target` through `peer` (the runtime's own, or a context's): one strided
/// transfer whose elements are the blocks ([`Transport::put_elems`]: copies on the direct path;
/// through UCX, blocks of up to 64 KiB travel packed in active messages, larger ones as one put
/// each).
#[track_caller]
pub(crate) fn ibput_via<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
    tp: &Transport,
    peer: &Peer,
    target: &A,
    range: R,
    (stride, block): (usize, usize),
    src: &[E],
    src_stride: usize,
) {
    let (start, count) = blocked_selection(
        "ibput",
        (&range, target.len(), stride),
        (src.len(), src_stride),
        block,
        ("target", "source"),
    );
    if count == 0 {
        return;
    }
    let base = target.__heap_offset();
    let blocks = (0..count).map(|k| {
        (
            elem_offset::<E>(base, start + k * stride),
            // SAFETY: k * src_stride + block <= src.len() (the counts match, checked above).
            unsafe { src.as_ptr().add(k * src_stride) }.cast::<u8>(),
        )
    });
    // SAFETY: every block lies inside the object and inside `src` (checked by
    // blocked_selection); `block` elements of a non-empty object fit in memory.
    unsafe { tp.put_elems(peer, blocks, block * size_of::<E>()) }
}

/// `ibget` from `target` through `peer` (the runtime's own, or a context's), as
/// [`ibput_via`] in the other direction ([`Transport::get_elems`]).
#[track_caller]
pub(crate) fn ibget_via<E: Element, A: SymmetricArray<E> + ?Sized, R: RangeBounds<usize>>(
    tp: &Transport,
    peer: &Peer,
    target: &A,
    range: R,
    (stride, block): (usize, usize),
    dst: &mut [E],
    dst_stride: usize,
) {
    let (start, count) = blocked_selection(
        "ibget",
        (&range, target.len(), stride),
        (dst.len(), dst_stride),
        block,
        ("source", "destination"),
    );
    if count == 0 {
        return;
    }
    let base = target.__heap_offset();
    let blocks = (0..count).map(|k| {
        (
            elem_offset::<E>(base, start + k * stride),
            // SAFETY: k * dst_stride + block <= dst.len() (the counts match, checked above).
            unsafe { dst.as_mut_ptr().add(k * dst_stride) }.cast::<u8>(),
        )
    });
    // SAFETY: every block lies inside the object and inside `dst`, a unique borrow that
    // outlives the call (checked by blocked_selection); blocks never overlap (strides are at
    // least a block).
    unsafe { tp.get_elems(peer, blocks, block * size_of::<E>()) }
}
