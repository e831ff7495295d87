//! The PE's side of the launcher connection: the launcher's environment ([`LaunchEnv`]), then
//! hello, collectives and finalize ([`Client`]).
//!
//! shmem-core wraps it in its `Bootstrap`, which maps [`EnvError`] and [`ClientError`] to its own
//! error type.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use crate::affinity;
use crate::auth::{self, Channel, MAC_BYTES, Nonce, Secret};
use crate::backoff::Backoff;
use crate::table::Table;
use crate::wire::{
    CollectiveKind, DEFAULT_INIT_TIMEOUT_SECS, ENV_BIND_TO, ENV_INIT_TIMEOUT, ENV_JOB_ID,
    ENV_JOB_SECRET, ENV_LOCAL_RANK, ENV_LOCAL_SIZE, ENV_NNODES, ENV_NODE, ENV_NPES, ENV_PE,
    ENV_RENDEZVOUS, ERR_TIMEOUT, FrameBuf, MAX_CONTROL_FRAME, MAX_HANDSHAKE_FRAME, MAX_RECORD, Msg,
    PROTOCOL_VERSION, hello_fields, max_table_frame, parse_timeout_secs,
};

/// Extra time the PE waits for the launcher's verdict beyond the rendezvous timeout before it
/// gives up on its own.
pub const BACKSTOP_SLACK: Duration = Duration::from_secs(5);

/// Why a launcher conversation failed. The text is the whole message, for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// Not every PE reached the rendezvous in time; the text names the missing PEs when the
    /// launcher knows them.
    #[error("{0}")]
    Timeout(String),
    /// Anything else: lost connection, protocol error, error reported by the launcher.
    #[error("{0}")]
    Failed(String),
}

/// Why the launcher's environment cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvError {
    /// A variable has a value that cannot be used.
    #[error("environment variable {name}={value:?} is invalid: {reason}")]
    Invalid {
        /// The variable's name.
        name: &'static str,
        /// Its value (lossily converted when it is not UTF-8).
        value: String,
        /// Why it was rejected.
        reason: String,
    },
    /// `SHMEM_RENDEZVOUS` is set but a variable that must come with it is not.
    #[error(
        "{rv} is set but {name} is not: start the program with shmemrun, or unset {rv} to run \
         it as a single PE",
        rv = ENV_RENDEZVOUS
    )]
    Missing {
        /// The missing variable's name.
        name: &'static str,
    },
}

/// What `shmemrun` told this PE through its environment (the variables of [`crate::wire`]).
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchEnv {
    /// The launcher's `host:port` (`SHMEM_RENDEZVOUS`).
    pub rendezvous: String,
    /// This PE's number, below `npes` (`SHMEM_PE`).
    pub pe: usize,
    /// The number of PEs in the job, at least 1 (`SHMEM_NPES`).
    pub npes: usize,
    /// The job id the launcher checks on hello (`SHMEM_JOB_ID`, hexadecimal).
    pub job_id: u64,
    /// The job secret (`SHMEM_JOB_SECRET`, hexadecimal).
    pub secret: Secret,
    /// The rendezvous timeout (`SHMEM_INIT_TIMEOUT`; [`DEFAULT_INIT_TIMEOUT_SECS`] without it).
    pub timeout: Duration,
    /// The index of this PE's host, below `nnodes` (`SHMEM_NODE`; 0 without it).
    pub node: usize,
    /// The number of hosts, from 1 to `npes` (`SHMEM_NNODES`; 1 without it).
    pub nnodes: usize,
    /// This PE's index among the job's PEs on its host and their number (`SHMEM_LOCAL_RANK`
    /// and `SHMEM_LOCAL_SIZE`; `None` without them).
    pub local: Option<(usize, usize)>,
    /// Whether the PE binds itself to a core at start-up (`SHMEM_BIND_TO=core`; `none` or
    /// unset: no).
    pub bind_to_core: bool,
}

