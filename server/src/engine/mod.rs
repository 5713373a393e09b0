//! The probe engine: answers for a position and all its moves, probed in
//! parallel on a bounded pool of blocking threads, with identical requests
//! coalesced and recent answers cached.

pub mod answer_cache;
pub mod error;
pub mod load_shedding;
pub mod mainline;
pub mod order;
pub mod probe;
pub mod tables;

use std::{path::PathBuf, sync::Arc};

use app::api::{MainlineAnswer, TablebaseAnswer};
use shakmaty::Chess;
use shakmaty_syzygy::filesystem::Filesystem;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub use answer_cache::{AnswerCache, CacheStats};
pub use error::EngineError;
pub use load_shedding::LoadShedding;
pub use tables::{LoadError, LoadedDirectory, Tables};

use crate::store::{
    embedded::{EMBEDDED_DIR, EmbeddedFilesystem},
    tiered::TieredFilesystem,
};

/// How the engine reads tables and how much it does at once.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Table directories; empty means the embedded 3- and 4-piece tables.
    pub tables: Vec<PathBuf>,
    /// Blocking threads probing at once.
    pub probe_threads: usize,
    /// Requests allowed in progress before new ones are refused with 503.
    pub max_pending: usize,
    /// Bytes of answers kept in the response cache (0: none kept).
    pub cache_bytes: u64,
    /// Read tables through mmap instead of pread (benchmarks, all-in-RAM setups).
    pub mmap: bool,
    /// Hint random access to the kernel (POSIX_FADV_RANDOM).
    pub advise_random: bool,
    /// KiB the kernel reads around a page-cache miss (0: only what is asked).
    pub read_around_kib: u64,
    /// Probe a request's positions one after another instead of together
    /// (to measure what the parallel probes buy).
    pub sequential_probes: bool,
    /// Fast tier holding the tables' prefixes (`zugzwang tier build`).
    pub fast: Option<PathBuf>,
    /// Check reads against recorded block checksums where there are some.
    pub check_blocks: bool,
    /// Refuse to serve tables without recorded checksums (`--require-checksums`).
    pub require_checksums: bool,
    /// Table files kept open at most; `None`: what the open-files limit
    /// leaves after connections (`limits::DescriptorBudget`).
    pub table_handles: Option<usize>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            tables: Vec::new(),
            probe_threads: 16,
            max_pending: 512,
            cache_bytes: 64 << 20,
            mmap: false,
            advise_random: false,
            read_around_kib: 128,
            sequential_probes: false,
            fast: None,
            check_blocks: true,
            require_checksums: false,
            table_handles: None,
        }
    }
}

pub struct Engine {
    tables: Arc<Tables>,
    probe_slots: Arc<Semaphore>,
    pending: Arc<Semaphore>,
    max_pending: usize,
    shedding: LoadShedding,
    cache: AnswerCache,
    directories: Vec<LoadedDirectory>,
    probe_threads: usize,
    sequential_probes: bool,
}

impl Engine {
    /// Registers the tables of every directory; files are opened lazily on first probe.
    pub fn open(config: &EngineConfig) -> Result<Engine, LoadError> {
        if config.tables.is_empty() {
            let embedded = [PathBuf::from(EMBEDDED_DIR)];
            return Self::with_filesystem(config, Arc::new(EmbeddedFilesystem), &embedded);
        }
        Self::with_filesystem(config, filesystem(config)?, &config.tables)
    }

    /// An engine reading `dirs` through any filesystem, ignoring the
    /// config's storage choices; tests use it to watch the reads.
    pub fn with_filesystem(
        config: &EngineConfig,
        filesystem: Arc<dyn Filesystem>,
        dirs: &[PathBuf],
    ) -> Result<Engine, LoadError> {
        let (tables, directories) = Tables::load(filesystem, dirs)?;
        Ok(Engine {
            tables: Arc::new(tables),
            probe_slots: Arc::new(Semaphore::new(config.probe_threads.max(1))),
            pending: Arc::new(Semaphore::new(config.max_pending.max(1))),
            max_pending: config.max_pending.max(1),
            shedding: LoadShedding::new(),
            cache: AnswerCache::new(config.cache_bytes),
            directories,
            probe_threads: config.probe_threads.max(1),
            sequential_probes: config.sequential_probes,
        })
    }

