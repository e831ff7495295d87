//! The several-hosts run path (`--hosts`, `--hostfile`): where the PEs go, the addresses the
//! hosts reach the launcher at, and the start command on every host (`--rsh`), which gets the
//! job secret on its standard input: by default one per host, which runs the host agent
//! (`agent/`: `shmemrun --host-agent`) that starts the host's PEs and relays their
//! connections; with `--launch-agent off` one per PE, which runs the PE itself.

use std::ffi::{OsStr, OsString};
use std::sync::Arc;
use std::time::Duration;

use shmem_launch::wire;

use crate::cli::Cli;
use crate::error::RunError;
use crate::job::{AgentProc, Job, Remote};
use crate::say::{prog, say};
use crate::spec::{self, JobSpec, Place, SECRET_SCRIPT, setting};
use crate::start::{self, PE_HEARTBEAT_SLACK, Progress, host_port};
use crate::{children, events, hosts, output, rsh};

/// Environment variable: the start command template (`--rsh`).
const ENV_RSH: &str = "SHMEM_RSH";
/// Environment variable: the rendezvous address for other hosts (`--rendezvous-addr`).
const ENV_RENDEZVOUS_ADDR: &str = "SHMEM_RENDEZVOUS_ADDR";
/// Environment variable: `on` (one host agent per host) or `off` (one start command per PE)
/// (`--launch-agent`).
const ENV_LAUNCH_AGENT: &str = "SHMEM_LAUNCH_AGENT";
/// Environment variable: the path of `shmemrun` on the other hosts, for the host agent
/// (`--agent-path`).
const ENV_AGENT: &str = "SHMEM_AGENT";

/// The settings of a multi-host job.
pub struct MultiHost {
    /// The hosts that run PEs, and which.
    nodes: Vec<hosts::Node>,
    /// The start command.
    template: rsh::Template,
    /// The rendezvous address for every node.
    reach: Vec<String>,
    /// The time after which a silent PE or host ends the job.
    heartbeat_timeout: Duration,
    /// The path of `shmemrun` on the hosts, for one agent per host; `None`: a start command
    /// per PE.
    agent: Option<OsString>,
}

impl MultiHost {
    /// The number of PEs of the job.
    pub fn npes(&self) -> usize {
        self.nodes.last().map_or(0, |n| n.pes.end)
    }

    /// What holds shmemrun's descriptors: one agent per host, or every PE without agents.
    pub fn fd_holders(&self) -> start::Holders {
        if self.agent.is_some() {
            start::Holders::Agents(self.nodes.len())
        } else {
            start::Holders::Pes(self.npes())
        }
    }

    /// Refuses more than `limit` PEs per core on any host, each taken to have `cores` cores
    /// (as many as this machine).
    pub fn check_oversubscription(&self, cores: usize, limit: u32) -> Result<(), String> {
        self.nodes.iter().try_for_each(|n| {
            spec::check_oversubscription(
                n.pes.len(),
                cores,
                limit,
                &format!(
                    "host {} (taken to have as many cores as this machine)",
                    n.name
                ),
            )
        })
    }
}

