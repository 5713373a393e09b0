//! The memory the server keeps for itself, decided once at start from what
//! the machine has available.
//!
//! Everything else is left to the page cache, which holds the tables' data
//! blocks. The tables' indexes (`store::chunk_cache`) are a few percent of
//! their bytes but most of their reads, so they are worth keeping before
//! any data block; an eighth of MemAvailable holds the whole index of sets
//! far larger than RAM (the 3-4-5 piece set's is 2.9 MiB of 131 MB) and
//! leaves the page cache most of the machine. Decompressed DTM blocks
//! (`dtm::block_cache`) are kept up to 256 MiB, or an eighth of
//! MemAvailable on a smaller machine.

use crate::{dtm::block_cache, store::DEFAULT_INDEX_CACHE_BYTES};

use super::process_health;

/// The index cache takes at most this fraction of MemAvailable by default.
const INDEX_SHARE: u64 = 8;

/// Bytes for the index cache: `mb` megabytes when given, else an eighth of
/// MemAvailable (or the store's default when it cannot be read).
pub fn index_cache_bytes(mb: Option<u64>) -> u64 {
    sized(mb, "the index cache", share_of)
}

/// Bytes for the decompressed DTM blocks: `mb` megabytes when given, else
/// the block cache's default, at most an eighth of MemAvailable.
pub fn dtm_cache_bytes(mb: Option<u64>) -> u64 {
    sized(mb, "the DTM block cache", dtm_share_of)
}

/// `mb` megabytes when given, else `share` of MemAvailable (`None` when it
/// cannot be read, which is logged naming `what`).
fn sized(mb: Option<u64>, what: &str, share: fn(Option<u64>) -> u64) -> u64 {
    if let Some(mb) = mb {
        return mb.saturating_mul(1 << 20);
    }
    let available = process_health::memory_available_bytes()
        .map_err(|err| tracing::warn!("sizing {what}: {err}"))
        .ok();
    share(available)
}

fn dtm_share_of(available: Option<u64>) -> u64 {
    available.map_or(block_cache::DEFAULT_BYTES, |bytes| {
        (bytes / INDEX_SHARE).min(block_cache::DEFAULT_BYTES)
    })
}

fn share_of(available: Option<u64>) -> u64 {
    available.map_or(DEFAULT_INDEX_CACHE_BYTES, |bytes| bytes / INDEX_SHARE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_eighth_of_what_is_available_unless_told() {
        assert_eq!(share_of(Some(8 << 30)), 1 << 30);
        assert_eq!(share_of(None), DEFAULT_INDEX_CACHE_BYTES);
        assert_eq!(index_cache_bytes(Some(3)), 3 << 20);
        assert_eq!(index_cache_bytes(Some(0)), 0);
    }

    #[test]
    fn dtm_blocks_take_their_default_or_an_eighth_of_a_small_machine() {
        assert_eq!(dtm_share_of(Some(16 << 30)), block_cache::DEFAULT_BYTES);
        assert_eq!(dtm_share_of(Some(1 << 30)), 128 << 20);
        assert_eq!(dtm_share_of(None), block_cache::DEFAULT_BYTES);
        assert_eq!(dtm_cache_bytes(Some(0)), 0);
    }
}
