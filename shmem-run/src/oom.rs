//! Naming the kernel's out-of-memory killer. A PE that touches more memory than the machine
//! (or its memory cgroup) can give is not told so: the kernel sends it SIGKILL. When a PE dies
//! by a SIGKILL the launcher did not send, the job's message says what that most often means,
//! with the count of out-of-memory kills of the launcher's memory cgroup (cgroup v2
//! `memory.events`, v1 `memory.oom_control`) since the job started, and the heap size each PE
//! was given.

use std::path::PathBuf;

/// The memory cgroup's out-of-memory kill counter, read at the start of the job.
#[derive(Debug)]
pub struct OomWatch {
    /// The file that holds the counter (`None`: no memory cgroup found).
    file: Option<PathBuf>,
    /// The counter when the job started.
    start: u64,
}

impl OomWatch {
    /// Finds this process's memory cgroup and reads its counter.
    pub fn start() -> OomWatch {
        let file = std::fs::read_to_string("/proc/self/cgroup")
            .ok()
            .and_then(|text| counter_file(&text));
        let start = file.as_ref().and_then(read_count).unwrap_or(0);
        OomWatch { file, start }
    }

    /// The kills counted since [`start`](Self::start), when the counter can be read.
    fn kills(&self) -> Option<u64> {
        let now = read_count(self.file.as_ref()?)?;
        Some(now.saturating_sub(self.start))
    }

    /// What to add to "PE n was killed by signal 9 (SIGKILL)" when the launcher did not send
    /// it.
    pub fn explain_sigkill(&self) -> String {
        let heap = match std::env::var("SHMEM_SYMMETRIC_SIZE") {
            Ok(v) => format!("SHMEM_SYMMETRIC_SIZE={v}"),
            Err(_) => "256 MiB, the default".to_string(),
        };
        let cause = match self.kills() {
            Some(0) => "not by the launcher; the memory cgroup counted no out-of-memory kill, so \
                        most likely by a person or another program"
                .to_string(),
            Some(k) => format!(
                "by the kernel's out-of-memory killer ({k} out-of-memory kill{} in this job's \
                 memory cgroup since it started): the machine could not back the memory the PE \
                 touched",
                if k == 1 { "" } else { "s" }
            ),
            None => "not by the launcher; most often that is the kernel's out-of-memory killer, \
                     when the machine cannot back the memory a PE touches"
                .to_string(),
        };
        format!(
            " ({cause}; each PE's symmetric heap is {heap} and costs memory only where it is \
             touched)"
        )
    }
}

/// The counter file of the memory cgroup named in `/proc/self/cgroup`'s `text`.
fn counter_file(text: &str) -> Option<PathBuf> {
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let path = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "memory") {
            let f = PathBuf::from("/sys/fs/cgroup/memory")
                .join(path)
                .join("memory.oom_control");
            if f.exists() {
                return Some(f);
            }
        }
        if controllers.is_empty() {
            let f = PathBuf::from("/sys/fs/cgroup")
                .join(path)
                .join("memory.events");
            if f.exists() {
                return Some(f);
            }
        }
    }
    None
}

/// The `oom_kill N` line of a counter file.
fn read_count(file: &PathBuf) -> Option<u64> {
    parse_count(&std::fs::read_to_string(file).ok()?)
}

/// The value of the `oom_kill` line in `text`.
fn parse_count(text: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        (w.next() == Some("oom_kill")).then(|| w.next()?.parse().ok())?
    })
}

#[cfg(test)]
mod tests {
    use super::parse_count;

    #[test]
    fn reads_the_kill_counter_of_both_cgroup_versions() {
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n";
        let v2 = "low 0\nhigh 0\nmax 7\noom 2\noom_kill 2\noom_group_kill 0\n";
        assert_eq!(parse_count(v1), Some(3));
        assert_eq!(parse_count(v2), Some(2));
        assert_eq!(parse_count("oom 1\n"), None);
        assert_eq!(parse_count("oom_kill many\n"), None);
    }
}