/// The multi-host settings, or `None` without --hosts and --hostfile.
pub fn multi_host(cli: &Cli) -> Result<Option<MultiHost>, String> {
    let specs = match (&cli.hosts, &cli.hostfile) {
        (Some(list), _) => hosts::parse_list(list)?,
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read the host file {}: {e}", path.display()))?;
            hosts::parse_hostfile(&path.display().to_string(), &text)?
        }
        (None, None) => return Ok(None),
    };
    let nodes = hosts::place(&specs, cli.np.map(|n| n as usize))?;
    let template_text = setting(&cli.rsh, ENV_RSH, rsh::DEFAULT_TEMPLATE)?;
    let template = rsh::Template::parse(&template_text).map_err(|e| format!("--rsh: {e}"))?;
    let given = match (&cli.rendezvous_addr, std::env::var_os(ENV_RENDEZVOUS_ADDR)) {
        (Some(a), _) => Some(a.clone()),
        (None, Some(v)) => Some(
            v.into_string()
                .map_err(|v| format!("{ENV_RENDEZVOUS_ADDR}={v:?} is not valid UTF-8"))?,
        ),
        (None, None) => None,
    };
    let reach = match given {
        Some(a) => {
            let a = a.trim().to_string();
            if a.is_empty() || a.contains(':') || a.contains(char::is_whitespace) {
                return Err(format!(
                    "--rendezvous-addr {a:?}: expected an IPv4 address or a host name of this \
                     machine"
                ));
            }
            vec![a; nodes.len()]
        }
        None => nodes
            .iter()
            .map(|n| hosts::reach_from(&n.name).map(|ip| ip.to_string()))
            .collect::<Result<_, _>>()?,
    };
    let default = wire::DEFAULT_HEARTBEAT_TIMEOUT_SECS.to_string();
    let text = setting(
        &cli.heartbeat_timeout,
        wire::ENV_HEARTBEAT_TIMEOUT,
        &default,
    )?;
    let heartbeat_timeout = wire::parse_timeout_secs(&text)
        .map_err(|e| format!("{}: {e}", wire::ENV_HEARTBEAT_TIMEOUT))?;
    if heartbeat_timeout < 2 * wire::HEARTBEAT_INTERVAL {
        return Err(format!(
            "{}: {text} s is too short: heartbeats come every {} s",
            wire::ENV_HEARTBEAT_TIMEOUT,
            wire::HEARTBEAT_INTERVAL.as_secs_f64()
        ));
    }
    let agent = match setting(&cli.launch_agent, ENV_LAUNCH_AGENT, "on")?.trim() {
        "on" => Some(match (&cli.agent_path, std::env::var_os(ENV_AGENT)) {
            (Some(p), _) => p.clone().into_os_string(),
            (None, Some(p)) if !p.is_empty() => p,
            // The same install path on every host, as mpirun assumes.
            _ => std::env::current_exe()
                .map_err(|e| {
                    format!(
                        "cannot find shmemrun's own path for the host agents ({e}); pass \
                         --agent-path PATH or --launch-agent off"
                    )
                })?
                .into_os_string(),
        }),
        "off" => None,
        other => {
            return Err(format!(
                "--launch-agent {other}: expected on or off (or {ENV_LAUNCH_AGENT} is set to it)"
            ));
        }
    };
    Ok(Some(MultiHost {
        nodes,
        template,
        reach,
        heartbeat_timeout,
        agent,
    }))
}

