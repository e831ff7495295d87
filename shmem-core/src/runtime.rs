//! The process-wide runtime: the composition root. Start-up builds the layers below the
//! OpenSHMEM families ([`transport`](crate::transport), [`progress`](crate::progress),
//! [`layout`](crate::layout)) and the families' per-process state (heap allocator, team blocks,
//! statics), and finalize takes them down. This is the only module that names them all.
//!
//! The runtime is created once per process and never freed (see the lifetime notes in
//! [`transport`](crate::transport)): [`runtime`] hands out `&'static Runtime`, and every operation
//! checks that the `World` still lives before it touches memory.

use crate::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use crate::heap::Allocator;
use crate::layout::HeapLayout;
use crate::statics;
use crate::sync::{self, SyncState};
use crate::transport::{Peer, Transport, TransportParts, UcxPeer, Wire};
use shmem_ucx::{Context, ContextParams, MemHandle, ThreadMode};
use std::ptr;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};

/// The runtime of this process, set by the first successful `init` and never freed.
static RUNTIME: OnceLock<Runtime> = OnceLock::new();
/// Life cycle of the process: one `init`, one finalize.
static STATE: AtomicU8 = AtomicU8::new(UNINIT);
const UNINIT: u8 = 0;
const STARTING: u8 = 1;
const LIVE: u8 = 2;
const FINALIZED: u8 = 3;

/// The runtime, or a panic that tells the user to call `init` first. After finalize it is still
/// returned: the operation that uses it then panics with "used after the World was dropped".
#[inline]
#[track_caller]
pub(crate) fn runtime() -> &'static Runtime {
    match RUNTIME.get() {
        Some(rt) => rt,
        None => not_initialized(),
    }
}

#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn not_initialized() -> ! {
    panic!(
        "shmem: symmetric memory used before the runtime is initialized: call shmem_core::init() \
         first"
    )
}

/// Everything `init` sets up: the transport (PEs, heap mapping, UCX) and the state of the
/// families built on it.
pub struct Runtime {
    transport: Transport,
    pub(crate) sync: SyncState,
    /// Team blocks in use and their epoch counters.
    pub(crate) team_slots: crate::team::Slots,
    pub(crate) allocator: Mutex<Allocator>,
    /// The launcher connection; taken (and dropped, which ends PMIx) at finalize.
    bootstrap: Mutex<Option<Bootstrap>>,
}

impl std::ops::Deref for Runtime {
    type Target = Transport;
    #[inline]
    fn deref(&self) -> &Transport {
        &self.transport
    }
}

/// Start-up data each PE sends to every other PE.
struct PeerInfo {
    base: u64,
    len: u64,
    statics_sig: u64,
    /// Equal for exactly the PEs on one node (from the launcher or PMIx).
    node: u64,
    /// The process id, and the descriptor of its data segment's memfd (`u32::MAX`: none).
    pid: u32,
    data_fd: u32,
    /// The data segment's base and length (0 and 0: none).
    data_base: u64,
    data_len: u64,
    worker_addr: Vec<u8>,
    rkey: Vec<u8>,
    /// The packed key of the data segment (empty: none).
    data_rkey: Vec<u8>,
    /// The team segment's memfd descriptor and base.
    team_fd: u32,
    team_base: u64,
    /// The packed key of the team segment.
    team_rkey: Vec<u8>,
}

const BLOB_MAGIC: u32 = 0x5348_4d34; // "SHM4"

impl PeerInfo {
    fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(48 + self.worker_addr.len() + self.rkey.len());
        v.extend_from_slice(&BLOB_MAGIC.to_le_bytes());
        v.extend_from_slice(&self.base.to_le_bytes());
        v.extend_from_slice(&self.len.to_le_bytes());
        v.extend_from_slice(&self.statics_sig.to_le_bytes());
        v.extend_from_slice(&self.node.to_le_bytes());
        v.extend_from_slice(&self.pid.to_le_bytes());
        v.extend_from_slice(&self.data_fd.to_le_bytes());
        v.extend_from_slice(&self.data_base.to_le_bytes());
        v.extend_from_slice(&self.data_len.to_le_bytes());
        v.extend_from_slice(&self.team_fd.to_le_bytes());
        v.extend_from_slice(&self.team_base.to_le_bytes());
        for part in [
            &self.worker_addr,
            &self.rkey,
            &self.data_rkey,
            &self.team_rkey,
        ] {
            v.extend_from_slice(&(part.len() as u32).to_le_bytes());
            v.extend_from_slice(part);
        }
        v
    }

    fn decode(pe: usize, mut b: &[u8]) -> Result<PeerInfo> {
        let bad = || Error::Bootstrap(format!("malformed start-up record from PE {pe}"));
        let mut take = |n: usize| -> Result<&[u8]> {
            if b.len() < n {
                return Err(bad());
            }
            let (head, tail) = b.split_at(n);
            b = tail;
            Ok(head)
        };
        let u32_of = |s: &[u8]| u32::from_le_bytes(s.try_into().unwrap_or_default());
        let u64_of = |s: &[u8]| u64::from_le_bytes(s.try_into().unwrap_or_default());
        if u32_of(take(4)?) != BLOB_MAGIC {
            return Err(bad());
        }
        let base = u64_of(take(8)?);
        let len = u64_of(take(8)?);
        let statics_sig = u64_of(take(8)?);
        let node = u64_of(take(8)?);
        let pid = u32_of(take(4)?);
        let data_fd = u32_of(take(4)?);
        let data_base = u64_of(take(8)?);
        let data_len = u64_of(take(8)?);
        let team_fd = u32_of(take(4)?);
        let team_base = u64_of(take(8)?);
        let n = u32_of(take(4)?) as usize;
        let worker_addr = take(n)?.to_vec();
        let n = u32_of(take(4)?) as usize;
        let rkey = take(n)?.to_vec();
        let n = u32_of(take(4)?) as usize;
        let data_rkey = take(n)?.to_vec();
        let n = u32_of(take(4)?) as usize;
        let team_rkey = take(n)?.to_vec();
        Ok(PeerInfo {
            base,
            len,
            statics_sig,
            node,
            pid,
            data_fd,
            data_base,
            data_len,
            worker_addr,
            rkey,
            data_rkey,
            team_fd,
            team_base,
            team_rkey,
        })
    }
}

