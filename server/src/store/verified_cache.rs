//! Blocks that already passed their checksum, kept in memory.
//!
//! Checking every read means widening it to whole blocks and hashing them:
//! a 6-byte sparse-index read becomes a 4 KiB read and a 4 KiB hash. On a
//! hot page cache that alone cost about 30% of the probe throughput
//! (measured with `tests/integrity.rs`'s `integrity_cost_on_hot_cache`). An
//! explorer's lookups revisit the same index and block-length blocks over
//! and over, so a bounded set of verified blocks serves most of them without
//! a read or a hash: on the 3-5 piece log it turns the +29% of checking
//! 4 KiB blocks into -23% against not checking at all. A block enters only
//! after its checksum matched, so the cache never holds unchecked bytes;
//! what it trusts afterwards is RAM, which the page cache trusts too.
//!
//! Direct-mapped: each (file, block) has one slot, chosen by hash; a new
//! block evicts whatever was there. No bookkeeping on hits, one short lock
//! per slot, so probing threads rarely contend.

use std::sync::{
    LazyLock, Mutex,
    atomic::{AtomicU64, Ordering},
};

/// Memory for cached blocks.
pub const CAPACITY_BYTES: usize = 64 << 20;

/// The slot count assumes the default 4 KiB blocks; other sizes still work.
const SLOTS: usize = CAPACITY_BYTES / 4096;

struct Slot {
    file: u64,
    block: u64,
    bytes: Vec<u8>,
}

pub struct VerifiedCache {
    slots: Box<[Mutex<Option<Slot>>]>,
}

static GLOBAL: LazyLock<VerifiedCache> = LazyLock::new(|| VerifiedCache::new(SLOTS));
static NEXT_FILE: AtomicU64 = AtomicU64::new(1);

/// The process-wide cache.
pub fn global() -> &'static VerifiedCache {
    &GLOBAL
}

/// A fresh key for an opened file: a reopened or replaced file never sees
/// the blocks of an earlier one.
pub fn file_key() -> u64 {
    NEXT_FILE.fetch_add(1, Ordering::Relaxed)
}

impl VerifiedCache {
    pub fn new(slots: usize) -> VerifiedCache {
        VerifiedCache {
            slots: (0..slots.max(1)).map(|_| Mutex::new(None)).collect(),
        }
    }

    fn slot(&self, file: u64, block: u64) -> &Mutex<Option<Slot>> {
        // Fibonacci hashing spreads neighbouring blocks and files apart.
        let h =
            (file.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ block).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        &self.slots[(h >> 20) as usize % self.slots.len()]
    }

    /// Copies the cached block into `out` if present (and of `out`'s length).
    pub fn get(&self, file: u64, block: u64, out: &mut [u8]) -> bool {
        let slot = self
            .slot(file, block)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        match slot.as_ref() {
            Some(s) if s.file == file && s.block == block && s.bytes.len() == out.len() => {
                out.copy_from_slice(&s.bytes);
                true
            }
            _ => false,
        }
    }

    /// Keeps a block that just passed its checksum.
    pub fn put(&self, file: u64, block: u64, bytes: &[u8]) {
        let mut slot = self
            .slot(file, block)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        match slot.as_mut() {
            Some(s) => {
                s.file = file;
                s.block = block;
                s.bytes.clear();
                s.bytes.extend_from_slice(bytes);
            }
            None => {
                *slot = Some(Slot {
                    file,
                    block,
                    bytes: bytes.to_vec(),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_what_was_put_for_that_file_and_block_only() {
        let cache = VerifiedCache::new(16);
        let mut out = [0u8; 4];
        assert!(!cache.get(1, 7, &mut out));
        cache.put(1, 7, &[1, 2, 3, 4]);
        assert!(cache.get(1, 7, &mut out));
        assert_eq!(out, [1, 2, 3, 4]);
        assert!(!cache.get(2, 7, &mut out));
        assert!(!cache.get(1, 8, &mut out));
        let mut short = [0u8; 2];
        assert!(!cache.get(1, 7, &mut short));
    }
}
