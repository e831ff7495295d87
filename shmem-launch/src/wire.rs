//! The wire protocol between `shmemrun` and the PEs it starts: the environment variables, the
//! frames and the messages. The PE's side is [`client`](crate::client) and
//! [`watchdog`](crate::watchdog), the launcher's [`server`](crate::server); the proofs are
//! [`auth`](crate::auth)'s.
//!
//! # Frames
//!
//! Every message is one frame: a little-endian `u32` length `L`, then `L` bytes: a one-byte tag
//! followed by the message's payload. Integers are little-endian; byte strings are a `u32`
//! length followed by the bytes; text is UTF-8 byte strings; nonces and MACs are 32 raw bytes.
//! Each side caps what it accepts ([`MAX_HANDSHAKE_FRAME`] before a connection is
//! authenticated, [`MAX_FRAME`] after, [`max_table_frame`] for the launcher's tables) and drops
//! a connection that sends more.
//!
//! # Authentication
//!
//! Every job has a secret ([`auth::Secret`](crate::auth::Secret)) that the launcher gives its
//! PEs through `SHMEM_JOB_SECRET` (on other hosts: on the start command's standard input). On
//! every connection the launcher speaks first: [`Msg::Challenge`] with a fresh nonce. The PE's
//! hello carries a nonce of its own and an HMAC over both nonces and its fields; the launcher
//! checks it before it looks at anything else, closes a connection that fails at once, and
//! answers a good one with its own HMAC ([`Msg::Accepted`], or in [`Msg::Welcome`] on the
//! control connection), which the PE checks before it believes anything the launcher says.
//! Records (allgather blobs) end with a tag made with the sending PE's record key; every PE
//! checks every record it receives.
//!
//! # Conversation
//!
//! 1. The PE connects to `SHMEM_RENDEZVOUS`, reads [`Msg::Challenge`] and sends [`Msg::Hello`]
//!    with the protocol version, the job id, its PE number, the job size, its nonce and its MAC.
//!    The launcher answers [`Msg::Accepted`]. A wrong job id or version, a PE number out of range
//!    or already taken is then answered with [`Msg::Error`] and the connection is closed.
//! 2. Collectives: every PE sends [`Msg::Collective`] for epoch 0, 1, 2, ... in order. When all
//!    PEs have sent the same epoch, the launcher answers each with [`Msg::Table`] carrying every
//!    PE's blob, indexed by PE (an empty table for a barrier). The first collective is the
//!    rendezvous.
//!
//!    A [`CollectiveKind::SharedAllgather`] (the rendezvous of shmem-core) is answered once
//!    per node where the launcher knows the nodes
//!    ([`Server::set_nodes`](crate::server::Server::set_nodes)): the node's lowest PE that
//!    asked for it gets
//!    [`Msg::Lead`] and the [`Msg::Table`], publishes the table in a sealed memfd and answers
//!    [`Msg::Published`]; the node's other PEs then get [`Msg::TableAt`] and map it, or send
//!    [`Msg::Fetch`] and get the [`Msg::Table`] if they cannot. A leader that cannot publish
//!    (or leaves) makes the launcher send its node's PEs the table itself. See
//!    [`table`](crate::table).
//! 3. [`Msg::Finalize`] tells the launcher the PE has finalized cleanly; the connection stays
//!    open until the process exits. A PE that said hello and exits without it, while the job
//!    runs, ends the job.
//!
//! The launcher sends [`Msg::Error`] when the job cannot go on (rendezvous timeout, a PE that
//! left before finalizing while others wait, a protocol error); the PE turns it into an error.
//!
//! # The control connection
//!
//! Every PE started by `shmemrun` opens a second connection to the same address, served by a
//! watchdog thread of its own ([`watchdog`](crate::watchdog)), so that supervision never waits
//! for the program to call into the library and the synchronous connection above stays exactly
//! as it is.
//!
//! 1. The launcher sends [`Msg::Challenge`]; the PE sends [`Msg::ControlHello`] (version, job
//!    id, PE number, its pid, its nonce and MAC). The launcher checks it like a hello and answers
//!    [`Msg::Welcome`] with the heartbeat interval, the PE's heartbeat timeout and its own MAC,
//!    or [`Msg::Error`] and closes the connection.
//! 2. With a non-zero interval both sides send [`Msg::Heartbeat`] that often. The launcher counts
//!    a PE as unresponsive when it has heard nothing from it for `SHMEM_HEARTBEAT_TIMEOUT`; the
//!    PE gives up on the launcher after the (longer) timeout in the welcome, so that the
//!    launcher, which can name the silent host, normally speaks first.
//! 3. [`Msg::Abort`] from the launcher ends the PE: it writes the reason to stderr and exits
//!    with the status. End of stream, or no heartbeat within the timeout, ends it too, with a
//!    message naming the launcher's address.
//!
//! Jobs on one host use the connection without heartbeats (interval 0) unless
//! `shmemrun --heartbeat-timeout` asks for them: the launcher is the PEs' parent and watches
//! them with `waitpid`; see `shmem-run/src/job.rs`.
//!
//! # The host agent's connection
//!
//! With `shmemrun --hosts`, one agent per host (`shmemrun --host-agent`, started through the
//! start command) starts the host's PEs and holds the host's one connection to the launcher.
//! The PEs connect to the agent's local port as they would to the launcher, and the agent
//! relays every connection as a virtual connection of its own connection, so that the PEs'
//! handshakes, collectives and heartbeats stay end to end with the launcher:
//!
//! 1. The launcher sends [`Msg::Challenge`]; the agent answers [`Msg::AgentHello`] (version,
//!    job id, its node, its pid, its nonce and MAC on the agent channel); the launcher
//!    answers [`Msg::Accepted`] with its own proof, which the agent checks.
//! 2. A process connects to the agent: [`Msg::Open`]; its bytes travel in [`Msg::Relay`]
//!    frames both ways (whole frames from the agent, which passes nothing but one
//!    [`MAX_HANDSHAKE_FRAME`] hello until that hello's MAC proves the secret); either side
//!    ends it with [`Msg::Close`]. The launcher serves a virtual connection exactly like a
//!    TCP one, with the same limits.
//! 3. The agent reports every PE's end with [`Msg::Exited`] (after relaying what its
//!    connections held); the launcher ends the host's PEs with [`Msg::Stop`]. The agent ends
//!    its PEs when the connection ends, and exits when they are gone.

