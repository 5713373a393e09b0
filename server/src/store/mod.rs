//! How table files are read and kept trustworthy: the filesystem layers
//! handed to shakmaty-syzygy, the fast tier with its builder (`tier`), and
//! the background check of whole tables (`scrub`). The read path (`open`
//! and the layers it stacks) knows nothing of the published catalogue; only
//! the tier's builder and the scrub, which compare whole files with the
//! published digests, use `catalog`.
//!
//! `pread` is the default for table directories on disk; `embedded` serves the
//! 3- and 4-piece tables compiled into the binary so a fresh clone answers
//! without configuration; `tier` is the fast tier: each table's prefix
//! (`layout` finds it) on fast storage and its per-block checksums checked
//! on every read. Every table's index parts (headers, sparse indexes, block
//! lengths) and recently read data blocks are kept in memory within a
//! budget (`chunk_cache`); reads are counted in `metrics`, and those that
//! waited for the disk in `disk_reads` (which can also trace them to a
//! file); concurrent misses on one window make one read (`single_flight`),
//! a miss is told from a hit without starting I/O (`residency`), and the
//! reads out on the disk are watched so that a stuck one makes its table
//! suspect instead of taking every probe thread (`stuck_reads`).
//! `context` is what a read knows of the request it serves: its counters,
//! and whether it may wait for a disk. Descriptors of table files are kept
//! within a budget by `handles` (`descriptors` shares the open-files limit
//! with connections); tables found damaged are refused until replaced
//! (`quarantine`, records that outlive the process); `coverage` says at
//! start which tables are served without checksums.
//!
//! [`open`] returns the filesystem with its figures ([`StoreMetrics`]):
//! every layer counts into values it was given, so two stores in one
//! process keep separate figures.

pub mod chunk_cache;
pub mod context;
pub mod coverage;
pub mod descriptors;
pub mod disk_reads;
pub mod embedded;
pub mod executable;
pub mod handles;
pub mod layout;
pub mod pread;
pub mod quarantine;
pub mod read_counters;
pub mod remote;
pub mod residency;
pub mod scrub;
pub mod single_flight;
pub mod stuck_reads;
pub mod table_error;
pub mod tier;

use std::{collections::HashSet, path::PathBuf, sync::Arc, time::Duration};

use shakmaty_syzygy::filesystem::{Filesystem, MmapFilesystem};

use crate::exposition::{Exposition, Kind};
use chunk_cache::{ChunkCache, ChunkCachedFilesystem};
use disk_reads::{DiskReads, TraceError};
use handles::HandlePool;
use quarantine::Quarantine;
use read_counters::ReadMetrics;
use remote::{RemoteError, RemoteOptions, RemoteSources};
use stuck_reads::ReadsInFlight;
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
    /// Serve tables whose bytes were never checked (no recorded checksums)
    /// instead of refusing them.
    pub allow_unchecked: bool,
    /// Where checksums and quarantine records of tables in read-only
    /// directories are kept (`--state-dir`).
    pub state_dir: Option<PathBuf>,
    /// Table files kept open at most; `None`: what the open-files limit
    /// leaves after connections (`store::descriptors::DescriptorBudget`).
    pub table_handles: Option<usize>,
    /// Bytes of table indexes kept in process memory (`chunk_cache`);
    /// 0 keeps none. `serve` gives it its share of the memory budget.
    pub index_cache_bytes: u64,
    /// Bytes of table data blocks kept in process memory (`chunk_cache`'s
    /// data cache); 0 keeps none.
    pub data_cache_bytes: u64,
    /// Write every read that waited for the disk to this file (a
    /// benchmark's `--read-trace`, see `disk_reads`).
    pub read_trace: Option<PathBuf>,
    /// A table with a read out on the disk this long is suspect: probes
    /// that need it are refused (503) until the read returns
    /// (`--stuck-read-secs`, see `stuck_reads`).
    pub stuck_read: Duration,
    /// How table sources named by URL are reached (`store::remote`).
    pub remote: RemoteOptions,
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
            allow_unchecked: false,
            state_dir: None,
            table_handles: None,
            index_cache_bytes: DEFAULT_INDEX_CACHE_BYTES,
            data_cache_bytes: DEFAULT_DATA_CACHE_BYTES,
            read_trace: None,
            stuck_read: stuck_reads::DEFAULT_STUCK_READ,
            remote: RemoteOptions::default(),
        }
    }
}

