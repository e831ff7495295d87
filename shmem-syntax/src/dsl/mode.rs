//! The one place where blocking, `nbi`, `team` and `ctx` statements differ.
//!
//! Every statement becomes one call of the runtime ([`Op`]). This module decides, for each mode,
//! whether that call exists ([`refusal`]) and how it is written ([`call`]): on the target
//! (`SymmetricArray::put(&A, ...)`), on the non-blocking scope (`s.put(&A, ...)`) or on the
//! context (`c.put(&A, ...)`), with PE numbers translated from team numbering under `team t:`.
//! Nothing else in the macro looks at the mode.

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::{Expr, Ident};

use super::ast::{Kind, Mode, Sel, Stmt};

/// The path of the expansion's helpers (`shmem_core::__private::dsl`), spanned where an error
/// about them should point.
pub(crate) fn sm(span: Span) -> TokenStream {
    quote_spanned!(span=> ::shmem_core::__private::dsl)
}

/// The runtime call a statement makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// `STATIC[pe] = v`: a whole `#[symmetric]` static.
    ScalarPut,
    /// `x = STATIC[pe]`, `STATIC[pe]`.
    ScalarGet,
    /// An atomic on a whole static.
    ScalarAt,
    /// `shmem_p`: one element.
    P,
    /// `shmem_g`: one element.
    G,
    /// An atomic on one element.
    At,
    /// `shmem_put`: a contiguous range.
    Put,
    /// `shmem_get`: a contiguous range.
    Get,
    /// `shmem_iput`: strided on either side.
    Iput,
    /// `shmem_iget`: strided on either side.
    Iget,
    /// `shmem_put_signal`.
    PutSignal,
}

impl Op {
    /// The operation of a statement, from its form and selection. `None` for the combinations
    /// that have none (an atomic on a range, ...), which `check` reports.
    pub(crate) fn of(kind: &Kind) -> Option<Op> {
        let (r, local) = match kind {
            Kind::Put { dst: r, src: l } | Kind::Get { src: r, dst: l } => (r, Some(l)),
            Kind::Read { src: r } | Kind::Update { dst: r, .. } | Kind::Method { dst: r, .. } => {
                (r, None)
            }
            Kind::PutSignal { dst, src, .. } => {
                let contiguous = matches!(dst.sel, Sel::Range { stride: None, .. });
                return (contiguous && src.strided.is_none()).then_some(Op::PutSignal);
            }
        };
        let local_stride = local.is_some_and(|l| l.strided.is_some());
        let put = matches!(kind, Kind::Put { .. });
        let atomic = matches!(kind, Kind::Update { .. } | Kind::Method { .. });
        match &r.sel {
            // A strided local buffer needs a range on the symmetric side.
            Sel::Whole | Sel::Index(_) if local_stride => None,
            Sel::Whole if atomic => Some(Op::ScalarAt),
            Sel::Whole if put => Some(Op::ScalarPut),
            Sel::Whole => Some(Op::ScalarGet),
            Sel::Index(_) if atomic => Some(Op::At),
            Sel::Index(_) if put => Some(Op::P),
            Sel::Index(_) => Some(Op::G),
            // Atomics act on one element; reading a range needs a destination.
            Sel::Range { .. } if atomic || local.is_none() => None,
            Sel::Range { stride, .. } => Some(match (put, stride.is_some() || local_stride) {
                (true, false) => Op::Put,
                (true, true) => Op::Iput,
                (false, false) => Op::Get,
                (false, true) => Op::Iget,
            }),
        }
    }

    /// The name of the runtime method (or whole-static helper).
    fn method(self) -> &'static str {
        match self {
            Op::ScalarPut => "scalar_put",
            Op::ScalarGet => "scalar_get",
            Op::ScalarAt => "scalar_at",
            Op::P => "p",
            Op::G => "g",
            Op::At => "at",
            Op::Put => "put",
            Op::Get => "get",
            Op::Iput => "iput",
            Op::Iget => "iget",
            Op::PutSignal => "put_signal",
        }
    }
}

