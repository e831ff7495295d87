//! `shmem!` input as a small statement tree, and its parser.
//!
//! A statement is split at its top-level assignment operator (or `=>`); each side is either a
//! *symmetric reference* `TARGET[pe, SEL]` / `STATIC[pe]` ([`SymRef`]) or a local Rust expression
//! ([`Local`]). The parser reports malformed syntax only; whether a well-formed statement makes
//! sense (a stride of 0, an atomic on a range, a strided transfer in the non-blocking form...) is
//! the business of `check`.

use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprRange, Ident, Token};

use super::tokens::{self, AssignOp, bracketed, has_top, span_of, stream};
use crate::ctxt::Ctxt;

/// One statement of a `shmem!` invocation.
pub(crate) struct Stmt {
    /// The `nbi s:`, `team t:` or `ctx c:` prefix, if any.
    pub mode: Mode,
    /// The statement's first token after the prefix.
    pub first: Span,
    /// What the statement does.
    pub kind: Kind,
}

/// How a statement's operations run. The differences between modes are all in `mode.rs`.
pub(crate) enum Mode {
    /// No prefix: blocking calls on the target.
    Blocking,
    /// `nbi s:`: non-blocking calls on the scope `s` from `world.nbi(|s| ...)`.
    Nbi(Expr),
    /// `team t:`: blocking calls, with PE numbers relative to team `t`.
    Team(Expr),
    /// `ctx c:`: calls through the communication context `c`.
    Ctx(Expr),
}

/// The forms of statement.
pub(crate) enum Kind {
    /// `TARGET[pe, SEL] = src`, `STATIC[pe] = value`.
    Put { dst: SymRef, src: Local },
    /// `dst = TARGET[pe, SEL]`, `x = STATIC[pe]`.
    Get { dst: Local, src: SymRef },
    /// `TARGET[pe, i]` or `STATIC[pe]` as a value.
    Read { src: SymRef },
    /// `TARGET[pe, i] += value` (and `-=`, `&=`, `|=`, `^=`).
    Update {
        dst: SymRef,
        op: AssignOp,
        op_span: Span,
        value: Local,
    },
    /// `TARGET[pe, i].name(args)`.
    Method {
        dst: SymRef,
        name: Ident,
        args: Vec<Expr>,
        args_span: Span,
    },
    /// `TARGET[pe, a..b] = src => SIGNAL op value`.
    PutSignal {
        dst: SymRef,
        src: Local,
        arrow: Span,
        signal: Box<Signal>,
    },
}

/// `TARGET[pe, SEL]` or `STATIC[pe]`.
pub(crate) struct SymRef {
    /// The tokens before the brackets.
    pub target: TokenStream,
    /// The first of those tokens.
    pub target_span: Span,
    /// The PE number.
    pub pe: Expr,
    /// What the brackets select after the PE number.
    pub sel: Sel,
    /// The whole reference.
    pub span: Span,
}

/// What a symmetric reference selects.
pub(crate) enum Sel {
    /// `NAME[pe]`: a whole `#[symmetric]` static.
    Whole,
    /// `NAME[pe, i]`.
    Index(Expr),
    /// `NAME[pe, a..b]` or `NAME[pe, a..b;s]`.
    Range {
        range: ExprRange,
        stride: Option<Expr>,
    },
}

/// A local side: any Rust expression, kept as written.
pub(crate) struct Local {
    pub tokens: TokenStream,
    pub span: Span,
    /// The expression is already a reference `&...` (not `&&...`).
    pub is_ref: bool,
    /// `buf[a..b;s]`: a strided selection of a local buffer.
    pub strided: Option<LocalStrided>,
}

/// `buf[a..b;s]`.
pub(crate) struct LocalStrided {
    pub buf: TokenStream,
    pub range: ExprRange,
    pub stride: Expr,
}

/// The signal update of a put-with-signal: `SIGNAL op value`.
pub(crate) struct Signal {
    pub word: SignalWord,
    pub span: Span,
    pub op: AssignOp,
    pub op_span: Span,
    pub value: Local,
}

