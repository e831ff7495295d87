//! The PEs' output: their stdout and stderr read line by line and written, without blocking,
//! to the agent's own as tagged records ([`output::record`]) that the launcher splits per PE.
//! A partial line is recorded and cut once nothing more came for [`PARTIAL_LINE_WAIT`], and at
//! the end of the pipe, as the launcher does with its own PEs' output (`output`).

use std::collections::VecDeque;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, RawFd};
use std::process::{ChildStderr, ChildStdout};
use std::time::Instant;

use crate::output::{self, MAX_PIECE, PARTIAL_LINE_WAIT};

use super::Agent;

/// A PE's stdout or stderr being forwarded as records.
pub(super) struct OutPipe {
    pub(super) fd: Box<dyn ReadFd>,
    pub(super) to_stderr: bool,
    pub(super) buf: Vec<u8>,
    /// Whether the next byte starts a line.
    pub(super) line_start: bool,
    pub(super) open: bool,
    /// When the last bytes came (`buf` holds a partial line since).
    pub(super) last_read: Instant,
}

impl OutPipe {
    /// A PE's stdout or stderr (`to_stderr`), just opened.
    pub(super) fn new(fd: Box<dyn ReadFd>, to_stderr: bool) -> OutPipe {
        OutPipe {
            fd,
            to_stderr,
            buf: Vec::new(),
            line_start: true,
            open: true,
            last_read: Instant::now(),
        }
    }

    /// A pause after a partial line, or the end of the stream: records what is left of the
    /// line and, if it was not at its end, that it was cut ([`output::cut_record`]).
    pub(super) fn record_cut(&mut self, sinks: &mut [Sink; 2], pe: usize) {
        if !self.buf.is_empty() {
            emit(sinks, pe, self.to_stderr, &self.buf, self.line_start, false);
            self.buf.clear();
            self.line_start = false;
        }
        if !self.line_start {
            let sink = &mut sinks[usize::from(self.to_stderr)];
            if !sink.broken {
                sink.buf.extend(output::cut_record(pe));
            }
            self.line_start = true;
        }
    }
}

/// The agent's stdout or stderr, written without blocking from what its PEs wrote.
pub(super) struct Sink {
    pub(super) fd: RawFd,
    pub(super) buf: VecDeque<u8>,
    /// Writing failed for good (the reader is gone): what comes is dropped.
    broken: bool,
}

impl Sink {
    pub(super) fn new(fd: RawFd) -> Sink {
        set_nonblocking(fd, true);
        Sink {
            fd,
            buf: VecDeque::new(),
            broken: false,
        }
    }

    /// Writes what the descriptor takes now.
    pub(super) fn flush(&mut self) {
        while !self.buf.is_empty() && !self.broken {
            let (a, _) = self.buf.as_slices();
            // SAFETY: writes at most `a.len()` bytes from `a`, a live slice, to a descriptor
            // of this process (its stdout or stderr).
            let n = unsafe { libc::write(self.fd, a.as_ptr().cast(), a.len()) };
            if n > 0 {
                self.buf.drain(..n as usize);
                continue;
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::WouldBlock => return,
                _ => self.broken = true,
            }
        }
        if self.broken {
            self.buf.clear();
        }
    }

    /// Writes everything left, waiting (the agent is about to exit).
    pub(super) fn drain(&mut self) {
        set_nonblocking(self.fd, false);
        self.flush();
    }
}

/// A pipe that can be read and polled.
pub(super) trait ReadFd: Read + AsRawFd {}
impl ReadFd for ChildStdout {}
impl ReadFd for ChildStderr {}

impl Agent {
    /// Forwards what PE index `i`'s pipe `j` holds as records.
    pub(super) fn read_output(&mut self, i: usize, j: usize) {
        let pe = self.first_pe + i;
        let o = &mut self.pes[i].pipes[j];
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match o.fd.read(&mut chunk) {
                Ok(0) => {
                    o.open = false;
                    break;
                }
                Ok(n) => {
                    o.last_read = Instant::now();
                    o.buf.extend_from_slice(&chunk[..n]);
                    let mut start = 0;
                    while let Some(at) = o.buf[start..].iter().position(|&b| b == b'\n') {
                        let end = start + at;
                        let line = &o.buf[start..end];
                        emit(&mut self.sinks, pe, o.to_stderr, line, o.line_start, true);
                        o.line_start = true;
                        start = end + 1;
                    }
                    o.buf.drain(..start);
                    while o.buf.len() >= MAX_PIECE {
                        let piece = &o.buf[..MAX_PIECE];
                        emit(&mut self.sinks, pe, o.to_stderr, piece, o.line_start, false);
                        o.line_start = false;
                        o.buf.drain(..MAX_PIECE);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(_) => {
                    o.open = false;
                    break;
                }
            }
        }
        o.record_cut(&mut self.sinks, pe);
    }

    /// Records (and cuts) the partial lines that nothing followed for [`PARTIAL_LINE_WAIT`].
    pub(super) fn record_idle_partials(&mut self) {
        let now = Instant::now();
        for (i, p) in self.pes.iter_mut().enumerate() {
            for o in &mut p.pipes {
                if !o.buf.is_empty() && now.duration_since(o.last_read) >= PARTIAL_LINE_WAIT {
                    o.record_cut(&mut self.sinks, self.first_pe + i);
                }
            }
        }
    }
}

/// Queues one record of PE `pe`'s output for the agent's stdout or stderr (`sinks`). A reader
/// that is gone is not a reason to stop (the launcher's end is seen on the connection).
/// Records of at most [`MAX_PIECE`] bytes each (the launcher reads no longer ones), the last
/// one ending the line when `end`.
pub(super) fn emit(
    sinks: &mut [Sink; 2],
    pe: usize,
    to_stderr: bool,
    bytes: &[u8],
    start: bool,
    end: bool,
) {
    let sink = &mut sinks[usize::from(to_stderr)];
    if sink.broken {
        return;
    }
    let mut start = start;
    let mut rest = bytes;
    while rest.len() > MAX_PIECE {
        sink.buf
            .extend(output::record(pe, &rest[..MAX_PIECE], start, false));
        start = false;
        rest = &rest[MAX_PIECE..];
    }
    sink.buf.extend(output::record(pe, rest, start, end));
}

/// Sets or clears `O_NONBLOCK` on `fd`.
pub(super) fn set_nonblocking(fd: RawFd, on: bool) {
    // SAFETY: fcntl on a descriptor this process owns (its stdout or stderr, or a pipe of its
    // child); no memory is involved.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            let flags = if on {
                flags | libc::O_NONBLOCK
            } else {
                flags & !libc::O_NONBLOCK
            };
            libc::fcntl(fd, libc::F_SETFL, flags);
        }
    }
}