impl LaunchEnv {
    /// Reads this process's environment; see [`from_vars`](Self::from_vars).
    pub fn from_env() -> Result<Option<LaunchEnv>, EnvError> {
        LaunchEnv::from_vars(std::env::var_os)
    }

    /// Reads the launcher's variables through `get`. `Ok(None)` when `SHMEM_RENDEZVOUS` is unset
    /// (the program was not started by `shmemrun`); an error names the variable that is missing
    /// or has a value that cannot be used (for `SHMEM_JOB_SECRET`, without quoting the value).
    /// `SHMEM_INIT_TIMEOUT`, `SHMEM_NODE`, `SHMEM_NNODES`, `SHMEM_LOCAL_RANK` with
    /// `SHMEM_LOCAL_SIZE`, and `SHMEM_BIND_TO` are optional.
    ///
    /// ```
    /// use std::ffi::OsString;
    /// use shmem_launch::client::{EnvError, LaunchEnv};
    ///
    /// let vars = |pe: &'static str| {
    ///     move |name: &'static str| {
    ///         let value = match name {
    ///             "SHMEM_RENDEZVOUS" => "127.0.0.1:4000",
    ///             "SHMEM_PE" => pe,
    ///             "SHMEM_NPES" => "4",
    ///             "SHMEM_JOB_ID" => "00ff",
    ///             "SHMEM_JOB_SECRET" => "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a",
    ///             _ => return None,
    ///         };
    ///         Some(OsString::from(value))
    ///     }
    /// };
    /// let env = LaunchEnv::from_vars(vars("2"))?.expect("SHMEM_RENDEZVOUS is set");
    /// assert_eq!((env.pe, env.npes, env.job_id, env.nnodes), (2, 4, 255, 1));
    /// let bad = LaunchEnv::from_vars(vars("4")).unwrap_err();
    /// assert!(matches!(bad, EnvError::Invalid { name: "SHMEM_PE", .. }), "{bad}");
    /// assert_eq!(LaunchEnv::from_vars(|_| None)?, None);
    /// # Ok::<(), EnvError>(())
    /// ```
    pub fn from_vars(
        get: impl Fn(&'static str) -> Option<OsString>,
    ) -> Result<Option<LaunchEnv>, EnvError> {
        let text = |name: &'static str| -> Result<Option<String>, EnvError> {
            match get(name) {
                None => Ok(None),
                Some(v) => v.into_string().map(Some).map_err(|v| EnvError::Invalid {
                    name,
                    value: v.to_string_lossy().into_owned(),
                    reason: "not valid UTF-8".into(),
                }),
            }
        };
        let required = |name: &'static str| -> Result<String, EnvError> {
            text(name)?.ok_or(EnvError::Missing { name })
        };
        let bad = |name: &'static str, value: &str, reason: String| EnvError::Invalid {
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
        let number = |name: &'static str| -> Result<usize, EnvError> {
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
        let secret_text = required(ENV_JOB_SECRET)?;
        let secret = Secret::from_hex(&secret_text).map_err(|reason| EnvError::Invalid {
            name: ENV_JOB_SECRET,
            value: "(not shown)".into(),
            reason,
        })?;
        let timeout = match text(ENV_INIT_TIMEOUT)? {
            None => Duration::from_secs_f64(DEFAULT_INIT_TIMEOUT_SECS),
            Some(v) => {
                parse_timeout_secs(&v).map_err(|reason| bad(ENV_INIT_TIMEOUT, &v, reason))?
            }
        };
        // Optional: a launcher that does not know about hosts runs everything on one.
        let optional = |name: &'static str, default: usize| -> Result<usize, EnvError> {
            match text(name)? {
                None => Ok(default),
                Some(v) => v
                    .trim()
                    .parse()
                    .map_err(|_| bad(name, &v, "expected a non-negative integer".into())),
            }
        };
        // A count from 1 to npes and an index below it: the hosts and this PE's, or the PEs on
        // this host and this PE's place among them.
        let placed = |count_name: &'static str,
                      count_default: usize,
                      index_name: &'static str|
         -> Result<(usize, usize), EnvError> {
            let count = optional(count_name, count_default)?;
            if count == 0 || count > npes {
                return Err(bad(
                    count_name,
                    &count.to_string(),
                    format!("must be from 1 to {ENV_NPES}={npes}"),
                ));
            }
            let index = optional(index_name, 0)?;
            if index >= count {
                return Err(bad(
                    index_name,
                    &index.to_string(),
                    format!("must be below {count_name}={count}"),
                ));
            }
            Ok((index, count))
        };
        let (node, nnodes) = placed(ENV_NNODES, 1, ENV_NODE)?;
        let local = match (text(ENV_LOCAL_RANK)?, text(ENV_LOCAL_SIZE)?) {
            (None, None) => None,
            (Some(_), None) => {
                return Err(EnvError::Missing {
                    name: ENV_LOCAL_SIZE,
                });
            }
            (None, Some(_)) => {
                return Err(EnvError::Missing {
                    name: ENV_LOCAL_RANK,
                });
            }
            (Some(_), Some(_)) => Some(placed(ENV_LOCAL_SIZE, 0, ENV_LOCAL_RANK)?),
        };
        let bind_to_core = match text(ENV_BIND_TO)? {
            None => false,
            Some(v) => match v.trim() {
                "core" => true,
                "none" => false,
                _ => return Err(bad(ENV_BIND_TO, &v, "expected core or none".into())),
            },
        };
        Ok(Some(LaunchEnv {
            rendezvous,
            pe,
            npes,
            job_id,
            secret,
            timeout,
            node,
            nnodes,
            local,
            bind_to_core,
        }))
    }

    /// Binds the calling thread, and the threads it starts later, to one core as the launcher
    /// asked ([`affinity::bind_to_core`] with [`local`](Self::local)); `Ok(None)` when it did
    /// not ask, did not say where this PE stands on its host, or the host is oversubscribed.
    ///
    /// # Errors
    /// The OS error of the affinity calls, with the affinity unchanged.
    pub fn bind(&self) -> std::io::Result<Option<affinity::Bound>> {
        match self.local {
            Some((rank, size)) if self.bind_to_core => affinity::bind_to_core(rank, size),
            _ => Ok(None),
        }
    }

    /// Connects to the launcher and says hello: [`Client::connect`] with these settings.
    pub fn connect(&self) -> Result<Client, ClientError> {
        Client::connect(
            &self.rendezvous,
            self.job_id,
            &self.secret,
            self.pe,
            self.npes,
            self.timeout,
        )
    }
}

