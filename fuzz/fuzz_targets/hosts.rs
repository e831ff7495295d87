//! `shmemrun`'s host lists (`--hosts`), host files (`--hostfile`), the placement of PEs on
//! them, and start-command templates (`--rsh`, `SHMEM_RSH`).
//!
//! Input: a mode byte, a PE count, then the text. Checks: no panic; an accepted list has
//! unique, non-empty names; a placement numbers the PEs 0..np in blocks, within each host's
//! slots; a template's command starts with its program and names the host.
#![no_main]

use std::ffi::OsString;

use libfuzzer_sys::fuzz_target;
use shmem_fuzz::Input;
use shmem_run::fuzzing::{HostSpec, Template, parse_hostfile, parse_list, place};

fn check_placement(hosts: &[HostSpec], np: Option<usize>) {
    let Ok(nodes) = place(hosts, np) else {
        return;
    };
    let mut next = 0;
    for node in &nodes {
        assert_eq!(node.pes.start, next, "{nodes:?}");
        assert!(
            node.pes.end > node.pes.start,
            "a host without PEs: {nodes:?}"
        );
        next = node.pes.end;
        let host = hosts
            .iter()
            .find(|h| h.name == node.name)
            .expect("a listed host");
        if let Some(slots) = host.slots {
            assert!(node.pes.len() <= slots, "{nodes:?}");
        }
    }
    if let Some(np) = np {
        assert_eq!(next, np, "{nodes:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mode = input.u8();
    let np = match input.u8() {
        0 => None,
        n if n < 0xf0 => Some(n as usize - 1),
        n => Some(usize::MAX - (0xff - n as usize)),
    };
    let text = String::from_utf8_lossy(input.rest());
    let hosts = match mode % 3 {
        0 => parse_list(&text),
        1 => parse_hostfile("hosts.txt", &text),
        _ => {
            if let Ok(t) = Template::parse(&text) {
                let argv = t.command(
                    "node-1",
                    &[OsString::from("prog"), OsString::from("a 'b' $c")],
                );
                assert!(!argv.is_empty());
                assert!(
                    argv.iter().any(|a| a.to_string_lossy().contains("node-1")),
                    "{argv:?}"
                );
            }
            return;
        }
    };
    let Ok(hosts) = hosts else {
        return;
    };
    assert!(!hosts.is_empty());
    for (i, h) in hosts.iter().enumerate() {
        assert!(!h.name.is_empty() && !h.name.starts_with('-'));
        assert!(hosts[..i].iter().all(|o| o.name != h.name), "{hosts:?}");
        assert!(h.slots != Some(0));
    }
    check_placement(&hosts, np);
});