use crate::auth::{Nonce, Tag};

/// Environment variable: `host:port` of the launcher's rendezvous server.
pub const ENV_RENDEZVOUS: &str = "SHMEM_RENDEZVOUS";
/// Environment variable: this process's PE number.
pub const ENV_PE: &str = "SHMEM_PE";
/// Environment variable: the number of PEs in the job.
pub const ENV_NPES: &str = "SHMEM_NPES";
/// Environment variable: the job id (hexadecimal `u64`), which the launcher checks on hello. A
/// label, not a secret: it may appear on command lines.
pub const ENV_JOB_ID: &str = "SHMEM_JOB_ID";
/// Environment variable: the job secret, as [`Secret::to_hex`](crate::auth::Secret::to_hex)
/// writes it. Never on a command line: local PEs inherit it, PEs on other hosts read it from the
/// first line of their start command's standard input.
pub const ENV_JOB_SECRET: &str = "SHMEM_JOB_SECRET";
/// Environment variable: the rendezvous timeout in seconds (decimal, fractions allowed).
pub const ENV_INIT_TIMEOUT: &str = "SHMEM_INIT_TIMEOUT";
/// The rendezvous timeout when `SHMEM_INIT_TIMEOUT` is not set, in seconds.
pub const DEFAULT_INIT_TIMEOUT_SECS: f64 = 60.0;
/// Environment variable: the index of this PE's host (node) in the job, from 0.
pub const ENV_NODE: &str = "SHMEM_NODE";
/// Environment variable: the number of hosts (nodes) the job runs on.
pub const ENV_NNODES: &str = "SHMEM_NNODES";
/// Environment variable: this PE's index among the job's PEs on its host, from 0.
pub const ENV_LOCAL_RANK: &str = "SHMEM_LOCAL_RANK";
/// Environment variable: the number of the job's PEs on this PE's host.
pub const ENV_LOCAL_SIZE: &str = "SHMEM_LOCAL_SIZE";
/// Environment variable: `core` or `none`. For the launcher, the default of `shmemrun
/// --bind-to`; for a PE, whether it binds itself to one core at start-up (see
/// [`crate::affinity`]). A PE without it does not bind.
pub const ENV_BIND_TO: &str = "SHMEM_BIND_TO";
/// Environment variable (launcher): seconds without a heartbeat after which the launcher counts
/// a PE on another host as gone (also `shmemrun --heartbeat-timeout`).
pub const ENV_HEARTBEAT_TIMEOUT: &str = "SHMEM_HEARTBEAT_TIMEOUT";
/// The heartbeat timeout when `SHMEM_HEARTBEAT_TIMEOUT` is not set, in seconds.
pub const DEFAULT_HEARTBEAT_TIMEOUT_SECS: f64 = 3.0;
/// Time between heartbeats on the control connection of a multi-host job.
pub const HEARTBEAT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(500);

/// Version of this protocol, sent in [`Msg::Hello`] and [`Msg::ControlHello`].
pub const PROTOCOL_VERSION: u32 = 4;
/// Largest blob a PE may contribute to a collective, its tag included. A real record is a few
/// hundred bytes to a few KiB: shmem-core's start-up record is a 60-byte header, the UCX worker
/// address (about 0.1-1 KiB over TCP and shared memory, a few KiB with several InfiniBand
/// devices) and two packed rkeys (tens to hundreds of bytes each), plus the 32-byte tag; 1 MiB
/// leaves a margin of more than a hundred times.
pub const MAX_RECORD: usize = 1 << 20;
/// Largest frame the launcher accepts from an authenticated PE: one collective with the largest
/// record (header: tag, epoch, kind, length).
pub const MAX_FRAME: usize = MAX_RECORD + 64;
/// Largest frame either side accepts before the connection is authenticated (a challenge or a
/// hello: under 150 bytes).
pub const MAX_HANDSHAKE_FRAME: usize = 256;
/// Largest frame a PE accepts on its control connection (heartbeats, a welcome, an abort with
/// its reason).
pub const MAX_CONTROL_FRAME: usize = 64 * 1024;
/// Largest table the launcher sends: the sum of one collective's records. A collective whose
/// records add up to more fails with an error for every PE.
pub const MAX_TABLE: usize = 256 << 20;

