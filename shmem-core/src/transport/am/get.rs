//! A strided get's slot at the requesting PE: where each element goes, and the checks and
//! writes of the responses (`GET_RESP`) that fill it, each element at most once; and the
//! records of the runs of non-blocking gets, whose slots are such slots. The requests are sent
//! by `send::get` and `runs`; the handler that finds the slot by its token is in `handlers`.

use super::wire::{RESP_WORDS, Refusal, Run};
use std::ptr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A strided get in progress: where each element goes, and how many have been claimed by a
/// response (under the table's lock) and written.
pub(super) struct GetSlot {
    pub(super) from_pe: usize,
    pub(super) size: usize,
    pub(super) dst: Box<[*mut u8]>,
    pub(super) claimed: AtomicUsize,
    pub(super) received: AtomicUsize,
}

// SAFETY: the destination pointers are elements of a buffer the requesting thread borrows
// uniquely until the slot is gone (see `get`); a response writes an element only after
// claiming it under the table's lock, and the requester reads the buffer only after seeing all
// claimed elements written (Acquire on `received`).
unsafe impl Send for GetSlot {}
// SAFETY: as for Send.
unsafe impl Sync for GetSlot {}

impl GetSlot {
    /// Whether a response from `from` of `count` elements of `size` bytes for elements
    /// `first..` with `data_len` data bytes matches this request; the element count if so.
    fn fits(&self, from: u64, size: u64, count: u64, first: u64, data_len: usize) -> Option<usize> {
        let (count, first) = (usize::try_from(count).ok()?, usize::try_from(first).ok()?);
        let ok = self.from_pe as u64 == from
            && self.size as u64 == size
            && count > 0
            && count.checked_mul(self.size) == Some(data_len)
            && first
                .checked_add(count)
                .is_some_and(|end| end <= self.dst.len());
        ok.then_some(count)
    }
}

impl GetSlot {
    /// Whether every element has been written (a response that claimed it is done).
    pub(super) fn landed(&self) -> bool {
        self.received.load(Ordering::Acquire) == self.dst.len()
    }

    /// Claims the elements of a response (`head` from
    /// [`get_resp_header`](super::wire::get_resp_header), `data_len` data bytes) for this slot:
    /// the number of elements, or the refusal when it does not match the request or claims
    /// elements already claimed.
    pub(super) fn claim(
        &self,
        head: [u64; RESP_WORDS],
        data_len: usize,
    ) -> std::result::Result<usize, Refusal> {
        let [from, size, count, token, first] = head;
        let claimed = self.fits(from, size, count, first, data_len).filter(|&n| {
            self.claimed
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| {
                    c.checked_add(n).filter(|&e| e <= self.dst.len())
                })
                .is_ok()
        });
        claimed.ok_or_else(|| Refusal {
            from,
            what: format!(
                "get response of {count} x {size} bytes ({data_len} data bytes) for elements \
                 {first}.. of request {token}, which asked PE {} for {} x {} bytes",
                self.from_pe,
                self.dst.len(),
                self.size
            ),
        })
    }

    /// Writes the `count` claimed elements of a response starting at element `first`.
    ///
    /// # Safety
    /// [`claim`](Self::claim) accepted the response (`first` is its header's), and the
    /// destinations are live until the slot is unregistered.
    pub(super) unsafe fn write(&self, first: u64, data: &[u8], count: usize) {
        let first = first as usize;
        for (k, elem) in data.chunks_exact(self.size).enumerate() {
            // SAFETY: element first + k < dst.len() (checked by `claim`), a `size`-byte element
            // of the requester's buffer, live (caller's contract).
            unsafe { ptr::copy_nonoverlapping(elem.as_ptr(), self.dst[first + k], self.size) };
        }
        self.received.fetch_add(count, Ordering::AcqRel);
    }
}

/// The gets of one run of non-blocking gets (`runs`), not yet sent.
pub(crate) struct Pending {
    pub(super) size: usize,
    pub(super) run: Run,
    pub(super) dst: Vec<*mut u8>,
}

/// A run sent and not yet completed.
pub(super) struct InFlight {
    pub(super) token: u64,
    pub(super) pe: usize,
    pub(super) slot: Arc<GetSlot>,
}

/// The runs of this PE: at most one pending per target PE, and those in flight.
#[derive(Default)]
pub(super) struct RunSet {
    pub(super) pending: Vec<(usize, Pending)>,
    pub(super) in_flight: Vec<InFlight>,
    /// What the runs in flight weigh (`runs::weight`).
    pub(super) bytes: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::am::wire::{MAX_MSG, fits};

    #[test]
    fn get_responses_must_match_their_request() {
        let slot = GetSlot {
            from_pe: 3,
            size: 8,
            dst: vec![ptr::null_mut(); 10].into_boxed_slice(),
            claimed: AtomicUsize::new(0),
            received: AtomicUsize::new(0),
        };
        assert_eq!(slot.fits(3, 8, 4, 6, 32), Some(4));
        assert_eq!(slot.fits(3, 8, 10, 0, 80), Some(10));
        assert_eq!(slot.fits(2, 8, 4, 6, 32), None, "another PE");
        assert_eq!(slot.fits(3, 4, 4, 6, 16), None, "another element size");
        assert_eq!(slot.fits(3, 8, 4, 7, 32), None, "past the destination");
        assert_eq!(slot.fits(3, 8, 4, 6, 33), None, "wrong data length");
        assert_eq!(slot.fits(3, 8, 0, 0, 0), None, "empty");
        assert_eq!(slot.fits(3, 8, 1, u64::MAX, 8), None, "overflowing index");
        assert_eq!(slot.fits(3, 8, u64::MAX, 0, 8), None, "overflowing count");
        assert!(!fits(0) && fits(1) && fits(MAX_MSG) && !fits(MAX_MSG + 1));
    }
}