/// Claims the process-wide runtime, sets it up and publishes it.
pub(crate) fn init() -> Result<&'static Runtime> {
    if let Err(state) =
        STATE.compare_exchange(UNINIT, STARTING, Ordering::AcqRel, Ordering::Acquire)
    {
        return Err(if state == FINALIZED {
            Error::Finalized
        } else {
            Error::AlreadyInitialized
        });
    }
    match start() {
        Ok(rt) => {
            if RUNTIME.set(rt).is_err() {
                // Only one `init` gets past STATE, and a failed one leaves RUNTIME unset.
                unreachable!("the runtime was published twice");
            }
            let rt = runtime();
            STATE.store(LIVE, Ordering::Release);
            // Waits on a context's worker must keep the main worker moving too (see the hook).
            shmem_ucx::set_wait_hook(Some(progress_other_workers));
            Ok(rt)
        }
        Err(e) => {
            STATE.store(UNINIT, Ordering::Release);
            Err(e)
        }
    }
}

/// The wait hook: one round of progress on this process's workers other than `waiting_on`
/// (which the wait progresses itself), if any peer goes through UCX.
fn progress_other_workers(waiting_on: shmem_ucx::sys::ucp_worker_h) {
    if let Some(rt) = RUNTIME.get() {
        rt.progress_except(waiting_on);
    }
}

/// Finalizes: quiet, barrier, close the endpoints of peers reached through UCX, leave the job.
/// Called once, by `World::drop`. Memory stays mapped until the process exits, so handles that
/// outlive the `World` panic instead of touching freed memory.
pub(crate) fn finalize() {
    let Some(rt) = RUNTIME.get() else {
        return;
    };
    if STATE.swap(FINALIZED, Ordering::AcqRel) != LIVE {
        return;
    }
    shmem_ucx::set_wait_hook(None);
    if std::thread::panicking() {
        // This PE is going down; the launcher ends the job. Collective steps could hang and
        // tearing UCX down is pointless.
        rt.transport.abandon();
        return;
    }
    // A PE still waiting in a collective that this one will never join says so (naming this
    // PE) instead of hanging the job.
    sync::announce_finalize(rt);
    sync::barrier_all(rt);
    // No PE touches another's memory any more: close the endpoints.
    rt.transport.close();
    let worker = rt.progress.worker();
    let bootstrap = rt
        .bootstrap
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    if let Some(mut bootstrap) = bootstrap {
        // Keep progressing until every PE has closed its endpoints, then say goodbye.
        let _ = bootstrap.barrier(&mut || {
            worker.progress();
        });
        let _ = bootstrap.finalize();
        // Dropping it ends PMIx (PMIx_Finalize) where PMIx started this PE.
    }
    rt.progress.stop_thread();
}

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
/// endpoints to every PE.
fn start() -> Result<Runtime> {
    // First, before anything starts threads: nothing may write the segment while it moves.
    let data = if crate::dataseg::wanted() {
        crate::dataseg::move_to_shared_memory()?
    } else {
        None
    };
    let mut bootstrap = Bootstrap::from_env()?;
    match start_on(&mut bootstrap, data) {
        Ok(rt) => {
            *rt.bootstrap.lock().unwrap_or_else(|p| p.into_inner()) = Some(bootstrap);
            Ok(rt)
        }
        Err(e) => {
            // This PE leaves the job with an error that its program sees: say goodbye, so that
            // the launcher does not take its exit for one without finalizing (and tells PEs
            // that wait for it at the rendezvous that it left).
            let _ = bootstrap.finalize();
            Err(e)
        }
    }
}