/// Largest [`Msg::Table`] frame a PE of an `npes`-PE job accepts (also bounds [`Msg::Error`]).
pub fn max_table_frame(npes: usize) -> usize {
    let framing = 64usize.saturating_add(npes.saturating_mul(4));
    framing.saturating_add(npes.saturating_mul(MAX_RECORD).min(MAX_TABLE))
}

/// [`Msg::Error`] code: not every PE reached the rendezvous in time.
pub const ERR_TIMEOUT: u8 = 1;
/// [`Msg::Error`] code: any other failure.
pub const ERR_OTHER: u8 = 0;

/// What a [`Msg::Collective`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollectiveKind {
    /// Every PE contributes a blob and receives all of them.
    Allgather,
    /// No data; returns when every PE has arrived.
    Barrier,
    /// An allgather whose table may come as a node-shared memfd
    /// ([`table`](crate::table)): the PE takes part in [`Msg::Lead`], [`Msg::Published`],
    /// [`Msg::TableAt`] and [`Msg::Fetch`].
    SharedAllgather,
}

impl CollectiveKind {
    /// Human-readable name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            CollectiveKind::Allgather | CollectiveKind::SharedAllgather => "an allgather",
            CollectiveKind::Barrier => "a barrier",
        }
    }
}

/// One message of the protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg {
    /// Launcher -> PE, first frame on every connection: the nonce the PE's hello must prove
    /// the secret over.
    Challenge {
        /// Fresh random bytes.
        nonce: Nonce,
    },
    /// PE -> launcher, first frame on a connection (after reading the challenge).
    Hello {
        /// [`PROTOCOL_VERSION`] of the sender.
        version: u32,
        /// The job id from `SHMEM_JOB_ID`.
        job_id: u64,
        /// The sender's PE number.
        pe: u32,
        /// The job size the sender believes in.
        npes: u32,
        /// The PE's own fresh nonce (for the launcher's proof).
        nonce: Nonce,
        /// [`auth::hello_mac`](crate::auth::hello_mac) over the challenge, `nonce` and
        /// [`hello_fields`].
        mac: Tag,
    },
    /// Launcher -> PE: the hello proved the secret; `mac` is
    /// [`auth::launcher_mac`](crate::auth::launcher_mac), the launcher's proof.
    Accepted {
        /// The launcher's proof.
        mac: Tag,
    },
    /// PE -> launcher: contribution to collective number `epoch`.
    Collective {
        /// Sequence number of the collective, from 0.
        epoch: u64,
        /// Allgather or barrier.
        kind: CollectiveKind,
        /// The contribution (empty for a barrier).
        blob: Vec<u8>,
    },
    /// Launcher -> PE: collective `epoch` is complete.
    Table {
        /// Sequence number of the collective.
        epoch: u64,
        /// Every PE's blob, indexed by PE (empty for a barrier).
        blobs: Vec<Vec<u8>>,
    },
    /// PE -> launcher: this PE finalized cleanly; its exit is expected.
    Finalize,
    /// PE -> launcher: end every PE of the job; the launcher exits with `status`.
    GlobalExit {
        /// The exit status the PE passed to `global_exit`.
        status: i32,
    },
    /// Launcher -> PE: the job cannot go on.
    Error {
        /// [`ERR_TIMEOUT`] or [`ERR_OTHER`].
        code: u8,
        /// What happened, for the user.
        detail: String,
    },
    /// PE -> launcher, first frame on the control connection.
    ControlHello {
        /// [`PROTOCOL_VERSION`] of the sender.
        version: u32,
        /// The job id from `SHMEM_JOB_ID`.
        job_id: u64,
        /// The sender's PE number.
        pe: u32,
        /// The sender's process id on its host (for the launcher's messages).
        pid: u32,
        /// The PE's own fresh nonce (for the launcher's proof).
        nonce: Nonce,
        /// [`auth::hello_mac`](crate::auth::hello_mac) over the challenge, `nonce` and
        /// [`control_fields`].
        mac: Tag,
    },
    /// Launcher -> PE on the control connection: accepted; how to keep in touch.
    Welcome {
        /// Milliseconds between heartbeats; 0: no heartbeats.
        interval_ms: u32,
        /// Milliseconds without a word from the launcher after which the PE gives up; 0: never.
        timeout_ms: u32,
        /// The launcher's proof, [`auth::launcher_mac`](crate::auth::launcher_mac).
        mac: Tag,
    },
    /// Either way on the control connection: still here.
    Heartbeat,
    /// Launcher -> PE on the control connection: the job is over; exit now with `status`.
    Abort {
        /// The exit status the PE should exit with (the launcher's own).
        status: i32,
        /// Why, for the PE's stderr.
        reason: String,
    },
    /// Launcher -> PE, before the [`Msg::Table`] of a [`CollectiveKind::SharedAllgather`]:
    /// this PE leads its node; after checking the table it publishes it for the node's other
    /// PEs and answers [`Msg::Published`].
    Lead {
        /// Sequence number of the collective.
        epoch: u64,
    },
    /// Leader -> launcher: the table of collective `epoch` is this process's descriptor `fd`
    /// (a sealed memfd of `len` bytes); `fd` is `u32::MAX` when it could not be published.
    Published {
        /// Sequence number of the collective.
        epoch: u64,
        /// The leader's process id.
        pid: u32,
        /// The memfd's descriptor in the leader, or `u32::MAX`.
        fd: u32,
        /// The memfd's size in bytes.
        len: u64,
    },
    /// Launcher -> PE: the table of collective `epoch` is published by process `pid` of this
    /// node as its descriptor `fd` of `len` bytes (see [`table`](crate::table)).
    TableAt {
        /// Sequence number of the collective.
        epoch: u64,
        /// The leader's process id.
        pid: u32,
        /// The memfd's descriptor in the leader.
        fd: u32,
        /// The memfd's size in bytes.
        len: u64,
    },
    /// PE -> launcher: the published table of collective `epoch` could not be used; send it
    /// as a [`Msg::Table`].
    Fetch {
        /// Sequence number of the collective.
        epoch: u64,
    },
    /// Host agent -> launcher, first frame on the agent's connection (see [the agent's
    /// connection](self#the-host-agents-connection)).
    AgentHello {
        /// [`PROTOCOL_VERSION`] of the sender.
        version: u32,
        /// The job id from `SHMEM_JOB_ID`.
        job_id: u64,
        /// The agent's node (host index, `SHMEM_NODE`).
        node: u32,
        /// The agent's process id on its host.
        pid: u32,
        /// The agent's own fresh nonce (for the launcher's proof).
        nonce: Nonce,
        /// [`auth::hello_mac`](crate::auth::hello_mac) over the challenge, `nonce` and
        /// [`agent_fields`], on [`Channel::Agent`](crate::auth::Channel::Agent).
        mac: Tag,
    },
    /// Agent -> launcher: a process on the agent's host opened virtual connection `conn` (a
    /// connection to the agent's local port); the launcher answers on it with a challenge.
    Open {
        /// The agent's number for the connection.
        conn: u32,
    },
    /// Either way: bytes of virtual connection `conn`, to be read as if they came on a
    /// connection of their own (the agent sends whole frames; the launcher sends any bytes).
    Relay {
        /// The virtual connection.
        conn: u32,
        /// The bytes (the rest of the frame: no length of their own).
        data: Vec<u8>,
    },
    /// Either way: virtual connection `conn` ended (the process closed it, or the launcher
    /// dropped it).
    Close {
        /// The virtual connection.
        conn: u32,
    },
    /// Agent -> launcher: PE `pe`, process `pid` of the agent's host, ended with the wait
    /// status `status` (as `waitpid` gives it). Sent after everything the PE's connections
    /// still held was relayed.
    Exited {
        /// The PE.
        pe: u32,
        /// Its process id on the host.
        pid: u32,
        /// The raw wait status.
        status: i32,
    },
    /// Launcher -> agent: the job is over; end the host's PEs (SIGTERM, then SIGKILL).
    Stop {
        /// The launcher's exit status.
        status: i32,
    },
}