/// The signal word updated after the put.
pub(crate) enum SignalWord {
    /// `SIGNAL`: a `#[symmetric]` static `u64`.
    Scalar(TokenStream),
    /// `SIGNALS[i]`: an element of a `SignalArray`.
    Element { array: TokenStream, index: Expr },
    /// `SIGNALS[pe, i]`: a PE, which the signal cannot have (it lives on the PE of the put).
    WithPe(Span),
}

/// Parses a `shmem!` invocation; malformed statements are reported to `cx` and left out.
pub(crate) fn parse(cx: &Ctxt, input: TokenStream) -> Vec<Stmt> {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    if tokens.is_empty() {
        cx.error(
            Span::call_site(),
            "empty shmem!: write a transfer such as `shmem!(A[pe, 0..n] = src)`",
        );
        return Vec::new();
    }
    let errors_before = cx.error_count();
    let stmts: Vec<Stmt> = tokens::split_top(&tokens, ';')
        .into_iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| cx.ok(parse_stmt(s)))
        .collect();
    if stmts.is_empty() && cx.error_count() == errors_before {
        cx.error(Span::call_site(), "shmem! has no statement");
    }
    stmts
}

/// One statement, with its optional mode prefix.
pub(crate) fn parse_stmt(tokens: &[TokenTree]) -> syn::Result<Stmt> {
    let (mode, body) = parse_mode(tokens)?;
    let Some(first) = body.first() else {
        return Err(syn::Error::new(
            span_of(tokens),
            "expected a statement after the prefix",
        ));
    };
    let first = first.span();
    let kind = parse_body(body)?;
    Ok(Stmt { mode, first, kind })
}

/// `nbi SCOPE:`, `team TEAM:` or `ctx CTX:` before a statement.
fn parse_mode(tokens: &[TokenTree]) -> syn::Result<(Mode, &[TokenTree])> {
    let keyword = match tokens.first() {
        Some(TokenTree::Ident(i)) if i == "nbi" || i == "team" || i == "ctx" => i.to_string(),
        _ => return Ok((Mode::Blocking, tokens)),
    };
    // `nbi[pe, 0]`, `team.x`: a target or expression that happens to have that name.
    if tokens
        .get(1)
        .is_none_or(|t| matches!(t, TokenTree::Group(_) | TokenTree::Punct(_)))
    {
        return Ok((Mode::Blocking, tokens));
    }
    // The scope, team or context expression runs up to the first lone `:` (not part of `::`).
    let Some(colon) = (1..tokens.len()).find(|&i| tokens::is_lone_colon(tokens, i)) else {
        let form = match keyword.as_str() {
            "nbi" => "`nbi SCOPE: statement`, with SCOPE the `NbiScope` from `world.nbi(|s| ...)`",
            "team" => "`team TEAM: statement`, with PE numbers relative to TEAM",
            _ => "`ctx CTX: statement`, with CTX a context from `world.ctx_create`",
        };
        return Err(syn::Error::new(
            tokens[0].span(),
            format!("expected {form}"),
        ));
    };
    let expr: Expr = syn::parse2(stream(&tokens[1..colon]))?;
    let mode = match keyword.as_str() {
        "nbi" => Mode::Nbi(expr),
        "team" => Mode::Team(expr),
        _ => Mode::Ctx(expr),
    };
    Ok((mode, &tokens[colon + 1..]))
}