/// [`start`] once the launcher connection is up: the runtime, without the connection (the
/// caller puts it in).
fn start_on(
    bootstrap: &mut Bootstrap,
    data: Option<crate::dataseg::DataSegment>,
) -> Result<Runtime> {
    let my_pe = bootstrap.my_pe();
    let n_pes = bootstrap.n_pes();

    let (statics_len, statics_sig) = statics::layout();
    // Offsets 0..SEGMENT name the team segment (a memfd of its own, below), then come the
    // statics and the user heap: the heap mapping's first SEGMENT bytes stay unused (and
    // untouched: no memory behind them).
    let reserved = crate::team::SEGMENT;
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
            ("ALLOC_PRIO", crate::private_shm::ALLOC_PRIO),
        ],
        ..ContextParams::default()
    })?;
    let worker = context.create_worker(ThreadMode::Multi)?;
    let mem = map_heap(&context, total)?;
    let base = mem.address();
    // Before any peer learns where this PE's memory and message queues are.
    crate::private_shm::restrict_sysv_segments();
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
    let team_len = crate::team::SEGMENT;
    let (team_fd, team) = crate::private_shm::create(c"shmem-team-segment", team_len)
        .map_err(|e| Error::Bootstrap(format!("creating the team segment: {e}")))?;
    // SAFETY: the segment stays mapped for the process's life (it is never unmapped).
    let team_mem = unsafe { context.mem_map_register(team_len, team)? };
    // Before any progress with peers connected: a peer's first strided put may come at once.
    crate::strided::register(
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
            crate::private_shm::map_peer(info.pid, info.team_fd, team_len)
                .unwrap_or(ptr::null_mut())
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
            match crate::private_shm::map_peer(info.pid, info.data_fd, data_range.1) {
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
        crate::progress::backoff(&mut spins);
    }
    bootstrap.barrier(&mut || {
        worker.progress();
    })?;
    // Every endpoint is wired up: from here on a PE that computes without calling the library
    // still serves the operations that need its progress (atomics over tcp), if asked to.
    let transport = Transport::new(TransportParts {
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
    })?;
    Ok(Runtime {
        transport,
        sync: SyncState::default(),
        team_slots: crate::team::Slots::default(),
        allocator: Mutex::new(Allocator::new(layout.user_len)),
        bootstrap: Mutex::new(None),
    })
}

impl Runtime {
    /// Runs `f` with the launcher connection (locked; a poisoned lock is taken over); `None`
    /// after finalize.
    pub(crate) fn with_bootstrap<R>(&self, f: impl FnOnce(&mut Bootstrap) -> R) -> Option<R> {
        let mut guard = self.bootstrap.lock().unwrap_or_else(|p| p.into_inner());
        guard.as_mut().map(f)
    }
}

#[cfg(test)]
mod tests {
    use super::PeerInfo;

    fn sample() -> PeerInfo {
        PeerInfo {
            base: 0x7f00_0000_1000,
            len: 1 << 28,
            statics_sig: 0xfeed,
            node: 3,
            pid: 4242,
            data_fd: 7,
            data_base: 0x40_0000,
            data_len: 8192,
            worker_addr: vec![1, 2, 3, 4, 5],
            rkey: vec![9; 40],
            data_rkey: vec![3; 24],
            team_fd: 8,
            team_base: 0x7f00_8000_0000,
            team_rkey: vec![5; 32],
        }
    }

    #[test]
    fn start_up_record_round_trips() {
        let bytes = sample().encode();
        let back = PeerInfo::decode(1, &bytes).expect("decodes");
        let want = sample();
        assert_eq!(
            (back.base, back.len, back.statics_sig, back.node),
            (want.base, want.len, want.statics_sig, want.node)
        );
        assert_eq!(back.worker_addr, want.worker_addr);
        assert_eq!(back.rkey, want.rkey);
        assert_eq!(
            (back.pid, back.data_fd, back.data_base, back.data_len),
            (want.pid, want.data_fd, want.data_base, want.data_len)
        );
        assert_eq!(back.data_rkey, want.data_rkey);
        assert_eq!(
            (back.team_fd, back.team_base, &back.team_rkey),
            (want.team_fd, want.team_base, &want.team_rkey)
        );
    }

    #[test]
    fn truncated_or_foreign_records_are_errors_naming_the_pe() {
        let bytes = sample().encode();
        for cut in 0..bytes.len() {
            let e = PeerInfo::decode(7, &bytes[..cut])
                .err()
                .expect("truncated record accepted");
            assert!(e.to_string().contains("PE 7"), "{e}");
        }
        let mut bad = bytes.clone();
        bad[0] ^= 1;
        assert!(PeerInfo::decode(2, &bad).is_err(), "wrong magic accepted");
        // A length field that claims more bytes than the record has.
        let mut long = bytes;
        let at = 4 + 4 * 8 + 4 + 4 + 8 + 8 + 4 + 8;
        long[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(
            PeerInfo::decode(2, &long).is_err(),
            "oversized length accepted"
        );
    }
}
