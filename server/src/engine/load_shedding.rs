//! Requests refused because too many are in progress: counted for
//! `/metrics` and logged at most once a second, since under overload a line
//! per refusal floods the log (70,000 lines in 10 s were seen) while adding
//! nothing an operator can act on.

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::Instant,
};

pub struct LoadShedding {
    started: Instant,
    refused: AtomicU64,
    /// Second (since start) of the last log line, plus one; 0: never logged.
    logged_second: AtomicU64,
    /// Refusals already reported in a log line.
    logged_refused: AtomicU64,
}

impl LoadShedding {
    pub fn new() -> LoadShedding {
        LoadShedding {
            started: Instant::now(),
            refused: AtomicU64::new(0),
            logged_second: AtomicU64::new(0),
            logged_refused: AtomicU64::new(0),
        }
    }

    /// Counts one refusal; logs how many there were since the last line if
    /// that line is a second old or more.
    pub fn record(&self, max_pending: usize) {
        let refused = self.refused.fetch_add(1, Ordering::Relaxed) + 1;
        let second = self.started.elapsed().as_secs() + 1;
        let last = self.logged_second.load(Ordering::Relaxed);
        if last >= second {
            return;
        }
        let won = self
            .logged_second
            .compare_exchange(last, second, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok();
        if !won {
            return;
        }
        let since = refused - self.logged_refused.swap(refused, Ordering::Relaxed);
        tracing::warn!(
            "overloaded: refused {since} request(s) with 503 since the last report \
             ({max_pending} in progress is the limit, --max-pending)"
        );
    }

    /// Requests refused since start.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }
}

impl Default for LoadShedding {
    fn default() -> Self {
        LoadShedding::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_every_refusal() {
        let shedding = LoadShedding::new();
        for _ in 0..1000 {
            shedding.record(4);
        }
        assert_eq!(shedding.refused(), 1000);
        // One line for the first second at most: the rest were only counted.
        assert_eq!(shedding.logged_second.load(Ordering::Relaxed), 1);
    }
}
