//! What the PEs are given, and the rules for it: the job's settings from the command line and
//! shmemrun's environment, the variables every PE gets, how the job secret travels (never on a
//! command line), the UCX defaults, and the limit on PEs per core.

use std::ffi::OsString;
use std::time::Duration;

use shmem_launch::auth::{self, Secret};
use shmem_launch::wire;

use crate::cli::Cli;
use crate::error::RunError;

/// What every PE of the job runs, and with which settings.
pub struct JobSpec<'a> {
    /// The program every PE runs.
    pub program: &'a OsString,
    /// Its arguments.
    pub args: &'a [OsString],
    /// The `-x` variables, as (name, value).
    pub exports: Vec<(OsString, OsString)>,
    /// The time the PEs have to reach the rendezvous.
    pub timeout: Duration,
    /// That timeout as given, for the PEs' environment.
    pub timeout_text: String,
    /// The job's id: a label, not a secret, different for every run.
    pub id: u64,
    /// The job secret, which only its PEs know.
    pub secret: Secret,
    /// `--prefix`: every line of a PE's output starts with `[PE i] `.
    pub prefix: bool,
    /// `--bind-to`: `core` or `none`.
    pub bind_to: &'static str,
}

/// Where a PE runs: its host's index and the number of hosts, its index among the job's PEs
/// on that host and their number.
pub struct Place {
    /// The index of its host, from 0.
    pub node: usize,
    /// The number of hosts.
    pub nnodes: usize,
    /// Its index among its host's PEs.
    pub local_rank: usize,
    /// The number of its host's PEs.
    pub local_size: usize,
}

impl JobSpec<'_> {
    /// The job `cli` asks for, with a new id and secret. The settings are checked in this
    /// order, so that of several bad ones the same is reported as always.
    pub fn new(cli: &Cli) -> Result<JobSpec<'_>, RunError> {
        let (timeout, timeout_text) = init_timeout(cli).map_err(RunError::Usage)?;
        let exports = exports(cli).map_err(RunError::Usage)?;
        let Some((program, args)) = cli.command.split_first() else {
            return Err(RunError::Usage("no program given".into()));
        };
        let secret = Secret::generate()
            .map_err(|e| RunError::Setup(format!("cannot make the job secret (getrandom): {e}")))?;
        let bind_to = bind_to(cli).map_err(RunError::Usage)?;
        Ok(JobSpec {
            program,
            args,
            exports,
            timeout,
            timeout_text,
            id: random_id(),
            secret,
            prefix: cli.prefix,
            bind_to,
        })
    }

    /// The variables shmemrun sets for PE `pe` (in the order of [`JOB_VARS`]); not the secret.
    pub fn vars(
        &self,
        rendezvous: &str,
        pe: usize,
        npes: usize,
        at: Place,
    ) -> Vec<(OsString, OsString)> {
        [
            rendezvous.to_string(),
            pe.to_string(),
            npes.to_string(),
            format!("{:016x}", self.id),
            self.timeout_text.clone(),
            at.node.to_string(),
            at.nnodes.to_string(),
            at.local_rank.to_string(),
            at.local_size.to_string(),
            self.bind_to.to_string(),
        ]
        .into_iter()
        .zip(JOB_VARS)
        .map(|(v, k)| (OsString::from(k), OsString::from(v)))
        .collect()
    }
}

/// UCX settings the PEs get unless the user set them (PEs inherit shmemrun's environment, and
/// PEs on other hosts get its UCX_* variables): over TCP, large transfers move in segments of
/// this size; UCX's 8 KiB default costs a round of progress per 8 KiB (tests-sos `bigget`, 16 MiB
/// gets between 4 PEs on 2 cores over `UCX_TLS=tcp,self`: 57 s, with 256 KiB 23 s). UCX 1.13
/// ignores these names in `ucp_config_modify`, so they travel in the environment.
///
/// `UCX_MEM_EVENTS=no`: when UCX's libraries load (before `main`), its memory hooks check that
/// they see `shmat` by creating a SysV segment of 4 KiB and removing it; a PE killed in that
/// moment leaves the segment behind for good (seen once in 114 SIGKILLs at random moments of
/// start-up). The runtime registers its memory itself and needs no memory events; UCX's
/// registration cache for user buffers (InfiniBand zero-copy of large transfers) goes without
/// them. A user who wants them back sets `UCX_MEM_EVENTS=yes`.
const UCX_DEFAULTS: [(&str, &str); 3] = [
    ("UCX_TCP_TX_SEG_SIZE", "256k"),
    ("UCX_TCP_RX_SEG_SIZE", "256k"),
    ("UCX_MEM_EVENTS", "no"),
];

