//! Framing: the largest frame each side accepts (before and after authentication, tables,
//! control connections), and [`FrameBuf`], which cuts a byte stream into frames within a limit.

use super::Msg;

/// Largest blob a PE may contribute to a collective, its tag included. A real record is a few
/// hundred bytes to a few KiB: shmem-core's start-up record is a 60-byte header, the UCX worker
/// address (about 0.1-1 KiB over TCP and shared memory, a few KiB with several InfiniBand
/// devices) and two packed rkeys (tens to hundreds of bytes each), plus the 32-byte tag; 1 MiB
/// leaves a margin of more than a hundred times.
pub const MAX_RECORD: usize = 1 << 20;
/// Largest frame the launcher accepts from an authenticated PE: one collective with the largest
/// record (header: tag, epoch, kind, length).
pub const MAX_FRAME: usize = MAX_RECORD + 64;
/// Largest frame either side accepts before the connection is authenticated (a challenge or a
/// hello: under 150 bytes).
pub const MAX_HANDSHAKE_FRAME: usize = 256;
/// Largest frame a PE accepts on its control connection (heartbeats, a welcome, an abort with
/// its reason).
pub const MAX_CONTROL_FRAME: usize = 64 * 1024;
/// Largest table the launcher sends: the sum of one collective's records. A collective whose
/// records add up to more fails with an error for every PE.
pub const MAX_TABLE: usize = 256 << 20;

/// Largest [`Msg::Table`] frame a PE of an `npes`-PE job accepts (also bounds [`Msg::Error`]).
pub fn max_table_frame(npes: usize) -> usize {
    let framing = 64usize.saturating_add(npes.saturating_mul(4));
    framing.saturating_add(npes.saturating_mul(MAX_RECORD).min(MAX_TABLE))
}

/// Accumulates bytes from a nonblocking stream and cuts them into frames, refusing frames
/// longer than its limit (a bad length is an error as soon as the length prefix arrives, and
/// [`fill_from`](Self::fill_from) never buffers more than one frame's worth).
///
/// ```
/// use shmem_launch::wire::{FrameBuf, Msg};
///
/// let mut frames = FrameBuf::default();
/// frames.extend(&Msg::Heartbeat.encode());
/// frames.extend(&Msg::GlobalExit { status: 3 }.encode()[..6]); // part of a frame
/// assert_eq!(frames.next_msg()?, Some(Msg::Heartbeat));
/// assert_eq!(frames.next_msg()?, None);
/// assert_eq!(frames.buffered(), 6);
///
/// let mut small = FrameBuf::with_limit(16);
/// small.extend(&1000u32.to_le_bytes());
/// assert!(small.next_msg().is_err());
/// # Ok::<(), String>(())
/// ```
#[derive(Debug)]
pub struct FrameBuf {
    buf: Vec<u8>,
    limit: usize,
}

impl Default for FrameBuf {
    /// A buffer for frames of up to [`MAX_FRAME`] bytes.
    fn default() -> Self {
        FrameBuf::with_limit(MAX_FRAME)
    }
}

impl FrameBuf {
    /// A buffer for frames of up to `limit` bytes (length prefix not counted).
    pub fn with_limit(limit: usize) -> FrameBuf {
        FrameBuf {
            buf: Vec::new(),
            limit,
        }
    }

    /// Changes the largest frame accepted from now on (e.g. once a connection is authenticated).
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
    }

    /// The largest frame accepted.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Appends received bytes.
    pub fn extend(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Appends what a nonblocking `stream` holds now, up to one frame's worth beyond what is
    /// buffered (the rest stays in the socket for the next call); `Ok(false)` at the end of the
    /// stream, `Ok(true)` otherwise.
    pub fn fill_from(&mut self, stream: &mut impl std::io::Read) -> std::io::Result<bool> {
        let mut chunk = [0u8; 16 * 1024];
        let most = self.limit.saturating_add(4);
        while self.buf.len() < most {
            let room = (most - self.buf.len()).min(chunk.len());
            match stream.read(&mut chunk[..room]) {
                Ok(0) => return Ok(false),
                Ok(n) => self.extend(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(true),
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Takes the next complete frame out of the buffer, if there is one. A frame length of 0 or
    /// over the limit is an error as soon as its prefix is buffered.
    pub fn next_msg(&mut self) -> Result<Option<Msg>, String> {
        let Some(len) = self.complete_frame()? else {
            return Ok(None);
        };
        let msg = Msg::decode(&self.buf[4..4 + len]);
        self.buf.drain(..4 + len);
        msg.map(Some)
    }

    /// Takes the next complete frame out of the buffer undecoded, its length prefix included
    /// (for a relay that passes frames on); the same checks of the length as
    /// [`next_msg`](Self::next_msg).
    pub fn next_frame(&mut self) -> Result<Option<Vec<u8>>, String> {
        let Some(len) = self.complete_frame()? else {
            return Ok(None);
        };
        Ok(Some(self.buf.drain(..4 + len).collect()))
    }

    /// The payload length of the first frame when all of it is buffered (`None` while it is
    /// not); a length of 0 or over the limit is an error as soon as its prefix is buffered.
    fn complete_frame(&self) -> Result<Option<usize>, String> {
        if self.buf.len() < 4 {
            return Ok(None);
        }
        let len = u32::from_le_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
        if len == 0 || len > self.limit {
            return Err(format!(
                "bad frame length {len} (the limit here is {})",
                self.limit
            ));
        }
        Ok((self.buf.len() >= 4 + len).then_some(len))
    }

    /// Whether bytes of an incomplete frame are buffered.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The number of bytes buffered.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_reads_at_most_one_frame_ahead() {
        // A stream of 10 MB: only the limit's worth is taken.
        let mut stream = std::io::Cursor::new(vec![7u8; 10 << 20]);
        let mut fb = FrameBuf::with_limit(1000);
        assert!(fb.fill_from(&mut stream).unwrap());
        assert_eq!(fb.buffered(), 1004);
        assert!(fb.next_msg().is_err());
        assert!(max_table_frame(1) > MAX_RECORD);
        assert!(max_table_frame(1_000_000) <= u32::MAX as usize);
    }
}
