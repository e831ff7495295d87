//! Shared memory private to the user. The symmetric heap is allocated by UCX, which by default
//! puts it in a SysV segment of mode 0660 (its `sysv` memory domain hard-codes that mode): any
//! process of the user's group could attach it and read or write a PE's memory. The runtime
//! asks UCX to allocate from its `posix` domain first (files created 0600 and unlinked at once;
//! peers open them through `/proc/PID/fd`, which the kernel grants only to the same user), and
//! sets every SysV segment this process still created (UCX's shared-memory transport uses them
//! for its message queues) to mode 0600 as soon as it exists, before any peer learns of it.
//!
//! The runtime's own shared memory (the team segment, a C program's data segment) is `memfd`s
//! ([`create`]), which have no name anywhere and which a peer maps through `/proc/PID/fd`
//! ([`map_peer`]) under the same rule.
//!
//! Part of the memory layer: uses nothing of the crate.

use std::ffi::{CStr, c_int};
use std::io;
use std::ptr;

/// UCX's allocation order with its `posix` memory domain first (UCX 1.13's default puts
/// `md:sysv` first); the user's own `UCX_ALLOC_PRIO` still wins.
pub(crate) const ALLOC_PRIO: &str = "md:posix,md:sysv,thp,md:*,mmap,heap";

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
    let context = |what: &str| {
        let e = io::Error::last_os_error();
        io::Error::new(e.kind(), format!("{what} ({len} bytes): {e}"))
    };
    // SAFETY: a plain syscall with a NUL-terminated name.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(context("memfd_create"));
    }
    // SAFETY: sizing our own memfd.
    let p = if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
        Err(context("ftruncate"))
    } else {
        // SAFETY: a fresh shared mapping of our memfd, anywhere.
        let p = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
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
