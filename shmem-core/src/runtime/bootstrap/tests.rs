//! Unit tests of the choice and of the error mapping. The launch protocol itself (server, client,
//! watchdog) is tested in the `shmem-launch` crate; here a real server runs in-process only to
//! see its answers arrive as this crate's errors.
//!
//! Part of the runtime layer (tests of `bootstrap`).

use std::ffi::OsString;
use std::thread;
use std::time::{Duration, Instant};

use shmem_launch::auth::Secret;
use shmem_launch::server::Server;
use shmem_launch::wire::{ENV_JOB_ID, ENV_NPES, ENV_PE, ENV_RENDEZVOUS};

use super::*;

/// The rendezvous as start-up runs it, with nothing to share, as vectors.
fn gather(b: &mut Bootstrap, mine: &[u8], progress: &mut dyn FnMut()) -> Result<Vec<Vec<u8>>> {
    b.allgather_table(mine, None, &|_| None, progress)
        .map(|t| t.to_vecs())
}

#[test]
fn singleton_without_launcher() {
    let mut b = Bootstrap::singleton();
    assert_eq!((b.my_pe(), b.n_pes()), (0, 1));
    assert_eq!((b.node(), b.n_nodes()), (0, 1));
    assert!(!b.spans_nodes());
    let mut calls = 0;
    assert_eq!(
        gather(&mut b, b"x", &mut || calls += 1).unwrap(),
        vec![b"x".to_vec()]
    );
    b.barrier(&mut || calls += 1).unwrap();
    b.finalize().unwrap();
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
fn environment_errors_become_bad_env_and_bootstrap_errors() {
    let bad = LaunchEnv::from_vars(vars(&[
        (ENV_RENDEZVOUS, "127.0.0.1:4000"),
        (ENV_PE, "3"),
        (ENV_NPES, "3"),
        (ENV_JOB_ID, "00ff"),
    ]))
    .unwrap_err();
    match env_error(bad) {
        Error::BadEnv {
            name,
            value,
            reason,
        } => {
            assert_eq!((name, value.as_str()), (ENV_PE, "3"));
            assert_eq!(reason, "must be below SHMEM_NPES=3");
        }
        other => panic!("{other:?}"),
    }
    let missing = LaunchEnv::from_vars(vars(&[(ENV_RENDEZVOUS, "127.0.0.1:4000"), (ENV_PE, "0")]))
        .unwrap_err();
    match env_error(missing) {
        Error::Bootstrap(m) => assert_eq!(
            m,
            "SHMEM_RENDEZVOUS is set but SHMEM_NPES is not: start the program with shmemrun, \
             or unset SHMEM_RENDEZVOUS to run it as a single PE"
        ),
        other => panic!("{other:?}"),
    }
}

/// A server with `npes` PEs served by a thread for `serve_for`.
fn serve(npes: usize, timeout: Duration, serve_for: Duration) -> (String, u64, Secret) {
    let job_id = 0xb007_0000_0000_0000 ^ u64::from(std::process::id());
    let secret = Secret::generate().unwrap();
    let mut server = Server::bind("127.0.0.1:0", job_id, secret.clone(), npes, timeout).unwrap();
    let addr = server.local_addr().unwrap().to_string();
    thread::spawn(move || {
        let start = Instant::now();
        while start.elapsed() < serve_for {
            server.poll(None, Duration::from_millis(5)).unwrap();
        }
    });
    (addr, job_id, secret)
}

fn launch_env(
    (addr, job_id, secret): &(String, u64, Secret),
    pe: usize,
    npes: usize,
    timeout: Duration,
) -> LaunchEnv {
    LaunchEnv {
        rendezvous: addr.to_string(),
        pe,
        npes,
        job_id: *job_id,
        secret: secret.clone(),
        timeout,
        node: 0,
        nnodes: 1,
        local: None,
        bind_to_core: false,
    }
}

#[test]
fn launcher_collectives_and_finalize_through_bootstrap() {
    let job = serve(2, Duration::from_secs(30), Duration::from_secs(30));
    let pes: Vec<_> = (0..2)
        .map(|pe| {
            let env = launch_env(&job, pe, 2, Duration::from_secs(30));
            thread::spawn(move || {
                let mut b = Bootstrap::connect(&env).unwrap();
                assert_eq!((b.my_pe(), b.n_pes()), (pe, 2));
                let table = gather(&mut b, &[pe as u8], &mut || {}).unwrap();
                assert_eq!(table, [vec![0u8], vec![1u8]]);
                b.barrier(&mut || {}).unwrap();
                b.finalize().unwrap();
                // Finalized: refused, as this crate's error.
                assert!(matches!(b.barrier(&mut || {}), Err(Error::Bootstrap(_))));
            })
        })
        .collect();
    for pe in pes {
        pe.join().unwrap();
    }
}

#[test]
fn rendezvous_timeout_carries_the_configured_timeout() {
    let timeout = Duration::from_millis(300);
    let job = serve(2, timeout, Duration::from_secs(5));
    // PE 1 never comes.
    let mut b = Bootstrap::connect(&launch_env(&job, 0, 2, timeout)).unwrap();
    match gather(&mut b, b"", &mut || {}) {
        Err(Error::RendezvousTimeout { timeout: t, detail }) => {
            assert_eq!(t, timeout);
            assert!(
                detail.contains("PE 1 of 2 did not reach the rendezvous"),
                "{detail}"
            );
        }
        other => panic!("{other:?}"),
    }
}