    pub fn directories(&self) -> &[LoadedDirectory] {
        &self.directories
    }

    /// Whether a request's probes wait for each other (see [`EngineConfig::sequential_probes`]).
    pub fn sequential_probes(&self) -> bool {
        self.sequential_probes
    }

    /// Blocking threads probing at once, across all requests.
    pub fn probe_threads(&self) -> usize {
        self.probe_threads
    }

    /// Largest piece count any loaded table covers.
    pub fn max_pieces(&self) -> usize {
        self.tables.tablebase.max_pieces()
    }

    /// The answer for a position and every legal move (`GET /standard`).
    pub async fn probe(&self, pos: Chess) -> Result<Arc<TablebaseAnswer>, EngineError> {
        if let Some(hit) = self.cache.cached_probe(&pos).await {
            return Ok(hit);
        }
        let _pending = self.admit()?;
        let key = pos.clone();
        self.cache.probe(&key, probe::answer(self, pos)).await
    }

    /// The DTZ-optimal line from a position (`GET /standard/mainline`).
    pub async fn mainline(&self, pos: Chess) -> Result<Arc<MainlineAnswer>, EngineError> {
        if let Some(hit) = self.cache.cached_mainline(&pos).await {
            return Ok(hit);
        }
        let _pending = self.admit()?;
        let key = pos.clone();
        let compute = async {
            self.blocking(move |tables| mainline::mainline(tables, pos))
                .await?
        };
        self.cache.mainline(&key, compute).await
    }

    /// How requests met the response cache, and what it holds.
    pub async fn cache_stats(&self) -> CacheStats {
        self.cache.settle().await;
        self.cache.stats()
    }

    /// Requests refused as overload since start.
    pub fn requests_shed(&self) -> u64 {
        self.shedding.refused()
    }

    /// A place among the requests in progress, or `Overloaded` when all
    /// are taken: shedding load keeps latency bounded instead of queueing.
    fn admit(&self) -> Result<OwnedSemaphorePermit, EngineError> {
        self.pending.clone().try_acquire_owned().map_err(|_| {
            self.shedding.record(self.max_pending);
            EngineError::Overloaded(self.max_pending)
        })
    }

    /// Runs table work on the blocking pool, never on the async workers.
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Tables) -> T + Send + 'static,
    ) -> Result<T, EngineError> {
        let permit = self
            .probe_slots
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| EngineError::Internal("probe pool closed".into()))?;
        let tables = Arc::clone(&self.tables);
        let reads = crate::store::metrics::current_request();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            crate::store::metrics::with_request(reads, || work(&tables))
        })
        .await
        .map_err(|err| EngineError::Internal(format!("probe task failed: {err}")))
    }
}

fn filesystem(config: &EngineConfig) -> Result<Arc<dyn Filesystem>, LoadError> {
    if config.mmap {
        // Safety: the operator asked for mmap explicitly; tables must not
        // change while served and I/O errors become signals (see --mmap help).
        let fs = unsafe { shakmaty_syzygy::filesystem::MmapFilesystem::new() };
        return Ok(Arc::new(fs.with_advise_random(config.advise_random)));
    }
    let mut fs = TieredFilesystem::new(
        config.advise_random,
        config.fast.clone(),
        config.check_blocks,
    )
    .with_read_around(config.read_around_kib * 1024)
    .with_require_checksums(config.require_checksums);
    if let Some(handles) = config.table_handles {
        fs = fs.with_handle_budget(handles);
    }
    tracing::info!("keeping at most {} table files open", fs.handles().budget());
    crate::store::coverage::survey(&fs, &config.tables)?;
    Ok(Arc::new(fs))
}
