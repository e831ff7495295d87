//! Start-up: the bootstrap (launcher or PMIx), the heap mapping, the statics' places, the team
//! segment, the exchange of start-up records (whose table stays, shared by the node's PEs under
//! `shmemrun`, for first contacts), and the mappings of this node's PEs; the transport made of
//! them. UCX endpoints are made here for up to a few hundred peers, else at
//! first contact (`SHMEM_CONNECT`).
//!
//! Part of the runtime layer; uses `object::statics`, `transport`, `mem`, `config`.

use super::bootstrap::Bootstrap;
use super::peer_info::PeerInfo;
use crate::error::{Error, Result};
use crate::mem::dataseg::{self, DataSegment};
use crate::mem::layout::{HeapLayout, OBJECT_ALIGN};
use crate::mem::private_shm;
use crate::mem::segment::SEGMENT;
use crate::object::statics;
use crate::transport::{
    Contact, Directory, Link, Peer, Transport, TransportParts, Wire, am, progress,
};
use shmem_launch::table::Pending;
use shmem_ucx::{Context, ContextParams, ThreadMode};
use std::ptr;
use std::sync::Arc;

/// Every PE maps its heap at a multiple of this, so that `alloc_aligned` meets any alignment
/// up to it at the same offset on every PE (C's `shmem_align` has no limit).
pub(crate) const HEAP_BASE_ALIGN: usize = 1 << 30;

/// Sets up the runtime: bootstrap, heap mapping, statics, the exchange of start-up records, the
/// mappings of this node's PEs; the transport and the launcher connection.
pub(super) fn start() -> Result<(Transport, Bootstrap)> {
    // First, before anything starts threads: nothing may write the segment while it moves.
    let data = if dataseg::wanted() {
        dataseg::move_to_shared_memory()?
    } else {
        None
    };
    let mut bootstrap = Bootstrap::from_env()?;
    match start_on(&mut bootstrap, data) {
        Ok(transport) => Ok((transport, bootstrap)),
        Err(e) => {
            // This PE leaves the job with an error that its program sees: say goodbye, so that
            // the launcher does not take its exit for one without finalizing (and tells PEs
            // that wait for it at the rendezvous that it left).
            let _ = bootstrap.finalize();
            Err(e)
        }
    }
}

