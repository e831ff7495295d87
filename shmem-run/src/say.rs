//! The launcher's messages: each one goes to stderr as one line (or one block of lines) in a
//! single write, so that it never mixes mid-line with what the PEs write to the same terminal
//! or pipe, and each names the launcher as the user called it (`shmemrun` or `oshrun`).

use std::fmt;
use std::io::Write;
use std::path::Path;
use std::sync::OnceLock;

static NAME: OnceLock<String> = OnceLock::new();

/// The file name of `arg0`, or `shmemrun`.
fn name_of(arg0: Option<&std::ffi::OsStr>) -> String {
    arg0.and_then(|a| Some(Path::new(a).file_name()?.to_str()?.to_owned()))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "shmemrun".to_owned())
}

/// Names the launcher after `arg0` (the command line's first word given to
/// `main_with_args`, which differs from the process's when an interpreter runs the launcher),
/// before anything is said.
pub fn set_prog(arg0: Option<&std::ffi::OsStr>) {
    let _ = NAME.set(name_of(arg0));
}

/// The launcher's name as the user typed it: the file name of `argv[0]` (`oshrun`,
/// `shmemrun`), `shmemrun` when there is none.
pub fn prog() -> &'static str {
    NAME.get_or_init(|| name_of(std::env::args_os().next().as_deref()))
}

/// Writes `PROG: {msg}` and a newline to stderr in one write (see the module docs).
pub fn say_args(msg: fmt::Arguments<'_>) {
    line(&format!("{}: {msg}", prog()));
}

/// Writes `text` and a newline to stderr with one `write_all` on the locked, unbuffered stderr:
/// one write(2) for anything under the pipe buffer's atomic size (4096 bytes).
pub fn line(text: &str) {
    let mut buf = String::with_capacity(text.len() + 1);
    buf.push_str(text);
    buf.push('\n');
    let _ = std::io::stderr().lock().write_all(buf.as_bytes());
}

/// `say!("...", args)`: [`say_args`] with `format!` arguments.
macro_rules! say {
    ($($t:tt)*) => { $crate::say::say_args(format_args!($($t)*)) };
}
pub(crate) use say;
