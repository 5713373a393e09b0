//! Decompressed Prophet blocks kept in memory, shared by all probing
//! threads (`serve --dtm-cache-mb`).
//!
//! A DTM lookup decompresses one zstd block (32,768 values, 64 KiB, in the
//! generator's files, as much CPU as a whole request's Syzygy probes;
//! 4,096 in the embedded ones, re-blocked by build.rs); an answer looks up the
//! root and every move, and the moves of one position fall in different
//! blocks (a piece's square is a large digit of the index). An explorer's
//! requests revisit the same endgames, so the blocks they need repeat:
//! kept decompressed, a lookup is a hash and an array index. The chunk
//! caches below the reader keep compressed bytes, which saves the read but
//! not the decompression.
//!
//! Only values that decompressed to the right length enter; errors are
//! never kept, so a table that could not be read is tried again.

use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering::Relaxed},
};

use quick_cache::{DefaultHashBuilder, OptionsBuilder, Weighter, sync::Cache};

use crate::exposition::Exposition;

/// A block of one open table: the table's id and the block's number.
pub type BlockKey = (u64, u64);

/// A block's values as decompressed (little-endian `i16` pairs): the
/// decompressor's own buffer, kept without copying it.
pub type Values = Arc<Vec<u8>>;

/// What an entry costs besides its values (key, `Arc`, the cache's own
/// bookkeeping), counted so the budget bounds memory.
const ENTRY_OVERHEAD: u64 = 128;

/// The budget of a reader opened on its own (tools, tests); `serve` gives
/// the cache its share of the memory budget (`engine::memory_budget`). An
/// explorer's walk through 2- to 4-piece endings touches about 200 MB of
/// blocks; at 64 MiB one lookup in ten missed (one
/// decompression per request, +45 % CPU), at 256 MiB nearly none (+10 %;
/// server/docs/benchmarks.md, "Depth to mate: what it costs").
pub const DEFAULT_BYTES: u64 = 256 << 20;

/// A block of the embedded tables (`format::EMBEDDED_BLOCK_POSITIONS`
/// values), the smallest a table has: the cache's slots are counted for
/// it, since more slots than blocks costs little and fewer would evict
/// before the budget is spent.
pub(crate) const SMALL_BLOCK_BYTES: u64 = 8 * 1024;

/// The share of the cache for blocks asked again after they entered; the
/// rest holds new ones until they are. quick_cache's default (97 %) suits
/// keys asked often; an explorer comes back to a block a few requests
/// later, after a 3 % share has let it go: at 12.8 MiB half for each cut
/// the loads per request from 1.50 to 1.19 on explore-345
/// (server/docs/benchmarks.md, "What the DTM block cache buys").
const HOT_SHARE: f64 = 0.5;

#[derive(Clone)]
struct BlockWeight;

impl Weighter<BlockKey, Values> for BlockWeight {
    fn weight(&self, _key: &BlockKey, values: &Values) -> u64 {
        values.capacity() as u64 + ENTRY_OVERHEAD
    }
}

/// Decompressed blocks by table and block number, within a byte budget.
pub struct BlockCache {
    /// `None` when sized 0: nothing is kept.
    cache: Option<Cache<BlockKey, Values, BlockWeight>>,
    capacity: u64,
    hits: AtomicU64,
    loads: AtomicU64,
}

impl BlockCache {
    /// A cache of at most `bytes` (0 keeps nothing).
    pub fn new(bytes: u64) -> BlockCache {
        BlockCache {
            cache: (bytes > 0).then(|| blocks_within(bytes)),
            capacity: bytes,
            hits: AtomicU64::new(0),
            loads: AtomicU64::new(0),
        }
    }

    /// The block's values (little-endian `i16` pairs), if kept; a miss is
    /// counted as a load, which the caller then makes.
    pub fn get(&self, key: BlockKey) -> Option<Values> {
        let kept = self.cache.as_ref().and_then(|cache| cache.get(&key));
        let counter = if kept.is_some() {
            &self.hits
        } else {
            &self.loads
        };
        counter.fetch_add(1, Relaxed);
        kept
    }

