//! The seed inputs of every target: valid frames, handshakes and collectives, tables and
//! records, active messages, settings, host lists and macro inputs, in each target's input
//! format. `examples/write_seeds.rs` writes them to `corpus/<target>/`.

use shmem_launch::auth::{self, Secret};
use shmem_launch::wire::{CollectiveKind, Msg};

use crate::words;

/// One seed: its target, its file name, its bytes.
pub type Seed = (&'static str, String, Vec<u8>);

/// Every seed.
pub fn all() -> Vec<Seed> {
    let mut out = Vec::new();
    wire_frames(&mut out);
    launch_server(&mut out);
    startup_table(&mut out);
    startup_record(&mut out);
    strided_am(&mut out);
    settings(&mut out);
    hosts(&mut out);
    macros(&mut out);
    out
}

fn sample_messages() -> Vec<Msg> {
    vec![
        Msg::Challenge { nonce: [1; 32] },
        Msg::Hello {
            version: 4,
            job_id: 7,
            pe: 1,
            npes: 2,
            nonce: [2; 32],
            mac: [3; 32],
        },
        Msg::Accepted { mac: [4; 32] },
        Msg::Collective {
            epoch: 0,
            kind: CollectiveKind::SharedAllgather,
            blob: b"record".to_vec(),
        },
        Msg::Table {
            epoch: 1,
            blobs: vec![b"a".to_vec(), Vec::new(), b"ccc".to_vec()],
        },
        Msg::Finalize,
        Msg::GlobalExit { status: -3 },
        Msg::Error {
            code: 1,
            detail: "PE 1 did not reach the rendezvous".into(),
        },
        Msg::ControlHello {
            version: 4,
            job_id: 7,
            pe: 0,
            pid: 4242,
            nonce: [5; 32],
            mac: [6; 32],
        },
        Msg::Welcome {
            interval_ms: 500,
            timeout_ms: 6000,
            mac: [7; 32],
        },
        Msg::Heartbeat,
        Msg::Abort {
            status: 9,
            reason: "job over".into(),
        },
        Msg::Lead { epoch: 0 },
        Msg::Published {
            epoch: 0,
            pid: 99,
            fd: 5,
            len: 128,
        },
        Msg::TableAt {
            epoch: 0,
            pid: 99,
            fd: 5,
            len: 128,
        },
        Msg::Fetch { epoch: 0 },
        Msg::AgentHello {
            version: 4,
            job_id: 7,
            node: 1,
            pid: 4243,
            nonce: [8; 32],
            mac: [9; 32],
        },
        Msg::Open { conn: 3 },
        Msg::Relay {
            conn: 3,
            data: Msg::Heartbeat.encode(),
        },
        Msg::Close { conn: 3 },
        Msg::Exited {
            pe: 1,
            pid: 4244,
            status: 9,
        },
        Msg::Stop { status: 1 },
    ]
}

fn wire_frames(out: &mut Vec<Seed>) {
    let msgs = sample_messages();
    for (i, m) in msgs.iter().enumerate() {
        let mut seed = vec![2, 1, 0, 0, 0];
        seed.extend_from_slice(&m.encode());
        out.push(("wire_frames", format!("msg-{i:02}"), seed));
    }
    let mut all = vec![2, 0x35, 0x21, 0, 0];
    for m in &msgs {
        all.extend_from_slice(&m.encode());
    }
    out.push(("wire_frames", "all-messages".into(), all));
    // A handshake-sized buffer fed a frame that is too long.
    let mut long = vec![0, 7, 0, 0, 0];
    long.extend_from_slice(&1000u32.to_le_bytes());
    long.extend_from_slice(&[0; 16]);
    out.push(("wire_frames", "too-long".into(), long));
    // A host agent's stream: relays of a hello and a heartbeat, read with the agent limit.
    let mut relays = vec![5, 3, 0, 0, 0];
    for inner in [sample_messages()[1].encode(), Msg::Heartbeat.encode()] {
        relays.extend_from_slice(&Msg::Relay { conn: 1, data: inner }.encode());
    }
    out.push(("wire_frames", "agent-relays".into(), relays));
}

/// Operations of the `launch_server` target.
mod op {
    pub const CONNECT: u8 = 0;
    pub const HELLO: u8 = 1;
    pub const COLLECTIVE: u8 = 2;
    pub const OTHER: u8 = 3;
    pub const RAW: u8 = 4;
    pub const SHUTDOWN: u8 = 6;
    pub const CLOSE: u8 = 7;
    pub const EXITED: u8 = 8;
    pub const POLL: u8 = 10;
}

fn launch_server(out: &mut Vec<Seed>) {
    use op::*;
    // Config: npes = 1 + (c % 4); 0x10 short rendezvous timeout, 0x20 short handshake and
    // stall timeouts, 0x40 heartbeats, 0x80 nodes of two PEs.
    let hello = |i: u8, variant: u8, pe: u8| vec![HELLO, i, variant, pe, 9];
    let collective = |i: u8, epoch: u8, kind: u8, blob: &[u8]| {
        let mut v = vec![COLLECTIVE, i, epoch, kind, 1, blob.len() as u8];
        v.extend_from_slice(blob);
        v
    };
    let finalize = |i: u8| vec![OTHER, i, 0, 0];
    let mut two = vec![1u8, CONNECT, CONNECT];
    two.extend(hello(0, 0, 0));
    two.extend(hello(1, 0, 1));
    two.extend([POLL, 1]);
    two.extend(collective(0, 0, 0, b"zero"));
    two.extend(collective(1, 0, 0, b"one"));
    two.extend([POLL, 2]);
    two.extend(collective(0, 1, 1, b""));
    two.extend(collective(1, 1, 1, b""));
    two.extend([POLL, 1]);
    two.extend(finalize(0));
    two.extend(finalize(1));
    two.extend([POLL, 1]);
    out.push((
        "launch_server",
        "two-pes-allgather-barrier-finalize".into(),
        two,
    ));

    let mut shared = vec![0x80 | 3u8];
    for i in 0..4 {
        shared.push(CONNECT);
        shared.extend(hello(i, 0, i));
    }
    shared.extend([POLL, 1]);
    for i in 0..4 {
        shared.extend(collective(i, 0, 2, &[i; 8]));
    }
    shared.extend([POLL, 2, POLL, 2]);
    // The leader publishes nothing usable: the others fetch.
    shared.extend([OTHER, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    shared.extend([OTHER, 1, 0, 4]);
    shared.extend([POLL, 2]);
    out.push(("launch_server", "four-pes-shared-table".into(), shared));

    let mut control = vec![0x40 | 1u8, CONNECT, CONNECT];
    control.extend(hello(0, 0, 0));
    control.extend(hello(1, 1, 0));
    control.extend([POLL, 2, OTHER, 1, 0, 2, POLL, 2]);
    control.extend([EXITED, 0, POLL, 1, 9, 3, 2, POLL, 1]);
    out.push(("launch_server", "control-heartbeat-abort".into(), control));

    let mut bad = vec![0x20 | 1u8];
    for variant in 2..8 {
        bad.push(CONNECT);
        bad.extend(hello(variant - 2, variant, 0));
    }
    bad.extend([
        POLL, 2, CONNECT, RAW, 6, 4, 1, 2, 3, 4, SHUTDOWN, 6, CLOSE, 0, 0, POLL, 2,
    ]);
    out.push(("launch_server", "bad-hellos-and-garbage".into(), bad));

    let mut timeout = vec![0x10 | 1u8, CONNECT];
    timeout.extend(hello(0, 0, 0));
    timeout.extend([POLL, 2, POLL, 2, CONNECT]);
    timeout.extend(hello(1, 0, 1));
    timeout.extend([POLL, 2]);
    out.push(("launch_server", "rendezvous-timeout".into(), timeout));
}

/// The secret of the `startup_table` target's verifying mode.
fn table_secret() -> Secret {
    Secret::from_hex(&"a5".repeat(32)).expect("a valid secret")
}

fn startup_table(out: &mut Vec<Seed>) {
    let table = |job: u64, epoch: u64, records: &[Vec<u8>]| {
        let mut t = b"SHT1".to_vec();
        t.extend_from_slice(&job.to_le_bytes());
        t.extend_from_slice(&epoch.to_le_bytes());
        t.extend_from_slice(&(records.len() as u32).to_le_bytes());
        for r in records {
            t.extend_from_slice(&(r.len() as u32).to_le_bytes());
            t.extend_from_slice(r);
        }
        t
    };
    let secret = table_secret();
    let tagged = |job: u64, epoch: u64, n: u32| -> Vec<Vec<u8>> {
        (0..n)
            .map(|pe| {
                let mut r = format!("record of PE {pe}").into_bytes();
                let tag = auth::record_key(&secret, pe).tag(job, epoch, &r);
                r.extend_from_slice(&tag);
                r
            })
            .collect()
    };
    for (name, mode, job, n) in [("verified-3", 4u8, 7u64, 3u32), ("own-ids-2", 0, 0x1234, 2)] {
        let epoch = 0;
        let mut seed = vec![mode];
        seed.extend_from_slice(&n.to_le_bytes());
        seed.extend_from_slice(&table(job, epoch, &tagged(job, epoch, n)));
        out.push(("startup_table", name.into(), seed));
    }
    // The PMIx path's untagged table (magic SHT0, job id 0), 3 records.
    let mut untagged = vec![8u8];
    untagged.extend_from_slice(&3u32.to_le_bytes());
    untagged.extend_from_slice(b"SHT0");
    untagged.extend_from_slice(&0u64.to_le_bytes());
    untagged.extend_from_slice(&5u64.to_le_bytes());
    untagged.extend_from_slice(&3u32.to_le_bytes());
    for pe in 0..3u8 {
        untagged.extend_from_slice(&(u32::from(pe) + 1).to_le_bytes());
        untagged.extend(std::iter::repeat_n(pe, usize::from(pe) + 1));
    }
    out.push(("startup_table", "untagged-3".into(), untagged));
    let mut empty = vec![0];
    empty.extend_from_slice(&0u32.to_le_bytes());
    empty.extend_from_slice(&table(1, 2, &[]));
    out.push(("startup_table", "no-records".into(), empty));
}

/// A start-up record as shmem-core encodes it.
fn record(parts: [&[u8]; 4]) -> Vec<u8> {
    let mut v = 0x5348_4d36u32.to_le_bytes().to_vec();
    v.extend(words(&[0x7f00_0000_1000, 1 << 28, 0xfeed, 3]));
    v.extend_from_slice(&4242u32.to_le_bytes());
    v.extend_from_slice(&7u32.to_le_bytes());
    v.extend(words(&[0x40_0000, 8192]));
    v.extend_from_slice(&8u32.to_le_bytes());
    v.extend(words(&[0x7f00_8000_0000]));
    v.extend_from_slice(&9u32.to_le_bytes());
    // The PMIx leader's table memfd (none).
    v.extend_from_slice(&u32::MAX.to_le_bytes());
    for p in parts {
        v.extend_from_slice(&(p.len() as u32).to_le_bytes());
        v.extend_from_slice(p);
    }
    v
}

fn startup_record(out: &mut Vec<Seed>) {
    let full = record([&[1, 2, 3, 4, 5], &[9; 40], &[3; 24], &[5; 32]]);
    let no_data = record([&[1; 60], &[9; 40], &[], &[5; 32]]);
    let empty = record([&[], &[], &[], &[]]);
    for (name, r) in [
        ("full", full),
        ("no-data-key", no_data),
        ("empty-keys", empty),
    ] {
        let mut seed = 3u16.to_le_bytes().to_vec();
        seed.extend(r);
        out.push(("startup_record", name.into(), seed));
    }
}

fn strided_am(out: &mut Vec<Seed>) {
    // Sizes: team 4 words, heap 64 words, data 8 words; 4 PEs, this one PE 1.
    let head = |ops: &[u8]| {
        let mut v = vec![4, 64, 0, 8, 4, 1];
        v.extend_from_slice(ops);
        v
    };
    // A message op: kind 2 (a message), id, header words (mode 1: the id's own count), each a
    // selector and value, then the data mode (2: the length the header implies).
    let msg = |id: u8, ws: &[(u8, u64)]| {
        let mut v = vec![2, id - 0x51, 1];
        for &(sel, w) in ws {
            v.push(sel);
            match sel {
                0 => v.push(w as u8),
                2 | 3 => v.extend_from_slice(&(w as u16).to_le_bytes()),
                _ => v.extend_from_slice(&w.to_le_bytes()),
            }
        }
        v.push(2);
        v
    };
    let small = |w: u64| (0u8, w);
    let data = |w: u64| (3u8, w);
    let put = msg(0x51, &[small(0), small(8), small(3), small(64), small(16)]);
    let put_data = msg(0x51, &[small(2), small(4), small(2), data(8), small(8)]);
    let put_team = msg(0x51, &[small(2), small(8), small(2), small(0), small(8)]);
    let get_req = msg(
        0x53,
        &[
            small(0),
            small(8),
            small(3),
            small(64),
            small(16),
            small(9),
            small(0),
        ],
    );
    let signal = msg(
        0x55,
        &[
            small(3),
            small(96),
            small(16),
            small(128),
            small(1),
            small(5),
        ],
    );
    let flag = msg(
        0x56,
        &[small(3), small(0), small(0), small(136), small(2), small(7)],
    );
    let mut ack = vec![0, 2, 3];
    ack.extend(msg(0x52, &[small(2), small(1)]));
    // A get of 4 elements of 8 bytes from PE 2, and its response.
    let mut get = vec![1, 2, 7, 3];
    get.extend(msg(
        0x54,
        &[small(2), small(8), small(4), small(1), small(0)],
    ));
    for (name, ops) in [
        ("put-heap", put),
        ("put-data-segment", put_data),
        ("put-team-segment", put_team),
        ("get-request", get_req),
        ("put-with-signal", signal),
        ("flag", flag),
        ("ack", ack),
        ("get-response", get),
    ] {
        out.push(("strided_am", name.into(), head(&ops)));
    }
}

fn settings(out: &mut Vec<Seed>) {
    let secret = "3c".repeat(32);
    let env = |vals: [Option<&str>; 11]| {
        let mut v = Vec::new();
        for val in vals {
            match val {
                None => v.extend([0, 0]),
                Some(s) => {
                    v.extend([2, s.len() as u8]);
                    v.extend_from_slice(s.as_bytes());
                }
            }
        }
        v
    };
    // Order: RENDEZVOUS, PE, NPES, JOB_ID, JOB_SECRET, INIT_TIMEOUT, NODE, NNODES, LOCAL_RANK,
    // LOCAL_SIZE, BIND_TO.
    let full = env([
        Some("127.0.0.1:4000"),
        Some("3"),
        Some("8"),
        Some("c0ffee"),
        Some(&secret),
        Some("2.5"),
        Some("1"),
        Some("2"),
        Some("1"),
        Some("4"),
        Some("core"),
    ]);
    let minimal = env([
        Some("host:1"),
        Some("0"),
        Some("1"),
        Some("1"),
        Some(&secret),
        None,
        None,
        None,
        None,
        None,
        None,
    ]);
    let core = env([
        None,
        Some("512M"),
        Some("1GB"),
        Some("eager"),
        Some("auto"),
        Some("tcp,self"),
        Some("^sm"),
        Some("off"),
        Some(" 64k "),
        Some("lazy"),
        Some("sm:aux,posix"),
    ]);
    for (name, seed) in [
        ("launch-env", full),
        ("minimal", minimal),
        ("core-settings", core),
    ] {
        out.push(("settings", name.into(), seed));
    }
}

fn hosts(out: &mut Vec<Seed>) {
    let seeds: [(&str, u8, u8, &str); 6] = [
        ("list", 0, 0, "node1,node2:4,me@10.0.0.7"),
        ("list-slots", 0, 7, "a:2,b:2,c:3"),
        (
            "hostfile",
            1,
            0,
            "# hosts\nnode1 slots=4\nnode2:2\n\nnode3 slots=1 # last\n",
        ),
        ("hostfile-plain", 1, 5, "a\nb\nc\n"),
        ("rsh-ssh", 2, 0, "ssh -o BatchMode=yes {host} {cmd}"),
        ("rsh-netns", 2, 0, "ip netns exec '{host}' \"a b\" \\x"),
    ];
    for (name, mode, np, text) in seeds {
        let mut seed = vec![mode, np];
        seed.extend_from_slice(text.as_bytes());
        out.push(("hosts", name.into(), seed));
    }
}

fn macros(out: &mut Vec<Seed>) {
    let stmts = [
        "HALO[pe, 0..512;2] = b",
        "back = HALO[pe, 0..512;2]",
        "hits[0, me] += 1",
        "all = hits[0, ..]",
        "X[pe] = 5",
        "x = X[pe]",
        "A[pe, 3]",
        "A[pe, 0].fetch_add(1)",
        "A[pe, 0..n] = &buf => SIG += 1",
        "nbi s: A[pe, 0..4] = &buf",
        "team t: A[pe, i] = 7",
        "ctx c: x = A[pe, 2]",
        "A[pe, 0..8] = buf[0..16;2]",
        "A[pe, 0..4;0] = b; B[pe] = 1",
        "HALO[pe, 7] += 1.0",
    ];
    for (i, s) in stmts.iter().enumerate() {
        let mut seed = vec![0];
        seed.extend_from_slice(s.as_bytes());
        out.push(("shmem_macro", format!("stmt-{i:02}"), seed));
    }
    // Generator choices: word indices of "A [ pe , 0 .. n ] = buf".
    out.push((
        "shmem_macro",
        "generated".into(),
        vec![1, 0, 220, 5, 59, 88, 77, 8, 255, 56, 10],
    ));
    let items = [
        ("", "static COUNTER: u64 = 0;"),
        ("", "pub static HALO: [f64; 1024] = [0.0; 1024];"),
        ("", "static mut BAD: u64 = 0;"),
        ("", "const C: u32 = 1;"),
        ("", "thread_local! { static T: u8 = 0; }"),
        ("x", "static S: (u8, u16) = (0, 0);"),
        (
            "",
            "#[repr(C)] #[derive(Clone, Copy)] struct P { x: f64, y: f64 }",
        ),
        ("", "fn f() {}"),
    ];
    for (i, (args, item)) in items.iter().enumerate() {
        let mut seed = vec![4];
        seed.extend_from_slice(args.as_bytes());
        seed.push(0);
        seed.extend_from_slice(item.as_bytes());
        out.push(("symmetric_macro", format!("item-{i:02}"), seed));
    }
}
