//! Point-to-point synchronization (`shmem_TYPE_wait_until`, `shmem_TYPE_test` and their
//! `_all`/`_any`/`_some`/`_vector` forms, the deprecated `shmem_TYPE_wait`), signals
//! (`shmem_signal_wait_until`) and distributed locks (`shmem_set_lock`, ...).

use crate::state::{self, cmp, src, sym, tables};
use shmem_core::WaitWord;
use shmem_core::prelude::*;
use std::ffi::{c_int, c_long};

/// C's `status` array as the mask of excluded elements (`None` for NULL).
///
/// # Safety
/// A non-null `status` holds `n` readable ints.
unsafe fn mask(op: &str, status: *const c_int, n: usize) -> Option<Vec<bool>> {
    if status.is_null() {
        return None;
    }
    // SAFETY: per this function's contract.
    let s = unsafe { src(op, status, n) };
    Some(s.iter().map(|&x| x != 0).collect())
}

/// The symmetric array of `n` wait words at `ivars`.
fn words<E: WaitWord>(op: &str, ivars: *const E, n: usize) -> SymSlice<'static, E> {
    sym(op, "ivars", ivars, n)
}

/// Writes the found indices to C's `indices` and returns how many.
///
/// # Safety
/// `indices` is writable for `found.len()` elements.
unsafe fn report(op: &str, indices: *mut usize, found: &[usize]) -> usize {
    if !found.is_empty() {
        // SAFETY: per this function's contract.
        let out = unsafe { state::dst(op, indices, found.len()) };
        out.copy_from_slice(found);
    }
    found.len()
}

/// A waiting set function of the wait sets: all, any, some, in their scalar and vector forms.
macro_rules! wait_set {
    ($t:ty, $name:ident, all, $method:ident, $vt:ty, $conv:ident) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        ///
        /// # Safety
        /// `status` (when not NULL) holds `nelems` ints; a vector of values holds `nelems` values.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            ivars: *mut $t,
            nelems: usize,
            status: *const c_int,
            cmp_op: c_int,
            value: $vt,
        ) {
            let op = stringify!($name);
            if nelems == 0 {
                return;
            }
            let c = cmp(op, cmp_op);
            let s = words(op, ivars, nelems);
            // SAFETY: per the C contract for `status`.
            let m = unsafe { mask(op, status, nelems) };
            // SAFETY: per the C contract for the values.
            s.$method(m.as_deref(), c, unsafe { $conv(op, value, nelems) });
        }
    };
    ($t:ty, $name:ident, any, $method:ident, $vt:ty, $conv:ident) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        ///
        /// # Safety
        /// `status` (when not NULL) holds `nelems` ints; a vector of values holds `nelems` values.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            ivars: *mut $t,
            nelems: usize,
            status: *const c_int,
            cmp_op: c_int,
            value: $vt,
        ) -> usize {
            let op = stringify!($name);
            if nelems == 0 {
                return usize::MAX;
            }
            let c = cmp(op, cmp_op);
            let s = words(op, ivars, nelems);
            // SAFETY: per the C contract for `status`.
            let m = unsafe { mask(op, status, nelems) };
            // SAFETY: per the C contract for the values.
            s.$method(m.as_deref(), c, unsafe { $conv(op, value, nelems) })
                .unwrap_or(usize::MAX)
        }
    };
    ($t:ty, $name:ident, some, $method:ident, $vt:ty, $conv:ident) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        ///
        /// # Safety
        /// `indices` is writable for `nelems` elements; `status` (when not NULL) holds `nelems`
        /// ints; a vector of values holds `nelems` values.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            ivars: *mut $t,
            nelems: usize,
            indices: *mut usize,
            status: *const c_int,
            cmp_op: c_int,
            value: $vt,
        ) -> usize {
            let op = stringify!($name);
            if nelems == 0 {
                return 0;
            }
            let c = cmp(op, cmp_op);
            let s = words(op, ivars, nelems);
            // SAFETY: per the C contract for `status`.
            let m = unsafe { mask(op, status, nelems) };
            // SAFETY: per the C contract for the values.
            let found = s.$method(m.as_deref(), c, unsafe { $conv(op, value, nelems) });
            // SAFETY: per the C contract for `indices`.
            unsafe { report(op, indices, &found) }
        }
    };
}

