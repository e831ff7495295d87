//! The command line: the `Cli` that clap parses (its help text is `shmemrun --help`) and the
//! parsers of its values.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgGroup, CommandFactory, FromArgMatches, Parser};
use shmem_launch::wire;

/// Start N processing elements (PEs) of a shmem-core program and supervise them.
#[derive(Parser, Debug)]
#[command(
    name = "shmemrun",
    version,
    group(ArgGroup::new("hostset").args(["hosts", "hostfile"])),
    after_help = "\
Every PE gets SHMEM_RENDEZVOUS, SHMEM_PE, SHMEM_NPES, SHMEM_JOB_ID, SHMEM_JOB_SECRET, \
SHMEM_INIT_TIMEOUT, SHMEM_NODE (the index of its host, from 0), SHMEM_NNODES (the number of \
hosts), SHMEM_LOCAL_RANK and SHMEM_LOCAL_SIZE (its index among its host's PEs, and their \
number) and SHMEM_BIND_TO (--bind-to) in its environment, and OMP_NUM_THREADS (the host's \
cores divided by its PEs, at least 1) unless that is set. Only PE 0 reads stdin.

Output: every PE's stdout and stderr pass through shmemrun (on other hosts through the host \
agent), which writes them to its own stdout and stderr line by line, whole lines only, so that \
lines of different PEs never mix, even when a PE writes a line's text and its newline apart. \
A partial line (a prompt) is passed on once nothing follows it for 0.1 s, and at the PE's end. \
Without --prefix the bytes are exactly the PE's. The PEs' stdout is a pipe, not a terminal (as \
under srun): C's stdio buffers it in blocks, Python too unless run with -u.

Security: every job has a random 256-bit secret; every connection to shmemrun and every \
start-up record proves it (HMAC-SHA256), so other users cannot join or disturb the job. \
shmemrun listens on 127.0.0.1 (with --hosts: on the addresses the hosts reach it at; --bind to \
choose). The secret is never on a command line: local PEs inherit it, PEs on other hosts read \
it from the first line of the start command's stdin.

When a PE exits with a non-zero status or is killed by a signal, shmemrun stops the other PEs \
(SIGTERM, then SIGKILL) and exits with that PE's status (128 + signal number for a signal). \
A PE that called init and exits with status 0 without finalizing ends the job too (status 1), \
within a second, naming it. SIGINT, SIGTERM, SIGHUP and SIGQUIT to shmemrun, also while it is \
still starting PEs, stop every PE; shmemrun then exits with 128 + the signal number. More than \
64 PEs per core (--oversubscribe-limit) are refused.

Not detected on one host: a PE stopped with SIGSTOP (or in a debugger) or hung; the others \
wait for it. For detection give --heartbeat-timeout SECS: the PEs then send heartbeats and a PE \
silent for that long ends the job (as with --hosts, where this is always on).

Several hosts (--hosts, --hostfile): PEs are placed in blocks (host 0 runs PEs 0..k): up to \
each host's slots when slots are given, else as evenly as possible. Every host is started with \
the start command (--rsh, $SHMEM_RSH, default \"ssh -o BatchMode=yes {host} {cmd}\"), which \
runs \"env -C DIR VAR=VALUE... SHMEMRUN --host-agent -- PROGRAM ARGS...\" on the host: the host \
agent (SHMEMRUN is --agent-path, $SHMEM_AGENT, else this shmemrun's path), which starts the \
host's PEs, relays their connections over its one connection to shmemrun and their output, and \
ends them when shmemrun says so or is gone. With --launch-agent off ($SHMEM_LAUNCH_AGENT=off) \
every PE is started with a start command of its own, which runs \"env -C DIR VAR=VALUE... \
PROGRAM ARGS...\". DIR is shmemrun's working directory, the variables are the ones above, every \
UCX_* and SHMEM_* variable of shmemrun's environment, and those given with -x. Each host is told the address from --rendezvous-addr, \
else the address of this machine on the route to that host, and shmemrun listens on just those \
addresses (--bind 0.0.0.0 for every interface, e.g. behind NAT). \
The start command must pass its standard input on (ssh does): its first line is the job secret. \
The agent reports each PE's exit status (without agents, the start command's exit status \
stands for the PE's). Besides, every PE keeps a control \
connection to shmemrun with heartbeats every 0.5 s: a PE or host silent for the heartbeat \
timeout (--heartbeat-timeout, $SHMEM_HEARTBEAT_TIMEOUT, default 3 s) ends the job, naming the \
host and its PEs; to end the job shmemrun tells every PE over that connection (the PE prints \
the reason and exits), and a PE that loses shmemrun (connection closed, or silent for the \
timeout + 1 s) exits by itself, naming shmemrun's address.

