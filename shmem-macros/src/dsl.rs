//! `shmem!`: parsing and expansion.
//!
//! A statement is split at its top-level assignment operator; each side is either a *symmetric
//! reference* `TARGET[pe, SEL]` / `STATIC[pe]` or a local Rust expression. The expansion is a
//! direct call of the typed runtime method (`SymmetricArray::put`, `iput`, `get`, `p`, `g`,
//! `Remote::add`, ...) on the user's own expressions, wrapped in `#[inline(always)]` conversions
//! that carry the compile-time checks. Every error is a `syn::Error` at the offending tokens.

use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, ExprRange, Ident, RangeLimits, Token};

/// Entry point: the macro's input to its expansion or its errors.
pub fn expand(input: TokenStream) -> TokenStream {
    match expand_all(input) {
        Ok(ts) => ts,
        Err(e) => e.to_compile_error(),
    }
}

/// Where the statements run: blocking (default) or inside a non-blocking scope.
enum Mode {
    Blocking,
    Nbi(Expr),
    /// `team t:`: PE numbers are numbers in team `t`.
    Team(Expr),
    /// `ctx c:`: the operations go through context `c`.
    Ctx(Expr),
}

fn expand_all(input: TokenStream) -> syn::Result<TokenStream> {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    if tokens.is_empty() {
        return Err(syn::Error::new(
            Span::call_site(),
            "empty shmem!: write a transfer such as `shmem!(A[pe, 0..n] = src)`",
        ));
    }
    let mut errors: Option<syn::Error> = None;
    let mut stmts = Vec::new();
    for stmt in split_top(&tokens, ';') {
        if stmt.is_empty() {
            continue;
        }
        // Each statement may start with its own `nbi SCOPE:`.
        match split_mode(stmt).and_then(|(mode, rest)| expand_stmt(&mode, rest)) {
            Ok(ts) => stmts.push(ts),
            Err(e) => match &mut errors {
                Some(all) => all.combine(e),
                None => errors = Some(e),
            },
        }
    }
    if let Some(e) = errors {
        return Err(e);
    }
    if stmts.is_empty() {
        return Err(syn::Error::new(
            Span::call_site(),
            "shmem! has no statement",
        ));
    }
    let last = stmts.pop();
    Ok(quote!({ #(#stmts;)* #last }))
}

/// `nbi SCOPE: ...` selects the non-blocking form.
fn split_mode(tokens: &[TokenTree]) -> syn::Result<(Mode, &[TokenTree])> {
    let keyword = match tokens.first() {
        Some(TokenTree::Ident(i)) if i == "nbi" || i == "team" || i == "ctx" => i.to_string(),
        _ => return Ok((Mode::Blocking, tokens)),
    };
    if tokens
        .get(1)
        .is_none_or(|t| matches!(t, TokenTree::Group(_) | TokenTree::Punct(_)))
    {
        return Ok((Mode::Blocking, tokens));
    }
    // The scope, team or context expression runs up to the first lone `:` (not part of `::`).
    let colon = (1..tokens.len()).find(|&i| is_lone_colon(tokens, i));
    let Some(colon) = colon else {
        let what = match keyword.as_str() {
            "nbi" => "`nbi SCOPE: statement`, with SCOPE the `NbiScope` from `world.nbi(|s| ...)`",
            "team" => "`team TEAM: statement`, with PE numbers relative to TEAM",
            _ => "`ctx CTX: statement`, with CTX a context from `world.ctx_create`",
        };
        return Err(syn::Error::new(
            tokens[0].span(),
            format!("expected {what}"),
        ));
    };
    let expr: Expr = syn::parse2(tokens[1..colon].iter().cloned().collect())?;
    let mode = match keyword.as_str() {
        "nbi" => Mode::Nbi(expr),
        "team" => Mode::Team(expr),
        _ => Mode::Ctx(expr),
    };
    Ok((mode, &tokens[colon + 1..]))
}

fn is_lone_colon(t: &[TokenTree], i: usize) -> bool {
    let colon_at = |j: usize| matches!(t.get(j), Some(TokenTree::Punct(p)) if p.as_char() == ':');
    colon_at(i)
        && !(i > 0
            && colon_at(i - 1)
            && matches!(&t[i - 1], TokenTree::Punct(p) if p.spacing() == proc_macro2::Spacing::Joint))
        && !(colon_at(i + 1)
            && matches!(&t[i], TokenTree::Punct(p) if p.spacing() == proc_macro2::Spacing::Joint))
}

/// Splits at top-level `sep` punctuation (groups hide nested ones).
fn split_top(tokens: &[TokenTree], sep: char) -> Vec<&[TokenTree]> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, t) in tokens.iter().enumerate() {
        if matches!(t, TokenTree::Punct(p) if p.as_char() == sep) {
            out.push(&tokens[start..i]);
            start = i + 1;
        }
    }
    out.push(&tokens[start..]);
    out
}

/// The assignment operator of a statement.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AssignOp {
    Set,
    Add,
    Sub,
    And,
    Or,
    Xor,
}

