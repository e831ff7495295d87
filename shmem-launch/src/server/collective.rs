//! The collectives: completing one when every PE has arrived, answering with its table (or an
//! error), and a shared allgather's table sent once per node (see [`crate::table`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::wire::{CollectiveKind, ERR_OTHER, MAX_TABLE, Msg, pe_list};

use super::Server;

/// The last [`CollectiveKind::SharedAllgather`] (see [`crate::table`]).
#[derive(Debug)]
pub(super) struct SharedRound {
    pub(super) epoch: u64,
    /// The [`Msg::Table`] frame, for leaders, fetches and fallbacks.
    pub(super) frame: Arc<[u8]>,
    /// Per node that has not heard from its leader yet: the leader and the node's other PEs.
    pub(super) waiting: Vec<(usize, Vec<usize>)>,
}

impl Server {
    /// Sends `frame` to PE `pe` if it is connected, counting the bytes as a table's; a PE whose
    /// connection broke is dropped.
    pub(super) fn send_table(&mut self, pe: usize, frame: &Arc<[u8]>) {
        let Some(c) = self.slots[pe].conn.as_mut() else {
            return;
        };
        self.table_bytes += frame.len() as u64;
        if c.send_shared(Arc::clone(frame)).is_err() {
            self.drop_pe(pe);
        }
    }

    /// If `leader` leads a node waiting for the shared table, answers the node's other PEs:
    /// with `at` ([`Msg::TableAt`]) when the leader published it, else with the table itself.
    pub(super) fn release_node(&mut self, leader: usize, at: Option<Msg>) {
        let Some(round) = self.shared.as_mut() else {
            return;
        };
        let Some(i) = round.waiting.iter().position(|w| w.0 == leader) else {
            return;
        };
        let (_, waiters) = round.waiting.swap_remove(i);
        let frame = Arc::clone(&round.frame);
        for pe in waiters {
            match &at {
                Some(msg) => {
                    let sent = self.slots[pe].conn.as_mut().map(|c| c.send(&msg.encode()));
                    if let Some(Err(_)) = sent {
                        self.drop_pe(pe);
                    }
                }
                None => self.send_table(pe, &frame),
            }
        }
    }

    /// Releases the current collective if every PE has arrived.
    pub(super) fn try_complete(&mut self) {
        if self.slots.iter().any(|s| s.arrived.is_none()) {
            return;
        }
        let arrived: Vec<(CollectiveKind, Vec<u8>)> = self
            .slots
            .iter_mut()
            .filter_map(|s| s.arrived.take())
            .collect();
        let epoch = self.epoch;
        self.epoch += 1;
        self.stranded_reported = false;
        let (bar, ag): (Vec<usize>, Vec<usize>) =
            (0..arrived.len()).partition(|&p| arrived[p].0 == CollectiveKind::Barrier);
        let asks_shared: Vec<bool> = arrived
            .iter()
            .map(|a| a.0 == CollectiveKind::SharedAllgather)
            .collect();
        let total: usize = arrived.iter().map(|a| a.1.len()).sum();
        let is_table = total <= MAX_TABLE && bar.is_empty();
        let frame = if total > MAX_TABLE {
            let detail = format!(
                "collective {epoch}: the PEs' records add up to {total} bytes, over the \
                 launcher's limit of {MAX_TABLE} bytes"
            );
            self.warn(detail.clone());
            Msg::Error {
                code: ERR_OTHER,
                detail,
            }
        } else if !ag.is_empty() && !bar.is_empty() {
            let detail = format!(
                "collective {epoch} mismatch: PEs {} called an allgather but PEs {} a barrier",
                pe_list(&ag),
                pe_list(&bar)
            );
            self.warn(detail.clone());
            Msg::Error {
                code: ERR_OTHER,
                detail,
            }
        } else if bar.is_empty() {
            Msg::Table {
                epoch,
                blobs: arrived.into_iter().map(|a| a.1).collect(),
            }
        } else {
            Msg::Table {
                epoch,
                blobs: Vec::new(),
            }
        }
        .encode();
        let frame: Arc<[u8]> = Arc::from(frame);
        // A shared allgather: one PE per node (the lowest that asked, still connected) gets the
        // table and publishes it; the node's other askers wait for it (see `crate::table`).
        // Linear in the PEs: a job of 100,000 PEs pays no per-pair work here.
        let mut groups: BTreeMap<usize, (usize, Vec<usize>)> = BTreeMap::new();
        if let (true, Some(nodes)) = (is_table, &self.nodes) {
            for pe in (0..self.npes()).filter(|&p| asks_shared[p]) {
                if self.slots[pe].conn.is_some() {
                    groups
                        .entry(nodes[pe])
                        .or_insert((pe, Vec::new()))
                        .1
                        .push(pe);
                }
            }
        }
        // Each group lists its leader first; a node with one asker gets the table itself.
        let waiting: Vec<(usize, Vec<usize>)> = groups
            .into_values()
            .filter(|(_, pes)| pes.len() > 1)
            .map(|(leader, mut pes)| {
                pes.remove(0);
                (leader, pes)
            })
            .collect();
        let mut waits = vec![false; self.npes()];
        for (leader, pes) in &waiting {
            pes.iter().for_each(|&pe| waits[pe] = true);
            let lead = Msg::Lead { epoch }.encode();
            if let Some(c) = self.slots[*leader].conn.as_mut() {
                let _ = c.send(&lead);
            }
        }
        for pe in (0..self.npes()).filter(|&pe| !waits[pe]) {
            self.send_table(pe, &frame);
        }
        if is_table && asks_shared.iter().any(|&a| a) {
            self.shared = Some(SharedRound {
                epoch,
                frame,
                waiting,
            });
        }
    }
}
