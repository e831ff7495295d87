//! Code generation for checked `shmem!` statements.
//!
//! Each statement becomes a direct call of the typed runtime (`mode::call`), on the user's own
//! expressions, wrapped in `#[inline(always)]` helpers of `shmem_core::__private::dsl` that
//! carry the type checks with messages that read like advice. The helpers' paths are spanned at
//! the user's tokens so that those messages point there.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, ExprRange, Ident, RangeLimits};

use super::ast::{Kind, Local, Sel, SignalWord, Stmt, SymRef};
use super::consts::{const_count, const_end};
use super::mode::{Op, call, sm};
use super::tokens::AssignOp;

/// The statements, in one block whose value is the last statement's.
pub(crate) fn expand(stmts: &[Stmt]) -> TokenStream {
    let mut code: Vec<TokenStream> = stmts.iter().map(expand_stmt).collect();
    let last = code.pop();
    quote!({ #(#code;)* #last })
}

fn expand_stmt(stmt: &Stmt) -> TokenStream {
    let op = Op::of(&stmt.kind).expect("checked: every statement has an operation");
    match &stmt.kind {
        Kind::Put { dst, src } => transfer(stmt, op, dst, src, Dir::Put, &[]),
        Kind::Get { dst, src } => transfer(stmt, op, src, dst, Dir::Get, &[]),
        Kind::Read { src } => {
            let t = target_ref(src);
            match &src.sel {
                Sel::Index(i) => {
                    let bounds = bounds_check(src);
                    let c = call(
                        &stmt.mode,
                        op,
                        Span::call_site(),
                        &t,
                        &src.pe,
                        &[index_of(i)],
                    );
                    quote!({ #bounds #c })
                }
                _ => call(&stmt.mode, op, src.span, &t, &src.pe, &[]),
            }
        }
        Kind::Update {
            dst,
            op: update,
            op_span,
            value,
        } => {
            let name = match update {
                AssignOp::Add => "add",
                AssignOp::Sub => "sub",
                AssignOp::And => "and",
                AssignOp::Or => "or",
                AssignOp::Xor => "xor",
                AssignOp::Set => unreachable!("parsed as a transfer"),
            };
            let f = Ident::new(name, *op_span);
            atomic(stmt, op, dst, &f, std::slice::from_ref(&value.tokens))
        }
        Kind::Method {
            dst, name, args, ..
        } => {
            let args: Vec<TokenStream> = args.iter().map(ToTokens::to_token_stream).collect();
            atomic(stmt, op, dst, name, &args)
        }
        Kind::PutSignal {
            dst, src, signal, ..
        } => {
            let sspan = signal.span;
            let sm = sm(sspan);
            let word = match &signal.word {
                SignalWord::Element { array, index } => quote_spanned!(sspan=>
                    ::shmem_core::SignalArray::signal(&(#array), #sm::index(#index))),
                SignalWord::Scalar(word) => quote_spanned!(sspan=> #sm::signal_of(&(#word))),
                SignalWord::WithPe(_) => unreachable!("checked: a signal has no PE"),
            };
            let (v, vspan) = (&signal.value.tokens, signal.value.span);
            let update = match signal.op {
                AssignOp::Set => quote_spanned!(vspan=> ::shmem_core::SignalOp::Set(#v)),
                AssignOp::Add => quote_spanned!(vspan=> ::shmem_core::SignalOp::Add(#v)),
                _ => unreachable!("checked: signals are set or added to"),
            };
            transfer(stmt, op, dst, src, Dir::Put, &[word, update])
        }
    }
}

/// Which way a transfer moves the data.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    /// From the local side to the symmetric one.
    Put,
    /// From the symmetric side to the local one.
    Get,
}

/// A put or get between the symmetric reference `r` and the local side `local`; `extra` are the
/// arguments after the source (the signal of a put-with-signal).
fn transfer(
    stmt: &Stmt,
    op: Op,
    r: &SymRef,
    local: &Local,
    dir: Dir,
    extra: &[TokenStream],
) -> TokenStream {
    let mode = &stmt.mode;
    let t = target_ref(r);
    let (place, lspan) = (&local.tokens, local.span);
    let bounds = bounds_check(r);
    let range = match &r.sel {
        // A whole static: a helper of the expansion, without bounds to check.
        Sel::Whole => {
            return match dir {
                Dir::Put => call(mode, op, r.span, &t, &r.pe, std::slice::from_ref(place)),
                Dir::Get => {
                    let c = call(mode, op, r.span, &t, &r.pe, &[]);
                    quote_spanned!(r.span=> #place = #c)
                }
            };
        }
        // One element: `p(.., i, value)`, `place = g(.., i)`.
        Sel::Index(i) => {
            return match dir {
                Dir::Put => {
                    let args = [index_of(i), place.clone()];
                    let c = call(mode, op, Span::call_site(), &t, &r.pe, &args);
                    quote!({ #bounds #c })
                }
                Dir::Get => {
                    let c = call(mode, op, Span::call_site(), &t, &r.pe, &[index_of(i)]);
                    quote!({ #bounds #place = #c })
                }
            };
        }
        Sel::Range { range, stride } => (range_usize(range), stride.as_ref()),
    };
    let (range, stride) = range;
    // The element type comes from the target, so a local side of the wrong type is reported
    // as such.
    let sm = sm(lspan);
    let convert = match dir {
        Dir::Put => quote_spanned!(lspan=> #sm::src_for),
        Dir::Get => quote_spanned!(lspan=> #sm::dst_for),
    };
    if let Some(strided) = &local.strided {
        // `T[pe, a..b(;s)] = buf[c..d;t]` and back: strided on the local side too.
        let (buf, lrange) = (&strided.buf, range_usize(&strided.range));
        let slice = match dir {
            Dir::Put => quote_spanned!(lspan=> &(#buf)[#lrange]),
            Dir::Get => quote_spanned!(lspan=> &mut (#buf)[#lrange]),
        };
        let conv = quote_spanned!(lspan=> #convert(#t, #slice));
        let args = [range, stride_of(stride), conv, index_of(&strided.stride)];
        let c = call(mode, op, Span::call_site(), &t, &r.pe, &args);
        return quote!({ #bounds #c });
    }
    // The local buffer is borrowed once, into a local of the expansion; a non-blocking put
    // borrows the user's buffer itself, which lives for the whole scope, not a temporary
    // reference to it.
    let (tmp, borrow, buffer) = match dir {
        Dir::Put => {
            let tmp = local_ident("__shmem_src", lspan);
            (tmp.clone(), borrow_of(local), tmp.to_token_stream())
        }
        Dir::Get => {
            let tmp = local_ident("__shmem_dst", lspan);
            let borrow = quote_spanned!(lspan=> &mut (#place));
            let buffer = quote_spanned!(lspan=> &*#tmp);
            (tmp, borrow, buffer)
        }
    };
    let count = count_check(r, &buffer, lspan);
    let conv = quote_spanned!(lspan=> #convert(#t, #tmp));
    let mut args = vec![range];
    if op == Op::Iput || op == Op::Iget {
        args.push(stride_of(stride));
    }
    args.push(conv);
    if op == Op::Iput || op == Op::Iget {
        args.push(quote!(1));
    }
    args.extend_from_slice(extra);
    let c = call(mode, op, Span::call_site(), &t, &r.pe, &args);
    quote!({ #bounds let #tmp = #borrow; #count #c })
}

/// `f(remote, args...)`: an atomic, with `f` a helper of the expansion (so that an element type
/// without that atomic is reported in the words of the operation) and `remote` the element.
fn atomic(stmt: &Stmt, op: Op, r: &SymRef, f: &Ident, args: &[TokenStream]) -> TokenStream {
    let span = f.span();
    let t = target_ref(r);
    let remote = match &r.sel {
        Sel::Index(i) => call(&stmt.mode, op, span, &t, &r.pe, &[index_of(i)]),
        _ => call(&stmt.mode, op, span, &t, &r.pe, &[]),
    };
    let sm = sm(span);
    let bounds = bounds_check(r);
    let call = quote_spanned!(span=> #sm::#f(#remote #(, #args)*));
    quote!({ #bounds #call })
}

/// `&(TARGET)`.
fn target_ref(r: &SymRef) -> TokenStream {
    let t = &r.target;
    quote_spanned!(r.target_span=> &(#t))
}

/// A local of the expansion, placed (for diagnostics) at the user's expression.
fn local_ident(name: &str, at: Span) -> Ident {
    Ident::new(name, Span::call_site().located_at(at))
}

/// `&(value)`, or the value itself when it already is a reference expression `&...`.
fn borrow_of(side: &Local) -> TokenStream {
    let value = &side.tokens;
    if side.is_ref {
        value.clone()
    } else {
        quote_spanned!(side.span=> &(#value))
    }
}

/// An index expression converted to `usize`, spanned at the user's expression.
fn index_of(e: &Expr) -> TokenStream {
    let sm = sm(e.span());
    quote_spanned!(e.span()=> #sm::index(#e))
}

/// The symmetric side's stride, or 1.
fn stride_of(stride: Option<&Expr>) -> TokenStream {
    match stride {
        Some(s) => index_of(s),
        None => quote!(1),
    }
}

/// A range with every bound converted to `usize` (each conversion at its bound, for errors).
fn range_usize(r: &ExprRange) -> TokenStream {
    let start = r.start.as_deref().map(index_of);
    let end = r.end.as_deref().map(index_of);
    match r.limits {
        RangeLimits::HalfOpen(_) => quote!(#start..#end),
        RangeLimits::Closed(_) => quote!(#start..=#end),
    }
}

/// Compile-time check that a fixed-size local buffer has as many elements as a constant range
/// selects; nothing when the count is not a constant.
fn count_check(r: &SymRef, buffer: &TokenStream, span: Span) -> TokenStream {
    let sm = sm(span);
    match const_count(&r.sel).and_then(|c| usize::try_from(c).ok()) {
        Some(c) => quote_spanned!(span=> #sm::check_count::<#c, _>(#buffer);),
        None => TokenStream::new(),
    }
}

/// Compile-time bounds check of a constant index or range against the length of a `#[symmetric]`
/// static array; nothing when the selection is not a constant.
///
/// Whether the target is a static array, and its length, are only known from its type, which a
/// macro does not see. So the check is a `const` block in a generic function of the expansion,
/// evaluated when that function is instantiated for the target's length marker:
/// `StaticLen<N>` for a `#[symmetric]` static array (whatever its name), `RunTimeLen` for
/// anything else (heap arrays, whose length is known at run time and checked then). The marker
/// comes from method resolution on `Probe`, which needs no trait bound, so a target that is not
/// symmetric gets its one error from the call itself, not a second one from here.
///
/// The check is post-monomorphization: it fails `cargo build` (and `cargo test`, `cargo run`),
/// not `cargo check`, and never in a function that is not compiled. The run-time check of every
/// index still applies.
fn bounds_check(r: &SymRef) -> TokenStream {
    let Some(end) = const_end(&r.sel) else {
        return TokenStream::new();
    };
    let Ok(end_index) = usize::try_from(end.end) else {
        return TokenStream::new();
    };
    let message = format!(
        "shmem!: {} is outside the symmetric static `{}`",
        end.what, r.target
    );
    let span = end.span;
    let sm = sm(span);
    let t = &r.target;
    quote_spanned! {span=>
        {
            #[inline(always)]
            fn __shmem_bounds<L: #sm::ConstLen>(_: L) {
                const { #sm::check_bounds(L::LEN, #end_index, #message) }
            }
            __shmem_bounds(#sm::Probe(&(#t)).const_len());
        };
    }
}

#[cfg(test)]
mod tests {
    use crate::ctxt::Ctxt;
    use crate::dsl::{ast, check};

    fn expand(input: &str) -> String {
        let cx = Ctxt::new();
        let stmts = ast::parse(&cx, input.parse().unwrap());
        check::check(&cx, &stmts);
        cx.check().unwrap();
        super::expand(&stmts).to_string()
    }

    #[test]
    fn blocking_nbi_and_ctx_differ_only_in_the_receiver() {
        let blocking = expand("A[pe, 0..4] = src");
        assert!(
            blocking.contains(":: shmem_core :: SymmetricArray :: put (& (A) ,"),
            "{blocking}"
        );
        let nbi = expand("nbi s: A[pe, 0..4] = src");
        assert!(nbi.contains("(s) . put (& (A) ,"), "{nbi}");
        let ctx = expand("ctx c: A[pe, 0..4] = src");
        assert!(ctx.contains("(c) . put (& (A) ,"), "{ctx}");
        let strip = |s: &str, recv: &str| s.replace(recv, "RECV");
        assert_eq!(
            strip(&blocking, ":: shmem_core :: SymmetricArray :: put"),
            strip(&nbi, "(s) . put")
        );
        assert_eq!(strip(&nbi, "(s) . put"), strip(&ctx, "(c) . put"));
    }

    #[test]
    fn team_translates_the_pe() {
        let team = expand("team t: A[0, 1] = 2");
        assert!(team.contains("team_pe (& (t) ,"), "{team}");
        assert!(team.contains("SymmetricArray :: p"), "{team}");
    }

    #[test]
    fn constant_selections_get_a_bounds_check() {
        let e = expand("a[pe, 8] = 1.0");
        assert!(e.contains("check_bounds (L :: LEN , 9usize ,"), "{e}");
        assert!(
            e.contains("constant index 8 is outside the symmetric static `a`"),
            "{e}"
        );
        assert!(!expand("a[pe, i] = 1.0").contains("check_bounds"));
        assert!(expand("x = a[pe, 0..4]").contains("check_count :: < 4usize , _ >"));
    }

    #[test]
    fn several_statements_make_one_block() {
        let e = expand("H[pe, 0] = 10; H[pe, 1]");
        assert!(e.starts_with("{ {"), "{e}");
        assert_eq!(e.matches(";").count(), e.matches(";").count());
        assert!(e.trim_end().ends_with("} }"), "{e}");
    }
}
