//! Procedural macros of `shmem-core`. Use them through `shmem_core` (`shmem_core::prelude::*`),
//! which re-exports them; the expansions name `::shmem_core::__private` items.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, Item, ItemStatic, StaticMutability, parse_macro_input};

/// Places a static in symmetric memory: it exists on every PE, set to its initializer by
/// `shmem_core::init()`, and any PE can read and write any PE's copy.
///
/// ```
/// use shmem_core::prelude::*;
///
/// #[symmetric]
/// static TEMPERATURE: [f64; 1024] = [0.0; 1024];
///
/// let world = shmem_core::init()?;
/// TEMPERATURE.p(world.my_pe(), 3, 21.5);
/// assert_eq!(TEMPERATURE.local_get(3), 21.5);
/// # Ok::<(), shmem_core::Error>(())
/// ```
///
/// The static's type must be an element type (`shmem_core::Element`): a primitive number, an array
/// of elements, or a plain-data struct. `static mut` is rejected: symmetric statics are shared with
/// other PEs, so all access goes through the typed methods of `shmem_core::Symmetric`.
#[proc_macro_attribute]
pub fn symmetric(args: TokenStream, input: TokenStream) -> TokenStream {
    let args = TokenStream2::from(args);
    let item = parse_macro_input!(input as Item);
    let mut errors = Vec::new();
    if !args.is_empty() {
        errors.push(syn::Error::new(
            args.span(),
            "#[symmetric] takes no arguments",
        ));
    }
    let expanded = match item {
        Item::Static(s) => expand_static(s, &mut errors),
        other => {
            errors.push(syn::Error::new(
                item_span(&other),
                "#[symmetric] applies to `static` items only: `#[symmetric] static NAME: T = init;`",
            ));
            quote!(#other)
        }
    };
    let errors = errors.iter().map(syn::Error::to_compile_error);
    quote!(#expanded #(#errors)*).into()
}

fn item_span(item: &Item) -> proc_macro2::Span {
    match item {
        Item::Fn(f) => f.sig.fn_token.span,
        Item::Const(c) => c.const_token.span,
        Item::Struct(s) => s.struct_token.span,
        Item::Enum(e) => e.enum_token.span,
        other => other.span(),
    }
}

fn expand_static(s: ItemStatic, errors: &mut Vec<syn::Error>) -> TokenStream2 {
    if let StaticMutability::Mut(m) = &s.mutability {
        errors.push(syn::Error::new(
            m.span,
            "#[symmetric] statics cannot be `static mut`: other PEs write them, so use the typed \
             methods (`local`, `set_local`, `put`, `get`, ...) instead of `&mut` access",
        ));
        // Emit the item unchanged so that this is the only error.
        return quote!(#s);
    }
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

/// Makes a plain-data struct a `shmem_core::Element`, so it can live in symmetric memory.
///
/// The struct must also derive zerocopy's `FromBytes`, `IntoBytes` and `Immutable` (which check
/// that every bit pattern is valid and that there is no padding) and `Clone, Copy`:
///
/// ```
/// use shmem_core::prelude::*;
/// use zerocopy::{FromBytes, Immutable, IntoBytes};
///
/// #[derive(Clone, Copy, FromBytes, IntoBytes, Immutable, Element)]
/// #[repr(C)]
/// struct Sample {
///     time: f64,
///     value: f32,
///     sensor: u32,
/// }
///
/// #[symmetric]
/// static LAST: [Sample; 4] = [Sample { time: 0.0, value: 0.0, sensor: 0 }; 4];
/// ```
#[proc_macro_derive(Element)]
pub fn derive_element(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        impl #impl_generics ::shmem_core::Element for #name #ty_generics #where_clause {}
    }
    .into()
}
