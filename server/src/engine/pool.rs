//! The bounded pool of blocking threads the tables are probed on.

use std::sync::Arc;

use tokio::sync::Semaphore;

use super::{EngineError, Tables};

/// The loaded tables and the blocking threads allowed to probe them at once.
pub struct ProbePool {
    tables: Arc<Tables>,
    slots: Arc<Semaphore>,
    threads: usize,
    sequential: bool,
}

impl ProbePool {
    /// `threads` probes at once (at least one); `sequential`: a request's
    /// probes run one after another (see `EngineConfig::sequential_probes`).
    pub fn new(tables: Tables, threads: usize, sequential: bool) -> ProbePool {
        let threads = threads.max(1);
        ProbePool {
            tables: Arc::new(tables),
            slots: Arc::new(Semaphore::new(threads)),
            threads,
            sequential,
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

    /// Workers for `count` probes of one request.
    pub fn workers(&self, count: usize) -> usize {
        if self.sequential {
            1
        } else {
            count.min(self.threads)
        }
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
        let reads = crate::store::metrics::current_request();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            crate::store::metrics::with_request(reads, || work(&tables))
        })
        .await
        .map_err(|err| EngineError::Internal(format!("probe task failed: {err}")))
    }
}
