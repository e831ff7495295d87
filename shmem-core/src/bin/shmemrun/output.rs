//! `--prefix`: forwards a PE's stdout or stderr line by line as `[PE i] line`.

use std::io::{self, BufRead, BufReader, Read, Write};

use crate::events::{Event, Notifier};

/// Starts a thread that copies `pipe` to the launcher's stdout (or stderr with `to_stderr`),
/// prefixing every line, and reports [`Event::OutputDone`] at the end of the pipe.
pub fn forward(
    pe: usize,
    pipe: impl Read + Send + 'static,
    to_stderr: bool,
    notifier: Notifier,
) -> io::Result<()> {
    let name = format!("pe{pe}-{}", if to_stderr { "stderr" } else { "stdout" });
    std::thread::Builder::new().name(name).spawn(move || {
        let prefix = format!("[PE {pe}] ");
        let mut reader = BufReader::new(pipe);
        let mut line = Vec::new();
        loop {
            line.clear();
            line.extend_from_slice(prefix.as_bytes());
            match reader.read_until(b'\n', &mut line) {
                Ok(0) => break,
                Ok(_) => {
                    if !line.ends_with(b"\n") {
                        line.push(b'\n');
                    }
                    // One write per line under the lock, so lines of different PEs do not mix.
                    // A closed stdout is not a reason to stop draining the PE's pipe.
                    let _ = if to_stderr {
                        write_line(&mut io::stderr().lock(), &line)
                    } else {
                        write_line(&mut io::stdout().lock(), &line)
                    };
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        notifier.send(Event::OutputDone);
    })?;
    Ok(())
}

fn write_line(w: &mut impl Write, line: &[u8]) -> io::Result<()> {
    w.write_all(line)?;
    w.flush()
}
