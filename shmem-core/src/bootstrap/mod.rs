//! Start-up through the launcher: who am I, how many are we, and an out-of-band allgather and
//! barrier over the connection to `shmemrun`.
//!
//! `shmemrun` starts every PE with `SHMEM_RENDEZVOUS` (the launcher's `host:port`), `SHMEM_PE`,
//! `SHMEM_NPES`, `SHMEM_JOB_ID` and `SHMEM_INIT_TIMEOUT` in the environment. A program started
//! without the launcher (no `SHMEM_RENDEZVOUS`) is a singleton: PE 0 of 1, with no I/O at all.
//!
//! The protocol is in [`wire`]; the PE's side of the conversation in [`client`]. Both use only
//! `std`, so the launcher binary and the integration tests compile the very same files.
//!
//! Timeouts: the first collective is the rendezvous. If not every PE has said hello to the
//! launcher within `SHMEM_INIT_TIMEOUT` seconds (default 60), the launcher sends the connected
//! PEs an error naming the missing ones, which becomes [`Error::RendezvousTimeout`]; if the
//! launcher stays silent, the PE gives up on its own a few seconds later. Later collectives wait
//! as long as it takes, because the launcher tells the waiters when a PE leaves without
//! finalizing (and ends the job when a PE dies).

pub(crate) mod client;
#[cfg(test)]
mod server;
// Shared with `shmemrun` and the integration tests; each of them needs only part of it.
#[allow(dead_code)]
pub(crate) mod wire;

use std::ffi::OsString;
use std::time::Duration;

use crate::{Error, Result};
use client::{Client, ClientError};
use wire::{ENV_INIT_TIMEOUT, ENV_JOB_ID, ENV_NPES, ENV_PE, ENV_RENDEZVOUS};

/// This process's place in the job and its connection to the launcher.
#[derive(Debug)]
pub(crate) struct Bootstrap {
    my_pe: usize,
    n_pes: usize,
    timeout: Duration,
    /// `None` for a singleton.
    client: Option<Client>,
}

impl Bootstrap {
    /// Reads the environment set by `shmemrun` and connects to the launcher. Without
    /// `SHMEM_RENDEZVOUS` the process is a singleton (PE 0 of 1) and nothing is read or
    /// connected.
    pub(crate) fn from_env() -> Result<Bootstrap> {
        let Some(config) = Config::from_vars(std::env::var_os)? else {
            return Ok(Bootstrap::singleton());
        };
        Bootstrap::connect(&config)
    }

    fn singleton() -> Bootstrap {
        Bootstrap {
            my_pe: 0,
            n_pes: 1,
            timeout: default_timeout(),
            client: None,
        }
    }

    fn connect(c: &Config) -> Result<Bootstrap> {
        let client = Client::connect(&c.rendezvous, c.job_id, c.pe, c.npes, c.timeout)
            .map_err(|e| map_err(e, c.timeout))?;
        Ok(Bootstrap {
            my_pe: c.pe,
            n_pes: c.npes,
            timeout: c.timeout,
            client: Some(client),
        })
    }

    /// This PE's number, in `0..n_pes()`.
    pub(crate) fn my_pe(&self) -> usize {
        self.my_pe
    }

    /// The number of PEs in the job.
    pub(crate) fn n_pes(&self) -> usize {
        self.n_pes
    }

    /// Every PE contributes one blob; returns all blobs indexed by PE. Calls `progress` at least
    /// every millisecond or so while waiting.
    ///
    /// The first collective is the rendezvous and fails with [`Error::RendezvousTimeout`] when
    /// not every PE arrives within `SHMEM_INIT_TIMEOUT`. Any collective fails with
    /// [`Error::Bootstrap`] when the launcher connection is lost, when the launcher reports that
    /// a PE left without finalizing, or on a protocol error; after an error every later call
    /// fails the same way.
    pub(crate) fn allgather(
        &mut self,
        mine: &[u8],
        progress: &mut dyn FnMut(),
    ) -> Result<Vec<Vec<u8>>> {
        let timeout = self.timeout;
        match self.client.as_mut() {
            None => Ok(vec![mine.to_vec()]),
            Some(c) => c.allgather(mine, progress).map_err(|e| map_err(e, timeout)),
        }
    }

