//! Hosts on this machine, made of network namespaces by `scripts/netns-hosts.sh`: any number
//! ([`Hosts`]) or two ([`TwoHosts`]).

use std::fs::File;
use std::ops::Deref;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::root::root_or_skip;
use crate::shmemrun::shmemrun;

/// The script that makes and runs the hosts.
pub fn netns_script() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/netns-hosts.sh")
}

/// Where the tags in use are locked (`flock`), so that tests in parallel threads and in other
/// processes never share or tear down each other's hosts.
const TAG_LOCKS: &str = "/run/shmem-netns-hosts-locks";

/// Hosts made by `scripts/netns-hosts.sh up TAG N`: N network namespaces joined by a bridge,
/// each with its own boot id, so UCX sees N machines; torn down on drop. Creating them needs
/// root: tests start with [`Hosts::up_or_skip`].
#[derive(Debug)]
pub struct Hosts {
    /// The tag of these hosts, from 1 to 254, locked for as long as they exist.
    pub tag: u32,
    /// `10.231.TAG.1`, `10.231.TAG.2`, ...: the address of every host, in order.
    pub hosts: Vec<String>,
    _lock: File,
}

impl Hosts {
    /// The largest number of hosts `netns-hosts.sh` makes under one tag.
    pub const MAX: usize = 32;

    /// `n` hosts for the test `test`, or `None` after a loud `SKIPPED` line on stderr when it
    /// does not run as root (see [`root_or_skip`]; with
    /// `SHMEM_TEST_REQUIRE_ROOT` set it panics instead). As root, [`up`](Self::up).
    pub fn up_or_skip(test: &str, n: usize) -> Option<Hosts> {
        root_or_skip(test).then(|| Hosts::up(n))
    }

    /// Creates `n` hosts (2 to [`MAX`](Self::MAX)) under a free tag; panics with the reason
    /// when it cannot (not root, no `ip`), so that a test on hosts never passes without
    /// running.
    pub fn up(n: usize) -> Hosts {
        assert!(
            (2..=Self::MAX).contains(&n),
            "netns-hosts.sh makes 2 to {} hosts, not {n}",
            Self::MAX
        );
        static NEXT: AtomicU32 = AtomicU32::new(0);
        std::fs::create_dir_all(TAG_LOCKS).unwrap_or_else(|e| {
            panic!("tests on hosts need root (network namespaces): cannot create {TAG_LOCKS}: {e}")
        });
        // Spread the starting points so that concurrent runs rarely probe the same tags.
        let start = std::process::id() + 37 * NEXT.fetch_add(1, Ordering::Relaxed);
        let mut tagged = None;
        for tag in (0..254).map(|i| (start + i) % 254 + 1) {
            let path = format!("{TAG_LOCKS}/{tag}.lock");
            let f = File::create(&path).unwrap_or_else(|e| {
                panic!("tests on hosts need root (network namespaces): cannot create {path}: {e}")
            });
            // SAFETY: flock on a descriptor we own; no memory is involved.
            if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                tagged = Some((tag, f));
                break;
            }
        }
        let (tag, lock) =
            tagged.expect("every netns-hosts tag from 1 to 254 is locked by another test");
        let out = Command::new("bash")
            .args([netns_script(), "up", &tag.to_string(), &n.to_string()])
            .output()
            .expect("run bash scripts/netns-hosts.sh");
        assert!(
            out.status.success(),
            "cannot create the {n} test hosts (network namespaces; the tests on hosts need root \
             and iproute2): `netns-hosts.sh up {tag} {n}` {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let hosts: Vec<String> = (1..=n).map(|i| format!("10.231.{tag}.{i}")).collect();
        let printed = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            printed.split_whitespace().collect::<Vec<_>>(),
            hosts,
            "`netns-hosts.sh up {tag} {n}` printed other addresses"
        );
        Hosts {
            tag,
            hosts,
            _lock: lock,
        }
    }

    /// `--hosts` with `slots` slots on each host: `10.231.TAG.1:SLOTS,10.231.TAG.2:SLOTS,...`.
    pub fn list(&self, slots: usize) -> String {
        self.hosts
            .iter()
            .map(|h| format!("{h}:{slots}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The start command template for `--rsh`.
    pub fn rsh(&self) -> String {
        format!("bash {} exec {{host}}", netns_script())
    }

    /// `shmemrun` run on host 1, with `SHMEM_BIND_TO=none` (its default for `--bind-to`): the
    /// hosts share this machine's CPUs, and binding would put each host's first PE on the same
    /// one; add the arguments.
    pub fn launcher(&self) -> Command {
        let mut cmd = Command::new("bash");
        cmd.args([netns_script(), "enter", &self.hosts[0]])
            .arg(shmemrun())
            .env("SHMEM_BIND_TO", "none");
        cmd
    }

    /// `shmemrun` run on host 1 with `--rsh` for these hosts and `args`; add the rest.
    pub fn shmemrun(&self, args: &[&str]) -> Command {
        let mut cmd = self.launcher();
        cmd.arg("--rsh").arg(self.rsh()).args(args);
        cmd
    }

    /// The name of host `i`'s network namespace (`i` from 0: host `i` has the address
    /// `hosts[i]`).
    pub fn netns(&self, i: usize) -> String {
        format!("shmemh-{}-{}", self.tag, i + 1)
    }

    /// The live processes on the hosts (zombies, which are already gone, excluded).
    pub fn processes(&self) -> Vec<(u32, String)> {
        let out = Command::new("bash")
            .args([netns_script(), "pids", &self.tag.to_string()])
            .output()
            .expect("run netns-hosts.sh pids");
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .filter_map(|p| p.parse::<u32>().ok())
            .filter_map(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                let state = stat
                    .rsplit(')')
                    .next()?
                    .split_whitespace()
                    .next()?
                    .to_string();
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                (state != "Z").then_some((pid, cmdline))
            })
            .collect()
    }

    /// Waits up to `limit` for every process on the hosts to be gone; panics naming them.
    pub fn assert_no_processes_left(&self, limit: Duration) {
        let start = Instant::now();
        loop {
            let left = self.processes();
            if left.is_empty() {
                return;
            }
            if start.elapsed() > limit {
                panic!("processes left on the test hosts {limit:?} after the job: {left:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .args([netns_script(), "down", &self.tag.to_string()])
            .status();
    }
}

/// Two [`Hosts`], for the tests written for two (`--hosts` with both, one far host); every
/// method of [`Hosts`] works on it.
#[derive(Debug)]
pub struct TwoHosts(Hosts);

impl TwoHosts {
    /// Two hosts for the test `test`, or `None` after a loud `SKIPPED` line when it does not run
    /// as root: [`Hosts::up_or_skip`] with two hosts.
    pub fn up_or_skip(test: &str) -> Option<TwoHosts> {
        Hosts::up_or_skip(test, 2).map(TwoHosts)
    }

    /// Creates two hosts under a free tag: [`Hosts::up`] with two hosts.
    pub fn up() -> TwoHosts {
        TwoHosts(Hosts::up(2))
    }
}

impl Deref for TwoHosts {
    type Target = Hosts;

    fn deref(&self) -> &Hosts {
        &self.0
    }
}
