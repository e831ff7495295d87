//! Teams (`shmem_team_*`) and contexts (`shmem_ctx_create`, `shmem_team_create_ctx`, ...).
//! Handles are small integers (`SHMEM_TEAM_WORLD` is 1, `SHMEM_TEAM_SHARED` 2,
//! `SHMEM_CTX_DEFAULT` 1, the others counted up from 3); the tables of `state` hold the live ones.

use crate::state::{
    self, CtxEntry, ShmemCtx, ShmemTeam, TEAM_SHARED, TEAM_WORLD, TeamEntry, g, tables,
    team_or_invalid,
};
use shmem_core::prelude::*;
use std::ffi::{c_int, c_long, c_void};

/// C's `shmem_team_config_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ShmemTeamConfig {
    /// `num_contexts`.
    pub num_contexts: c_int,
}

/// `SHMEM_TEAM_NUM_CONTEXTS`.
const TEAM_NUM_CONTEXTS: c_long = 1;
/// `SHMEM_CTX_PRIVATE`.
const CTX_PRIVATE: c_long = 1;
/// `SHMEM_CTX_NOSTORE`.
const CTX_NOSTORE: c_long = 4;

/// An id for a new handle.
fn handle(id: usize) -> *mut c_void {
    std::ptr::without_provenance_mut(id)
}

/// `shmem_team_my_pe`: this PE's number in `team`, or -1 for `SHMEM_TEAM_INVALID`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_team_my_pe(team: ShmemTeam) -> c_int {
    team_or_invalid("shmem_team_my_pe", team).map_or(-1, |t| t.team.my_pe() as c_int)
}

/// `shmem_team_n_pes`: the size of `team`, or -1 for `SHMEM_TEAM_INVALID`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_team_n_pes(team: ShmemTeam) -> c_int {
    team_or_invalid("shmem_team_n_pes", team).map_or(-1, |t| t.team.n_pes() as c_int)
}

/// `shmem_team_get_config`: the configuration `team` was made with.
///
/// # Safety
/// `config` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_team_get_config(
    team: ShmemTeam,
    config_mask: c_long,
    config: *mut ShmemTeamConfig,
) -> c_int {
    let Some(t) = team_or_invalid("shmem_team_get_config", team) else {
        return -1;
    };
    if config_mask & TEAM_NUM_CONTEXTS != 0 && !config.is_null() {
        // SAFETY: per the C contract.
        unsafe { (*config).num_contexts = t.num_contexts };
    }
    0
}

/// `shmem_team_translate_pe`: the number in `dest_team` of `src_team`'s PE `src_pe`, or -1.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_team_translate_pe(
    src_team: ShmemTeam,
    src_pe: c_int,
    dest_team: ShmemTeam,
) -> c_int {
    let op = "shmem_team_translate_pe";
    let (Some(s), Some(d)) = (
        team_or_invalid(op, src_team),
        team_or_invalid(op, dest_team),
    ) else {
        return -1;
    };
    usize::try_from(src_pe)
        .ok()
        .and_then(|p| s.team.translate_pe(p, &d.team))
        .map_or(-1, |p| p as c_int)
}

/// The `num_contexts` of a C configuration and mask.
///
/// # Safety
/// `config` is NULL or readable.
unsafe fn config_of(config: *const ShmemTeamConfig, mask: c_long) -> c_int {
    if mask & TEAM_NUM_CONTEXTS != 0 && !config.is_null() {
        // SAFETY: per this function's contract.
        unsafe { (*config).num_contexts }
    } else {
        0
    }
}

/// Registers a new team; returns its handle.
fn register(team: Team<'static>, num_contexts: c_int) -> ShmemTeam {
    let entry: &'static TeamEntry = Box::leak(Box::new(TeamEntry { team, num_contexts }));
    let mut t = tables();
    let id = t.next_id;
    t.next_id += 1;
    t.teams.insert(id, entry);
    handle(id)
}

/// Writes a team handle to C's out-parameter.
///
/// # Safety
/// `out` is NULL or writable.
unsafe fn set_team(out: *mut ShmemTeam, value: ShmemTeam) {
    if !out.is_null() {
        // SAFETY: per this function's contract.
        unsafe { out.write(value) };
    }
}

