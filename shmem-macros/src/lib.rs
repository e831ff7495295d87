//! Procedural macros of `shmem-core`. Use them through `shmem_core` (`shmem_core::prelude::*`),
//! which re-exports them; the expansions name `::shmem_core::__private` items.
//!
//! This crate is only the proc-macro entry points; the parsing, checking and expansion are in
//! `shmem-syntax`, an ordinary library whose tests also run under Miri.
#![deny(missing_docs)]

use proc_macro::TokenStream;

/// Places a static in symmetric memory: it exists on every PE, set to its initializer by
/// `shmem_core::init()`, and any PE can read and write any PE's copy.
///
/// ```
/// use shmem_core::prelude::*;
///
/// #[symmetric]
/// static TEMPERATURE: [f64; 1024] = [0.0; 1024];
///
/// let world = shmem_core::init()?;
/// TEMPERATURE.p(world.my_pe(), 3, 21.5);
/// assert_eq!(TEMPERATURE.local_get(3), 21.5);
/// # Ok::<(), shmem_core::Error>(())
/// ```
///
/// The static's type must be an element type (`shmem_core::Element`): a primitive number, an array
/// of elements, or a struct marked [`macro@element`]. `static mut` is rejected: symmetric statics
/// are shared with other PEs, so all access goes through the typed methods of
/// `shmem_core::Symmetric`. A mistake in the item (`static mut`, a `const`, `thread_local!`, a
/// missing type or value) is one error: the name still stands for a symmetric static, so its
/// uses are not reported again.
#[proc_macro_attribute]
pub fn symmetric(args: TokenStream, input: TokenStream) -> TokenStream {
    shmem_syntax::symmetric(args.into(), input.into()).into()
}

/// Makes a plain-data struct a `shmem_core::Element`, so it can live in symmetric memory: one
/// attribute, and the crate needs no other dependency than `shmem-core`.
///
/// ```
/// use shmem_core::prelude::*;
///
/// #[element]
/// struct Sample {
///     time: f64,
///     value: f32,
///     sensor: u32,
/// }
///
/// #[symmetric]
/// static LAST: [Sample; 4] = [Sample { time: 0.0, value: 0.0, sensor: 0 }; 4];
/// ```
///
/// It adds to the struct what an element needs and the struct does not have yet: `#[derive(Clone,
/// Copy)]`; zerocopy's `FromBytes`, `IntoBytes` and `Immutable` derives (through shmem-core's own
/// zerocopy), which check that every field is plain data and that there are no padding bytes; a
/// `#[repr(C)]` when the struct has no `#[repr]`; and the `Element` impl. Place it above the
/// struct's own `#[derive(...)]`s, so that it sees them.
///
/// A struct with padding is rejected with zerocopy's message, which says how many bytes:
///
/// ```compile_fail
/// use shmem_core::prelude::*;
/// #[element]
/// struct Padded {
///     tag: u8,   // error: `Padded` has 7 total byte(s) of padding
///     value: u64,
/// }
/// ```
#[proc_macro_attribute]
pub fn element(args: TokenStream, input: TokenStream) -> TokenStream {
    shmem_syntax::element(args.into(), input.into()).into()
}

/// The `shmem_core::Element` impl alone, for a struct that derives zerocopy's `FromBytes`,
/// `IntoBytes` and `Immutable` (and `Clone, Copy`) itself. [`macro@element`] does all of it in
/// one attribute.
///
/// ```
/// use shmem_core::prelude::*;
/// use zerocopy::{FromBytes, Immutable, IntoBytes};
///
/// #[derive(Clone, Copy, FromBytes, IntoBytes, Immutable, Element)]
/// #[repr(C)]
/// struct Sample {
///     time: f64,
///     value: f32,
///     sensor: u32,
/// }
///
/// #[symmetric]
/// static LAST: [Sample; 4] = [Sample { time: 0.0, value: 0.0, sensor: 0 }; 4];
/// ```
#[proc_macro_derive(Element)]
pub fn derive_element(input: TokenStream) -> TokenStream {
    shmem_syntax::derive_element(input.into()).into()
}