fn parse_body(body: &[TokenTree]) -> syn::Result<Kind> {
    if let Some(arrow) = tokens::find_fat_arrow(body) {
        return parse_put_signal(&body[..arrow], &body[arrow + 2..], body[arrow].span());
    }
    let Some(assign) = tokens::find_assign(body)? else {
        return parse_expr_stmt(body);
    };
    let lhs = Side(&body[..assign.at]);
    let rhs = Side(&body[assign.at + assign.len..]);
    let op_span = body[assign.at].span();
    if lhs.0.is_empty() {
        return Err(syn::Error::new(
            op_span,
            "missing left-hand side before the assignment",
        ));
    }
    if rhs.0.is_empty() {
        return Err(syn::Error::new(
            op_span,
            "missing right-hand side after the assignment",
        ));
    }
    if assign.op != AssignOp::Set {
        if !(lhs.is_array_ref() || lhs.is_path_index()) {
            return Err(syn::Error::new(
                lhs.span(),
                "an atomic update needs a symmetric element on the left: `TARGET[pe, index] += value`",
            ));
        }
        if rhs.is_array_ref() {
            return Err(syn::Error::new(
                rhs.span(),
                "the right side of an atomic update is a local value",
            ));
        }
        return Ok(Kind::Update {
            dst: lhs.sym_ref()?,
            op: assign.op,
            op_span,
            value: rhs.plain_local(),
        });
    }
    // Which side is symmetric: `T[pe, ...]` certainly is; `NAME[x]` may be a whole static or a
    // local `v[i]`, so it decides only when the other side has no brackets of that shape.
    let put = match (lhs.is_array_ref(), rhs.is_array_ref()) {
        (true, true) => {
            return Err(syn::Error::new(
                rhs.span(),
                "both sides are symmetric: shmem! moves data between a symmetric object and a local \
                 buffer; get into a local buffer first, then put it",
            ));
        }
        (true, false) => true,
        (false, true) => false,
        (false, false) => match (lhs.is_path_index(), rhs.is_path_index()) {
            (true, true) => {
                return Err(syn::Error::new(
                    lhs.span().join(rhs.span()).unwrap_or(op_span),
                    "ambiguous: both sides look like `NAME[x]`; put the local side in parentheses, \
                     e.g. `(v[i]) = STATIC[pe]` or `STATIC[pe] = (v[i])`",
                ));
            }
            (true, false) => true,
            (false, true) => false,
            (false, false) => {
                return Err(syn::Error::new(
                    lhs.span(),
                    "no symmetric side: one side of `=` must be `TARGET[pe, index or range]` or `STATIC[pe]`",
                ));
            }
        },
    };
    Ok(if put {
        Kind::Put {
            dst: lhs.sym_ref()?,
            src: rhs.buffer()?,
        }
    } else {
        Kind::Get {
            dst: lhs.buffer()?,
            src: rhs.sym_ref()?,
        }
    })
}

/// A statement without assignment: a read `TARGET[pe, i]`, `STATIC[pe]`, or an atomic method
/// `TARGET[pe, i].fetch_add(v)`.
fn parse_expr_stmt(stmt: &[TokenTree]) -> syn::Result<Kind> {
    if let [
        target @ ..,
        TokenTree::Punct(dot),
        TokenTree::Ident(name),
        TokenTree::Group(args),
    ] = stmt
        && dot.as_char() == '.'
        && args.delimiter() == Delimiter::Parenthesis
        && bracketed(target).is_some()
    {
        let parsed = Punctuated::<Expr, Token![,]>::parse_terminated.parse2(args.stream())?;
        return Ok(Kind::Method {
            dst: Side(target).sym_ref()?,
            name: name.clone(),
            args: parsed.into_iter().collect(),
            args_span: args.span(),
        });
    }
    let side = Side(stmt);
    if !(side.is_array_ref() || side.is_path_index()) {
        return Err(syn::Error::new(
            side.span(),
            "expected a symmetric read `TARGET[pe, index]` or `STATIC[pe]`, a transfer `A = B`, or an \
             atomic update",
        ));
    }
    Ok(Kind::Read {
        src: side.sym_ref()?,
    })
}

