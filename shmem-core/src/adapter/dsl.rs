//! What `shmem!` expands to: thin, `#[inline(always)]` conversions and checks around the typed
//! runtime calls. Each trait here exists to carry a compile-time check with a message that reads
//! like advice (`#[diagnostic::on_unimplemented]`). Not a stable API: use the macro.
//!
//! Part of the adapter layer; uses `coll`, `ops`, `object`, `transport`.

use crate::coll::team::Team;
use crate::element::Element;
use crate::object::statics::Symmetric;
use crate::ops::amo::{AmoBitwise, AmoExtended, AmoStandard, Remote};
use crate::ops::rma::SymmetricArray;
use crate::ops::signal::Signal;
use crate::transport::transport;

/// Integer types accepted as PE numbers.
#[diagnostic::on_unimplemented(
    message = "a PE number must be an integer, not `{Self}`",
    label = "expected an integer PE number"
)]
pub trait DslPe: Copy {
    /// The PE number, or a panic naming a negative or oversized value.
    fn to_pe(self) -> usize;
}

/// Integer types accepted as indices, range bounds and strides.
#[diagnostic::on_unimplemented(
    message = "`shmem!` indices, range bounds and strides must be integers, not `{Self}`",
    label = "expected an integer"
)]
pub trait DslIndex: Copy {
    /// The index, or a panic naming a negative or oversized value.
    fn to_index(self) -> usize;
}

macro_rules! integers {
    ($($t:ty)*) => {$(
        impl DslPe for $t {
            #[inline(always)]
            #[track_caller]
            #[allow(irrefutable_let_patterns)]
            fn to_pe(self) -> usize {
                if let Ok(v) = usize::try_from(self) { v } else { bad_int("PE number", self) }
            }
        }
        impl DslIndex for $t {
            #[inline(always)]
            #[track_caller]
            #[allow(irrefutable_let_patterns)]
            fn to_index(self) -> usize {
                if let Ok(v) = usize::try_from(self) { v } else { bad_int("index", self) }
            }
        }
    )*};
}
integers!(u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize);

#[cold]
#[inline(never)]
#[track_caller]
fn bad_int(what: &str, v: impl std::fmt::Display) -> ! {
    panic!("shmem!: {what} {v} is not a valid {what} (negative or too large)")
}

/// Converts a PE expression.
#[inline(always)]
#[track_caller]
pub fn pe<P: DslPe>(p: P) -> usize {
    p.to_pe()
}

/// Converts an index, range bound or stride expression.
#[inline(always)]
#[track_caller]
pub fn index<I: DslIndex>(i: I) -> usize {
    i.to_index()
}

/// A local buffer that can be the source of a put: arrays, slices, `Vec`s and references to them.
#[diagnostic::on_unimplemented(
    message = "the source `{Self}` does not hold `{E}` elements, the element type of the target",
    label = "expected an array, slice or Vec of `{E}`"
)]
pub trait DslSource<E> {
    /// The elements.
    fn as_src(&self) -> &[E];
}

/// A local buffer that can be the destination of a get.
#[diagnostic::on_unimplemented(
    message = "the destination `{Self}` cannot receive `{E}` elements, the element type of the target",
    label = "expected a mutable array, slice or Vec of `{E}`"
)]
pub trait DslDest<E> {
    /// The elements.
    fn as_dst(&mut self) -> &mut [E];
}

