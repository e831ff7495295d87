//! Checks of well-formed `shmem!` statements, before any code is generated: every mistake of
//! every statement is reported, each at its own tokens. What needs types (element types, which
//! targets are symmetric, atomics an element type has) is left to the compiler, through the
//! traits the expansion calls.

use syn::spanned::Spanned;

use super::ast::{Kind, Local, Sel, SignalWord, Stmt, SymRef};
use super::consts::{bad_stride, const_end};
use super::mode::{self, Op};
use super::tokens::AssignOp;
use crate::ctxt::Ctxt;

/// The atomic operations callable as `TARGET[pe, i].name(args)`, with their argument counts.
const METHODS: &[(&str, usize)] = &[
    ("fetch", 0),
    ("set", 1),
    ("swap", 1),
    ("compare_swap", 2),
    ("fetch_add", 1),
    ("add", 1),
    ("sub", 1),
    ("fetch_inc", 0),
    ("inc", 0),
    ("fetch_and", 1),
    ("and", 1),
    ("fetch_or", 1),
    ("or", 1),
    ("fetch_xor", 1),
    ("xor", 1),
];

/// Checks every statement, reporting to `cx`.
pub(crate) fn check(cx: &Ctxt, stmts: &[Stmt]) {
    for stmt in stmts {
        check_stmt(cx, stmt);
    }
}

fn check_stmt(cx: &Ctxt, stmt: &Stmt) {
    let (sym, local) = match &stmt.kind {
        Kind::Put { dst, src } => (dst, Some(src)),
        Kind::Get { dst, src } => (src, Some(dst)),
        Kind::Read { src } => (src, None),
        Kind::Update { dst, .. } => (dst, None),
        Kind::Method {
            dst,
            name,
            args,
            args_span,
        } => {
            check_method(cx, name, args.len(), *args_span);
            (dst, None)
        }
        Kind::PutSignal {
            dst, src, signal, ..
        } => {
            if !matches!(signal.op, AssignOp::Set | AssignOp::Add) {
                cx.error(
                    signal.op_span,
                    "a signal is set (`=`) or added to (`+=`): those are OpenSHMEM's signal operations",
                );
            }
            if let SignalWord::WithPe(span) = signal.word {
                cx.error(
                    span,
                    "the signal is updated on the PE of the put: write `SIGNAL` or `SIGNALS[index]`, without a PE",
                );
            }
            (dst, Some(src))
        }
    };
    check_selection(cx, sym);
    if let Some(local) = local {
        check_local(cx, local);
    }
    match Op::of(&stmt.kind) {
        Some(op) => {
            if let Some(e) = mode::refusal(stmt, op) {
                cx.syn_error(e);
            }
        }
        None => shape_error(cx, stmt),
    }
}

/// Literal strides and constant ranges of a symmetric reference.
fn check_selection(cx: &Ctxt, r: &SymRef) {
    if let Sel::Range {
        stride: Some(stride),
        ..
    } = &r.sel
        && let Some(why) = bad_stride(stride)
    {
        cx.error(stride.span(), why);
    }
    let Some(end) = const_end(&r.sel) else {
        return;
    };
    if let Some(start) = end.start
        && start > end.end
    {
        cx.error(
            end.span,
            format!("the range is reversed: {start} is past its end"),
        );
    } else if usize::try_from(end.end).is_err() {
        cx.error(end.span, "index too large");
    }
}

fn check_local(cx: &Ctxt, local: &Local) {
    if let Some(s) = &local.strided
        && let Some(why) = bad_stride(&s.stride)
    {
        cx.error(s.stride.span(), why);
    }
}

fn check_method(cx: &Ctxt, name: &syn::Ident, count: usize, args_span: proc_macro2::Span) {
    let method = name.to_string();
    let Some(&(_, arity)) = METHODS.iter().find(|(m, _)| *m == method) else {
        let all: Vec<&str> = METHODS.iter().map(|(m, _)| *m).collect();
        cx.error(
            name.span(),
            format!(
                "`{method}` is not an atomic operation; shmem! knows {}",
                all.join(", ")
            ),
        );
        return;
    };
    if count != arity {
        cx.error(
            args_span,
            format!(
                "`{method}` takes {arity} argument{}, found {count}",
                if arity == 1 { "" } else { "s" },
            ),
        );
    }
}

/// Why a statement has no operation (see `Op::of`).
fn shape_error(cx: &Ctxt, stmt: &Stmt) {
    match &stmt.kind {
        Kind::Put { src: local, .. } | Kind::Get { dst: local, .. } => cx.error(
            local.span,
            "a strided local buffer `buf[a..b;s]` needs a range on the symmetric side: `TARGET[pe, a..b]`",
        ),
        Kind::Read { src } => cx.error(
            range_span(src),
            "reading a range needs a destination: write `dst = TARGET[pe, a..b]`",
        ),
        Kind::Update { dst, .. } | Kind::Method { dst, .. } => cx.error(
            range_span(dst),
            "atomic operations act on one element: write `TARGET[pe, index]`, not a range",
        ),
        Kind::PutSignal { dst, src, .. } => {
            if matches!(dst.sel, Sel::Range { stride: None, .. }) {
                cx.error(
                    src.span,
                    "put-with-signal moves a contiguous local buffer: write `TARGET[pe, a..b] = src => ...`",
                );
            } else {
                cx.error(
                    dst.span,
                    "put-with-signal moves a contiguous range: write `TARGET[pe, a..b] = src => ...`",
                );
            }
        }
    }
}

