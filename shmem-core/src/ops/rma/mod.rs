//! Remote memory access: typed put, get, p, g, iput, iget and their non-blocking forms.
//!
//! Every operation checks its PE, range and lengths before any byte moves and panics with a
//! message that names the values; then it is one copy (same node) or one UCX call (otherwise).
//!
//! Part of the operations layer: [`SymmetricArray`] is implemented for every symmetric object of
//! elements (each keeps the contract `object::SymObject`), and its methods go straight to the
//! transport's put and get. Uses `ops::amo`, `ops::signal`, `object`, `transport`, `mem`.
//!
//! The parts: `array.rs` holds [`SymmetricArray`] and the route-generic forms of its operations
//! that contexts share; this file holds the non-blocking scopes ([`NbiScope`]) and the quiet
//! that ends them.

// Public when rustdoc checks examples (see the note in lib.rs).
#[cfg(not(doc_examples_check))]
mod array;
#[cfg(doc_examples_check)]
pub mod array;

pub use array::SymmetricArray;
pub(crate) use array::{ibget_via, ibput_via, iget_via, iput_via, put_signal_via};

use super::signal::{Signal, SignalOp};
use crate::element::Element;
use crate::object::bounds::checked_offset;
use crate::transport::rma::{Completion, Dir};
use crate::transport::{Peer, Transport};
use std::marker::PhantomData;
use std::ops::RangeBounds;

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
    tp: &'static Transport,
    /// A context's own peers, or `None` for the runtime's.
    peers: Option<&'buf [Peer]>,
    /// Invariant in `'buf`: the scope cannot be shortened to accept buffers that die inside it.
    _buf: PhantomData<fn(&'buf ()) -> &'buf ()>,
    /// Tied to the thread that quiets it.
    _not_send: PhantomData<*const ()>,
}

impl<'buf> NbiScope<'buf> {
    pub(crate) fn new(tp: &'static Transport) -> NbiScope<'buf> {
        NbiScope::on_route(tp, None)
    }

    /// A scope whose operations go through `peers` (a context's), or the runtime's own.
    pub(crate) fn on_route(tp: &'static Transport, peers: Option<&'buf [Peer]>) -> NbiScope<'buf> {
        NbiScope {
            tp,
            peers,
            _buf: PhantomData,
            _not_send: PhantomData,
        }
    }

    /// Peer `pe` on this scope's route (the runtime checks the PE).
    #[inline]
    #[track_caller]
    fn peer(&self, pe: usize) -> &Peer {
        let main = self.tp.peer(pe);
        self.peers.map_or(main, |p| &p[pe])
    }

    /// `shmem_put_nbi`: starts copying `src` into elements `range` of `target` on PE `pe`. `src`
    /// stays borrowed until the scope's quiet.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static HALO: [f64; 4] = [0.0; 4];
    /// let world = shmem_core::init()?;
    /// let (me, n) = (world.my_pe(), world.n_pes());
    /// let edge = [me as f64; 2];
    /// world.nbi(|s| {
    ///     s.put(&HALO, (me + 1) % n, 0..2, &edge);     // both transfers in flight at once
    ///     s.put(&HALO, (me + n - 1) % n, 2..4, &edge);
    /// }); // complete here
    /// world.barrier_all();
    /// assert_eq!(HALO.local_get(0), ((me + n - 1) % n) as f64);
    /// assert_eq!(HALO.local_get(2), ((me + 1) % n) as f64);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
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
            self.tp.rma(
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
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static PART: [u32; 4] = [0; 4];
    /// let world = shmem_core::init()?;
    /// let (me, n) = (world.my_pe(), world.n_pes());
    /// PART.local_write(.., &[me as u32; 4]);
    /// world.barrier_all();
    /// let (mut left, mut right) = ([0; 4], [0; 4]);
    /// world.nbi(|s| {
    ///     s.get(&PART, (me + n - 1) % n, .., &mut left);
    ///     s.get(&PART, (me + 1) % n, .., &mut right);
    /// }); // `left` and `right` hold the data from here on
    /// assert_eq!((left[0], right[0]), (((me + n - 1) % n) as u32, ((me + 1) % n) as u32));
    /// # world.barrier_all();
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
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
            self.tp.rma(
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
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static CHUNK: [u16; 8] = [0; 8];
    /// #[symmetric]
    /// static READY: u64 = 0;
    /// let world = shmem_core::init()?;
    /// let (me, n) = (world.my_pe(), world.n_pes());
    /// let data = [me as u16; 8];
    /// let right = (me + 1) % n;
    /// world.nbi(|s| s.put_signal(&CHUNK, right, .., &data, READY.signal(), SignalOp::Add(1)));
    /// READY.signal().wait_until(Cmp::Ge, 1);
    /// assert_eq!(CHUNK.local_get(7), ((me + n - 1) % n) as u16);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
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
        put_signal_via(self.tp, self.peer(pe), target, range, src, signal, op);
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
pub(crate) struct QuietOnDrop(pub(crate) &'static Transport);

impl Drop for QuietOnDrop {
    fn drop(&mut self) {
        self.0.quiet();
    }
}
