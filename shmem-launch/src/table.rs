//! The result of an allgather: every PE's record, indexed by PE, held either by this process or
//! in a node-shared, sealed memfd that one PE of the node wrote for all of them.
//!
//! # Why a shared table
//!
//! The rendezvous table grows with the job (a few hundred bytes per PE). Sent to every PE it
//! costs the launcher n x table bytes (quadratic in the job) and every PE a copy of its own.
//! With [`Client::allgather_shared`](crate::client::Client::allgather_shared) the launcher sends
//! the table to one PE of each node (the *leader*, told by [`Msg::Lead`](crate::wire::Msg::Lead)),
//! which checks every record's tag, writes the table into a memfd, seals it against any change
//! (`F_SEAL_WRITE`, `F_SEAL_SHRINK`, `F_SEAL_GROW`) and says where it is
//! ([`Msg::Published`](crate::wire::Msg::Published)); the launcher points the node's other PEs
//! at it ([`Msg::TableAt`](crate::wire::Msg::TableAt)). They open it through `/proc/PID/fd/N`
//! (which the kernel allows only to processes of the same user that may inspect the leader),
//! check the seals and the size, map it read-only and check every record's tag themselves
//! before they use any of it. If anything fails, a PE asks for the table itself
//! ([`Msg::Fetch`](crate::wire::Msg::Fetch)). The launcher then sends hosts x table bytes, and a
//! node holds the table once, in memory the page cache shares among its PEs.
//!
//! # The memfd's bytes
//!
//! `b"SHT1"`, the job id (`u64`), the collective's epoch (`u64`), the number of records `n`
//! (`u32`), then `n` records, each a `u32` length and that many bytes: the PE's blob followed by
//! its 32-byte tag. Integers are little-endian. [`parse`] checks every length before it reads.
//!
//! Under PMIx the records carry no tags (PMIx vouches for them) and the leader is the node's
//! lowest rank: it makes a memfd ([`Pending`]) before the exchange, names its descriptor in its
//! own record, and fills and seals it after; the node's other PEs wait for the seals
//! ([`Table::wait_shared`]). That table starts with `b"SHT0"` and a job id of 0, and its
//! records are the blobs alone ([`parse_untagged`]).

use std::ffi::CString;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::auth::{self, MAC_BYTES, Secret};
use crate::wire::MAX_TABLE;

/// The first bytes of a shared table whose records carry tags.
const MAGIC: &[u8; 4] = b"SHT1";
/// The first bytes of a shared table whose records carry none (the PMIx path: PMIx, not the
/// job secret, vouches for the records).
const MAGIC_UNTAGGED: &[u8; 4] = b"SHT0";
/// Bytes before the first record.
const HEADER: usize = 4 + 8 + 8 + 4;
/// The seals a shared table must carry: nothing can change its bytes or its size.
const SEALS: libc::c_int = libc::F_SEAL_WRITE | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW;

/// Every PE's record of one allgather, indexed by PE, each checked against its PE's tag.
///
/// ```
/// use shmem_launch::table::Table;
///
/// let t = Table::from_records(vec![b"PE 0".to_vec(), b"PE 1".to_vec()]);
/// assert_eq!((t.len(), t.record(1), t.is_shared()), (2, &b"PE 1"[..], false));
/// ```
#[derive(Debug)]
pub struct Table {
    store: Store,
}

#[derive(Debug)]
enum Store {
    /// Records held by this process.
    Own(Vec<Vec<u8>>),
    /// A sealed memfd mapped read-only; `index` gives each record's blob (tag excluded).
    Shared {
        map: Mapping,
        index: Vec<(u32, u32)>,
    },
}

/// A read-only private mapping of a sealed memfd, unmapped on drop.
#[derive(Debug)]
struct Mapping {
    ptr: *const u8,
    len: usize,
    /// The descriptor: peers of the node open the table through it while this process lives.
    fd: OwnedFd,
}

