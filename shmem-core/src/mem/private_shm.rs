//! Shared memory private to the user, with no name anywhere. Every shared-memory object of a PE
//! is a `memfd` ([`create`], [`create_aligned`]): the symmetric heap, the team segment and a C
//! program's data segment. A memfd has no name in any file system, so whatever kills the job
//! leaves nothing behind (the kernel frees the memory with the last process that maps it), and
//! it costs memory only for the pages touched (`ftruncate` reserves nothing). Peers of the node
//! map it through `/proc/PID/fd` ([`map_peer`]), which the kernel grants only to processes that
//! may ptrace the owner: the same user.
//!
//! UCX gets no shared memory of its own by default: the runtime leaves its `mm` transports
//! (`posix`, `sysv`: files in `/dev/shm` that live until unlinked, SysV segments of mode 0660)
//! out of `UCX_TLS` unless the user names them ([`UCX_TLS_DEFAULT`]). A user who does gets every
//! SysV segment this process created set to mode 0600 as soon as it exists, before any peer
//! learns of it ([`restrict_sysv_segments`]).
//!
//! Part of the memory layer: uses nothing of the crate.

use std::ffi::{CStr, c_int};
use std::io;
use std::ptr;

/// The transports UCX gets when the user does not set `UCX_TLS`: all but its shared-memory
/// (`mm`) ones. PEs of a node reach each other's memory through the runtime's own mappings,
/// so UCX's shared-memory queues would only cost memory (and leave names in `/dev/shm` if the
/// job is killed while UCX makes them).
pub(crate) const UCX_TLS_DEFAULT: &str = "^mm";

/// Sets every SysV shared-memory segment created by this process whose mode lets anyone but the
/// owner in to mode 0600. Returns how many it changed. Segments of other processes, and
/// segments this process cannot inspect, are left alone.
pub(crate) fn restrict_sysv_segments() -> usize {
    let Ok(table) = std::fs::read_to_string("/proc/sysvipc/shm") else {
        return 0;
    };
    let me = std::process::id();
    let mut changed = 0;
    // Columns: key shmid perms size cpid lpid nattch uid gid cuid cgid ...
    for line in table.lines().skip(1) {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let (Some(id), Some(perms), Some(cpid)) = (cols.get(1), cols.get(2), cols.get(4)) else {
            continue;
        };
        let (Ok(id), Ok(perms), Ok(cpid)) = (
            id.parse::<libc::c_int>(),
            u32::from_str_radix(perms, 8),
            cpid.parse::<u32>(),
        ) else {
            continue;
        };
        if cpid != me || perms & 0o077 == 0 {
            continue;
        }
        let mut ds = std::mem::MaybeUninit::<libc::shmid_ds>::uninit();
        // SAFETY: `ds` is a valid out-buffer for IPC_STAT.
        if unsafe { libc::shmctl(id, libc::IPC_STAT, ds.as_mut_ptr()) } != 0 {
            continue;
        }
        // SAFETY: IPC_STAT succeeded and filled `ds`.
        let mut ds = unsafe { ds.assume_init() };
        ds.shm_perm.mode = 0o600;
        // SAFETY: IPC_SET on a segment this process created, with the structure just read.
        if unsafe { libc::shmctl(id, libc::IPC_SET, &mut ds) } == 0 {
            changed += 1;
        }
    }
    changed
}

/// A fresh `memfd` of `len` zero bytes named `name`, and a shared mapping of all of it here:
/// memory that peers of this node can map too ([`map_peer`]), but no other user's process. The
/// descriptor stays open for the process's life (peers open it through `/proc/PID/fd`).
pub(crate) fn create(name: &CStr, len: usize) -> io::Result<(c_int, *mut u8)> {
    create_aligned(name, len, 1)
}