Exit status: 0 when every PE exits with 0; 127 when PROGRAM (or the start command) cannot be \
found, 126 when it cannot be executed; 1 when the job fails for another reason (rendezvous, \
a silent host, a lost PE); 2 for a bad command line."
)]
pub struct Cli {
    /// Number of PEs to start. Default: 1; with --hosts or --hostfile, every slot when slots
    /// are given, else one per host. Also spelled -np N, -c N and --n N (as with mpirun).
    #[arg(
        short = 'n',
        long = "np",
        short_alias = 'c',
        alias = "n",
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(1..=1_000_000)
    )]
    pub np: Option<u32>,

    /// Prefix every line a PE writes to stdout or stderr with "[PE i] " (a partial line cut
    /// by a pause ends there, and its rest gets a label of its own).
    #[arg(short, long)]
    pub prefix: bool,

    /// Seconds the PEs have to reach the start-up rendezvous (fractions allowed). Default:
    /// $SHMEM_INIT_TIMEOUT, else 60.
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    pub init_timeout: Option<String>,

    /// Run the PEs on these hosts, in blocks: HOST or HOST:SLOTS, comma-separated (e.g.
    /// "node1:4,node2:4"). Every host, this one included, is reached through the start command.
    #[arg(long, value_name = "HOST[:SLOTS],...")]
    pub hosts: Option<String>,

    /// Like --hosts, from a file: one host per line as HOST, HOST:SLOTS or HOST slots=SLOTS;
    /// '#' starts a comment.
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<PathBuf>,

    /// Start command template for a PE on a host: {host} becomes the host; {cmd} becomes the
    /// remote command as one shell-quoted word (for ssh); without {cmd} the remote command's
    /// words are appended. Default: $SHMEM_RSH, else "ssh -o BatchMode=yes {host} {cmd}".
    #[arg(long, value_name = "TEMPLATE", requires = "hostset")]
    pub rsh: Option<String>,

    /// "on": start one host agent per host (shmemrun itself, `--agent-path`), which starts
    /// the host's PEs and holds the host's one connection to shmemrun; "off": one start command
    /// per PE, each PE connecting to shmemrun itself (for hosts without shmemrun). Default:
    /// $SHMEM_LAUNCH_AGENT, else on.
    #[arg(long, value_name = "on|off", requires = "hostset")]
    pub launch_agent: Option<String>,

    /// The path of shmemrun on the other hosts, for the host agents. Default: $SHMEM_AGENT,
    /// else this shmemrun's own path (the same install path on every host, as mpirun assumes).
    #[arg(long, value_name = "PATH", requires = "hostset")]
    pub agent_path: Option<PathBuf>,

    /// The address (IPv4 or name) at which the hosts reach this machine for the rendezvous.
    /// Default: $SHMEM_RENDEZVOUS_ADDR, else for each host the local address of the route to
    /// it.
    #[arg(long, value_name = "IP", requires = "hostset")]
    pub rendezvous_addr: Option<String>,

    /// Seconds without a heartbeat after which a PE counts as gone (fractions allowed). Default
    /// with --hosts: $SHMEM_HEARTBEAT_TIMEOUT, else 3. On one host heartbeats are off unless
    /// this is given: then a stopped or hung PE ends the job too.
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    pub heartbeat_timeout: Option<String>,

    /// The address shmemrun listens on for its PEs, e.g. 0.0.0.0 for every interface. Default:
    /// 127.0.0.1; with --hosts, the addresses the hosts are told to reach it at.
    #[arg(long, value_name = "IP")]
    pub bind: Option<String>,

    /// Refuse to start more PEs than this per core: of this machine, and with --hosts of each
    /// host (taken to have as many cores as this machine).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 64,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub oversubscribe_limit: u32,

    /// "core": each PE binds itself to one CPU of its host at start-up, in order of its index
    /// among the host's PEs (within the CPUs shmemrun, or the remote command, may run on); on
    /// a host with more PEs than those CPUs, none is bound. "none": the scheduler places the
    /// PEs. Default: $SHMEM_BIND_TO, else core (as mpirun binds).
    #[arg(long, value_name = "core|none")]
    pub bind_to: Option<String>,

    /// Pass the variable NAME (with its value here, or VALUE) to every PE; repeatable. UCX_*
    /// and SHMEM_* variables are passed anyway.
    #[arg(short = 'x', value_name = "NAME[=VALUE]")]
    pub export: Vec<String>,

    /// The program to run, and its arguments (which may start with '-').
    #[arg(
        value_name = "PROGRAM",
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub command: Vec<OsString>,
}