/// `TARGET[pe, a..b] = src => SIG = v` / `=> SIG += v` / `=> SIGS[i] += v`.
fn parse_put_signal(put: &[TokenTree], signal: &[TokenTree], arrow: Span) -> syn::Result<Kind> {
    let Some(tokens::Assign {
        at,
        len: 1,
        op: AssignOp::Set,
    }) = tokens::find_assign(put)?
    else {
        return Err(syn::Error::new(
            arrow,
            "`=>` follows a put: write `TARGET[pe, a..b] = src => SIGNAL += value`",
        ));
    };
    let (lhs, rhs) = (Side(&put[..at]), Side(&put[at + 1..]));
    if !lhs.is_array_ref() || rhs.0.is_empty() || rhs.is_array_ref() {
        return Err(syn::Error::new(
            lhs.span(),
            "`=>` follows a put from a local buffer: write `TARGET[pe, a..b] = src => SIGNAL += value`",
        ));
    }
    let dst = lhs.sym_ref()?;
    let Some(assign) = tokens::find_assign(signal)? else {
        return Err(syn::Error::new(
            arrow,
            "expected the signal update after `=>`: `SIGNAL = value` or `SIGNAL += value`",
        ));
    };
    let word = Side(&signal[..assign.at]);
    let value = Side(&signal[assign.at + assign.len..]);
    let op_span = signal[assign.at].span();
    if word.0.is_empty() || value.0.is_empty() {
        return Err(syn::Error::new(
            op_span,
            "expected `SIGNAL = value` or `SIGNAL += value` after `=>`",
        ));
    }
    let parsed_word = match bracketed(word.0) {
        Some((_, g)) if has_top(g, ',') => SignalWord::WithPe(g.span()),
        Some((prefix, g)) => SignalWord::Element {
            array: stream(prefix),
            index: syn::parse2(g.stream())?,
        },
        None => SignalWord::Scalar(word.stream()),
    };
    Ok(Kind::PutSignal {
        dst,
        src: rhs.buffer()?,
        arrow,
        signal: Box::new(Signal {
            word: parsed_word,
            span: word.span(),
            op: assign.op,
            op_span,
            value: value.plain_local(),
        }),
    })
}

/// A side of a statement, as tokens.
#[derive(Clone, Copy)]
struct Side<'a>(&'a [TokenTree]);

impl Side<'_> {
    fn span(self) -> Span {
        span_of(self.0)
    }

    fn stream(self) -> TokenStream {
        stream(self.0)
    }

    /// Brackets with a top-level comma: certainly a symmetric array reference.
    fn is_array_ref(self) -> bool {
        bracketed(self.0).is_some_and(|(_, g)| has_top(g, ','))
    }

    /// `PATH[x]` without a comma: a whole static, or a local `v[i]`.
    fn is_path_index(self) -> bool {
        bracketed(self.0).is_some_and(|(prefix, g)| {
            !has_top(g, ',') && !has_top(g, ';') && syn::parse2::<syn::Path>(stream(prefix)).is_ok()
        })
    }

    /// The side as a symmetric reference.
    fn sym_ref(self) -> syn::Result<SymRef> {
        let Some((prefix, group)) = bracketed(self.0) else {
            return Err(syn::Error::new(
                self.span(),
                "expected a symmetric reference `TARGET[pe, ...]`",
            ));
        };
        let target = stream(prefix);
        let target_span = prefix[0].span();
        if syn::parse2::<Expr>(target.clone()).is_err() {
            return Err(syn::Error::new(
                target_span,
                "expected a symmetric object (a `#[symmetric]` static or a `SymArray`) before `[...]`",
            ));
        }
        let (pe, sel) = parse_brackets(group)?;
        Ok(SymRef {
            target,
            target_span,
            pe,
            sel,
            span: self.span(),
        })
    }

    /// The side as a local value (never strided).
    fn plain_local(self) -> Local {
        Local {
            tokens: self.stream(),
            span: self.span(),
            is_ref: tokens::starts_with_single_ref(self.0),
            strided: None,
        }
    }

    /// The side as a local buffer of a transfer, which may be strided: `buf[a..b;s]`.
    fn buffer(self) -> syn::Result<Local> {
        let mut local = self.plain_local();
        local.strided = self.local_strided()?;
        Ok(local)
    }

    fn local_strided(self) -> syn::Result<Option<LocalStrided>> {
        let Some((prefix, g)) = bracketed(self.0) else {
            return Ok(None);
        };
        if has_top(g, ',') || !has_top(g, ';') {
            return Ok(None);
        }
        let span = g.span();
        let parser = move |input: ParseStream| -> syn::Result<(ExprRange, Expr)> {
            let sel: Expr = input.parse()?;
            let Expr::Range(range) = sel else {
                return Err(syn::Error::new(
                    sel.span(),
                    "a strided local selection needs a range: `buf[a..b;stride]`",
                ));
            };
            input.parse::<Token![;]>()?;
            if input.is_empty() {
                return Err(syn::Error::new(span, "missing stride after `;`"));
            }
            let stride: Expr = input.parse()?;
            if !input.is_empty() {
                return Err(input.error("unexpected token: expected `]`"));
            }
            Ok((range, stride))
        };
        let (range, stride) = parser.parse2(g.stream())?;
        Ok(Some(LocalStrided {
            buf: stream(prefix),
            range,
            stride,
        }))
    }
}

