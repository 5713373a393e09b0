//! One memory budget for every cache the server keeps, split by one rule.
//!
//! Memory the process holds is memory the page cache cannot use, and the
//! page cache is what keeps the tables' data blocks close; a small box or
//! a container with a memory limit pays for every cache first. So the
//! caches share one bound (`serve --memory-mb`) instead of each taking its
//! own share of the machine, and the rule that splits it is written here
//! once: the share of each cache follows what it saves per byte, as
//! measured on an explorer's walk (server/docs/benchmarks.md, "One memory
//! budget"; at 80 MiB, moving 18 MiB from answers and indexes to the DTM
//! blocks took 0.35 instead of 0.40-0.50 ms of CPU per request).
//!
//! - Decompressed DTM blocks: a miss costs a block's decompression (8 KiB
//!   for the embedded tables, 64 KiB, about a whole request's Syzygy
//!   probes, for the generator's files), and an answer looks up every move.
//! - Recently read data blocks save a system call, and the disk read behind
//!   it when the page cache has dropped the block.
//! - Answers (the response cache) save everything, but only for a request
//!   asked before (back and forward, a shared link, many clients on one
//!   position); an answer is a few hundred bytes, so a small share holds
//!   thousands.
//! - Table indexes make a lookup cost at most one slow read on tables
//!   larger than RAM; a set's index is a few percent of its bytes (2.9 MiB
//!   for the 3-4-5 piece set), so a small share holds it whole. Larger sets
//!   need `--memory-mb` or `--index-cache-mb` sized to their index.
//! - The probe memo saves the probes of positions an earlier request
//!   probed, at about 100 bytes a position.
//!
//! A cache given its own flag keeps that size; the others keep their share.

use crate::exposition::{Exposition, Kind};

/// Per mille of the budget for each cache (they add up to 1000).
const DTM_BLOCKS: u64 = 400;
const DATA: u64 = 250;
const RESPONSES: u64 = 150;
const INDEX: u64 = 100;
const PROBE_MEMO: u64 = 100;

/// The budget when nothing says otherwise and the machine's memory cannot
/// be read: the ceiling, what any machine with 512 MiB available gets.
pub const DEFAULT_TOTAL: u64 = 32 << 20;

/// What each cache may hold, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBudget {
    pub responses: u64,
    pub probe_memo: u64,
    pub index: u64,
    pub data: u64,
    pub dtm_blocks: u64,
}

impl MemoryBudget {
    /// `total` bytes split by the rule above.
    pub fn split(total: u64) -> MemoryBudget {
        let share = |per_mille: u64| total / 1000 * per_mille;
        MemoryBudget {
            responses: share(RESPONSES),
            probe_memo: share(PROBE_MEMO),
            index: share(INDEX),
            data: share(DATA),
            dtm_blocks: share(DTM_BLOCKS),
        }
    }

    /// The bytes all caches may hold together.
    pub fn total(&self) -> u64 {
        self.parts().iter().map(|(_, bytes)| bytes).sum()
    }

    /// Each cache's name (as `/metrics` labels it) and bytes.
    pub fn parts(&self) -> [(&'static str, u64); 5] {
        [
            ("responses", self.responses),
            ("data", self.data),
            ("index", self.index),
            ("dtm_blocks", self.dtm_blocks),
            ("probe_memo", self.probe_memo),
        ]
    }

    /// The split in a line for the start-up log.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .parts()
            .iter()
            .map(|(name, bytes)| format!("{name} {}", mib(*bytes)))
            .collect();
        format!("{} in all: {}", mib(self.total()), parts.join(", "))
    }

    pub fn render(&self, out: &mut Exposition) {
        let name = "zugzwang_memory_budget_bytes";
        out.family(
            name,
            "The memory budget (--memory-mb) as split among the caches; each cache's own figures show what it holds.",
            Kind::Gauge,
        );
        for (cache, bytes) in self.parts() {
            out.sample(name, &[("cache", cache)], bytes);
        }
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shares_add_up_to_the_whole() {
        assert_eq!(RESPONSES + DATA + INDEX + DTM_BLOCKS + PROBE_MEMO, 1000);
        let budget = MemoryBudget::split(64 << 20);
        assert!(budget.total() <= 64 << 20);
        assert!(budget.total() > (64 << 20) - 1000);
        assert!(budget.dtm_blocks > budget.data && budget.data > budget.responses);
        assert!(budget.responses > budget.index && budget.index == budget.probe_memo);
        assert_eq!(MemoryBudget::split(0).total(), 0);
    }

    #[test]
    fn the_split_shows_on_metrics_and_in_the_log() {
        let budget = MemoryBudget::split(100 << 20);
        let mut out = Exposition::default();
        budget.render(&mut out);
        let text = out.into_string();
        for cache in ["responses", "data", "index", "dtm_blocks", "probe_memo"] {
            assert!(
                text.contains(&format!(
                    "zugzwang_memory_budget_bytes{{cache=\"{cache}\"}}"
                )),
                "{text}"
            );
        }
        assert!(
            budget
                .describe()
                .starts_with("100.0 MiB in all: responses 15.0 MiB")
        );
    }
}
