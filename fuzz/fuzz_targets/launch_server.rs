//! The launcher's rendezvous server (framing, handshake, admission, collectives, control
//! connections) driven as its clients see it: a real `Server` on 127.0.0.1, polled from this
//! thread, and up to 8 TCP clients that connect, say hello (right and wrong in many ways),
//! send messages and raw bytes, half-close and close, in the order the input says.
//!
//! Input: a configuration byte, then operations (an opcode byte and its operands; see `op`).
//! Checks: no panic in the server; every frame the server sends decodes; a notice names only
//! PEs of the job.
#![no_main]

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use shmem_fuzz::Input;
use shmem_launch::auth::{self, Channel, Nonce, Secret};
use shmem_launch::server::{Notice, Server};
use shmem_launch::wire::{self, CollectiveKind, FrameBuf, Msg, PROTOCOL_VERSION, max_table_frame};

const JOB: u64 = 0x5eed;
const MAX_CLIENTS: usize = 8;

fn secret() -> Secret {
    Secret::from_hex(&"5a".repeat(32)).expect("a valid secret")
}

/// One client connection.
struct Client {
    stream: TcpStream,
    frames: FrameBuf,
    challenge: Option<Nonce>,
    /// The PE number its last hello claimed.
    pe: u32,
    /// The server closed it, or a read failed.
    ended: bool,
}

