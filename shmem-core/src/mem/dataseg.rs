//! The program's data segment as symmetric memory, for C programs (in OpenSHMEM every global
//! and static variable is symmetric: programs put into `static long x;`).
//!
//! At start-up, when a foreign-language layer asked for it ([`crate::raw::enable_data_segment`]),
//! the writable part of the main program's image after RELRO (`.data` and `.bss`) is moved into
//! shared memory in place: its bytes are copied into a `memfd` and the `memfd` is mapped
//! `MAP_SHARED | MAP_FIXED` over the same addresses, so the program sees the same variables with
//! the same values. Peers on the node then map the same `memfd` (opened through
//! `/proc/PID/fd/N`, which the kernel grants only to processes that may ptrace this one: the same
//! user) and reach the variables by load and store, as they reach the heap; the segment is also
//! registered with UCX for peers reached through the network.
//!
//! In the runtime's offset space the segment starts at [`DATA_OFFSET`]: an offset at or above it
//! names a byte of the data segment, below it a byte of the heap.

use crate::error::{Error, Result};
use std::ffi::{c_int, c_void};
use std::ptr;

/// Offsets at and above this one name bytes of the data segment (the heap is far smaller).
pub(crate) const DATA_OFFSET: usize = 1 << 46;

/// This process's data segment, moved into a `memfd`.
#[derive(Debug)]
pub(crate) struct DataSegment {
    pub(crate) base: *mut u8,
    pub(crate) len: usize,
    /// The `memfd` that backs it (kept open for the process's life: peers open it through
    /// `/proc/PID/fd`).
    pub(crate) fd: c_int,
}

// SAFETY: the pointer is an address range that stays mapped for the process's life; nothing
// here dereferences it.
unsafe impl Send for DataSegment {}
// SAFETY: as above.
unsafe impl Sync for DataSegment {}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096)
}

/// `[start, end)` of the main program's writable data after RELRO, page-aligned.
fn find_range() -> Option<(usize, usize)> {
    struct Found {
        range: Option<(usize, usize)>,
        page: usize,
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid info record and our own `Found` back.
        let (info, found) = unsafe { (&*info, &mut *data.cast::<Found>()) };
        let page = found.page;
        // SAFETY: `dlpi_phdr` points to `dlpi_phnum` program headers of this object.
        let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum.into()) };
        let bias = info.dlpi_addr as usize;
        let mut relro_end = 0;
        for h in headers {
            if h.p_type == libc::PT_GNU_RELRO {
                // ld.so makes [floor(start), floor(end)) read-only.
                relro_end = (bias + (h.p_vaddr + h.p_memsz) as usize) / page * page;
            }
        }
        // The writable segments after RELRO: one (GNU ld: RELRO, then .data and .bss in the
        // same segment) or a RELRO-only segment followed by another (lld). Adjacent parts are
        // merged; of parts with a gap between them, the last (which holds .bss) is taken.
        for h in headers {
            if h.p_type == libc::PT_LOAD && h.p_flags & libc::PF_W != 0 {
                let start = (bias + h.p_vaddr as usize) / page * page;
                let end = (bias + (h.p_vaddr + h.p_memsz) as usize).next_multiple_of(page);
                let start = start.max(relro_end);
                if end <= start {
                    continue;
                }
                found.range = match found.range {
                    Some((s, e)) if e == start => Some((s, end)),
                    _ => Some((start, end)),
                };
            }
        }
        // The first object is the main program: stop there.
        1
    }
    let mut found = Found {
        range: None,
        page: page_size(),
    };
    // SAFETY: `visit` matches the callback type and only reads the headers it is given.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&raw mut found).cast()) };
    found.range
}

fn os_error(what: &str) -> Error {
    Error::Bootstrap(format!(
        "moving the data segment into shared memory: {what}: {}",
        std::io::Error::last_os_error()
    ))
}

/// Moves the main program's `.data` and `.bss` into a `memfd`, in place. Called once, early in
/// start-up, before any other thread of the runtime exists.
pub(crate) fn move_to_shared_memory() -> Result<Option<DataSegment>> {
    let Some((start, end)) = find_range() else {
        return Ok(None);
    };
    let len = end - start;
    let (fd, tmp) = crate::mem::private_shm::create(c"shmem-data-segment", len).map_err(|e| {
        Error::Bootstrap(format!("moving the data segment into shared memory: {e}"))
    })?;
    let tmp = tmp.cast::<c_void>();
    let fail = |what: &str| {
        let e = os_error(what);
        // SAFETY: our own descriptor, closed once.
        unsafe { libc::close(fd) };
        Err(e)
    };
    // Between the copy and the remap nothing may write the segment: this runs before the
    // runtime starts threads, and the two calls below neither allocate nor touch statics.
    // SAFETY: [start, end) is mapped readable and writable (a PT_LOAD segment with PF_W, after
    // RELRO); `tmp` is a fresh mapping of `len` bytes.
    let moved = unsafe {
        ptr::copy_nonoverlapping(start as *const u8, tmp.cast::<u8>(), len);
        libc::mmap(
            start as *mut c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd,
            0,
        )
    };
    // SAFETY: our temporary mapping, unmapped once.
    unsafe { libc::munmap(tmp, len) };
    if moved == libc::MAP_FAILED {
        return fail("mmap over the data segment");
    }
    Ok(Some(DataSegment {
        base: start as *mut u8,
        len,
        fd,
    }))
}

/// Set by [`crate::raw::enable_data_segment`] before `init`.
static WANTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Asks the next `init` to make the data segment symmetric.
pub(crate) fn want() {
    WANTED.store(true, std::sync::atomic::Ordering::Release);
}

/// Whether `init` should make the data segment symmetric.
pub(crate) fn wanted() -> bool {
    WANTED.load(std::sync::atomic::Ordering::Acquire)
}
