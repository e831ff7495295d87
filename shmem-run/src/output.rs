//! Forwarding the PEs' stdout and stderr line by line, in every mode, as Slurm's `srun` does:
//! every PE's output reaches the launcher through pipes (the PEs never share its stdout or
//! stderr), and the launcher writes only whole lines of one PE at a time (one `write(2)` per
//! line, or per batch of whole lines of one PE), so that the lines of different PEs never mix,
//! even when a program writes a line's text and its newline with two calls (Python run
//! unbuffered, `python -u`, does). Stdout goes to the launcher's stdout, stderr to its stderr.
//!
//! A partial line is not held back: when a PE writes text without a newline (a prompt,
//! progress dots) and nothing more comes for [`PARTIAL_LINE_WAIT`], the launcher forwards what
//! it has, and at the end of the PE's stream it forwards the rest. The buffer is bounded: a line
//! longer than [`MAX_PIECE`] bytes is forwarded in pieces of that size as it comes, so a PE that
//! writes a huge line without a newline costs the launcher no more than that.
//!
//! Without `--prefix` the launcher writes exactly the bytes the PE wrote, nothing added (a last
//! line without a newline stays without one); only a line a PE leaves unfinished for a while,
//! or one longer than [`MAX_PIECE`], can have another PE's bytes come between its pieces. With
//! `--prefix` every line starts with `[PE i] `, and where a PE's line was cut (a pause after a
//! partial line, the end of its stream) the launcher ends the labelled line, the rest of the
//! line following as a labelled line of its own (a prompt `name? ` and its answer come out as
//! `[PE 0] name? ` and `[PE 0] hello bob`, each a line), so that labelled lines never mix; a
//! line longer than [`MAX_PIECE`] keeps one label, before its first piece.
//!
//! For a PE on another host the last lines of stderr are kept besides, for the message when it
//! cannot be started.
//!
//! A host agent (`agent/`) reads its PEs' pipes the same way and writes their output to its
//! own stdout and stderr as records ([`record`]): one line (or piece of one) of one PE each,
//! which [`forward_tagged`] splits back per PE on the launcher's side; the agent's own lines
//! (and the start command's) pass through untagged.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::events::{Event, Notifier};

/// Largest piece of a line held and written at once.
pub const MAX_PIECE: usize = 64 * 1024;
/// Time a partial line (text without its newline yet) waits for more before it is forwarded
/// as it is. Long enough that a line written in two calls, its text and then its newline, as
/// Python does unbuffered, nearly always arrives whole (the two calls are microseconds apart);
/// short enough that a prompt or progress dots still show at once to a person.
pub const PARTIAL_LINE_WAIT: Duration = Duration::from_millis(100);
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
    pipe: impl Read + AsRawFd + Send + 'static,
    notifier: Notifier,
) -> io::Result<()> {
    let name = format!(
        "pe{}-{}",
        how.pe,
        if how.to_stderr { "stderr" } else { "stdout" }
    );
    std::thread::Builder::new().name(name).spawn(move || {
        let mut out = PeOut {
            prefix: if how.prefix {
                format!("[PE {}] ", how.pe)
            } else {
                String::new()
            },
            batch: Vec::with_capacity(2 * MAX_PIECE),
            how,
        };
        pump(pipe, MAX_PIECE, Some(PARTIAL_LINE_WAIT), &mut out);
        if let Some(tail) = &out.how.tail {
            tail.done.store(true, Ordering::Release);
        }
        notifier.send(Event::OutputDone);
    })?;
    Ok(())
}

/// Where [`pump`] hands a stream's lines.
trait Lines {
    /// Takes `bytes`, a piece of one line: from its start when `start`, else continuing the
    /// piece before; it ends the line when it ends with a newline.
    fn piece(&mut self, bytes: &[u8], start: bool);
    /// Takes `bytes`, whole lines each ending with a newline (the first continuing the piece
    /// before when not `start`): by default line by line.
    fn lines(&mut self, bytes: &[u8], start: bool) {
        let mut start = start;
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            self.piece(line, start);
            start = true;
        }
    }
    /// The line stops here without its newline: the PE paused after a partial line, or its
    /// stream ended. What comes next starts a line.
    fn cut(&mut self);
    /// Writes out what the pieces since the last call hold.
    fn flush(&mut self);
}

