//! The OpenSHMEM type tables: one macro per family, each calling back a generator macro with
//! `TYPENAME: RustType` pairs. `shmem.h` lists the same families as X-macros
//! (`SHMEM_X_RMA`, `SHMEM_X_AMO_STD`, ...); the test `header_matches_tables` checks that both
//! list the same names.
//!
//! C types map to Rust on x86-64 Linux (LP64): `char`/`signed char` `i8`, `short` `i16`, `int`
//! `i32`, `long`/`long long` `i64`, the unsigned forms `u8`..`u64`, `size_t` `usize`,
//! `ptrdiff_t` `isize`, `long double` (16 bytes) `[u8; 16]` for RMA and [`crate::longdouble::LongDouble`] (x87
//! arithmetic) for reductions,
//! `float _Complex`/`double _Complex` [`shmem_core::Complex32`]/[`shmem_core::Complex64`].

/// The standard RMA types (put, get, p, g, iput, iget, the non-blocking and signal forms, and
/// the team collectives broadcast, collect, fcollect, alltoall, alltoalls).
macro_rules! rma_types {
    ($m:ident) => {
        $m! {
            float: f32, double: f64, longdouble: [u8; 16], char: i8, schar: i8, short: i16,
            int: i32, long: i64, longlong: i64, uchar: u8, ushort: u16, uint: u32, ulong: u64,
            ulonglong: u64, int8: i8, int16: i16, int32: i32, int64: i64, uint8: u8,
            uint16: u16, uint32: u32, uint64: u64, size: usize, ptrdiff: isize
        }
    };
}

/// The sized RMA forms: `shmem_put8` .. `shmem_put128` and `shmem_putmem` (bytes).
macro_rules! sized_types {
    ($m:ident) => {
        $m! { 8: u8, 16: u16, 32: u32, 64: u64, 128: [u64; 2], mem: u8 }
    };
}

/// The extended AMO types (fetch, set, swap).
macro_rules! amo_extended_types {
    ($m:ident) => {
        $m! {
            float: f32, double: f64, int: i32, long: i64, longlong: i64, uint: u32, ulong: u64,
            ulonglong: u64, int32: i32, int64: i64, uint32: u32, uint64: u64, size: usize,
            ptrdiff: isize
        }
    };
}

/// The standard AMO types (compare_swap, fetch_inc, inc, fetch_add, add).
macro_rules! amo_standard_types {
    ($m:ident) => {
        $m! {
            int: i32, long: i64, longlong: i64, uint: u32, ulong: u64, ulonglong: u64,
            int32: i32, int64: i64, uint32: u32, uint64: u64, size: usize, ptrdiff: isize
        }
    };
}

/// The bitwise AMO types (and, or, xor and their fetching forms).
macro_rules! amo_bitwise_types {
    ($m:ident) => {
        $m! {
            uint: u32, ulong: u64, ulonglong: u64, int32: i32, int64: i64, uint32: u32,
            uint64: u64
        }
    };
}

/// The deprecated AMO names of OpenSHMEM 1.3 (`shmem_long_fadd`, ...): extended ones.
macro_rules! amo_deprecated_extended_types {
    ($m:ident) => {
        $m! { float: f32, double: f64, int: i32, long: i64, longlong: i64 }
    };
}

/// The deprecated AMO names of OpenSHMEM 1.3: standard ones.
macro_rules! amo_deprecated_standard_types {
    ($m:ident) => {
        $m! { int: i32, long: i64, longlong: i64 }
    };
}

/// The point-to-point synchronization types (wait_until, test and their set forms).
macro_rules! p2p_types {
    ($m:ident) => {
        $m! {
            short: i16, int: i32, long: i64, longlong: i64, ushort: u16, uint: u32, ulong: u64,
            ulonglong: u64, int32: i32, int64: i64, uint32: u32, uint64: u64, size: usize,
            ptrdiff: isize
        }
    };
}

/// The deprecated `shmem_TYPE_wait` types.
macro_rules! p2p_deprecated_types {
    ($m:ident) => {
        $m! { short: i16, int: i32, long: i64, longlong: i64 }
    };
}

/// Team reductions `and`, `or`, `xor`.
macro_rules! reduce_bitwise_types {
    ($m:ident) => {
        $m! {
            uchar: u8, ushort: u16, uint: u32, ulong: u64, ulonglong: u64, int8: i8,
            int16: i16, int32: i32, int64: i64, uint8: u8, uint16: u16, uint32: u32,
            uint64: u64, size: usize
        }
    };
}

/// Team reductions `max`, `min`.
macro_rules! reduce_minmax_types {
    ($m:ident) => {
        $m! {
            char: i8, schar: i8, short: i16, int: i32, long: i64, longlong: i64, ptrdiff: isize,
            uchar: u8, ushort: u16, uint: u32, ulong: u64, ulonglong: u64, int8: i8,
            int16: i16, int32: i32, int64: i64, uint8: u8, uint16: u16, uint32: u32,
            uint64: u64, size: usize, float: f32, double: f64,
            longdouble: crate::longdouble::LongDouble
        }
    };
}