const TAG_HELLO: u8 = 1;
const TAG_COLLECTIVE: u8 = 2;
const TAG_TABLE: u8 = 3;
const TAG_FINALIZE: u8 = 4;
const TAG_ERROR: u8 = 5;
const TAG_GLOBAL_EXIT: u8 = 6;
const TAG_CONTROL_HELLO: u8 = 7;
const TAG_WELCOME: u8 = 8;
const TAG_HEARTBEAT: u8 = 9;
const TAG_ABORT: u8 = 10;
const TAG_CHALLENGE: u8 = 11;
const TAG_ACCEPTED: u8 = 12;
const TAG_LEAD: u8 = 13;
const TAG_PUBLISHED: u8 = 14;
const TAG_TABLE_AT: u8 = 15;
const TAG_FETCH: u8 = 16;
const TAG_AGENT_HELLO: u8 = 17;
const TAG_OPEN: u8 = 18;
const TAG_RELAY: u8 = 19;
const TAG_CLOSE: u8 = 20;
const TAG_EXITED: u8 = 21;
const TAG_STOP: u8 = 22;

/// Bytes of a [`Msg::Relay`] frame before its data: the length, the tag and the connection.
pub const RELAY_HEADER: usize = 9;

/// The first [`RELAY_HEADER`] bytes of the [`Msg::Relay`] frame of `len` bytes of data for
/// connection `conn`, so that a frame already encoded (a table shared by many PEs) can be
/// relayed by sending this header and then the frame, without copying it.
///
/// ```
/// use shmem_launch::wire::{Msg, relay_header};
///
/// let inner = Msg::Heartbeat.encode();
/// let mut frame = relay_header(7, inner.len()).to_vec();
/// frame.extend_from_slice(&inner);
/// assert_eq!(frame, Msg::Relay { conn: 7, data: inner }.encode());
/// ```
pub fn relay_header(conn: u32, len: usize) -> [u8; RELAY_HEADER] {
    let mut h = [0u8; RELAY_HEADER];
    // A relayed frame is at most a table frame (`max_table_frame`), below u32::MAX.
    h[..4].copy_from_slice(&((len + RELAY_HEADER - 4) as u32).to_le_bytes());
    h[4] = TAG_RELAY;
    h[5..].copy_from_slice(&conn.to_le_bytes());
    h
}

/// Largest frame the launcher accepts from an authenticated host agent: a relayed frame of up
/// to [`MAX_FRAME`] bytes with its length prefix, behind the relay header.
pub const MAX_AGENT_FRAME: usize = MAX_FRAME + 4 + RELAY_HEADER;