/// Resolves `addr` (`host:port`) and connects to it with `timeout`, with Nagle off.
pub fn connect_stream(addr: &str, timeout: Duration) -> io::Result<TcpStream> {
    let sock = addr.to_socket_addrs()?.next().ok_or_else(|| {
        io::Error::new(io::ErrorKind::NotFound, "the name resolves to no address")
    })?;
    let stream = TcpStream::connect_timeout(&sock, timeout)?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// Reads the launcher's challenge, the first frame on a new blocking connection, waiting until
/// `deadline` at most.
pub fn read_challenge(stream: &mut TcpStream, deadline: Instant) -> io::Result<Nonce> {
    let bad = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
    let left = deadline.saturating_duration_since(Instant::now());
    stream.set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let len = u32::from_le_bytes(len) as usize;
    if len == 0 || len > MAX_HANDSHAKE_FRAME {
        return Err(bad(format!(
            "a first frame of {len} bytes instead of a challenge: is this shmemrun (protocol \
             version {PROTOCOL_VERSION})?"
        )));
    }
    let mut body = vec![0u8; len];
    stream.read_exact(&mut body)?;
    stream.set_read_timeout(None)?;
    match Msg::decode(&body) {
        Ok(Msg::Challenge { nonce }) => Ok(nonce),
        Ok(other) => Err(bad(format!("expected a challenge, got {other:?}"))),
        Err(e) => Err(bad(format!("expected a challenge: {e}"))),
    }
}

/// Opens a host agent's connection to the launcher at `addr` for node `node` of job `job_id`
/// (see [the agent's connection](crate::wire#the-host-agents-connection)): reads the
/// challenge, proves the secret with [`Msg::AgentHello`] and
/// checks the launcher's proof, all within `timeout`. Returns the blocking stream, or the
/// error for the user, naming `addr`.
pub fn connect_agent(
    addr: &str,
    secret: &Secret,
    job_id: u64,
    node: u32,
    timeout: Duration,
) -> Result<TcpStream, String> {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        format!("cannot {what} the launcher at {addr}: {e}")
    };
    let deadline = Instant::now() + timeout;
    let mut stream = connect_stream(addr, timeout).map_err(|e| fail("connect to", &e))?;
    let challenge = read_challenge(&mut stream, deadline).map_err(|e| fail("read from", &e))?;
    let mine = auth::nonce().map_err(|e| fail("make a nonce for", &e))?;
    let pid = std::process::id();
    let fields = crate::wire::agent_fields(PROTOCOL_VERSION, job_id, node, pid);
    let hello = Msg::AgentHello {
        version: PROTOCOL_VERSION,
        job_id,
        node,
        pid,
        nonce: mine,
        mac: auth::hello_mac(secret, Channel::Agent, &challenge, &mine, &fields),
    };
    stream
        .write_all(&hello.encode())
        .map_err(|e| fail("write to", &e))?;
    let left = deadline.saturating_duration_since(Instant::now());
    stream
        .set_read_timeout(Some(left.max(Duration::from_millis(1))))
        .map_err(|e| fail("configure the connection to", &e))?;
    let mut len = [0u8; 4];
    stream
        .read_exact(&mut len)
        .map_err(|e| fail("read the answer of", &e))?;
    let len = u32::from_le_bytes(len) as usize;
    if len == 0 || len > crate::wire::MAX_CONTROL_FRAME {
        return Err(fail("understand", &format!("an answer of {len} bytes")));
    }
    let mut body = vec![0u8; len];
    stream
        .read_exact(&mut body)
        .map_err(|e| fail("read the answer of", &e))?;
    stream
        .set_read_timeout(None)
        .map_err(|e| fail("configure the connection to", &e))?;
    match Msg::decode(&body) {
        Ok(Msg::Accepted { mac }) => {
            let want = auth::launcher_mac(secret, Channel::Agent, &challenge, &mine, node);
            if !auth::tags_equal(&want, &mac) {
                return Err(format!(
                    "the launcher at {addr} did not prove the job secret: is it this job's \
                     shmemrun?"
                ));
            }
            Ok(stream)
        }
        Ok(Msg::Error { detail, .. }) => Err(format!("the launcher at {addr} refused: {detail}")),
        Ok(other) => Err(fail("understand", &format!("{other:?}"))),
        Err(e) => Err(fail("understand", &e)),
    }
}

