//! `shmem!`: parsed into a statement tree (`ast`), checked (`check`), then expanded (`expand`).
//! The differences between blocking, `nbi`, `team` and `ctx` statements are all in `mode`.

pub(crate) mod ast;
pub(crate) mod check;
pub(crate) mod consts;
pub(crate) mod expand;
pub(crate) mod mode;
pub(crate) mod tokens;

use proc_macro2::TokenStream;

use crate::ctxt::Ctxt;

/// The macro's input to its expansion, or to every error found in it.
pub(crate) fn expand(input: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    let stmts = ast::parse(&cx, input);
    check::check(&cx, &stmts);
    match cx.check() {
        Ok(()) => expand::expand(&stmts),
        Err(e) => e.to_compile_error(),
    }
}
