//! Symmetric memory is private to the user: a process of another user, even one in the same
//! group, cannot attach a PE's shared memory (issue 16: UCX's default SysV segments had mode 0660,
//! and such a process attached and overwrote a PE's heap). Each PE lists the shared memory it
//! holds (SysV segments it created, `/dev/shm` files and memfds it keeps open), then a forked
//! child that becomes uid 65534 with the PE's own group tries to attach each one; it must be
//! refused every time. A 0660 segment made for the purpose is the control: the child must be
//! able to attach that one, or the test could not tell. Needs root (to change uid); run at 1, 2
//! and 3 PEs on both paths.

use shmem_core::prelude::*;
use shmem_testkit as common;

const COUNTS: &[usize] = &[1, 2, 3];

/// SysV segments created by this process, as (shmid, mode).
fn own_sysv_segments() -> Vec<(i32, u32)> {
    let table = std::fs::read_to_string("/proc/sysvipc/shm").expect("/proc/sysvipc/shm");
    let me = std::process::id();
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let c: Vec<&str> = line.split_whitespace().collect();
            let id = c.get(1)?.parse().ok()?;
            let mode = u32::from_str_radix(c.get(2)?, 8).ok()?;
            let cpid: u32 = c.get(4)?.parse().ok()?;
            (cpid == me).then_some((id, mode))
        })
        .collect()
}

/// This process's descriptors that are shared memory (`/dev/shm` files, memfds).
fn shared_memory_fds() -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .flatten()
    {
        if let Ok(target) = std::fs::read_link(entry.path()) {
            let t = target.to_string_lossy();
            if t.starts_with("/dev/shm/") || t.starts_with("/memfd:") {
                out.push(format!(
                    "/proc/{}/fd/{}",
                    std::process::id(),
                    entry.file_name().to_string_lossy()
                ));
            }
        }
    }
    out
}

/// In a forked child running as uid 65534 with this process's gid: which of `segments` it can
/// attach and which of `paths` it can open. Returns a bit mask (segments first).
fn attack(segments: &[i32], paths: &[String]) -> u64 {
    let paths: Vec<std::ffi::CString> = paths
        .iter()
        .map(|p| std::ffi::CString::new(p.as_str()).expect("path"))
        .collect();
    // SAFETY: getgid has no preconditions.
    let gid = unsafe { libc::getgid() };
    // SAFETY: the child only makes system calls (setgid, setuid, shmat, open, _exit) on data
    // prepared before the fork, and never returns into Rust code.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: in the child; see above.
        unsafe {
            if libc::setgid(gid) != 0 || libc::setuid(65534) != 0 {
                libc::_exit(255);
            }
            let mut got: u64 = 0;
            for (i, &id) in segments.iter().enumerate() {
                let p = libc::shmat(id, std::ptr::null(), 0);
                if p as isize != -1 {
                    got |= 1 << i;
                }
            }
            for (i, p) in paths.iter().enumerate() {
                if libc::open(p.as_ptr(), libc::O_RDWR) >= 0 {
                    got |= 1 << (segments.len() + i);
                }
            }
            // The mask fits in an exit status only for few items: report through the status
            // bits that matter (at most 7 items are checked per call).
            libc::_exit(got as i32);
        }
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(libc::WIFEXITED(status), "attacker did not exit normally");
    let code = libc::WEXITSTATUS(status);
    assert_ne!(code, 255, "the attacker could not change its uid");
    code as u64
}

#[test]
fn shared_memory_is_private_to_the_user() {
    if !common::root_or_skip("shared_memory_is_private_to_the_user (needs root to change uid)") {
        return;
    }
    common::multi_pe_at("shared_memory_is_private_to_the_user", COUNTS, |world| {
        let a = world.alloc::<u64>(1024);
        a.local_set(0, 42);
        world.barrier_all();
        let segments = own_sysv_segments();
        for &(id, mode) in &segments {
            assert_eq!(
                mode & 0o777,
                0o600,
                "PE {}: SysV segment {id} has mode {mode:o}",
                world.my_pe()
            );
        }
        let fds = shared_memory_fds();
        // The control: a segment the same group may attach.
        // SAFETY: creating a private 4 KiB segment of mode 0660.
        let control = unsafe { libc::shmget(libc::IPC_PRIVATE, 4096, libc::IPC_CREAT | 0o660) };
        assert!(control >= 0, "shmget");
        let mut checked = 0;
        for chunk_segs in segments.chunks(6) {
            let mut ids = vec![control];
            ids.extend(chunk_segs.iter().map(|&(id, _)| id));
            let got = attack(&ids, &[]);
            assert_eq!(
                got & 1,
                1,
                "the control segment (mode 0660) could not be attached"
            );
            assert_eq!(got >> 1, 0, "another uid attached one of {chunk_segs:?}");
            checked += chunk_segs.len();
        }
        for chunk in fds.chunks(6) {
            let got = attack(&[control], chunk);
            assert_eq!(got & 1, 1, "the control segment could not be attached");
            assert_eq!(got >> 1, 0, "another uid opened one of {chunk:?}");
            checked += chunk.len();
        }
        // SAFETY: removing our own control segment.
        unsafe { libc::shmctl(control, libc::IPC_RMID, std::ptr::null_mut()) };
        // The heap and the team segment are memfds on every path (a C program's data segment
        // too); UCX itself makes no shared memory unless UCX_TLS names its shared-memory
        // transports, so by default no SysV segment and no /dev/shm file exists at all.
        let memfds = fds
            .iter()
            .filter(|f| {
                std::fs::read_link(f).is_ok_and(|t| t.to_string_lossy().starts_with("/memfd:"))
            })
            .count();
        assert!(
            memfds >= 2 && checked >= 2,
            "PE {}: expected the heap and the team segment among {fds:?}",
            world.my_pe()
        );
        if std::env::var_os("UCX_TLS").is_none() {
            assert_eq!(
                memfds,
                fds.len(),
                "files in /dev/shm held by default: {fds:?}"
            );
            assert!(
                segments.is_empty(),
                "PE {}: SysV segments made by default: {segments:?}",
                world.my_pe()
            );
        }
        world.barrier_all();
        assert_eq!(a.local_get(0), 42);
    });
}