/// Like [`create`], mapped at a multiple of `align` (a power of two; page alignment or less:
/// wherever the kernel puts it). Nothing is committed: the pages cost memory when first
/// touched, here or in a peer.
pub(crate) fn create_aligned(
    name: &CStr,
    len: usize,
    align: usize,
) -> io::Result<(c_int, *mut u8)> {
    let context = |what: &str| {
        let e = io::Error::last_os_error();
        io::Error::new(e.kind(), format!("{what} ({len} bytes): {e}"))
    };
    // SAFETY: a plain syscall with a NUL-terminated name.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(context("memfd_create"));
    }
    let Ok(size) = libc::off_t::try_from(len) else {
        // SAFETY: our own descriptor, closed once.
        unsafe { libc::close(fd) };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("a shared segment of {len} bytes does not fit a file offset"),
        ));
    };
    // SAFETY: sizing our own memfd (no memory is committed: a memfd reserves nothing).
    let p = if unsafe { libc::ftruncate(fd, size) } != 0 {
        Err(context("ftruncate"))
    } else {
        let at = reserve_aligned(len, align);
        let flags = libc::MAP_SHARED | if at.is_null() { 0 } else { libc::MAP_FIXED };
        // SAFETY: a shared mapping of our memfd, either anywhere or exactly over this
        // function's own reservation `[at, at + len)` (which MAP_FIXED replaces).
        let p = unsafe {
            libc::mmap(
                at.cast(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            Err(context("mmap"))
        } else {
            Ok(p.cast::<u8>())
        }
    };
    match p {
        Ok(p) => Ok((fd, p)),
        Err(e) => {
            // SAFETY: our own descriptor, closed once.
            unsafe { libc::close(fd) };
            Err(e)
        }
    }
}

/// The page size.
fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096)
}

/// Reserves `len` bytes of address space (no memory: `PROT_NONE`) at a multiple of `align`
/// and returns its start, for the caller to map over; null when `align` is at most the page
/// size (any place will do) or the reservation fails (the caller then maps anywhere).
fn reserve_aligned(len: usize, align: usize) -> *mut u8 {
    if align <= page_size() || !align.is_power_of_two() {
        return ptr::null_mut();
    }
    let Some(span) = len.checked_add(align) else {
        return ptr::null_mut();
    };
    // SAFETY: a fresh anonymous PROT_NONE reservation; it touches no existing mapping.
    let p = unsafe {
        libc::mmap(
            ptr::null_mut(),
            span,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return ptr::null_mut();
    }
    let (start, end) = (p as usize, p as usize + span);
    let aligned = start.next_multiple_of(align);
    let keep_end = (aligned + len).next_multiple_of(page_size()).min(end);
    for (from, to) in [(start, aligned), (keep_end, end)] {
        if to > from {
            // SAFETY: a page-aligned part of this function's own reservation, unused.
            unsafe { libc::munmap(from as *mut libc::c_void, to - from) };
        }
    }
    aligned as *mut u8
}

/// Maps a peer's `memfd` (descriptor `fd` in process `pid`, `len` bytes) into this process, or
/// `None` when the kernel does not let us open it (another user's process: `/proc/PID/fd` asks
/// for ptrace access) or its size is not `len`. The mapping is never unmapped.
pub(crate) fn map_peer(pid: u32, fd: u32, len: usize) -> Option<*mut u8> {
    let path = std::ffi::CString::new(format!("/proc/{pid}/fd/{fd}")).ok()?;
    // SAFETY: opening a path; the descriptor is closed below.
    let f = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if f < 0 {
        return None;
    }
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `st` is a valid out-buffer for fstat on our descriptor.
    let size_ok = unsafe { libc::fstat(f, st.as_mut_ptr()) } == 0
        // SAFETY: fstat succeeded, so `st` is initialized.
        && unsafe { st.assume_init() }.st_size as u64 == len as u64;
    let p = if size_ok {
        // SAFETY: a fresh shared mapping of the peer's memfd, anywhere; never unmapped.
        unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f,
                0,
            )
        }
    } else {
        libc::MAP_FAILED
    };
    // SAFETY: our descriptor; the mapping keeps the memory.
    unsafe { libc::close(f) };
    (p != libc::MAP_FAILED).then_some(p.cast())
}
