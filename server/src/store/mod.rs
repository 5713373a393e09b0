//! How table files are read: the filesystem layers handed to shakmaty-syzygy.
//!
//! `pread` is the default for table directories on disk; `embedded` serves the
//! 3- and 4-piece tables compiled into the binary so a fresh clone answers
//! without configuration; `tier` is the fast tier: each table's prefix
//! (`format` finds it) on fast storage, its per-block checksums checked on
//! every read, and the `build` that writes them. Verified blocks are kept
//! in memory (`verified_cache`); every table's index parts (headers, sparse
//! indexes, block lengths) are kept in memory within a budget
//! (`chunk_cache`); reads are counted in `metrics`, and those that waited for
//! the disk in `disk_reads` (which can also trace them to a file);
//! concurrent misses on one window make one read (`single_flight`), and
//! a miss is told from a hit without starting I/O (`residency`); `nowait`
//! lets a probe refuse every read that would wait for a disk. Descriptors
//! of table files are kept within a budget by `handles`; tables whose header
//! failed its checksum are refused for a while (`quarantine`); `coverage`
//! says at start which tables are served without checksums; `catalog`
//! holds, per variant, the published name, digest and (standard only) size
//! of every table and which tables its captures and promotions lead to
//! (`material` has each variant's rules for those); `variant_digests` reads
//! the md5 lists of atomic and antichess tables; `published` checks whole
//! files against those digests.

pub mod catalog;
pub mod chunk_cache;
pub mod coverage;
pub mod descriptors;
pub mod disk_reads;
pub mod embedded;
pub mod fetch;
pub mod format;
pub mod handles;
pub mod inventory;
pub mod material;
pub mod metrics;
pub mod nowait;
pub mod pread;
pub mod published;
pub mod quarantine;
pub mod residency;
pub mod single_flight;
pub mod tier;
pub mod variant_digests;
pub mod verified_cache;

use std::{path::PathBuf, sync::Arc};

use shakmaty_syzygy::filesystem::{Filesystem, MmapFilesystem};

use chunk_cache::{ChunkCache, ChunkCachedFilesystem};
use coverage::MissingChecksums;
use tier::{TierOptions, TieredFilesystem};

/// How table files on disk are read (`EngineConfig::store`).
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// Read through mmap instead of pread (benchmarks, all-in-RAM setups).
    pub mmap: bool,
    /// Hint random access to the kernel (POSIX_FADV_RANDOM).
    pub advise_random: bool,
    /// KiB the kernel reads around a page-cache miss (0: only what is asked).
    pub read_around_kib: u64,
    /// Fast tier holding the tables' prefixes (`zugzwang tier build`).
    pub fast: Option<PathBuf>,
    /// Check reads against recorded block checksums where there are some.
    pub check_blocks: bool,
    /// Refuse to serve tables without recorded checksums.
    pub require_checksums: bool,
    /// Table files kept open at most; `None`: what the open-files limit
    /// leaves after connections (`store::descriptors::DescriptorBudget`).
    pub table_handles: Option<usize>,
    /// Bytes of table indexes kept in process memory (`chunk_cache`);
    /// 0 keeps none. `serve` sizes it from MemAvailable unless told.
    pub index_cache_bytes: u64,
    /// Bytes of table data blocks kept in process memory (`chunk_cache`'s
    /// data cache); 0 keeps none.
    pub data_cache_bytes: u64,
}

/// The index cache when nothing sizes it (tests, `zugzwang probe`).
pub const DEFAULT_INDEX_CACHE_BYTES: u64 = 64 << 20;

/// The data-block cache unless told (`serve --data-cache-mb`): enough for
/// the blocks an explorer's requests revisit, small beside the page cache
/// it duplicates.
pub const DEFAULT_DATA_CACHE_BYTES: u64 = 64 << 20;

impl Default for StoreOptions {
    /// pread, checked where checksums are recorded, 128 KiB read around
    /// misses, 64 MiB of table indexes and 64 MiB of data blocks kept in
    /// memory.
    fn default() -> Self {
        StoreOptions {
            mmap: false,
            advise_random: false,
            read_around_kib: 128,
            fast: None,
            check_blocks: true,
            require_checksums: false,
            table_handles: None,
            index_cache_bytes: DEFAULT_INDEX_CACHE_BYTES,
            data_cache_bytes: DEFAULT_DATA_CACHE_BYTES,
        }
    }
}

/// The filesystem the tables of `dirs` are read through: mmap when asked,
/// else the tiered pread store (after surveying which tables have
/// checksums) with the tables' indexes and recently read data blocks kept
/// in memory above it.
pub fn open(
    options: &StoreOptions,
    dirs: &[PathBuf],
) -> Result<Arc<dyn Filesystem>, MissingChecksums> {
    if options.mmap {
        // Safety: the operator asked for mmap explicitly; tables must not
        // change while served and I/O errors become signals (see --mmap help).
        let fs = unsafe { MmapFilesystem::new() };
        return Ok(Arc::new(fs.with_advise_random(options.advise_random)));
    }
    let mut fs = TieredFilesystem::new(TierOptions {
        fast_dir: options.fast.clone(),
        advise_random: options.advise_random,
        check_blocks: options.check_blocks,
    })
    .with_read_around(options.read_around_kib * 1024)
    .with_require_checksums(options.require_checksums);
    if let Some(handles) = options.table_handles {
        fs = fs.with_handle_budget(handles);
    }
    tracing::info!("keeping at most {} table files open", fs.handles().budget());
    coverage::survey(&fs, dirs)?;
    let cache =
        ChunkCache::for_index(usize::try_from(options.index_cache_bytes).unwrap_or(usize::MAX));
    tracing::info!(
        "keeping up to {} MiB of table indexes in memory",
        cache.capacity() >> 20
    );
    let data =
        ChunkCache::for_data(usize::try_from(options.data_cache_bytes).unwrap_or(usize::MAX));
    tracing::info!(
        "keeping up to {} MiB of table data blocks in memory",
        data.capacity() >> 20
    );
    Ok(Arc::new(ChunkCachedFilesystem::new(
        Arc::new(fs),
        Arc::new(cache),
        Arc::new(data),
    )))
}
