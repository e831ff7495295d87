//! Events from the helper threads to the main loop: an mpsc channel plus a socket pair whose
//! read end the main loop polls together with the rendezvous sockets.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};

/// What a helper thread saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The process of this PE exited; it is a zombie until the main loop reaps it.
    Exited(usize),
    /// The launcher received this signal.
    Signal(i32),
    /// A forwarded output pipe reached its end.
    OutputDone,
}

/// The sending side, cloned into every helper thread.
#[derive(Debug, Clone)]
pub struct Notifier {
    tx: Sender<Event>,
    wake: Arc<UnixStream>,
}

impl Notifier {
    /// Sends `ev` and wakes the main loop.
    pub fn send(&self, ev: Event) {
        // The receiver lives as long as the main loop; after that nobody cares.
        let _ = self.tx.send(ev);
        // Nonblocking: if the socket is full, the main loop is awake anyway.
        let _ = (&*self.wake).write(&[1]);
    }
}

/// The main loop's side.
#[derive(Debug)]
pub struct Inbox {
    /// Events, in order.
    pub rx: Receiver<Event>,
    /// Becomes readable when events are queued; poll it, then call [`Inbox::drain_wake`].
    pub wake: UnixStream,
}

impl Inbox {
    /// Empties the wake-up socket.
    pub fn drain_wake(&self) {
        let mut buf = [0u8; 256];
        while matches!((&self.wake).read(&mut buf), Ok(n) if n > 0) {}
    }
}

/// Creates a connected notifier and inbox.
pub fn channel() -> io::Result<(Notifier, Inbox)> {
    let (tx, rx) = mpsc::channel();
    let (wake_rx, wake_tx) = UnixStream::pair()?;
    wake_rx.set_nonblocking(true)?;
    wake_tx.set_nonblocking(true)?;
    Ok((
        Notifier {
            tx,
            wake: Arc::new(wake_tx),
        },
        Inbox { rx, wake: wake_rx },
    ))
}