/// The fields of a [`Msg::AgentHello`] that its MAC covers, in order.
pub fn agent_fields(version: u32, job_id: u64, node: u32, pid: u32) -> Vec<u8> {
    hello_fields(version, job_id, node, pid)
}

/// The fields of a [`Msg::Hello`] that its MAC covers, in order.
pub fn hello_fields(version: u32, job_id: u64, pe: u32, npes: u32) -> Vec<u8> {
    let mut f = Vec::with_capacity(20);
    f.extend_from_slice(&version.to_le_bytes());
    f.extend_from_slice(&job_id.to_le_bytes());
    f.extend_from_slice(&pe.to_le_bytes());
    f.extend_from_slice(&npes.to_le_bytes());
    f
}

/// The fields of a [`Msg::ControlHello`] that its MAC covers, in order.
pub fn control_fields(version: u32, job_id: u64, pe: u32, pid: u32) -> Vec<u8> {
    hello_fields(version, job_id, pe, pid)
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    // Blobs are bounded by MAX_FRAME, far below u32::MAX.
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

impl Msg {
    /// Encodes the message as one complete frame (length prefix included).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![0u8; 4];
        match self {
            Msg::Challenge { nonce } => {
                out.push(TAG_CHALLENGE);
                out.extend_from_slice(nonce);
            }
            Msg::Hello {
                version,
                job_id,
                pe,
                npes,
                nonce,
                mac,
            } => {
                out.push(TAG_HELLO);
                out.extend_from_slice(&hello_fields(*version, *job_id, *pe, *npes));
                out.extend_from_slice(nonce);
                out.extend_from_slice(mac);
            }
            Msg::Accepted { mac } => {
                out.push(TAG_ACCEPTED);
                out.extend_from_slice(mac);
            }
            Msg::Collective { epoch, kind, blob } => {
                out.push(TAG_COLLECTIVE);
                out.extend_from_slice(&epoch.to_le_bytes());
                out.push(match kind {
                    CollectiveKind::Allgather => 0,
                    CollectiveKind::Barrier => 1,
                    CollectiveKind::SharedAllgather => 2,
                });
                put_bytes(&mut out, blob);
            }
            Msg::Table { epoch, blobs } => {
                out.push(TAG_TABLE);
                out.extend_from_slice(&epoch.to_le_bytes());
                out.extend_from_slice(&(blobs.len() as u32).to_le_bytes());
                for blob in blobs {
                    put_bytes(&mut out, blob);
                }
            }
            Msg::Finalize => out.push(TAG_FINALIZE),
            Msg::GlobalExit { status } => {
                out.push(TAG_GLOBAL_EXIT);
                out.extend_from_slice(&status.to_le_bytes());
            }
            Msg::Error { code, detail } => {
                out.push(TAG_ERROR);
                out.push(*code);
                put_bytes(&mut out, detail.as_bytes());
            }
            Msg::ControlHello {
                version,
                job_id,
                pe,
                pid,
                nonce,
                mac,
            } => {
                out.push(TAG_CONTROL_HELLO);
                out.extend_from_slice(&control_fields(*version, *job_id, *pe, *pid));
                out.extend_from_slice(nonce);
                out.extend_from_slice(mac);
            }
            Msg::Welcome {
                interval_ms,
                timeout_ms,
                mac,
            } => {
                out.push(TAG_WELCOME);
                out.extend_from_slice(&interval_ms.to_le_bytes());
                out.extend_from_slice(&timeout_ms.to_le_bytes());
                out.extend_from_slice(mac);
            }
            Msg::Heartbeat => out.push(TAG_HEARTBEAT),
            Msg::Abort { status, reason } => {
                out.push(TAG_ABORT);
                out.extend_from_slice(&status.to_le_bytes());
                put_bytes(&mut out, reason.as_bytes());
            }
            Msg::Lead { epoch } => {
                out.push(TAG_LEAD);
                out.extend_from_slice(&epoch.to_le_bytes());
            }
            Msg::Fetch { epoch } => {
                out.push(TAG_FETCH);
                out.extend_from_slice(&epoch.to_le_bytes());
            }
            Msg::Published {
                epoch,
                pid,
                fd,
                len,
            }
            | Msg::TableAt {
                epoch,
                pid,
                fd,
                len,
            } => {
                out.push(if matches!(self, Msg::Published { .. }) {
                    TAG_PUBLISHED
                } else {
                    TAG_TABLE_AT
                });
                out.extend_from_slice(&epoch.to_le_bytes());
                out.extend_from_slice(&pid.to_le_bytes());
                out.extend_from_slice(&fd.to_le_bytes());
                out.extend_from_slice(&len.to_le_bytes());
            }
            Msg::AgentHello {
                version,
                job_id,
                node,
                pid,
                nonce,
                mac,
            } => {
                out.push(TAG_AGENT_HELLO);
                out.extend_from_slice(&agent_fields(*version, *job_id, *node, *pid));
                out.extend_from_slice(nonce);
                out.extend_from_slice(mac);
            }
            Msg::Open { conn } | Msg::Close { conn } => {
                out.push(if matches!(self, Msg::Open { .. }) {
                    TAG_OPEN
                } else {
                    TAG_CLOSE
                });
                out.extend_from_slice(&conn.to_le_bytes());
            }
            Msg::Relay { conn, data } => {
                out.push(TAG_RELAY);
                out.extend_from_slice(&conn.to_le_bytes());
                out.extend_from_slice(data);
            }
            Msg::Exited { pe, pid, status } => {
                out.push(TAG_EXITED);
                out.extend_from_slice(&pe.to_le_bytes());
                out.extend_from_slice(&pid.to_le_bytes());
                out.extend_from_slice(&status.to_le_bytes());
            }
            Msg::Stop { status } => {
                out.push(TAG_STOP);
                out.extend_from_slice(&status.to_le_bytes());
            }
        }
        let len = (out.len() - 4) as u32;
        out[..4].copy_from_slice(&len.to_le_bytes());
        out
    }

    /// Decodes the body of one frame (tag and payload, without the length prefix).
    pub fn decode(body: &[u8]) -> Result<Msg, String> {
        let mut r = Reader { buf: body, pos: 0 };
        let msg = match r.u8()? {
            TAG_CHALLENGE => Msg::Challenge { nonce: r.array()? },
            TAG_HELLO => Msg::Hello {
                version: r.u32()?,
                job_id: r.u64()?,
                pe: r.u32()?,
                npes: r.u32()?,
                nonce: r.array()?,
                mac: r.array()?,
            },
            TAG_ACCEPTED => Msg::Accepted { mac: r.array()? },
            TAG_COLLECTIVE => {
                let epoch = r.u64()?;
                let kind = match r.u8()? {
                    0 => CollectiveKind::Allgather,
                    1 => CollectiveKind::Barrier,
                    2 => CollectiveKind::SharedAllgather,
                    k => return Err(format!("unknown collective kind {k}")),
                };
                Msg::Collective {
                    epoch,
                    kind,
                    blob: r.bytes()?.to_vec(),
                }
            }
            TAG_TABLE => {
                let epoch = r.u64()?;
                let n = r.u32()? as usize;
                // Each blob takes at least 4 bytes: do not trust `n` for the allocation.
                let mut blobs = Vec::with_capacity(n.min(body.len() / 4));
                for _ in 0..n {
                    blobs.push(r.bytes()?.to_vec());
                }
                Msg::Table { epoch, blobs }
            }
            TAG_FINALIZE => Msg::Finalize,
            TAG_GLOBAL_EXIT => Msg::GlobalExit {
                status: r.u32()? as i32,
            },
            TAG_ERROR => {
                let code = r.u8()?;
                let detail = String::from_utf8_lossy(r.bytes()?).into_owned();
                Msg::Error { code, detail }
            }
            TAG_CONTROL_HELLO => Msg::ControlHello {
                version: r.u32()?,
                job_id: r.u64()?,
                pe: r.u32()?,
                pid: r.u32()?,
                nonce: r.array()?,
                mac: r.array()?,
            },
            TAG_WELCOME => Msg::Welcome {
                interval_ms: r.u32()?,
                timeout_ms: r.u32()?,
                mac: r.array()?,
            },
            TAG_HEARTBEAT => Msg::Heartbeat,
            TAG_ABORT => {
                let status = r.u32()? as i32;
                let reason = String::from_utf8_lossy(r.bytes()?).into_owned();
                Msg::Abort { status, reason }
            }
            TAG_LEAD => Msg::Lead { epoch: r.u64()? },
            TAG_FETCH => Msg::Fetch { epoch: r.u64()? },
            TAG_PUBLISHED => Msg::Published {
                epoch: r.u64()?,
                pid: r.u32()?,
                fd: r.u32()?,
                len: r.u64()?,
            },
            TAG_TABLE_AT => Msg::TableAt {
                epoch: r.u64()?,
                pid: r.u32()?,
                fd: r.u32()?,
                len: r.u64()?,
            },
            TAG_AGENT_HELLO => Msg::AgentHello {
                version: r.u32()?,
                job_id: r.u64()?,
                node: r.u32()?,
                pid: r.u32()?,
                nonce: r.array()?,
                mac: r.array()?,
            },
            TAG_OPEN => Msg::Open { conn: r.u32()? },
            TAG_CLOSE => Msg::Close { conn: r.u32()? },
            TAG_RELAY => {
                let conn = r.u32()?;
                let data = r.take(body.len() - r.pos)?.to_vec();
                Msg::Relay { conn, data }
            }
            TAG_EXITED => Msg::Exited {
                pe: r.u32()?,
                pid: r.u32()?,
                status: r.u32()? as i32,
            },
            TAG_STOP => Msg::Stop {
                status: r.u32()? as i32,
            },
            t => return Err(format!("unknown message tag {t}")),
        };
        if r.pos != body.len() {
            return Err(format!(
                "{} trailing bytes after a message",
                body.len() - r.pos
            ));
        }
        Ok(msg)
    }
}

