//! Counters of one store's table reads, per tier and per kind of read, and
//! of its integrity findings, for `/metrics`.
//!
//! A value, not a static: `store::open` makes one per store, the layers
//! that read hold it, and two stores in one process (tests make many) keep
//! separate figures. What a read counts for one request or one thread is
//! `store::context`'s.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering::Relaxed},
    },
    time::Duration,
};

use shakmaty_syzygy::filesystem::ReadHint;

pub use super::context::Tier;
use super::context::{self, Tally};
use crate::{
    exposition::{Exposition, Kind},
    sync::lock,
};

/// The part of a table a read is for (shakmaty-syzygy's hint).
pub const KINDS: [(ReadHint, &str); 5] = [
    (ReadHint::Header, "header"),
    (ReadHint::DtzMap, "dtz_map"),
    (ReadHint::SparseIndex, "sparse_index"),
    (ReadHint::BlockLengths, "block_lengths"),
    (ReadHint::Data, "data"),
];

pub(crate) fn kind_index(hint: ReadHint) -> usize {
    match hint {
        ReadHint::Header => 0,
        ReadHint::DtzMap => 1,
        ReadHint::SparseIndex => 2,
        ReadHint::BlockLengths => 3,
        ReadHint::Data => 4,
    }
}

/// Upper bounds of the latency buckets, in seconds: from a page-cache hit
/// (microseconds) to a busy disk (hundreds of milliseconds).
const BUCKETS: [f64; 12] = [
    5e-6, 20e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 50e-3, 250e-3,
];

#[derive(Default)]
struct Series {
    reads: AtomicU64,
    bytes: AtomicU64,
    nanos: AtomicU64,
    buckets: [AtomicU64; BUCKETS.len()],
}

/// One store's read counters.
#[derive(Default)]
pub struct ReadMetrics {
    series: [[Series; 5]; 3],
    prefix_fallbacks: AtomicU64,
    integrity_failures: AtomicU64,
    /// Table file name → integrity failures seen (the table is suspect).
    suspect: Mutex<BTreeMap<String, u64>>,
    /// Table file names and why their prefix is not used; logged once each.
    fallbacks: Mutex<BTreeSet<(String, String)>>,
}

impl ReadMetrics {
    /// Records one read (from the tiered store or the chunk cache), for
    /// the store and for the request the thread reads for.
    pub fn record_read(
        &self,
        table: &Arc<str>,
        tier: Tier,
        hint: ReadHint,
        offset: u64,
        len: usize,
        took: Duration,
    ) {
        let series = &self.series[tier.index()][kind_index(hint)];
        series.reads.fetch_add(1, Relaxed);
        series.bytes.fetch_add(len as u64, Relaxed);
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        series.nanos.fetch_add(nanos, Relaxed);
        let secs = took.as_secs_f64();
        if let Some(bucket) = BUCKETS.iter().position(|&b| secs <= b) {
            series.buckets[bucket].fetch_add(1, Relaxed);
        }
        context::count_read(table, tier, hint, offset, len);
    }

    /// Records that a table's prefix is not used; true the first time for
    /// this table and reason (the caller logs then, not on every open).
    pub fn record_fallback(&self, table: &str, reason: &str) -> bool {
        self.prefix_fallbacks.fetch_add(1, Relaxed);
        let mut fallbacks = lock(&self.fallbacks);
        fallbacks.insert((table.to_string(), reason.to_string()))
    }

    /// Records a block whose checksum did not match: the table becomes suspect.
    pub fn record_integrity_failure(&self, table: &str) {
        self.integrity_failures.fetch_add(1, Relaxed);
        self.record_suspect(table);
    }

    /// Records a table the background scrub found damaged: suspect too.
    pub fn record_scrub_finding(&self, table: &str) {
        self.record_suspect(table);
    }

    fn record_suspect(&self, table: &str) {
        let mut suspect = lock(&self.suspect);
        *suspect.entry(table.to_string()).or_default() += 1;
    }

    pub fn suspect_tables(&self) -> Vec<String> {
        let suspect = lock(&self.suspect);
        suspect.keys().cloned().collect()
    }