/// Finds the first top-level assignment operator: `(index of its first token, its length, op)`.
fn find_assign(t: &[TokenTree]) -> syn::Result<Option<(usize, usize, AssignOp)>> {
    use proc_macro2::Spacing::{Alone, Joint};
    let punct = |i: usize| match t.get(i) {
        Some(TokenTree::Punct(p)) => Some((p.as_char(), p.spacing())),
        _ => None,
    };
    let mut i = 0;
    while i < t.len() {
        if let Some(('=', spacing)) = punct(i) {
            // `==` and `=>` are not assignments.
            if spacing == Joint && matches!(punct(i + 1), Some(('=' | '>', _))) {
                i += 2;
                continue;
            }
            let prev = if i > 0 { punct(i - 1) } else { None };
            let op = match prev {
                Some((c, Joint)) => c,
                _ => return Ok(Some((i, 1, AssignOp::Set))),
            };
            let two_back = if i > 1 { punct(i - 2) } else { None };
            let compound = |o| Ok(Some((i - 1, 2, o)));
            match op {
                '+' => return compound(AssignOp::Add),
                '-' => return compound(AssignOp::Sub),
                '&' => return compound(AssignOp::And),
                '|' => return compound(AssignOp::Or),
                '^' => return compound(AssignOp::Xor),
                '*' | '/' | '%' => {
                    return Err(syn::Error::new(
                        t[i - 1].span(),
                        format!(
                            "OpenSHMEM has no atomic `{op}=`: the atomic updates are `+=`, `-=`, \
                             `&=`, `|=` and `^=`"
                        ),
                    ));
                }
                '<' | '>' if matches!(two_back, Some((c, Joint)) if c == op) => {
                    return Err(syn::Error::new(
                        t[i - 2].span(),
                        format!("OpenSHMEM has no atomic shift `{op}{op}=`"),
                    ));
                }
                // `<=`, `>=`, `!=` are comparisons inside an expression.
                _ => {}
            }
            let _ = Alone;
        }
        i += 1;
    }
    Ok(None)
}

/// What the brackets of a symmetric reference select.
enum Sel {
    /// `NAME[pe]`: a whole `#[symmetric]` static.
    Whole,
    /// `NAME[pe, i]`.
    Index(Expr),
    /// `NAME[pe, a..b]` or `NAME[pe, a..b;s]`.
    Range(ExprRange, Option<Expr>),
}

/// `TARGET[pe, SEL]` or `STATIC[pe]`.
struct SymRef {
    target: TokenStream,
    target_span: Span,
    /// The last path segment when the target is a plain path (to spot statics).
    static_name: Option<String>,
    pe: Expr,
    sel: Sel,
    span: Span,
    /// `team t:`: the team the PE number refers to.
    team: Option<Expr>,
    /// `ctx c:`: the context the operation goes through.
    ctx: Option<Expr>,
}

/// A side of a statement, as tokens.
struct Side<'a> {
    tokens: &'a [TokenTree],
}

impl Side<'_> {
    fn span(&self) -> Span {
        let mut it = self.tokens.iter();
        let first = it.next().map(|t| t.span()).unwrap_or_else(Span::call_site);
        let last = self.tokens.last().map(|t| t.span()).unwrap_or(first);
        first.join(last).unwrap_or(first)
    }

    fn stream(&self) -> TokenStream {
        self.tokens.iter().cloned().collect()
    }

    /// The bracket group at the end and what precedes it, if the side has that shape.
    fn bracketed(&self) -> Option<(&[TokenTree], &Group)> {
        match self.tokens.split_last() {
            // `vec![...]` and other macro calls are local expressions.
            Some((TokenTree::Group(g), prefix))
                if g.delimiter() == Delimiter::Bracket
                    && !prefix.is_empty()
                    && !matches!(prefix.last(), Some(TokenTree::Punct(p)) if p.as_char() == '!') =>
            {
                Some((prefix, g))
            }
            _ => None,
        }
    }

    /// Brackets with a top-level comma: certainly a symmetric array reference.
    fn is_array_ref(&self) -> bool {
        self.bracketed().is_some_and(|(_, g)| has_top_comma(g))
    }

    /// `PATH[x]` without a comma: a whole static, or a local `v[i]`.
    fn is_path_index(&self) -> bool {
        self.bracketed().is_some_and(|(prefix, g)| {
            !has_top_comma(g)
                && !has_top(g, ';')
                && syn::parse2::<syn::Path>(prefix.iter().cloned().collect()).is_ok()
        })
    }

    /// A strided local selection `buf[a..b;s]`: `(buf, range, stride)`.
    fn local_strided(&self) -> syn::Result<Option<(TokenStream, ExprRange, Expr)>> {
        let Some((prefix, g)) = self.bracketed() else {
            return Ok(None);
        };
        if has_top_comma(g) || !has_top(g, ';') {
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
            check_literal_stride(&stride)?;
            Ok((range, stride))
        };
        let (range, stride) = parser.parse2(g.stream())?;
        Ok(Some((prefix.iter().cloned().collect(), range, stride)))
    }

    fn parse_ref(&self, mode: &Mode) -> syn::Result<SymRef> {
        let Some((prefix, group)) = self.bracketed() else {
            return Err(syn::Error::new(
                self.span(),
                "expected a symmetric reference `TARGET[pe, ...]`",
            ));
        };
        let target: TokenStream = prefix.iter().cloned().collect();
        let target_span = prefix[0].span();
        syn::parse2::<Expr>(target.clone()).map_err(|_| {
            syn::Error::new(target_span, "expected a symmetric object (a `#[symmetric]` static or a `SymArray`) before `[...]`")
        })?;
        let static_name = syn::parse2::<syn::Path>(target.clone())
            .ok()
            .and_then(|p| p.segments.last().map(|s| s.ident.to_string()));
        let (pe, sel) = parse_brackets(group)?;
        let team = match mode {
            Mode::Team(t) => Some(t.clone()),
            _ => None,
        };
        let ctx = match mode {
            Mode::Ctx(c) => Some(c.clone()),
            _ => None,
        };
        Ok(SymRef {
            team,
            ctx,
            target,
            target_span,
            static_name,
            pe,
            sel,
            span: self.span(),
        })
    }
}