fn range_span(r: &SymRef) -> proc_macro2::Span {
    match &r.sel {
        Sel::Range { range, .. } => range.span(),
        _ => r.span,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsl::ast;
    use proc_macro2::TokenStream;

    /// The messages of every error in `input`, parse errors included.
    fn errors(input: &str) -> Vec<String> {
        let cx = Ctxt::new();
        let stmts = ast::parse(&cx, input.parse::<TokenStream>().unwrap());
        check(&cx, &stmts);
        match cx.check() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    fn one_error(input: &str, text: &str) {
        let e = errors(input);
        assert!(
            e.len() == 1 && e[0].contains(text),
            "`{input}`: expected one error with `{text}`, got {e:?}"
        );
    }

    #[test]
    fn accepts_every_form() {
        for input in [
            "A[pe, 0..4] = [1.0, 2.0, 3.0, 4.0]",
            "A[pe, 4..12;2] = vec![5.0, 6.0]",
            "A[pe, 0..4] = column[0..7;2]",
            "wide[0..7;2] = A[pe, 0..4]",
            "A[pe, 15] = 9.5; x = A[pe, 15]; A[pe, 15]",
            "COUNT[pe] = 3; c = COUNT[pe]; COUNT[pe]",
            "HITS[pe, 0] += 5; COUNT[pe] |= 1; HITS[pe, 1].compare_swap(41, 50)",
            "A[pe, 0..4] = src => SIG += 1; A[pe, ..] = src => SIGS[i] = 2",
            "nbi s: heap[pe, 0..3] = src; nbi s: got = heap[pe, 0..3]",
            "team t: heap[last, 0] += 1; team t: A[0, 0..8;2] = src",
            "ctx c: heap[pe, 4..6] = src; ctx c: heap[0, 7] += 1; ctx c: x = heap[pe, 3]",
            "ctx c: heap[0, 6].fetch_add(2); ctx c: heap[me, 3]",
        ] {
            assert_eq!(errors(input), Vec::<String>::new(), "{input}");
        }
    }

    #[test]
    fn strides_and_constant_ranges() {
        one_error("A[pe, 0..8;0] = b", "the stride is 0");
        one_error("dst = A[pe, 0..8;-2]", "the stride is negative");
        one_error("A[pe, 0..4] = column[0..7;0]", "the stride is 0");
        one_error(
            "A[pe, 5..2] = src",
            "the range is reversed: 5 is past its end",
        );
        one_error(
            "A[pe, 340282366920938463463374607431768211455] = 1",
            "index too large",
        );
    }

    #[test]
    fn shapes() {
        one_error(
            "A[pe, 3] = column[0..7;2]",
            "needs a range on the symmetric side",
        );
        one_error(
            "column[0..7;2] = A[pe, 3]",
            "needs a range on the symmetric side",
        );
        one_error("A[pe, 0..2]", "reading a range needs a destination");
        one_error("HITS[pe, 0..2] += 1", "act on one element");
        one_error("HITS[pe, 0..2].fetch_inc()", "act on one element");
        one_error("DATA[0, 0..8;2] = b => R += 1", "moves a contiguous range");
        one_error(
            "DATA[0, 0..8] = b[0..16;2] => R += 1",
            "contiguous local buffer",
        );
        one_error("DATA[0, 0..4] = b => R -= 1", "a signal is set");
        one_error("DATA[0, 0..4] = b => F[0, 1] = 1", "without a PE");
        one_error(
            "HITS[pe, 0].frobnicate(1)",
            "`frobnicate` is not an atomic operation",
        );
        one_error("HITS[pe, 0].compare_swap(1)", "takes 2 arguments, found 1");
        one_error("HITS[pe, 0].fetch_add()", "takes 1 argument, found 0");
    }

    #[test]
    fn modes() {
        one_error("nbi s: A[pe, 3] = 1.0", "moves contiguous ranges");
        one_error("nbi s: A[pe, 0..8;2] = src", "moves contiguous ranges");
        one_error("nbi s: dst = S[pe]", "moves contiguous ranges");
        one_error(
            "nbi s: A[pe, 0..4] = column[0..7;2]",
            "no strided local side",
        );
        one_error("nbi s: HITS[pe, 0] += 1", "atomic updates are not part");
        one_error("nbi s: A[pe, 3]", "needs a transfer");
        one_error("nbi s: A[pe, 3].fetch()", "needs a transfer");
        one_error(
            "nbi s: A[pe, 0..4] = b => R += 1",
            "put-with-signal is blocking here",
        );
        one_error(
            "ctx c: COUNT[pe] = 1",
            "a whole static `NAME[pe]` is not available on a context",
        );
        one_error(
            "ctx c: COUNT[pe]",
            "a whole static `NAME[pe]` is not available",
        );
        one_error("ctx c: COUNT[pe] += 1", "an atomic on a whole static");
        one_error("ctx c: A[pe, 0..8;2] = b", "a strided put is not available");
        one_error("ctx c: b = A[pe, 0..8;2]", "a strided get is not available");
        one_error(
            "ctx c: A[pe, 0..4] = b[0..8;2]",
            "a strided put is not available",
        );
        one_error(
            "ctx c: A[pe, 0..4] = b => R += 1",
            "a put-with-signal is not available",
        );
    }

    #[test]
    fn every_statement_is_checked() {
        let e = errors("A[pe, 0..8;0] = b; nbi s: A[pe, 3] = 1.0; = x; HITS[pe, 0].nope()");
        assert_eq!(e.len(), 4, "{e:?}");
        assert!(
            e[0].contains("missing left-hand side"),
            "parse errors come first: {e:?}"
        );
    }
}