/// Why a store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    ReadTrace(#[from] TraceError),
    #[error(transparent)]
    Remote(#[from] RemoteError),
    /// mmap reads files only.
    #[error("--mmap reads table directories only, not {0}")]
    MmapRemote(String),
}

/// An open store: the filesystem shakmaty-syzygy reads the tables through,
/// and the figures its layers count.
pub struct Store {
    pub filesystem: Arc<dyn Filesystem>,
    pub metrics: Arc<StoreMetrics>,
    /// File names of the tables without block checksums (the survey at
    /// open): refused, or served with `--allow-unchecked`; `None` where
    /// nothing is checked (mmap).
    pub unchecked: Option<Arc<HashSet<String>>>,
    /// Whether those are served anyway (`--allow-unchecked`).
    pub serves_unchecked: bool,
    /// Tables found damaged; `None` where nothing is checked (mmap).
    pub quarantine: Option<Arc<Quarantine>>,
}

/// A store's figures for `/metrics`, held by the layers that count them.
/// A store without one of the layers (embedded tables, mmap) shows its
/// figures as zero, so `/metrics` names the same series in every setup.
pub struct StoreMetrics {
    pub reads: Arc<ReadMetrics>,
    pub disk_reads: Arc<DiskReads>,
    pub index_cache: Arc<ChunkCache>,
    pub data_cache: Arc<ChunkCache>,
    /// The table descriptors; `None` where the store opens no files itself.
    pub handles: Option<Arc<HandlePool>>,
    /// Tables served without block checksums, surveyed at open.
    pub unchecked_tables: u64,
    /// Tables found damaged and refused.
    pub quarantine: Arc<Quarantine>,
    /// The reads out on the disk now, and the tables suspect of a stuck one.
    pub in_flight: Arc<ReadsInFlight>,
    /// The remote sources (`store::remote`), if the tables are in one.
    pub remote: Option<Arc<RemoteSources>>,
}

impl Default for StoreMetrics {
    fn default() -> Self {
        StoreMetrics {
            reads: Arc::default(),
            disk_reads: Arc::default(),
            index_cache: Arc::new(ChunkCache::for_index(0)),
            data_cache: Arc::new(ChunkCache::for_data(0)),
            handles: None,
            unchecked_tables: 0,
            quarantine: Arc::default(),
            in_flight: Arc::default(),
            remote: None,
        }
    }
}

impl StoreMetrics {
    /// Every figure of the store, each layer rendering its own.
    pub fn render(&self, out: &mut Exposition) {
        self.reads.render_reads(out);
        self.disk_reads.render(out);
        self.index_cache.render(out);
        self.data_cache.render(out);
        self.reads.render_fast_tier(out);
        self.reads.render_integrity(out);
        self.in_flight.render(out);
        match &self.remote {
            Some(remote) => remote.render(out),
            None => remote::render_sources(out, &[]),
        }
        self.render_health(out);
    }

    /// Table handles and checksum coverage: what decides whether the
    /// server can keep answering, and answering right.
    fn render_health(&self, out: &mut Exposition) {
        let handles = self.handles.as_deref();
        out.gauge(
            "zugzwang_table_handles_open",
            "Table files open now (tables, prefixes, checksum lists).",
            handles.map_or(0, HandlePool::open_handles),
        );
        out.gauge(
            "zugzwang_table_handles_budget",
            "Table files kept open at most; beyond it the coldest (read once, or not read for longest) are closed.",
            handles.map_or(0, |h| h.budget() as u64),
        );
        out.gauge(
            "zugzwang_tables_without_checksums",
            "Tables never checked against their published digest (no recorded block checksums): refused, or served with --allow-unchecked.",
            self.unchecked_tables,
        );
        let records = self.quarantine.records();
        out.gauge(
            "zugzwang_tables_quarantined",
            "Tables found damaged and refused until replaced or verified clean.",
            records.len() as u64,
        );
        let name = "zugzwang_table_quarantined";
        out.family(
            name,
            "A table found damaged, by the check that found it (verify, tier build, scrub, a block check on read).",
            Kind::Gauge,
        );
        for record in records {
            out.sample(
                name,
                &[("table", &record.table), ("check", &record.check)],
                1,
            );
        }
    }
}