/// An open connection to the launcher.
#[derive(Debug)]
pub struct Client {
    stream: TcpStream,
    addr: String,
    frames: FrameBuf,
    pe: usize,
    npes: usize,
    job_id: u64,
    secret: Secret,
    /// The launcher's challenge and this PE's nonce, for the launcher's proof.
    nonces: (Nonce, Nonce),
    /// The launcher proved the secret ([`Msg::Accepted`]).
    accepted: bool,
    /// Number of the next collective.
    epoch: u64,
    /// Until the first collective completes, give up at this instant even if the launcher is
    /// silent (a backstop for the launcher's own timeout).
    rendezvous_deadline: Option<Instant>,
    timeout: Duration,
    finalized: bool,
    /// Once broken, every later call returns this error.
    broken: Option<ClientError>,
}

impl Client {
    /// Connects to the launcher at `addr`, reads its challenge and says hello as PE `pe` of
    /// `npes` in job `job_id`, with the proof that it holds `secret`; the first collective must
    /// complete within `timeout` (plus [`BACKSTOP_SLACK`] when the launcher stays silent). Fails
    /// when the connection cannot be opened or no challenge comes: a hello that the launcher
    /// rejects is the error of the first collective.
    pub fn connect(
        addr: &str,
        job_id: u64,
        secret: &Secret,
        pe: usize,
        npes: usize,
        timeout: Duration,
    ) -> Result<Client, ClientError> {
        let start = Instant::now();
        let fail = |what: &str, e: io::Error| {
            ClientError::Failed(format!(
                "PE {pe}: cannot {what} the launcher at {addr}: {e}"
            ))
        };
        let mut stream = connect_stream(addr, timeout).map_err(|e| {
            ClientError::Failed(format!(
                "PE {pe}: cannot connect to the launcher at {addr} ({ENV_RENDEZVOUS}): {e}; \
                 is that address reachable from this host? (shmemrun --rendezvous-addr \
                 chooses it)"
            ))
        })?;
        let challenge = read_challenge(&mut stream, start + timeout)
            .map_err(|e| fail("read the challenge of", e))?;
        let mine = auth::nonce().map_err(|e| fail("make a nonce for", e))?;
        let fields = hello_fields(PROTOCOL_VERSION, job_id, pe as u32, npes as u32);
        let hello = Msg::Hello {
            version: PROTOCOL_VERSION,
            job_id,
            pe: pe as u32,
            npes: npes as u32,
            nonce: mine,
            mac: auth::hello_mac(secret, Channel::Rendezvous, &challenge, &mine, &fields),
        };
        stream
            .write_all(&hello.encode())
            .map_err(|e| fail("say hello to", e))?;
        stream
            .set_nonblocking(true)
            .map_err(|e| fail("configure the connection to", e))?;
        Ok(Client {
            stream,
            addr: addr.to_string(),
            // Until the launcher has proved the secret, nothing larger than an error.
            frames: FrameBuf::with_limit(MAX_CONTROL_FRAME),
            pe,
            npes,
            job_id,
            secret: secret.clone(),
            nonces: (challenge, mine),
            accepted: false,
            epoch: 0,
            rendezvous_deadline: Some(start + timeout + BACKSTOP_SLACK),
            timeout,
            finalized: false,
            broken: None,
        })
    }

