//! The field setting that PMIx's C macros do (`PMIX_LOAD_KEY`, `PMIX_INFO_LOAD`, the
//! `PMIX_VALUE_*` family), and ownership of the values `PMIx_Get` returns.

use std::ffi::{CStr, CString, c_char};
use std::ptr::NonNull;
use std::slice;

use crate::sys;

/// `key` as the C string PMIx wants for user data, or why not: PMIx would cut a longer key
/// to `PMIX_MAX_KEYLEN` bytes (so two long keys could collide), a NUL byte would end it
/// early, and PMIx reserves every key that starts with `pmix` for its own attributes
/// (`PMIX_CHECK_RESERVED_KEY`): such a key is accepted by `PMIx_Put` but never found by
/// `PMIx_Get`, not even in the process that put it.
pub(crate) fn c_key(key: &str) -> Result<CString, String> {
    if key.is_empty() {
        return Err("empty key".into());
    }
    if key.starts_with("pmix") {
        return Err("keys starting with \"pmix\" are reserved for PMIx's own attributes".into());
    }
    if key.len() > sys::PMIX_MAX_KEYLEN {
        return Err(format!(
            "key is {} bytes long; PMIx keys have at most {}",
            key.len(),
            sys::PMIX_MAX_KEYLEN
        ));
    }
    CString::new(key).map_err(|_| "key contains a NUL byte".to_string())
}

/// A `pmix_info_t` holding the boolean `flag` under `key` (a NUL-terminated attribute name
/// from `sys`, such as `PMIX_COLLECT_DATA`): what `PMIX_INFO_LOAD(&info, key, &flag,
/// PMIX_BOOL)` does, without a heap allocation, so there is nothing to destruct.
pub(crate) fn info_flag(key: &[u8], flag: bool) -> sys::pmix_info_t {
    let mut info = sys::pmix_info_t::default();
    // The attribute names are constants well below PMIX_MAX_KEYLEN; the rest stays zero,
    // which terminates the string.
    let name = key.strip_suffix(b"\0").unwrap_or(key);
    debug_assert!(name.len() <= sys::PMIX_MAX_KEYLEN);
    for (dst, &src) in info.key.iter_mut().zip(name) {
        *dst = src as c_char;
    }
    info.value.type_ = sys::PMIX_BOOL;
    info.value.data.flag = flag;
    info
}

/// A `pmix_value_t` of type `PMIX_BYTE_OBJECT` that borrows `bytes` (no copy): for
/// `PMIx_Put`, which copies it. An empty slice is passed as PMIx's own empty byte object
/// (NULL, 0).
pub(crate) fn borrowed_bytes(bytes: &[u8]) -> sys::pmix_value_t {
    let mut value = sys::pmix_value_t {
        type_: sys::PMIX_BYTE_OBJECT,
        ..Default::default()
    };
    value.data.bo = sys::pmix_byte_object_t {
        bytes: if bytes.is_empty() {
            std::ptr::null_mut()
        } else {
            // PMIx's struct has a mutable pointer, but PMIx_Put only reads through it.
            bytes.as_ptr().cast::<c_char>().cast_mut()
        },
        size: bytes.len(),
    };
    value
}

/// A `pmix_value_t` that PMIx allocated and handed to us (`PMIx_Get`); dropping it does what
/// `PMIX_VALUE_RELEASE` does: `PMIx_Value_destruct` (frees the data it points to), then
/// `free` of the struct itself (PMIx allocates with `malloc`, see `pmix_free` in
/// `pmix_common.h`).
pub(crate) struct Value(NonNull<sys::pmix_value_t>);

impl Value {
    /// Takes ownership of `raw`.
    ///
    /// # Safety
    /// `raw` must be a value PMIx returned to the caller to own (e.g. from `PMIx_Get`), not
    /// freed elsewhere.
    pub(crate) unsafe fn from_raw(raw: NonNull<sys::pmix_value_t>) -> Value {
        Value(raw)
    }

    fn get(&self) -> &sys::pmix_value_t {
        // SAFETY: we own a live value PMIx initialized (from_raw's contract).
        unsafe { self.0.as_ref() }
    }

    /// The PMIx data type (`PMIX_BYTE_OBJECT`, `PMIX_UINT32`, ...).
    pub(crate) fn data_type(&self) -> sys::pmix_data_type_t {
        self.get().type_
    }

    /// The bytes of a `PMIX_BYTE_OBJECT`, else `None`.
    pub(crate) fn bytes(&self) -> Option<&[u8]> {
        let v = self.get();
        if v.type_ != sys::PMIX_BYTE_OBJECT {
            return None;
        }
        // SAFETY: the type says `bo` is the active union field.
        let bo = unsafe { v.data.bo };
        if bo.bytes.is_null() || bo.size == 0 {
            return Some(&[]);
        }
        // SAFETY: PMIx's byte object owns `size` bytes at `bytes`, which live until
        // PMIx_Value_destruct in our Drop; the slice borrows `self`.
        Some(unsafe { slice::from_raw_parts(bo.bytes.cast::<u8>(), bo.size) })
    }

    /// The text of a `PMIX_STRING` (lossily decoded), else `None`.
    pub(crate) fn string(&self) -> Option<String> {
        let v = self.get();
        if v.type_ != sys::PMIX_STRING {
            return None;
        }
        // SAFETY: the type says `string` is the active union field.
        let s = unsafe { v.data.string };
        if s.is_null() {
            return Some(String::new());
        }
        // SAFETY: a PMIX_STRING value holds a NUL-terminated string owned by the value.
        Some(unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned())
    }

    /// An unsigned or non-negative integer value that fits in `u32`, whatever integer type
    /// the launcher chose to store it as, else `None`.
    pub(crate) fn u32(&self) -> Option<u32> {
        let v = self.get();
        let d = &v.data;
        // SAFETY: in each arm, the type tag says which union field is active.
        let wide: i128 = unsafe {
            match v.type_ {
                sys::PMIX_UINT32 => d.uint32.into(),
                sys::PMIX_PROC_RANK => d.rank.into(),
                sys::PMIX_UINT => d.uint.into(),
                sys::PMIX_UINT16 => d.uint16.into(),
                sys::PMIX_UINT8 => d.uint8.into(),
                sys::PMIX_UINT64 => d.uint64.into(),
                sys::PMIX_SIZE => d.size as i128,
                sys::PMIX_INT => d.integer.into(),
                sys::PMIX_INT32 => d.int32.into(),
                _ => return None,
            }
        };
        u32::try_from(wide).ok()
    }
}

impl Drop for Value {
    fn drop(&mut self) {
        // SAFETY: we own the value (from_raw's contract) and release it exactly once:
        // PMIx_Value_destruct frees what its data points to, then the struct goes back to
        // the allocator PMIx took it from (malloc).
        unsafe {
            sys::PMIx_Value_destruct(self.0.as_ptr());
            libc::free(self.0.as_ptr().cast());
        }
    }
}
