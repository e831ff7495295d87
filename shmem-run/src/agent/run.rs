//! The agent's main loop: one `poll` over the listener, the launcher's connection, the local
//! connections, the PEs' pipes and the agent's own stdout and stderr; then reaping, and the
//! end, which hands the launcher everything before the agent exits.

use std::io::{Read, Write};
use std::net::Shutdown;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

use super::{Agent, LINGER, OUTPUT_HIGH, REAP_EVERY, UPSTREAM_HIGH};

impl Agent {
    /// The main loop; returns the exit status.
    pub(super) fn run(&mut self) -> i32 {
        let mut done_at: Option<Instant> = None;
        loop {
            self.poll_once();
            self.record_idle_partials();
            self.reap();
            // The exits go out now, not a round later.
            self.write_up();
            if self.kill_at.is_some_and(|t| Instant::now() >= t) {
                self.kill_at = None;
                self.signal_all(libc::SIGKILL);
            }
            if self.all_reaped() {
                let outputs_open = self.pes.iter().any(|p| p.pipes.iter().any(|o| o.open));
                let until = *done_at.get_or_insert_with(|| Instant::now() + LINGER);
                if !outputs_open || Instant::now() >= until {
                    break;
                }
            }
        }
        self.finish();
        self.status
    }

    /// Sends what is left to the launcher and waits (bounded) for it to close the connection,
    /// so that everything was read before the agent's exit is seen.
    fn finish(&mut self) {
        for (i, p) in self.pes.iter_mut().enumerate() {
            for o in &mut p.pipes {
                o.record_cut(&mut self.sinks, self.first_pe + i);
            }
        }
        for sink in &mut self.sinks {
            sink.drain();
        }
        let Some(up) = self.up.take() else {
            return;
        };
        let until = Instant::now() + LINGER;
        let _ = up.set_nonblocking(false);
        let _ = up.set_write_timeout(Some(LINGER));
        let bytes: Vec<u8> = self.up_out.drain(..).collect();
        let mut w = &up;
        if w.write_all(&bytes).is_err() {
            return;
        }
        let _ = up.shutdown(Shutdown::Write);
        let mut scratch = [0u8; 4096];
        let mut r = &up;
        while Instant::now() < until {
            let _ = up.set_read_timeout(Some(until.saturating_duration_since(Instant::now())));
            match r.read(&mut scratch) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    }

    /// One round: waits for activity (at most [`REAP_EVERY`]) and handles it.
    fn poll_once(&mut self) {
        let mut fds = Vec::new();
        let mut what = Vec::new();
        let pollin = |fd: RawFd, out: bool| libc::pollfd {
            fd,
            events: libc::POLLIN | if out { libc::POLLOUT } else { 0 },
            revents: 0,
        };
        fds.push(pollin(self.listener.as_raw_fd(), false));
        what.push(Slot::Listener);
        if let Some(up) = &self.up {
            fds.push(pollin(up.as_raw_fd(), !self.up_out.is_empty()));
            what.push(Slot::Up);
        }
        let reading = self.up_out.len() < UPSTREAM_HIGH;
        for (&id, l) in &self.locals {
            let mut p = pollin(l.stream.as_raw_fd(), !l.out.is_empty());
            if !reading {
                p.events &= !libc::POLLIN;
            }
            fds.push(p);
            what.push(Slot::Local(id));
        }
        for (k, sink) in self.sinks.iter().enumerate() {
            if !sink.buf.is_empty() {
                fds.push(libc::pollfd {
                    fd: sink.fd,
                    events: libc::POLLOUT,
                    revents: 0,
                });
                what.push(Slot::Sink(k));
            }
        }
        let output_room = self.sinks.iter().all(|s| s.buf.len() < OUTPUT_HIGH);
        for (i, p) in self.pes.iter().enumerate() {
            for (j, o) in p.pipes.iter().enumerate() {
                if o.open && output_room {
                    fds.push(pollin(o.fd.as_raw_fd(), false));
                    what.push(Slot::Output(i, j));
                }
            }
        }
        let ms = REAP_EVERY.as_millis() as libc::c_int;
        // SAFETY: `fds` is a live, exclusively borrowed array of `fds.len()` initialized pollfd
        // structs; poll only writes their `revents` fields.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if rc <= 0 {
            self.expire_strangers();
            return;
        }
        for (p, w) in fds.iter().zip(what) {
            if p.revents == 0 {
                continue;
            }
            match w {
                Slot::Listener => self.accept(),
                Slot::Up => self.read_up(),
                Slot::Local(id) => {
                    self.read_local(id, reading);
                    self.write_local(id);
                }
                Slot::Output(i, j) => self.read_output(i, j),
                Slot::Sink(k) => self.sinks[k].flush(),
            }
        }
        for sink in &mut self.sinks {
            sink.flush();
        }
        self.write_up();
        self.expire_strangers();
    }
}

/// What a descriptor in the poll set is.
#[derive(Clone, Copy)]
enum Slot {
    Listener,
    Up,
    Local(u32),
    Output(usize, usize),
    Sink(usize),
}