    /// This PE's number.
    pub fn pe(&self) -> usize {
        self.pe
    }

    /// The number of PEs in the job.
    pub fn npes(&self) -> usize {
        self.npes
    }

    /// Contributes `mine` to the next collective and returns every PE's blob, indexed by PE.
    /// Calls `progress` while it waits (at least every millisecond or so).
    ///
    /// The first collective is the rendezvous: it fails with [`ClientError::Timeout`] when not
    /// every PE arrives in time. Any collective fails with [`ClientError::Failed`] when the
    /// connection is lost, the launcher reports an error (a PE left without finalizing, a
    /// rejected hello, a mismatch of collectives) or the protocol breaks; after an error, every
    /// later call fails the same way.
    pub fn allgather(
        &mut self,
        mine: &[u8],
        progress: &mut dyn FnMut(),
    ) -> Result<Vec<Vec<u8>>, ClientError> {
        self.collective(CollectiveKind::Allgather, mine, progress)
    }

    /// Like [`allgather`](Self::allgather), but the table may come as a node-shared, sealed
    /// memfd that one PE of this node publishes for all of them (see [`crate::table`]): the
    /// launcher then sends the table once per node, not once per PE, and the node keeps one
    /// copy. Every record is checked against its PE's tag either way. Errors as for
    /// [`allgather`](Self::allgather).
    pub fn allgather_shared(
        &mut self,
        mine: &[u8],
        progress: &mut dyn FnMut(),
    ) -> Result<Table, ClientError> {
        self.check_usable()?;
        let r = self.run_shared(mine, progress);
        self.remember(r)
    }

