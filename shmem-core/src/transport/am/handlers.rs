//! The receiving PE's active-message handlers, one per message kind: each checks the message
//! (`wire`), writes what it names, counts it and acknowledges it when an ack is due (`ledger`),
//! or ends this PE with a message naming the sender when a check fails.

use super::ledger::lock;
use super::state::{State, state};
use super::wire::{
    ACK_WORDS, AM_ACK, AM_GET_RESP, BATCH_WORDS, PUT_WORDS, RESP_WORDS, Refusal, SIGNAL_WORDS,
    apply_batch, check_batch, check_get_req, check_put, check_signal, get_resp_header, message,
    send_failed, split_ask,
};
use shmem_ucx::{AmFlags, AmHandler, AmMessage};
use std::sync::Arc;

pub(super) struct PutHandler;
/// Handles `SIGNAL` (`ACK` true: acknowledged) and `FLAG` messages.
pub(super) struct SignalHandler<const ACK: bool>;
pub(super) struct AckHandler;
pub(super) struct SyncHandler;
pub(super) struct BatchHandler;
pub(super) struct GetReqHandler;
pub(super) struct GetRespHandler;

/// A message that fails a check: end this PE, naming the sender.
#[cold]
#[inline(never)]
fn bad_message(st: &State, from: u64, what: std::fmt::Arguments<'_>) -> ! {
    crate::error::eprint_line(format_args!(
        "shmem: PE {} received a malformed strided-transfer message from PE {from}: {what}; \
         ending the job",
        st.my_pe
    ));
    std::process::abort();
}

/// Ends this PE over a refused message.
fn refused(st: &State, r: Refusal) -> ! {
    bad_message(st, r.from, format_args!("{}", r.what))
}

/// Acknowledges the first `count` messages from the sender of `msg`.
fn reply_ack(st: &State, msg: &AmMessage<'_>, count: u64) {
    let ack = message(&[st.my_pe as u64, count], 0);
    if let Err(e) = msg.reply(AM_ACK, ack, ACK_WORDS * 8, AmFlags::NONE, send_failed) {
        send_failed(e);
    }
}

impl AmHandler for PutHandler {
    fn receive(&self, msg: &AmMessage<'_>) {
        let st = state();
        let (header, ask) = split_ask(msg.header(), PUT_WORDS);
        let (from, plan) = check_put(st.regions(), header, msg.data())
            .and_then(|p| Ok((st.ledger.sender(p.from)?, p)))
            .unwrap_or_else(|r| refused(st, r));
        // SAFETY: checked against this PE's regions, which live as long as the process.
        unsafe { plan.apply() };
        if let Some(n) = st.ledger.receive_counted(from, plan.data.len(), ask) {
            reply_ack(st, msg, n);
        }
    }
}

impl AmHandler for BatchHandler {
    fn receive(&self, msg: &AmMessage<'_>) {
        let st = state();
        let regions = st.regions();
        let (header, ask) = split_ask(msg.header(), BATCH_WORDS);
        let (from, data) = check_batch(regions, header, msg.data())
            .and_then(|(f, d)| Ok((st.ledger.sender(f)?, d)))
            .unwrap_or_else(|r| refused(st, r));
        // SAFETY: checked against this PE's regions, which live as long as the process.
        unsafe { apply_batch(regions, data) };
        if let Some(n) = st.ledger.receive_counted(from, data.len(), ask) {
            reply_ack(st, msg, n);
        }
    }
}

impl<const ACK: bool> AmHandler for SignalHandler<ACK> {
    fn receive(&self, msg: &AmMessage<'_>) {
        let st = state();
        let (header, ask) = if ACK {
            split_ask(msg.header(), SIGNAL_WORDS)
        } else {
            (msg.header(), None)
        };
        let (from, plan) = check_signal(st.regions(), header, msg.data())
            .and_then(|p| Ok((if ACK { st.ledger.sender(p.from)? } else { 0 }, p)))
            .unwrap_or_else(|r| refused(st, r));
        // SAFETY: checked against this PE's regions, which live as long as the process and
        // whose signal words PEs update only atomically.
        unsafe { plan.apply() };
        if ACK && let Some(n) = st.ledger.receive_counted(from, plan.data.len(), ask) {
            reply_ack(st, msg, n);
        }
    }
}

impl AmHandler for AckHandler {
    fn receive(&self, msg: &AmMessage<'_>) {
        let st = state();
        if let Err(r) = st.ledger.take_ack(msg.header()) {
            refused(st, r);
        }
    }
}

impl AmHandler for SyncHandler {
    fn receive(&self, msg: &AmMessage<'_>) {
        let st = state();
        match st.ledger.take_sync(msg.header()) {
            Ok((_, Some(n))) => reply_ack(st, msg, n),
            Ok((_, None)) => {}
            Err(r) => refused(st, r),
        }
    }
}

impl AmHandler for GetReqHandler {
    fn receive(&self, msg: &AmMessage<'_>) {
        let st = state();
        let plan =
            check_get_req(st.regions(), st.my_pe, msg.header()).unwrap_or_else(|r| refused(st, r));
        // SAFETY: checked against this PE's regions, which live as long as the process.
        let resp = unsafe { plan.response() };
        if let Err(e) = msg.reply(
            AM_GET_RESP,
            resp,
            RESP_WORDS * 8,
            AmFlags::EAGER,
            send_failed,
        ) {
            send_failed(e);
        }
    }
}

impl AmHandler for GetRespHandler {
    fn receive(&self, msg: &AmMessage<'_>) {
        let st = state();
        let head = get_resp_header(msg.header()).unwrap_or_else(|r| refused(st, r));
        let [from, _, _, token, first] = head;
        let Some(data) = msg.data() else {
            bad_message(st, from, format_args!("get response not sent eagerly"));
        };
        // Claim the elements under the table's lock, so that the requester, once it has removed
        // the slot, knows no other response will write into its buffer.
        let (slot, count) = {
            let gets = lock(&st.gets);
            let Some(slot) = gets.get(&token) else {
                drop(gets);
                bad_message(
                    st,
                    from,
                    format_args!("get response for unknown request {token}"),
                );
            };
            match slot.claim(head, data.len()) {
                Ok(n) => (Arc::clone(slot), n),
                Err(r) => {
                    drop(gets);
                    refused(st, r);
                }
            }
        };
        // SAFETY: claimed above; the requester waits for this write before it unregisters the
        // slot and releases its buffer.
        unsafe { slot.write(first, data, count) };
    }
}