fn has_top_comma(g: &Group) -> bool {
    has_top(g, ',')
}

/// `c` appears in the group outside nested groups.
fn has_top(g: &Group, c: char) -> bool {
    g.stream()
        .into_iter()
        .any(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == c))
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
            return Err(input.error("unexpected token: expected `]` (the form is `[pe, index]`, `[pe, a..b]` or `[pe, a..b;stride]`)"));
        }
        match (sel, stride) {
            (Expr::Range(r), stride) => {
                if let Some(s) = &stride {
                    check_literal_stride(s)?;
                }
                Ok((pe, Sel::Range(r, stride)))
            }
            (index, None) => Ok((pe, Sel::Index(index))),
            (_, Some(s)) => Err(syn::Error::new(
                s.span(),
                "a stride needs a range: write `[pe, a..b;stride]` (a single index has no stride)",
            )),
        }
    };
    parser.parse2(g.stream())
}

/// The value of a non-negative integer literal expression.
fn literal(e: &Expr) -> Option<u128> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        Expr::Paren(p) => literal(&p.expr),
        Expr::Group(g) => literal(&g.expr),
        _ => None,
    }
}

fn check_literal_stride(s: &Expr) -> syn::Result<()> {
    if literal(s) == Some(0) {
        return Err(syn::Error::new(
            s.span(),
            "the stride is 0: strides must be positive",
        ));
    }
    if let Expr::Unary(u) = s
        && matches!(u.op, syn::UnOp::Neg(_))
        && literal(&u.expr).is_some()
    {
        return Err(syn::Error::new(
            s.span(),
            "the stride is negative: strides must be positive",
        ));
    }
    Ok(())
}

/// The path of the expansion's helpers, spanned where an error about them should point.
fn sm(span: Span) -> TokenStream {
    quote_spanned!(span=> ::shmem_core::__private::dsl)
}

/// A local of the expansion, placed (for diagnostics) at the user's expression.
fn local(name: &str, at: Span) -> Ident {
    Ident::new(name, Span::call_site().located_at(at))
}

