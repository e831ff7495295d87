//! Token-level scanning of `shmem!` input: the separators that split it into statements and sides
//! (`;`, `:`, `=`, `+=`, `=>`, ...), found at the top level only (groups hide nested ones). Pure
//! functions over token slices; the parser in `ast` builds on them.

use proc_macro2::{Delimiter, Group, Spacing, Span, TokenStream, TokenTree};

/// The operator of a statement's top-level assignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AssignOp {
    /// `=`
    Set,
    /// `+=`
    Add,
    /// `-=`
    Sub,
    /// `&=`
    And,
    /// `|=`
    Or,
    /// `^=`
    Xor,
}

/// A top-level assignment: where its operator starts, how many tokens it spans, which one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Assign {
    pub at: usize,
    pub len: usize,
    pub op: AssignOp,
}

fn punct(t: &[TokenTree], i: usize) -> Option<(char, Spacing)> {
    match t.get(i) {
        Some(TokenTree::Punct(p)) => Some((p.as_char(), p.spacing())),
        _ => None,
    }
}

fn is_punct(t: &TokenTree, c: char) -> bool {
    matches!(t, TokenTree::Punct(p) if p.as_char() == c)
}

/// Splits at top-level `sep` punctuation.
pub(crate) fn split_top(tokens: &[TokenTree], sep: char) -> Vec<&[TokenTree]> {
    tokens.split(|t| is_punct(t, sep)).collect()
}

/// `c` appears in the group outside nested groups.
pub(crate) fn has_top(g: &Group, c: char) -> bool {
    g.stream().into_iter().any(|t| is_punct(&t, c))
}

/// Token `i` is a `:` on its own, not half of a `::`.
pub(crate) fn is_lone_colon(t: &[TokenTree], i: usize) -> bool {
    let colon = |j: usize| matches!(punct(t, j), Some((':', _)));
    let joint_colon = |j: usize| matches!(punct(t, j), Some((':', Spacing::Joint)));
    colon(i) && !(i > 0 && joint_colon(i - 1)) && !(joint_colon(i) && colon(i + 1))
}

/// Index of the first top-level `=>` (put-with-signal).
pub(crate) fn find_fat_arrow(t: &[TokenTree]) -> Option<usize> {
    (0..t.len().saturating_sub(1)).find(|&i| {
        matches!(punct(t, i), Some(('=', Spacing::Joint)))
            && matches!(punct(t, i + 1), Some(('>', _)))
    })
}

/// Finds the first top-level assignment operator. `==`, `=>`, `<=`, `>=` and `!=` are not
/// assignments; `*=`, `/=`, `%=`, `<<=` and `>>=` are errors, since OpenSHMEM has no such atomics.
pub(crate) fn find_assign(t: &[TokenTree]) -> syn::Result<Option<Assign>> {
    let mut i = 0;
    while i < t.len() {
        if let Some(('=', spacing)) = punct(t, i) {
            if spacing == Spacing::Joint && matches!(punct(t, i + 1), Some(('=' | '>', _))) {
                i += 2;
                continue;
            }
            let op = match i.checked_sub(1).and_then(|p| punct(t, p)) {
                Some((c, Spacing::Joint)) => c,
                _ => {
                    return Ok(Some(Assign {
                        at: i,
                        len: 1,
                        op: AssignOp::Set,
                    }));
                }
            };
            let compound = |op| {
                Ok(Some(Assign {
                    at: i - 1,
                    len: 2,
                    op,
                }))
            };
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
                '<' | '>'
                    if i > 1 && matches!(punct(t, i - 2), Some((c, Spacing::Joint)) if c == op) =>
                {
                    return Err(syn::Error::new(
                        t[i - 2].span(),
                        format!("OpenSHMEM has no atomic shift `{op}{op}=`"),
                    ));
                }
                // `<=`, `>=`, `!=`: comparisons inside an expression.
                _ => {}
            }
        }
        i += 1;
    }
    Ok(None)
}

/// The span from the first to the last token (the first token's alone where spans cannot be
/// joined; the call site for no tokens).
pub(crate) fn span_of(tokens: &[TokenTree]) -> Span {
    let first = tokens.first().map_or_else(Span::call_site, TokenTree::span);
    let last = tokens.last().map_or(first, TokenTree::span);
    first.join(last).unwrap_or(first)
}

/// The tokens as a stream.
pub(crate) fn stream(tokens: &[TokenTree]) -> TokenStream {
    tokens.iter().cloned().collect()
}