/// The store the tables of `dirs` are read through: mmap when asked, else
/// the tiered pread store (after surveying which tables have checksums)
/// with the tables' indexes and recently read data blocks kept in memory
/// above it.
pub fn open(options: &StoreOptions, dirs: &[PathBuf]) -> Result<Store, OpenError> {
    if options.mmap {
        if let Some(url) = dirs.iter().find(|dir| remote::is_remote(dir)) {
            return Err(OpenError::MmapRemote(url.display().to_string()));
        }
        // Safety: the operator asked for mmap explicitly; tables must not
        // change while served and I/O errors become signals (see --mmap help).
        let fs = unsafe { MmapFilesystem::new() };
        return Ok(Store {
            filesystem: Arc::new(fs.with_advise_random(options.advise_random)),
            metrics: Arc::default(),
            unchecked: None,
            serves_unchecked: true,
            quarantine: None,
        });
    }
    let mut fs = TieredFilesystem::new(TierOptions {
        fast_dir: options.fast.clone(),
        advise_random: options.advise_random,
        check_blocks: options.check_blocks,
    })
    .with_read_around(options.read_around_kib * 1024)
    .with_allow_unchecked(options.allow_unchecked)
    .with_state_dir(options.state_dir.clone())
    .with_remote(RemoteSources::connect(dirs, &options.remote)?)
    .with_stuck_read(options.stuck_read);
    if let Some(handles) = options.table_handles {
        fs = fs.with_handle_budget(handles);
    }
    tracing::info!("keeping at most {} table files open", fs.handles().budget());
    let uncovered = coverage::survey(&fs, dirs);
    if let Some(path) = &options.read_trace {
        fs.disk_reads().start_trace(path)?;
        tracing::info!(
            "tracing table reads that wait for the disk to {}",
            path.display()
        );
    }
    let index =
        ChunkCache::for_index(usize::try_from(options.index_cache_bytes).unwrap_or(usize::MAX));
    tracing::info!(
        "keeping up to {} MiB of table indexes in memory",
        index.capacity() >> 20
    );
    let data =
        ChunkCache::for_data(usize::try_from(options.data_cache_bytes).unwrap_or(usize::MAX));
    tracing::info!(
        "keeping up to {} MiB of table data blocks in memory",
        data.capacity() >> 20
    );
    let metrics = Arc::new(StoreMetrics {
        reads: Arc::clone(fs.metrics()),
        disk_reads: Arc::clone(fs.disk_reads()),
        index_cache: Arc::new(index),
        data_cache: Arc::new(data),
        handles: Some(Arc::clone(fs.handles())),
        unchecked_tables: uncovered.iter().map(|u| u.unchecked.len() as u64).sum(),
        quarantine: Arc::clone(fs.quarantine()),
        in_flight: Arc::clone(fs.in_flight()),
        remote: fs.remote().cloned(),
    });
    let quarantine = Arc::clone(&metrics.quarantine);
    let serves_unchecked = fs.allows_unchecked();
    let filesystem = ChunkCachedFilesystem::new(
        Arc::new(fs),
        Arc::clone(&metrics.index_cache),
        Arc::clone(&metrics.data_cache),
        Arc::clone(&metrics.reads),
    )
    .with_quarantine(Arc::clone(&quarantine));
    let unchecked = uncovered
        .into_iter()
        .flat_map(|u| u.unchecked)
        .collect::<HashSet<String>>();
    Ok(Store {
        filesystem: Arc::new(filesystem),
        metrics,
        unchecked: Some(Arc::new(unchecked)),
        serves_unchecked,
        quarantine: Some(quarantine),
    })
}