/// Remote memory access written as slice syntax, checked at compile time, expanded into direct
/// typed calls (`put`, `get`, `iput`, `iget`, `p`, `g`, atomics) with no allocation.
///
/// # Grammar
///
/// `shmem!(STMT; STMT; ...)` (any of `()`, `[]`, `{}`), where a statement is one of:
///
/// | form | meaning | OpenSHMEM |
/// |---|---|---|
/// | `T[pe, i] = v` | write one element | `shmem_p` |
/// | `T[pe, a..b] = src` | contiguous put | `shmem_put` |
/// | `T[pe, a..b;s] = src` | strided put: elements a, a+s, ... below b | `shmem_iput` |
/// | `dst = T[pe, a..b]` | contiguous get into a local place | `shmem_get` |
/// | `dst = T[pe, a..b;s]` | strided get | `shmem_iget` |
/// | `T[pe, a..b;s] = buf[c..d;t]`, `buf[c..d;t] = T[pe, a..b;s]` | strided on both sides | `shmem_iput`/`shmem_iget` with both strides |
/// | `x = T[pe, i]`, or the expression `T[pe, i]` | read one element | `shmem_g` |
/// | `S[pe] = v`, `x = S[pe]`, `S[pe]` | a whole `#[symmetric]` static | `shmem_p`/`shmem_g` |
/// | `T[pe, i] += v` (and `-=`, `&=`, `\|=`, `^=`) | non-fetching atomic | `shmem_atomic_add`, ... |
/// | `T[pe, i].fetch_add(v)`, `.fetch()`, `.set(v)`, `.swap(v)`, `.compare_swap(c, v)`, `.fetch_inc()`, `.inc()`, `.fetch_and(v)`, `.fetch_or(v)`, `.fetch_xor(v)` | atomics | `shmem_atomic_*` |
/// | `T[pe, a..b] = src => SIG = v` (or `+= v`, or `SIGS[i]`) | put, then update the `u64` signal on that PE | `shmem_put_signal` |
/// | `nbi s: T[pe, a..b] = src`, `nbi s: dst = T[pe, a..b]` | non-blocking, inside `world.nbi(\|s\| ...)` | `shmem_put_nbi`, `shmem_get_nbi` |
///
/// `T` is a `#[symmetric]` static array or a `SymArray` from `World::alloc`; `S` a
/// `#[symmetric]` static. Ranges are `a..b`, `a..=b`, `a..`, `..b` or `..`; a stride follows a
/// `;` and must be positive. `pe`, indices, bounds and strides are integers of any type. `src` is an
/// array, slice or `Vec` (or a reference to one, or a sub-slice `&v[..k]`), `dst` any mutable place
/// of those kinds (`v[..k]` included); element types must match the target's.
///
/// # Checked at compile time
/// A target that is not symmetric; element types that differ between the two sides; a zero or
/// negative literal stride; a constant index or range outside a `#[symmetric]` static array; a
/// constant element count that differs from a fixed-size local array; a range on a scalar
/// static; an atomic the element type does not have (`+=` on `f64`); a destination that is not
/// mutable; a PE that is not an integer; malformed syntax, reported at the offending token. Every
/// mistake of an invocation is reported, not only the first.
///
/// The bounds check of constant indices and ranges depends on the target's type, which the macro
/// cannot see, so it is evaluated when the code is compiled to a binary: it fails `cargo build`,
/// `cargo test` and `cargo run`, not `cargo check`, and not in a function that is never used.
///
/// # Checked at run time, before any byte moves
/// PE numbers, dynamic bounds and lengths, and use before `shmem_core::init()`: a panic whose
/// message names the values.
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
///
/// #[symmetric]
/// static A: [f64; 16] = [0.0; 16];
/// #[symmetric]
/// static COUNT: u64 = 0;
///
/// let world = shmem_core::init()?;
/// let pe = (world.my_pe() + 1) % world.n_pes();
/// let heap = world.alloc::<i32>(8);
///
/// shmem!(A[pe, 0..4] = [1.0, 2.0, 3.0, 4.0]);      // put
/// shmem!(A[pe, 4..12;2] = vec![5.0, 6.0, 7.0, 8.0]); // strided put: 4, 6, 8, 10
/// shmem!(A[pe, 15] = 9.5);                          // one element
/// shmem!(heap[pe, ..] = [7; 8]; COUNT[pe] = 3);     // two statements
/// world.barrier_all();
///
/// let mut back = [0.0; 4];
/// shmem!(back = A[pe, 0..4]);                       // get
/// assert_eq!(back, [1.0, 2.0, 3.0, 4.0]);
/// let mut every_other = vec![0.0; 4];
/// shmem!(every_other = A[pe, 4..12;2]);             // strided get
/// assert_eq!(every_other, [5.0, 6.0, 7.0, 8.0]);
/// let column = [1.0, 0.0, 2.0, 0.0, 3.0, 0.0, 4.0];
/// shmem!(A[pe, 0..4] = column[0..7;2]);            // strided local source: 1, 2, 3, 4
/// let mut wide = [0.0; 7];
/// shmem!(wide[0..7;2] = A[pe, 0..4]);              // strided local destination
/// assert_eq!(wide, column);
/// let mut part = [0; 8];
/// shmem!(part[..3] = heap[pe, 5..]);                // into a sub-slice
/// assert_eq!(part, [7, 7, 7, 0, 0, 0, 0, 0]);
/// let x: f64 = shmem!(A[pe, 15]);                   // read one element
/// assert_eq!(x, 9.5);
/// assert_eq!(shmem!(COUNT[pe]), 3);                 // read a scalar static
/// world.barrier_all();
///
/// shmem!(heap[0, 1] += 2);                          // atomic add on PE 0
/// shmem!(COUNT[0] |= 8);                            // atomic or
/// let old = shmem!(heap[0, 2].fetch_add(10));       // fetching atomic
/// let prev = shmem!(COUNT[0].compare_swap(11, 0));  // compare-and-swap
/// world.barrier_all();
/// # let _ = (old, prev);
///
/// shmem!(heap[pe, 4..8] = [4, 5, 6, 7] => COUNT += 1);  // put with signal
/// world.barrier_all();
///
/// let team = world.team_world();
/// shmem!(team team: heap[team.n_pes() - 1, 7] = 70);    // team-relative PE number
/// let ctx = world.ctx_create::<Private>(CtxOptions::default())?;
/// shmem!(ctx ctx: heap[pe, 6] += 1);                 // through a context
/// ctx.quiet();
/// world.barrier_all();
///
/// let src = [1, 2, 3];
/// let mut got = [0; 3];
/// world.nbi(|s| shmem!(nbi s: heap[pe, 0..3] = src));   // non-blocking put
/// world.nbi(|s| shmem!(nbi s: got = heap[pe, 0..3]));   // non-blocking get
/// assert_eq!(got, src);
/// # Ok::<(), shmem_core::Error>(())
/// ```
///
/// Mistakes are compile errors on the user's own tokens:
///
/// ```compile_fail
/// use shmem_core::prelude::*;
/// #[symmetric]
/// static A: [f64; 8] = [0.0; 8];
/// shmem!(A[0, 7] += 1.0); // error: `f64` has no atomic add, increment or compare-and-swap
/// ```
#[proc_macro]
pub fn shmem(input: TokenStream) -> TokenStream {
    shmem_syntax::shmem(input.into()).into()
}
