//! Start-up: the bootstrap (launcher or PMIx), the heap mapping, the statics' places, the team
//! segment, the exchange of start-up records, and endpoints to every PE; the transport made of
//! them.
//!
//! Part of the runtime layer; uses `object::statics`, `transport`, `mem`, `config`.

use super::bootstrap::Bootstrap;
use super::peer_info::PeerInfo;
use crate::error::{Error, Result};
use crate::mem::dataseg::{self, DataSegment};
use crate::mem::layout::HeapLayout;
use crate::mem::private_shm;
use crate::mem::segment::SEGMENT;
use crate::object::statics;
use crate::transport::{Peer, Transport, TransportParts, UcxPeer, Wire, progress, strided};
use shmem_ucx::{Context, ContextParams, MemHandle, ThreadMode};
use std::ptr;

/// Every PE asks for its heap at a multiple of this, so that `alloc_aligned` meets any
/// alignment up to it at the same offset on every PE (C's `shmem_align` has no limit).
pub(crate) const HEAP_BASE_ALIGN: usize = 1 << 30;

/// Maps the heap (`len` bytes, allocated by UCX) at a multiple of [`HEAP_BASE_ALIGN`] when it
/// can: it reserves `len + HEAP_BASE_ALIGN` bytes of address space (no memory) and asks UCX to
/// map the heap exactly at the aligned address inside its own reservation
/// (`UCP_MEM_MAP_FIXED`), then gives back the rest; if UCX refuses (its SysV allocator does not
/// map over a reservation), it gives the reservation back and passes the aligned address as a
/// hint, which that allocator follows. If neither lands aligned, the heap is where UCX put it and
/// alignments above the page size fail with a clear message in `alloc_aligned`.
fn map_heap(context: &Context, len: usize) -> Result<MemHandle> {
    let Some(span) = len.checked_add(HEAP_BASE_ALIGN) else {
        return Ok(context.mem_map_alloc(len)?);
    };
    // SAFETY: a fresh anonymous PROT_NONE reservation; it touches no existing mapping.
    let p = unsafe {
        libc::mmap(
            ptr::null_mut(),
            span,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Ok(context.mem_map_alloc(len)?);
    }
    let (start, end) = (p as usize, p as usize + span);
    let aligned = start.next_multiple_of(HEAP_BASE_ALIGN);
    // Releases [from, to) of the reservation (nothing when empty).
    let release = |from: usize, to: usize| {
        if to > from {
            // SAFETY: a page-aligned part of this function's own reservation, not used by
            // anything else.
            unsafe { libc::munmap(from as *mut libc::c_void, to - from) };
        }
    };
    // SAFETY: [aligned, aligned + len) lies inside the reservation made above, which this
    // process owns and gives up to UCX.
    if let Ok(mem) = unsafe { context.mem_map_alloc_fixed(len, aligned as *mut u8) } {
        if mem.address() as usize == aligned {
            release(start, aligned);
            // SAFETY: sysconf has no preconditions.
            let page =
                usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
            release((aligned + mem.len()).next_multiple_of(page).min(end), end);
            return Ok(mem);
        }
        drop(mem);
    }
    release(start, end);
    Ok(context.mem_map_alloc_near(len, aligned as *mut u8)?)
}

/// Sets up the runtime: bootstrap, heap mapping, statics, the exchange of start-up records,
/// endpoints to every PE; the transport and the launcher connection.
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
    let layout = HeapLayout::new(reserved, statics_len, heap_size).ok_or_else(|| {
        Error::Bootstrap(format!(
            "a symmetric heap of {heap_size} bytes plus {statics_len} bytes of statics does not \
             fit in the address space"
        ))
    })?;
    let total = layout.total;

    let node = bootstrap.node() as u64;
    let progress_thread = crate::config::progress_thread(bootstrap.spans_nodes())?;
    let context = Context::new(&ContextParams {
        estimated_num_eps: Some(n_pes),
        wakeup: progress_thread,
        // Strided puts and gets to PEs reached through UCX travel in active messages.
        am: true,
        // With the AM feature UCX 1.13 adds rendezvous lanes on every TCP device (lo and eth0
        // here); closing a context's endpoints then crashes it in uct_tcp_iface_progress after
        // a refused loopback connection (seen in tests/ctx.rs over tcp). Strided messages are
        // always eager, so one rendezvous lane costs them nothing.
        // The heap in memory only this user can map (see `private_shm`).
        config_defaults: vec![
            ("MAX_RNDV_LANES", "1"),
            ("ALLOC_PRIO", private_shm::ALLOC_PRIO),
        ],
        ..ContextParams::default()
    })?;
    let worker = context.create_worker(ThreadMode::Multi)?;
    let mem = map_heap(&context, total)?;
    let base = mem.address();
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
    strided::register(
        &worker,
        my_pe,
        n_pes,
        (base, total),
        data_range,
        (team, team_len),
    )?;

    // SAFETY: the statics region lies inside the mapping (layout computed above).
    unsafe { statics::place_all(base.add(layout.statics), layout.statics) };

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
        team_rkey: team_mem.pack_rkey()?,
    };
    let blobs = bootstrap.allgather(&me.encode(), &mut || {
        worker.progress();
    })?;
    if blobs.len() != n_pes {
        return Err(Error::Bootstrap(format!(
            "rendezvous returned {} records for {n_pes} PEs",
            blobs.len()
        )));
    }

    let mut peers = Vec::with_capacity(n_pes);
    let mut wire = Vec::with_capacity(n_pes);
    let mut pending = Vec::new();
    for (pe, blob) in blobs.iter().enumerate() {
        let info = PeerInfo::decode(pe, blob)?;
        wire.push(Wire {
            addr: info.worker_addr.clone(),
            rkey: info.rkey.clone(),
            data_rkey: (!info.data_rkey.is_empty()).then(|| info.data_rkey.clone()),
            team_rkey: info.team_rkey.clone(),
        });
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
        if info.data_len != data_range.1 as u64 || info.data_rkey.is_empty() != data_mem.is_none() {
            return Err(Error::Bootstrap(format!(
                "PE {pe} has a {}-byte data segment but PE {my_pe} has {}: every PE must run \
                 the same program",
                info.data_len, data_range.1
            )));
        }
        if pe == my_pe {
            peers.push(
                Peer::new(base, base as u64, None)
                    .with_data(data_range.0, info.data_base)
                    .with_team(team, team as u64),
            );
            continue;
        }
        // SAFETY: both byte strings are the peer's own `Worker::address` and `pack_rkey`
        // output, carried unchanged by the launcher (framed, length-checked) from a PE of the
        // same job, which checked the job id; the same binary means the same UCX.
        let ep = unsafe { worker.connect(&info.worker_addr)? };
        // SAFETY: as above.
        let rkey = unsafe { ep.unpack_rkey(&info.rkey)? };
        let data_rkey = match &data_mem {
            // SAFETY: as above.
            Some(_) => Some(unsafe { ep.unpack_rkey(&info.data_rkey)? }),
            None => None,
        };
        // SAFETY: as above.
        let team_rkey = unsafe { ep.unpack_rkey(&info.team_rkey)? };
        // Only PEs of this node are mapped: UCX may well map a PE of another "node" on the
        // same machine (containers, network namespaces), but the job's layout says that
        // traffic goes over the network.
        let mut direct = match rkey.ptr(info.base) {
            Ok(p) if info.node == node => p,
            Ok(_) => ptr::null_mut(),
            Err(e) if e.is_unreachable() => ptr::null_mut(),
            Err(e) => return Err(e.into()),
        };
        // The team segment of every PE of this node is mapped, whatever UCX reaches; if the
        // kernel will not let us open it, the peer is reached through UCX altogether.
        let team_direct = if info.node == node {
            private_shm::map_peer(info.pid, info.team_fd, team_len).unwrap_or(ptr::null_mut())
        } else {
            ptr::null_mut()
        };
        if team_direct.is_null() {
            direct = ptr::null_mut();
        }
        // A mapped peer's data segment is mapped too; if the kernel will not let us open it,
        // the peer is reached through UCX altogether.
        let mut data_direct = ptr::null_mut();
        if !direct.is_null() && data.is_some() {
            match private_shm::map_peer(info.pid, info.data_fd, data_range.1) {
                Some(p) => data_direct = p,
                None => direct = ptr::null_mut(),
            }
        }
        // Wire up every endpoint while all PEs are here to progress, so that the first real
        // operation does not wait for a peer that is busy computing.
        if let Some(req) = ep.flush_start()? {
            pending.push(req);
        }
        peers.push(
            Peer::new(
                direct,
                info.base,
                Some(UcxPeer {
                    rkey,
                    data_rkey,
                    team_rkey,
                    ep,
                }),
            )
            .with_data(data_direct, info.data_base)
            .with_team(team_direct, info.team_base),
        );
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
    bootstrap.barrier(&mut || {
        worker.progress();
    })?;
    // Every endpoint is wired up: from here on a PE that computes without calling the library
    // still serves the operations that need its progress (atomics over tcp), if asked to.
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
        wire,
        progress_thread,
        worker,
        context,
        mem,
    })
}