/// One PE's stdout or stderr, forwarded by [`forward`].
struct PeOut {
    how: Forward,
    /// `[PE i] `, or nothing.
    prefix: String,
    /// What the next write holds: whole lines of this PE, maybe a piece of one at the end.
    batch: Vec<u8>,
}

impl Lines for PeOut {
    fn piece(&mut self, bytes: &[u8], start: bool) {
        if start {
            self.batch.extend_from_slice(self.prefix.as_bytes());
            if let Some(tail) = &self.how.tail {
                tail.push(bytes);
            }
        }
        self.batch.extend_from_slice(bytes);
    }

    fn lines(&mut self, bytes: &[u8], start: bool) {
        if self.how.prefix || self.how.tail.is_some() {
            let mut start = start;
            for line in bytes.split_inclusive(|&b| b == b'\n') {
                self.piece(line, start);
                start = true;
            }
        } else {
            // Nothing to do per line: the bytes pass as they are.
            self.batch.extend_from_slice(bytes);
        }
    }

    fn flush(&mut self) {
        write_out(self.how.to_stderr, &self.batch);
        self.batch.clear();
    }

    fn cut(&mut self) {
        // A PE's bytes pass as they are; a labelled line is ended, so that the next label
        // starts a line.
        if self.how.prefix {
            self.batch.push(b'\n');
        }
    }
}

/// Reads `pipe` to its end and hands it to `out` line by line ([`Lines::lines`],
/// [`Lines::piece`]), every batch read followed by [`Lines::flush`]: every whole line with its
/// newline, and a line of more than `cap` bytes in pieces of `cap`. With `wait`, a partial line that nothing follows for
/// that long is handed on and cut ([`Lines::cut`]; the rest of the line starts the next); at
/// the end of the pipe what is left is handed on and cut, without a newline added.
fn pump(mut pipe: impl Read + AsRawFd, cap: usize, wait: Option<Duration>, out: &mut impl Lines) {
    let fd = pipe.as_raw_fd();
    let mut buf = vec![0u8; cap];
    let mut len = 0;
    // Whether the next byte starts a line (else it continues one handed on in part).
    let mut line_start = true;
    loop {
        if len > 0
            && let Some(wait) = wait
            && !readable_within(fd, wait)
        {
            out.piece(&buf[..len], line_start);
            out.cut();
            out.flush();
            line_start = true;
            len = 0;
        }
        let old = len;
        match pipe.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
        // Only the new bytes can hold the first newline.
        let mut start = 0;
        if let Some(last) = buf[old..len].iter().rposition(|&b| b == b'\n') {
            let whole = old + last + 1;
            out.lines(&buf[..whole], line_start);
            line_start = true;
            start = whole;
        }
        buf.copy_within(start..len, 0);
        len -= start;
        if len == cap {
            out.piece(&buf[..len], line_start);
            line_start = false;
            len = 0;
        }
        out.flush();
    }
    if len > 0 {
        out.piece(&buf[..len], line_start);
        line_start = false;
    }
    if !line_start {
        out.cut();
    }
    out.flush();
}

/// Whether `fd` becomes readable (or reaches its end, or fails) within `wait`.
fn readable_within(fd: RawFd, wait: Duration) -> bool {
    let until = Instant::now() + wait;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // Rounded up, so that a wait of less than a millisecond does not spin.
        let ms = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int;
        // SAFETY: `p` is one live, exclusively borrowed pollfd; poll only writes its `revents`.
        let rc = unsafe { libc::poll(&mut p, 1, ms) };
        match rc {
            0 => return false,
            n if n > 0 => return true,
            _ if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
            // A failing poll leaves the decision to read, which reports the error.
            _ => return true,
        }
    }
}

/// The byte that starts a record of a PE's output in a host agent's stdout or stderr (ASCII
/// record separator: no program's text line starts with it in practice, and one that does is
/// shown as it is).
const MARK: u8 = 0x1e;

/// One record of PE `pe`'s output, for the agent's stdout or stderr: [`MARK`], the PE number,
/// a kind (`L` a whole line, `S` the first piece of one, `C` a middle piece, `E` the last) and
/// the bytes (without their newline), then a newline. The bytes of `L` and `E` are followed
/// by a newline in the PE's output, those of `S` and `C` are not.
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

