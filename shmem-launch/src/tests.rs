//! Unit tests: the real rendezvous server in a thread, real TCP connections, one thread per PE.

use std::ffi::OsString;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use std::io::{Read, Write};
use std::net::TcpStream;

use crate::auth::{self, Channel, Secret};
use crate::client::{self, Client, ClientError, EnvError, LaunchEnv};
use crate::server::{Notice, Server};
use crate::watchdog;
use crate::wire::{
    self, ENV_BIND_TO, ENV_INIT_TIMEOUT, ENV_JOB_ID, ENV_JOB_SECRET, ENV_LOCAL_RANK,
    ENV_LOCAL_SIZE, ENV_NNODES, ENV_NODE, ENV_NPES, ENV_PE, ENV_RENDEZVOUS, Msg,
};

/// A secret for tests.
fn test_secret() -> Secret {
    Secret::generate().unwrap()
}

/// Reads one frame from a blocking stream (`None` at the end of the stream).
fn read_frame(s: &mut TcpStream) -> Option<Msg> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).ok()?;
    let mut body = vec![0u8; u32::from_le_bytes(len) as usize];
    s.read_exact(&mut body).ok()?;
    Msg::decode(&body).ok()
}

/// Connects to `addr`, reads the challenge and sends a control hello for `pe` proved with
/// `secret`; returns the stream.
fn raw_control_hello(addr: &str, secret: &Secret, job_id: u64, pe: u32, pid: u32) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    let Some(Msg::Challenge { nonce: challenge }) = read_frame(&mut s) else {
        panic!("no challenge");
    };
    let mine = [7u8; 32];
    let fields = wire::control_fields(wire::PROTOCOL_VERSION, job_id, pe, pid);
    let hello = Msg::ControlHello {
        version: wire::PROTOCOL_VERSION,
        job_id,
        pe,
        pid,
        nonce: mine,
        mac: auth::hello_mac(secret, Channel::Control, &challenge, &mine, &fields),
    };
    s.write_all(&hello.encode()).unwrap();
    s
}

/// A server running in its own thread. On `Stranded` it does what `shmemrun` does: tells the
/// waiters.
struct TestServer {
    addr: String,
    job_id: u64,
    secret: Secret,
    stop: Arc<AtomicBool>,
    exits: mpsc::Sender<usize>,
    thread: Option<JoinHandle<Vec<Notice>>>,
    /// The server's `table_bytes_sent`, updated every round.
    table_bytes: Arc<AtomicU64>,
}

impl TestServer {
    fn start(npes: usize, timeout: Duration) -> TestServer {
        TestServer::start_on(npes, timeout, None)
    }

    /// A server that knows the node of every PE (`nodes[pe]`).
    fn start_on(npes: usize, timeout: Duration, nodes: Option<Vec<usize>>) -> TestServer {
        let job_id = 0x5eed_0000_0000_0000 ^ u64::from(std::process::id());
        let secret = test_secret();
        let mut server =
            Server::bind("127.0.0.1:0", job_id, secret.clone(), npes, timeout).unwrap();
        if let Some(nodes) = nodes {
            server.set_nodes(nodes).unwrap();
        }
        let addr = server.local_addr().unwrap().to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let (exits, exited) = mpsc::channel();
        let table_bytes = Arc::new(AtomicU64::new(0));
        let bytes = table_bytes.clone();
        let thread = thread::spawn(move || {
            let mut seen = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                let mut notices = server.poll(None, Duration::from_millis(5)).unwrap();
                bytes.store(server.table_bytes_sent(), Ordering::Relaxed);
                while let Ok(pe) = exited.try_recv() {
                    notices.extend(server.pe_exited(pe));
                }
                for n in notices {
                    if n == Notice::Stranded {
                        let detail = server.stranded().unwrap();
                        server.abort(&detail);
                    }
                    seen.push(n);
                }
            }
            seen
        });
        TestServer {
            addr,
            job_id,
            secret,
            stop,
            exits,
            thread: Some(thread),
            table_bytes,
        }
    }

    fn config(&self, pe: usize, npes: usize, timeout: Duration) -> LaunchEnv {
        LaunchEnv {
            rendezvous: self.addr.clone(),
            pe,
            npes,
            job_id: self.job_id,
            secret: self.secret.clone(),
            timeout,
            node: 0,
            nnodes: 1,
            local: None,
            bind_to_core: false,
        }
    }

    /// Tells the server PE `pe`'s process exited, as `shmemrun` does.
    fn pe_exited(&self, pe: usize) {
        self.exits.send(pe).unwrap();
    }

    /// Stops the server and returns its notices.
    fn finish(mut self) -> Vec<Notice> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap()
    }
}

const LONG: Duration = Duration::from_secs(30);

