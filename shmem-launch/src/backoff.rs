//! How the launcher client waits for the launcher: politely, so that many PEs on few cores
//! all move, and waking as soon as the launcher's socket is ready.

use std::os::fd::RawFd;
use std::time::Duration;

/// Waits politely: yields first, then waits for growing intervals, at most `max_wait`, for the
/// launcher's socket to become ready (readable, or writable when sending), so that an answer
/// ends the wait at once, the caller's progress function still runs often, and many PEs on few
/// cores all move.
pub(crate) struct Backoff {
    rounds: u32,
    max_wait: Duration,
}

impl Backoff {
    const YIELDS: u32 = 32;
    /// The longest wait between two calls of the progress function.
    pub(crate) const MAX_WAIT: Duration = Duration::from_micros(500);
    /// The longest wait during the rendezvous, before any peer knows this PE's transport
    /// address (it is in the table being waited for): nothing can need this PE's progress
    /// then, and a PE that arrived early should not take the CPU from those still starting
    /// (with 32 PEs of Python on 2 cores, waking every 0.5 ms cost each waiting PE about 1 ms
    /// of CPU).
    pub(crate) const MAX_WAIT_RENDEZVOUS: Duration = Duration::from_millis(20);

    pub(crate) fn new(max_wait: Duration) -> Self {
        Backoff {
            rounds: 0,
            max_wait,
        }
    }

    /// One round: a yield, or a wait of up to the current interval for `fd` to be ready for
    /// `events` (`libc::POLLIN`, `libc::POLLOUT`).
    pub(crate) fn wait(&mut self, fd: RawFd, events: libc::c_short) {
        if self.rounds < Self::YIELDS {
            std::thread::yield_now();
        } else {
            let shift = (self.rounds - Self::YIELDS).min(20);
            let d = Duration::from_micros(1u64 << shift).min(self.max_wait);
            wait_ready(fd, events, d);
        }
        self.rounds = self.rounds.saturating_add(1);
    }
}

/// Waits at most `d` for `fd` to be ready for `events`; errors and signals end the wait early
/// (the caller's next read or write finds out what happened).
fn wait_ready(fd: RawFd, events: libc::c_short, d: Duration) {
    let mut pfd = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    };
    // SAFETY: one pollfd that lives across the call, a timespec read by the kernel, and no
    // signal mask (null): ppoll touches no other memory.
    unsafe {
        libc::ppoll(&mut pfd, 1, &ts, std::ptr::null());
    }
}
