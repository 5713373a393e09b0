//! Counters of table reads, per tier and per kind of read, and of integrity
//! findings: process-wide for `/metrics`, per thread for tests that check
//! each lookup, and per request for the `X-Probe-Reads` header.
//!
//! Process-wide because the tablebase (and the files it opens lazily) is
//! shared by all requests; per thread because a probe runs on one blocking
//! thread from start to end, so the reads between two points on a thread are
//! exactly the reads of the work done in between.

use std::{
    cell::RefCell,
    collections::{BTreeMap, BTreeSet},
    fmt::Write as _,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering::Relaxed},
    },
    time::Duration,
};

use shakmaty_syzygy::filesystem::ReadHint;

/// Where a read was served from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tier {
    Fast,
    Slow,
    /// Process memory: the index kept by `store::chunk_cache`, or the
    /// blocks that already passed their checksum (`store::verified_cache`).
    /// No read at all.
    Cache,
}

impl Tier {
    const ALL: [Tier; 3] = [Tier::Fast, Tier::Slow, Tier::Cache];

    fn index(self) -> usize {
        self as usize
    }

    pub fn label(self) -> &'static str {
        match self {
            Tier::Fast => "fast",
            Tier::Slow => "slow",
            Tier::Cache => "cache",
        }
    }
}

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

/// Process-wide counters.
#[derive(Default)]
pub struct Metrics {
    series: [[Series; 5]; 3],
    prefix_fallbacks: AtomicU64,
    integrity_failures: AtomicU64,
    /// Table file name → integrity failures seen (the table is suspect).
    suspect: Mutex<BTreeMap<String, u64>>,
    /// Table file names and why their prefix is not used; logged once each.
    fallbacks: Mutex<BTreeSet<(String, String)>>,
    scrub: Mutex<Option<Arc<dyn ScrubReport>>>,
}

/// What a background scrub reports on `/metrics`.
pub trait ScrubReport: Send + Sync {
    fn render(&self, out: &mut String);
}

static GLOBAL: std::sync::LazyLock<Metrics> = std::sync::LazyLock::new(Metrics::default);

pub fn global() -> &'static Metrics {
    &GLOBAL
}

/// Reads of one thread or one request, by tier.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub fast: u64,
    pub slow: u64,
    pub cached: u64,
}

/// One read, as the per-thread log records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadEvent {
    pub table: Arc<str>,
    pub tier: Tier,
    pub hint: ReadHint,
    pub offset: u64,
    pub len: usize,
}

/// A request's reads, filled from whichever blocking threads probe for it.
#[derive(Debug)]
pub struct RequestReads {
    /// Requests are numbered in the order they start, so a read trace
    /// (`store::disk_reads`) can tell one request's reads from another's
    /// and leave out the warm-up.
    id: u64,
    fast: AtomicU64,
    slow: AtomicU64,
    cached: AtomicU64,
}

static NEXT_REQUEST: AtomicU64 = AtomicU64::new(1);

impl Default for RequestReads {
    fn default() -> Self {
        RequestReads {
            id: NEXT_REQUEST.fetch_add(1, Relaxed),
            fast: AtomicU64::new(0),
            slow: AtomicU64::new(0),
            cached: AtomicU64::new(0),
        }
    }
}

/// Requests counted so far (the number the next one gets, minus one).
pub fn requests_started() -> u64 {
    NEXT_REQUEST.load(Relaxed) - 1
}

/// The number of the request this thread reads for; 0 outside requests.
pub fn current_request_id() -> u64 {
    THREAD_REQUEST.with(|r| r.borrow().as_ref().map_or(0, |reads| reads.id))
}

impl RequestReads {
    pub fn id(&self) -> u64 {
        self.id
    }

    pub fn tally(&self) -> Tally {
        Tally {
            fast: self.fast.load(Relaxed),
            slow: self.slow.load(Relaxed),
            cached: self.cached.load(Relaxed),
        }
    }
}

thread_local! {
    static THREAD_LOG: RefCell<Option<Vec<ReadEvent>>> = const { RefCell::new(None) };
    static THREAD_REQUEST: RefCell<Option<Arc<RequestReads>>> = const { RefCell::new(None) };
}

/// Whether any thread ever started a read log (tests do; the server never
/// does): until then a read costs one relaxed load, not a thread-local lookup.
static THREAD_LOGS: AtomicBool = AtomicBool::new(false);

/// Starts (or restarts) recording every read of this thread (for tests).
pub fn start_thread_log() {
    THREAD_LOGS.store(true, Relaxed);
    THREAD_LOG.with(|log| *log.borrow_mut() = Some(Vec::new()));
}