/// [`start`] once the launcher connection is up: the transport.
fn start_on(bootstrap: &mut Bootstrap, data: Option<DataSegment>) -> Result<Transport> {
    let my_pe = bootstrap.my_pe();
    let n_pes = bootstrap.n_pes();

    let (statics_len, statics_sig) = statics::layout();
    // Offsets 0..SEGMENT name the team segment (a memfd of its own, below), then come the
    // statics and the user heap: the heap mapping's first SEGMENT bytes stay unused (and
    // untouched: no memory behind them).
    let reserved = SEGMENT;
    let heap_size = crate::config::heap_size()?;
    // A foreign-language layer's own blocks (the C API's scratch words) come on top, so that
    // one allocation of all of SHMEM_SYMMETRIC_SIZE still fits.
    let user_len =
        crate::config::heap_reserve(n_pes, OBJECT_ALIGN).and_then(|r| heap_size.checked_add(r));
    let layout = user_len.and_then(|u| HeapLayout::new(reserved, statics_len, u));
    let layout = layout.ok_or_else(|| {
        Error::Bootstrap(format!(
            "a symmetric heap of {heap_size} bytes plus {statics_len} bytes of statics does not \
             fit in the address space"
        ))
    })?;
    let total = layout.total;

    let node = bootstrap.node() as u64;
    let shared_memory = crate::config::shared_memory_allowed();
    // A progress thread where some peer is reached through the network: across nodes, or on
    // one node whose UCX_TLS leaves out shared memory (then no peer is mapped here).
    let through_network = bootstrap.spans_nodes() || (n_pes > 1 && !shared_memory);
    let progress_thread = crate::config::progress_thread(through_network)?;
    let coalesce = crate::config::coalesce()?;
    let context = Context::new(&ContextParams {
        estimated_num_eps: Some(n_pes),
        wakeup: progress_thread,
        // Strided puts and gets to PEs reached through UCX travel in active messages.
        am: true,
        // With the AM feature UCX 1.13 adds rendezvous lanes on every TCP device (lo and eth0
        // here); closing a context's endpoints then crashes it in uct_tcp_iface_progress after
        // a refused loopback connection (seen in tests/ctx.rs over tcp). Strided messages are
        // always eager, so one rendezvous lane costs them nothing.
        // UCX's own shared memory stays out unless the user asks for it (see `private_shm`).
        config_defaults: vec![
            ("MAX_RNDV_LANES", "1"),
            ("TLS", private_shm::UCX_TLS_DEFAULT),
        ],
        ..ContextParams::default()
    })?;
    let worker = context.create_worker(ThreadMode::Multi)?;
    // The heap: a memfd (no name, nothing committed: a page costs memory when first touched,
    // here or in a peer), mapped here at a multiple of HEAP_BASE_ALIGN and by the node's
    // other PEs, and registered with UCX for the peers it reaches.
    let (heap_fd, base) =
        private_shm::create_aligned(c"shmem-symmetric-heap", total, HEAP_BASE_ALIGN).map_err(
            |e| {
                Error::Bootstrap(format!(
                    "mapping a symmetric heap of {heap_size} bytes: {e}"
                ))
            },
        )?;
    // SAFETY: the heap stays mapped for the process's life (it is never unmapped).
    let mem = unsafe { context.mem_map_register(total, base)? };
    // Before any peer learns where this PE's memory and message queues are.
    private_shm::restrict_sysv_segments();
    let data_mem = match &data {
        // SAFETY: the segment stays mapped for the process's life (it is never unmapped).
        Some(d) => Some(unsafe { context.mem_map_register(d.len, d.base)? }),
        None => None,
    };
    let data_range = data
        .as_ref()
        .map_or((ptr::null_mut(), 0), |d| (d.base, d.len));
    // The team segment: a fresh memfd, so all zeros (the sync area and every team block start
    // cleared), which this node's PEs map whatever UCX_TLS says.
    let team_len = SEGMENT;
    let (team_fd, team) = private_shm::create(c"shmem-team-segment", team_len)
        .map_err(|e| Error::Bootstrap(format!("creating the team segment: {e}")))?;
    // SAFETY: the segment stays mapped for the process's life (it is never unmapped).
    let team_mem = unsafe { context.mem_map_register(team_len, team)? };
    // Before any progress with peers connected: a peer's first strided put may come at once.
    am::register(
        &worker,
        my_pe,
        n_pes,
        (base, total),
        data_range,
        (team, team_len),
    )?;

    // SAFETY: the statics region lies inside the mapping (layout computed above).
    unsafe { statics::place_all(base.add(layout.statics), layout.statics) };

    // Under PMIx this PE may share the node's start-up table: its memfd is made now so that
    // this PE's record can name it (a failure only means every PE reads the records itself).
    let pending = (bootstrap.table_leader() == Some(my_pe))
        .then(|| Pending::new().ok())
        .flatten();
    let me = PeerInfo {
        base: base as u64,
        len: total as u64,
        statics_sig,
        node,
        pid: std::process::id(),
        data_fd: data.as_ref().map_or(u32::MAX, |d| d.fd as u32),
        data_base: data_range.0 as u64,
        data_len: data_range.1 as u64,
        worker_addr: worker.address()?,
        rkey: mem.pack_rkey()?,
        data_rkey: match &data_mem {
            Some(m) => m.pack_rkey()?,
            None => Vec::new(),
        },
        team_fd: team_fd as u32,
        team_base: team as u64,
        heap_fd: heap_fd as u32,
        team_rkey: team_mem.pack_rkey()?,
        table_fd: pending.as_ref().map_or(u32::MAX, Pending::fd),
    };
    let locate = |record: &[u8]| {
        PeerInfo::decode_head(usize::MAX, record)
            .ok()
            .filter(|(info, _)| info.table_fd != u32::MAX)
            .map(|(info, _)| (info.pid, info.table_fd))
    };
    let table = bootstrap.allgather_table(&me.encode(), pending, &locate, &mut || {
        worker.progress();
    })?;
    if table.len() != n_pes {
        return Err(Error::Bootstrap(format!(
            "rendezvous returned {} records for {n_pes} PEs",
            table.len()
        )));
    }
    // The table stays (shared with the node's PEs where the launcher allowed it): a peer's
    // address and keys are read from it at first contact, not copied for every peer here.
    let table = Arc::new(table);
    let records = Arc::clone(&table);
    let directory = Arc::new(Directory::new(Box::new(move |pe| {
        let info = PeerInfo::decode(pe, records.record(pe))?;
        Ok(Wire {
            addr: info.worker_addr,
            rkey: info.rkey,
            data_rkey: (!info.data_rkey.is_empty()).then_some(info.data_rkey),
            team_rkey: info.team_rkey,
        })
    })));

    let mut peers = Vec::with_capacity(n_pes);
    for pe in 0..n_pes {
        let (info, has_data_rkey) = PeerInfo::decode_head(pe, table.record(pe))?;
        if info.statics_sig != statics_sig {
            return Err(Error::Bootstrap(format!(
                "PE {pe} has a different set of #[symmetric] statics than PE {my_pe} \
                 (signature {:#x} vs {statics_sig:#x}): every PE must run the same program",
                info.statics_sig
            )));
        }
        if info.len != total as u64 {
            return Err(Error::Bootstrap(format!(
                "PE {pe} mapped a {}-byte symmetric heap but PE {my_pe} mapped {total}: \
                 SHMEM_SYMMETRIC_SIZE must be the same on every PE",
                info.len
            )));
        }
        if info.data_len != data_range.1 as u64 || has_data_rkey != data_mem.is_some() {
            return Err(Error::Bootstrap(format!(
                "PE {pe} has a {}-byte data segment but PE {my_pe} has {}: every PE must run \
                 the same program",
                info.data_len, data_range.1
            )));
        }
        if pe == my_pe {
            peers.push(
                Peer::new(base, base as u64, Link::Closed)
                    .with_data(data_range.0, info.data_base)
                    .with_team(team, team as u64),
            );
            continue;
        }
        // The memory of this node's PEs (team segment, heap and data segment) is mapped here;
        // a PE of another "node" on the same machine (containers, network namespaces) is not,
        // because the job's layout says that traffic goes over the network. Where UCX_TLS
        // leaves out shared memory, puts, gets and atomics to them go through UCX all the same,
        // and only the runtime's own words and the collectives use the mappings
        // (`Transport::coll_mapped`). A peer is mapped all or nothing: if the kernel will not
        // let us open one of its segments (all three ask for the same ptrace access), it is
        // reached through UCX altogether, and a mapping already made stays unused.
        let map = |fd: u32, len: usize| {
            private_shm::map_peer(info.pid, fd, len).unwrap_or(ptr::null_mut())
        };
        let (mut team_direct, mut shared, mut data_direct) =
            (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        if info.node == node {
            team_direct = map(info.team_fd, team_len);
            if !team_direct.is_null() {
                shared = map(info.heap_fd, total);
            }
            if !shared.is_null() && data.is_some() {
                data_direct = map(info.data_fd, data_range.1);
            }
            if shared.is_null() || (data.is_some() && data_direct.is_null()) {
                (team_direct, shared, data_direct) =
                    (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
            }
        }
        let direct = if shared_memory {
            shared
        } else {
            ptr::null_mut()
        };
        peers.push(
            // The endpoint is made below or at first contact (never, for a peer mapped here).
            Peer::new(
                direct,
                info.base,
                Link::Unopened(
                    worker.clone(),
                    Contact {
                        directory: Arc::clone(&directory),
                        pe,
                    },
                ),
            )
            .with_data(data_direct, info.data_base)
            .with_shared(shared)
            .with_team(team_direct, info.team_base),
        );
    }
    // Endpoints to the PEs reached through UCX: at start-up for a few hundred of them (while
    // every PE is here to progress, so the first operation to each is as fast as any other),
    // else at first contact (SHMEM_CONNECT).
    let ucx_peers = peers.iter().filter(|p| p.through_ucx()).count();
    if crate::config::connect_at_start(ucx_peers)? {
        let mut pending = Vec::new();
        // (This PE is mapped, so it is not among them.)
        for peer in &peers {
            if peer.through_ucx()
                && let Some(req) = peer.connect_now()?
            {
                pending.push(req);
            }
        }
        let mut spins = 0;
        while !pending.is_empty() {
            worker.progress();
            let mut still = Vec::with_capacity(pending.len());
            for req in pending {
                if !req.is_done()? {
                    still.push(req);
                }
            }
            pending = still;
            progress::backoff(&mut spins);
        }
        // Each endpoint's lanes, now that its wire-up is done, rather than at the first put to
        // it: UCX's description of an endpoint takes 10-20 µs to print, and 63 of them at the
        // first all-to-all round of a 64-PE job over tcp were a quarter of its first-contact
        // cost.
        for peer in &peers {
            peer.read_lanes();
        }
    }
    bootstrap.barrier(&mut || {
        worker.progress();
    })?;
    // From here on a PE that computes without calling the library still serves the operations
    // that need its progress (atomics over tcp), if asked to.
    Transport::new(TransportParts {
        my_pe,
        n_pes,
        base,
        layout,
        data: data_range,
        data_mem,
        team,
        team_mem,
        peers,
        directory,
        progress_thread,
        coalesce,
        worker,
        context,
        mem,
    })
}
