//! The agent's one connection to the launcher: what goes up (relayed frames, opens, closes,
//! exits), what comes down (relayed frames, closes, [`Msg::Stop`]), and its loss, which ends
//! the host's PEs.

use std::io::{self, Write};

use shmem_launch::wire::Msg;

use super::Agent;
use super::locals::first_challenge;

impl Agent {
    pub(super) fn send_up(&mut self, msg: &Msg) {
        if self.up.is_some() {
            self.up_out.extend(msg.encode());
        }
    }

    /// Reads what the launcher sent (at most one frame ahead) and acts on it.
    pub(super) fn read_up(&mut self) {
        let Some(up) = self.up.as_mut() else {
            return;
        };
        let open = self.up_frames.fill_from(up);
        loop {
            match self.up_frames.next_msg() {
                Ok(Some(Msg::Relay { conn, data })) => {
                    if let Some(l) = self.locals.get_mut(&conn) {
                        if l.challenge.is_none() {
                            l.head.extend_from_slice(&data);
                            l.challenge = first_challenge(&l.head);
                            if l.challenge.is_some() {
                                l.head = Vec::new();
                            }
                        }
                        l.out.extend(data);
                        self.write_local(conn);
                    }
                }
                Ok(Some(Msg::Close { conn })) => {
                    if let Some(l) = self.locals.get_mut(&conn) {
                        l.closing = true;
                        self.write_local(conn);
                    }
                }
                Ok(Some(Msg::Stop { .. })) => self.stop(),
                Ok(Some(other)) => {
                    return self.lost(&format!("unexpected {other:?} from the launcher"));
                }
                Ok(None) => break,
                Err(e) => return self.lost(&format!("protocol error: {e}")),
            }
        }
        match open {
            Ok(true) => {}
            Ok(false) => self.lost(""),
            Err(e) => self.lost(&e.to_string()),
        }
    }

    pub(super) fn write_up(&mut self) {
        let Some(up) = self.up.as_mut() else {
            return;
        };
        while !self.up_out.is_empty() {
            let (a, _) = self.up_out.as_slices();
            match up.write(a) {
                Ok(0) => break,
                Ok(n) => {
                    self.up_out.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return self.lost(&e.to_string()),
            }
        }
    }

    /// The connection to the launcher ended (`why` empty: closed): the PEs end.
    fn lost(&mut self, why: &str) {
        self.up = None;
        self.up_out.clear();
        self.locals.clear();
        if !self.all_reaped() && !self.stopping {
            if !why.is_empty() {
                agent_say!(
                    self.node,
                    "lost the connection to the launcher at {} ({why}); ending the host's PEs",
                    self.launcher
                );
            }
            self.stop();
        }
    }
}
