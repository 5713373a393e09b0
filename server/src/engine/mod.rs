//! The probe engine: answers for a position and all its moves, with
//! identical requests coalesced and recent answers cached. A request's
//! positions come from the probe memo when an earlier request probed them,
//! else are probed on the async worker while their reads are in memory, and
//! those that must wait for a disk go to a bounded pool of blocking
//! threads together.

pub mod answer;
pub mod answer_cache;
pub mod error;
pub mod load_shedding;
pub mod mainline;
pub mod mate_line;
pub mod memory_budget;
pub mod order;
pub mod pool;
pub mod probe_memo;
pub mod probed;
pub mod reachable;
pub mod table_set;
pub mod tablebases;
pub mod unchecked;

use std::{path::PathBuf, sync::Arc};

use app::{
    api::{MainlineAnswer, MateLineAnswer, TablebaseAnswer},
    variant::Variant,
};
use shakmaty::variant::VariantPosition;
use shakmaty_syzygy::filesystem::Filesystem;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub use pool::ProbeCounts;
use pool::ProbePool;

pub use answer_cache::{AnswerCache, CacheStats};
pub use error::EngineError;
pub use load_shedding::LoadShedding;
pub use memory_budget::MemoryBudget;
pub use probe_memo::{MemoStats, ProbeMemo};
pub use table_set::TableSet;
pub use tablebases::{LoadError, LoadedDirectory, TableDirs, TableDirsByVariant, Tables};
pub use unchecked::UncheckedTables;

use crate::{
    dtm::{Verification, block_cache::BlockCache},
    store::{
        self, StoreMetrics, StoreOptions,
        embedded::{EMBEDDED_ATOMIC_DIR, EMBEDDED_DIR, EMBEDDED_PROPHET_DIR, EmbeddedFilesystem},
    },
};

/// Which tables the engine answers from, how they are read and how much it
/// does at once.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Table directories; empty means the embedded 3- and 4-piece tables.
    pub tables: Vec<PathBuf>,
    /// Atomic table directories; empty means the embedded 3- and 4-piece
    /// atomic tables.
    pub atomic: Vec<PathBuf>,
    /// Antichess table directories; none are embedded, so empty means no
    /// antichess tables (answers say "unknown" where one is needed).
    pub antichess: Vec<PathBuf>,
    /// Prophet DTM table directories; empty means the embedded 2- to
    /// 4-piece DTM tables.
    pub dtm: Vec<PathBuf>,
    /// Bytes of decompressed DTM blocks kept in memory (0: none kept).
    pub dtm_cache_bytes: u64,
    /// How the store reads the table files of `tables`.
    pub store: StoreOptions,
    /// Blocking threads probing at once.
    pub probe_threads: usize,
    /// Requests allowed in progress before new ones are refused with 503.
    pub max_pending: usize,
    /// Bytes of answers kept in the response cache (0: none kept).
    pub cache_bytes: u64,
    /// Bytes of recent positions' probe results kept for later requests
    /// (0: none kept).
    pub memo_bytes: u64,
    /// Probe a request's positions one after another instead of together
    /// (to measure what the parallel probes buy).
    pub sequential_probes: bool,
    /// Probe on the async worker first, every read refusing to wait for a
    /// disk (`store::context`); only probes that need the disk go to the
    /// blocking threads. Off: every probe goes to them (to measure what
    /// this buys). Never with mmap, whose faults cannot refuse to wait.
    pub inline_probes: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            tables: Vec::new(),
            atomic: Vec::new(),
            antichess: Vec::new(),
            dtm: Vec::new(),
            dtm_cache_bytes: 0,
            store: StoreOptions::default(),
            probe_threads: 16,
            max_pending: 512,
            cache_bytes: 0,
            memo_bytes: 0,
            sequential_probes: false,
            inline_probes: true,
        }
        .budgeted(MemoryBudget::split(memory_budget::DEFAULT_TOTAL))
    }
}