/// Accumulates bytes from a nonblocking stream and cuts them into frames, refusing frames
/// longer than its limit (a bad length is an error as soon as the length prefix arrives, and
/// [`fill_from`](Self::fill_from) never buffers more than one frame's worth).
///
/// ```
/// use shmem_launch::wire::{FrameBuf, Msg};
///
/// let mut frames = FrameBuf::default();
/// frames.extend(&Msg::Heartbeat.encode());
/// frames.extend(&Msg::GlobalExit { status: 3 }.encode()[..6]); // part of a frame
/// assert_eq!(frames.next_msg()?, Some(Msg::Heartbeat));
/// assert_eq!(frames.next_msg()?, None);
/// assert_eq!(frames.buffered(), 6);
///
/// let mut small = FrameBuf::with_limit(16);
/// small.extend(&1000u32.to_le_bytes());
/// assert!(small.next_msg().is_err());
/// # Ok::<(), String>(())
/// ```
#[derive(Debug)]
pub struct FrameBuf {
    buf: Vec<u8>,
    limit: usize,
}

impl Default for FrameBuf {
    /// A buffer for frames of up to [`MAX_FRAME`] bytes.
    fn default() -> Self {
        FrameBuf::with_limit(MAX_FRAME)
    }
}

impl FrameBuf {
    /// A buffer for frames of up to `limit` bytes (length prefix not counted).
    pub fn with_limit(limit: usize) -> FrameBuf {
        FrameBuf {
            buf: Vec::new(),
            limit,
        }
    }