/// Parses the command line `args` (`argv[0]` first), after [`mpirun_spellings`]; a bad command
/// line ends the launcher as clap does (status 2, or 0 for --help and --version). Usage lines
/// and --version name the launcher as it was called (`oshrun` or `shmemrun`).
pub fn parse(args: Vec<OsString>) -> Cli {
    let args = mpirun_spellings(args);
    let matches = Cli::command()
        .name(crate::say::prog())
        .get_matches_from(args);
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// Rewrites a single-dash spelling of a long option, as mpirun and other OpenSHMEM launchers
/// take them (`-np 4`, `-np=4`, `-hostfile FILE`), into the long option clap parses (`--np 4`);
/// clap alone would read `-np 4` as `-n p` and then the program `4`.
///
/// Only the launcher's own options are rewritten: the scan stops at `--` and at the first word
/// that is neither an option nor an option's value, which is PROGRAM, so that the program's
/// arguments (`oshrun -np 2 prog -np 3`) pass through untouched. `argv[0]` is kept.
pub fn mpirun_spellings(mut args: Vec<OsString>) -> Vec<OsString> {
    let cmd = Cli::command();
    let options: Vec<_> = cmd.get_arguments().filter(|a| !a.is_positional()).collect();
    let takes_value = |a: &&clap::Arg| a.get_action().takes_values();
    // Long names (with their aliases) of two letters or more, and which of them take a value.
    let mut longs: Vec<(String, bool)> = Vec::new();
    let mut shorts: Vec<(char, bool)> = Vec::new();
    for a in &options {
        let value = takes_value(a);
        for l in a.get_long_and_visible_aliases().into_iter().flatten() {
            longs.push((l.to_string(), value));
        }
        for l in a.get_aliases().into_iter().flatten() {
            longs.push((l.to_string(), value));
        }
        for c in a.get_short_and_visible_aliases().into_iter().flatten() {
            shorts.push((c, value));
        }
        for c in a.get_all_short_aliases().into_iter().flatten() {
            shorts.push((c, value));
        }
    }
    let long_takes = |name: &str| longs.iter().find(|(l, _)| l == name).map(|&(_, v)| v);
    let short_takes = |c: char| shorts.iter().find(|&&(s, _)| s == c).map(|&(_, v)| v);
    let mut i = 1;
    while i < args.len() {
        // Non-UTF-8 words are no options of the launcher's: PROGRAM (or a value) starts there.
        let Some(word) = args[i].to_str().map(str::to_owned) else {
            break;
        };
        if word == "--" || !word.starts_with('-') || word == "-" {
            break;
        }
        let mut value_follows = false;
        if let Some(long) = word.strip_prefix("--") {
            let (name, attached) = long
                .split_once('=')
                .map_or((long, false), |(n, _)| (n, true));
            value_follows = !attached && long_takes(name) == Some(true);
        } else {
            let body = &word[1..];
            let (name, attached) = body
                .split_once('=')
                .map_or((body, false), |(n, _)| (n, true));
            if name.chars().count() > 1
                && let Some(takes) = long_takes(name)
            {
                args[i] = OsString::from(format!("-{word}"));
                value_follows = !attached && takes;
            } else {
                // A cluster of short flags, possibly ending in one that takes a value: the
                // value is the rest of the word, or the next word.
                for (k, c) in body.char_indices() {
                    if short_takes(c) == Some(true) {
                        value_follows = k + c.len_utf8() == body.len();
                        break;
                    }
                }
            }
        }
        i += if value_follows { 2 } else { 1 };
    }
    args
}

/// Checks a timeout in seconds (`--init-timeout`, `--heartbeat-timeout`) and keeps its text,
/// trimmed, for the PEs' environment.
fn parse_timeout(s: &str) -> Result<String, String> {
    wire::parse_timeout_secs(s).map(|_| s.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite(words: &[&str]) -> Vec<String> {
        let mut args = vec![OsString::from("oshrun")];
        args.extend(words.iter().map(OsString::from));
        mpirun_spellings(args)
            .into_iter()
            .skip(1)
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn single_dash_long_options_become_long_options() {
        assert_eq!(rewrite(&["-np", "4", "prog"]), ["--np", "4", "prog"]);
        assert_eq!(rewrite(&["-np=4", "prog"]), ["--np=4", "prog"]);
        assert_eq!(
            rewrite(&["-p", "-hostfile", "h", "-np", "2", "prog"]),
            ["-p", "--hostfile", "h", "--np", "2", "prog"]
        );
        // Values of other options are skipped, whatever they look like.
        assert_eq!(
            rewrite(&["--init-timeout", "5", "-x", "A", "-np", "2", "p"]),
            ["--init-timeout", "5", "-x", "A", "--np", "2", "p"]
        );
        assert_eq!(
            rewrite(&["-xFOO", "-np", "2", "p"]),
            ["-xFOO", "--np", "2", "p"]
        );
        assert_eq!(
            rewrite(&["-pn", "-np", "p"]),
            ["-pn", "-np", "p"],
            "-pn takes -np as N"
        );
    }

    #[test]
    fn the_programs_arguments_are_left_alone() {
        assert_eq!(
            rewrite(&["-np", "2", "prog", "-np", "3"]),
            ["--np", "2", "prog", "-np", "3"]
        );
        assert_eq!(rewrite(&["--", "-np", "3"]), ["--", "-np", "3"]);
        assert_eq!(
            rewrite(&["-n", "2", "prog", "-hosts"]),
            ["-n", "2", "prog", "-hosts"]
        );
        // A single letter is a short option, never a long one.
        assert_eq!(rewrite(&["-n", "2", "-c", "3"]), ["-n", "2", "-c", "3"]);
    }

    #[test]
    fn every_spelling_of_the_pe_count_parses() {
        for words in [
            &["-np", "3", "true"][..],
            &["-np=3", "true"],
            &["-n", "3", "true"],
            &["--np", "3", "true"],
            &["--n", "3", "true"],
            &["-c", "3", "true"],
        ] {
            let mut args = vec![OsString::from("oshrun")];
            args.extend(words.iter().map(OsString::from));
            let cli = Cli::try_parse_from(mpirun_spellings(args));
            assert_eq!(cli.map(|c| c.np).ok(), Some(Some(3)), "{words:?}");
        }
    }
}