/// Sets the [`UCX_DEFAULTS`] the user did not set, in shmemrun's own environment. Call it first
/// thing in `main`, before any thread is started.
pub fn set_ucx_defaults() {
    for (name, value) in UCX_DEFAULTS {
        if std::env::var_os(name).is_none() {
            // SAFETY: the first thing `main` does, before shmemrun starts any thread: nothing
            // reads or writes the environment concurrently.
            unsafe { std::env::set_var(name, value) };
        }
    }
}

/// The thread-pool variable each PE gets unless it is set (in shmemrun's environment or with
/// `-x`): `OMP_NUM_THREADS`, read by OpenMP runtimes and by OpenBLAS (NumPy's BLAS).
pub const THREADS_VAR: &str = "OMP_NUM_THREADS";

/// `OMP_NUM_THREADS` for a PE of a host that runs `local_size` of the job's PEs, unless the
/// environment already has it: the host's cores shared among its PEs, at least 1. Without it
/// every PE's OpenMP or BLAS pool starts one thread per core of the host, and a node of 64 PEs
/// runs 64 times more threads than cores (with NumPy, each PE's OpenBLAS threads spin at import
/// and slow every PE's start). Intel MPI's launcher and torchrun set it the same way.
pub fn threads_default(local_size: usize) -> Option<(OsString, OsString)> {
    if std::env::var_os(THREADS_VAR).is_some() {
        return None;
    }
    let per_pe = (cores() / local_size.max(1)).max(1);
    Some((THREADS_VAR.into(), per_pe.to_string().into()))
}

/// A setting from the command line, else from the environment variable `var`, else `default`;
/// with the text it came from.
pub fn setting(cli: &Option<String>, var: &str, default: &str) -> Result<String, String> {
    match (cli, std::env::var_os(var)) {
        (Some(t), _) => Ok(t.clone()),
        (None, Some(v)) => v
            .into_string()
            .map_err(|v| format!("{var}={v:?} is not valid UTF-8")),
        (None, None) => Ok(default.to_string()),
    }
}

/// The timeout and its text for the PEs' environment.
fn init_timeout(cli: &Cli) -> Result<(Duration, String), String> {
    let default = wire::DEFAULT_INIT_TIMEOUT_SECS.to_string();
    let text = setting(&cli.init_timeout, wire::ENV_INIT_TIMEOUT, &default)?;
    let d =
        wire::parse_timeout_secs(&text).map_err(|e| format!("{}: {e}", wire::ENV_INIT_TIMEOUT))?;
    Ok((d, text))
}

/// The variables shmemrun sets for every PE besides [`JOB_VARS`], which never go on a command
/// line.
const SECRET_VARS: [&str; 1] = [wire::ENV_JOB_SECRET];

/// The script that runs a remote PE: reads the job secret from the first line of stdin into the
/// environment, then runs the PE (`sh -c SCRIPT NAME PROGRAM ARGS...`).
pub const SECRET_SCRIPT: &str = "IFS= read -r SHMEM_JOB_SECRET || { echo \"shmemrun: no job secret \
     on standard input: the start command must pass its standard input to the remote command\" \
     >&2; exit 126; }; export SHMEM_JOB_SECRET; exec \"$@\"";

/// The variables shmemrun sets for every PE; -x may not set them and they are not forwarded.
const JOB_VARS: [&str; 10] = [
    wire::ENV_RENDEZVOUS,
    wire::ENV_PE,
    wire::ENV_NPES,
    wire::ENV_JOB_ID,
    wire::ENV_INIT_TIMEOUT,
    wire::ENV_NODE,
    wire::ENV_NNODES,
    wire::ENV_LOCAL_RANK,
    wire::ENV_LOCAL_SIZE,
    wire::ENV_BIND_TO,
];

/// `--bind-to` (or `$SHMEM_BIND_TO`, else `core`): `core` or `none`.
fn bind_to(cli: &Cli) -> Result<&'static str, String> {
    let text = setting(&cli.bind_to, wire::ENV_BIND_TO, "core")?;
    match text.trim() {
        "core" => Ok("core"),
        "none" => Ok("none"),
        _ => Err(format!(
            "--bind-to {text}: expected core or none (or {} is set to it)",
            wire::ENV_BIND_TO
        )),
    }
}