    /// Changes the largest frame accepted from now on (e.g. once a connection is authenticated).
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
    }

    /// The largest frame accepted.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Appends received bytes.
    pub fn extend(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Appends what a nonblocking `stream` holds now, up to one frame's worth beyond what is
    /// buffered (the rest stays in the socket for the next call); `Ok(false)` at the end of the
    /// stream, `Ok(true)` otherwise.
    pub fn fill_from(&mut self, stream: &mut impl std::io::Read) -> std::io::Result<bool> {
        let mut chunk = [0u8; 16 * 1024];
        let most = self.limit.saturating_add(4);
        while self.buf.len() < most {
            let room = (most - self.buf.len()).min(chunk.len());
            match stream.read(&mut chunk[..room]) {
                Ok(0) => return Ok(false),
                Ok(n) => self.extend(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(true),
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Takes the next complete frame out of the buffer, if there is one. A frame length of 0 or
    /// over the limit is an error as soon as its prefix is buffered.
    pub fn next_msg(&mut self) -> Result<Option<Msg>, String> {
        let Some(len) = self.complete_frame()? else {
            return Ok(None);
        };
        let msg = Msg::decode(&self.buf[4..4 + len]);
        self.buf.drain(..4 + len);
        msg.map(Some)
    }

    /// Takes the next complete frame out of the buffer undecoded, its length prefix included
    /// (for a relay that passes frames on); the same checks of the length as
    /// [`next_msg`](Self::next_msg).
    pub fn next_frame(&mut self) -> Result<Option<Vec<u8>>, String> {
        let Some(len) = self.complete_frame()? else {
            return Ok(None);
        };
        Ok(Some(self.buf.drain(..4 + len).collect()))
    }

    /// The payload length of the first frame when all of it is buffered (`None` while it is
    /// not); a length of 0 or over the limit is an error as soon as its prefix is buffered.
    fn complete_frame(&self) -> Result<Option<usize>, String> {
        if self.buf.len() < 4 {
            return Ok(None);
        }
        let len = u32::from_le_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
        if len == 0 || len > self.limit {
            return Err(format!(
                "bad frame length {len} (the limit here is {})",
                self.limit
            ));
        }
        Ok((self.buf.len() >= 4 + len).then_some(len))
    }

    /// Whether bytes of an incomplete frame are buffered.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The number of bytes buffered.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }
}

/// Reads one frame's payload.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.buf.len() - self.pos < n {
            return Err("truncated message".to_string());
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, String> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }
    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
}

/// Parses a timeout in seconds (`"60"`, `"0.5"`), as in `SHMEM_INIT_TIMEOUT` and `--init-timeout`.
pub fn parse_timeout_secs(s: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    // Below a millisecond a timeout would round to nothing (1e-91 became a zero timeout: found
    // by the settings fuzz target).
    if !secs.is_finite() || !(1e-3..=1e9).contains(&secs) {
        return Err(format!(
            "{s:?} must be a number of seconds from 0.001 to 1000000000"
        ));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// Milliseconds of `d` for a [`Msg::Welcome`], saturating.
pub fn millis_u32(d: std::time::Duration) -> u32 {
    d.as_millis().min(u128::from(u32::MAX)) as u32
}

/// PE numbers for messages: `"1, 4"`; runs of three or more consecutive numbers as `"0-99"`, so
/// that a message about a whole host's PEs stays short (`"0-99, 200-299"`).
pub fn pe_list(pes: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < pes.len() {
        let mut j = i;
        while j + 1 < pes.len() && pes[j].checked_add(1) == Some(pes[j + 1]) {
            j += 1;
        }
        if j - i >= 2 {
            out.push(format!("{}-{}", pes[i], pes[j]));
        } else {
            out.extend(pes[i..=j].iter().map(|p| p.to_string()));
        }
        i = j + 1;
    }
    out.join(", ")
}

/// Formats a duration in seconds for messages (`"10 s"`, `"0.5 s"`).
pub fn secs(d: std::time::Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pe_lists_fold_runs_of_three_or_more() {
        assert_eq!(pe_list(&[]), "");
        assert_eq!(pe_list(&[3]), "3");
        assert_eq!(pe_list(&[2, 3]), "2, 3");
        assert_eq!(pe_list(&[0, 1, 2, 5, 7, 8, 9, 10]), "0-2, 5, 7-10");
        let host: Vec<usize> = (0..100).chain(200..300).collect();
        assert_eq!(pe_list(&host), "0-99, 200-299");
        assert_eq!(
            pe_list(&[usize::MAX - 1, usize::MAX]),
            format!("{}, {}", usize::MAX - 1, usize::MAX)
        );
    }

    #[test]
    fn roundtrip_every_message() {
        let msgs = [
            Msg::Challenge { nonce: [9; 32] },
            Msg::Hello {
                version: 1,
                job_id: u64::MAX - 3,
                pe: 7,
                npes: 8,
                nonce: [1; 32],
                mac: [2; 32],
            },
            Msg::Accepted { mac: [3; 32] },
            Msg::Collective {
                epoch: 3,
                kind: CollectiveKind::Allgather,
                blob: vec![1, 2, 3],
            },
            Msg::Collective {
                epoch: 4,
                kind: CollectiveKind::Barrier,
                blob: vec![],
            },
            Msg::Table {
                epoch: 9,
                blobs: vec![vec![], vec![5; 300], vec![1]],
            },
            Msg::Finalize,
            Msg::GlobalExit { status: -3 },
            Msg::GlobalExit { status: 7 },
            Msg::Error {
                code: ERR_TIMEOUT,
                detail: "PEs 2 of 3 late".into(),
            },
            Msg::ControlHello {
                version: PROTOCOL_VERSION,
                job_id: 42,
                pe: 3,
                pid: 4567,
                nonce: [4; 32],
                mac: [5; 32],
            },
            Msg::Welcome {
                interval_ms: 500,
                timeout_ms: 4000,
                mac: [6; 32],
            },
            Msg::Heartbeat,
            Msg::Abort {
                status: 137,
                reason: "PE 3 on host b was killed by signal 9 (SIGKILL)".into(),
            },
            Msg::AgentHello {
                version: PROTOCOL_VERSION,
                job_id: 42,
                node: 3,
                pid: 99,
                nonce: [7; 32],
                mac: [8; 32],
            },
            Msg::Open { conn: 5 },
            Msg::Relay {
                conn: 5,
                data: Msg::Heartbeat.encode(),
            },
            Msg::Relay {
                conn: u32::MAX,
                data: vec![],
            },
            Msg::Close { conn: 5 },
            Msg::Exited {
                pe: 9,
                pid: 1234,
                status: 0x8b,
            },
            Msg::Stop { status: -1 },
        ];
        let stream: Vec<u8> = msgs.iter().flat_map(Msg::encode).collect();
        // Byte-by-byte frame buffer.
        let mut fb = FrameBuf::default();
        let mut got = Vec::new();
        for b in stream {
            fb.extend(&[b]);
            while let Some(m) = fb.next_msg().unwrap() {
                got.push(m);
            }
        }
        assert_eq!(got, msgs);
        assert!(fb.is_empty());
    }

    #[test]
    fn garbage_is_rejected() {
        assert!(Msg::decode(&[]).is_err());
        assert!(Msg::decode(&[99]).is_err());
        assert!(Msg::decode(&[TAG_HELLO, 1, 2]).is_err());
        assert!(Msg::decode(&[TAG_FINALIZE, 0]).is_err());
        assert!(Msg::decode(&[TAG_HEARTBEAT, 0]).is_err());
        assert!(Msg::decode(&[TAG_WELCOME, 1, 2, 3]).is_err());
        let mut fb = FrameBuf::default();
        fb.extend(&[0, 0, 0, 0]);
        assert!(fb.next_msg().is_err());
        let mut fb = FrameBuf::default();
        fb.extend(&u32::MAX.to_le_bytes());
        assert!(fb.next_msg().is_err());
        // Over the limit: refused from the length prefix alone.
        let mut fb = FrameBuf::with_limit(MAX_HANDSHAKE_FRAME);
        fb.extend(&((MAX_HANDSHAKE_FRAME + 1) as u32).to_le_bytes());
        assert!(fb.next_msg().is_err());
        // A hello fits the handshake limit.
        let hello = Msg::Hello {
            version: PROTOCOL_VERSION,
            job_id: 1,
            pe: 0,
            npes: 1,
            nonce: [0; 32],
            mac: [0; 32],
        };
        assert!(hello.encode().len() - 4 <= MAX_HANDSHAKE_FRAME);
    }

    #[test]
    fn fill_reads_at_most_one_frame_ahead() {
        // A stream of 10 MB: only the limit's worth is taken.
        let mut stream = std::io::Cursor::new(vec![7u8; 10 << 20]);
        let mut fb = FrameBuf::with_limit(1000);
        assert!(fb.fill_from(&mut stream).unwrap());
        assert_eq!(fb.buffered(), 1004);
        assert!(fb.next_msg().is_err());
        assert!(max_table_frame(1) > MAX_RECORD);
        assert!(max_table_frame(1_000_000) <= u32::MAX as usize);
    }

    #[test]
    fn timeouts_parse() {
        assert_eq!(parse_timeout_secs("60").unwrap().as_secs(), 60);
        assert_eq!(parse_timeout_secs(" 0.25 ").unwrap().as_millis(), 250);
        for bad in ["", "x", "0", "-1", "inf", "NaN", "1e-91", "0.0009", "2e9"] {
            assert!(parse_timeout_secs(bad).is_err(), "{bad}");
        }
        // The smallest timeout is a millisecond, not one that rounds to zero.
        assert_eq!(parse_timeout_secs("0.001").unwrap().as_millis(), 1);
        assert_eq!(pe_list(&[2, 5]), "2, 5");
    }
}
