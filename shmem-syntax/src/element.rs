//! Element types of your own: `#[element]` (everything in one attribute) and
//! `#[derive(Element)]` (for structs that already derive zerocopy's traits).

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{DeriveInput, Item, ItemStruct, Path, Token};

use crate::ctxt::Ctxt;

/// Where zerocopy is, for the derives `#[element]` adds: shmem-core's own copy, so that the user
/// does not depend on zerocopy, and the traits are the very ones `Element` requires.
const ZEROCOPY: &str = "::shmem_core::__private::zerocopy";

/// `#[element]`: adds `Clone`, `Copy`, zerocopy's `FromBytes`, `IntoBytes` and `Immutable`
/// (those the struct does not derive already), `#[repr(C)]` when it has no `#[repr]`, and the
/// `Element` impl.
pub(crate) fn attribute(args: TokenStream, input: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    if !args.is_empty() {
        cx.error(args.span(), "#[element] takes no arguments");
    }
    let expanded = match syn::parse2::<Item>(input.clone()) {
        Ok(Item::Struct(s)) => element_struct(&cx, s),
        Ok(other) => {
            cx.error(
                item_keyword_span(&other),
                "#[element] applies to structs: an element is plain data whose every field is an \
                 element (a number, an array of elements, or another `#[element]` struct)",
            );
            other.into_token_stream()
        }
        Err(e) => {
            cx.syn_error(e);
            input
        }
    };
    let errors = cx.into_compile_errors();
    quote!(#expanded #errors)
}

fn element_struct(cx: &Ctxt, mut s: ItemStruct) -> TokenStream {
    let derived = derived_names(cx, &s.attrs);
    let has = |name: &str| derived.iter().any(|d| d == name);
    let zerocopy: Path = syn::parse_str(ZEROCOPY).expect("a path");
    let mut wanted: Vec<TokenStream> = Vec::new();
    if !has("Clone") {
        wanted.push(quote!(::core::clone::Clone));
    }
    if !has("Copy") {
        wanted.push(quote!(::core::marker::Copy));
    }
    let zerocopy_traits: Vec<TokenStream> = ["FromBytes", "IntoBytes", "Immutable"]
        .into_iter()
        .filter(|t| !has(t))
        .map(|t| {
            let t = syn::Ident::new(t, proc_macro2::Span::call_site());
            quote!(#zerocopy::#t)
        })
        .collect();
    let helper = (!zerocopy_traits.is_empty()).then(|| quote!(#[zerocopy(crate = #ZEROCOPY)]));
    wanted.extend(zerocopy_traits);
    let derive = (!wanted.is_empty()).then(|| quote!(#[derive(#(#wanted),*)]));
    let has_repr = s.attrs.iter().any(|a| a.path().is_ident("repr"));
    let repr = (!has_repr).then(|| quote!(#[repr(C)]));
    let element_impl = (!has("Element")).then(|| element_impl(&s.ident, &s.generics, &s.fields));
    // The derives come first, so that zerocopy's helper attribute follows the derive that
    // introduces it.
    let attrs = std::mem::take(&mut s.attrs);
    quote! {
        #element_impl
        #derive
        #helper
        #repr
        #(#attrs)*
        #s
    }
}

/// The last path segment of every trait in the item's `#[derive(...)]` lists.
fn derived_names(cx: &Ctxt, attrs: &[syn::Attribute]) -> Vec<String> {
    let mut names = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        if let Some(paths) =
            cx.ok(attr.parse_args_with(Punctuated::<Path, Token![,]>::parse_terminated))
        {
            names.extend(
                paths
                    .iter()
                    .filter_map(|p| p.segments.last().map(|s| s.ident.to_string())),
            );
        }
    }
    names
}

fn item_keyword_span(item: &Item) -> proc_macro2::Span {
    match item {
        Item::Enum(e) => e.enum_token.span,
        Item::Union(u) => u.union_token.span,
        Item::Type(t) => t.type_token.span,
        other => other.span(),
    }
}

/// `#[derive(Element)]`: the `Element` impl alone; the struct derives the rest itself.
pub(crate) fn derive(input: TokenStream) -> TokenStream {
    let input = match syn::parse2::<DeriveInput>(input) {
        Ok(input) => input,
        Err(e) => return e.to_compile_error(),
    };
    let name = &input.ident;
    let syn::Data::Struct(data) = &input.data else {
        return syn::Error::new_spanned(
            &input.ident,
            "`Element` can be derived only for structs (of elements)",
        )
        .to_compile_error();
    };
    element_impl(name, &input.generics, &data.fields)
}

/// `impl Element for NAME` with every field's type bound by `Element`, said at the field's type
/// in `Element`'s words: a struct holding, say, a `Lock` must not become something puts may
/// overwrite. Assumed inside the impl, these bounds also give it zerocopy's traits of the
/// fields, so a field that is not an element gets this one error from the impl, not one more
/// for each of `Element`'s supertraits.
fn element_impl(name: &syn::Ident, generics: &syn::Generics, fields: &syn::Fields) -> TokenStream {
    let mut generics = generics.clone();
    let where_clause = generics.make_where_clause();
    for field in fields {
        let ty = &field.ty;
        where_clause
            .predicates
            .push(syn::parse_quote_spanned!(ty.span()=> #ty: ::shmem_core::Element));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    quote! {
        impl #impl_generics ::shmem_core::Element for #name #ty_generics #where_clause {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attribute_str(item: &str) -> String {
        attribute(TokenStream::new(), item.parse().unwrap()).to_string()
    }

    #[test]
    fn adds_what_is_missing() {
        let out = attribute_str("struct P { x: f64, id: u64 }");
        assert_eq!(
            out,
            "impl :: shmem_core :: Element for P where f64 : :: shmem_core :: Element , \
             u64 : :: shmem_core :: Element { } \
             # [derive (:: core :: clone :: Clone , :: core :: marker :: Copy , \
             :: shmem_core :: __private :: zerocopy :: FromBytes , \
             :: shmem_core :: __private :: zerocopy :: IntoBytes , \
             :: shmem_core :: __private :: zerocopy :: Immutable)] \
             # [zerocopy (crate = \"::shmem_core::__private::zerocopy\")] # [repr (C)] \
             struct P { x : f64 , id : u64 }"
        );
    }

    #[test]
    fn keeps_what_is_there() {
        let out = attribute_str(
            "#[derive(Clone, Copy, Debug, zerocopy::FromBytes, zerocopy::IntoBytes, \
             zerocopy::Immutable)] #[repr(C, align(16))] struct P<T> { x: T }",
        );
        assert!(!out.contains("clone :: Clone"), "{out}");
        assert!(!out.contains("# [zerocopy"), "{out}");
        assert!(!out.contains("# [repr (C)]"), "{out}");
        assert!(out.contains("# [repr (C , align (16))]"), "{out}");
        assert!(
            out.contains(
                "impl < T > :: shmem_core :: Element for P < T > where T : :: shmem_core :: Element"
            ),
            "{out}"
        );
        let out = attribute_str("#[derive(Element)] struct Q(u32);");
        assert!(!out.contains("impl"), "{out}");
    }

    #[test]
    fn rejects_what_is_not_a_struct() {
        let out = attribute_str("enum Mode { Off, On }");
        assert!(out.contains("applies to structs"), "{out}");
        assert!(out.starts_with("enum Mode"), "{out}");
        let out = attribute(
            quote!(x),
            quote!(
                struct S(u8);
            ),
        )
        .to_string();
        assert!(out.contains("takes no arguments"), "{out}");
    }

    #[test]
    fn derive_is_the_impl_alone() {
        let out = derive(quote!(
            struct S<T> {
                t: T,
            }
        ))
        .to_string();
        assert_eq!(
            out,
            "impl < T > :: shmem_core :: Element for S < T > where T : :: shmem_core :: Element { }"
        );
    }
}