// SAFETY: the mapping is read-only and its memfd is sealed against writes, shrinking and
// growing (checked before it was mapped), so its bytes never change and every access is a
// plain read; the pointer is only read through `&self`.
unsafe impl Send for Mapping {}
// SAFETY: as for Send.
unsafe impl Sync for Mapping {}

impl Mapping {
    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes for this value's life (unmapped in Drop),
        // and the sealed memfd behind them can change neither contents nor size, so no write
        // can happen while the slice is borrowed.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: our own mapping of `len` bytes, unmapped once; no slice of it outlives
        // `&self`.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

impl Table {
    /// A table of records held by this process (already checked, tags removed).
    pub fn from_records(records: Vec<Vec<u8>>) -> Table {
        Table {
            store: Store::Own(records),
        }
    }

    /// The number of records (the number of PEs).
    pub fn len(&self) -> usize {
        match &self.store {
            Store::Own(r) => r.len(),
            Store::Shared { index, .. } => index.len(),
        }
    }

    /// True when the table has no record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// PE `pe`'s record. Panics if `pe >= len()`.
    pub fn record(&self, pe: usize) -> &[u8] {
        match &self.store {
            Store::Own(r) => &r[pe],
            Store::Shared { map, index } => {
                let (at, len) = index[pe];
                &map.bytes()[at as usize..at as usize + len as usize]
            }
        }
    }

    /// True when the records lie in a node-shared memfd rather than in this process's memory.
    pub fn is_shared(&self) -> bool {
        matches!(self.store, Store::Shared { .. })
    }

    /// The records as vectors of their own.
    pub fn to_vecs(&self) -> Vec<Vec<u8>> {
        (0..self.len()).map(|pe| self.record(pe).to_vec()).collect()
    }

    /// Writes `records` (each a blob followed by its tag, all already checked) into a new
    /// sealed memfd and maps it: the leader's side.
    pub(crate) fn publish(job_id: u64, epoch: u64, records: &[Vec<u8>]) -> io::Result<Table> {
        let bytes = layout(MAGIC, job_id, epoch, records);
        let index = parse(&bytes, records.len(), job_id, epoch, &mut |_, _, _| true)
            .map_err(io::Error::other)?;
        let file = new_memfd()?;
        (&file).write_all(&bytes)?;
        seal(&file)?;
        let map = map_sealed(OwnedFd::from(file), bytes.len())?;
        Ok(Table {
            store: Store::Shared { map, index },
        })
    }

