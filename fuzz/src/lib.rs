//! What the fuzz targets share: a reader that turns the fuzzer's bytes into choices
//! ([`Input`]), the generator of macro inputs ([`tokens`]), and the seed inputs of every target
//! ([`seeds`], written to `corpus/` by `examples/write_seeds.rs`).

pub mod seeds;
pub mod tokens;

/// The fuzzer's bytes, read front to back as choices; past the end every read is zero (so
/// every input, however short, is a complete run).
#[derive(Debug, Clone)]
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    /// Reads `data`.
    pub fn new(data: &'a [u8]) -> Input<'a> {
        Input { data }
    }

    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Up to `n` bytes (fewer at the end).
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (head, tail) = self.data.split_at(n.min(self.data.len()));
        self.data = tail;
        head
    }

    /// Everything left.
    pub fn rest(&mut self) -> &'a [u8] {
        self.bytes(self.data.len())
    }

    /// One byte.
    pub fn u8(&mut self) -> u8 {
        self.bytes(1).first().copied().unwrap_or(0)
    }

    /// A little-endian `u16`.
    pub fn u16(&mut self) -> u16 {
        u16::from(self.u8()) | u16::from(self.u8()) << 8
    }

    /// A little-endian `u32`.
    pub fn u32(&mut self) -> u32 {
        u32::from(self.u16()) | u32::from(self.u16()) << 16
    }

    /// A little-endian `u64`.
    pub fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | u64::from(self.u32()) << 32
    }

    /// A byte string: a one-byte length, then that many bytes.
    pub fn short(&mut self) -> &'a [u8] {
        let n = self.u8() as usize;
        self.bytes(n)
    }

    /// A byte string: a two-byte length, then that many bytes.
    pub fn long(&mut self) -> &'a [u8] {
        let n = self.u16() as usize;
        self.bytes(n)
    }

    /// A choice among `n` (at least 1).
    pub fn choose(&mut self, n: usize) -> usize {
        self.u8() as usize % n.max(1)
    }
}

/// Writes `u64`s little-endian, for seeds.
pub fn words(ws: &[u64]) -> Vec<u8> {
    ws.iter().flat_map(|w| w.to_le_bytes()).collect()
}