    /// Keeps a block's values.
    pub fn insert(&self, key: BlockKey, values: Values) {
        if let Some(cache) = &self.cache {
            cache.insert(key, values);
        }
    }

    /// The cache's figures for `/metrics`.
    pub fn render(&self, out: &mut Exposition) {
        let cache = self.cache.as_ref();
        out.gauge(
            "zugzwang_dtm_block_cache_capacity_bytes",
            "Memory the cache of decompressed DTM blocks may take (--dtm-cache-mb).",
            self.capacity,
        );
        out.gauge(
            "zugzwang_dtm_block_cache_bytes",
            "Memory the cache of decompressed DTM blocks takes now.",
            cache.map_or(0, Cache::weight),
        );
        out.counter(
            "zugzwang_dtm_block_cache_hits_total",
            "DTM lookups answered from a block kept decompressed.",
            self.hits.load(Relaxed),
        );
        out.counter(
            "zugzwang_dtm_block_cache_loads_total",
            "DTM lookups that read and decompressed their block.",
            self.loads.load(Relaxed),
        );
    }
}

/// A cache of at most `bytes` of blocks, [`HOT_SHARE`] of it for blocks
/// asked again.
fn blocks_within(bytes: u64) -> Cache<BlockKey, Values, BlockWeight> {
    let blocks = (bytes / (SMALL_BLOCK_BYTES + ENTRY_OVERHEAD)).max(1) as usize;
    let options = OptionsBuilder::new()
        .estimated_items_capacity(blocks)
        .weight_capacity(bytes)
        .hot_allocation(HOT_SHARE)
        .build();
    match options {
        Ok(options) => Cache::with_options(
            options,
            BlockWeight,
            DefaultHashBuilder::default(),
            Default::default(),
        ),
        // Not reached: the options above are all given and in range.
        Err(_) => Cache::with_weighter(blocks, bytes, BlockWeight),
    }
}

impl Default for BlockCache {
    fn default() -> Self {
        BlockCache::new(DEFAULT_BYTES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_blocks_within_its_budget_and_nothing_when_sized_zero() {
        let cache = BlockCache::new(3 * (1024 + ENTRY_OVERHEAD));
        for block in 0..10 {
            cache.insert((1, block), Arc::new(vec![0u8; 1024]));
        }
        let kept = (0..10).filter(|&b| cache.get((1, b)).is_some()).count();
        assert!(kept <= 3, "{kept} blocks kept");

        let large = BlockCache::new(DEFAULT_BYTES);
        large.insert((2, 7), Arc::new(vec![5u8; 1024]));
        assert_eq!(
            large.get((2, 7)).as_deref().map(Vec::as_slice),
            Some(&[5u8; 1024][..])
        );

        let none = BlockCache::new(0);
        none.insert((1, 0), Arc::new(vec![0u8; 16]));
        assert!(none.get((1, 0)).is_none());
    }

    /// An explorer's pattern: each step loads a new block and comes back to
    /// the one loaded a few steps before. With quick_cache's default share
    /// for blocks asked again (97 %), a new block is let go before it is
    /// asked again and every return is a load.
    #[test]
    fn a_block_asked_again_a_few_loads_later_is_still_kept() {
        let block = 1024;
        let cache = BlockCache::new(32 * (block + ENTRY_OVERHEAD));
        let back = 8;
        for step in 0..200u64 {
            if cache.get((1, step)).is_none() {
                cache.insert((1, step), Arc::new(vec![0u8; block as usize]));
            }
            if step >= back && cache.get((1, step - back)).is_none() {
                cache.insert((1, step - back), Arc::new(vec![0u8; block as usize]));
            }
        }
        let loads = cache.loads.load(Relaxed);
        // 200 first loads; the returns are hits.
        assert!(loads <= 210, "{loads} loads for 200 blocks");
    }
}