    /// Waits until every PE has entered the barrier, calling `progress` while it waits. Errors
    /// as for [`allgather`](Self::allgather).
    pub fn barrier(&mut self, progress: &mut dyn FnMut()) -> Result<(), ClientError> {
        self.collective(CollectiveKind::Barrier, &[], progress)
            .map(drop)
    }

    /// Tells the launcher this PE finalized cleanly. Later collectives fail.
    pub fn finalize(&mut self) -> Result<(), ClientError> {
        self.check_usable()?;
        self.finalized = true;
        let r = self.send(&Msg::Finalize, &mut || {});
        self.remember(r)
    }

    /// Asks the launcher to end the whole job with exit status `status` (`shmem_global_exit`),
    /// then waits (at most `wait`) for its answer or for the connection to close, so that the
    /// request has surely been read before this process exits. Works on a finalized or broken
    /// connection too, as far as the socket allows.
    pub fn global_exit(&mut self, status: i32, wait: Duration) -> Result<(), ClientError> {
        self.send(&Msg::GlobalExit { status }, &mut || {})?;
        let until = Instant::now() + wait;
        let mut backoff = Backoff::new(Backoff::MAX_WAIT);
        while Instant::now() < until {
            match self.fill() {
                // End of stream or a broken connection: the launcher is done with us.
                Ok(false) | Err(_) => return Ok(()),
                Ok(true) => {}
            }
            if !self.frames.is_empty() {
                return Ok(());
            }
            backoff.wait(self.stream.as_raw_fd(), libc::POLLIN);
        }
        Ok(())
    }

    fn check_usable(&self) -> Result<(), ClientError> {
        if let Some(e) = &self.broken {
            return Err(e.clone());
        }
        if self.finalized {
            return Err(ClientError::Failed(format!(
                "PE {}: launcher connection used after finalize",
                self.pe
            )));
        }
        Ok(())
    }

    fn remember<T>(&mut self, r: Result<T, ClientError>) -> Result<T, ClientError> {
        if let Err(e) = &r {
            self.broken = Some(e.clone());
        }
        r
    }

    fn collective(
        &mut self,
        kind: CollectiveKind,
        blob: &[u8],
        progress: &mut dyn FnMut(),
    ) -> Result<Vec<Vec<u8>>, ClientError> {
        self.check_usable()?;
        let r = self.run_collective(kind, blob, progress);
        self.remember(r)
    }

    fn run_shared(
        &mut self,
        blob: &[u8],
        progress: &mut dyn FnMut(),
    ) -> Result<Table, ClientError> {
        let epoch = self.epoch;
        self.contribute(CollectiveKind::SharedAllgather, blob, progress)?;
        let mut lead = false;
        let table = loop {
            match self.await_answer(epoch, progress)? {
                Msg::Lead { .. } => lead = true,
                Msg::Table { blobs, .. } => {
                    self.check_count(epoch, blobs.len(), self.npes)?;
                    for (pe, record) in blobs.iter().enumerate() {
                        self.check_tag(pe, epoch, record)?;
                    }
                    if !lead {
                        break Table::from_records(strip_tags(blobs));
                    }
                    // Publish for the node; if that fails, the launcher sends the others the
                    // table itself.
                    let published = Table::publish(self.job_id, epoch, &blobs).ok();
                    let (fd, len) = published
                        .as_ref()
                        .and_then(Table::memfd)
                        .unwrap_or((u32::MAX, 0));
                    let pid = std::process::id();
                    self.send(
                        &Msg::Published {
                            epoch,
                            pid,
                            fd,
                            len,
                        },
                        progress,
                    )?;
                    break match published {
                        Some(t) => t,
                        None => Table::from_records(strip_tags(blobs)),
                    };
                }
                Msg::TableAt { pid, fd, len, .. } => {
                    let key = (&self.secret, self.job_id, epoch);
                    match Table::open(pid, fd, len, self.npes, key) {
                        Ok(t) => break t,
                        // Not usable here (another pid namespace, a hardened /proc): ask for
                        // the table itself.
                        Err(_) => self.send(&Msg::Fetch { epoch }, progress)?,
                    }
                }
                other => {
                    return Err(self.protocol(format!(
                        "unexpected {other:?} while waiting for collective {epoch}"
                    )));
                }
            }
        };
        self.epoch += 1;
        self.rendezvous_deadline = None;
        Ok(table)
    }