/// `shmem_team_split_strided`: the parent's PEs `start, start + stride, ...` (`size` of them)
/// form a new team (collective over the parent). Returns 0, or -1 (with `*new_team` set to
/// `SHMEM_TEAM_INVALID`) when the arguments select PEs outside the parent or no team is left.
///
/// # Safety
/// `config` is NULL or readable; `new_team` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_team_split_strided(
    parent: ShmemTeam,
    start: c_int,
    stride: c_int,
    size: c_int,
    config: *const ShmemTeamConfig,
    config_mask: c_long,
    new_team: *mut ShmemTeam,
) -> c_int {
    let op = "shmem_team_split_strided";
    // SAFETY: per the C contract.
    unsafe { set_team(new_team, std::ptr::null_mut()) };
    let Some(p) = team_or_invalid(op, parent) else {
        return -1;
    };
    // A stride of 0 or below is meaningless for one PE; the core wants a positive one.
    let stride = if size == 1 && stride <= 0 { 1 } else { stride };
    let (Ok(start), Ok(stride), Ok(size)) = (
        usize::try_from(start),
        usize::try_from(stride),
        usize::try_from(size),
    ) else {
        warn!("{op}: start {start}, stride {stride} and size {size} must be >= 0");
        return -1;
    };
    // SAFETY: per the C contract.
    let nc = unsafe { config_of(config, config_mask) };
    let cfg = TeamConfig {
        num_contexts: usize::try_from(nc).unwrap_or(0),
    };
    match p.team.split_strided(start, stride, size, cfg) {
        Ok(Some(t)) => {
            let h = register(t, nc);
            // SAFETY: per the C contract.
            unsafe { set_team(new_team, h) };
            0
        }
        Ok(None) => 0,
        Err(e) => {
            warn!("{op}: {e}");
            -1
        }
    }
}

/// `shmem_team_split_2d`: splits the parent into rows of `xrange` PEs and the columns of that
/// grid (collective over the parent). Returns 0, or -1 with both teams invalid.
///
/// # Safety
/// The configurations are NULL or readable; the team out-parameters are writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn shmem_team_split_2d(
    parent: ShmemTeam,
    xrange: c_int,
    xaxis_config: *const ShmemTeamConfig,
    xaxis_mask: c_long,
    xaxis_team: *mut ShmemTeam,
    yaxis_config: *const ShmemTeamConfig,
    yaxis_mask: c_long,
    yaxis_team: *mut ShmemTeam,
) -> c_int {
    let op = "shmem_team_split_2d";
    // SAFETY: per the C contract.
    unsafe {
        set_team(xaxis_team, std::ptr::null_mut());
        set_team(yaxis_team, std::ptr::null_mut());
    }
    let Some(p) = team_or_invalid(op, parent) else {
        return -1;
    };
    let Ok(xrange) = usize::try_from(xrange) else {
        warn!("{op}: xrange {xrange} must be positive");
        return -1;
    };
    // SAFETY: per the C contract.
    let (xc, yc) = unsafe {
        (
            config_of(xaxis_config, xaxis_mask),
            config_of(yaxis_config, yaxis_mask),
        )
    };
    let cfg = |n: c_int| TeamConfig {
        num_contexts: usize::try_from(n).unwrap_or(0),
    };
    match p.team.split_2d(xrange, cfg(xc), cfg(yc)) {
        Ok((x, y)) => {
            let (hx, hy) = (register(x, xc), register(y, yc));
            // SAFETY: per the C contract.
            unsafe {
                set_team(xaxis_team, hx);
                set_team(yaxis_team, hy);
            }
            0
        }
        Err(e) => {
            warn!("{op}: {e}");
            -1
        }
    }
}

/// `shmem_team_destroy`: destroys a team (collective over it) and the shareable contexts made
/// from it. `SHMEM_TEAM_WORLD`, `SHMEM_TEAM_SHARED` and `SHMEM_TEAM_INVALID` are left alone.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_team_destroy(team: ShmemTeam) {
    let op = "shmem_team_destroy";
    g(op);
    let id = team as usize;
    if id == 0 || id == TEAM_WORLD || id == TEAM_SHARED {
        return;
    }
    let (entry, ctxs) = {
        let mut t = tables();
        let Some(entry) = t.teams.remove(&id) else {
            fatal!("{op}: {team:p} is not a live team (never created, or destroyed)")
        };
        let doomed: Vec<usize> = t
            .ctxs
            .iter()
            .filter(|(_, c)| c.team_id == id && c.options & CTX_PRIVATE == 0)
            .map(|(&k, _)| k)
            .collect();
        let ctxs: Vec<&'static CtxEntry> = doomed.iter().filter_map(|k| t.ctxs.remove(k)).collect();
        (entry, ctxs)
    };
    for c in ctxs {
        // SAFETY: the entry was leaked from a Box by `new_ctx` and just left the table; the C
        // program does not use a context of a team it destroys.
        drop(unsafe { Box::from_raw(std::ptr::from_ref(c).cast_mut()) });
    }
    // SAFETY: the entry was leaked from a Box by `register` and just left the table; the C
    // program does not use a team it destroys. Dropping the team is collective over it, as
    // shmem_team_destroy is.
    drop(unsafe { Box::from_raw(std::ptr::from_ref(entry).cast_mut()) });
}