/// `pe` | `pe, SEL` | `pe, RANGE; stride`.
fn parse_brackets(g: &Group) -> syn::Result<(Expr, Sel)> {
    let span = g.span();
    let parser = move |input: ParseStream| -> syn::Result<(Expr, Sel)> {
        if input.is_empty() {
            return Err(syn::Error::new(
                span,
                "missing PE number: write `TARGET[pe, index or range]` (or `STATIC[pe]` for a whole static)",
            ));
        }
        let pe: Expr = input.parse()?;
        if input.is_empty() {
            return Ok((pe, Sel::Whole));
        }
        if !input.peek(Token![,]) {
            return Err(input.error("expected `,` between the PE number and the index or range"));
        }
        input.parse::<Token![,]>()?;
        if input.is_empty() {
            return Err(syn::Error::new(
                span,
                "missing index or range after the PE number",
            ));
        }
        let sel: Expr = input.parse()?;
        let stride = if input.peek(Token![;]) {
            let semi = input.parse::<Token![;]>()?;
            if input.is_empty() {
                return Err(syn::Error::new(semi.span, "missing stride after `;`"));
            }
            Some(input.parse::<Expr>()?)
        } else {
            None
        };
        if !input.is_empty() {
            return Err(input.error(
                "unexpected token: expected `]` (the form is `[pe, index]`, `[pe, a..b]` or `[pe, a..b;stride]`)",
            ));
        }
        match (sel, stride) {
            (Expr::Range(range), stride) => Ok((pe, Sel::Range { range, stride })),
            (index, None) => Ok((pe, Sel::Index(index))),
            (_, Some(s)) => Err(syn::Error::new(
                s.span(),
                "a stride needs a range: write `[pe, a..b;stride]` (a single index has no stride)",
            )),
        }
    };
    parser.parse2(g.stream())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stmt(s: &str) -> syn::Result<Stmt> {
        let t: Vec<TokenTree> = s.parse::<TokenStream>().unwrap().into_iter().collect();
        parse_stmt(&t)
    }

    fn err(s: &str) -> String {
        match stmt(s) {
            Ok(_) => panic!("`{s}` parsed"),
            Err(e) => e.to_string(),
        }
    }

    fn sel(r: &SymRef) -> &'static str {
        match &r.sel {
            Sel::Whole => "whole",
            Sel::Index(_) => "index",
            Sel::Range { stride: None, .. } => "range",
            Sel::Range {
                stride: Some(_), ..
            } => "strided",
        }
    }

    #[test]
    fn parses_each_form() {
        let cases = [
            ("A[pe, 0..4] = src", "put range"),
            ("A[pe, 4..12;2] = vec![1.0]", "put strided"),
            ("A[pe, 3] = 1.0", "put index"),
            ("COUNT[pe] = 3", "put whole"),
            ("dst = A[pe, ..]", "get range"),
            ("x = COUNT[pe]", "get whole"),
            ("(v[1]) = A[pe, 2]", "get index"),
            ("A[pe, 15]", "read index"),
            ("COUNT[pe]", "read whole"),
            ("HITS[pe, 0] += 5", "update index"),
            ("COUNT[pe] |= 8", "update whole"),
            ("HITS[pe, 1].compare_swap(41, 50)", "method index"),
            ("A[pe, 0..4] = src => SIG += 1", "signal range"),
        ];
        for (src, want) in cases {
            let s = stmt(src).unwrap_or_else(|e| panic!("{src}: {e}"));
            let got = match &s.kind {
                Kind::Put { dst, .. } => format!("put {}", sel(dst)),
                Kind::Get { src, .. } => format!("get {}", sel(src)),
                Kind::Read { src } => format!("read {}", sel(src)),
                Kind::Update { dst, .. } => format!("update {}", sel(dst)),
                Kind::Method { dst, .. } => format!("method {}", sel(dst)),
                Kind::PutSignal { dst, .. } => format!("signal {}", sel(dst)),
            };
            assert_eq!(got, want, "{src}");
            assert!(matches!(s.mode, Mode::Blocking));
        }
    }

    #[test]
    fn parses_mode_prefixes() {
        assert!(matches!(
            stmt("nbi s: A[pe, 0..3] = src").unwrap().mode,
            Mode::Nbi(_)
        ));
        assert!(matches!(
            stmt("team t: A[0, 1] = 2").unwrap().mode,
            Mode::Team(_)
        ));
        assert!(matches!(
            stmt("ctx crate::c: A[0, 1] += 2").unwrap().mode,
            Mode::Ctx(_)
        ));
        // A target that is called `ctx` is not a prefix.
        assert!(matches!(
            stmt("ctx[pe, 1] = 2").unwrap().mode,
            Mode::Blocking
        ));
        assert!(err("nbi s A[pe, 0..4] = src").contains("expected `nbi SCOPE: statement`"));
        assert!(err("nbi s:").contains("expected a statement"));
    }

    #[test]
    fn parses_local_sides() {
        let Kind::Put { src, .. } = stmt("A[pe, 0..4] = column[0..7;2]").unwrap().kind else {
            panic!()
        };
        assert!(src.strided.is_some() && !src.is_ref);
        let Kind::Put { src, .. } = stmt("A[pe, ..2] = &src[..2]").unwrap().kind else {
            panic!()
        };
        assert!(src.strided.is_none() && src.is_ref);
        let Kind::PutSignal { signal, .. } = stmt("A[0, 0..4] = b => FLAGS[me] = 1").unwrap().kind
        else {
            panic!()
        };
        assert!(matches!(signal.word, SignalWord::Element { .. }));
        assert_eq!(signal.op, AssignOp::Set);
    }

    #[test]
    fn reports_malformed_syntax() {
        for (src, text) in [
            ("= A[pe, 0..4]", "missing left-hand side"),
            ("A[pe, 0..4] =", "missing right-hand side"),
            ("A[pe 0..4] = b", "expected `,` between the PE number"),
            ("A[] = b", "missing PE number"),
            ("A[pe,] = b", "missing index or range"),
            ("A[pe, 0..4 x] = b", "unexpected token: expected `]`"),
            ("A[pe, 0..8;] = b", "missing stride after `;`"),
            ("A[pe, 3;2] = 1.0", "a stride needs a range"),
            ("A + [pe, 0] = 1.0", "expected a symmetric object"),
            ("A[pe, 0..2] = B[pe, 0..2]", "both sides are symmetric"),
            ("v[0] = S[pe]", "ambiguous"),
            ("a = b", "no symmetric side"),
            ("world.barrier_all()", "expected a symmetric read"),
            (
                "total += HITS[pe, 0]",
                "needs a symmetric element on the left",
            ),
            (
                "A[pe, 0..4] = column[3;2]",
                "a strided local selection needs a range",
            ),
            (
                "dst = A[pe, 0..4] => R += 1",
                "`=>` follows a put from a local buffer",
            ),
        ] {
            let e = err(src);
            assert!(e.contains(text), "{src}: {e}");
        }
    }

    #[test]
    fn empty_input_and_empty_statements() {
        let cx = Ctxt::new();
        assert!(parse(&cx, TokenStream::new()).is_empty());
        let e = cx.check().unwrap_err().to_string();
        assert!(e.contains("empty shmem!"));
        let cx = Ctxt::new();
        assert!(parse(&cx, ";;".parse().unwrap()).is_empty());
        assert!(cx.check().unwrap_err().to_string().contains("no statement"));
        let cx = Ctxt::new();
        assert_eq!(
            parse(&cx, "A[0, 1] = 2; = x; B[0] = 1".parse().unwrap()).len(),
            2
        );
        assert_eq!(cx.check().unwrap_err().into_iter().count(), 1);
    }
}