    /// Sends this PE's contribution to the current collective (`blob` with its tag, for an
    /// allgather).
    fn contribute(
        &mut self,
        kind: CollectiveKind,
        blob: &[u8],
        progress: &mut dyn FnMut(),
    ) -> Result<(), ClientError> {
        let epoch = self.epoch;
        let mut record = blob.to_vec();
        if kind != CollectiveKind::Barrier {
            if blob.len() + MAC_BYTES > MAX_RECORD {
                return Err(ClientError::Failed(format!(
                    "PE {}: a start-up record of {} bytes is over the launcher's limit of {} \
                     bytes",
                    self.pe,
                    blob.len(),
                    MAX_RECORD - MAC_BYTES
                )));
            }
            let key = auth::record_key(&self.secret, self.pe as u32);
            record.extend_from_slice(&key.tag(self.job_id, epoch, blob));
        }
        self.send(
            &Msg::Collective {
                epoch,
                kind,
                blob: record,
            },
            progress,
        )
    }

    fn run_collective(
        &mut self,
        kind: CollectiveKind,
        blob: &[u8],
        progress: &mut dyn FnMut(),
    ) -> Result<Vec<Vec<u8>>, ClientError> {
        let epoch = self.epoch;
        self.contribute(kind, blob, progress)?;
        let blobs = match self.await_answer(epoch, progress)? {
            Msg::Table { blobs, .. } => blobs,
            other => {
                return Err(self.protocol(format!(
                    "unexpected {other:?} while waiting for collective {epoch}"
                )));
            }
        };
        let want = if kind == CollectiveKind::Barrier {
            0
        } else {
            self.npes
        };
        self.check_count(epoch, blobs.len(), want)?;
        for (pe, record) in blobs.iter().enumerate() {
            self.check_tag(pe, epoch, record)?;
        }
        self.epoch += 1;
        self.rendezvous_deadline = None;
        Ok(strip_tags(blobs))
    }

    fn check_count(&self, epoch: u64, got: usize, want: usize) -> Result<(), ClientError> {
        if got != want {
            return Err(self.protocol(format!(
                "table for epoch {epoch} has {got} entries, expected {want}"
            )));
        }
        Ok(())
    }

    /// Checks PE `pe`'s record (blob and tag) of collective `epoch`; the error names `pe`.
    fn check_tag(&self, pe: usize, epoch: u64, record: &[u8]) -> Result<(), ClientError> {
        let ok = record.len() >= MAC_BYTES && {
            let (blob, tag) = record.split_at(record.len() - MAC_BYTES);
            auth::record_key(&self.secret, pe as u32).verify(self.job_id, epoch, blob, tag)
        };
        if !ok {
            return Err(ClientError::Failed(format!(
                "PE {}: the start-up record of PE {pe} (collective {epoch}, {} bytes) failed \
                 authentication: it was not made with this job's secret or was altered on the \
                 way; not using it",
                self.pe,
                record.len()
            )));
        }
        Ok(())
    }

    fn protocol(&self, what: String) -> ClientError {
        ClientError::Failed(format!(
            "PE {}: protocol error on the launcher connection ({}): {what}",
            self.pe, self.addr
        ))
    }

    fn lost(&self, why: &str) -> ClientError {
        ClientError::Failed(format!(
            "PE {}: lost the connection to the launcher at {} ({why}); did shmemrun exit?",
            self.pe, self.addr
        ))
    }