/// The record (kind `Z`) that says PE `pe`'s line was cut after its last record (an `S` or `C`)
/// by a pause or the end of the stream ([`Lines::cut`]): with `--prefix` the launcher ends the
/// labelled line there, as it does for its own PEs; the agent's next record of the PE starts a
/// line.
pub fn cut_record(pe: usize) -> Vec<u8> {
    format!("{}{pe}Z\n", char::from(MARK)).into_bytes()
}

/// What a [`record`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Bytes of a line: from its start or not, ending it (a newline follows) or not.
    Piece { start: bool, end: bool },
    /// The PE's line was cut ([`cut_record`]).
    Cut,
}

/// The PE, the kind and the length of the header (before the bytes) of a [`record`] of one of
/// the PEs `pes` (`line` without its newline); `None` for anything else.
fn parse_record(line: &[u8], pes: &std::ops::Range<usize>) -> Option<(usize, Kind, usize)> {
    let rest = line.strip_prefix(&[MARK])?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let pe: usize = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    let piece = |start, end| Kind::Piece { start, end };
    let kind = match rest.get(digits)? {
        b'L' => piece(true, true),
        b'S' => piece(true, false),
        b'C' => piece(false, false),
        b'E' => piece(false, true),
        b'Z' if rest.len() == digits + 1 => Kind::Cut,
        _ => return None,
    };
    pes.contains(&pe).then_some((pe, kind, 1 + digits + 1))
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
    pipe: impl Read + AsRawFd + Send + 'static,
    notifier: Notifier,
) -> io::Result<()> {
    let name = format!(
        "agent{}-{}",
        how.pes.start,
        if how.to_stderr { "stderr" } else { "stdout" }
    );
    std::thread::Builder::new().name(name).spawn(move || {
        let mut out = AgentOut {
            batch: Vec::with_capacity(2 * MAX_PIECE),
            how,
        };
        // A record holds a piece of at most MAX_PIECE bytes and its header. Records come
        // whole (the agent forwards partial lines itself), so nothing waits for more here.
        pump(pipe, MAX_PIECE + 32, None, &mut out);
        for t in out.how.tails.iter().chain(&out.how.host_tail) {
            t.done.store(true, Ordering::Release);
        }
        notifier.send(Event::OutputDone);
    })?;
    Ok(())
}

/// A host agent's stdout or stderr, split by [`forward_tagged`].
struct AgentOut {
    how: Tagged,
    /// What the next write holds: whole records' lines, maybe a piece of one at the end.
    batch: Vec<u8>,
}

impl Lines for AgentOut {
    fn piece(&mut self, bytes: &[u8], start: bool) {
        let line = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let record = if start {
            parse_record(line, &self.how.pes)
        } else {
            None
        };
        match record {
            Some((pe, Kind::Piece { start, end }, header)) => {
                let body = &line[header..];
                if start && self.how.prefix {
                    self.batch
                        .extend_from_slice(format!("[PE {pe}] ").as_bytes());
                }
                self.batch.extend_from_slice(body);
                if end {
                    self.batch.push(b'\n');
                }
                let tail = self.how.tails.get(pe - self.how.pes.start);
                if let (true, true, Some(t)) = (start, self.how.to_stderr, tail) {
                    t.push(body);
                }
            }
            Some((_, Kind::Cut, _)) => {
                if self.how.prefix {
                    self.batch.push(b'\n');
                }
            }
            None => {
                self.batch.extend_from_slice(bytes);
                if let (true, Some(t)) = (start, &self.how.host_tail) {
                    t.push(bytes);
                }
            }
        }
    }

    fn flush(&mut self) {
        write_out(self.how.to_stderr, &self.batch);
        self.batch.clear();
    }

    fn cut(&mut self) {
        // Only at the end of the stream (records come whole): the agent's (or the start
        // command's) own last line, which a message is, is ended.
        self.batch.push(b'\n');
    }
}