    /// Waits (calling `progress`, for at most `limit`) until the table that process `pid`
    /// reserved as its descriptor `fd` with [`Pending`] is sealed, then checks it (`npes`
    /// untagged records of collective `epoch`) and maps it: the PMIx path's other PEs. `None`
    /// when the leader sealed it empty (it could not fill it); the error says what failed.
    pub fn wait_shared(
        (pid, fd): (u32, u32),
        npes: usize,
        epoch: u64,
        limit: std::time::Duration,
        progress: &mut dyn FnMut(),
    ) -> Result<Option<Table>, String> {
        let path = format!("/proc/{pid}/fd/{fd}");
        let file = File::open(&path).map_err(|e| format!("cannot open {path}: {e}"))?;
        let start = std::time::Instant::now();
        let mut rounds = 0u32;
        loop {
            // SAFETY: fcntl on our own descriptor.
            let seals = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GET_SEALS) };
            if seals < 0 {
                return Err(format!("{path} is not a memfd"));
            }
            if seals & SEALS == SEALS {
                break;
            }
            if start.elapsed() > limit {
                return Err(format!("{path} was not sealed within {limit:?}"));
            }
            progress();
            rounds += 1;
            if rounds > 100 {
                std::thread::sleep(std::time::Duration::from_micros(200));
            } else {
                std::thread::yield_now();
            }
        }
        let size = file.metadata().map_err(|e| format!("{path}: {e}"))?.len();
        if size == 0 {
            return Ok(None);
        }
        let len = usize::try_from(size)
            .ok()
            .filter(|&l| (HEADER..=HEADER + 4 * npes + MAX_TABLE).contains(&l))
            .ok_or_else(|| format!("{path}: a table of {size} bytes for {npes} PEs"))?;
        let map =
            map_sealed(OwnedFd::from(file), len).map_err(|e| format!("mapping {path}: {e}"))?;
        let index = parse_untagged(map.bytes(), npes, epoch)?;
        Ok(Some(Table {
            store: Store::Shared { map, index },
        }))
    }

    /// The descriptor and size of the memfd behind a shared table, for
    /// [`Msg::Published`](crate::wire::Msg::Published).
    pub(crate) fn memfd(&self) -> Option<(u32, u64)> {
        match &self.store {
            Store::Shared { map, .. } => Some((map.fd.as_raw_fd() as u32, map.len as u64)),
            Store::Own(_) => None,
        }
    }

    /// Opens the table that PE process `pid` published as its descriptor `fd` of `len` bytes,
    /// checks it (seals, size, layout, `npes` records of job `job_id` and collective `epoch`,
    /// every tag with `secret`) and maps it: the other PEs' side. The error says what failed.
    pub(crate) fn open(
        pid: u32,
        fd: u32,
        len: u64,
        npes: usize,
        (secret, job_id, epoch): (&Secret, u64, u64),
    ) -> Result<Table, String> {
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| (HEADER..=HEADER + 4 * npes + MAX_TABLE).contains(&l))
            .ok_or_else(|| format!("a table of {len} bytes for {npes} PEs"))?;
        let path = format!("/proc/{pid}/fd/{fd}");
        let file = File::open(&path).map_err(|e| format!("cannot open {path}: {e}"))?;
        // SAFETY: fcntl on our own descriptor.
        let seals = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GET_SEALS) };
        if seals < 0 || seals & SEALS != SEALS {
            return Err(format!("{path} is not a sealed memfd (seals {seals:#x})"));
        }
        let size = file.metadata().map_err(|e| format!("{path}: {e}"))?.len();
        if size != len as u64 {
            return Err(format!("{path} has {size} bytes, the launcher said {len}"));
        }
        let map =
            map_sealed(OwnedFd::from(file), len).map_err(|e| format!("mapping {path}: {e}"))?;
        let index = parse(map.bytes(), npes, job_id, epoch, &mut |pe, blob, tag| {
            auth::record_key(secret, pe as u32).verify(job_id, epoch, blob, tag)
        })?;
        Ok(Table {
            store: Store::Shared { map, index },
        })
    }
}

/// Finds, in a leader's own record, the pid and descriptor of the [`Pending`] memfd that will
/// hold its node's table, if the record names one (the record's layout is the caller's).
pub type Locate<'a> = &'a dyn Fn(&[u8]) -> Option<(u32, u32)>;

/// A memfd that a PE makes before an exchange and fills with the node's table after it, so
/// that the node's other PEs, who learn its descriptor from the PE's own record, can wait for
/// it ([`Table::wait_shared`]). Dropped unfilled, it is sealed empty, which tells them to
/// fetch the records themselves.
#[derive(Debug)]
pub struct Pending {
    file: Option<File>,
}

impl Pending {
    /// Makes the (empty, unsealed) memfd.
    pub fn new() -> io::Result<Pending> {
        Ok(Pending {
            file: Some(new_memfd()?),
        })
    }

    /// Its descriptor in this process, for the node's other PEs.
    pub fn fd(&self) -> u32 {
        self.file
            .as_ref()
            .map_or(u32::MAX, |f| f.as_raw_fd() as u32)
    }

