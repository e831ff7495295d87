//! **Layer 3, symmetric objects**: what lives in symmetric memory and where. `#[symmetric]`
//! statics ([`statics`]), arrays on the symmetric heap and their collective allocation
//! ([`heap`]), element ranges of either as objects of their own ([`view`]), what may be stored
//! there ([`storage`]), and the checks of a range or an index against an object ([`bounds`]).
//!
//! Every object keeps one contract, which the operations above rely on: [`sealed::Placed`]
//! (where its bytes lie, and the transport that reaches them) and, for arrays of elements,
//! [`SymObject`] (how many there are). Only this crate's objects implement them.
//!
//! May use: `transport`, `mem` and the base modules. The operations on objects (`ops`) and the
//! collectives (`coll`) build on it.

pub(crate) mod bounds;
// Public when rustdoc checks examples (see the note in lib.rs).
#[cfg(not(doc_examples_check))]
pub(crate) mod heap;
#[cfg(doc_examples_check)]
pub mod heap;
#[cfg(not(doc_examples_check))]
pub(crate) mod statics;
#[cfg(doc_examples_check)]
pub mod statics;
#[cfg(not(doc_examples_check))]
pub(crate) mod storage;
#[cfg(doc_examples_check)]
pub mod storage;
#[cfg(not(doc_examples_check))]
pub(crate) mod view;
#[cfg(doc_examples_check)]
pub mod view;

use crate::element::Element;

pub(crate) mod sealed {
    use crate::transport::Transport;

    /// Where a symmetric object lives: the sealed base of every object trait, carrying what the
    /// runtime needs of them and users never see. Implemented by this crate's objects only.
    pub trait Placed {
        /// Byte offset of the object's first byte in the runtime's offset space. Panics if the
        /// runtime is not initialized.
        fn __heap_offset(&self) -> usize;
        /// The transport that reaches the object: the one a heap array or view carries, or the
        /// process's for a static. Panics if the runtime is not initialized.
        fn __transport(&self) -> &'static Transport;
    }
}

/// The contract of a symmetric array of `E`: a [`SymArray`](crate::SymArray) on the heap, a
/// `#[symmetric]` static array, or a view of either. Every remote-access trait
/// ([`SymmetricArray`](crate::SymmetricArray), the wait and signal traits,
/// [`PeerAccess`](crate::PeerAccess)) is implemented for every `SymObject`.
///
/// Contract (of every implementation): `__heap_offset() .. __heap_offset() + __len() *
/// size_of::<E>()` lies inside one region of the runtime's offset space (statics and heap, or
/// the data segment), reserved for the object for as long as the implementing value can be
/// used, and aligned for `E`.
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// #[symmetric]
/// static STATIC: [u32; 4] = [0; 4];
/// let world = shmem_core::init()?;
/// let heap = world.alloc::<u32>(4);
/// let me = world.my_pe();
/// // A static array, a heap array and a view of either: the same operations on each.
/// STATIC.put(me, .., &[1, 2, 3, 4]);
/// heap.put(me, .., &[1, 2, 3, 4]);
/// heap.slice(2..).put(me, .., &[9, 9]);
/// world.quiet();
/// assert_eq!((STATIC.local_get(3), heap.local_get(3)), (4, 9));
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a symmetric array",
    label = "expected a `#[symmetric]` static array or a `SymArray`",
    note = "`shmem!` targets and remote-access methods work on `#[symmetric]` statics and on \
            `SymArray`s from `World::alloc`; a scalar `#[symmetric]` static is addressed as `NAME[pe]`"
)]
pub trait SymObject<E: Element>: sealed::Placed {
    /// Length known at compile time (`usize::MAX` when not known), for `shmem!`'s checks.
    #[doc(hidden)]
    const CONST_LEN: usize = usize::MAX;

    /// Number of elements.
    #[doc(hidden)]
    fn __len(&self) -> usize;
}
