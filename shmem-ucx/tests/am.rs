//! Active messages against the real UCX: a worker connected to its own address sends messages
//! to itself (over shared memory; with `UCX_TLS=tcp,self`, over the loopback), and its handler
//! replies on the reply endpoint.

use shmem_ucx::{AmFlags, AmHandler, AmMessage, Context, ContextParams, ThreadMode};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a handler saw: header, data (None: rendezvous), whether it could reply.
type Seen = (Vec<u8>, Option<Vec<u8>>, bool);

struct Recorder {
    seen: Mutex<Vec<Seen>>,
    /// Reply with this id (the message reversed), if any.
    reply_id: Option<u16>,
}

impl AmHandler for Recorder {
    fn receive(&self, msg: &AmMessage<'_>) {
        let data = msg.data().map(<[u8]>::to_vec);
        assert_eq!(
            msg.data_len(),
            data.as_ref().map_or(msg.data_len(), Vec::len)
        );
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).push((
            msg.header().to_vec(),
            data.clone(),
            msg.can_reply(),
        ));
        if let Some(id) = self.reply_id {
            let mut back = msg.header().to_vec();
            back.reverse();
            let header_len = back.len();
            back.extend(data.unwrap_or_default().iter().rev());
            let r = msg.reply(id, back, header_len, AmFlags::EAGER, |e| {
                panic!("reply failed later: {e}")
            });
            if msg.can_reply() {
                r.expect("reply on the reply endpoint");
            } else {
                assert!(r.is_err(), "a reply without a reply endpoint must fail");
            }
        }
    }
}

static REQUESTS: Recorder = Recorder {
    seen: Mutex::new(Vec::new()),
    reply_id: Some(2),
};
static REPLIES: Recorder = Recorder {
    seen: Mutex::new(Vec::new()),
    reply_id: None,
};

fn count(r: &Recorder) -> usize {
    r.seen.lock().unwrap_or_else(|p| p.into_inner()).len()
}

#[test]
fn messages_arrive_whole_and_replies_come_back() {
    let ctx = Context::new(&ContextParams {
        am: true,
        ..ContextParams::default()
    })
    .expect("context with AM");
    let worker = ctx.create_worker(ThreadMode::Multi).expect("worker");
    worker.set_am_handler(1, &REQUESTS).expect("handler 1");
    worker.set_am_handler(2, &REPLIES).expect("handler 2");
    let addr = worker.address().expect("address");
    // SAFETY: this worker's own address, unchanged.
    let ep = unsafe { worker.connect(&addr) }.expect("connect to self");

    // A small message and one of several fragments (200 KB), both forced eager, with reply.
    let big: Vec<u8> = (0..200_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    for (header, data) in [
        (b"hdr".to_vec(), b"data".to_vec()),
        (vec![9; 40], big.clone()),
    ] {
        let mut msg = header.clone();
        msg.extend_from_slice(&data);
        ep.am_send(1, msg, header.len(), AmFlags::REPLY | AmFlags::EAGER, |e| {
            panic!("send failed later: {e}")
        })
        .expect("am_send");
    }
    // Without a reply endpoint: the handler's reply must fail.
    ep.am_send(1, b"xy".to_vec(), 1, AmFlags::EAGER, |e| panic!("{e}"))
        .expect("am_send without reply");
    let t = Instant::now();
    while count(&REQUESTS) < 3 || count(&REPLIES) < 2 {
        worker.progress();
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "messages did not arrive"
        );
    }
    let seen = REQUESTS.seen.lock().expect("lock").clone();
    assert_eq!(seen[0], (b"hdr".to_vec(), Some(b"data".to_vec()), true));
    assert_eq!(seen[1], (vec![9; 40], Some(big.clone()), true));
    assert_eq!(seen[2], (b"x".to_vec(), Some(b"y".to_vec()), false));
    let replies = REPLIES.seen.lock().expect("lock").clone();
    let mut rev = big;
    rev.reverse();
    assert_eq!(replies[0], (b"rdh".to_vec(), Some(b"atad".to_vec()), false));
    assert_eq!(replies[1], (vec![9; 40], Some(rev), false));

    // A header longer than the message is refused before anything is sent.
    let e = ep
        .am_send(1, vec![0; 4], 5, AmFlags::NONE, |e| panic!("{e}"))
        .expect_err("header longer than the message");
    assert!(e.message.contains("header of 5 bytes"), "{e}");
    drop(ep);
}
