//! The launch protocol's framing and messages as either side reads them: arbitrary bytes, cut
//! into arbitrary chunks (with `WouldBlock` and `Interrupted` between them), through a
//! `FrameBuf` of each limit the launcher and the PEs use, and `Msg::decode` of the whole input.
//!
//! Input: a limit selector, a chunking seed, then the stream. Checks: no panic; a frame over the
//! limit is an error as soon as its prefix is in; the buffer never holds more than one frame
//! beyond the limit; every decoded message encodes to a frame that decodes to it again; the
//! raw frames a host agent relays (`FrameBuf::next_frame`) are the frames `next_msg` decodes,
//! and a relay's header (`relay_header`) followed by its data is the relay's own encoding.
#![no_main]

use std::io::{self, Read};

use libfuzzer_sys::fuzz_target;
use shmem_fuzz::Input;
use shmem_launch::wire::{
    FrameBuf, MAX_AGENT_FRAME, MAX_CONTROL_FRAME, MAX_FRAME, MAX_HANDSHAKE_FRAME, Msg,
    max_table_frame, relay_header,
};

/// A nonblocking stream: hands out `data` in chunks whose sizes come from `seed`, with a
/// `WouldBlock` or an `Interrupted` between some of them.
struct Trickle<'a> {
    data: &'a [u8],
    seed: u32,
    blocked: bool,
}

impl Trickle<'_> {
    fn next(&mut self) -> u32 {
        // xorshift32: cheap, deterministic.
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 17;
        self.seed ^= self.seed << 5;
        self.seed
    }
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let r = self.next();
        if !self.blocked && r % 5 == 0 {
            self.blocked = true;
            let kind = if r % 2 == 0 {
                io::ErrorKind::WouldBlock
            } else {
                io::ErrorKind::Interrupted
            };
            return Err(kind.into());
        }
        self.blocked = false;
        let n = (r as usize % 300 + 1).min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn check_msg(msg: &Msg) {
    let frame = msg.encode();
    let len = u32::from_le_bytes(frame[..4].try_into().unwrap()) as usize;
    assert_eq!(len + 4, frame.len(), "{msg:?}: the length prefix is wrong");
    assert_eq!(
        Msg::decode(&frame[4..]).as_ref(),
        Ok(msg),
        "a message does not survive encode and decode"
    );
    if let Msg::Relay { conn, data } = msg {
        let mut relayed = relay_header(*conn, data.len()).to_vec();
        relayed.extend_from_slice(data);
        assert_eq!(relayed, frame, "a relay header and its data are not the relay");
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let limit = match input.u8() % 6 {
        0 => MAX_HANDSHAKE_FRAME,
        1 => MAX_CONTROL_FRAME,
        2 => MAX_FRAME,
        3 => max_table_frame(4),
        4 => 16,
        _ => MAX_AGENT_FRAME,
    };
    let seed = input.u32() | 1;
    let stream = input.rest();

    // The whole stream as one frame body.
    if let Ok(msg) = Msg::decode(stream) {
        check_msg(&msg);
    }

    let mut frames = FrameBuf::with_limit(limit);
    let mut src = Trickle {
        data: stream,
        seed,
        blocked: false,
    };
    loop {
        let open = match frames.fill_from(&mut src) {
            Ok(open) => open,
            Err(e) => {
                assert_eq!(e.kind(), io::ErrorKind::Other, "unexpected error {e}");
                break;
            }
        };
        assert!(
            frames.buffered() <= limit + 4,
            "{} bytes buffered with a limit of {limit}",
            frames.buffered()
        );
        let mut failed = false;
        loop {
            match frames.next_msg() {
                Ok(Some(msg)) => check_msg(&msg),
                Ok(None) => break,
                Err(_) => {
                    failed = true;
                    break;
                }
            }
        }
        if failed || !open {
            break;
        }
    }

    // Raw frames, as a host agent takes them: the same frames, the same errors.
    let mut raw = FrameBuf::with_limit(limit);
    let mut cooked = FrameBuf::with_limit(limit);
    raw.extend(stream);
    cooked.extend(stream);
    loop {
        match (raw.next_frame(), cooked.next_msg()) {
            (Ok(Some(frame)), Ok(Some(msg))) => {
                assert_eq!(Msg::decode(&frame[4..]).as_ref(), Ok(&msg));
            }
            (Ok(Some(frame)), Err(_)) => assert!(Msg::decode(&frame[4..]).is_err()),
            (Ok(None), Ok(None)) | (Err(_), Err(_)) => break,
            (r, c) => panic!("next_frame gave {r:?} where next_msg gave {c:?}"),
        }
    }
});