/// Runs every PE of the job through the start command on its host, as `m` places them,
/// listening on `bind_to` (`--bind`) else on the addresses the hosts are told; returns the
/// launcher's exit status.
pub fn run(
    job: &JobSpec<'_>,
    m: &MultiHost,
    bind_to: Option<&str>,
    notifier: &events::Notifier,
    inbox: events::Inbox,
) -> Result<i32, RunError> {
    let npes = m.npes();
    // Listen where the hosts will connect: on each distinct address they are told (or on the
    // one --bind names), never on every interface unless asked.
    let mut ips: Vec<&str> = match bind_to {
        Some(ip) => vec![ip],
        None => m.reach.iter().map(String::as_str).collect(),
    };
    ips.sort_unstable();
    ips.dedup();
    let Some((first, rest)) = ips.split_first() else {
        return Err(RunError::Setup("no address to listen on".into()));
    };
    let mut server = start::bind(&host_port(first, 0), job, npes)?;
    let bound = server.local_addr().map_err(|e| {
        RunError::Setup(format!(
            "cannot listen for the PEs' rendezvous on {first}: {e}"
        ))
    })?;
    let mut ports = vec![(first.to_string(), bound.port())];
    for ip in rest {
        let a = server.listen_also(&host_port(ip, 0)).map_err(|e| {
            RunError::Setup(format!(
                "cannot listen for the PEs' rendezvous on {ip}: {e}; pass --bind with an \
                 address of this machine (0.0.0.0 for every interface)"
            ))
        })?;
        ports.push((ip.to_string(), a.port()));
    }
    // With --bind, every host reaches the one listener at its own address; else each its own.
    let port_for = |reach: &str| {
        ports
            .iter()
            .find(|(ip, _)| bind_to.is_some() || ip == reach)
            .map_or(0, |p| p.1)
    };
    server.set_heartbeat(
        wire::HEARTBEAT_INTERVAL,
        m.heartbeat_timeout,
        m.heartbeat_timeout + PE_HEARTBEAT_SLACK,
    );
    // The start-up table goes to one PE per host, which shares it with the host's others.
    let mut node_of = vec![0; npes];
    for (node, n) in m.nodes.iter().enumerate() {
        for pe in n.pes.clone() {
            node_of[pe] = node;
        }
    }
    start::set_nodes(&mut server, node_of)?;
    let forwarded = spec::forwarded_env();
    // The same directory on every host (shared file systems), as mpirun does; `env -C` fails
    // with a clear message where it does not exist.
    let cwd = std::env::current_dir().ok();
    let secret_line = format!("{}\n", job.secret.to_hex());
    let mut run = Job::new(server, inbox, Some(m.heartbeat_timeout), true);
    let mut progress = Progress::new(npes);
    if let Some(agent) = &m.agent {
        let how = Agents {
            job,
            m,
            agent,
            forwarded: &forwarded,
            cwd: cwd.as_deref(),
            secret_line: &secret_line,
            port_for: &port_for,
        };
        how.start(&mut run, &mut progress, notifier);
        progress.finish(run.started());
        return Ok(run.run());
    }
    'nodes: for (node, n) in m.nodes.iter().enumerate() {
        let addr = host_port(&m.reach[node], port_for(&m.reach[node]));
        for pe in n.pes.clone() {
            if run.interrupted() {
                break 'nodes;
            }
            let mut remote: Vec<OsString> = vec!["env".into()];
            if let Some(dir) = &cwd {
                remote.push("-C".into());
                remote.push(dir.clone().into_os_string());
            }
            let at = Place {
                node,
                nnodes: m.nodes.len(),
                local_rank: pe - n.pes.start,
                local_size: n.pes.len(),
            };
            let vars = job.vars(&addr, pe, npes, at);
            for (k, v) in vars.iter().chain(&forwarded).chain(&job.exports) {
                let mut kv = k.clone();
                kv.push("=");
                kv.push(v);
                remote.push(kv);
            }
            // The secret comes on stdin, never as an argument.
            remote.extend(["sh", "-c", SECRET_SCRIPT, "shmem-pe"].map(OsString::from));
            remote.push(job.program.clone());
            remote.extend(job.args.iter().cloned());
            let argv = m.template.command(&n.name, &remote);
            let command = rsh::display(&argv);
            let tail = Arc::new(output::Tail::default());
            let spec = children::Spec {
                program: OsStr::new(&argv[0]),
                args: &argv[1..],
                env: &[],
                prefix: job.prefix,
                tail: Some(tail.clone()),
                pe,
                // Only PE 0 reads the launcher's stdin, after the secret's line.
                input: children::Input::Secret {
                    first: secret_line.clone(),
                    then_launcher: pe == 0,
                },
                tagged: None,
            };
            match children::spawn(&spec, notifier) {
                Ok((pid, outputs)) => run.add(
                    pid,
                    outputs,
                    Some(Remote {
                        host: n.name.clone(),
                        node,
                        command,
                        tail,
                    }),
                ),
                Err(e) => {
                    let what = format!(
                        "cannot run the start command of PE {pe} on host {}: {}: {}",
                        n.name,
                        argv[0].to_string_lossy(),
                        children::os_message(&e)
                    );
                    say!("{what}\n{}:   start command: {command}", prog());
                    run.fail(children::spawn_code(&e), &what);
                    break 'nodes;
                }
            }
            progress.tick(pe + 1);
        }
    }
    progress.finish(run.started());
    Ok(run.run())
}