impl EngineConfig {
    /// The config with every cache sized from `budget`.
    pub fn budgeted(self, budget: MemoryBudget) -> EngineConfig {
        EngineConfig {
            cache_bytes: budget.responses,
            memo_bytes: budget.probe_memo,
            dtm_cache_bytes: budget.dtm_blocks,
            store: StoreOptions {
                index_cache_bytes: budget.index,
                data_cache_bytes: budget.data,
                ..self.store
            },
            ..self
        }
    }

    /// What the config gives each cache.
    pub fn memory_budget(&self) -> MemoryBudget {
        MemoryBudget {
            responses: self.cache_bytes,
            probe_memo: self.memo_bytes,
            index: self.store.index_cache_bytes,
            data: self.store.data_cache_bytes,
            dtm_blocks: self.dtm_cache_bytes,
        }
    }
}

/// When DTM tables are checked whole: on disk, only those without block
/// checksums (the others are checked block by block as they are read, and
/// a whole read would cost every block's slow read); embedded or under
/// mmap, every one on first use.
fn dtm_verification(dirs: &[PathBuf], store: Option<&store::Store>) -> Verification {
    match (dirs.is_empty(), store.and_then(|s| s.unchecked.as_ref())) {
        (false, Some(unchecked)) => Verification::OnFirstUseOf(Arc::clone(unchecked)),
        _ => Verification::OnFirstUse,
    }
}

/// Admits requests, answers them from the cache or has `probe` and
/// `mainline` compute them on the pool.
pub struct Engine {
    pool: ProbePool,
    pending: Arc<Semaphore>,
    max_pending: usize,
    shedding: LoadShedding,
    cache: AnswerCache,
    memo: ProbeMemo,
    directories: Vec<LoadedDirectory>,
    /// The figures of the store the tables are read through (zero for
    /// embedded tables and for a filesystem handed in by a test).
    store_metrics: Arc<StoreMetrics>,
    /// Tables served without ever being checked (`--allow-unchecked`).
    unchecked: Arc<UncheckedTables>,
    /// What the caches were given, for `/metrics`.
    memory_budget: MemoryBudget,
}

impl Engine {
    /// Registers the tables of every directory; files are opened lazily on
    /// first probe. The table directories of all variants are read through
    /// one store (one descriptor budget, one checksum survey); a variant
    /// without directories uses its embedded tables, if it has some.
    pub fn open(config: &EngineConfig) -> Result<Engine, LoadError> {
        let on_disk: Vec<PathBuf> = [
            &config.tables,
            &config.atomic,
            &config.antichess,
            &config.dtm,
        ]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
        let store = match on_disk.is_empty() {
            true => None,
            false => Some(store::open(&config.store, &on_disk)?),
        };
        let set = |dirs: &[PathBuf], embedded: Option<&str>| match (&store, embedded) {
            (Some(store), _) if !dirs.is_empty() => TableDirs {
                filesystem: Arc::clone(&store.filesystem),
                dirs: dirs.to_vec(),
            },
            (_, Some(embedded)) => TableDirs {
                filesystem: Arc::new(EmbeddedFilesystem),
                dirs: vec![PathBuf::from(embedded)],
            },
            (_, None) => TableDirs::none(),
        };
        let sets = TableDirsByVariant {
            standard: set(&config.tables, Some(EMBEDDED_DIR)),
            atomic: set(&config.atomic, Some(EMBEDDED_ATOMIC_DIR)),
            antichess: set(&config.antichess, None),
            dtm: set(&config.dtm, Some(EMBEDDED_PROPHET_DIR)),
            dtm_cache_bytes: config.dtm_cache_bytes,
            dtm_verification: dtm_verification(&config.dtm, store.as_ref()),
        };
        let config = EngineConfig {
            inline_probes: config.inline_probes && !config.store.mmap,
            ..config.clone()
        };
        let mut engine = Self::with_table_sets(&config, &sets)?;
        if let Some(store) = store {
            if let (true, Some(unchecked)) = (store.serves_unchecked, &store.unchecked) {
                engine.unchecked = Arc::new(UncheckedTables::new(unchecked));
            }
            engine
                .pool
                .watch_reads(Arc::clone(&store.metrics.in_flight));
            engine.store_metrics = store.metrics;
        }
        Ok(engine)
    }

