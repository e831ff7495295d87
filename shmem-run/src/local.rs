//! The one-host run path: every PE a child of the launcher, reaching it on this machine.

use std::ffi::OsString;
use std::time::Duration;

use shmem_launch::wire;

use crate::children;
use crate::cli::Cli;
use crate::error::RunError;
use crate::events;
use crate::job::Job;
use crate::say::say;
use crate::spec::{JobSpec, Place};
use crate::start::{self, PE_HEARTBEAT_SLACK, Progress, host_port};

/// The heartbeat timeout asked for a job on one host, if any (`--heartbeat-timeout`; without
/// it the PEs send no heartbeats).
pub fn heartbeat(cli: &Cli) -> Result<Option<Duration>, String> {
    let Some(text) = &cli.heartbeat_timeout else {
        return Ok(None);
    };
    let t = wire::parse_timeout_secs(text).map_err(|e| format!("--heartbeat-timeout: {e}"))?;
    if t < 2 * wire::HEARTBEAT_INTERVAL {
        return Err(format!(
            "--heartbeat-timeout: {text} s is too short: heartbeats come every {} s",
            wire::HEARTBEAT_INTERVAL.as_secs_f64()
        ));
    }
    Ok(Some(t))
}

/// Runs the job's `npes` PEs on this host, as children of the launcher, listening on
/// `bind_to` (`--bind`, else loopback); returns the launcher's exit status.
pub fn run(
    job: &JobSpec<'_>,
    npes: usize,
    bind_to: Option<&str>,
    heartbeat: Option<Duration>,
    notifier: &events::Notifier,
    inbox: events::Inbox,
) -> Result<i32, RunError> {
    let ip = bind_to.unwrap_or("127.0.0.1");
    let mut server = start::bind(&host_port(ip, 0), job, npes)?;
    let port = server
        .local_addr()
        .map_err(|e| RunError::Setup(format!("cannot listen for the PEs' rendezvous: {e}")))?
        .port();
    // The PEs connect to the address bound, or to loopback when every interface is.
    let reach = match ip {
        "0.0.0.0" => "127.0.0.1",
        "::" => "::1",
        other => other,
    };
    let addr = host_port(reach, port);
    if let Some(t) = heartbeat {
        server.set_heartbeat(wire::HEARTBEAT_INTERVAL, t, t + PE_HEARTBEAT_SLACK);
    }
    // One host: the start-up table goes to one PE, which shares it with the others.
    start::set_nodes(&mut server, vec![0; npes])?;
    let mut run = Job::new(server, inbox, heartbeat, false);
    let secret = [(
        OsString::from(wire::ENV_JOB_SECRET),
        OsString::from(job.secret.to_hex()),
    )];
    let mut progress = Progress::new(npes);
    // The same for every PE: the host's cores are read once.
    let threads = crate::spec::threads_default(npes);
    for pe in 0..npes {
        if run.interrupted() {
            break;
        }
        let at = Place {
            node: 0,
            nnodes: 1,
            local_rank: pe,
            local_size: npes,
        };
        let mut env = job.vars(&addr, pe, npes, at);
        env.extend(threads.iter().cloned());
        env.extend(secret.iter().cloned());
        env.extend(job.exports.iter().cloned());
        let spec = children::Spec {
            program: job.program,
            args: job.args,
            env: &env,
            prefix: job.prefix,
            tail: None,
            pe,
            tagged: None,
            // Only PE 0 reads the launcher's stdin.
            input: if pe == 0 {
                children::Input::Launcher
            } else {
                children::Input::Null
            },
        };
        match children::spawn(&spec, notifier) {
            Ok((pid, outputs)) => run.add(pid, outputs, None),
            Err(e) => {
                let which = if pe == 0 {
                    String::new()
                } else {
                    format!(" as PE {pe}")
                };
                say!(
                    "cannot start {}{which}: {}",
                    job.program.to_string_lossy(),
                    children::os_message(&e)
                );
                run.fail(
                    children::spawn_code(&e),
                    "shmemrun could not start every PE",
                );
                break;
            }
        }
        progress.tick(pe + 1);
    }
    progress.finish(run.started());
    Ok(run.run())
}