/// What the start of the host agents needs.
struct Agents<'a> {
    job: &'a JobSpec<'a>,
    m: &'a MultiHost,
    /// The path of shmemrun on the hosts.
    agent: &'a OsStr,
    forwarded: &'a [(OsString, OsString)],
    cwd: Option<&'a std::path::Path>,
    secret_line: &'a str,
    port_for: &'a dyn Fn(&str) -> u16,
}

impl Agents<'_> {
    /// Starts one host agent per host through the start command; it starts the host's PEs.
    fn start(&self, run: &mut Job, progress: &mut Progress, notifier: &events::Notifier) {
        let (job, m) = (self.job, self.m);
        let npes = m.npes();
        for (node, n) in m.nodes.iter().enumerate() {
            if run.interrupted() {
                break;
            }
            let addr = host_port(&m.reach[node], (self.port_for)(&m.reach[node]));
            let mut remote: Vec<OsString> = vec!["env".into()];
            if let Some(dir) = self.cwd {
                remote.push("-C".into());
                remote.push(dir.as_os_str().to_owned());
            }
            // The job's variables as the host's first PE has them; the agent sets SHMEM_PE,
            // SHMEM_LOCAL_RANK and SHMEM_RENDEZVOUS (its own port) for each PE.
            let at = Place {
                node,
                nnodes: m.nodes.len(),
                local_rank: 0,
                local_size: n.pes.len(),
            };
            let vars = job.vars(&addr, n.pes.start, npes, at);
            for (k, v) in vars.iter().chain(self.forwarded).chain(&job.exports) {
                let mut kv = k.clone();
                kv.push("=");
                kv.push(v);
                remote.push(kv);
            }
            remote.push(self.agent.to_owned());
            remote.push(crate::agent::FLAG.into());
            remote.push("--".into());
            remote.push(job.program.clone());
            remote.extend(job.args.iter().cloned());
            let argv = m.template.command(&n.name, &remote);
            let command = rsh::display(&argv);
            let tails: Vec<Arc<output::Tail>> = n.pes.clone().map(|_| Arc::default()).collect();
            for (i, _) in n.pes.clone().enumerate() {
                run.add(
                    0,
                    0,
                    Some(Remote {
                        host: n.name.clone(),
                        node,
                        command: command.clone(),
                        tail: Arc::clone(&tails[i]),
                    }),
                );
            }
            let host_tail = Arc::new(output::Tail::default());
            let spec = children::Spec {
                program: OsStr::new(&argv[0]),
                args: &argv[1..],
                env: &[],
                prefix: job.prefix,
                tail: Some(host_tail.clone()),
                pe: crate::job::agent_id(node),
                // PE 0's host agent passes the launcher's stdin on to PE 0.
                input: children::Input::Secret {
                    first: self.secret_line.to_string(),
                    then_launcher: n.pes.contains(&0),
                },
                tagged: Some(output::Tagged {
                    pes: n.pes.clone(),
                    to_stderr: false,
                    prefix: job.prefix,
                    tails,
                    host_tail: None,
                }),
            };
            let (pid, outputs) = match children::spawn(&spec, notifier) {
                Ok(started) => started,
                Err(e) => {
                    let what = format!(
                        "cannot run the start command of PE{} {} on host {}: {}: {}",
                        if n.pes.len() == 1 { "" } else { "s" },
                        wire::pe_list(&n.pes.clone().collect::<Vec<_>>()),
                        n.name,
                        argv[0].to_string_lossy(),
                        children::os_message(&e)
                    );
                    say!("{what}\n{}:   start command: {command}", prog());
                    run.add_agent(
                        AgentProc {
                            pid: 0,
                            host: n.name.clone(),
                            pes: n.pes.clone(),
                            command,
                            tail: host_tail,
                            reaped: true,
                        },
                        0,
                    );
                    run.fail(children::spawn_code(&e), &what);
                    break;
                }
            };
            run.add_agent(
                AgentProc {
                    pid,
                    host: n.name.clone(),
                    pes: n.pes.clone(),
                    command,
                    tail: host_tail,
                    reaped: false,
                },
                outputs,
            );
            progress.tick(n.pes.end);
        }
    }
}