/// A scalar value, passed on as it is.
///
/// # Safety
/// None; `unsafe` only to share the vector form's signature.
#[inline(always)]
unsafe fn one<E>(_op: &str, v: E, _n: usize) -> E {
    v
}

/// C's vector of `n` values as a slice.
///
/// # Safety
/// `v` holds `n` readable values.
#[inline(always)]
unsafe fn each<'a, E>(op: &str, v: *const E, n: usize) -> &'a [E] {
    // SAFETY: per this function's contract.
    unsafe { src(op, v, n) }
}

/// The point-to-point functions of one type.
macro_rules! p2p {
    ($($name:ident: $t:ty),* $(,)?) => { pastey::paste! { $(
        #[doc = concat!("`shmem_", stringify!($name), "_wait_until`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn [<shmem_ $name _wait_until>](ivar: *mut $t, cmp_op: c_int, value: $t) {
            let op = concat!("shmem_", stringify!($name), "_wait_until");
            let c = cmp(op, cmp_op);
            sym(op, "ivar", ivar, 1).wait_until(0, c, value);
        }

        #[doc = concat!("`shmem_", stringify!($name), "_test`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn [<shmem_ $name _test>](ivar: *mut $t, cmp_op: c_int, value: $t) -> c_int {
            let op = concat!("shmem_", stringify!($name), "_test");
            let c = cmp(op, cmp_op);
            c_int::from(sym(op, "ivar", ivar, 1).test(0, c, value))
        }

        wait_set!($t, [<shmem_ $name _wait_until_all>], all, wait_until_all, $t, one);
        wait_set!($t, [<shmem_ $name _wait_until_any>], any, wait_until_any, $t, one);
        wait_set!($t, [<shmem_ $name _wait_until_some>], some, wait_until_some, $t, one);
        wait_set!($t, [<shmem_ $name _wait_until_all_vector>], all, wait_until_all_vector,
            *const $t, each);
        wait_set!($t, [<shmem_ $name _wait_until_any_vector>], any, wait_until_any_vector,
            *const $t, each);
        wait_set!($t, [<shmem_ $name _wait_until_some_vector>], some, wait_until_some_vector,
            *const $t, each);
        wait_set!($t, [<shmem_ $name _test_any>], any, test_any, $t, one);
        wait_set!($t, [<shmem_ $name _test_some>], some, test_some, $t, one);
        wait_set!($t, [<shmem_ $name _test_any_vector>], any, test_any_vector, *const $t, each);
        wait_set!($t, [<shmem_ $name _test_some_vector>], some, test_some_vector, *const $t, each);

        #[doc = concat!("`shmem_", stringify!($name), "_test_all`.")]
        ///
        /// # Safety
        /// `status` (when not NULL) holds `nelems` ints.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn [<shmem_ $name _test_all>](
            ivars: *mut $t, nelems: usize, status: *const c_int, cmp_op: c_int, value: $t,
        ) -> c_int {
            let op = concat!("shmem_", stringify!($name), "_test_all");
            if nelems == 0 {
                return 1;
            }
            let c = cmp(op, cmp_op);
            // SAFETY: per the C contract for `status`.
            let m = unsafe { mask(op, status, nelems) };
            c_int::from(words(op, ivars, nelems).test_all(m.as_deref(), c, value))
        }

        #[doc = concat!("`shmem_", stringify!($name), "_test_all_vector`.")]
        ///
        /// # Safety
        /// `status` (when not NULL) holds `nelems` ints; `values` holds `nelems` values.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn [<shmem_ $name _test_all_vector>](
            ivars: *mut $t, nelems: usize, status: *const c_int, cmp_op: c_int,
            values: *const $t,
        ) -> c_int {
            let op = concat!("shmem_", stringify!($name), "_test_all_vector");
            if nelems == 0 {
                return 1;
            }
            let c = cmp(op, cmp_op);
            // SAFETY: per the C contract for `status`.
            let m = unsafe { mask(op, status, nelems) };
            // SAFETY: per the C contract for `values`.
            let v = unsafe { src(op, values, nelems) };
            c_int::from(words(op, ivars, nelems).test_all_vector(m.as_deref(), c, v))
        }
    )* } };
}

