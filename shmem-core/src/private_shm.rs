//! Shared memory private to the user. The symmetric heap is allocated by UCX, which by default
//! puts it in a SysV segment of mode 0660 (its `sysv` memory domain hard-codes that mode): any
//! process of the user's group could attach it and read or write a PE's memory. The runtime
//! asks UCX to allocate from its `posix` domain first (files created 0600 and unlinked at once;
//! peers open them through `/proc/PID/fd`, which the kernel grants only to the same user), and
//! sets every SysV segment this process still created (UCX's shared-memory transport uses them
//! for its message queues) to mode 0600 as soon as it exists, before any peer learns of it.

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
