//! The record of the engine's stores: test builds log every store the engine makes (address
//! and width) and every copy it leaves to libc, so that tests can check which bytes each store
//! touched; release builds record nothing (both calls are empty and inline).

#[cfg(test)]
use std::cell::RefCell;

/// One store of the engine, or (`libc`) one copy handed to `memcpy`.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Store {
    /// The first byte written.
    pub at: usize,
    /// Bytes written.
    pub len: usize,
    /// A `memcpy` of `len` bytes rather than one store.
    pub libc: bool,
}

#[cfg(test)]
thread_local! {
    static STORES: RefCell<Option<Vec<Store>>> = const { RefCell::new(None) };
}

#[cfg(test)]
fn push(s: Store) {
    STORES.with(|log| {
        if let Some(v) = log.borrow_mut().as_mut() {
            v.push(s);
        }
    });
}

/// Records a store of `len` bytes at `at`.
#[cfg(test)]
pub(super) fn store(at: *const u8, len: usize) {
    push(Store {
        at: at as usize,
        len,
        libc: false,
    });
}

/// Records a `memcpy` of `len` bytes to `at`.
#[cfg(test)]
pub(super) fn libc(at: *const u8, len: usize) {
    push(Store {
        at: at as usize,
        len,
        libc: true,
    });
}

/// The stores `f` made on this thread.
#[cfg(test)]
pub(super) fn record(f: impl FnOnce()) -> Vec<Store> {
    STORES.with(|log| *log.borrow_mut() = Some(Vec::new()));
    f();
    STORES.with(|log| log.borrow_mut().take().unwrap_or_default())
}

// Release builds record nothing.

#[cfg(not(test))]
#[inline(always)]
pub(super) fn store(_: *const u8, _: usize) {}
#[cfg(not(test))]
#[inline(always)]
pub(super) fn libc(_: *const u8, _: usize) {}