/// The `-x` variables as (name, value); `-x NAME` takes the value from shmemrun's environment.
fn exports(cli: &Cli) -> Result<Vec<(OsString, OsString)>, String> {
    let mut out = Vec::new();
    for x in &cli.export {
        let (name, value) = match x.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (x.as_str(), None),
        };
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
            && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
        if !valid {
            return Err(format!("-x {x}: {name:?} is not a variable name"));
        }
        if JOB_VARS.contains(&name) || SECRET_VARS.contains(&name) {
            return Err(format!("-x {x}: shmemrun sets {name} itself"));
        }
        let value = match value {
            Some(v) => OsString::from(v),
            None => std::env::var_os(name)
                .ok_or_else(|| format!("-x {name}: {name} is not set in shmemrun's environment"))?,
        };
        out.push((OsString::from(name), value));
    }
    Ok(out)
}

/// A job id that is different for every run (a label, not a secret).
fn random_id() -> u64 {
    let mut b = [0u8; 8];
    if auth::random_bytes(&mut b).is_ok() {
        return u64::from_le_bytes(b);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ (u64::from(std::process::id()) << 32) ^ 0x9e37_79b9_7f4a_7c15
}

/// The cores this process may run on.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Refuses `npes` PEs on one host of `cores` cores above `limit` per core; `host` names it.
pub fn check_oversubscription(
    npes: usize,
    cores: usize,
    limit: u32,
    host: &str,
) -> Result<(), String> {
    let most = cores.saturating_mul(limit as usize);
    if npes <= most {
        return Ok(());
    }
    Err(format!(
        "{npes} PEs on {host} with {cores} core{} would be {} PEs per core, above the limit \
         of {limit} (at most {most} PEs); pass --oversubscribe-limit N to allow more",
        if cores == 1 { "" } else { "s" },
        npes.div_ceil(cores)
    ))
}

/// The UCX_* and SHMEM_* variables of shmemrun's environment, for the remote PEs (sorted, those
/// shmemrun sets itself left out).
pub fn forwarded_env() -> Vec<(OsString, OsString)> {
    let mut vars: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| {
            let k = k.to_string_lossy();
            (k.starts_with("UCX_") || k.starts_with("SHMEM_"))
                && !JOB_VARS.contains(&&*k)
                && !SECRET_VARS.contains(&&*k)
        })
        .collect();
    vars.sort();
    vars
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oversubscription_is_refused_above_the_limit_per_core() {
        assert_eq!(check_oversubscription(128, 2, 64, "this machine"), Ok(()));
        assert_eq!(
            check_oversubscription(129, 2, 64, "this machine"),
            Err(
                "129 PEs on this machine with 2 cores would be 65 PEs per core, above the limit \
                 of 64 (at most 128 PEs); pass --oversubscribe-limit N to allow more"
                    .to_string()
            )
        );
        let one_core = check_oversubscription(3, 1, 2, "host h").unwrap_err();
        assert!(one_core.starts_with("3 PEs on host h with 1 core would be 3 PEs per core"));
    }

    #[test]
    fn a_pe_gets_the_job_variables_in_their_order_and_not_the_secret() {
        let program = OsString::from("prog");
        let job = JobSpec {
            program: &program,
            args: &[],
            exports: Vec::new(),
            timeout: Duration::from_secs(60),
            timeout_text: "60".into(),
            id: 0xab,
            secret: Secret::generate().unwrap(),
            prefix: false,
            bind_to: "core",
        };
        let at = Place {
            node: 1,
            nnodes: 2,
            local_rank: 3,
            local_size: 4,
        };
        let vars = job.vars("10.0.0.1:5000", 7, 8, at);
        let names: Vec<_> = vars.iter().map(|(k, _)| k.to_str().unwrap()).collect();
        assert_eq!(names, JOB_VARS);
        let values: Vec<_> = vars.iter().map(|(_, v)| v.to_str().unwrap()).collect();
        assert_eq!(
            values,
            [
                "10.0.0.1:5000",
                "7",
                "8",
                "00000000000000ab",
                "60",
                "1",
                "2",
                "3",
                "4",
                "core"
            ]
        );
    }
}
