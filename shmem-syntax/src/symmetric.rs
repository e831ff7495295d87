//! `#[symmetric]`: a static placed in symmetric memory.
//!
//! A valid item becomes a `Symmetric<T>` static registered with the runtime. An invalid one
//! becomes a *fallback* plus the error: the item the user most likely meant (`static NAME:
//! Symmetric<T>`, unregistered) where its type can be told, the item unchanged otherwise. Either
//! way, every use of the name still resolves and type-checks as a symmetric static, so one
//! mistake gives one error and not one more at every use.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Attribute, Expr, Ident, Item, ItemStatic, StaticMutability, Token, Type, Visibility};

use crate::ctxt::Ctxt;

/// The attribute's expansion.
pub(crate) fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    if !args.is_empty() {
        cx.error(args.span(), "#[symmetric] takes no arguments");
    }
    let item = match syn::parse2::<Item>(input.clone()) {
        Ok(item) => item,
        Err(e) => {
            cx.syn_error(e);
            let errors = cx.into_compile_errors();
            return quote!(#input #errors);
        }
    };
    let expanded = match item {
        Item::Static(s) => match s.mutability {
            StaticMutability::Mut(m) => {
                cx.error(
                    m.span,
                    "#[symmetric] statics cannot be `static mut`: other PEs write them, so use the typed \
                     methods (`local`, `set_local`, `put`, `get`, ...) instead of `&mut` access",
                );
                fallback(&s.attrs, &s.vis, &s.ident, &s.ty, Some(&s.expr))
            }
            _ => symmetric_static(s),
        },
        Item::Const(c) => {
            cx.error(c.const_token.span, NOT_A_STATIC);
            fallback(&c.attrs, &c.vis, &c.ident, &c.ty, Some(&c.expr))
        }
        Item::Macro(m) if m.mac.path.is_ident("thread_local") => {
            cx.error(
                m.mac.path.span(),
                "#[symmetric] statics cannot be thread-local: a symmetric static exists once per PE \
                 (process) so that other PEs can address it; declare `#[symmetric] static NAME: T = init;`",
            );
            match m.mac.parse_body::<Statics>() {
                Ok(statics) => statics
                    .0
                    .iter()
                    .map(|s| fallback(&s.attrs, &s.vis, &s.ident, &s.ty, Some(&s.expr)))
                    .collect(),
                Err(_) => m.into_token_stream(),
            }
        }
        // `static NAME = init;` or `static NAME: T;`, which syn leaves unparsed. The compiler
        // reports either one itself, with a suggested fix, at the re-emitted item; a second
        // error from here would only repeat it.
        Item::Verbatim(tokens) => match syn::parse2::<IncompleteStatic>(tokens.clone()) {
            Ok(IncompleteStatic {
                attrs,
                vis,
                static_token,
                ident,
                ty: Some((colon, ty)),
                rest,
            }) => {
                // Typed, without a value: keep the type, so that uses check against it.
                let wrapped = quote_spanned!(ty.span()=> ::shmem_core::Symmetric<#ty>);
                quote!(#(#attrs)* #vis #static_token #ident #colon #wrapped #rest)
            }
            Ok(_) => tokens,
            Err(_) => {
                cx.error(tokens.span(), NOT_A_STATIC);
                tokens
            }
        },
        other => {
            let message = if is_generic(&other) {
                "#[symmetric] applies to non-generic `static` items only: every PE must have the same \
                 object at the same place, so it cannot be generic; write `#[symmetric] static NAME: T = init;`"
            } else {
                NOT_A_STATIC
            };
            cx.error(item_span(&other), message);
            other.into_token_stream()
        }
    };
    let errors = cx.into_compile_errors();
    quote!(#expanded #errors)
}

const NOT_A_STATIC: &str =
    "#[symmetric] applies to `static` items only: `#[symmetric] static NAME: T = init;`";

/// The expansion of a valid `#[symmetric] static`.
fn symmetric_static(s: ItemStatic) -> TokenStream {
    let ItemStatic {
        attrs,
        vis,
        static_token,
        ident,
        ty,
        expr,
        semi_token,
        ..
    } = s;
    let reg = format_ident!("__SHMEM_SYMMETRIC_{}", ident);
    let ty_span = ty.span();
    let wrapped = quote_spanned!(ty_span=> ::shmem_core::Symmetric<#ty>);
    // The element check happens here, once, reported on the user's type.
    let entry = quote_spanned!(ty_span=> ::shmem_core::__private::register::<#ty>(&#ident));
    quote! {
        #(#attrs)*
        #vis #static_token #ident: #wrapped = ::shmem_core::Symmetric::new(#expr) #semi_token

        const _: () = {
            #[::shmem_core::__private::linkme::distributed_slice(::shmem_core::__private::SYMMETRIC_STATICS)]
            #[linkme(crate = ::shmem_core::__private::linkme)]
            #[allow(non_upper_case_globals)]
            static #reg: &'static dyn ::shmem_core::__private::StaticObject = #entry;
        };
    }
}

/// What a `#[symmetric]` item that is in error stands for: a symmetric static of the same name
/// and type, not registered with the runtime (the program does not compile anyway).
fn fallback(
    attrs: &[Attribute],
    vis: &Visibility,
    ident: &Ident,
    ty: &Type,
    init: Option<&Expr>,
) -> TokenStream {
    let wrapped = quote_spanned!(ty.span()=> ::shmem_core::Symmetric<#ty>);
    let init = init.map(|e| quote!(= ::shmem_core::Symmetric::new(#e)));
    quote!(#(#attrs)* #vis static #ident: #wrapped #init;)
}

/// The statics inside `thread_local! { ... }`.
struct Statics(Vec<ItemStatic>);

impl Parse for Statics {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut statics = Vec::new();
        while !input.is_empty() {
            statics.push(input.parse()?);
        }
        Ok(Statics(statics))
    }
}

/// `static NAME = init;` (no type) or `static NAME: T;` (no value).
struct IncompleteStatic {
    attrs: Vec<Attribute>,
    vis: Visibility,
    static_token: Token![static],
    ident: Ident,
    ty: Option<(Token![:], Type)>,
    /// `= init;` or `;`, left to the compiler.
    rest: TokenStream,
}

impl Parse for IncompleteStatic {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        let static_token = input.parse()?;
        input.parse::<Option<Token![mut]>>()?;
        let ident = input.parse()?;
        let ty = match input.parse::<Option<Token![:]>>()? {
            Some(colon) => Some((colon, input.parse()?)),
            None => None,
        };
        Ok(IncompleteStatic {
            attrs,
            vis,
            static_token,
            ident,
            ty,
            rest: input.parse()?,
        })
    }
}

fn is_generic(item: &Item) -> bool {
    match item {
        Item::Fn(f) => !f.sig.generics.params.is_empty(),
        Item::Struct(s) => !s.generics.params.is_empty(),
        Item::Enum(e) => !e.generics.params.is_empty(),
        Item::Type(t) => !t.generics.params.is_empty(),
        _ => false,
    }
}

fn item_span(item: &Item) -> Span {
    match item {
        Item::Fn(f) => f.sig.fn_token.span,
        Item::Struct(s) => s.struct_token.span,
        Item::Enum(e) => e.enum_token.span,
        other => other.span(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand_str(args: &str, item: &str) -> String {
        expand(args.parse().unwrap(), item.parse().unwrap()).to_string()
    }

    #[test]
    fn a_static_is_wrapped_and_registered() {
        let out = expand_str("", "static A: [f64; 4] = [0.0; 4];");
        assert!(
            out.contains("static A : :: shmem_core :: Symmetric < [f64 ; 4] >"),
            "{out}"
        );
        assert!(out.contains("distributed_slice"), "{out}");
        assert!(!out.contains("compile_error"), "{out}");
    }

    #[test]
    fn arguments_are_an_error_next_to_the_normal_expansion() {
        let out = expand_str("foo", "static A: u64 = 0;");
        assert!(out.contains("takes no arguments"), "{out}");
        assert!(out.contains("distributed_slice"), "{out}");
    }

    #[test]
    fn errors_come_with_a_fallback() {
        for (item, error, fallback) in [
            (
                "static mut C: [u64; 8] = [0; 8];",
                "cannot be `static mut`",
                "static C : :: shmem_core :: Symmetric < [u64 ; 8] > = :: shmem_core :: Symmetric :: new ([0 ; 8]) ;",
            ),
            (
                "const LIMIT: u64 = 10;",
                "applies to `static` items only",
                "static LIMIT : :: shmem_core :: Symmetric < u64 > = :: shmem_core :: Symmetric :: new (10) ;",
            ),
            (
                "thread_local! { static T: u64 = 0; }",
                "cannot be thread-local",
                "static T : :: shmem_core :: Symmetric < u64 > = :: shmem_core :: Symmetric :: new (0) ;",
            ),
            ("fn f() {}", "applies to `static` items only", "fn f () { }"),
            ("struct G<T>(T);", "non-generic", "struct G < T > (T) ;"),
        ] {
            let out = expand_str("", item);
            assert!(out.contains(error), "{item}: {out}");
            assert!(out.contains(fallback), "{item}: {out}");
            assert!(!out.contains("distributed_slice"), "{item}: {out}");
            assert_eq!(out.matches("compile_error").count(), 1, "{item}: {out}");
        }
    }

    #[test]
    fn incomplete_statics_are_left_to_the_compiler() {
        let out = expand_str("", "static X = 5;");
        assert_eq!(out, "static X = 5 ;");
        let out = expand_str("", "pub static X: [u8; 4];");
        assert_eq!(
            out,
            "pub static X : :: shmem_core :: Symmetric < [u8 ; 4] > ;"
        );
    }
}