/// Runs `body` as PEs `0..npes` (those in `absent` are not started), each in a thread.
fn run_pes<T: Send + 'static>(
    server: &TestServer,
    npes: usize,
    timeout: Duration,
    absent: &[usize],
    body: impl Fn(Client) -> T + Send + Sync + 'static,
) -> Vec<(usize, T)> {
    let body = Arc::new(body);
    let handles: Vec<_> = (0..npes)
        .filter(|pe| !absent.contains(pe))
        .map(|pe| {
            let config = server.config(pe, npes, timeout);
            let body = body.clone();
            thread::spawn(move || (pe, body(config.connect().unwrap())))
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

fn vars(list: &[(&'static str, &str)]) -> impl Fn(&'static str) -> Option<OsString> {
    let list: Vec<(&'static str, String)> = list.iter().map(|(k, v)| (*k, v.to_string())).collect();
    move |name| {
        list.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| OsString::from(v))
    }
}

#[test]
fn environment_is_parsed_and_checked() {
    // Without SHMEM_RENDEZVOUS: not started by the launcher.
    assert_eq!(LaunchEnv::from_vars(|_| None).unwrap(), None);
    let good = [
        (ENV_RENDEZVOUS, "127.0.0.1:4000"),
        (ENV_PE, "2"),
        (ENV_NPES, "3"),
        (ENV_JOB_ID, "00ff"),
        (
            ENV_JOB_SECRET,
            "0123456789abcdef0123456789abcdef0123456789ABCDEF0123456789abcdef",
        ),
        (ENV_INIT_TIMEOUT, "2.5"),
    ];
    let c = LaunchEnv::from_vars(vars(&good)).unwrap().unwrap();
    assert_eq!((c.pe, c.npes, c.job_id), (2, 3, 255));
    assert_eq!(c.timeout, Duration::from_millis(2500));
    // Without SHMEM_NODE and SHMEM_NNODES: everything on one node.
    assert_eq!((c.node, c.nnodes), (0, 1));
    let mut on_nodes = good.to_vec();
    on_nodes.extend([(ENV_NODE, "1"), (ENV_NNODES, "2")]);
    let c = LaunchEnv::from_vars(vars(&on_nodes)).unwrap().unwrap();
    assert_eq!((c.node, c.nnodes), (1, 2));
    for (node, nnodes, bad) in [
        ("x", "2", ENV_NODE),
        ("2", "2", ENV_NODE),
        ("-1", "2", ENV_NODE),
        ("0", "0", ENV_NNODES),
        ("0", "4", ENV_NNODES),
        ("0", "two", ENV_NNODES),
    ] {
        let mut v = good.to_vec();
        v.extend([(ENV_NODE, node), (ENV_NNODES, nnodes)]);
        match LaunchEnv::from_vars(vars(&v)) {
            Err(EnvError::Invalid { name, .. }) => assert_eq!(name, bad, "{node}/{nnodes}"),
            other => panic!("{node}/{nnodes}: {other:?}"),
        }
    }

    // The PE's place on its host and the binding: both or neither of the first two.
    assert_eq!((c.local, c.bind_to_core), (None, false));
    let mut placed = good.to_vec();
    placed.extend([
        (ENV_LOCAL_RANK, "1"),
        (ENV_LOCAL_SIZE, "2"),
        (ENV_BIND_TO, "core"),
    ]);
    let c = LaunchEnv::from_vars(vars(&placed)).unwrap().unwrap();
    assert_eq!((c.local, c.bind_to_core), (Some((1, 2)), true));
    for (extra, bad) in [
        (
            &[(ENV_LOCAL_RANK, "2"), (ENV_LOCAL_SIZE, "2")][..],
            ENV_LOCAL_RANK,
        ),
        (
            &[(ENV_LOCAL_RANK, "0"), (ENV_LOCAL_SIZE, "4")][..],
            ENV_LOCAL_SIZE,
        ),
        (
            &[(ENV_LOCAL_RANK, "0"), (ENV_LOCAL_SIZE, "0")][..],
            ENV_LOCAL_SIZE,
        ),
        (
            &[(ENV_LOCAL_RANK, "x"), (ENV_LOCAL_SIZE, "1")][..],
            ENV_LOCAL_RANK,
        ),
        (&[(ENV_BIND_TO, "socket")][..], ENV_BIND_TO),
    ] {
        let mut v = good.to_vec();
        v.extend_from_slice(extra);
        match LaunchEnv::from_vars(vars(&v)) {
            Err(EnvError::Invalid { name, .. }) => assert_eq!(name, bad, "{extra:?}"),
            other => panic!("{extra:?}: {other:?}"),
        }
    }
    let mut half = good.to_vec();
    half.push((ENV_LOCAL_RANK, "0"));
    assert!(matches!(
        LaunchEnv::from_vars(vars(&half)),
        Err(EnvError::Missing {
            name: ENV_LOCAL_SIZE
        })
    ));
    half.extend([(ENV_LOCAL_SIZE, "1"), (ENV_BIND_TO, "none")]);
    let c = LaunchEnv::from_vars(vars(&half)).unwrap().unwrap();
    assert_eq!((c.local, c.bind_to_core), (Some((0, 1)), false));

    let without_timeout = LaunchEnv::from_vars(vars(&good[..5])).unwrap().unwrap();
    assert_eq!(without_timeout.timeout, Duration::from_secs(60));

    for (name, value) in [
        (ENV_PE, "3"),
        (ENV_PE, "-1"),
        (ENV_NPES, "0"),
        (ENV_NPES, "many"),
        (ENV_JOB_ID, "xyz"),
        (ENV_JOB_SECRET, "0123"),
        (ENV_JOB_SECRET, &"z".repeat(64)),
        (ENV_INIT_TIMEOUT, "0"),
    ] {
        let mut v = good.to_vec();
        v.retain(|(k, _)| *k != name);
        v.push((name, value));
        match LaunchEnv::from_vars(vars(&v)) {
            Err(EnvError::Invalid { name: n, .. }) => assert_eq!(n, name, "{value}"),
            other => panic!("{name}={value}: {other:?}"),
        }
    }
    let missing = LaunchEnv::from_vars(vars(&good[..2])).unwrap_err();
    assert_eq!(missing, EnvError::Missing { name: ENV_NPES });
    assert!(missing.to_string().contains(ENV_NPES), "{missing}");
    let no_secret = LaunchEnv::from_vars(vars(&good[..4])).unwrap_err();
    assert_eq!(
        no_secret,
        EnvError::Missing {
            name: ENV_JOB_SECRET
        }
    );
    // A bad secret is never quoted back.
    let mut v = good.to_vec();
    v[4] = (ENV_JOB_SECRET, "0123456789abcdef-not-hex");
    let e = LaunchEnv::from_vars(vars(&v)).unwrap_err().to_string();
    assert!(!e.contains("0123456789abcdef"), "{e}");
}

#[test]
fn allgather_barrier_and_finalize_across_pes() {
    let npes = 5;
    let server = TestServer::start(npes, LONG);
    let results = run_pes(&server, npes, LONG, &[], move |mut b| {
        let me = b.pe();
        assert_eq!(b.npes(), npes);
        let mut calls = 0u64;
        let mine = vec![me as u8; 100 * me];
        let table = b.allgather(&mine, &mut || calls += 1).unwrap();
        for (pe, blob) in table.iter().enumerate() {
            assert_eq!(blob, &vec![pe as u8; 100 * pe]);
        }
        b.barrier(&mut || calls += 1).unwrap();
        let again = b
            .allgather(format!("pe{me}").as_bytes(), &mut || calls += 1)
            .unwrap();
        let expect: Vec<Vec<u8>> = (0..npes).map(|p| format!("pe{p}").into_bytes()).collect();
        assert_eq!(again, expect);
        b.barrier(&mut || calls += 1).unwrap();
        b.finalize().unwrap();
        // Finalized: collectives are refused locally.
        assert!(matches!(b.barrier(&mut || {}), Err(ClientError::Failed(_))));
        calls
    });
    assert_eq!(results.len(), npes);
    assert!(
        results.iter().all(|(_, calls)| *calls > 0),
        "progress was called"
    );
    let notices = server.finish();
    assert!(notices.is_empty(), "{notices:?}");
}

#[test]
fn many_pes_on_few_cores() {
    let npes = 16;
    let server = TestServer::start(npes, LONG);
    let start = Instant::now();
    run_pes(&server, npes, LONG, &[], move |mut b| {
        for round in 0..20u32 {
            let t = b.allgather(&round.to_le_bytes(), &mut || {}).unwrap();
            assert_eq!(t.len(), npes);
            b.barrier(&mut || {}).unwrap();
        }
        b.finalize().unwrap();
    });
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    server.finish();
}

#[test]
fn rendezvous_timeout_names_the_missing_pe() {
    let timeout = Duration::from_millis(1500);
    let server = TestServer::start(3, timeout);
    let start = Instant::now();
    let results = run_pes(&server, 3, timeout, &[2], |mut b| {
        b.allgather(b"hi", &mut || {})
    });
    let elapsed = start.elapsed();
    assert_eq!(results.len(), 2);
    for (pe, r) in results {
        match r {
            Err(ClientError::Timeout(detail)) => {
                assert!(
                    detail.contains("PE 2 of 3 did not reach the rendezvous"),
                    "PE {pe}: {detail}"
                );
            }
            other => panic!("PE {pe}: {other:?}"),
        }
    }
    assert!(
        elapsed >= timeout && elapsed < timeout + Duration::from_secs(1),
        "{elapsed:?}"
    );
    let notices = server.finish();
    assert!(
        notices.iter().any(
            |n| matches!(n, Notice::RendezvousTimeout { detail } if detail.contains("PE 2 of 3"))
        ),
        "{notices:?}"
    );
}

#[test]
fn late_pe_gets_the_timeout_too() {
    let timeout = Duration::from_millis(300);
    let server = TestServer::start(2, timeout);
    thread::sleep(timeout + Duration::from_millis(200));
    let r = run_pes(&server, 2, timeout, &[0], |mut b| {
        b.allgather(b"", &mut || {})
    });
    assert!(matches!(&r[0].1, Err(ClientError::Timeout(_))), "{r:?}");
    server.finish();
}

#[test]
fn client_backstop_when_the_launcher_is_silent() {
    // A listener that accepts and never sends a challenge.
    let mute = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut config = LaunchEnv {
        rendezvous: mute.local_addr().unwrap().to_string(),
        pe: 0,
        npes: 2,
        job_id: 1,
        secret: test_secret(),
        timeout: Duration::from_millis(200),
        node: 0,
        nnodes: 1,
        local: None,
        bind_to_core: false,
    };
    let start = Instant::now();
    let r = config.connect();
    assert!(
        matches!(&r, Err(ClientError::Failed(detail)) if detail.contains("challenge")),
        "{r:?}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    // One that sends a challenge and then nothing: the backstop ends the wait.
    let quiet = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    config.rendezvous = quiet.local_addr().unwrap().to_string();
    thread::spawn(move || {
        let (mut s, _) = quiet.accept().unwrap();
        s.write_all(&Msg::Challenge { nonce: [1; 32] }.encode())
            .unwrap();
        thread::sleep(Duration::from_secs(10));
    });
    let mut b = config.connect().unwrap();
    let start = Instant::now();
    let r = b.allgather(b"", &mut || {});
    assert!(
        matches!(&r, Err(ClientError::Timeout(detail)) if detail.contains("no answer")),
        "{r:?}"
    );
    let elapsed = start.elapsed();
    assert!(
        elapsed < client::BACKSTOP_SLACK + Duration::from_secs(2),
        "{elapsed:?}"
    );
    // Broken for good.
    assert!(b.barrier(&mut || {}).is_err());
}

#[test]
fn pe_leaving_without_finalize_releases_the_waiters() {
    let server = TestServer::start(3, LONG);
    let results = run_pes(&server, 3, LONG, &[], |mut b| {
        b.allgather(b"", &mut || {}).unwrap();
        if b.pe() == 2 {
            drop(b); // leaves without finalizing
            return Ok(());
        }
        b.barrier(&mut || {})
    });
    for (pe, r) in results {
        if pe == 2 {
            continue;
        }
        match r {
            Err(ClientError::Failed(m)) => {
                assert!(
                    m.contains("PE 2 closed its launcher connection before finalizing"),
                    "{m}"
                );
                // "PE 0 waits" or "PEs 0, 1 wait": depends on who reached the barrier first.
                assert!(m.contains("in a barrier"), "{m}");
            }
            other => panic!("PE {pe}: {other:?}"),
        }
    }
    let notices = server.finish();
    assert!(notices.contains(&Notice::Stranded), "{notices:?}");
}

#[test]
fn the_report_of_a_leaving_pe_names_waiters_whose_requests_are_unread() {
    // The launcher sees PE 1's exit before it has read PE 0's barrier request: `stranded` knows
    // nothing yet, `stranded_now` reads every PE first and names the waiter.
    let job_id = 0x1ea7_0000_0000_0000 ^ u64::from(std::process::id());
    let secret = test_secret();
    let mut server = Server::bind("127.0.0.1:0", job_id, secret.clone(), 2, LONG).unwrap();
    let addr = server.local_addr().unwrap().to_string();
    let (events, seen) = mpsc::channel::<(usize, &str)>();
    let mut go = Vec::new();
    let pes: Vec<_> = (0..2)
        .map(|pe| {
            let env = LaunchEnv {
                rendezvous: addr.clone(),
                pe,
                npes: 2,
                job_id,
                secret: secret.clone(),
                timeout: LONG,
                node: 0,
                nnodes: 1,
                local: None,
                bind_to_core: false,
            };
            let events = events.clone();
            let (tx, next) = mpsc::channel::<()>();
            go.push(tx);
            thread::spawn(move || {
                let mut b = env.connect().unwrap();
                b.allgather(b"", &mut || {}).unwrap();
                events.send((pe, "gathered")).unwrap();
                next.recv().unwrap();
                if pe == 1 {
                    drop(b); // leaves without finalizing
                    events.send((pe, "left")).unwrap();
                    return;
                }
                // Progress runs once the request is written.
                let mut told = false;
                let _ = b.barrier(&mut || {
                    if !told {
                        told = true;
                        let _ = events.send((pe, "waiting"));
                    }
                });
            })
        })
        .collect();
    let mut gathered = 0;
    while gathered < 2 {
        server.poll(None, Duration::from_millis(5)).unwrap();
        while let Ok((_, what)) = seen.try_recv() {
            assert_eq!(what, "gathered");
            gathered += 1;
        }
    }
    // From here the server is not polled: PE 0's request waits unread in its socket.
    go[0].send(()).unwrap();
    assert_eq!(seen.recv().unwrap(), (0, "waiting"));
    go[1].send(()).unwrap();
    assert_eq!(seen.recv().unwrap(), (1, "left"));
    let notices = server.pe_exited(1);
    assert!(!notices.contains(&Notice::Stranded), "{notices:?}");
    assert_eq!(server.stranded(), None);
    assert_eq!(
        server.stranded_now().as_deref(),
        Some("PE 1 exited before finalizing while PE 0 waits in a barrier")
    );
    drop(server); // PE 0's barrier ends with a lost connection
    for t in pes {
        t.join().unwrap();
    }
}

#[test]
fn pe_exiting_without_connecting_releases_the_rendezvous() {
    let server = TestServer::start(3, LONG);
    let waiter = {
        let configs: Vec<LaunchEnv> = (0..2).map(|pe| server.config(pe, 3, LONG)).collect();
        thread::spawn(move || {
            let handles: Vec<_> = configs
                .into_iter()
                .map(|c| thread::spawn(move || c.connect().unwrap().allgather(b"", &mut || {})))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        })
    };
    thread::sleep(Duration::from_millis(200));
    server.pe_exited(2);
    for r in waiter.join().unwrap() {
        match r {
            Err(ClientError::Failed(m)) => assert!(
                m.contains("PE 2 exited without connecting to the launcher while PEs 0, 1 wait in the rendezvous"),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
    }
    assert!(server.finish().contains(&Notice::Stranded));
}

#[test]
fn finalize_ends_the_job_quietly_and_refuses_later_collectives() {
    let server = TestServer::start(2, LONG);
    let results = run_pes(&server, 2, LONG, &[], |mut b| {
        b.allgather(b"", &mut || {}).unwrap();
        b.barrier(&mut || {}).unwrap();
        b.finalize().unwrap();
        if b.pe() == 0 {
            return Ok(());
        }
        // A collective after finalize is a program error, refused without asking the launcher.
        b.barrier(&mut || {})
    });
    assert!(matches!(&results[1].1, Err(ClientError::Failed(_))));
    assert!(server.finish().is_empty());
}

#[test]
fn bad_hellos_are_rejected() {
    let server = TestServer::start(2, LONG);
    let check = |config: LaunchEnv, want: &str| {
        let mut b = config.connect().unwrap();
        match b.allgather(b"", &mut || {}) {
            Err(ClientError::Failed(m)) => assert!(m.contains(want), "{m}"),
            other => panic!("{other:?}"),
        }
    };
    let mut wrong_job = server.config(0, 2, LONG);
    wrong_job.job_id ^= 1;
    check(wrong_job, "is not this job's");
    check(server.config(0, 3, LONG), "believes the job has 3 PEs");
    let mut out_of_range = server.config(0, 2, LONG);
    out_of_range.pe = 7;
    check(out_of_range, "out of range");

    // A good PE 0, then a second PE 0.
    let first = server.config(0, 2, LONG).connect().unwrap();
    thread::sleep(Duration::from_millis(50));
    check(server.config(0, 2, LONG), "connected twice");
    drop(first);
    let notices = server.finish();
    let warnings = notices
        .iter()
        .filter(|n| matches!(n, Notice::Warning(_)))
        .count();
    assert_eq!(warnings, 4, "{notices:?}");
}

#[test]
fn a_rejected_connection_that_keeps_sending_is_cut_off() {
    let server = TestServer::start(2, LONG);
    // An authenticated connection the server rejects (PE 9 of 2), which then sends without
    // pause, 1 MiB per write.
    let mut s = raw_control_hello(&server.addr, &server.secret, server.job_id, 9, 4242);
    let flood = thread::spawn(move || {
        let chunk = vec![0u8; 1 << 20];
        let start = Instant::now();
        while s.write_all(&chunk).is_ok() && start.elapsed() < LONG {}
        start.elapsed()
    });
    thread::sleep(Duration::from_millis(50));
    // Meanwhile the job runs: the server is not held by the flood.
    let start = Instant::now();
    let results = run_pes(&server, 2, LONG, &[], |mut b| {
        b.allgather(b"x", &mut || {})?;
        b.barrier(&mut || {})?;
        b.finalize()
    });
    let job = start.elapsed();
    for (pe, r) in results {
        assert!(r.is_ok(), "PE {pe}: {r:?}");
    }
    assert!(job < Duration::from_secs(5), "the job took {job:?}");
    // And the flooding connection is closed after its linger time.
    let cut_after = flood.join().unwrap();
    assert!(
        cut_after < Duration::from_secs(5),
        "cut after {cut_after:?}"
    );
    server.finish();
}

#[test]
fn collective_mismatch_is_an_error_for_everyone() {
    let server = TestServer::start(2, LONG);
    let results = run_pes(&server, 2, LONG, &[], |mut b| {
        b.allgather(b"", &mut || {}).unwrap();
        if b.pe() == 0 {
            b.barrier(&mut || {})
        } else {
            b.allgather(b"x", &mut || {}).map(drop)
        }
    });
    for (_, r) in results {
        assert!(
            matches!(&r, Err(ClientError::Failed(m)) if m.contains("mismatch")),
            "{r:?}"
        );
    }
    server.finish();
}

#[test]
fn lost_launcher_is_an_error_not_a_hang() {
    let server = TestServer::start(2, LONG);
    let config = server.config(0, 2, LONG);
    let mut b = config.connect().unwrap();
    thread::sleep(Duration::from_millis(50));
    server.finish(); // drops the server and every connection
    let r = b.allgather(b"", &mut || {});
    assert!(
        matches!(&r, Err(ClientError::Failed(m)) if m.contains("lost the connection")),
        "{r:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// The control connection and the watchdog.

/// Starts a watchdog against `addr` whose verdict lands in the returned channel.
/// The watchdog starts on a thread of its own: its start waits for the server's challenge, and
/// the tests drive the server on their own thread.
fn watch(addr: &str, job_id: u64, secret: &Secret, pe: usize) -> mpsc::Receiver<(i32, String)> {
    let (tx, rx) = mpsc::channel();
    let (addr, secret) = (addr.to_string(), secret.clone());
    thread::spawn(move || {
        let failed = tx.clone();
        let r = watchdog::start(
            &addr,
            job_id,
            &secret,
            pe,
            LONG,
            Box::new(move |status, message| {
                let _ = tx.send((status, message));
            }),
        );
        if let Err(e) = r {
            let _ = failed.send((-1, e));
        }
    });
    rx
}

/// A server with heartbeats, driven by the test thread.
fn heartbeat_server(
    npes: usize,
    timeout: Duration,
    pe_timeout: Duration,
) -> (Server, String, u64, Secret) {
    let job_id = 0xc0de_0000_0000_0000 ^ u64::from(std::process::id());
    let secret = test_secret();
    let mut server = Server::bind("127.0.0.1:0", job_id, secret.clone(), npes, LONG).unwrap();
    server.set_heartbeat(Duration::from_millis(50), timeout, pe_timeout);
    let addr = server.local_addr().unwrap().to_string();
    (server, addr, job_id, secret)
}

/// Polls `server` until `until` holds for its notices or `limit` passes; returns all notices.
fn poll_until(
    server: &mut Server,
    limit: Duration,
    until: impl Fn(&[Notice]) -> bool,
) -> Vec<Notice> {
    let start = Instant::now();
    let mut seen = Vec::new();
    while start.elapsed() < limit && !until(&seen) {
        seen.extend(server.poll(None, Duration::from_millis(10)).unwrap());
    }
    seen
}

#[test]
fn abort_reaches_the_watchdog_with_status_and_reason() {
    let (mut server, addr, job_id, secret) = heartbeat_server(2, LONG, LONG);
    let verdicts: Vec<_> = (0..2).map(|pe| watch(&addr, job_id, &secret, pe)).collect();
    // Let both control hellos arrive and heartbeats flow for a while.
    let notices = poll_until(&mut server, Duration::from_millis(400), |_| false);
    assert!(notices.is_empty(), "{notices:?}");
    assert_eq!(server.controls_alive(LONG), 2);
    assert_eq!(server.pid(1), Some(std::process::id()));
    assert!(server.silence(0).unwrap() < Duration::from_millis(300));
    server.abort_all(137, "PE 9 on host b was killed by signal 9 (SIGKILL)");
    for (pe, rx) in verdicts.iter().enumerate() {
        let (status, message) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(status, 137);
        assert_eq!(
            message,
            format!(
                "PE {pe}: shmemrun ended the job: PE 9 on host b was killed by signal 9 (SIGKILL)"
            )
        );
    }
}

#[test]
fn watchdog_ends_the_pe_when_the_launcher_goes() {
    let (mut server, addr, job_id, secret) = heartbeat_server(1, LONG, LONG);
    let rx = watch(&addr, job_id, &secret, 0);
    poll_until(&mut server, Duration::from_millis(200), |_| false);
    drop(server);
    let (status, message) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(status, watchdog::LOST_STATUS);
    assert!(
        message.contains(&format!(
            "PE 0: lost the control connection to the launcher at {addr}"
        )),
        "{message}"
    );
}

#[test]
fn watchdog_ends_the_pe_when_the_launcher_falls_silent() {
    let pe_timeout = Duration::from_millis(400);
    let (mut server, addr, job_id, secret) = heartbeat_server(1, LONG, pe_timeout);
    let rx = watch(&addr, job_id, &secret, 0);
    poll_until(&mut server, Duration::from_millis(200), |_| false);
    // The server stays alive but is no longer polled: no heartbeats, no answers.
    let silent_since = Instant::now();
    let (status, message) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    let took = silent_since.elapsed();
    assert_eq!(status, watchdog::LOST_STATUS);
    assert!(
        message.contains(&format!("no word from the launcher at {addr} for 0.4 s")),
        "{message}"
    );
    assert!(took < pe_timeout + Duration::from_millis(500), "{took:?}");
    drop(server);
}

#[test]
fn launcher_reports_a_silent_pe_and_a_lost_control_connection() {
    let timeout = Duration::from_millis(300);
    let (mut server, addr, job_id, secret) = heartbeat_server(2, timeout, LONG);
    // PE 0: a control connection that says hello and then nothing (a stopped or cut-off PE).
    let silent = {
        let (addr, secret) = (addr.clone(), secret.clone());
        thread::spawn(move || raw_control_hello(&addr, &secret, job_id, 0, 4242))
    };
    while !silent.is_finished() {
        server.poll(None, Duration::from_millis(10)).unwrap();
    }
    let silent = silent.join().unwrap();
    // PE 1: a live watchdog.
    let _rx = watch(&addr, job_id, &secret, 1);
    let start = Instant::now();
    let notices = poll_until(&mut server, Duration::from_secs(5), |n| {
        n.iter().any(|n| matches!(n, Notice::Silent { .. }))
    });
    let took = start.elapsed();
    match notices.as_slice() {
        [Notice::Silent { pe: 0, silent_for }] => assert!(*silent_for > timeout),
        other => panic!("{other:?}"),
    }
    assert!(took < timeout + Duration::from_millis(500), "{took:?}");
    assert_eq!(server.pid(0), Some(4242));
    // Closing it before finalizing is reported too.
    drop(silent);
    let notices = poll_until(&mut server, Duration::from_secs(5), |n| !n.is_empty());
    assert!(
        matches!(notices.as_slice(), [Notice::ControlLost { pe: 0, .. }]),
        "{notices:?}"
    );
    assert_eq!(server.controls_alive(LONG), 1);
}

#[test]
fn control_hello_for_another_job_is_refused() {
    let (mut server, addr, job_id, secret) = heartbeat_server(1, LONG, LONG);
    let rx = watch(&addr, job_id ^ 1, &secret, 0);
    let notices = poll_until(&mut server, Duration::from_secs(5), |n| !n.is_empty());
    assert!(
        matches!(notices.as_slice(), [Notice::Warning(w)] if w.contains("is not this job's")),
        "{notices:?}"
    );
    let (status, message) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(status, watchdog::LOST_STATUS);
    assert!(
        message.contains("refused the control connection"),
        "{message}"
    );
}

// ---------------------------------------------------------------------------------------------
// Authentication and bounded resources.

/// Reads frames until the end of the stream or `limit`; returns them and whether the stream
/// ended.
fn read_all(s: &mut TcpStream, limit: Duration) -> (Vec<Msg>, bool) {
    s.set_read_timeout(Some(limit)).unwrap();
    let mut got = Vec::new();
    loop {
        let mut len = [0u8; 4];
        match s.read_exact(&mut len) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return (got, true),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return (got, true),
            Err(_) => return (got, false),
        }
        let mut body = vec![0u8; u32::from_le_bytes(len) as usize];
        if s.read_exact(&mut body).is_err() {
            return (got, true);
        }
        got.push(Msg::decode(&body).unwrap());
    }
}

#[test]
fn a_client_without_the_secret_is_refused_and_learns_nothing() {
    let server = TestServer::start(2, LONG);
    // Knows the job id, PE number and size, not the secret.
    let mut foreign = server.config(0, 2, LONG);
    foreign.secret = test_secret();
    let mut b = foreign.connect().unwrap();
    match b.allgather(b"injected record", &mut || {}) {
        Err(ClientError::Failed(m)) => {
            assert!(m.contains("connection refused"), "{m}");
            assert!(!m.contains(&format!("{:016x}", server.job_id)), "{m}");
        }
        other => panic!("{other:?}"),
    }
    // By hand: a hello with the right fields and a wrong MAC gets the challenge, one refusal and
    // the end of the stream: no table, no record.
    let mut s = TcpStream::connect(&server.addr).unwrap();
    let Some(Msg::Challenge { .. }) = read_frame(&mut s) else {
        panic!("no challenge");
    };
    let hello = Msg::Hello {
        version: wire::PROTOCOL_VERSION,
        job_id: server.job_id,
        pe: 1,
        npes: 2,
        nonce: [0; 32],
        mac: [0; 32],
    };
    s.write_all(&hello.encode()).unwrap();
    let (got, ended) = read_all(&mut s, Duration::from_secs(5));
    assert!(ended, "the connection stays open: {got:?}");
    assert!(
        matches!(got.as_slice(), [Msg::Error { detail, .. }] if detail == "connection refused"),
        "{got:?}"
    );
    // The real PEs are not disturbed: PE 0 and PE 1 are still free.
    let results = run_pes(&server, 2, LONG, &[], |mut b| {
        let t = b.allgather(format!("pe{}", b.pe()).as_bytes(), &mut || {});
        b.finalize().unwrap();
        t
    });
    for (_, r) in results {
        assert_eq!(r.unwrap(), [b"pe0".to_vec(), b"pe1".to_vec()]);
    }
    let notices = server.finish();
    let refused = notices
        .iter()
        .filter(|n| matches!(n, Notice::Warning(w) if w.contains("authentication failed")))
        .count();
    assert_eq!(refused, 2, "{notices:?}");
}

#[test]
fn garbage_oversized_and_silent_connections_are_dropped() {
    let server = TestServer::start(1, LONG);
    // A frame that claims 1 GiB, then a flood: closed after the length prefix.
    let mut flood = TcpStream::connect(&server.addr).unwrap();
    let mut sent = 0usize;
    let junk = vec![0x41u8; 64 * 1024];
    flood.write_all(&(1u32 << 30).to_le_bytes()).unwrap();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        match flood.write(&junk) {
            Ok(n) => sent += n,
            Err(_) => break,
        }
    }
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "the launcher kept reading: {sent} bytes"
    );
    assert!(sent < 64 << 20, "{sent} bytes taken before the drop");
    // A message that is not a hello.
    let mut other = TcpStream::connect(&server.addr).unwrap();
    other.write_all(&Msg::Finalize.encode()).unwrap();
    let (_, ended) = read_all(&mut other, Duration::from_secs(5));
    assert!(ended);
    server.finish();
}

#[test]
fn stalled_and_silent_connections_time_out() {
    let job_id = 0x57a1_0000_0000_0000 ^ u64::from(std::process::id());
    let secret = test_secret();
    let mut server = Server::bind("127.0.0.1:0", job_id, secret.clone(), 1, LONG).unwrap();
    server.set_timeouts(Duration::from_millis(300), Duration::from_millis(300));
    let addr = server.local_addr().unwrap().to_string();
    // Silent after connecting: closed after the handshake timeout.
    let mut mute = TcpStream::connect(&addr).unwrap();
    // A PE that sends half a collective and stalls.
    let pe = {
        let env = LaunchEnv {
            rendezvous: addr.clone(),
            pe: 0,
            npes: 1,
            job_id,
            secret,
            timeout: LONG,
            node: 0,
            nnodes: 1,
            local: None,
            bind_to_core: false,
        };
        thread::spawn(move || env.connect().unwrap())
    };
    while !pe.is_finished() {
        server.poll(None, Duration::from_millis(10)).unwrap();
    }
    let client = pe.join().unwrap();
    drop(client); // keeps nothing open but what follows
    let start = Instant::now();
    let mut seen = Vec::new();
    while start.elapsed() < Duration::from_secs(2) {
        seen.extend(server.poll(None, Duration::from_millis(10)).unwrap());
    }
    let (_, ended) = read_all(&mut mute, Duration::from_secs(1));
    assert!(ended, "the silent connection is still open: {seen:?}");
    assert!(
        seen.iter()
            .any(|n| matches!(n, Notice::Warning(w) if w.contains("no hello in time"))),
        "{seen:?}"
    );
}

#[test]
fn a_stalled_pe_is_dropped() {
    let job_id = 0x57a2_0000_0000_0000 ^ u64::from(std::process::id());
    let secret = test_secret();
    let mut server = Server::bind("127.0.0.1:0", job_id, secret.clone(), 2, LONG).unwrap();
    server.set_timeouts(LONG, Duration::from_millis(300));
    let addr = server.local_addr().unwrap().to_string();
    // An authenticated PE 0 that sends the first half of a collective frame, then nothing.
    let stalling = {
        let (addr, secret) = (addr.clone(), secret.clone());
        thread::spawn(move || {
            let mut s = TcpStream::connect(&addr).unwrap();
            let Some(Msg::Challenge { nonce: challenge }) = read_frame(&mut s) else {
                panic!("no challenge");
            };
            let fields = wire::hello_fields(wire::PROTOCOL_VERSION, job_id, 0, 2);
            let hello = Msg::Hello {
                version: wire::PROTOCOL_VERSION,
                job_id,
                pe: 0,
                npes: 2,
                nonce: [3; 32],
                mac: auth::hello_mac(&secret, Channel::Rendezvous, &challenge, &[3; 32], &fields),
            };
            s.write_all(&hello.encode()).unwrap();
            let frame = Msg::Collective {
                epoch: 0,
                kind: wire::CollectiveKind::Allgather,
                blob: vec![1; 1000],
            }
            .encode();
            s.write_all(&frame[..500]).unwrap();
            let got = read_all(&mut s, Duration::from_secs(5));
            (got, s)
        })
    };
    let start = Instant::now();
    let mut seen = Vec::new();
    while !stalling.is_finished() && start.elapsed() < Duration::from_secs(10) {
        seen.extend(server.poll(None, Duration::from_millis(10)).unwrap());
    }
    let ((got, ended), _s) = stalling.join().unwrap();
    assert!(ended, "{got:?}");
    assert!(
        matches!(got.as_slice(), [Msg::Accepted { .. }, Msg::Error { detail, .. }]
            if detail.contains("stalled in the middle of a frame for 0.3 s")),
        "{got:?}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}

/// A launcher that knows the secret but hands out `table` (records as PE 0 would see them),
/// for checking what PE 0 does with it.
fn fake_launcher(secret: Secret, job_id: u64, table: Vec<Vec<u8>>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let challenge = [9u8; 32];
        s.write_all(&Msg::Challenge { nonce: challenge }.encode())
            .unwrap();
        let Some(Msg::Hello { nonce, pe, .. }) = read_frame(&mut s) else {
            panic!("no hello");
        };
        let mac = auth::launcher_mac(&secret, Channel::Rendezvous, &challenge, &nonce, pe);
        s.write_all(&Msg::Accepted { mac }.encode()).unwrap();
        let _ = read_frame(&mut s); // the collective
        let _ = job_id;
        s.write_all(
            &Msg::Table {
                epoch: 0,
                blobs: table,
            }
            .encode(),
        )
        .unwrap();
        thread::sleep(Duration::from_secs(2));
    });
    addr
}

#[test]
fn a_tampered_record_is_detected_and_named() {
    let secret = test_secret();
    let job_id = 0x7a3e_0000_0000_0000;
    let tagged = |pe: u32, blob: &[u8]| {
        let mut r = blob.to_vec();
        r.extend_from_slice(&auth::record_key(&secret, pe).tag(job_id, 0, blob));
        r
    };
    let env = |addr: String| LaunchEnv {
        rendezvous: addr,
        pe: 0,
        npes: 3,
        job_id,
        secret: secret.clone(),
        timeout: LONG,
        node: 0,
        nnodes: 1,
        local: None,
        bind_to_core: false,
    };
    // Untouched records pass, and come back without their tags.
    let good = vec![tagged(0, b"zero"), tagged(1, b"one"), tagged(2, b"two")];
    let addr = fake_launcher(secret.clone(), job_id, good.clone());
    let mut c = env(addr).connect().unwrap();
    assert_eq!(
        c.allgather(b"zero", &mut || {}).unwrap(),
        [b"zero".to_vec(), b"one".to_vec(), b"two".to_vec()]
    );
    // One byte of PE 1's record changed (say, a UCX address): named.
    let mut bad = good.clone();
    bad[1][0] ^= 1;
    // PE 0's own record put in PE 2's place, and a record too short for a tag.
    let mut moved = good.clone();
    moved[2] = tagged(0, b"two");
    let mut short = good;
    short[2] = vec![1, 2, 3];
    for (table, culprit) in [(bad, 1), (moved, 2), (short, 2)] {
        let addr = fake_launcher(secret.clone(), job_id, table);
        let mut c = env(addr).connect().unwrap();
        match c.allgather(b"zero", &mut || {}) {
            Err(ClientError::Failed(m)) => assert!(
                m.contains(&format!("the start-up record of PE {culprit} "))
                    && m.contains("failed authentication"),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_launcher_without_the_secret_is_not_believed() {
    let secret = test_secret();
    // It proves another secret: the PE stops before taking any table from it.
    let addr = fake_launcher(test_secret(), 1, vec![Vec::new()]);
    let env = LaunchEnv {
        rendezvous: addr.clone(),
        pe: 0,
        npes: 1,
        job_id: 1,
        secret,
        timeout: LONG,
        node: 0,
        nnodes: 1,
        local: None,
        bind_to_core: false,
    };
    let mut c = env.connect().unwrap();
    match c.allgather(b"", &mut || {}) {
        Err(ClientError::Failed(m)) => {
            assert!(
                m.contains("did not prove that it holds the job secret"),
                "{m}"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_watchdog_without_the_secret_is_refused() {
    let (mut server, addr, job_id, _) = heartbeat_server(1, LONG, LONG);
    let rx = watch(&addr, job_id, &test_secret(), 0);
    let notices = poll_until(&mut server, Duration::from_secs(5), |n| !n.is_empty());
    assert!(
        matches!(notices.as_slice(), [Notice::Warning(w)] if w.contains("authentication failed")),
        "{notices:?}"
    );
    let (status, message) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(status, watchdog::LOST_STATUS);
    assert!(
        message.contains("refused the control connection: connection refused"),
        "{message}"
    );
    assert_eq!(server.controls_alive(LONG), 0);
}

/// The size of the table frame of one allgather of `blobs` (tags added), as the launcher
/// sends it.
fn table_frame_len(blobs: &[Vec<u8>]) -> u64 {
    let tagged: Vec<Vec<u8>> = blobs
        .iter()
        .map(|b| [&b[..], &[0u8; 32]].concat())
        .collect();
    Msg::Table {
        epoch: 0,
        blobs: tagged,
    }
    .encode()
    .len() as u64
}

/// Waits until the server has sent `want` bytes of tables (it counts after the PEs may have
/// returned).
fn table_bytes_reach(server: &TestServer, want: u64) -> u64 {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let got = server.table_bytes.load(Ordering::Relaxed);
        if got >= want || Instant::now() > until {
            return got;
        }
        thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_shared_allgather_sends_the_table_once_per_node() {
    // Three nodes: three PEs, two PEs, and one alone (which gets the table itself).
    let nodes = vec![0, 0, 0, 1, 1, 2];
    let npes = nodes.len();
    let server = TestServer::start_on(npes, LONG, Some(nodes));
    let blob = |pe: usize, round: usize| vec![(pe * 10 + round) as u8; 40 + pe];
    let results = run_pes(&server, npes, LONG, &[], move |mut b| {
        let me = b.pe();
        let mut shared = Vec::new();
        for round in 0..2 {
            let t = b.allgather_shared(&blob(me, round), &mut || {}).unwrap();
            assert_eq!(t.len(), npes);
            for pe in 0..npes {
                assert_eq!(t.record(pe), &blob(pe, round)[..], "PE {me}, round {round}");
            }
            shared.push(t.is_shared());
            b.barrier(&mut || {}).unwrap();
        }
        // A plain allgather still goes to every PE.
        let plain = b.allgather(&[me as u8], &mut || {}).unwrap();
        assert_eq!(plain, (0..npes).map(|p| vec![p as u8]).collect::<Vec<_>>());
        b.finalize().unwrap();
        shared
    });
    for (pe, shared) in results {
        assert_eq!(
            shared,
            [pe != 5, pe != 5],
            "PE {pe}: the lone PE owns its table"
        );
    }
    let per_round = |round| table_frame_len(&(0..npes).map(|p| blob(p, round)).collect::<Vec<_>>());
    let barrier = Msg::Table {
        epoch: 0,
        blobs: Vec::new(),
    }
    .encode()
    .len() as u64;
    let plain = table_frame_len(&(0..npes).map(|p| vec![p as u8]).collect::<Vec<_>>());
    // Each shared round: one table per node (3), not one per PE (6).
    let want =
        3 * per_round(0) + 3 * per_round(1) + 2 * npes as u64 * barrier + npes as u64 * plain;
    assert_eq!(table_bytes_reach(&server, want), want);
    let notices = server.finish();
    assert!(notices.is_empty(), "{notices:?}");
}

/// Says hello on the rendezvous connection as PE `pe` and contributes `blob` to a shared
/// allgather; returns the stream (after the `Accepted`).
fn raw_shared_pe(server: &TestServer, pe: u32, npes: u32, blob: &[u8]) -> TcpStream {
    let mut s = TcpStream::connect(&server.addr).unwrap();
    let Some(Msg::Challenge { nonce: challenge }) = read_frame(&mut s) else {
        panic!("no challenge");
    };
    let mine = [5u8; 32];
    let fields = wire::hello_fields(wire::PROTOCOL_VERSION, server.job_id, pe, npes);
    let hello = Msg::Hello {
        version: wire::PROTOCOL_VERSION,
        job_id: server.job_id,
        pe,
        npes,
        nonce: mine,
        mac: auth::hello_mac(
            &server.secret,
            Channel::Rendezvous,
            &challenge,
            &mine,
            &fields,
        ),
    };
    s.write_all(&hello.encode()).unwrap();
    assert!(matches!(read_frame(&mut s), Some(Msg::Accepted { .. })));
    let mut record = blob.to_vec();
    record.extend_from_slice(&auth::record_key(&server.secret, pe).tag(server.job_id, 0, blob));
    let collective = Msg::Collective {
        epoch: 0,
        kind: wire::CollectiveKind::SharedAllgather,
        blob: record,
    };
    s.write_all(&collective.encode()).unwrap();
    s
}

#[test]
fn a_table_that_cannot_be_opened_is_fetched_and_a_silent_leader_is_replaced() {
    let npes = 3;
    for leader_publishes in [true, false] {
        let server = TestServer::start_on(npes, LONG, Some(vec![0; npes]));
        // PE 0 (the leader) is a raw connection: it publishes a file that is not a sealed
        // memfd, or leaves without publishing.
        let mut leader = raw_shared_pe(&server, 0, npes as u32, b"zero");
        let others: Vec<_> = (1..npes)
            .map(|pe| {
                let config = server.config(pe, npes, LONG);
                thread::spawn(move || {
                    let mut b = config.connect().unwrap();
                    let t = b.allgather_shared(format!("PE {pe}").as_bytes(), &mut || {})?;
                    Ok::<_, ClientError>((t.is_shared(), t.to_vecs()))
                })
            })
            .collect();
        assert_eq!(read_frame(&mut leader), Some(Msg::Lead { epoch: 0 }));
        assert!(matches!(
            read_frame(&mut leader),
            Some(Msg::Table { epoch: 0, .. })
        ));
        let exe = std::fs::File::open("/proc/self/exe").unwrap();
        if leader_publishes {
            use std::os::fd::AsRawFd;
            let published = Msg::Published {
                epoch: 0,
                pid: std::process::id(),
                fd: exe.as_raw_fd() as u32,
                len: 1000,
            };
            leader.write_all(&published.encode()).unwrap();
        } else {
            drop(leader);
        }
        let want: Vec<Vec<u8>> = [b"zero".to_vec(), b"PE 1".to_vec(), b"PE 2".to_vec()].to_vec();
        for h in others {
            let (shared, records) = h.join().unwrap().unwrap();
            assert!(!shared, "the table came as a table");
            assert_eq!(records, want);
        }
        server.stop.store(true, Ordering::Relaxed);
    }
}

/// Reads frames until one for which `want` gives a value, failing after `limit`.
fn read_until<T>(s: &mut TcpStream, limit: Duration, want: impl Fn(Msg) -> Option<T>) -> T {
    s.set_read_timeout(Some(limit)).unwrap();
    loop {
        let msg = read_frame(s).expect("the launcher closed the agent's connection");
        if let Some(t) = want(msg) {
            return t;
        }
    }
}

#[test]
fn a_host_agent_relays_virtual_connections_end_to_end() {
    let server = TestServer::start_on(2, LONG, Some(vec![0, 0]));
    let (addr, job_id, secret) = (&server.addr, server.job_id, &server.secret);
    let wait = Duration::from_secs(5);
    // Without the secret, or for a node the job does not have: refused.
    let stranger = client::connect_agent(addr, &test_secret(), job_id, 0, wait).unwrap_err();
    assert!(stranger.contains("connection refused"), "{stranger}");
    let far = client::connect_agent(addr, secret, job_id, 1, wait).unwrap_err();
    assert!(far.contains("node 1, out of range for 1 nodes"), "{far}");
    let mut agent = client::connect_agent(addr, secret, job_id, 0, wait).unwrap();
    let twice = client::connect_agent(addr, secret, job_id, 0, wait).unwrap_err();
    assert!(twice.contains("connected twice"), "{twice}");

    // PE 1's rendezvous connection, relayed: the launcher's challenge and proof go end to end.
    agent.write_all(&Msg::Open { conn: 7 }.encode()).unwrap();
    let challenge = read_until(&mut agent, wait, |m| match m {
        Msg::Relay { conn: 7, data } => match Msg::decode(&data[4..]) {
            Ok(Msg::Challenge { nonce }) => Some(nonce),
            other => panic!("expected a challenge, got {other:?}"),
        },
        _ => None,
    });
    let mine = [3u8; 32];
    let fields = wire::hello_fields(wire::PROTOCOL_VERSION, job_id, 1, 2);
    let hello = Msg::Hello {
        version: wire::PROTOCOL_VERSION,
        job_id,
        pe: 1,
        npes: 2,
        nonce: mine,
        mac: auth::hello_mac(secret, Channel::Rendezvous, &challenge, &mine, &fields),
    };
    let relay = |conn, msg: &Msg| Msg::Relay {
        conn,
        data: msg.encode(),
    };
    agent.write_all(&relay(7, &hello).encode()).unwrap();
    let proof = read_until(&mut agent, wait, |m| match m {
        Msg::Relay { conn: 7, data } => match Msg::decode(&data[4..]) {
            Ok(Msg::Accepted { mac }) => Some(mac),
            other => panic!("expected the launcher's proof, got {other:?}"),
        },
        _ => None,
    });
    let want = auth::launcher_mac(secret, Channel::Rendezvous, &challenge, &mine, 1);
    assert_eq!(proof, want);

    // Junk on another virtual connection: that one is closed, the agent's stays.
    agent.write_all(&Msg::Open { conn: 8 }.encode()).unwrap();
    let junk = Msg::Relay {
        conn: 8,
        data: u32::MAX.to_le_bytes().to_vec(),
    };
    agent.write_all(&junk.encode()).unwrap();
    read_until(&mut agent, wait, |m| {
        (m == Msg::Close { conn: 8 }).then_some(())
    });
    // More relayed bytes than a connection may hold unread: closed too.
    agent.write_all(&Msg::Open { conn: 9 }.encode()).unwrap();
    let big = Msg::Relay {
        conn: 9,
        data: vec![0; wire::MAX_FRAME],
    };
    for _ in 0..3 {
        agent.write_all(&big.encode()).unwrap();
    }
    read_until(&mut agent, wait, |m| {
        (m == Msg::Close { conn: 9 }).then_some(())
    });

    // The exit of PE 1 is reported; one of another host's PEs ends the agent's connection.
    let exited = Msg::Exited {
        pe: 1,
        pid: 4321,
        status: 9,
    };
    agent.write_all(&exited.encode()).unwrap();
    let bogus = Msg::Exited {
        pe: 5,
        pid: 1,
        status: 0,
    };
    agent.write_all(&bogus.encode()).unwrap();
    agent.set_read_timeout(Some(wait)).unwrap();
    while read_frame(&mut agent).is_some() {}
    let notices = server.finish();
    assert!(
        notices.contains(&Notice::Exited {
            pe: 1,
            pid: 4321,
            status: 9
        }),
        "{notices:?}"
    );
    assert!(
        notices.iter().any(|n| matches!(n, Notice::Warning(w)
            if w.contains("the host agent of node 0: reported the exit of PE 5"))),
        "{notices:?}"
    );
}
