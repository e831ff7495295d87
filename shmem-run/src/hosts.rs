//! `--hosts` and `--hostfile`: the hosts of a job, how many PEs each runs, and the address at
//! which each can reach the launcher.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::ops::Range;

/// One host as given on the command line or in the host file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSpec {
    /// The name handed to the start command (`{host}`), e.g. `node7`, `me@node7`, `10.0.0.7`.
    pub name: String,
    /// PEs it may run, when given.
    pub slots: Option<usize>,
}

/// A host that runs PEs: node number = index in the list [`place`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// The host's name.
    pub name: String,
    /// Its PEs.
    pub pes: Range<usize>,
}

/// Parses `HOST[:SLOTS]`; `origin` says where it came from, for messages.
fn parse_one(item: &str, origin: &str) -> Result<HostSpec, String> {
    let item = item.trim();
    let (name, slots) = match item.rsplit_once(':') {
        Some((name, n)) => {
            let slots: usize = n.parse().map_err(|_| {
                format!("{origin}: {item:?}: expected HOST or HOST:SLOTS with a number of slots")
            })?;
            if slots == 0 {
                return Err(format!("{origin}: {item:?}: a host needs at least 1 slot"));
            }
            (name, Some(slots))
        }
        None => (item, None),
    };
    check_name(name).map_err(|why| format!("{origin}: host {name:?} {why}"))?;
    Ok(HostSpec {
        name: name.to_string(),
        slots,
    })
}

/// Host names go to the start command as arguments: refuse what would read as an option or
/// need quoting.
fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("is empty");
    }
    if name.starts_with('-') {
        return Err("starts with '-'");
    }
    let ok = |c: char| c.is_ascii_alphanumeric() || "._-@".contains(c);
    if !name.chars().all(ok) {
        return Err("may contain only letters, digits, '.', '_', '-' and '@'");
    }
    Ok(())
}

/// Parses `--hosts a,b:2,c`.
pub fn parse_list(list: &str) -> Result<Vec<HostSpec>, String> {
    let hosts = list
        .split(',')
        .map(|item| parse_one(item, "--hosts"))
        .collect::<Result<Vec<_>, _>>()?;
    check_unique(hosts, "--hosts")
}

/// Parses a host file: one host per line as `HOST`, `HOST:SLOTS` or `HOST slots=SLOTS`; blank
/// lines and `#` comments are skipped.
pub fn parse_hostfile(path: &str, text: &str) -> Result<Vec<HostSpec>, String> {
    let mut hosts = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let origin = format!("{path}:{}", i + 1);
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or("");
        let mut host = parse_one(first, &origin)?;
        for word in words {
            match word.strip_prefix("slots=").map(str::parse::<usize>) {
                Some(Ok(n)) if n > 0 && host.slots.is_none() => host.slots = Some(n),
                _ => {
                    return Err(format!(
                        "{origin}: {word:?}: expected HOST, HOST:SLOTS or HOST slots=SLOTS"
                    ));
                }
            }
        }
        hosts.push(host);
    }
    if hosts.is_empty() {
        return Err(format!("{path}: no hosts in the file"));
    }
    check_unique(hosts, path)
}

fn check_unique(hosts: Vec<HostSpec>, origin: &str) -> Result<Vec<HostSpec>, String> {
    for (i, h) in hosts.iter().enumerate() {
        if hosts[..i].iter().any(|o| o.name == h.name) {
            return Err(format!(
                "{origin}: host {} is listed twice; give it slots instead ({}:2)",
                h.name, h.name
            ));
        }
    }
    Ok(hosts)
}

/// Places `np` PEs (default: every slot when slots are given, else one per host) in blocks:
/// host 0 gets PEs 0..k, host 1 the next ones, and so on. With slots, hosts are filled in order
/// up to their slots; without, PEs are spread as evenly as possible (the first hosts get one
/// more). Hosts left without PEs are not part of the job.
pub fn place(hosts: &[HostSpec], np: Option<usize>) -> Result<Vec<Node>, String> {
    let slotted = hosts.iter().filter(|h| h.slots.is_some()).count();
    let counts: Vec<usize> = if slotted == hosts.len() {
        // Slots are any usize a host list gives: their sum may not fit.
        let total = hosts
            .iter()
            .filter_map(|h| h.slots)
            .try_fold(0usize, usize::checked_add)
            .ok_or("the hosts' slots add up to more PEs than this machine can count")?;
        let np = np.unwrap_or(total);
        if np > total {
            let list: Vec<String> = hosts
                .iter()
                .map(|h| format!("{}:{}", h.name, h.slots.unwrap_or(0)))
                .collect();
            return Err(format!(
                "{np} PEs do not fit in the {total} slots of the hosts ({}); add slots or hosts",
                list.join(", ")
            ));
        }
        let mut left = np;
        hosts
            .iter()
            .map(|h| {
                let take = left.min(h.slots.unwrap_or(0));
                left -= take;
                take
            })
            .collect()
    } else if slotted == 0 {
        let np = np.unwrap_or(hosts.len());
        let (base, extra) = (np / hosts.len(), np % hosts.len());
        (0..hosts.len())
            .map(|i| base + usize::from(i < extra))
            .collect()
    } else {
        let with = hosts.iter().find(|h| h.slots.is_some());
        let without = hosts.iter().find(|h| h.slots.is_none());
        return Err(format!(
            "give slots for every host or for none ({}:{} has slots, {} has none)",
            with.map_or("", |h| &h.name),
            with.and_then(|h| h.slots).unwrap_or(0),
            without.map_or("", |h| &h.name)
        ));
    };
    let mut nodes = Vec::new();
    let mut next = 0;
    for (h, n) in hosts.iter().zip(counts) {
        if n > 0 {
            nodes.push(Node {
                name: h.name.clone(),
                pes: next..next + n,
            });
            next += n;
        }
    }
    Ok(nodes)
}

