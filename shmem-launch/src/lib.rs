//! The launch protocol of shmem-rs: how `shmemrun` starts the PEs of a job, how they meet at
//! start-up, and how the launcher supervises them. Both sides live here, so that they speak
//! exactly the same protocol:
//!
//! - [`wire`]: the environment `shmemrun` gives every PE, and the frames and messages of the
//!   conversation;
//! - [`auth`]: the job secret and the HMAC-SHA256 proofs made with it (connections and records);
//! - [`client`]: the PE's side: [`LaunchEnv`](client::LaunchEnv) reads the environment,
//!   [`Client`](client::Client) says hello and runs the start-up collectives;
//! - [`watchdog`]: the PE's supervision thread, on a control connection of its own;
//! - [`affinity`]: the PE's binding to one core of its host;
//! - [`server`]: the launcher's rendezvous server, a state machine that the launcher drives;
//! - [`table`]: an allgather's records, held by the PE or shared by the PEs of a node.
//!
//! shmem-core's `init` uses the client and the watchdog; the `shmemrun` binary (package
//! `shmem-run`) uses the server. The crate needs `std`, `libc`, and `hmac` with `sha2` for the
//! proofs.
//!
//! # Start-up
//!
//! `shmemrun` starts every PE with `SHMEM_RENDEZVOUS` (the launcher's `host:port`), `SHMEM_PE`,
//! `SHMEM_NPES`, `SHMEM_JOB_ID`, `SHMEM_JOB_SECRET`, `SHMEM_INIT_TIMEOUT`, `SHMEM_NODE` (the
//! index of the PE's host), `SHMEM_NNODES` (the number of hosts), `SHMEM_LOCAL_RANK` and
//! `SHMEM_LOCAL_SIZE` (the PE's index among its host's PEs, and their number) and
//! `SHMEM_BIND_TO` (whether it binds itself to a core: [`affinity`]) in the environment
//! ([`wire`] names them). A program
//! started without the launcher has no `SHMEM_RENDEZVOUS`:
//! [`LaunchEnv::from_env`](client::LaunchEnv::from_env) returns `None`, and shmem-core runs it as
//! a singleton (PE 0 of 1 on node 0 of 1, with no I/O at all) or through PMIx.
//!
//! The PE connects to the rendezvous address, proves that it holds the job secret, says hello,
//! and runs its start-up collectives
//! (allgathers and barriers) through the launcher; the first collective is the rendezvous,
//! whose table the launcher sends once per host, to one PE that shares it with the host's
//! others ([`table`]). The frames and the conversation are described in [`wire`].
//!
//! # Supervision
//!
//! Besides the synchronous connection of [`client`], a PE started by the launcher opens a control
//! connection served by a [`watchdog`] thread. The launcher ends a PE on another host through it
//! ([`wire::Msg::Abort`]), and the PE ends itself when the launcher closes it or, in multi-host
//! jobs, stops sending heartbeats. The watchdog runs from `init` until the process exits,
//! finalize included.
//!
//! # Timeouts
//!
//! If not every PE has said hello to the launcher within `SHMEM_INIT_TIMEOUT` seconds (default
//! 60), the launcher sends the connected PEs an error naming the missing ones, which becomes
//! [`ClientError::Timeout`](client::ClientError::Timeout) (shmem-core's
//! `Error::RendezvousTimeout`); if the launcher stays silent, the PE gives up on its own a few
//! seconds later ([`client::BACKSTOP_SLACK`]). Later collectives wait as long as it takes,
//! because the launcher tells the waiters when a PE leaves without finalizing (and ends the job
//! when a PE dies).
//!
//! # Example
//!
//! A rendezvous server and two PEs in one process (in a real job the PEs are processes that
//! `shmemrun` started, and the connection details come from [`client::LaunchEnv`]):
//!
//! ```
//! use std::time::Duration;
//! use shmem_launch::auth::Secret;
//! use shmem_launch::client::{Client, ClientError};
//! use shmem_launch::server::Server;
//!
//! let (job_id, npes, timeout) = (7, 2, Duration::from_secs(10));
//! let secret = Secret::generate()?;
//! let mut server = Server::bind("127.0.0.1:0", job_id, secret.clone(), npes, timeout)?;
//! let addr = server.local_addr()?.to_string();
//! let pes: Vec<_> = (0..npes)
//!     .map(|pe| {
//!         let (addr, secret) = (addr.clone(), secret.clone());
//!         std::thread::spawn(move || -> Result<Vec<Vec<u8>>, ClientError> {
//!             let mut client = Client::connect(&addr, job_id, &secret, pe, npes, timeout)?;
//!             let table = client.allgather(format!("PE {pe}").as_bytes(), &mut || {})?;
//!             client.finalize()?;
//!             Ok(table)
//!         })
//!     })
//!     .collect();
//! // The launcher's loop: serve the PEs until they are done.
//! while !pes.iter().all(|pe| pe.is_finished()) {
//!     let notices = server.poll(None, Duration::from_millis(10))?;
//!     assert!(notices.is_empty(), "{notices:?}");
//! }
//! for pe in pes {
//!     let table = pe.join().expect("the PE thread panicked")?;
//!     assert_eq!(table, [b"PE 0".to_vec(), b"PE 1".to_vec()]);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod affinity;
pub mod auth;
mod backoff;
pub mod client;
pub mod server;
pub mod table;
pub mod watchdog;
pub mod wire;

#[cfg(test)]
mod tests;