impl<E> DslSource<E> for [E] {
    #[inline(always)]
    fn as_src(&self) -> &[E] {
        self
    }
}
impl<E, const N: usize> DslSource<E> for [E; N] {
    #[inline(always)]
    fn as_src(&self) -> &[E] {
        self
    }
}
impl<E> DslSource<E> for Vec<E> {
    #[inline(always)]
    fn as_src(&self) -> &[E] {
        self
    }
}
impl<E, T: DslSource<E> + ?Sized> DslSource<E> for &T {
    #[inline(always)]
    fn as_src(&self) -> &[E] {
        (**self).as_src()
    }
}
impl<E, T: DslSource<E> + ?Sized> DslSource<E> for &mut T {
    #[inline(always)]
    fn as_src(&self) -> &[E] {
        (**self).as_src()
    }
}
impl<E> DslDest<E> for [E] {
    #[inline(always)]
    fn as_dst(&mut self) -> &mut [E] {
        self
    }
}
impl<E, const N: usize> DslDest<E> for [E; N] {
    #[inline(always)]
    fn as_dst(&mut self) -> &mut [E] {
        self
    }
}
impl<E> DslDest<E> for Vec<E> {
    #[inline(always)]
    fn as_dst(&mut self) -> &mut [E] {
        self
    }
}
impl<E, T: DslDest<E> + ?Sized> DslDest<E> for &mut T {
    #[inline(always)]
    fn as_dst(&mut self) -> &mut [E] {
        (**self).as_dst()
    }
}

/// The source of a put to `target` as a slice. The element type is taken from the target, so a
/// source of another element type is reported as exactly that.
#[inline(always)]
pub fn src_for<'a, E: Element, T: SymmetricArray<E> + ?Sized, S: DslSource<E> + ?Sized>(
    _target: &T,
    s: &'a S,
) -> &'a [E] {
    s.as_src()
}

/// The destination of a get from `target` as a slice (element type from the target).
#[inline(always)]
pub fn dst_for<'a, E: Element, T: SymmetricArray<E> + ?Sized, D: DslDest<E> + ?Sized>(
    _target: &T,
    d: &'a mut D,
) -> &'a mut [E] {
    d.as_dst()
}

/// Local buffers whose length is either `C` or not fixed by their type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not have the {C} elements that the symmetric side selects",
    label = "a fixed-size buffer of another length"
)]
pub trait FixedLen<const C: usize> {}
impl<E, const C: usize> FixedLen<C> for [E; C] {}
impl<E, const C: usize> FixedLen<C> for [E] {}
impl<E, const C: usize> FixedLen<C> for Vec<E> {}
impl<const C: usize, T: FixedLen<C> + ?Sized> FixedLen<C> for &T {}
impl<const C: usize, T: FixedLen<C> + ?Sized> FixedLen<C> for &mut T {}

/// Compile-time check that a fixed-size local buffer has `C` elements; free at run time.
#[inline(always)]
pub fn check_count<const C: usize, T: FixedLen<C> + ?Sized>(_: &T) {}

// The compile-time bounds check of constant indices and ranges. The expansion wraps the target
// in a `Probe` and calls `const_len()`: method resolution picks the inherent method for a
// `#[symmetric]` static array, which yields `StaticLen<N>`, and otherwise derefs to
// `RunTimeProbe`, which yields `RunTimeLen`. No trait bound is involved, so any target works (and
// one that is not symmetric gets its error elsewhere, once). The expansion then evaluates
// `check_bounds(L::LEN, end, message)` in a `const` block of a function generic over the marker
// `L`, when that function is compiled.

/// A `shmem!` target, wrapped to find out its length at compile time.
pub struct Probe<'a, T: ?Sized>(pub &'a T);

/// The length of a `#[symmetric]` static array, in its type.
pub struct StaticLen<const N: usize>;

/// A length known only at run time (heap arrays), or not known to the macro (generic targets).
pub struct RunTimeLen;

/// The length a marker stands for; `usize::MAX` for a run-time length.
pub trait ConstLen {
    /// The length.
    const LEN: usize;
}

impl<const N: usize> ConstLen for StaticLen<N> {
    const LEN: usize = N;
}

impl ConstLen for RunTimeLen {
    const LEN: usize = usize::MAX;
}

impl<E, const N: usize> Probe<'_, Symmetric<[E; N]>> {
    /// A static array's length.
    #[inline(always)]
    pub fn const_len(&self) -> StaticLen<N> {
        StaticLen
    }
}