/// Why `stmt`'s mode has no `op`, at the tokens to blame; `None` when it has.
pub(crate) fn refusal(stmt: &Stmt, op: Op) -> Option<syn::Error> {
    match &stmt.mode {
        Mode::Blocking | Mode::Team(_) => None,
        Mode::Nbi(_) => {
            let (span, message) = match (&stmt.kind, op) {
                (_, Op::Put | Op::Get) => return None,
                (Kind::Put { src: local, .. } | Kind::Get { dst: local, .. }, _)
                    if local.strided.is_some() =>
                {
                    (
                        local.span,
                        "the non-blocking form has no strided local side: use a contiguous buffer",
                    )
                }
                (Kind::Put { dst, .. }, _) => (
                    dst.span,
                    "the non-blocking form moves contiguous ranges: write `nbi s: TARGET[pe, a..b] = buf`",
                ),
                (Kind::Get { src, .. }, _) => (
                    src.span,
                    "the non-blocking form moves contiguous ranges: write `nbi s: buf = TARGET[pe, a..b]`",
                ),
                (Kind::Update { op_span, .. }, _) => (
                    *op_span,
                    "atomic updates are not part of the non-blocking form",
                ),
                (Kind::Read { .. } | Kind::Method { .. }, _) => (
                    stmt.first,
                    "the non-blocking form needs a transfer: `nbi s: TARGET[pe, a..b] = buf` or `nbi s: buf = TARGET[pe, a..b]`",
                ),
                (Kind::PutSignal { arrow, .. }, _) => (
                    *arrow,
                    "put-with-signal is blocking here; drop the `nbi s:` prefix",
                ),
            };
            Some(syn::Error::new(span, message))
        }
        Mode::Ctx(ctx) => {
            let what = match op {
                Op::P | Op::G | Op::At | Op::Put | Op::Get => return None,
                Op::ScalarPut | Op::ScalarGet => "a whole static `NAME[pe]`",
                Op::ScalarAt => "an atomic on a whole static `NAME[pe]`",
                Op::Iput => "a strided put",
                Op::Iget => "a strided get",
                Op::PutSignal => "a put-with-signal",
            };
            Some(syn::Error::new(
                ctx.span(),
                format!(
                    "{what} is not available on a context: contexts offer puts and gets of ranges, \
                     single elements and atomics"
                ),
            ))
        }
    }
}

/// The call of `op` on `target` (an expression of type `&T`) for PE `pe`, with the operation's
/// other arguments, written for the statement's mode. `span` is where errors about the call
/// itself point.
pub(crate) fn call(
    mode: &Mode,
    op: Op,
    span: Span,
    target: &TokenStream,
    pe: &Expr,
    args: &[TokenStream],
) -> TokenStream {
    let pe = pe_number(mode, pe);
    let name = Ident::new(op.method(), span);
    let function = match (mode, op) {
        // Whole statics have no method of the runtime: a helper of the expansion reaches them.
        (_, Op::ScalarPut | Op::ScalarGet | Op::ScalarAt) => {
            let sm = sm(span);
            quote_spanned!(span=> #sm::#name)
        }
        (Mode::Nbi(scope), _) => quote_spanned!(span=> (#scope).#name),
        (Mode::Ctx(ctx), _) => quote_spanned!(span=> (#ctx).#name),
        (Mode::Blocking | Mode::Team(_), _) => {
            quote_spanned!(span=> ::shmem_core::SymmetricArray::#name)
        }
    };
    quote_spanned!(span=> #function(#target, #pe #(, #args)*))
}

/// The PE number as a world PE `usize`: converted from any integer type, and translated from
/// team numbering under `team t:`.
fn pe_number(mode: &Mode, pe: &Expr) -> TokenStream {
    let span = pe.span();
    let sm = sm(span);
    match mode {
        Mode::Team(team) => quote_spanned!(span=> #sm::team_pe(&(#team), #sm::pe(#pe))),
        _ => quote_spanned!(span=> #sm::pe(#pe)),
    }
}