/// `shmem_team_sync`: waits until every member of `team` has arrived.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_team_sync(team: ShmemTeam) -> c_int {
    match team_or_invalid("shmem_team_sync", team) {
        Some(t) => {
            t.team.sync();
            0
        }
        None => -1,
    }
}

/// `shmem_team_ptr`: the address of team PE `pe`'s copy of `dest` when mapped here, else NULL.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_team_ptr(team: ShmemTeam, dest: *const c_void, pe: c_int) -> *mut c_void {
    let Some(t) = team_or_invalid("shmem_team_ptr", team) else {
        return std::ptr::null_mut();
    };
    match usize::try_from(pe) {
        Ok(p) if p < t.team.n_pes() => crate::setup::peer_ptr(dest, t.team.world_pe(p)),
        _ => std::ptr::null_mut(),
    }
}

/// Creates a context whose PE numbers are those of `team` (`None`: the world).
///
/// # Safety
/// `out` is writable.
unsafe fn new_ctx(
    op: &str,
    team: Option<(usize, &'static TeamEntry)>,
    options: c_long,
    out: *mut ShmemCtx,
) -> c_int {
    let w = g(op).world;
    let opts = CtxOptions {
        nostore: options & CTX_NOSTORE != 0,
    };
    let ctx = match w.ctx_create::<Shared>(opts) {
        Ok(c) => c,
        Err(e) => {
            warn!("{op}: {e}");
            return -1;
        }
    };
    let (team_id, team_pes) = match team {
        None => (TEAM_WORLD, None),
        Some((id, t)) => {
            let pes: Box<[usize]> = (0..t.team.n_pes()).map(|i| t.team.world_pe(i)).collect();
            (id, Some(pes))
        }
    };
    let entry: &'static CtxEntry = Box::leak(Box::new(CtxEntry {
        ctx,
        team_pes,
        team_id,
        options,
    }));
    let id = {
        let mut t = tables();
        let id = t.next_id;
        t.next_id += 1;
        t.ctxs.insert(id, entry);
        id
    };
    if out.is_null() {
        fatal!("{op}: the ctx out-parameter is NULL");
    }
    // SAFETY: per this function's contract.
    unsafe { out.write(handle(id)) };
    0
}

/// `shmem_ctx_create`: a new context on the world team. Returns 0, or nonzero when UCX cannot
/// make one.
///
/// # Safety
/// `ctx` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_ctx_create(options: c_long, ctx: *mut ShmemCtx) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { new_ctx("shmem_ctx_create", None, options, ctx) }
}

/// `shmem_team_create_ctx`: a new context whose PE numbers are `team`'s.
///
/// # Safety
/// `ctx` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_team_create_ctx(
    team: ShmemTeam,
    options: c_long,
    ctx: *mut ShmemCtx,
) -> c_int {
    let op = "shmem_team_create_ctx";
    let Some(t) = team_or_invalid(op, team) else {
        if !ctx.is_null() {
            // SAFETY: per the C contract.
            unsafe { ctx.write(std::ptr::null_mut()) };
        }
        return -1;
    };
    let id = team as usize;
    let team = (id != TEAM_WORLD).then_some((id, t));
    // SAFETY: forwarded contract.
    unsafe { new_ctx(op, team, options, ctx) }
}

/// `shmem_ctx_destroy`: quiets and destroys a context (`SHMEM_CTX_DEFAULT` and
/// `SHMEM_CTX_INVALID` are left alone).
#[unsafe(no_mangle)]
pub extern "C" fn shmem_ctx_destroy(ctx: ShmemCtx) {
    let op = "shmem_ctx_destroy";
    g(op);
    let id = ctx as usize;
    if id == 0 || id == state::CTX_DEFAULT {
        return;
    }
    let entry = tables().ctxs.remove(&id);
    match entry {
        // SAFETY: the entry was leaked from a Box by `new_ctx` and just left the table; the C
        // program does not use a context it destroys.
        Some(c) => drop(unsafe { Box::from_raw(std::ptr::from_ref(c).cast_mut()) }),
        None => fatal!("{op}: {ctx:p} is not a live context (never created, or destroyed)"),
    }
}

/// `shmem_ctx_get_team`: the team a context was made from.
///
/// # Safety
/// `team` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_ctx_get_team(ctx: ShmemCtx, team: *mut ShmemTeam) -> c_int {
    let op = "shmem_ctx_get_team";
    g(op);
    let id = ctx as usize;
    let found = if id == state::CTX_DEFAULT {
        Some(TEAM_WORLD)
    } else {
        tables().ctxs.get(&id).map(|c| c.team_id)
    };
    // SAFETY: per the C contract.
    unsafe { set_team(team, found.map_or(std::ptr::null_mut(), handle)) };
    if found.is_some() { 0 } else { -1 }
}