    /// An engine reading standard tables from `dirs` through any
    /// filesystem, ignoring the config's storage choices (no atomic or
    /// antichess tables); tests use it to watch the reads. A filesystem
    /// that may block without honouring `store::context::refusing` needs
    /// `inline_probes` off.
    pub fn with_filesystem(
        config: &EngineConfig,
        filesystem: Arc<dyn Filesystem>,
        dirs: &[PathBuf],
    ) -> Result<Engine, LoadError> {
        Self::with_table_sets(config, &TableDirsByVariant::standard_only(filesystem, dirs))
    }

    /// An engine over the given table sets, ignoring the config's storage
    /// choices.
    pub fn with_table_sets(
        config: &EngineConfig,
        sets: &TableDirsByVariant,
    ) -> Result<Engine, LoadError> {
        let (tables, directories) = Tables::load_sets(sets)?;
        Ok(Engine {
            pool: ProbePool::new(tables, config),
            pending: Arc::new(Semaphore::new(config.max_pending.max(1))),
            max_pending: config.max_pending.max(1),
            shedding: LoadShedding::new(),
            cache: AnswerCache::new(config.cache_bytes),
            memo: ProbeMemo::new(config.memo_bytes),
            directories,
            store_metrics: Arc::default(),
            unchecked: Arc::default(),
            memory_budget: config.memory_budget(),
        })
    }

    /// What the caches were given.
    pub fn memory_budget(&self) -> MemoryBudget {
        self.memory_budget
    }

    /// The figures of the store the engine's tables are read through.
    pub fn store_metrics(&self) -> &Arc<StoreMetrics> {
        &self.store_metrics
    }

    /// The unchecked tables served (`--allow-unchecked`): which answers
    /// depend on one, and how many did.
    pub fn unchecked_tables(&self) -> &UncheckedTables {
        &self.unchecked
    }

    pub fn directories(&self) -> &[LoadedDirectory] {
        &self.directories
    }

    /// Whether a request's probes wait for each other (see [`EngineConfig::sequential_probes`]).
    pub fn sequential_probes(&self) -> bool {
        self.pool.sequential()
    }

    /// Blocking threads probing at once, across all requests.
    pub fn probe_threads(&self) -> usize {
        self.pool.threads()
    }

    /// Of them, those busy now.
    pub fn probe_threads_busy(&self) -> usize {
        self.pool.busy()
    }

    /// Probe threads written off as stuck (their work ran past
    /// `--stuck-read-secs` while others waited for a place) that have not
    /// returned yet: beyond `--probe-threads`.
    pub fn probe_threads_stuck(&self) -> usize {
        self.pool.stuck()
    }

    /// A variant's installed tables by material (`KRvK`), sorted: those
    /// whose two files (WDL and DTZ) were both loaded.
    pub fn installed_tables(&self, variant: Variant) -> Vec<String> {
        self.pool.tables().installed(variant).to_vec()
    }

    /// The table set answers come from, named by a digest of its files.
    pub fn table_set(&self) -> &TableSet {
        self.pool.tables().table_set()
    }

    /// Largest piece count any loaded standard table covers.
    pub fn max_pieces(&self) -> usize {
        self.pool.tables().max_pieces(Variant::Standard)
    }

    /// Largest piece count the loaded tables of a variant cover (0: none).
    pub fn max_pieces_of(&self, variant: Variant) -> usize {
        self.pool.tables().max_pieces(variant)
    }