impl Client {
    /// Reads what the server sent; every frame must decode.
    fn read(&mut self) {
        let mut buf = [0u8; 8192];
        while !self.ended {
            match self.stream.read(&mut buf) {
                Ok(0) => self.ended = true,
                Ok(n) => self.frames.extend(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => self.ended = true,
            }
        }
        loop {
            match self.frames.next_msg() {
                Ok(Some(Msg::Challenge { nonce })) => self.challenge = Some(nonce),
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => panic!("the server sent a bad frame: {e}"),
            }
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        // Blocking for the write (small: the socket buffer takes it), errors ignored: the
        // server may have closed the connection.
        let _ = self.stream.set_nonblocking(false);
        let _ = self.stream.write_all(bytes);
        let _ = self.stream.set_nonblocking(true);
    }

    /// Closes with a reset (no TIME_WAIT left behind by millions of runs).
    fn reset(self) {
        let linger = libc::linger {
            l_onoff: 1,
            l_linger: 0,
        };
        // SAFETY: a valid socket and a `linger` struct of the size given.
        unsafe {
            libc::setsockopt(
                self.stream.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                (&raw const linger).cast(),
                size_of::<libc::linger>() as libc::socklen_t,
            )
        };
    }
}

struct Run {
    server: Server,
    addr: String,
    npes: usize,
    secret: Secret,
    clients: Vec<Client>,
}

impl Run {
    fn poll(&mut self, rounds: usize) {
        for _ in 0..rounds {
            let notices = self.server.poll(None, Duration::ZERO).expect("poll");
            self.check(notices);
        }
        for c in &mut self.clients {
            c.read();
        }
    }

    fn check(&self, notices: Vec<Notice>) {
        for n in notices {
            match n {
                Notice::GlobalExit { pe, .. }
                | Notice::Silent { pe, .. }
                | Notice::ControlLost { pe, .. }
                | Notice::Exited { pe, .. } => assert!(pe < self.npes, "{n:?}"),
                _ => {}
            }
        }
    }

    /// Waits (briefly) for client `i`'s challenge.
    fn challenge(&mut self, i: usize) -> Option<Nonce> {
        for _ in 0..50 {
            if let Some(n) = self.clients[i].challenge {
                return Some(n);
            }
            if self.clients[i].ended {
                return None;
            }
            let notices = self
                .server
                .poll(None, Duration::from_millis(1))
                .expect("poll");
            self.check(notices);
            self.clients[i].read();
        }
        None
    }

    fn hello(&mut self, i: usize, input: &mut Input<'_>) {
        let Some(challenge) = self.challenge(i) else {
            return;
        };
        let variant = input.u8() % 8;
        let pe = u32::from(input.u8()) % (self.npes as u32 + 1);
        let mine = [input.u8(); 32];
        let (mut version, mut job, mut npes) = (PROTOCOL_VERSION, JOB, self.npes as u32);
        match variant {
            2 => job ^= 1,
            3 => version += 1,
            4 => npes += 1,
            _ => {}
        }
        let control = variant == 1;
        let fields = if control {
            wire::control_fields(version, job, pe, npes)
        } else {
            wire::hello_fields(version, job, pe, npes)
        };
        let channel = match (control, variant) {
            (true, _) | (false, 6) => Channel::Control,
            _ => Channel::Rendezvous,
        };
        let proved = if variant == 7 { [0; 32] } else { challenge };
        let mut mac = auth::hello_mac(&self.secret, channel, &proved, &mine, &fields);
        if variant == 5 {
            mac[input.u8() as usize % 32] ^= 1;
        }
        let msg = if control {
            Msg::ControlHello {
                version,
                job_id: job,
                pe,
                pid: npes,
                nonce: mine,
                mac,
            }
        } else {
            Msg::Hello {
                version,
                job_id: job,
                pe,
                npes,
                nonce: mine,
                mac,
            }
        };
        self.clients[i].pe = pe;
        self.clients[i].send(&msg.encode());
    }

    fn collective(&mut self, i: usize, input: &mut Input<'_>) {
        let epoch = u64::from(input.u8() % 4);
        let kind = match input.u8() % 3 {
            0 => CollectiveKind::Allgather,
            1 => CollectiveKind::Barrier,
            _ => CollectiveKind::SharedAllgather,
        };
        let bad_tag = input.u8() % 8 == 0;
        let mut blob = input.short().to_vec();
        if kind != CollectiveKind::Barrier || !blob.is_empty() {
            let pe = self.clients[i].pe;
            let mut tag = auth::record_key(&self.secret, pe).tag(JOB, epoch, &blob);
            if bad_tag {
                tag[0] ^= 1;
            }
            blob.extend_from_slice(&tag);
        }
        self.clients[i].send(&Msg::Collective { epoch, kind, blob }.encode());
    }

    fn other(&mut self, i: usize, input: &mut Input<'_>) {
        let epoch = u64::from(input.u8() % 4);
        let msg = match input.u8() % 12 {
            0 => Msg::Finalize,
            1 => Msg::GlobalExit {
                status: input.u32() as i32,
            },
            2 => Msg::Heartbeat,
            3 => Msg::Published {
                epoch,
                pid: std::process::id(),
                fd: input.u32() % 4 * (u32::MAX / 3),
                len: input.u64() % 4096,
            },
            4 => Msg::Fetch { epoch },
            5 => Msg::Lead { epoch },
            6 => Msg::Table {
                epoch,
                blobs: vec![input.short().to_vec()],
            },
            7 => Msg::Challenge { nonce: [1; 32] },
            8 => Msg::Error {
                code: input.u8(),
                detail: String::from_utf8_lossy(input.short()).into_owned(),
            },
            9 => Msg::Abort {
                status: 1,
                reason: String::new(),
            },
            10 => Msg::TableAt {
                epoch,
                pid: 1,
                fd: 3,
                len: 8,
            },
            _ => Msg::Accepted { mac: [0; 32] },
        };
        self.clients[i].send(&msg.encode());
    }

    /// One operation; `false` when the input is used up.
    fn op(&mut self, input: &mut Input<'_>) -> bool {
        if input.is_empty() {
            return false;
        }
        let code = input.u8();
        let which = |input: &mut Input<'_>, n: usize| input.choose(n);
        let n = self.clients.len();
        match code % 12 {
            0 if n < MAX_CLIENTS => {
                if let Ok(s) = TcpStream::connect(&self.addr) {
                    let _ = s.set_nonblocking(true);
                    self.clients.push(Client {
                        stream: s,
                        frames: FrameBuf::with_limit(max_table_frame(self.npes)),
                        challenge: None,
                        pe: 0,
                        ended: false,
                    });
                }
            }
            1 if n > 0 => {
                let i = which(input, n);
                self.hello(i, input);
            }
            2 if n > 0 => {
                let i = which(input, n);
                self.collective(i, input);
            }
            3 if n > 0 => {
                let i = which(input, n);
                self.other(i, input);
            }
            4 if n > 0 => {
                let i = which(input, n);
                let bytes = input.short();
                self.clients[i].send(bytes);
            }
            5 if n > 0 => {
                // A frame header claiming a length, then part of the body.
                let i = which(input, n);
                let mut bytes = input.u32().to_le_bytes().to_vec();
                bytes.extend_from_slice(input.short());
                self.clients[i].send(&bytes);
            }
            6 if n > 0 => {
                let i = which(input, n);
                let _ = self.clients[i].stream.shutdown(Shutdown::Write);
            }
            7 if n > 0 => {
                let i = which(input, n);
                let c = self.clients.swap_remove(i);
                if input.u8() % 2 == 0 {
                    c.reset();
                }
            }
            8 => {
                let pe = which(input, self.npes + 1);
                let notices = self.server.pe_exited(pe);
                self.check(notices);
            }
            9 => match input.u8() % 4 {
                0 => {
                    let _ = self.server.stranded();
                }
                1 => {
                    let _ = self.server.stranded_now();
                }
                2 => self.server.abort("fuzz: abort"),
                _ => self.server.abort_all(input.u8() as i32, "fuzz: abort_all"),
            },
            _ => {
                let rounds = 1 + input.u8() as usize % 3;
                self.poll(rounds);
            }
        }
        true
    }
}

fuzz_target!(|data: &[u8]| {
    static IGNORE_SIGPIPE: std::sync::Once = std::sync::Once::new();
    // SAFETY: sets a signal disposition; libFuzzer's main does not do it as Rust's would.
    IGNORE_SIGPIPE.call_once(|| unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    });
    let mut input = Input::new(data);
    let config = input.u8();
    let npes = 1 + (config % 4) as usize;
    let timeout = if config & 0x10 != 0 {
        Duration::from_millis(2)
    } else {
        Duration::from_secs(60)
    };
    let secret = secret();
    let Ok(mut server) = Server::bind("127.0.0.1:0", JOB, secret.clone(), npes, timeout) else {
        return;
    };
    if config & 0x20 != 0 {
        server.set_timeouts(Duration::from_millis(1), Duration::from_millis(1));
    }
    if config & 0x40 != 0 {
        server.set_heartbeat(
            Duration::from_millis(1),
            Duration::from_millis(3),
            Duration::from_millis(10),
        );
    }
    if config & 0x80 != 0 {
        // Two PEs per node.
        let nodes = (0..npes).map(|pe| pe / 2).collect();
        server.set_nodes(nodes).expect("one node per PE");
    }
    let addr = server.local_addr().expect("bound").to_string();
    let mut run = Run {
        server,
        addr,
        npes,
        secret,
        clients: Vec::new(),
    };
    let mut ops = 0;
    while ops < 64 && run.op(&mut input) {
        ops += 1;
    }
    run.poll(2);
    for c in run.clients.drain(..) {
        c.reset();
    }
});