/// The address of this machine that `host` can reach it at: the source address the kernel
/// would use towards `host` (a UDP socket is connected, nothing is sent). IPv4 only, since the
/// launcher listens on 0.0.0.0.
pub fn reach_from(host: &str) -> Result<IpAddr, String> {
    let hint = "pass --rendezvous-addr with an address of this machine that the hosts can reach";
    // `user@host` is for ssh; the address is the host's.
    let name = host.rsplit('@').next().unwrap_or(host);
    let addrs: Vec<SocketAddr> = (name, 9)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve host {name}: {e}; {hint}"))?
        .collect();
    let Some(target) = addrs.iter().find(|a| a.is_ipv4()) else {
        return Err(format!(
            "host {name} has no IPv4 address (only {addrs:?}); {hint}"
        ));
    };
    let sock = UdpSocket::bind("0.0.0.0:0")
        .map_err(|e| format!("cannot open a UDP socket to find the route to {name}: {e}"))?;
    sock.connect(target).map_err(|e| {
        format!(
            "no route from this machine to host {name} ({}): {e}; {hint}",
            target.ip()
        )
    })?;
    let local = sock
        .local_addr()
        .map_err(|e| format!("cannot find the route to host {name}: {e}; {hint}"))?
        .ip();
    if local.is_unspecified() {
        return Err(format!(
            "cannot tell which address of this machine host {name} reaches; {hint}"
        ));
    }
    Ok(local)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, slots: Option<usize>) -> HostSpec {
        HostSpec {
            name: name.into(),
            slots,
        }
    }

    #[test]
    fn lists_and_files_parse() {
        assert_eq!(
            parse_list("a,me@b:2, 10.0.0.3").unwrap(),
            [
                spec("a", None),
                spec("me@b", Some(2)),
                spec("10.0.0.3", None)
            ]
        );
        for bad in [
            "",
            "a,,b",
            "a:0",
            "a:x",
            "-oProxyCommand=x",
            "a b",
            "a,a",
            "a;rm",
        ] {
            assert!(parse_list(bad).is_err(), "{bad}");
        }
        let file = "# hosts\nn1 slots=2\n\nn2:3   # comment\nn3\n";
        assert_eq!(
            parse_hostfile("hf", file).unwrap(),
            [spec("n1", Some(2)), spec("n2", Some(3)), spec("n3", None)]
        );
        let e = parse_hostfile("hf", "n1\nn2 cpus=4\n").unwrap_err();
        assert!(e.starts_with("hf:2: "), "{e}");
        assert!(parse_hostfile("hf", "# nothing\n").is_err());
    }

    fn pes(nodes: &[Node]) -> Vec<(&str, Range<usize>)> {
        nodes
            .iter()
            .map(|n| (n.name.as_str(), n.pes.clone()))
            .collect()
    }

    #[test]
    fn placement_is_in_blocks() {
        let even = [spec("a", None), spec("b", None), spec("c", None)];
        assert_eq!(
            pes(&place(&even, Some(8)).unwrap()),
            [("a", 0..3), ("b", 3..6), ("c", 6..8)]
        );
        assert_eq!(
            pes(&place(&even, None).unwrap()),
            [("a", 0..1), ("b", 1..2), ("c", 2..3)]
        );
        // Fewer PEs than hosts: the last hosts are left out.
        assert_eq!(
            pes(&place(&even, Some(2)).unwrap()),
            [("a", 0..1), ("b", 1..2)]
        );
        let slots = [spec("a", Some(2)), spec("b", Some(3))];
        assert_eq!(
            pes(&place(&slots, None).unwrap()),
            [("a", 0..2), ("b", 2..5)]
        );
        assert_eq!(
            pes(&place(&slots, Some(3)).unwrap()),
            [("a", 0..2), ("b", 2..3)]
        );
        let e = place(&slots, Some(6)).unwrap_err();
        assert!(e.contains("6 PEs do not fit in the 5 slots"), "{e}");
        assert!(place(&[spec("a", Some(2)), spec("b", None)], None).is_err());
    }

    /// Found while writing the `hosts` fuzz target (its input: fuzz/corpus/hosts/crash-slots-overflow): slots that
    /// add up past `usize::MAX` panicked (overflow) instead of being refused.
    #[test]
    fn slots_that_add_up_past_usize_are_refused() {
        let hosts = parse_list("a:18446744073709551615,b:1").expect("each slot count is a usize");
        for np in [None, Some(1), Some(usize::MAX)] {
            let e = place(&hosts, np).expect_err("too many slots");
            assert!(e.contains("slots add up"), "{e}");
        }
        let hosts = [spec("a", Some(usize::MAX))];
        assert_eq!(pes(&place(&hosts, Some(2)).expect("fits")), [("a", 0..2)]);
    }

    #[test]
    fn the_launcher_is_reached_from_loopback_at_loopback() {
        assert_eq!(reach_from("127.0.0.1").unwrap().to_string(), "127.0.0.1");
        let e = reach_from("no-such-host.invalid").unwrap_err();
        assert!(e.contains("--rendezvous-addr"), "{e}");
    }
}