    /// Writes `records` (untagged) of collective `epoch` into the memfd, seals it and maps it.
    /// On an error it is sealed empty (see [`Pending`]).
    pub fn fill(mut self, epoch: u64, records: &[Vec<u8>]) -> io::Result<Table> {
        let bytes = layout(MAGIC_UNTAGGED, 0, epoch, records);
        let index = parse_untagged(&bytes, records.len(), epoch).map_err(io::Error::other)?;
        let file = self.file.as_ref().ok_or(io::ErrorKind::NotFound)?;
        let mut writer: &File = file;
        writer.write_all(&bytes)?;
        seal(file)?;
        let file = self.file.take().ok_or(io::ErrorKind::NotFound)?;
        let map = map_sealed(OwnedFd::from(file), bytes.len())?;
        Ok(Table {
            store: Store::Shared { map, index },
        })
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(f) = self.file.take() {
            // Nothing more can be done here: a PE that finds it unsealed when the descriptor
            // is gone cannot open it and fetches the records itself.
            let _ = f.set_len(0);
            let _ = seal(&f);
        }
    }
}

/// The bytes of a table (the layout in the module docs).
fn layout(magic: &[u8; 4], job_id: u64, epoch: u64, records: &[Vec<u8>]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER + records.iter().map(|r| 4 + r.len()).sum::<usize>());
    bytes.extend_from_slice(magic);
    bytes.extend_from_slice(&job_id.to_le_bytes());
    bytes.extend_from_slice(&epoch.to_le_bytes());
    bytes.extend_from_slice(&(records.len() as u32).to_le_bytes());
    for r in records {
        bytes.extend_from_slice(&(r.len() as u32).to_le_bytes());
        bytes.extend_from_slice(r);
    }
    bytes
}

/// A new memfd that can be sealed.
fn new_memfd() -> io::Result<File> {
    let name = CString::new("shmem-start-up-table").map_err(io::Error::other)?;
    // SAFETY: a valid C string; the returned descriptor is owned below.
    let raw =
        unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor that nothing else owns.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(raw) }))
}

