//! Forwarding a PE's stdout or stderr line by line: with `--prefix` as `[PE i] line`, and for a
//! PE on another host with the last lines kept, for the message when it cannot be started.
//!
//! The buffer is bounded: a line longer than [`MAX_PIECE`] bytes is forwarded in pieces of that
//! size as it comes (the prefix only before the first), so a PE that writes a huge line without a
//! newline costs the launcher no more than that.
//!
//! A host agent (`agent/`) writes its PEs' output to its own stdout and stderr as records
//! ([`record`]): one line (or piece of one) of one PE each, which [`forward_tagged`] splits
//! back per PE on the launcher's side; the agent's own lines (and the start command's) pass
//! through untagged.

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
        let mut piece = Vec::with_capacity(MAX_PIECE + prefix.len() + 1);
        let emit = |bytes: &[u8], line_start: bool, end_line: bool| {
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
        pump_lines(pipe, MAX_PIECE, emit);
        if let Some(tail) = &how.tail {
            tail.done.store(true, Ordering::Release);
        }
        notifier.send(Event::OutputDone);
    })?;
    Ok(())
}

/// Reads `pipe` to its end and hands it to `emit(bytes, starts_line, ends_line)` line by line:
/// every whole line with its newline, a line of more than `cap` bytes in pieces of `cap`, and
/// what is left at the end of the pipe as a last (ended) line.
fn pump_lines(mut pipe: impl Read, cap: usize, mut emit: impl FnMut(&[u8], bool, bool)) {
    let mut buf = vec![0u8; cap];
    let mut len = 0;
    // Whether the next byte starts a line (else it continues one handed on in part).
    let mut line_start = true;
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
        if len == cap {
            emit(&buf[..len], line_start, false);
            line_start = false;
            len = 0;
        }
    }
    if len > 0 || !line_start {
        emit(&buf[..len], line_start, true);
    }
}

/// The byte that starts a record of a PE's output in a host agent's stdout or stderr (ASCII
/// record separator: no program's text line starts with it in practice, and one that does is
/// shown as it is).
const MARK: u8 = 0x1e;

/// One record of PE `pe`'s output, for the agent's stdout or stderr: [`MARK`], the PE number,
/// a kind (`L` a whole line, `S` the first piece of one, `C` a middle piece, `E` the last) and
/// the bytes (without their newline), then a newline.
pub fn record(pe: usize, bytes: &[u8], start: bool, end: bool) -> Vec<u8> {
    let kind = match (start, end) {
        (true, true) => b'L',
        (true, false) => b'S',
        (false, false) => b'C',
        (false, true) => b'E',
    };
    let mut r = Vec::with_capacity(bytes.len() + 24);
    r.push(MARK);
    r.extend_from_slice(pe.to_string().as_bytes());
    r.push(kind);
    r.extend_from_slice(bytes);
    r.push(b'\n');
    r
}

/// The PE, the bytes and whether they start and end a line, of a [`record`] of one of the PEs
/// `pes` (`line` without its newline); `None` for anything else.
fn parse_record(line: &[u8], pes: &std::ops::Range<usize>) -> Option<(usize, bool, bool)> {
    let rest = line.strip_prefix(&[MARK])?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let pe: usize = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    let (start, end) = match rest.get(digits)? {
        b'L' => (true, true),
        b'S' => (true, false),
        b'C' => (false, false),
        b'E' => (false, true),
        _ => return None,
    };
    pes.contains(&pe).then_some((pe, start, end))
}

/// How a host agent's stdout or stderr is split per PE.
#[derive(Debug, Clone)]
pub struct Tagged {
    /// The host's PEs.
    pub pes: std::ops::Range<usize>,
    /// To the launcher's stderr (else stdout).
    pub to_stderr: bool,
    /// Start every PE line with `[PE i] `.
    pub prefix: bool,
    /// The last lines of every PE of the host (for stderr), by PE - `pes.start`.
    pub tails: Vec<Arc<Tail>>,
    /// The last untagged lines: the agent's and the start command's own.
    pub host_tail: Option<Arc<Tail>>,
}

/// Starts a thread that splits a host agent's `pipe` into its PEs' lines ([`record`]) and
/// writes them to the launcher's stdout or stderr as `how` says (untagged lines as they are);
/// reports [`Event::OutputDone`] at the end of the pipe.
pub fn forward_tagged(
    how: Tagged,
    pipe: impl Read + Send + 'static,
    notifier: Notifier,
) -> io::Result<()> {
    let name = format!(
        "agent{}-{}",
        how.pes.start,
        if how.to_stderr { "stderr" } else { "stdout" }
    );
    std::thread::Builder::new().name(name).spawn(move || {
        // A record holds a piece of at most MAX_PIECE bytes and its header.
        let cap = MAX_PIECE + 32;
        let mut piece = Vec::with_capacity(cap + 32);
        let emit = |bytes: &[u8], line_start: bool, end_line: bool| {
            piece.clear();
            let tagged = if line_start {
                parse_record(bytes.strip_suffix(b"\n").unwrap_or(bytes), &how.pes)
            } else {
                None
            };
            let tail = match tagged {
                Some((pe, start, end)) => {
                    let body = &bytes[1 + pe.to_string().len() + 1..];
                    let body = body.strip_suffix(b"\n").unwrap_or(body);
                    if start && how.prefix {
                        piece.extend_from_slice(format!("[PE {pe}] ").as_bytes());
                    }
                    piece.extend_from_slice(body);
                    if end {
                        piece.push(b'\n');
                    }
                    let t = how.tails.get(pe - how.pes.start).filter(|_| how.to_stderr);
                    if let (true, Some(t)) = (start, t) {
                        t.push(body);
                    }
                    None
                }
                None => {
                    piece.extend_from_slice(bytes);
                    if end_line && !piece.ends_with(b"\n") {
                        piece.push(b'\n');
                    }
                    how.host_tail.as_ref().filter(|_| line_start)
                }
            };
            if let Some(t) = tail {
                t.push(bytes);
            }
            let _ = if how.to_stderr {
                write_line(&mut io::stderr().lock(), &piece)
            } else {
                write_line(&mut io::stdout().lock(), &piece)
            };
        };
        pump_lines(pipe, cap, emit);
        for t in how.tails.iter().chain(&how.host_tail) {
            t.done.store(true, Ordering::Release);
        }
        notifier.send(Event::OutputDone);
    })?;
    Ok(())
}

fn write_line(w: &mut impl Write, line: &[u8]) -> io::Result<()> {
    w.write_all(line)?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_name_their_pe_and_where_the_line_goes_on() {
        assert_eq!(record(3, b"hi", true, true), b"\x1e3Lhi\n");
        assert_eq!(record(12, b"", false, true), b"\x1e12E\n");
        let pes = 2..4;
        assert_eq!(parse_record(b"\x1e3Lhi", &pes), Some((3, true, true)));
        assert_eq!(parse_record(b"\x1e2S", &pes), Some((2, true, false)));
        assert_eq!(parse_record(b"\x1e2C", &pes), Some((2, false, false)));
        // Another host's PE, no PE, an unknown kind, a plain line: not records.
        assert_eq!(parse_record(b"\x1e4Lhi", &pes), None);
        assert_eq!(parse_record(b"\x1eLhi", &pes), None);
        assert_eq!(parse_record(b"\x1e3Xhi", &pes), None);
        assert_eq!(parse_record(b"3Lhi", &pes), None);
    }
}
