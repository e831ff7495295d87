//! Two hosts on this machine, made of network namespaces by `scripts/netns-hosts.sh`.

use std::fs::File;
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

/// Two hosts made by `scripts/netns-hosts.sh up TAG` (network namespaces joined by a veth pair,
/// each with its own boot id, so UCX sees two machines); torn down on drop. Creating them needs
/// root: tests start with [`TwoHosts::up_or_skip`].
#[derive(Debug)]
pub struct TwoHosts {
    /// The tag of this pair of hosts, from 1 to 254, locked for as long as they exist.
    pub tag: u32,
    /// `10.231.TAG.1` and `10.231.TAG.2`.
    pub hosts: [String; 2],
    _lock: File,
}

impl TwoHosts {
    /// The hosts for the test `test`, or `None` after a loud `SKIPPED` line on stderr when it
    /// does not run as root (see [`root_or_skip`](crate::root_or_skip); with
    /// `SHMEM_TEST_REQUIRE_ROOT` set it panics instead). As root, [`up`](Self::up).
    pub fn up_or_skip(test: &str) -> Option<TwoHosts> {
        root_or_skip(test).then(TwoHosts::up)
    }

    /// Creates the hosts under a free tag; panics with the reason when it cannot (not root, no
    /// `ip`), so that a two-host test never passes without running.
    pub fn up() -> TwoHosts {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        std::fs::create_dir_all(TAG_LOCKS).unwrap_or_else(|e| {
            panic!("two-host tests need root (network namespaces): cannot create {TAG_LOCKS}: {e}")
        });
        // Spread the starting points so that concurrent runs rarely probe the same tags.
        let start = std::process::id() + 37 * NEXT.fetch_add(1, Ordering::Relaxed);
        let mut tagged = None;
        for tag in (0..254).map(|i| (start + i) % 254 + 1) {
            let path = format!("{TAG_LOCKS}/{tag}.lock");
            let f = File::create(&path).unwrap_or_else(|e| {
                panic!("two-host tests need root (network namespaces): cannot create {path}: {e}")
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
            .args([netns_script(), "up", &tag.to_string()])
            .output()
            .expect("run bash scripts/netns-hosts.sh");
        assert!(
            out.status.success(),
            "cannot create the two test hosts (network namespaces; the two-host tests need root \
             and iproute2): `netns-hosts.sh up {tag}` {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        TwoHosts {
            tag,
            hosts: [format!("10.231.{tag}.1"), format!("10.231.{tag}.2")],
            _lock: lock,
        }
    }

    /// `--hosts` with `slots` slots on each host.
    pub fn list(&self, slots: usize) -> String {
        format!("{}:{slots},{}:{slots}", self.hosts[0], self.hosts[1])
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

    /// The name of host `i`'s network namespace.
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

impl Drop for TwoHosts {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .args([netns_script(), "down", &self.tag.to_string()])
            .status();
    }
}
