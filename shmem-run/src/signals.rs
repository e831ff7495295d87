//! Signals to the launcher (Ctrl-C, `kill`): blocked in every thread and received by one
//! dedicated thread with `sigwait`, which hands them to the main loop as events.

use std::io;
use std::mem::MaybeUninit;

use crate::events::{Event, Notifier};

/// The signals that make the launcher end the job.
const HANDLED: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// Blocks the handled signals in the calling thread (call it from `main` before any thread is
/// started, so every thread inherits the mask) and returns the set for [`spawn_waiter`].
///
/// Children get an empty mask again in `pre_exec`.
pub fn block() -> io::Result<libc::sigset_t> {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initializes the set it is given; sigaddset and pthread_sigmask get a
    // pointer to that initialized set, valid for the duration of the calls.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        for sig in HANDLED {
            libc::sigaddset(set.as_mut_ptr(), sig);
        }
        let rc = libc::pthread_sigmask(libc::SIG_BLOCK, set.as_ptr(), std::ptr::null_mut());
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(set.assume_init())
    }
}

/// Starts the thread that receives the signals in `set` and reports them.
pub fn spawn_waiter(set: libc::sigset_t, notifier: Notifier) -> io::Result<()> {
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            loop {
                let mut sig: libc::c_int = 0;
                // SAFETY: `set` is an initialized signal set and `sig` a valid place for the result;
                // both outlive the call.
                let rc = unsafe { libc::sigwait(&set, &mut sig) };
                if rc == 0 {
                    notifier.send(Event::Signal(sig));
                }
            }
        })?;
    Ok(())
}

/// The name of a signal, e.g. `"SIGSEGV"`.
pub fn name(sig: libc::c_int) -> Option<&'static str> {
    Some(match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return None,
    })
}

/// `"signal 11 (SIGSEGV)"`, or `"signal 40"` for one without a name here.
pub fn describe(sig: libc::c_int) -> String {
    match name(sig) {
        Some(n) => format!("signal {sig} ({n})"),
        None => format!("signal {sig}"),
    }
}
