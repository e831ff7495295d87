//! The messages of the protocol ([`Msg`]), the kinds of collective, the error codes and the
//! protocol's version. Their bytes are in `codec.rs`.

use crate::auth::{Nonce, Tag};

/// Version of this protocol, sent in [`Msg::Hello`] and [`Msg::ControlHello`].
pub const PROTOCOL_VERSION: u32 = 4;

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
        /// [`hello_fields`](super::hello_fields).
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
        /// [`control_fields`](super::control_fields).
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
    /// connection](super#the-host-agents-connection)).
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
        /// [`agent_fields`](super::agent_fields), on
        /// [`Channel::Agent`](crate::auth::Channel::Agent).
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
