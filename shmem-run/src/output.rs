//! Forwarding a PE's stdout or stderr line by line: with `--prefix` as `[PE i] line`, and for a
//! PE on another host with the last lines kept, for the message when it cannot be started.
//!
//! The buffer is bounded: a line longer than [`MAX_PIECE`] bytes is forwarded in pieces of that
//! size as it comes (the prefix only before the first), so a PE that writes a huge line without a
//! newline costs the launcher no more than that.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::events::{Event, Notifier};

/// Largest piece of a line held and written at once.
pub const MAX_PIECE: usize = 64 * 1024;
/// Lines kept by a [`Tail`].
const TAIL_LINES: usize = 6;
/// Bytes kept of one line in a [`Tail`].
const TAIL_LINE_BYTES: usize = 400;

/// The last lines a PE (or its start command) wrote to stderr.
#[derive(Debug, Default)]
pub struct Tail {
    lines: Mutex<VecDeque<String>>,
    done: AtomicBool,
}

impl Tail {
    fn push(&self, line: &[u8]) {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = &line[..line.len().min(TAIL_LINE_BYTES)];
        let mut lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(String::from_utf8_lossy(line).into_owned());
    }

    /// The kept lines, oldest first, after waiting up to `wait` for the end of the stream (the
    /// exit of a process is usually seen before the end of its pipe).
    pub fn lines(&self, wait: Duration) -> Vec<String> {
        let until = Instant::now() + wait;
        while !self.done.load(Ordering::Acquire) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        let lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        lines.iter().cloned().collect()
    }
}

/// Where forwarded lines go and what is done to them.
#[derive(Debug, Clone)]
pub struct Forward {
    /// This PE's number.
    pub pe: usize,
    /// To the launcher's stderr (else stdout).
    pub to_stderr: bool,
    /// Start every line with `[PE i] `.
    pub prefix: bool,
    /// Keep the last lines here.
    pub tail: Option<Arc<Tail>>,
}

/// Starts a thread that copies `pipe` to the launcher's stdout or stderr line by line, as
/// `how` says, and reports [`Event::OutputDone`] at the end of the pipe.
pub fn forward(
    how: Forward,
    pipe: impl Read + Send + 'static,
    notifier: Notifier,
) -> io::Result<()> {
    let name = format!(
        "pe{}-{}",
        how.pe,
        if how.to_stderr { "stderr" } else { "stdout" }
    );
    std::thread::Builder::new().name(name).spawn(move || {
        let prefix = if how.prefix {
            format!("[PE {}] ", how.pe)
        } else {
            String::new()
        };
        let mut pipe = pipe;
        let mut buf = vec![0u8; MAX_PIECE];
        let mut len = 0;
        // Whether the next byte starts a line (else it continues one forwarded in part).
        let mut line_start = true;
        let mut piece = Vec::with_capacity(MAX_PIECE + prefix.len() + 1);
        let mut emit = |bytes: &[u8], line_start: bool, end_line: bool| {
            piece.clear();
            if line_start {
                piece.extend_from_slice(prefix.as_bytes());
                if let Some(tail) = &how.tail {
                    tail.push(bytes);
                }
            }
            piece.extend_from_slice(bytes);
            if end_line && !piece.ends_with(b"\n") {
                piece.push(b'\n');
            }
            // One write per piece under the lock, so lines of different PEs do not mix. A
            // closed stdout is not a reason to stop draining the PE's pipe.
            let _ = if how.to_stderr {
                write_line(&mut io::stderr().lock(), &piece)
            } else {
                write_line(&mut io::stdout().lock(), &piece)
            };
        };
        loop {
            match pipe.read(&mut buf[len..]) {
                Ok(0) => break,
                Ok(n) => len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
            let mut start = 0;
            while let Some(at) = buf[start..len].iter().position(|&b| b == b'\n') {
                let end = start + at + 1;
                emit(&buf[start..end], line_start, true);
                line_start = true;
                start = end;
            }
            buf.copy_within(start..len, 0);
            len -= start;
            if len == MAX_PIECE {
                emit(&buf[..len], line_start, false);
                line_start = false;
                len = 0;
            }
        }
        if len > 0 || !line_start {
            emit(&buf[..len], line_start, true);
        }
        if let Some(tail) = &how.tail {
            tail.done.store(true, Ordering::Release);
        }
        notifier.send(Event::OutputDone);
    })?;
    Ok(())
}

fn write_line(w: &mut impl Write, line: &[u8]) -> io::Result<()> {
    w.write_all(line)?;
    w.flush()
}
