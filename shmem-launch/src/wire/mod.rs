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

// Where things are (everything public is re-exported here): the environment in `env.rs`; the
// messages in `msg.rs` and their bytes in `codec.rs`; the frame limits and the frame buffer in
// `frames.rs`; values written in messages (PE lists, durations) in `text.rs`.
mod codec;
mod env;
mod frames;
mod msg;
mod text;

pub use codec::{
    MAX_AGENT_FRAME, RELAY_HEADER, agent_fields, control_fields, hello_fields, relay_header,
};
pub use env::{
    DEFAULT_HEARTBEAT_TIMEOUT_SECS, DEFAULT_INIT_TIMEOUT_SECS, ENV_BIND_TO, ENV_HEARTBEAT_TIMEOUT,
    ENV_INIT_TIMEOUT, ENV_JOB_ID, ENV_JOB_SECRET, ENV_LOCAL_RANK, ENV_LOCAL_SIZE, ENV_NNODES,
    ENV_NODE, ENV_NPES, ENV_PE, ENV_RENDEZVOUS, HEARTBEAT_INTERVAL, parse_timeout_secs,
};
pub use frames::{
    FrameBuf, MAX_CONTROL_FRAME, MAX_FRAME, MAX_HANDSHAKE_FRAME, MAX_RECORD, MAX_TABLE,
    max_table_frame,
};
pub use msg::{CollectiveKind, ERR_OTHER, ERR_TIMEOUT, Msg, PROTOCOL_VERSION};
pub use text::{millis_u32, pe_list, secs};
