//! Error collection for the macros: every mistake found in one invocation is reported at once,
//! each at its own tokens, instead of stopping at the first.

use std::cell::RefCell;
use std::fmt::Display;

use proc_macro2::{Span, TokenStream};

/// Collects errors while a macro input is parsed and checked. It must be consumed with
/// [`Ctxt::check`] (or [`Ctxt::into_compile_errors`]): dropping it with errors unread is a bug in
/// the macro and panics, so that no error can be lost silently.
pub(crate) struct Ctxt {
    /// `None` once the errors have been taken.
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    /// An empty context.
    pub(crate) fn new() -> Ctxt {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Records an error at `span`.
    pub(crate) fn error(&self, span: Span, message: impl Display) {
        self.syn_error(syn::Error::new(span, message));
    }

    /// Records an error produced by a parser.
    pub(crate) fn syn_error(&self, error: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt used after check")
            .push(error);
    }

    /// Records the error of `result`, if any, and returns its value.
    pub(crate) fn ok<T>(&self, result: syn::Result<T>) -> Option<T> {
        result.map_err(|e| self.syn_error(e)).ok()
    }

    /// Number of errors recorded so far.
    pub(crate) fn error_count(&self) -> usize {
        self.errors.borrow().as_ref().map_or(0, Vec::len)
    }

    /// All the errors as one `syn::Error`, or `Ok` when there are none.
    pub(crate) fn check(self) -> syn::Result<()> {
        let errors = self.errors.borrow_mut().take().expect("Ctxt checked twice");
        let mut all = errors.into_iter();
        match all.next() {
            None => Ok(()),
            Some(mut first) => {
                first.extend(all);
                Err(first)
            }
        }
    }

    /// The errors as `compile_error!` invocations (empty when there are none).
    pub(crate) fn into_compile_errors(self) -> TokenStream {
        match self.check() {
            Ok(()) => TokenStream::new(),
            Err(e) => e.to_compile_error(),
        }
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("shmem-macros: Ctxt dropped without checking its errors");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_every_error_in_order() {
        let cx = Ctxt::new();
        cx.error(Span::call_site(), "first");
        assert_eq!(
            cx.ok::<()>(Err(syn::Error::new(Span::call_site(), "second"))),
            None
        );
        assert_eq!(cx.ok(Ok(7)), Some(7));
        assert_eq!(cx.error_count(), 2);
        let messages: Vec<String> = cx
            .check()
            .unwrap_err()
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(messages, ["first", "second"]);
    }

    #[test]
    fn no_error_is_ok() {
        let cx = Ctxt::new();
        assert_eq!(cx.error_count(), 0);
        assert!(cx.check().is_ok());
        assert!(Ctxt::new().into_compile_errors().is_empty());
    }

    #[test]
    #[should_panic(expected = "without checking")]
    fn unchecked_errors_panic_on_drop() {
        let cx = Ctxt::new();
        cx.error(Span::call_site(), "lost");
    }
}