/// `PREFIX[...]`: the bracket group that ends the tokens and what precedes it. Macro calls
/// (`vec![...]`) are not of this shape: they are local expressions.
pub(crate) fn bracketed(tokens: &[TokenTree]) -> Option<(&[TokenTree], &Group)> {
    match tokens.split_last() {
        Some((TokenTree::Group(g), prefix))
            if g.delimiter() == Delimiter::Bracket
                && !prefix.is_empty()
                && !prefix.last().is_some_and(|t| is_punct(t, '!')) =>
        {
            Some((prefix, g))
        }
        _ => None,
    }
}

/// A single `&` opens the tokens (a reference expression, not `&&`).
pub(crate) fn starts_with_single_ref(tokens: &[TokenTree]) -> bool {
    tokens.first().is_some_and(|t| is_punct(t, '&'))
        && !tokens.get(1).is_some_and(|t| is_punct(t, '&'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<TokenTree> {
        s.parse::<TokenStream>().unwrap().into_iter().collect()
    }

    fn assign(s: &str) -> Option<(usize, usize, AssignOp)> {
        find_assign(&toks(s)).unwrap().map(|a| (a.at, a.len, a.op))
    }

    #[test]
    fn splits_statements_at_top_level_only() {
        let t = toks("A[pe, 0..8;2] = b; c = A[pe, {1; 2}];;");
        let parts: Vec<usize> = split_top(&t, ';').iter().map(|p| p.len()).collect();
        assert_eq!(parts, [4, 4, 0, 0]);
    }

    #[test]
    fn finds_the_assignment_operator() {
        assert_eq!(assign("A[pe, 0] = x"), Some((2, 1, AssignOp::Set)));
        assert_eq!(assign("A[pe, 0] += x"), Some((2, 2, AssignOp::Add)));
        assert_eq!(assign("A[pe, 0] -= x"), Some((2, 2, AssignOp::Sub)));
        assert_eq!(assign("A[pe, 0] &= x"), Some((2, 2, AssignOp::And)));
        assert_eq!(assign("A[pe, 0] |= x"), Some((2, 2, AssignOp::Or)));
        assert_eq!(assign("A[pe, 0] ^= x"), Some((2, 2, AssignOp::Xor)));
        assert_eq!(assign("A[pe, if a == b { 1 } else { 2 }]"), None);
        assert_eq!(assign("x = a <= b"), Some((1, 1, AssignOp::Set)));
        assert_eq!(assign("A[pe, 0]"), None);
        assert_eq!(assign("a != b"), None);
        // `==` and `=>` are skipped as a whole.
        assert_eq!(assign("a == b"), None);
        assert_eq!(
            assign("A[0, ..] = s => SIG += 1"),
            Some((2, 1, AssignOp::Set))
        );
    }

    #[test]
    fn rejects_operators_openshmem_lacks() {
        for (src, text) in [
            ("A[pe, 0] *= 2", "no atomic `*=`"),
            ("A[pe, 0] /= 2", "no atomic `/=`"),
            ("A[pe, 0] %= 2", "no atomic `%=`"),
            ("A[pe, 0] <<= 2", "no atomic shift `<<=`"),
            ("A[pe, 0] >>= 2", "no atomic shift `>>=`"),
        ] {
            let e = find_assign(&toks(src)).unwrap_err().to_string();
            assert!(e.contains(text), "{src}: {e}");
        }
    }

    #[test]
    fn finds_the_fat_arrow_and_lone_colons() {
        let t = toks("A[0, ..] = s => SIG += 1");
        assert_eq!(find_fat_arrow(&t), Some(4));
        assert_eq!(find_fat_arrow(&toks("a == b")), None);
        let t = toks("nbi crate::s: x");
        let lone: Vec<usize> = (0..t.len()).filter(|&i| is_lone_colon(&t, i)).collect();
        assert_eq!(lone, [5]);
    }

    #[test]
    fn recognises_bracketed_sides() {
        let t = toks("A[pe, 0..4]");
        let (prefix, g) = bracketed(&t).unwrap();
        assert_eq!(prefix.len(), 1);
        assert!(has_top(g, ','));
        assert!(!has_top(g, ';'));
        assert!(bracketed(&toks("vec![1, 2]")).is_none());
        assert!(bracketed(&toks("[1, 2]")).is_none());
        assert!(bracketed(&toks("f(x)")).is_none());
        assert!(starts_with_single_ref(&toks("&v[..2]")));
        assert!(!starts_with_single_ref(&toks("&&v")));
        assert!(!starts_with_single_ref(&toks("v")));
    }
}