    /// Reads, by tier, since start.
    pub fn totals(&self) -> Tally {
        let sum = |tier: Tier| {
            self.series[tier.index()]
                .iter()
                .map(|s| s.reads.load(Relaxed))
                .sum()
        };
        Tally {
            fast: sum(Tier::Fast),
            slow: sum(Tier::Slow),
            cached: sum(Tier::Cache),
            gets: 0,
        }
    }

    /// Reads of both tiers since start.
    pub fn totals_reads(&self) -> u64 {
        let totals = self.totals();
        totals.fast + totals.slow
    }

    /// Table reads by tier and kind: counts, bytes and latency.
    pub fn render_reads(&self, out: &mut Exposition) {
        let name = "zugzwang_table_reads_total";
        out.family(name, "Table reads by tier and kind of read.", Kind::Counter);
        self.each_series(|labels, s| out.sample(name, labels, s.reads.load(Relaxed)));
        let name = "zugzwang_table_read_bytes_total";
        out.family(
            name,
            "Bytes read from tables by tier and kind of read.",
            Kind::Counter,
        );
        self.each_series(|labels, s| out.sample(name, labels, s.bytes.load(Relaxed)));
        let name = "zugzwang_table_read_seconds";
        out.family(
            name,
            "Latency of table reads by tier and kind of read.",
            Kind::Histogram,
        );
        self.each_series(|labels, s| {
            let bucket = "zugzwang_table_read_seconds_bucket";
            let mut cumulative = 0;
            for (bound, count) in BUCKETS.iter().zip(&s.buckets) {
                cumulative += count.load(Relaxed);
                let le = bound.to_string();
                out.sample(bucket, &[labels[0], labels[1], ("le", &le)], cumulative);
            }
            let reads = s.reads.load(Relaxed);
            out.sample(bucket, &[labels[0], labels[1], ("le", "+Inf")], reads);
            let secs = s.nanos.load(Relaxed) as f64 / 1e9;
            out.sample("zugzwang_table_read_seconds_sum", labels, secs);
            out.sample("zugzwang_table_read_seconds_count", labels, reads);
        });
    }

    /// Lookups, and the tables served without their fast-tier prefix.
    pub fn render_fast_tier(&self, out: &mut Exposition) {
        // Every lookup of a compressed table starts with exactly one sparse index read.
        let lookups: u64 = Tier::ALL
            .iter()
            .map(|t| {
                self.series[t.index()][kind_index(ReadHint::SparseIndex)]
                    .reads
                    .load(Relaxed)
            })
            .sum();
        out.counter(
            "zugzwang_table_lookups_total",
            "Lookups in compressed tables (one per sparse index read).",
            lookups,
        );
        out.counter(
            "zugzwang_prefix_fallbacks_total",
            "Table opens that could not use the fast tier.",
            self.prefix_fallbacks.load(Relaxed),
        );
        let name = "zugzwang_prefix_fallback";
        out.family(
            name,
            "Tables served without their fast-tier prefix, and why.",
            Kind::Gauge,
        );
        let fallbacks = lock(&self.fallbacks);
        for (table, reason) in fallbacks.iter() {
            out.sample(name, &[("table", table), ("reason", reason)], 1);
        }
    }

    /// Checksum mismatches, in all and by table.
    pub fn render_integrity(&self, out: &mut Exposition) {
        out.counter(
            "zugzwang_integrity_failures_total",
            "Blocks read whose checksum did not match.",
            self.integrity_failures.load(Relaxed),
        );
        let name = "zugzwang_table_suspect";
        out.family(
            name,
            "Tables with checksum mismatches (value: mismatches seen).",
            Kind::Gauge,
        );
        let suspect = lock(&self.suspect);
        for (table, count) in suspect.iter() {
            out.sample(name, &[("table", table)], count);
        }
    }

    fn each_series(&self, mut line: impl FnMut(&[(&str, &str); 2], &Series)) {
        for tier in Tier::ALL {
            for (hint, kind) in KINDS {
                let labels = [("tier", tier.label()), ("kind", kind)];
                line(&labels, &self.series[tier.index()][kind_index(hint)]);
            }
        }
    }
}