/// Writes `bytes` to the launcher's stdout or stderr: under the lock, so that no other
/// forwarder's bytes come between. A closed stdout is not a reason to stop draining the PEs'
/// pipes.
fn write_out(to_stderr: bool, bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    fn write(w: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
        w.write_all(bytes)?;
        w.flush()
    }
    let _ = if to_stderr {
        write(&mut io::stderr().lock(), bytes)
    } else {
        write(&mut io::stdout().lock(), bytes)
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_name_their_pe_and_where_the_line_goes_on() {
        assert_eq!(record(3, b"hi", true, true), b"\x1e3Lhi\n");
        assert_eq!(record(12, b"", false, true), b"\x1e12E\n");
        let pes = 2..4;
        let piece = |start, end| Kind::Piece { start, end };
        assert_eq!(
            parse_record(b"\x1e3Lhi", &pes),
            Some((3, piece(true, true), 3))
        );
        assert_eq!(
            parse_record(b"\x1e2S", &pes),
            Some((2, piece(true, false), 3))
        );
        assert_eq!(
            parse_record(b"\x1e2C", &pes),
            Some((2, piece(false, false), 3))
        );
        assert_eq!(cut_record(3), b"\x1e3Z\n");
        assert_eq!(parse_record(b"\x1e3Z", &pes), Some((3, Kind::Cut, 3)));
        // Another host's PE, no PE, an unknown kind, bytes after Z, a plain line: not records.
        assert_eq!(parse_record(b"\x1e4Lhi", &pes), None);
        assert_eq!(parse_record(b"\x1eLhi", &pes), None);
        assert_eq!(parse_record(b"\x1e3Xhi", &pes), None);
        assert_eq!(parse_record(b"\x1e3Zhi", &pes), None);
        assert_eq!(parse_record(b"3Lhi", &pes), None);
    }

    /// What [`pump`] handed on: every piece, `^` before one that starts a line, and `|` for a
    /// cut; and the number of flushes.
    #[derive(Default)]
    struct Seen {
        pieces: Vec<String>,
        flushes: usize,
    }

    impl Lines for Seen {
        fn piece(&mut self, bytes: &[u8], start: bool) {
            let text = String::from_utf8_lossy(bytes);
            self.pieces
                .push(format!("{}{text}", if start { "^" } else { "" }));
        }
        fn cut(&mut self) {
            self.pieces.push("|".into());
        }
        fn flush(&mut self) {
            self.flushes += 1;
        }
    }

    /// Pumps what `writes` write, one `write(2)` each, with the pause before each (ms), through
    /// a socket pair, with pieces of at most `cap` bytes and partial lines waiting `wait`.
    fn pumped(writes: &[(u64, &str)], cap: usize, wait: Option<Duration>) -> Seen {
        let (r, mut w) = std::os::unix::net::UnixStream::pair().unwrap();
        let writes: Vec<(u64, String)> = writes.iter().map(|(p, t)| (*p, t.to_string())).collect();
        let writer = std::thread::spawn(move || {
            for (pause, text) in writes {
                std::thread::sleep(Duration::from_millis(pause));
                w.write_all(text.as_bytes()).unwrap();
            }
        });
        let mut seen = Seen::default();
        pump(r, cap, wait, &mut seen);
        writer.join().unwrap();
        seen
    }

    #[test]
    fn a_line_written_in_two_calls_comes_whole() {
        let wait = Some(Duration::from_secs(5));
        let seen = pumped(&[(0, "A pe=0"), (20, "\n"), (0, "B\nC")], 64, wait);
        // The end of the stream hands on the rest, without a newline, and cuts it.
        assert_eq!(seen.pieces, ["^A pe=0\n", "^B\n", "^C", "|"]);
    }

    #[test]
    fn a_partial_line_is_cut_after_the_wait_and_the_rest_starts_a_line() {
        let wait = Some(Duration::from_millis(30));
        let seen = pumped(&[(0, "name? "), (300, "bob\nnext"), (300, "\n")], 64, wait);
        assert_eq!(seen.pieces, ["^name? ", "|", "^bob\n", "^next", "|", "^\n"]);
        // Without a wait, a partial line waits for its newline.
        let seen = pumped(&[(0, "name? "), (100, "bob\n")], 64, None);
        assert_eq!(seen.pieces, ["^name? bob\n"]);
    }

    #[test]
    fn long_lines_go_in_pieces_and_whole_lines_in_batches() {
        let seen = pumped(&[(0, "0123456789abcdef\nxy\nz")], 8, None);
        assert_eq!(
            seen.pieces,
            ["^01234567", "89abcdef", "\n", "^xy\n", "^z", "|"]
        );
        // Whole lines read at once go out in one write (and the end flushes once more).
        let seen = pumped(&[(0, "a\nb\nc\n")], 64, None);
        assert_eq!(seen.pieces, ["^a\n", "^b\n", "^c\n"]);
        assert!(seen.flushes <= 2, "{}", seen.flushes);
        let seen = pumped(&[], 64, None);
        assert!(seen.pieces.is_empty());
    }
}