/// What every other `Probe` derefs to.
pub struct RunTimeProbe;

impl RunTimeProbe {
    /// No length known at compile time.
    #[inline(always)]
    pub fn const_len(&self) -> RunTimeLen {
        RunTimeLen
    }
}

impl<T: ?Sized> std::ops::Deref for Probe<'_, T> {
    type Target = RunTimeProbe;
    #[inline(always)]
    fn deref(&self) -> &RunTimeProbe {
        &RunTimeProbe
    }
}

/// Compile-time bounds check: panics (a compile error, in a `const` block) when a selection that
/// needs `end` elements does not fit in `len`, with `message` and the length.
#[track_caller]
pub const fn check_bounds(len: usize, end: usize, message: &str) {
    if len == usize::MAX || end <= len {
        return;
    }
    // Const panics format a `&str` only, so the message is assembled here.
    let mut buf = [0u8; 512];
    let mut n = push(&mut buf, 0, message.as_bytes());
    n = push(&mut buf, n, b", which has ");
    n = push_decimal(&mut buf, n, len);
    n = push(
        &mut buf,
        n,
        if len == 1 { b" element" } else { b" elements" },
    );
    match core::str::from_utf8(buf.split_at(n).0) {
        Ok(full) => panic!("{}", full),
        // Cut inside a character (a very long target name): the message without the length.
        Err(_) => panic!("{}", message),
    }
}

/// Appends `bytes` at `n` as far as they fit; the new end.
const fn push(buf: &mut [u8], mut n: usize, bytes: &[u8]) -> usize {
    let mut i = 0;
    while i < bytes.len() && n < buf.len() {
        buf[n] = bytes[i];
        n += 1;
        i += 1;
    }
    n
}

/// Appends `v` in decimal at `n`; the new end.
const fn push_decimal(buf: &mut [u8], n: usize, mut v: usize) -> usize {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    push(buf, n, digits.split_at(start).1)
}

/// Whole-object access `NAME[pe]` to a `#[symmetric]` static.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `#[symmetric]` static, so it cannot be addressed as `NAME[pe]`",
    label = "not a symmetric static",
    note = "`NAME[pe]` addresses a whole `#[symmetric]` static on PE `pe`; heap arrays from \
            `World::alloc` take an index or range: `NAME[pe, i]`, `NAME[pe, a..b]`"
)]
pub trait DslScalar {
    /// The static's type.
    type Value: Element;
    /// The static on PE `pe`.
    fn remote(&self, pe: usize) -> Remote<'_, Self::Value>;
}

impl<T: Element> DslScalar for Symmetric<T> {
    type Value = T;
    #[inline(always)]
    #[track_caller]
    fn remote(&self, pe: usize) -> Remote<'_, T> {
        let tp = transport();
        let peer = tp.peer(pe);
        Remote::new(tp, peer, self.heap_offset())
    }
}

/// `NAME[pe]` read. (The value type is a separate parameter so that a target that is not a
/// static gives one error, not a second one about `S::Value`.)
#[inline(always)]
#[track_caller]
pub fn scalar_get<S: DslScalar<Value = V> + ?Sized, V: Element>(s: &S, pe: usize) -> V {
    s.remote(pe).get()
}

/// `NAME[pe] = value`.
#[inline(always)]
#[track_caller]
pub fn scalar_put<S: DslScalar<Value = V> + ?Sized, V: Element>(s: &S, pe: usize, value: V) {
    s.remote(pe).put(value)
}

/// `NAME[pe]` as an atomic target.
#[inline(always)]
#[track_caller]
pub fn scalar_at<S: DslScalar + ?Sized>(s: &S, pe: usize) -> Remote<'_, S::Value> {
    s.remote(pe)
}

// The atomic forms, written out (not generated) so that a type error names the operation plainly.