    /// Writes one frame, progressing while the socket is full.
    fn send(&mut self, msg: &Msg, progress: &mut dyn FnMut()) -> Result<(), ClientError> {
        let frame = msg.encode();
        let mut sent = 0;
        let mut backoff = Backoff::new(Backoff::MAX_WAIT);
        while sent < frame.len() {
            match self.stream.write(&frame[sent..]) {
                Ok(0) => return Err(self.lost("connection closed")),
                Ok(n) => sent += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    progress();
                    backoff.wait(self.stream.as_raw_fd(), libc::POLLOUT);
                }
                Err(e) => return Err(self.lost(&e.to_string())),
            }
        }
        Ok(())
    }

    /// Reads whatever the socket holds; `Ok(false)` on end of stream.
    fn fill(&mut self) -> Result<bool, ClientError> {
        self.frames
            .fill_from(&mut self.stream)
            .map_err(|e| self.lost(&e.to_string()))
    }

    /// Waits for the launcher's next answer to collective `epoch` (a [`Msg::Table`],
    /// [`Msg::Lead`] or [`Msg::TableAt`]), handling its proof on the way; an error message
    /// becomes the error.
    fn await_answer(&mut self, epoch: u64, progress: &mut dyn FnMut()) -> Result<Msg, ClientError> {
        let mut backoff = Backoff::new(if self.rendezvous_deadline.is_some() {
            Backoff::MAX_WAIT_RENDEZVOUS
        } else {
            Backoff::MAX_WAIT
        });
        loop {
            progress();
            let open = self.fill()?;
            // Every message answers the collective: the first one decides.
            if let Some(msg) = self.frames.next_msg().map_err(|e| self.protocol(e))? {
                match msg {
                    Msg::Accepted { mac } if !self.accepted => {
                        let (challenge, mine) = &self.nonces;
                        let want = auth::launcher_mac(
                            &self.secret,
                            Channel::Rendezvous,
                            challenge,
                            mine,
                            self.pe as u32,
                        );
                        if !auth::tags_equal(&mac, &want) {
                            return Err(ClientError::Failed(format!(
                                "PE {}: the launcher at {} did not prove that it holds the job \
                                 secret ({ENV_JOB_SECRET}): is it this job's shmemrun?",
                                self.pe, self.addr
                            )));
                        }
                        self.accepted = true;
                        self.frames.set_limit(max_table_frame(self.npes));
                        continue;
                    }
                    Msg::Table { epoch: e, .. }
                    | Msg::Lead { epoch: e }
                    | Msg::TableAt { epoch: e, .. }
                        if e == epoch && self.accepted =>
                    {
                        return Ok(msg);
                    }
                    Msg::Error { code, detail } if code == ERR_TIMEOUT => {
                        return Err(ClientError::Timeout(detail));
                    }
                    Msg::Error { detail, .. } => {
                        return Err(ClientError::Failed(format!(
                            "PE {}: the launcher reported: {detail}",
                            self.pe
                        )));
                    }
                    other => {
                        return Err(self.protocol(format!(
                            "unexpected {other:?} while waiting for collective {epoch}"
                        )));
                    }
                }
            }
            if !open {
                return Err(self.lost("end of stream"));
            }
            if self
                .rendezvous_deadline
                .is_some_and(|d| Instant::now() >= d)
            {
                return Err(ClientError::Timeout(format!(
                    "PE {} of {}: no answer from the launcher at {} within {:?} \
                     (rendezvous timeout {:?} + {:?})",
                    self.pe,
                    self.npes,
                    self.addr,
                    self.timeout + BACKSTOP_SLACK,
                    self.timeout,
                    BACKSTOP_SLACK
                )));
            }
            backoff.wait(self.stream.as_raw_fd(), libc::POLLIN);
        }
    }
}

/// The blobs of checked records (their tags removed).
fn strip_tags(mut records: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    for r in &mut records {
        r.truncate(r.len().saturating_sub(MAC_BYTES));
    }
    records
}
