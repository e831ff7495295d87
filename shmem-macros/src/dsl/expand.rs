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
use super::mode::{Op, call};
use super::tokens::AssignOp;

/// The statements, in one block whose value is the last statement's.
pub(crate) fn expand(stmts: &[Stmt]) -> TokenStream {
    let mut code: Vec<TokenStream> = stmts.iter().map(expand_stmt).collect();
    let last = code.pop();
    quote!({ #(#code;)* #last })
}

/// The path of the expansion's helpers, spanned where an error about them should point.
pub(crate) fn sm(span: Span) -> TokenStream {
    quote_spanned!(span=> ::shmem_core::__private::dsl)
}

fn expand_stmt(stmt: &Stmt) -> TokenStream {
    let op = Op::of(&stmt.kind).expect("checked: every statement has an operation");
    let mode = &stmt.mode;
    match &stmt.kind {
        Kind::Put { dst, src } => {
            let bounds = bounds_check(dst);
            let t = target_ref(dst);
            let vspan = src.span;
            let value = &src.tokens;
            match (op, &dst.sel) {
                (Op::ScalarPut, _) => {
                    call(mode, op, dst.span, &t, &dst.pe, std::slice::from_ref(value))
                }
                (Op::P, Sel::Index(i)) => {
                    let c = call(
                        mode,
                        op,
                        Span::call_site(),
                        &t,
                        &dst.pe,
                        &[index_of(i), value.clone()],
                    );
                    quote!({ #bounds #c })
                }
                (_, Sel::Range { range, stride }) => {
                    let range = range_usize(range);
                    let sm = sm(vspan);
                    if let Some(strided) = &src.strided {
                        // `T[pe, a..b(;s)] = buf[c..d;t]`: strided on the local side too.
                        let (buf, lrange) = (&strided.buf, range_usize(&strided.range));
                        let conv = quote_spanned!(vspan=> #sm::src_for(#t, &(#buf)[#lrange]));
                        let args = [
                            range,
                            stride_of(stride.as_ref()),
                            conv,
                            index_of(&strided.stride),
                        ];
                        let c = call(mode, op, Span::call_site(), &t, &dst.pe, &args);
                        return quote!({ #bounds #c });
                    }
                    // The element type comes from the target, so a source of the wrong type is
                    // reported as such.
                    let tmp = local("__shmem_src", vspan);
                    let count = count_check(dst, &tmp.to_token_stream(), vspan);
                    let conv = quote_spanned!(vspan=> #sm::src_for(#t, #tmp));
                    let args = match op {
                        Op::Iput => vec![range, stride_of(stride.as_ref()), conv, quote!(1)],
                        _ => vec![range, conv],
                    };
                    let c = call(mode, op, Span::call_site(), &t, &dst.pe, &args);
                    // A non-blocking put borrows the user's buffer itself, which lives for the
                    // whole scope, not a temporary reference to it.
                    let borrow = borrow_of(src);
                    quote!({ #bounds let #tmp = #borrow; #count #c })
                }
                _ => unreachable!("checked: {op:?} on this selection"),
            }
        }
        Kind::Get { dst, src } => {
            let bounds = bounds_check(src);
            let t = target_ref(src);
            let place = &dst.tokens;
            let pspan = dst.span;
            match (op, &src.sel) {
                (Op::ScalarGet, _) => {
                    let c = call(mode, op, src.span, &t, &src.pe, &[]);
                    quote_spanned!(src.span=> #place = #c)
                }
                (Op::G, Sel::Index(i)) => {
                    let c = call(mode, op, Span::call_site(), &t, &src.pe, &[index_of(i)]);
                    quote!({ #bounds #place = #c })
                }
                (_, Sel::Range { range, stride }) => {
                    let range = range_usize(range);
                    let sm = sm(pspan);
                    if let Some(strided) = &dst.strided {
                        // `buf[c..d;t] = T[pe, a..b(;s)]`: strided on the local side too.
                        let (buf, lrange) = (&strided.buf, range_usize(&strided.range));
                        let conv = quote_spanned!(pspan=> #sm::dst_for(#t, &mut (#buf)[#lrange]));
                        let args = [
                            range,
                            stride_of(stride.as_ref()),
                            conv,
                            index_of(&strided.stride),
                        ];
                        let c = call(mode, op, Span::call_site(), &t, &src.pe, &args);
                        return quote!({ #bounds #c });
                    }
                    let tmp = local("__shmem_dst", pspan);
                    let count = count_check(src, &quote_spanned!(pspan=> &*#tmp), pspan);
                    let conv = quote_spanned!(pspan=> #sm::dst_for(#t, #tmp));
                    let args = match op {
                        Op::Iget => vec![range, stride_of(stride.as_ref()), conv, quote!(1)],
                        _ => vec![range, conv],
                    };
                    let c = call(mode, op, Span::call_site(), &t, &src.pe, &args);
                    let borrow = quote_spanned!(pspan=> &mut (#place));
                    quote!({ #bounds let #tmp = #borrow; #count #c })
                }
                _ => unreachable!("checked: {op:?} on this selection"),
            }
        }
        Kind::Read { src } => {
            let t = target_ref(src);
            match &src.sel {
                Sel::Index(i) => {
                    let bounds = bounds_check(src);
                    let c = call(mode, op, Span::call_site(), &t, &src.pe, &[index_of(i)]);
                    quote!({ #bounds #c })
                }
                _ => call(mode, op, src.span, &t, &src.pe, &[]),
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
            atomic(
                stmt,
                dst,
                op,
                &Ident::new(name, *op_span),
                std::slice::from_ref(&value.tokens),
            )
        }
        Kind::Method {
            dst, name, args, ..
        } => {
            let args: Vec<TokenStream> = args.iter().map(ToTokens::to_token_stream).collect();
            atomic(stmt, dst, op, name, &args)
        }
        Kind::PutSignal {
            dst, src, signal, ..
        } => {
            let Sel::Range { range, .. } = &dst.sel else {
                unreachable!("checked: put-with-signal of a range")
            };
            let bounds = bounds_check(dst);
            let t = target_ref(dst);
            let sspan = signal.span;
            let ssm = sm(sspan);
            let word = match &signal.word {
                SignalWord::Element { array, index } => quote_spanned!(sspan=>
                    ::shmem_core::SignalArray::signal(&(#array), #ssm::index(#index))),
                SignalWord::Scalar(word) => quote_spanned!(sspan=> #ssm::signal_of(&(#word))),
                SignalWord::WithPe(_) => unreachable!("checked: a signal has no PE"),
            };
            let (v, vspan) = (&signal.value.tokens, signal.value.span);
            let update = match signal.op {
                AssignOp::Set => quote_spanned!(vspan=> ::shmem_core::SignalOp::Set(#v)),
                AssignOp::Add => quote_spanned!(vspan=> ::shmem_core::SignalOp::Add(#v)),
                _ => unreachable!("checked: signals are set or added to"),
            };
            let tmp = local("__shmem_src", src.span);
            let count = count_check(dst, &tmp.to_token_stream(), src.span);
            let vsm = sm(src.span);
            let conv = quote_spanned!(src.span=> #vsm::src_for(#t, #tmp));
            let args = [range_usize(range), conv, word, update];
            let c = call(mode, op, Span::call_site(), &t, &dst.pe, &args);
            let borrow = borrow_of(src);
            quote!({ #bounds let #tmp = #borrow; #count #c })
        }
    }
}

/// `f(remote, args...)`: an atomic, with `f` a helper of the expansion (so that an element type
/// without that atomic is reported in the words of the operation) and `remote` the element.
fn atomic(stmt: &Stmt, r: &SymRef, op: Op, f: &Ident, args: &[TokenStream]) -> TokenStream {
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
fn local(name: &str, at: Span) -> Ident {
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