/// `NAME[pe, i].fetch()`.
#[inline(always)]
pub fn fetch<E: AmoExtended>(r: Remote<'_, E>) -> E {
    r.fetch()
}
/// `NAME[pe, i].set(v)`.
#[inline(always)]
pub fn set<E: AmoExtended>(r: Remote<'_, E>, v: E) {
    r.set(v)
}
/// `NAME[pe, i].swap(v)`.
#[inline(always)]
pub fn swap<E: AmoExtended>(r: Remote<'_, E>, v: E) -> E {
    r.swap(v)
}
/// `NAME[pe, i].compare_swap(cond, v)`.
#[inline(always)]
pub fn compare_swap<E: AmoStandard>(r: Remote<'_, E>, cond: E, v: E) -> E {
    r.compare_swap(cond, v)
}
/// `NAME[pe, i].fetch_add(v)`.
#[inline(always)]
pub fn fetch_add<E: AmoStandard>(r: Remote<'_, E>, v: E) -> E {
    r.fetch_add(v)
}
/// `NAME[pe, i] += v`.
#[inline(always)]
pub fn add<E: AmoStandard>(r: Remote<'_, E>, v: E) {
    r.add(v)
}
/// `NAME[pe, i] -= v`.
#[inline(always)]
pub fn sub<E: AmoStandard>(r: Remote<'_, E>, v: E) {
    r.sub(v)
}
/// `NAME[pe, i].fetch_inc()`.
#[inline(always)]
pub fn fetch_inc<E: AmoStandard>(r: Remote<'_, E>) -> E {
    r.fetch_inc()
}
/// `NAME[pe, i].inc()`.
#[inline(always)]
pub fn inc<E: AmoStandard>(r: Remote<'_, E>) {
    r.inc()
}
/// `NAME[pe, i].fetch_and(v)`.
#[inline(always)]
pub fn fetch_and<E: AmoBitwise>(r: Remote<'_, E>, v: E) -> E {
    r.fetch_and(v)
}
/// `NAME[pe, i] &= v`.
#[inline(always)]
pub fn and<E: AmoBitwise>(r: Remote<'_, E>, v: E) {
    r.and(v)
}
/// `NAME[pe, i].fetch_or(v)`.
#[inline(always)]
pub fn fetch_or<E: AmoBitwise>(r: Remote<'_, E>, v: E) -> E {
    r.fetch_or(v)
}
/// `NAME[pe, i] |= v`.
#[inline(always)]
pub fn or<E: AmoBitwise>(r: Remote<'_, E>, v: E) {
    r.or(v)
}
/// `NAME[pe, i].fetch_xor(v)`.
#[inline(always)]
pub fn fetch_xor<E: AmoBitwise>(r: Remote<'_, E>, v: E) -> E {
    r.fetch_xor(v)
}
/// `NAME[pe, i] ^= v`.
#[inline(always)]
pub fn xor<E: AmoBitwise>(r: Remote<'_, E>, v: E) {
    r.xor(v)
}

/// A `#[symmetric]` static `u64` used as a signal word by `=> SIG = v` / `=> SIG += v`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a signal: signals are `#[symmetric]` statics of type `u64` \
               (or `SIGS[i]`, an element of a symmetric `u64` array)",
    label = "not a u64 signal word"
)]
pub trait DslSignal {
    /// The signal word.
    fn signal_word(&self) -> Signal<'_>;
}

impl DslSignal for Symmetric<u64> {
    #[inline(always)]
    #[track_caller]
    fn signal_word(&self) -> Signal<'_> {
        self.signal()
    }
}

/// The signal word of `=> SIG ...`.
#[inline(always)]
#[track_caller]
pub fn signal_of<S: DslSignal + ?Sized>(s: &S) -> Signal<'_> {
    s.signal_word()
}

/// `team t: ... [pe, ...]`: the world PE of team PE `pe`.
#[inline(always)]
#[track_caller]
pub fn team_pe(team: &Team<'_>, pe: usize) -> usize {
    team.world_pe(pe)
}