/// The deprecated `shmem_TYPE_wait(ivar, value)`: waits until `*ivar != value`.
macro_rules! p2p_old {
    ($($name:ident: $t:ty),* $(,)?) => { pastey::paste! { $(
        #[doc = concat!("`shmem_", stringify!($name), "_wait` (deprecated).")]
        #[unsafe(no_mangle)]
        pub extern "C" fn [<shmem_ $name _wait>](ivar: *mut $t, value: $t) {
            let op = concat!("shmem_", stringify!($name), "_wait");
            sym(op, "ivar", ivar, 1).wait_until(0, Cmp::Ne, value);
        }
    )* } };
}

p2p_types!(p2p);
p2p_deprecated_types!(p2p_old);

/// `shmem_wait` (deprecated): waits until `*ivar != value`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_wait(ivar: *mut c_long, value: c_long) {
    shmem_long_wait(ivar, value)
}

/// `shmem_wait_until` (deprecated function form, for `long`; C11 programs get the generic
/// macro).
#[unsafe(no_mangle)]
pub extern "C" fn shmem_wait_until(ivar: *mut c_long, cmp_op: c_int, value: c_long) {
    shmem_long_wait_until(ivar, cmp_op, value)
}

/// `shmem_signal_wait_until`: waits until this PE's signal word satisfies the comparison;
/// returns its value.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_signal_wait_until(sig_addr: *mut u64, cmp_op: c_int, value: u64) -> u64 {
    let op = "shmem_signal_wait_until";
    let c = cmp(op, cmp_op);
    sym(op, "sig_addr", sig_addr, 1)
        .signal(0)
        .wait_until(c, value)
}

/// The lock whose word is at `lock`.
fn lock_ref(op: &str, lock: *mut c_long) -> LockRef<'static> {
    state::g(op);
    // SAFETY: OpenSHMEM asks the C program to keep a lock a symmetric long, used only by the
    // lock calls, while it is used; C has no references.
    match unsafe { shmem_core::raw::lock_at(lock.cast_const()) } {
        Some(l) => l,
        None => fatal!(
            "{op}: lock {lock:p} is not a symmetric, 8-byte aligned long (a global or static \
             variable, or shmem_malloc memory)"
        ),
    }
}

/// `shmem_set_lock`: waits until this PE holds the lock.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_set_lock(lock: *mut c_long) {
    let guard = lock_ref("shmem_set_lock", lock).lock();
    tables().locks.insert(lock as usize, guard);
}

/// `shmem_test_lock`: takes the lock if it is free (returns 0), else returns 1 at once.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_test_lock(lock: *mut c_long) -> c_int {
    match lock_ref("shmem_test_lock", lock).try_lock() {
        Some(guard) => {
            tables().locks.insert(lock as usize, guard);
            0
        }
        None => 1,
    }
}

/// `shmem_clear_lock`: releases the lock (after a quiet).
#[unsafe(no_mangle)]
pub extern "C" fn shmem_clear_lock(lock: *mut c_long) {
    let op = "shmem_clear_lock";
    lock_ref(op, lock);
    let guard = tables().locks.remove(&(lock as usize));
    match guard {
        Some(g) => g.unlock(),
        None => fatal!("{op}: lock {lock:p} is not held by this PE"),
    }
}