/// Team reductions `sum`, `prod`.
macro_rules! reduce_sum_types {
    ($m:ident) => {
        $m! {
            char: i8, schar: i8, short: i16, int: i32, long: i64, longlong: i64, ptrdiff: isize,
            uchar: u8, ushort: u16, uint: u32, ulong: u64, ulonglong: u64, int8: i8,
            int16: i16, int32: i32, int64: i64, uint8: u8, uint16: u16, uint32: u32,
            uint64: u64, size: usize, float: f32, double: f64,
            longdouble: crate::longdouble::LongDouble,
            complexf: shmem_core::Complex32, complexd: shmem_core::Complex64
        }
    };
}

/// Active-set reductions (`shmem_TYPE_OP_to_all`) `and`, `or`, `xor`.
macro_rules! to_all_bitwise_types {
    ($m:ident) => {
        $m! { short: i16, int: i32, long: i64, longlong: i64 }
    };
}

/// Active-set reductions `max`, `min`.
macro_rules! to_all_minmax_types {
    ($m:ident) => {
        $m! {
            short: i16, int: i32, long: i64, longlong: i64, float: f32, double: f64,
            longdouble: crate::longdouble::LongDouble
        }
    };
}

/// Active-set reductions `sum`, `prod`.
macro_rules! to_all_sum_types {
    ($m:ident) => {
        $m! {
            short: i16, int: i32, long: i64, longlong: i64, float: f32, double: f64,
            longdouble: crate::longdouble::LongDouble, complexf: shmem_core::Complex32, complexd: shmem_core::Complex64
        }
    };
}

/// Lists a table's type names, for the header check.
#[cfg(test)]
macro_rules! names_of {
    ($($name:tt: $t:ty),* $(,)?) => { vec![$(stringify!($name)),*] };
}

#[cfg(test)]
mod tests {
    /// The names of each Rust table, and the X-macro of `shmem.h` that must list the same.
    fn tables() -> Vec<(&'static str, Vec<&'static str>)> {
        vec![
            ("SHMEM_X_RMA", rma_types!(names_of)),
            ("SHMEM_X_SIZED", sized_types!(names_of)),
            ("SHMEM_X_RMA_BY_VALUE", {
                let mut v = rma_types!(names_of);
                v.retain(|n| *n != "longdouble");
                v
            }),
            ("SHMEM_X_AMO_EXT", amo_extended_types!(names_of)),
            ("SHMEM_X_AMO_STD", amo_standard_types!(names_of)),
            ("SHMEM_X_AMO_BIT", amo_bitwise_types!(names_of)),
            (
                "SHMEM_X_AMO_DEPR_EXT",
                amo_deprecated_extended_types!(names_of),
            ),
            (
                "SHMEM_X_AMO_DEPR_STD",
                amo_deprecated_standard_types!(names_of),
            ),
            ("SHMEM_X_P2P", p2p_types!(names_of)),
            ("SHMEM_X_P2P_DEPR", p2p_deprecated_types!(names_of)),
            ("SHMEM_X_REDUCE_BIT", reduce_bitwise_types!(names_of)),
            ("SHMEM_X_REDUCE_MINMAX", reduce_minmax_types!(names_of)),
            ("SHMEM_X_REDUCE_SUM", reduce_sum_types!(names_of)),
            ("SHMEM_X_TO_ALL_BIT", to_all_bitwise_types!(names_of)),
            ("SHMEM_X_TO_ALL_MINMAX", to_all_minmax_types!(names_of)),
            ("SHMEM_X_TO_ALL_SUM", to_all_sum_types!(names_of)),
        ]
    }

    /// The first arguments of the `X(...)` entries of X-macro `name` in `shmem.h`.
    fn header_names(header: &str, name: &str) -> Vec<String> {
        let start = format!("#define {name}(X)");
        let at = header
            .find(&start)
            .unwrap_or_else(|| panic!("shmem.h has no {start}"));
        let mut body = String::new();
        for line in header[at + start.len()..].lines() {
            let cont = line.trim_end().ends_with('\\');
            body.push_str(line.trim_end().trim_end_matches('\\'));
            if !cont {
                break;
            }
        }
        body.split("X(")
            .skip(1)
            .map(|e| e.split([',', ')']).next().unwrap_or("").trim().to_string())
            .collect()
    }

    #[test]
    fn header_matches_tables() {
        let header = include_str!("../include/shmem.h");
        for (xmacro, names) in tables() {
            assert_eq!(header_names(header, xmacro), names, "{xmacro}");
        }
    }

    #[test]
    fn version_matches() {
        let header = include_str!("../include/shmem.h");
        let (major, minor) = shmem_core::VERSION;
        for want in [
            format!("#define SHMEM_MAJOR_VERSION {major}\n"),
            format!("#define SHMEM_MINOR_VERSION {minor}\n"),
        ] {
            assert!(header.contains(&want), "shmem.h must contain {want}");
        }
    }

    #[test]
    fn vendor_string_matches() {
        let header = include_str!("../include/shmem.h");
        let want = format!(
            "#define SHMEM_VENDOR_STRING \"{}\"",
            shmem_core::VENDOR_STRING
        );
        assert!(header.contains(&want), "shmem.h must contain {want}");
    }
}