    /// Out-of-band barrier over the launcher connection, progressing while waiting. Errors as
    /// for [`allgather`](Self::allgather).
    pub(crate) fn barrier(&mut self, progress: &mut dyn FnMut()) -> Result<()> {
        let timeout = self.timeout;
        match self.client.as_mut() {
            None => Ok(()),
            Some(c) => c.barrier(progress).map_err(|e| map_err(e, timeout)),
        }
    }

    /// Tells the launcher this PE finalized cleanly, so its exit is expected. Collectives fail
    /// afterwards.
    pub(crate) fn finalize(&mut self) -> Result<()> {
        let timeout = self.timeout;
        match self.client.as_mut() {
            None => Ok(()),
            Some(c) => c.finalize().map_err(|e| map_err(e, timeout)),
        }
    }
}

impl Bootstrap {
    /// Asks the launcher to end the job with `status` and waits briefly for it to acknowledge;
    /// does nothing for a singleton. The caller exits afterwards either way.
    pub(crate) fn global_exit(&mut self, status: i32) {
        if let Some(c) = self.client.as_mut() {
            // Nothing useful can be done about a lost launcher: the caller exits anyway.
            let _ = c.global_exit(status, Duration::from_secs(2));
        }
    }
}

fn map_err(e: ClientError, timeout: Duration) -> Error {
    match e {
        ClientError::Timeout(detail) => Error::RendezvousTimeout { timeout, detail },
        ClientError::Failed(text) => Error::Bootstrap(text),
    }
}

fn default_timeout() -> Duration {
    Duration::from_secs_f64(wire::DEFAULT_INIT_TIMEOUT_SECS)
}

/// The launcher's environment, parsed.
#[derive(Debug, Clone, PartialEq)]
struct Config {
    rendezvous: String,
    pe: usize,
    npes: usize,
    job_id: u64,
    timeout: Duration,
}

impl Config {
    /// `Ok(None)` when `SHMEM_RENDEZVOUS` is unset (singleton).
    fn from_vars(get: impl Fn(&'static str) -> Option<OsString>) -> Result<Option<Config>> {
        let text = |name: &'static str| -> Result<Option<String>> {
            match get(name) {
                None => Ok(None),
                Some(v) => v.into_string().map(Some).map_err(|v| Error::BadEnv {
                    name,
                    value: v.to_string_lossy().into_owned(),
                    reason: "not valid UTF-8".into(),
                }),
            }
        };
        let required = |name: &'static str| -> Result<String> {
            text(name)?.ok_or_else(|| {
                Error::Bootstrap(format!(
                    "{ENV_RENDEZVOUS} is set but {name} is not: start the program with shmemrun, \
                     or unset {ENV_RENDEZVOUS} to run it as a single PE"
                ))
            })
        };
        let bad = |name: &'static str, value: &str, reason: String| Error::BadEnv {
            name,
            value: value.to_string(),
            reason,
        };
        let Some(rendezvous) = text(ENV_RENDEZVOUS)? else {
            return Ok(None);
        };
        if rendezvous.trim().is_empty() {
            return Err(bad(
                ENV_RENDEZVOUS,
                &rendezvous,
                "expected host:port".into(),
            ));
        }
        let number = |name: &'static str| -> Result<usize> {
            let v = required(name)?;
            v.trim()
                .parse()
                .map_err(|_| bad(name, &v, "expected a non-negative integer".into()))
        };
        let npes = number(ENV_NPES)?;
        if npes == 0 || npes > u32::MAX as usize {
            return Err(bad(
                ENV_NPES,
                &npes.to_string(),
                "must be at least 1".into(),
            ));
        }
        let pe = number(ENV_PE)?;
        if pe >= npes {
            return Err(bad(
                ENV_PE,
                &pe.to_string(),
                format!("must be below {ENV_NPES}={npes}"),
            ));
        }
        let id = required(ENV_JOB_ID)?;
        let job_id = u64::from_str_radix(id.trim(), 16).map_err(|_| {
            bad(
                ENV_JOB_ID,
                &id,
                "expected a hexadecimal 64-bit number".into(),
            )
        })?;
        let timeout = match text(ENV_INIT_TIMEOUT)? {
            None => default_timeout(),
            Some(v) => {
                wire::parse_timeout_secs(&v).map_err(|reason| bad(ENV_INIT_TIMEOUT, &v, reason))?
            }
        };
        Ok(Some(Config {
            rendezvous,
            pe,
            npes,
            job_id,
            timeout,
        }))
    }
}

#[cfg(test)]
mod tests;