impl SymRef {
    fn target_ref(&self) -> TokenStream {
        let t = &self.target;
        quote_spanned!(self.target_span=> &(#t))
    }

    fn pe(&self) -> TokenStream {
        let pe = &self.pe;
        let sm = sm(pe.span());
        match &self.team {
            None => quote_spanned!(pe.span()=> #sm::pe(#pe)),
            Some(team) => quote_spanned!(pe.span()=> #sm::team_pe(&(#team), #sm::pe(#pe))),
        }
    }

    /// Rejects forms that contexts do not offer.
    fn no_ctx(&self, what: &str) -> syn::Result<()> {
        match &self.ctx {
            Some(c) => Err(syn::Error::new(
                c.span(),
                format!(
                    "{what} is not available on a context: contexts offer puts and gets of ranges, single elements and atomics"
                ),
            )),
            None => Ok(()),
        }
    }

    /// Targets named like statics (SCREAMING_CASE) get compile-time bounds checks.
    fn looks_static(&self) -> bool {
        self.static_name.as_deref().is_some_and(|n| {
            n.chars().any(|c| c.is_ascii_uppercase()) && !n.chars().any(|c| c.is_ascii_lowercase())
        })
    }

    fn name(&self) -> String {
        self.target.to_string()
    }

    /// Inline `const` blocks that reject constant indices and ranges outside a static's length.
    fn const_checks(&self) -> syn::Result<TokenStream> {
        let closed = |r: &ExprRange| matches!(r.limits, RangeLimits::Closed(_));
        let (end, what, span) = match &self.sel {
            Sel::Whole => return Ok(TokenStream::new()),
            Sel::Index(i) => match literal(i) {
                Some(v) => (v + 1, format!("constant index {v}"), i.span()),
                None => return Ok(TokenStream::new()),
            },
            Sel::Range(r, _) => {
                let start = r.start.as_deref().map(literal);
                let Some(Some(b)) = r.end.as_deref().map(literal) else {
                    return Ok(TokenStream::new());
                };
                let excl = b + u128::from(closed(r));
                let a = match start {
                    Some(Some(a)) => {
                        if a > excl {
                            return Err(syn::Error::new(
                                r.span(),
                                format!("the range is reversed: {a} is past its end"),
                            ));
                        }
                        a.to_string()
                    }
                    Some(None) => "start".into(),
                    None => String::new(),
                };
                let text = format!("{a}{}{b}", if closed(r) { "..=" } else { ".." });
                (excl, format!("constant range {text}"), r.span())
            }
        };
        if !self.looks_static() {
            return Ok(TokenStream::new());
        }
        let Ok(end) = usize::try_from(end) else {
            return Err(syn::Error::new(span, "index too large"));
        };
        let msg = format!(
            "shmem!: {what} is outside the symmetric static `{}`",
            self.name()
        );
        let t = &self.target;
        let sm = sm(span);
        Ok(
            quote_spanned!(span=> const { #sm::check_const_range(#sm::const_len(&#t), #end, #msg) };),
        )
    }

    /// Number of elements a constant range selects, when it is known at compile time.
    fn const_count(&self) -> Option<u128> {
        let Sel::Range(r, stride) = &self.sel else {
            return None;
        };
        let start = match &r.start {
            Some(s) => literal(s)?,
            None => 0,
        };
        let end =
            literal(r.end.as_deref()?)? + u128::from(matches!(r.limits, RangeLimits::Closed(_)));
        let stride = match stride {
            Some(s) => literal(s)?,
            None => 1,
        };
        (stride > 0 && end >= start).then(|| (end - start).div_ceil(stride))
    }

    /// The range with every bound converted to `usize`.
    fn range(&self, r: &ExprRange) -> TokenStream {
        range_usize(r)
    }

    fn count_check(&self, local: &TokenStream, span: Span) -> TokenStream {
        let sm = sm(span);
        match self.const_count().and_then(|c| usize::try_from(c).ok()) {
            Some(c) => quote_spanned!(span=> #sm::check_count::<#c, _>(#local);),
            None => TokenStream::new(),
        }
    }

    /// The element as an atomic target (`Remote`).
    fn remote(&self, op_span: Span) -> syn::Result<TokenStream> {
        let sm = sm(op_span);
        let (t, pe) = (self.target_ref(), self.pe());
        match &self.sel {
            Sel::Whole => {
                self.no_ctx("an atomic on a whole static `NAME[pe]`")?;
                Ok(quote_spanned!(op_span=> #sm::scalar_at(#t, #pe)))
            }
            Sel::Index(i) => {
                let ism = self::sm(i.span());
                let i = quote_spanned!(i.span()=> #ism::index(#i));
                match &self.ctx {
                    Some(c) => Ok(quote_spanned!(op_span=> (#c).at(#t, #pe, #i))),
                    None => {
                        Ok(quote_spanned!(op_span=> ::shmem_core::SymmetricArray::at(#t, #pe, #i)))
                    }
                }
            }
            Sel::Range(r, _) => Err(syn::Error::new(
                r.span(),
                "atomic operations act on one element: write `TARGET[pe, index]`, not a range",
            )),
        }
    }
}

/// A range with every bound converted to `usize` (each conversion at its bound, for errors).
fn range_usize(r: &ExprRange) -> TokenStream {
    let conv = |e: &Expr| {
        let sm = sm(e.span());
        quote_spanned!(e.span()=> #sm::index(#e))
    };
    let start = r.start.as_deref().map(conv);
    let end = r.end.as_deref().map(conv);
    match r.limits {
        RangeLimits::HalfOpen(_) => quote!(#start..#end),
        RangeLimits::Closed(_) => quote!(#start..=#end),
    }
}

/// Index of a top-level `=>` (put-with-signal).
fn find_fat_arrow(t: &[TokenTree]) -> Option<usize> {
    (0..t.len().saturating_sub(1)).find(|&i| {
        matches!((&t[i], &t[i + 1]), (TokenTree::Punct(a), TokenTree::Punct(b))
            if a.as_char() == '=' && a.spacing() == proc_macro2::Spacing::Joint && b.as_char() == '>')
    })
}

fn expand_stmt(mode: &Mode, stmt: &[TokenTree]) -> syn::Result<TokenStream> {
    if let Some(arrow) = find_fat_arrow(stmt) {
        return expand_put_signal(mode, &stmt[..arrow], &stmt[arrow + 2..], stmt[arrow].span());
    }
    match find_assign(stmt)? {
        None => expand_expr(mode, stmt),
        Some((at, len, op)) => {
            let lhs = Side {
                tokens: &stmt[..at],
            };
            let rhs = Side {
                tokens: &stmt[at + len..],
            };
            let op_span = stmt[at].span();
            if lhs.tokens.is_empty() {
                return Err(syn::Error::new(
                    op_span,
                    "missing left-hand side before the assignment",
                ));
            }
            if rhs.tokens.is_empty() {
                return Err(syn::Error::new(
                    op_span,
                    "missing right-hand side after the assignment",
                ));
            }
            if op != AssignOp::Set {
                return expand_atomic(mode, &lhs, &rhs, op, op_span);
            }
            match (lhs.is_array_ref(), rhs.is_array_ref()) {
                (true, true) => Err(syn::Error::new(
                    rhs.span(),
                    "both sides are symmetric: shmem! moves data between a symmetric object and a local \
                     buffer; get into a local buffer first, then put it",
                )),
                (true, false) => expand_put(mode, lhs.parse_ref(mode)?, &rhs),
                (false, true) => expand_get(mode, &lhs, rhs.parse_ref(mode)?),
                (false, false) => match (lhs.is_path_index(), rhs.is_path_index()) {
                    (true, true) => Err(syn::Error::new(
                        lhs.span().join(rhs.span()).unwrap_or(op_span),
                        "ambiguous: both sides look like `NAME[x]`; put the local side in parentheses, \
                         e.g. `(v[i]) = STATIC[pe]` or `STATIC[pe] = (v[i])`",
                    )),
                    (true, false) => expand_put(mode, lhs.parse_ref(mode)?, &rhs),
                    (false, true) => expand_get(mode, &lhs, rhs.parse_ref(mode)?),
                    (false, false) => Err(syn::Error::new(
                        lhs.span(),
                        "no symmetric side: one side of `=` must be `TARGET[pe, index or range]` or `STATIC[pe]`",
                    )),
                },
            }
        }
    }
}

/// An index expression converted to `usize`, spanned at the user's expression.
fn index_of(e: &Expr) -> TokenStream {
    let sm = sm(e.span());
    quote_spanned!(e.span()=> #sm::index(#e))
}

/// The symmetric side's stride, or 1.
fn stride_of(stride: &Option<Expr>) -> TokenStream {
    match stride {
        Some(s) => index_of(s),
        None => quote!(1),
    }
}

/// Rejects a strided local buffer `buf[a..b;s]` where only a contiguous buffer fits.
fn no_local_stride(side: &Side<'_>, nbi: bool, sel: &Sel) -> syn::Result<()> {
    if side.local_strided()?.is_none() {
        return Ok(());
    }
    let why = if nbi {
        "the non-blocking form has no strided local side: use a contiguous buffer"
    } else if matches!(sel, Sel::Range(..)) {
        return Ok(());
    } else {
        "a strided local buffer `buf[a..b;s]` needs a range on the symmetric side: `TARGET[pe, a..b]`"
    };
    Err(syn::Error::new(side.span(), why))
}

fn expand_put(mode: &Mode, r: SymRef, rhs: &Side<'_>) -> syn::Result<TokenStream> {
    no_local_stride(rhs, matches!(mode, Mode::Nbi(_)), &r.sel)?;
    let checks = r.const_checks()?;
    let (t, pe) = (r.target_ref(), r.pe());
    let value = rhs.stream();
    let vspan = rhs.span();
    let sm = sm(vspan);
    // The element type comes from the target, so a source of the wrong type is reported as such.
    let src = local("__shmem_src", vspan);
    if let Mode::Nbi(scope) = mode {
        let Sel::Range(range, None) = &r.sel else {
            return Err(syn::Error::new(
                r.span,
                "the non-blocking form moves contiguous ranges: write `nbi s: TARGET[pe, a..b] = buf`",
            ));
        };
        let range = r.range(range);
        let count = r.count_check(&src.to_token_stream(), vspan);
        let conv = quote_spanned!(vspan=> #sm::src_for(#t, #src));
        // The borrow must be of the user's buffer itself, which lives for the whole scope, not
        // of a temporary reference to it.
        let borrow = borrow_of(rhs);
        return Ok(
            quote!({ #checks let #src = #borrow; #count (#scope).put(#t, #pe, #range, #conv) }),
        );
    }
    if let Some(c) = &r.ctx {
        return match &r.sel {
            Sel::Whole => r
                .no_ctx("a whole static `NAME[pe]`")
                .map(|()| TokenStream::new()),
            Sel::Index(i) => {
                let i = index_of(i);
                Ok(quote!({ #checks (#c).p(#t, #pe, #i, #value) }))
            }
            Sel::Range(_, Some(_)) => r.no_ctx("a strided put").map(|()| TokenStream::new()),
            Sel::Range(range, None) => {
                if rhs.local_strided()?.is_some() {
                    return r.no_ctx("a strided put").map(|()| TokenStream::new());
                }
                let range = r.range(range);
                let count = r.count_check(&src.to_token_stream(), vspan);
                let conv = quote_spanned!(vspan=> #sm::src_for(#t, #src));
                let borrow = borrow_of(rhs);
                Ok(quote!({ #checks let #src = #borrow; #count (#c).put(#t, #pe, #range, #conv) }))
            }
        };
    }
    Ok(match &r.sel {
        Sel::Whole => {
            let ssm = self::sm(r.span);
            quote_spanned!(r.span=> #ssm::scalar_put(#t, #pe, #value))
        }
        Sel::Index(i) => {
            let i = index_of(i);
            quote!({ #checks ::shmem_core::SymmetricArray::p(#t, #pe, #i, #value) })
        }
        Sel::Range(range, stride) => {
            let range = r.range(range);
            let tstride = stride_of(stride);
            if let Some((buf, lrange, lstride)) = rhs.local_strided()? {
                // `T[pe, a..b(;s)] = buf[c..d;t]`: strided on the local side too.
                let (lstride, lrange) = (index_of(&lstride), range_usize(&lrange));
                let conv = quote_spanned!(vspan=> #sm::src_for(#t, &(#buf)[#lrange]));
                return Ok(
                    quote!({ #checks ::shmem_core::SymmetricArray::iput(#t, #pe, #range, #tstride, #conv, #lstride) }),
                );
            }
            let count = r.count_check(&src.to_token_stream(), vspan);
            let conv = quote_spanned!(vspan=> #sm::src_for(#t, #src));
            let call = match stride {
                None => quote!(::shmem_core::SymmetricArray::put(#t, #pe, #range, #conv)),
                Some(_) => {
                    quote!(::shmem_core::SymmetricArray::iput(#t, #pe, #range, #tstride, #conv, 1))
                }
            };
            let borrow = borrow_of(rhs);
            quote!({ #checks let #src = #borrow; #count #call })
        }
    })
}

/// `&(value)`, or the value itself when it already is a reference expression `&...`.
fn borrow_of(side: &Side<'_>) -> TokenStream {
    let value = side.stream();
    let is_ref = matches!(side.tokens.first(), Some(TokenTree::Punct(p)) if p.as_char() == '&')
        && !matches!(side.tokens.get(1), Some(TokenTree::Punct(p)) if p.as_char() == '&');
    if is_ref {
        value
    } else {
        quote_spanned!(side.span()=> &(#value))
    }
}

fn expand_get(mode: &Mode, lhs: &Side<'_>, r: SymRef) -> syn::Result<TokenStream> {
    no_local_stride(lhs, matches!(mode, Mode::Nbi(_)), &r.sel)?;
    let checks = r.const_checks()?;
    let (t, pe) = (r.target_ref(), r.pe());
    let place = lhs.stream();
    let pspan = lhs.span();
    let sm = sm(pspan);
    let dst = local("__shmem_dst", pspan);
    if let Mode::Nbi(scope) = mode {
        let Sel::Range(range, None) = &r.sel else {
            return Err(syn::Error::new(
                r.span,
                "the non-blocking form moves contiguous ranges: write `nbi s: buf = TARGET[pe, a..b]`",
            ));
        };
        let range = r.range(range);
        let count = r.count_check(&quote_spanned!(pspan=> &*#dst), pspan);
        let conv = quote_spanned!(pspan=> #sm::dst_for(#t, #dst));
        let borrow = quote_spanned!(pspan=> &mut (#place));
        return Ok(
            quote!({ #checks let #dst = #borrow; #count (#scope).get(#t, #pe, #range, #conv) }),
        );
    }
    if let Some(c) = &r.ctx {
        return match &r.sel {
            Sel::Whole => r
                .no_ctx("a whole static `NAME[pe]`")
                .map(|()| TokenStream::new()),
            Sel::Index(i) => {
                let i = index_of(i);
                Ok(quote!({ #checks #place = (#c).g(#t, #pe, #i) }))
            }
            Sel::Range(_, Some(_)) => r.no_ctx("a strided get").map(|()| TokenStream::new()),
            Sel::Range(range, None) => {
                if lhs.local_strided()?.is_some() {
                    return r.no_ctx("a strided get").map(|()| TokenStream::new());
                }
                let range = r.range(range);
                let count = r.count_check(&quote_spanned!(pspan=> &*#dst), pspan);
                let conv = quote_spanned!(pspan=> #sm::dst_for(#t, #dst));
                let borrow = quote_spanned!(pspan=> &mut (#place));
                Ok(quote!({ #checks let #dst = #borrow; #count (#c).get(#t, #pe, #range, #conv) }))
            }
        };
    }
    Ok(match &r.sel {
        Sel::Whole => {
            let ssm = self::sm(r.span);
            quote_spanned!(r.span=> #place = #ssm::scalar_get(#t, #pe))
        }
        Sel::Index(i) => {
            let i = index_of(i);
            quote!({ #checks #place = ::shmem_core::SymmetricArray::g(#t, #pe, #i) })
        }
        Sel::Range(range, stride) => {
            let range = r.range(range);
            let tstride = stride_of(stride);
            if let Some((buf, lrange, lstride)) = lhs.local_strided()? {
                // `buf[c..d;t] = T[pe, a..b(;s)]`: strided on the local side too.
                let (lstride, lrange) = (index_of(&lstride), range_usize(&lrange));
                let conv = quote_spanned!(pspan=> #sm::dst_for(#t, &mut (#buf)[#lrange]));
                return Ok(
                    quote!({ #checks ::shmem_core::SymmetricArray::iget(#t, #pe, #range, #tstride, #conv, #lstride) }),
                );
            }
            let count = r.count_check(&quote_spanned!(pspan=> &*#dst), pspan);
            let conv = quote_spanned!(pspan=> #sm::dst_for(#t, #dst));
            let borrow = quote_spanned!(pspan=> &mut (#place));
            let call = match stride {
                None => quote!(::shmem_core::SymmetricArray::get(#t, #pe, #range, #conv)),
                Some(_) => {
                    quote!(::shmem_core::SymmetricArray::iget(#t, #pe, #range, #tstride, #conv, 1))
                }
            };
            quote!({ #checks let #dst = #borrow; #count #call })
        }
    })
}

fn expand_atomic(
    mode: &Mode,
    lhs: &Side<'_>,
    rhs: &Side<'_>,
    op: AssignOp,
    op_span: Span,
) -> syn::Result<TokenStream> {
    if matches!(mode, Mode::Nbi(_)) {
        return Err(syn::Error::new(
            op_span,
            "atomic updates are not part of the non-blocking form",
        ));
    }
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
    let r = lhs.parse_ref(mode)?;
    let checks = r.const_checks()?;
    let remote = r.remote(op_span)?;
    let sm = sm(op_span);
    let f = match op {
        AssignOp::Add => "add",
        AssignOp::Sub => "sub",
        AssignOp::And => "and",
        AssignOp::Or => "or",
        AssignOp::Xor => "xor",
        AssignOp::Set => {
            return Err(syn::Error::new(
                op_span,
                "expected an atomic update operator",
            ));
        }
    };
    let f = Ident::new(f, op_span);
    let value = rhs.stream();
    let call = quote_spanned!(op_span=> #sm::#f(#remote, #value));
    Ok(quote!({ #checks #call }))
}

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

/// A statement without assignment: a read `TARGET[pe, i]`, `STATIC[pe]`, or an atomic
/// `TARGET[pe, i].fetch_add(v)`.
fn expand_expr(mode: &Mode, stmt: &[TokenTree]) -> syn::Result<TokenStream> {
    if matches!(mode, Mode::Nbi(_)) {
        return Err(syn::Error::new(
            stmt[0].span(),
            "the non-blocking form needs a transfer: `nbi s: TARGET[pe, a..b] = buf` or `nbi s: buf = TARGET[pe, a..b]`",
        ));
    }
    // `REF . method ( args )`
    let n = stmt.len();
    if n >= 4
        && let (TokenTree::Punct(dot), TokenTree::Ident(method), TokenTree::Group(args)) =
            (&stmt[n - 3], &stmt[n - 2], &stmt[n - 1])
        && dot.as_char() == '.'
        && args.delimiter() == Delimiter::Parenthesis
    {
        let side = Side {
            tokens: &stmt[..n - 3],
        };
        if side.bracketed().is_some() {
            return expand_method(mode, &side, method, args);
        }
    }
    let side = Side { tokens: stmt };
    if !(side.is_array_ref() || side.is_path_index()) {
        return Err(syn::Error::new(
            side.span(),
            "expected a symmetric read `TARGET[pe, index]` or `STATIC[pe]`, a transfer `A = B`, or an \
             atomic update",
        ));
    }
    let r = side.parse_ref(mode)?;
    let checks = r.const_checks()?;
    let sm = sm(r.span);
    let (t, pe) = (r.target_ref(), r.pe());
    match &r.sel {
        Sel::Whole => {
            r.no_ctx("a whole static `NAME[pe]`")?;
            Ok(quote_spanned!(r.span=> #sm::scalar_get(#t, #pe)))
        }
        Sel::Index(i) => {
            let i = index_of(i);
            match &r.ctx {
                Some(c) => Ok(quote!({ #checks (#c).g(#t, #pe, #i) })),
                None => Ok(quote!({ #checks ::shmem_core::SymmetricArray::g(#t, #pe, #i) })),
            }
        }
        Sel::Range(range, _) => Err(syn::Error::new(
            range.span(),
            "reading a range needs a destination: write `dst = TARGET[pe, a..b]`",
        )),
    }
}

fn expand_method(
    mode: &Mode,
    side: &Side<'_>,
    method: &Ident,
    args: &Group,
) -> syn::Result<TokenStream> {
    let name = method.to_string();
    let Some(&(_, arity)) = METHODS.iter().find(|(m, _)| *m == name) else {
        let all: Vec<&str> = METHODS.iter().map(|(m, _)| *m).collect();
        return Err(syn::Error::new(
            method.span(),
            format!(
                "`{name}` is not an atomic operation; shmem! knows {}",
                all.join(", ")
            ),
        ));
    };
    let parsed =
        syn::punctuated::Punctuated::<Expr, Token![,]>::parse_terminated.parse2(args.stream())?;
    if parsed.len() != arity {
        return Err(syn::Error::new(
            args.span(),
            format!(
                "`{name}` takes {arity} argument{}, found {}",
                if arity == 1 { "" } else { "s" },
                parsed.len()
            ),
        ));
    }
    let r = side.parse_ref(mode)?;
    let checks = r.const_checks()?;
    let remote = r.remote(method.span())?;
    let sm = sm(method.span());
    let f = Ident::new(&name, method.span());
    let args = parsed.iter();
    let call = quote_spanned!(method.span()=> #sm::#f(#remote #(, #args)*));
    Ok(quote!({ #checks #call }))
}

/// `TARGET[pe, a..b] = src => SIG = v` / `=> SIG += v` / `=> SIGS[i] += v`: `shmem_put_signal`.
fn expand_put_signal(
    mode: &Mode,
    put: &[TokenTree],
    signal: &[TokenTree],
    arrow: Span,
) -> syn::Result<TokenStream> {
    if matches!(mode, Mode::Nbi(_)) {
        return Err(syn::Error::new(
            arrow,
            "put-with-signal is blocking here; drop the `nbi s:` prefix",
        ));
    }
    let Some((at, 1, AssignOp::Set)) = find_assign(put)? else {
        return Err(syn::Error::new(
            arrow,
            "`=>` follows a put: write `TARGET[pe, a..b] = src => SIGNAL += value`",
        ));
    };
    let (lhs, rhs) = (
        Side { tokens: &put[..at] },
        Side {
            tokens: &put[at + 1..],
        },
    );
    if !lhs.is_array_ref() || rhs.tokens.is_empty() || rhs.is_array_ref() {
        return Err(syn::Error::new(
            lhs.span(),
            "`=>` follows a put from a local buffer: write `TARGET[pe, a..b] = src => SIGNAL += value`",
        ));
    }
    let r = lhs.parse_ref(mode)?;
    let Sel::Range(range, None) = &r.sel else {
        return Err(syn::Error::new(
            r.span,
            "put-with-signal moves a contiguous range: write `TARGET[pe, a..b] = src => ...`",
        ));
    };
    let Some((sat, slen, sop)) = find_assign(signal)? else {
        return Err(syn::Error::new(
            arrow,
            "expected the signal update after `=>`: `SIGNAL = value` or `SIGNAL += value`",
        ));
    };
    let sig = Side {
        tokens: &signal[..sat],
    };
    let value = Side {
        tokens: &signal[sat + slen..],
    };
    if sig.tokens.is_empty() || value.tokens.is_empty() {
        return Err(syn::Error::new(
            signal[sat].span(),
            "expected `SIGNAL = value` or `SIGNAL += value` after `=>`",
        ));
    }
    let sm = sm(sig.span());
    let v = value.stream();
    let op = match sop {
        AssignOp::Set => quote_spanned!(value.span()=> ::shmem_core::SignalOp::Set(#v)),
        AssignOp::Add => quote_spanned!(value.span()=> ::shmem_core::SignalOp::Add(#v)),
        _ => {
            return Err(syn::Error::new(
                signal[sat].span(),
                "a signal is set (`=`) or added to (`+=`): those are OpenSHMEM's signal operations",
            ));
        }
    };
    let word = match sig.bracketed() {
        Some((_, g)) if has_top_comma(g) => {
            return Err(syn::Error::new(
                g.span(),
                "the signal is updated on the PE of the put: write `SIGNAL` or `SIGNALS[index]`, without a PE",
            ));
        }
        Some((prefix, g)) => {
            let arr: TokenStream = prefix.iter().cloned().collect();
            let idx: Expr = syn::parse2(g.stream())?;
            quote_spanned!(sig.span()=> ::shmem_core::SignalArray::signal(&(#arr), #sm::index(#idx)))
        }
        None => {
            let s = sig.stream();
            quote_spanned!(sig.span()=> #sm::signal_of(&(#s)))
        }
    };
    let checks = r.const_checks()?;
    let (t, pe) = (r.target_ref(), r.pe());
    let range = r.range(range);
    let local = local("__shmem_src", rhs.span());
    let count = r.count_check(&local.to_token_stream(), rhs.span());
    let vsm = self::sm(rhs.span());
    let conv = quote_spanned!(rhs.span()=> #vsm::src_for(#t, #local));
    let borrow = borrow_of(&rhs);
    Ok(
        quote!({ #checks let #local = #borrow; #count ::shmem_core::SymmetricArray::put_signal(#t, #pe, #range, #conv, #word, #op) }),
    )
}
