//! What the macro can know of a selection at expansion time: integer literals used as indices,
//! range bounds and strides. Pure functions, used by `check` (zero strides, reversed ranges) and
//! `expand` (the compile-time bounds and count checks).

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Expr, ExprRange, RangeLimits};

use super::ast::Sel;

/// The value of a non-negative integer literal expression, through parentheses.
pub(crate) fn literal(e: &Expr) -> Option<u128> {
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

/// Why a literal stride is invalid: `Some` for `0` and for negative literals.
pub(crate) fn bad_stride(stride: &Expr) -> Option<&'static str> {
    if literal(stride) == Some(0) {
        return Some("the stride is 0: strides must be positive");
    }
    match stride {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) && literal(&u.expr).is_some() => {
            Some("the stride is negative: strides must be positive")
        }
        _ => None,
    }
}

/// A selection whose end is a literal: the target must have at least `end` elements.
#[derive(Debug)]
pub(crate) struct ConstEnd {
    /// The exclusive end: one past the last element the selection touches (or could touch).
    pub end: u128,
    /// The literal start of a range, if it has one.
    pub start: Option<u128>,
    /// `constant index 8`, `constant range 0..=8`.
    pub what: String,
    /// The index or range.
    pub span: Span,
}

/// The constant end of `sel`, when its index or its range's end is a literal.
pub(crate) fn const_end(sel: &Sel) -> Option<ConstEnd> {
    match sel {
        Sel::Whole => None,
        Sel::Index(i) => {
            let v = literal(i)?;
            Some(ConstEnd {
                end: v.saturating_add(1),
                start: None,
                what: format!("constant index {v}"),
                span: i.span(),
            })
        }
        Sel::Range { range, .. } => {
            let b = literal(range.end.as_deref()?)?;
            let closed = is_closed(range);
            let start = range.start.as_deref().map(literal);
            let a = match start {
                Some(Some(a)) => a.to_string(),
                Some(None) => "start".into(),
                None => String::new(),
            };
            Some(ConstEnd {
                end: b.saturating_add(u128::from(closed)),
                start: start.flatten(),
                what: format!("constant range {a}{}{b}", if closed { "..=" } else { ".." }),
                span: range.span(),
            })
        }
    }
}

/// Number of elements a range with literal bounds (and stride) selects.
pub(crate) fn const_count(sel: &Sel) -> Option<u128> {
    let Sel::Range { range, stride } = sel else {
        return None;
    };
    let start = match &range.start {
        Some(s) => literal(s)?,
        None => 0,
    };
    let end = literal(range.end.as_deref()?)?.checked_add(u128::from(is_closed(range)))?;
    let stride = match stride {
        Some(s) => literal(s)?,
        None => 1,
    };
    (stride > 0 && end >= start).then(|| (end - start).div_ceil(stride))
}

fn is_closed(r: &ExprRange) -> bool {
    matches!(r.limits, RangeLimits::Closed(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(s: &str) -> Sel {
        let e: Expr = syn::parse_str(s).unwrap();
        match e {
            Expr::Range(range) => Sel::Range {
                range,
                stride: None,
            },
            e => Sel::Index(e),
        }
    }

    fn strided(range: &str, stride: &str) -> Sel {
        let Sel::Range { range, .. } = sel(range) else {
            panic!()
        };
        Sel::Range {
            range,
            stride: Some(syn::parse_str(stride).unwrap()),
        }
    }

    #[test]
    fn literals() {
        let lit = |s: &str| literal(&syn::parse_str(s).unwrap());
        assert_eq!(lit("8"), Some(8));
        assert_eq!(lit("(8usize)"), Some(8));
        assert_eq!(lit("0x10"), Some(16));
        assert_eq!(lit("n"), None);
        assert_eq!(lit("-1"), None);
        assert_eq!(lit("1 + 1"), None);
    }

    #[test]
    fn strides() {
        let bad = |s: &str| bad_stride(&syn::parse_str(s).unwrap());
        assert!(bad("0").unwrap().contains("is 0"));
        assert!(bad("(0)").unwrap().contains("is 0"));
        assert!(bad("-2").unwrap().contains("negative"));
        assert_eq!(bad("2"), None);
        assert_eq!(bad("-s"), None);
        assert_eq!(bad("s"), None);
    }

    #[test]
    fn constant_ends() {
        let end = |s: &str| const_end(&sel(s)).map(|c| (c.end, c.start, c.what));
        assert_eq!(end("8"), Some((9, None, "constant index 8".into())));
        assert_eq!(
            end("0..9"),
            Some((9, Some(0), "constant range 0..9".into()))
        );
        assert_eq!(
            end("0..=8"),
            Some((9, Some(0), "constant range 0..=8".into()))
        );
        assert_eq!(end("..4"), Some((4, None, "constant range ..4".into())));
        assert_eq!(
            end("a..4"),
            Some((4, None, "constant range start..4".into()))
        );
        assert_eq!(end("5..2").map(|(e, s, _)| (e, s)), Some((2, Some(5))));
        assert_eq!(end("i"), None);
        assert_eq!(end("0..n"), None);
        assert_eq!(end("2.."), None);
        assert!(const_end(&Sel::Whole).is_none());
        let max = u128::MAX.to_string();
        assert_eq!(end(&max).map(|c| c.0), Some(u128::MAX));
    }

    #[test]
    fn constant_counts() {
        assert_eq!(const_count(&sel("0..4")), Some(4));
        assert_eq!(const_count(&sel("..=3")), Some(4));
        assert_eq!(const_count(&strided("0..8", "2")), Some(4));
        assert_eq!(const_count(&strided("4..12", "3")), Some(3));
        assert_eq!(const_count(&strided("0..8", "0")), None);
        assert_eq!(const_count(&strided("0..8", "s")), None);
        assert_eq!(const_count(&sel("5..2")), None);
        assert_eq!(const_count(&sel("0..n")), None);
        assert_eq!(const_count(&sel("3")), None);
    }
}