/// Seals `file` against any change of contents or size, and against more seals.
fn seal(file: &File) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own.
    if unsafe {
        libc::fcntl(
            file.as_raw_fd(),
            libc::F_ADD_SEALS,
            SEALS | libc::F_SEAL_SEAL,
        )
    } < 0
    {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Maps `len` bytes of a sealed memfd read-only.
fn map_sealed(fd: OwnedFd, len: usize) -> io::Result<Mapping> {
    // SAFETY: a fresh private read-only mapping of our own descriptor; the kernel picks the
    // address.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len.max(1),
            libc::PROT_READ,
            libc::MAP_PRIVATE,
            fd.as_raw_fd(),
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(Mapping {
        ptr: ptr as *const u8,
        len: len.max(1),
        fd,
    })
}

/// Asked about every record of a table: `verify(pe, blob, tag)` says whether the tag is PE
/// `pe`'s for `blob`.
pub type Verify<'a> = &'a mut dyn FnMut(usize, &[u8], &[u8]) -> bool;

/// Checks the bytes of a shared table (the layout in the module docs) for `npes` records of
/// job `job_id` and collective `epoch`, asks `verify(pe, blob, tag)` about every record, and
/// returns where each blob lies (offset and length, its tag excluded). Every length is checked
/// before it is used; the error says what is wrong.
pub fn parse(
    bytes: &[u8],
    npes: usize,
    job_id: u64,
    epoch: u64,
    verify: Verify<'_>,
) -> Result<Vec<(u32, u32)>, String> {
    parse_with(bytes, (MAGIC, MAC_BYTES), npes, job_id, epoch, verify)
}

/// Like [`parse`] for a table of untagged records (written by [`Pending::fill`]).
pub fn parse_untagged(bytes: &[u8], npes: usize, epoch: u64) -> Result<Vec<(u32, u32)>, String> {
    parse_with(
        bytes,
        (MAGIC_UNTAGGED, 0),
        npes,
        0,
        epoch,
        &mut |_, _, _| true,
    )
}

fn parse_with(
    bytes: &[u8],
    (magic, tag_len): (&[u8; 4], usize),
    npes: usize,
    job_id: u64,
    epoch: u64,
    verify: Verify<'_>,
) -> Result<Vec<(u32, u32)>, String> {
    if bytes.len() > u32::MAX as usize {
        return Err(format!("a table of {} bytes", bytes.len()));
    }
    let header = bytes
        .get(..HEADER)
        .ok_or("a table shorter than its header")?;
    let u64_at = |at: usize| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&header[at..at + 8]);
        u64::from_le_bytes(a)
    };
    if &header[..4] != magic {
        return Err("not a start-up table (wrong magic)".into());
    }
    let (job, ep) = (u64_at(4), u64_at(12));
    if (job, ep) != (job_id, epoch) {
        return Err(format!(
            "a table of job {job:#x}, collective {ep}; expected job {job_id:#x}, collective {epoch}"
        ));
    }
    let n = u32::from_le_bytes([header[20], header[21], header[22], header[23]]) as usize;
    if n != npes {
        return Err(format!("a table of {n} records for {npes} PEs"));
    }
    // Each record takes at least its 4-byte length: do not trust `n` for the allocation (a
    // table that claims a billion records must not make this PE allocate gigabytes first).
    let mut index = Vec::with_capacity(n.min(bytes.len() / 4));
    let mut at = HEADER;
    for pe in 0..n {
        let len = bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or_else(|| format!("the table ends before the record of PE {pe}"))?;
        at += 4;
        let record = bytes
            .get(at..)
            .and_then(|rest| rest.get(..len))
            .filter(|r| r.len() >= tag_len)
            .ok_or_else(|| format!("the record of PE {pe} ({len} bytes) does not fit"))?;
        let (blob, tag) = record.split_at(len - tag_len);
        if !verify(pe, blob, tag) {
            return Err(format!("the record of PE {pe} failed authentication"));
        }
        index.push((at as u32, blob.len() as u32));
        at += len;
    }
    if at != bytes.len() {
        return Err(format!("{} bytes after the last record", bytes.len() - at));
    }
    Ok(index)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(secret: &Secret, n: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|pe| {
                let mut r = format!("record of PE {pe}").into_bytes();
                let tag = auth::record_key(secret, pe as u32).tag(7, 0, &r);
                r.extend_from_slice(&tag);
                r
            })
            .collect()
    }

    #[test]
    fn a_published_table_opens_in_another_process_view_and_checks_every_tag() {
        let secret = Secret::generate().unwrap();
        let recs = records(&secret, 5);
        let t = Table::publish(7, 0, &recs).unwrap();
        assert!(t.is_shared());
        assert_eq!(t.record(3), b"record of PE 3");
        let (fd, len) = t.memfd().unwrap();
        let pid = std::process::id();
        let other = Table::open(pid, fd, len, 5, (&secret, 7, 0)).unwrap();
        assert_eq!(other.to_vecs(), t.to_vecs());
        // Another secret, job, epoch or size: refused, naming what.
        let wrong = Secret::generate().unwrap();
        let e = Table::open(pid, fd, len, 5, (&wrong, 7, 0)).unwrap_err();
        assert!(e.contains("PE 0 failed authentication"), "{e}");
        let e = Table::open(pid, fd, len, 5, (&secret, 8, 0)).unwrap_err();
        assert!(e.contains("job 0x7"), "{e}");
        let e = Table::open(pid, fd, len, 4, (&secret, 7, 0)).unwrap_err();
        assert!(e.contains("5 records for 4 PEs"), "{e}");
        let e = Table::open(pid, fd, len + 1, 5, (&secret, 7, 0)).unwrap_err();
        assert!(e.contains("the launcher said"), "{e}");
        // The sealed memfd cannot be written, even by its owner.
        let path = format!("/proc/{pid}/fd/{fd}");
        let w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        assert!((&w).write(b"x").is_err(), "a sealed table was writable");
    }

    #[test]
    fn a_pending_table_is_waited_for_and_an_abandoned_one_says_so() {
        let pid = std::process::id();
        let recs: Vec<Vec<u8>> = (0..4).map(|pe| vec![pe as u8; 10 + pe]).collect();
        let short = std::time::Duration::from_millis(50);
        // Not sealed yet: the wait ends at its limit, calling progress meanwhile.
        let pending = Pending::new().unwrap();
        let mut calls = 0;
        let e =
            Table::wait_shared((pid, pending.fd()), 4, 3, short, &mut || calls += 1).unwrap_err();
        assert!(e.contains("not sealed within") && calls > 0, "{e}");
        // Filled: the other side sees the same records.
        let fd = pending.fd();
        let mine = pending.fill(3, &recs).unwrap();
        let theirs = Table::wait_shared((pid, fd), 4, 3, short, &mut || {})
            .unwrap()
            .unwrap();
        assert!(theirs.is_shared());
        assert_eq!(
            (mine.to_vecs(), theirs.to_vecs()),
            (recs.clone(), recs.clone())
        );
        // Another epoch or PE count: refused.
        assert!(Table::wait_shared((pid, fd), 4, 4, short, &mut || {}).is_err());
        assert!(Table::wait_shared((pid, fd), 5, 3, short, &mut || {}).is_err());
        // Dropped unfilled: sealed empty, which says "fetch them yourself".
        let pending = Pending::new().unwrap();
        let fd = pending.fd();
        let held = std::fs::File::open(format!("/proc/{pid}/fd/{fd}")).unwrap();
        drop(pending);
        let fd = held.as_raw_fd() as u32;
        assert!(
            Table::wait_shared((pid, fd), 4, 3, short, &mut || {})
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn an_unsealed_file_is_refused() {
        let f = std::fs::File::open("/proc/self/exe").unwrap();
        let e = Table::open(
            std::process::id(),
            f.as_raw_fd() as u32,
            100,
            1,
            (&Secret::generate().unwrap(), 1, 0),
        )
        .unwrap_err();
        assert!(e.contains("not a sealed memfd"), "{e}");
    }

    /// Found by the `startup_table` fuzz target (fuzz/corpus/startup_table/crash-oom-huge-n):
    /// a table whose record count matched a huge job size allocated its index for that count
    /// (8 bytes each: 11 GB there, 34 GB here, which aborts the test) before it found the table
    /// too short.
    #[test]
    fn a_huge_record_count_is_refused_without_allocating_for_it() {
        let n = u32::MAX;
        let mut table = MAGIC.to_vec();
        table.extend_from_slice(&7u64.to_le_bytes());
        table.extend_from_slice(&0u64.to_le_bytes());
        table.extend_from_slice(&n.to_le_bytes());
        table.extend_from_slice(&[0x2e, 0, 0, 0]);
        table.extend_from_slice(&[0x55; 46]);
        let mut yes = |_: usize, _: &[u8], _: &[u8]| true;
        let e = parse(&table, n as usize, 7, 0, &mut yes).unwrap_err();
        assert!(
            e.contains("the table ends before the record of PE 1"),
            "{e}"
        );
    }

    #[test]
    fn parse_checks_every_length() {
        let secret = Secret::generate().unwrap();
        let recs = records(&secret, 3);
        let t = Table::publish(7, 0, &recs).unwrap();
        let Store::Shared { map, .. } = &t.store else {
            unreachable!()
        };
        let good = map.bytes().to_vec();
        let mut yes = |_: usize, _: &[u8], _: &[u8]| true;
        assert!(parse(&good, 3, 7, 0, &mut yes).is_ok());
        for cut in 0..good.len() {
            assert!(
                parse(&good[..cut], 3, 7, 0, &mut yes).is_err(),
                "cut at {cut}"
            );
        }
        let mut long = good.clone();
        long.push(0);
        assert!(
            parse(&long, 3, 7, 0, &mut yes)
                .unwrap_err()
                .contains("1 bytes after")
        );
        let mut huge = good;
        huge[HEADER..HEADER + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(
            parse(&huge, 3, 7, 0, &mut yes)
                .unwrap_err()
                .contains("does not fit")
        );
    }
}