/// The reads recorded since `start_thread_log`, emptying the log.
pub fn take_thread_log() -> Vec<ReadEvent> {
    THREAD_LOG.with(|log| {
        log.borrow_mut()
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    })
}

/// Counts this thread's reads into `reads` while `work` runs.
pub fn with_request<T>(reads: Option<Arc<RequestReads>>, work: impl FnOnce() -> T) -> T {
    let previous = THREAD_REQUEST.with(|r| std::mem::replace(&mut *r.borrow_mut(), reads));
    let result = work();
    THREAD_REQUEST.with(|r| *r.borrow_mut() = previous);
    result
}

impl Metrics {
    /// Records one read (from the tiered store).
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
        THREAD_REQUEST.with(|r| {
            if let Some(reads) = r.borrow().as_ref() {
                match tier {
                    Tier::Fast => reads.fast.fetch_add(1, Relaxed),
                    Tier::Slow => reads.slow.fetch_add(1, Relaxed),
                    Tier::Cache => reads.cached.fetch_add(1, Relaxed),
                };
            }
        });
        if !THREAD_LOGS.load(Relaxed) {
            return;
        }
        THREAD_LOG.with(|log| {
            if let Some(log) = log.borrow_mut().as_mut() {
                log.push(ReadEvent {
                    table: Arc::clone(table),
                    tier,
                    hint,
                    offset,
                    len,
                });
            }
        });
    }

    /// Records that a table's prefix is not used; true the first time for
    /// this table and reason (the caller logs then, not on every open).
    pub fn record_fallback(&self, table: &str, reason: &str) -> bool {
        self.prefix_fallbacks.fetch_add(1, Relaxed);
        let mut fallbacks = self.fallbacks.lock().unwrap_or_else(|p| p.into_inner());
        fallbacks.insert((table.to_string(), reason.to_string()))
    }

    /// Records a block whose checksum did not match: the table becomes suspect.
    pub fn record_integrity_failure(&self, table: &str) {
        self.integrity_failures.fetch_add(1, Relaxed);
        let mut suspect = self.suspect.lock().unwrap_or_else(|p| p.into_inner());
        *suspect.entry(table.to_string()).or_default() += 1;
    }

    /// Records a table the background scrub found damaged: suspect too.
    pub fn record_scrub_finding(&self, table: &str) {
        let mut suspect = self.suspect.lock().unwrap_or_else(|p| p.into_inner());
        *suspect.entry(table.to_string()).or_default() += 1;
    }

    pub fn suspect_tables(&self) -> Vec<String> {
        let suspect = self.suspect.lock().unwrap_or_else(|p| p.into_inner());
        suspect.keys().cloned().collect()
    }

    pub fn set_scrub(&self, report: Arc<dyn ScrubReport>) {
        *self.scrub.lock().unwrap_or_else(|p| p.into_inner()) = Some(report);
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
        }
    }

    /// Reads of both tiers since start.
    pub fn totals_reads(&self) -> u64 {
        let totals = self.totals();
        totals.fast + totals.slow
    }

    /// Everything, in the Prometheus text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.render_reads(&mut out);
        super::disk_reads::render(&mut out);
        super::chunk_cache::render(&mut out);
        self.render_fast_tier(&mut out);
        self.render_integrity(&mut out);
        self.render_health(&mut out);
        if let Some(scrub) = self
            .scrub
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            scrub.render(&mut out);
        }
        out
    }

    /// Table reads by tier and kind: counts, bytes and latency.
    fn render_reads(&self, out: &mut String) {
        out.push_str("# HELP zugzwang_table_reads_total Table reads by tier and kind of read.\n");
        out.push_str("# TYPE zugzwang_table_reads_total counter\n");
        self.each_series(out, |out, labels, s| {
            let _ = writeln!(
                out,
                "zugzwang_table_reads_total{{{labels}}} {}",
                s.reads.load(Relaxed)
            );
        });
        out.push_str("# HELP zugzwang_table_read_bytes_total Bytes read from tables by tier and kind of read.\n");
        out.push_str("# TYPE zugzwang_table_read_bytes_total counter\n");
        self.each_series(out, |out, labels, s| {
            let _ = writeln!(
                out,
                "zugzwang_table_read_bytes_total{{{labels}}} {}",
                s.bytes.load(Relaxed)
            );
        });
        out.push_str(
            "# HELP zugzwang_table_read_seconds Latency of table reads by tier and kind of read.\n",
        );
        out.push_str("# TYPE zugzwang_table_read_seconds histogram\n");
        self.each_series(out, |out, labels, s| {
            let mut cumulative = 0;
            for (bound, count) in BUCKETS.iter().zip(&s.buckets) {
                cumulative += count.load(Relaxed);
                let _ = writeln!(
                    out,
                    "zugzwang_table_read_seconds_bucket{{{labels},le=\"{bound}\"}} {cumulative}"
                );
            }
            let reads = s.reads.load(Relaxed);
            let _ = writeln!(
                out,
                "zugzwang_table_read_seconds_bucket{{{labels},le=\"+Inf\"}} {reads}"
            );
            let secs = s.nanos.load(Relaxed) as f64 / 1e9;
            let _ = writeln!(out, "zugzwang_table_read_seconds_sum{{{labels}}} {secs}");
            let _ = writeln!(out, "zugzwang_table_read_seconds_count{{{labels}}} {reads}");
        });
    }

    /// Lookups, and the tables served without their fast-tier prefix.
    fn render_fast_tier(&self, out: &mut String) {
        // Every lookup of a compressed table starts with exactly one sparse index read.
        let lookups: u64 = Tier::ALL
            .iter()
            .map(|t| {
                self.series[t.index()][kind_index(ReadHint::SparseIndex)]
                    .reads
                    .load(Relaxed)
            })
            .sum();
        out.push_str("# HELP zugzwang_table_lookups_total Lookups in compressed tables (one per sparse index read).\n");
        out.push_str("# TYPE zugzwang_table_lookups_total counter\n");
        let _ = writeln!(out, "zugzwang_table_lookups_total {lookups}");
        out.push_str("# HELP zugzwang_prefix_fallbacks_total Table opens that could not use the fast tier.\n");
        out.push_str("# TYPE zugzwang_prefix_fallbacks_total counter\n");
        let _ = writeln!(
            out,
            "zugzwang_prefix_fallbacks_total {}",
            self.prefix_fallbacks.load(Relaxed)
        );
        out.push_str("# HELP zugzwang_prefix_fallback Tables served without their fast-tier prefix, and why.\n");
        out.push_str("# TYPE zugzwang_prefix_fallback gauge\n");
        for (table, reason) in self
            .fallbacks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            let _ = writeln!(
                out,
                "zugzwang_prefix_fallback{{table=\"{}\",reason=\"{}\"}} 1",
                escape(table),
                escape(reason)
            );
        }
    }

    /// Checksum mismatches, in all and by table.
    fn render_integrity(&self, out: &mut String) {
        out.push_str(
            "# HELP zugzwang_integrity_failures_total Blocks read whose checksum did not match.\n",
        );
        out.push_str("# TYPE zugzwang_integrity_failures_total counter\n");
        let _ = writeln!(
            out,
            "zugzwang_integrity_failures_total {}",
            self.integrity_failures.load(Relaxed)
        );
        out.push_str("# HELP zugzwang_table_suspect Tables with checksum mismatches (value: mismatches seen).\n");
        out.push_str("# TYPE zugzwang_table_suspect gauge\n");
        for (table, count) in self
            .suspect
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            let _ = writeln!(
                out,
                "zugzwang_table_suspect{{table=\"{}\"}} {count}",
                escape(table)
            );
        }
    }

    /// Table handles and checksum coverage: what decides whether the
    /// server can keep answering, and answering right.
    fn render_health(&self, out: &mut String) {
        let gauges = [
            (
                "zugzwang_table_handles_open",
                "Table files open now (tables, prefixes, checksum lists).",
                super::handles::open_handles(),
            ),
            (
                "zugzwang_table_handles_budget",
                "Table files kept open at most; the least recently used are closed beyond it.",
                super::handles::budget(),
            ),
            (
                "zugzwang_tables_without_checksums",
                "Tables served without recorded block checksums (a damaged disk can give wrong answers).",
                super::coverage::unchecked_tables(),
            ),
        ];
        for (name, help, value) in gauges {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} gauge");
            let _ = writeln!(out, "{name} {value}");
        }
    }

    fn each_series(&self, out: &mut String, mut line: impl FnMut(&mut String, &str, &Series)) {
        for tier in Tier::ALL {
            for (hint, kind) in KINDS {
                let labels = format!("tier=\"{}\",kind=\"{kind}\"", tier.label());
                line(out, &labels, &self.series[tier.index()][kind_index(hint)]);
            }
        }
    }
}

/// Escapes a label value (backslash, quote, newline).
pub fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

tokio::task_local! {
    /// The reads of the request being served, set around the engine call by
    /// the HTTP handler and carried onto the blocking threads that probe.
    pub static REQUEST_READS: Arc<RequestReads>;
}

/// The current request's read counter, if the caller is inside one.
pub fn current_request() -> Option<Arc<RequestReads>> {
    REQUEST_READS.try_with(Arc::clone).ok()
}
