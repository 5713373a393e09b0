//! Where probes run: on the async worker while their reads are in memory,
//! on a bounded pool of blocking threads when a read must wait for a disk
//! (the two passes are explained once, in `store::context`).

use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering::Relaxed},
};

use tokio::sync::Semaphore;

use super::{EngineConfig, EngineError, Tables};
use crate::store::context::{self, Inline};

/// The loaded tables and the blocking threads allowed to probe them at once.
pub struct ProbePool {
    tables: Arc<Tables>,
    slots: Arc<Semaphore>,
    threads: usize,
    sequential: bool,
    inline: bool,
    inline_probes: AtomicU64,
    pooled_probes: AtomicU64,
}

/// How many probes ran where, since start (`/metrics`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProbeCounts {
    /// Answered on the async worker, every read from memory.
    pub inline: u64,
    /// Sent to the blocking threads (a read had to wait, or inline is off).
    pub pooled: u64,
}

impl ProbePool {
    /// `probe_threads` probes at once (at least one), one after another
    /// when `sequential_probes`, inline first when `inline_probes`.
    pub fn new(tables: Tables, config: &EngineConfig) -> ProbePool {
        let threads = config.probe_threads.max(1);
        ProbePool {
            tables: Arc::new(tables),
            slots: Arc::new(Semaphore::new(threads)),
            threads,
            sequential: config.sequential_probes,
            inline: config.inline_probes,
            inline_probes: AtomicU64::new(0),
            pooled_probes: AtomicU64::new(0),
        }
    }

    pub fn tables(&self) -> &Tables {
        &self.tables
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    pub fn sequential(&self) -> bool {
        self.sequential
    }

    pub fn counts(&self) -> ProbeCounts {
        ProbeCounts {
            inline: self.inline_probes.load(Relaxed),
            pooled: self.pooled_probes.load(Relaxed),
        }
    }

    /// Workers for `count` probes of one request.
    pub fn workers(&self, count: usize) -> usize {
        if self.sequential {
            1
        } else {
            count.min(self.threads)
        }
    }

    /// Runs `probe` here, on the async worker, with every read refusing to
    /// wait: `None` when inline probing is off or a read would have waited
    /// (the caller then sends it to the pool). The probe must not block in
    /// any other way.
    pub fn try_inline<T>(
        &self,
        probe: impl FnOnce(&Tables) -> Result<T, EngineError>,
    ) -> Option<Result<T, EngineError>> {
        if !self.inline {
            return None;
        }
        let reads = context::current_request();
        let attempt =
            context::with_request(reads, || context::without_waiting(|| probe(&self.tables)));
        let Inline::Done(result) = attempt else {
            return None;
        };
        self.inline_probes.fetch_add(1, Relaxed);
        Some(result)
    }

    /// Counts `probes` sent to the blocking threads.
    pub fn count_pooled(&self, probes: usize) {
        self.pooled_probes.fetch_add(probes as u64, Relaxed);
    }

    /// Runs table work on the blocking pool, never on the async workers,
    /// with the request's read counters.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Tables) -> T + Send + 'static,
    ) -> Result<T, EngineError> {
        let permit = self
            .slots
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| EngineError::Internal("probe pool closed".into()))?;
        let tables = Arc::clone(&self.tables);
        let reads = context::current_request();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            context::with_request(reads, || work(&tables))
        })
        .await
        .map_err(|err| EngineError::Internal(format!("probe task failed: {err}")))
    }
}
