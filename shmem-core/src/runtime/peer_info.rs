//! The start-up record each PE sends to every other PE at the rendezvous: where its heap,
//! data segment and team segment lie, how UCX reaches them, and what must agree across PEs.
//! A record from a peer is outside input: [`PeerInfo::decode`] checks every length.
//!
//! Part of the runtime layer; uses `error` only. Pure (no FFI), so its tests also run under
//! Miri.

use crate::error::{Error, Result};

/// Start-up data each PE sends to every other PE.
pub(crate) struct PeerInfo {
    pub(crate) base: u64,
    pub(crate) len: u64,
    pub(crate) statics_sig: u64,
    /// Equal for exactly the PEs on one node (from the launcher or PMIx).
    pub(crate) node: u64,
    /// The process id, and the descriptor of its data segment's memfd (`u32::MAX`: none).
    pub(crate) pid: u32,
    pub(crate) data_fd: u32,
    /// The data segment's base and length (0 and 0: none).
    pub(crate) data_base: u64,
    pub(crate) data_len: u64,
    pub(crate) worker_addr: Vec<u8>,
    pub(crate) rkey: Vec<u8>,
    /// The packed key of the data segment (empty: none).
    pub(crate) data_rkey: Vec<u8>,
    /// The team segment's memfd descriptor and base.
    pub(crate) team_fd: u32,
    pub(crate) team_base: u64,
    /// The packed key of the team segment.
    pub(crate) team_rkey: Vec<u8>,
    /// The heap's memfd descriptor (peers of the node map it through `/proc/PID/fd`).
    pub(crate) heap_fd: u32,
    /// Under PMIx, on the node's lowest rank: the descriptor of the memfd that will hold the
    /// node's start-up table (`shmem_launch::table::Pending`); `u32::MAX` otherwise.
    pub(crate) table_fd: u32,
}

const BLOB_MAGIC: u32 = 0x5348_4d36; // "SHM6"

impl PeerInfo {
    pub(crate) fn encode(&self) -> Vec<u8> {
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
        v.extend_from_slice(&self.heap_fd.to_le_bytes());
        v.extend_from_slice(&self.table_fd.to_le_bytes());
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

    /// Decodes a whole record; the error names `pe`.
    pub(crate) fn decode(pe: usize, b: &[u8]) -> Result<PeerInfo> {
        Self::parse(pe, b, true).map(|(info, _)| info)
    }

    /// Decodes a record's fixed fields and checks the rest, leaving out the worker address and
    /// the keys (empty here): what start-up needs of every peer. Also says whether the record
    /// has a data-segment key.
    pub(crate) fn decode_head(pe: usize, b: &[u8]) -> Result<(PeerInfo, bool)> {
        Self::parse(pe, b, false)
    }

    fn parse(pe: usize, mut b: &[u8], keys: bool) -> Result<(PeerInfo, bool)> {
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
        let heap_fd = u32_of(take(4)?);
        let table_fd = u32_of(take(4)?);
        let mut part = || -> Result<(Vec<u8>, usize)> {
            let n = u32_of(take(4)?) as usize;
            let bytes = take(n)?;
            Ok((if keys { bytes.to_vec() } else { Vec::new() }, n))
        };
        let (worker_addr, _) = part()?;
        let (rkey, _) = part()?;
        let (data_rkey, data_rkey_len) = part()?;
        let (team_rkey, _) = part()?;
        let info = PeerInfo {
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
            heap_fd,
            table_fd,
        };
        Ok((info, data_rkey_len > 0))
    }
}

/// [`PeerInfo::decode`] for the fuzz targets: the decoded record encoded again, or the error's
/// text. Not part of the API.
pub(crate) fn fuzz_decode(pe: usize, bytes: &[u8]) -> std::result::Result<Vec<u8>, String> {
    PeerInfo::decode(pe, bytes)
        .map(|info| info.encode())
        .map_err(|e| e.to_string())
}

/// [`PeerInfo::decode_head`] for the fuzz targets: the decoded head encoded again (without its
/// address and keys) and whether the record has a data-segment key, or the error's text.
pub(crate) fn fuzz_decode_head(
    pe: usize,
    bytes: &[u8],
) -> std::result::Result<(Vec<u8>, bool), String> {
    PeerInfo::decode_head(pe, bytes)
        .map(|(info, data_rkey)| (info.encode(), data_rkey))
        .map_err(|e| e.to_string())
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
            heap_fd: 9,
            table_fd: 11,
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
        assert_eq!((back.heap_fd, back.table_fd), (want.heap_fd, want.table_fd));
        let (head, has_data_rkey) = PeerInfo::decode_head(1, &bytes).expect("decodes");
        assert!(has_data_rkey && head.worker_addr.is_empty() && head.rkey.is_empty());
        assert_eq!(
            (head.base, head.heap_fd, head.team_base),
            (want.base, 9, want.team_base)
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
            assert!(PeerInfo::decode_head(7, &bytes[..cut]).is_err());
        }
        let mut bad = bytes.clone();
        bad[0] ^= 1;
        assert!(PeerInfo::decode(2, &bad).is_err(), "wrong magic accepted");
        // A length field that claims more bytes than the record has.
        let mut long = bytes;
        let at = 4 + 4 * 8 + 4 + 4 + 8 + 8 + 4 + 8 + 4 + 4;
        long[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(
            PeerInfo::decode(2, &long).is_err(),
            "oversized length accepted"
        );
    }
}