    /// The answer for a position and every legal move (`GET /standard`,
    /// `/atomic`, `/antichess`: the position's variant decides).
    pub async fn probe(
        &self,
        pos: impl Into<VariantPosition>,
    ) -> Result<Arc<TablebaseAnswer>, EngineError> {
        let pos = pos.into();
        if let Some(hit) = self.cache.cached_probe(&pos) {
            return Ok(hit);
        }
        // Refused as soon as it may need a stuck table, rather than waiting
        // for an identical request in flight that is stuck on it.
        self.pool.readiness(&pos)?;
        let _pending = self.admit()?;
        let key = pos.clone();
        // Boxed: each future that takes this one and awaits it holds it
        // twice, so unboxed it made a request's future 74 KB, moved by
        // memcpy several times per request even when the answer was cached.
        let answer = Box::pin(
            self.cache
                .probe(&key, answer::answer(&self.pool, &self.memo, pos)),
        );
        self.pool.unless_stuck(&key, answer).await
    }

    /// The DTZ-optimal line from a position (`GET /{variant}/mainline`).
    pub async fn mainline(
        &self,
        pos: impl Into<VariantPosition>,
    ) -> Result<Arc<MainlineAnswer>, EngineError> {
        let pos = pos.into();
        let (pieces, max) = (app::position::piece_count(&pos), self.max_pieces());
        // Said before probing, with the count: the tables' own error only
        // says "too many pieces". Standard only: in atomic and antichess a
        // finished game or a forced capture is answered without tables, as
        // lila-tablebase answers it.
        if Variant::of(&pos) == Some(Variant::Standard) && pieces > max {
            return Err(EngineError::NotInTables(format!(
                "{pieces} pieces: the loaded tables cover at most {max}"
            )));
        }
        if let Some(hit) = self.cache.cached_mainline(&pos) {
            return Ok(hit);
        }
        // A line ends in tables the start can become: none of them stuck.
        self.pool.wait_ready(std::iter::once(&pos)).await?;
        let _pending = self.admit()?;
        let key = pos.clone();
        let compute = async {
            self.pool
                .run(move |tables| mainline::mainline(tables, pos))
                .await?
        };
        // Boxed as in `probe`.
        let line = Box::pin(self.cache.mainline(&key, compute));
        self.pool.unless_stuck(&key, line).await
    }

    /// The fastest mate from a standard position (`GET
    /// /standard/fastest-mate`): computed on the pool each time (DTM
    /// lookups of a few hundred positions, kept decompressed), not cached.
    pub async fn mate_line(
        &self,
        pos: impl Into<VariantPosition>,
    ) -> Result<Arc<MateLineAnswer>, EngineError> {
        let pos = pos.into();
        self.pool.wait_ready(std::iter::once(&pos)).await?;
        let _pending = self.admit()?;
        let line = self
            .pool
            .run(move |tables| mate_line::mate_line(tables, pos))
            .await??;
        Ok(Arc::new(line))
    }

    /// The decompressed DTM blocks kept, with their figures.
    pub fn dtm_block_cache(&self) -> &BlockCache {
        self.pool.tables().dtm.block_cache()
    }

    /// The DTM tables that failed while answering (answers went on without
    /// `dtm`), with their figures.
    pub fn dtm_unavailable(&self) -> &crate::dtm::unavailable::DtmUnavailability {
        self.pool.tables().dtm_unavailable()
    }

    /// Materials the DTM tables answer (`KBNvK`), sorted.
    pub fn dtm_materials(&self) -> Vec<String> {
        self.pool.tables().dtm.materials()
    }

    /// How requests met the response cache, and what it holds.
    pub async fn cache_stats(&self) -> CacheStats {
        self.cache.stats()
    }

    /// How probes met the memo of recent positions.
    pub fn memo_stats(&self) -> MemoStats {
        self.memo.stats()
    }

    /// Probes answered on the async workers and probes sent to the blocking
    /// threads, since start.
    pub fn probes_by_place(&self) -> ProbeCounts {
        self.pool.counts()
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
}
