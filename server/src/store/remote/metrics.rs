//! What one remote source did, for `/metrics`: GETs (each counted once,
//! whatever retries it took), their bytes and time, the failures by kind,
//! the reads refused while the breaker was open.

use std::{
    sync::atomic::{AtomicU64, Ordering::Relaxed},
    time::Duration,
};

use crate::exposition::{Exposition, Kind};

/// Upper bounds of the GET time histogram, in seconds: a local store
/// answers in a millisecond, a cloud bucket in tens.
const BUCKETS: [f64; 11] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

/// Why a GET (or a read that would have needed one) failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The source did not answer, or answered 5xx/429 past the retries,
    /// or timed out.
    Unavailable,
    /// The object is not what the listing at start said (another size or
    /// ETag) or is gone.
    Changed,
    /// Refused without a GET: the breaker is open.
    BreakerOpen,
}

impl Failure {
    const ALL: [Failure; 3] = [Failure::Unavailable, Failure::Changed, Failure::BreakerOpen];

    fn label(self) -> &'static str {
        match self {
            Failure::Unavailable => "unavailable",
            Failure::Changed => "changed",
            Failure::BreakerOpen => "breaker_open",
        }
    }
}

/// One source's counters.
#[derive(Debug, Default)]
pub struct RemoteMetrics {
    gets: AtomicU64,
    bytes: AtomicU64,
    /// Concurrent reads of the same range that shared another's GET.
    joined: AtomicU64,
    failures: [AtomicU64; 3],
    /// GET times: per bucket of [`BUCKETS`], then the sum in microseconds.
    buckets: [AtomicU64; BUCKETS.len()],
    micros: AtomicU64,
}

impl RemoteMetrics {
    /// A GET that came back with `bytes` after `took`.
    pub fn record_get(&self, bytes: usize, took: Duration) {
        self.gets.fetch_add(1, Relaxed);
        self.bytes.fetch_add(bytes as u64, Relaxed);
        self.time(took);
    }

    /// A GET that failed after `took` (`None`: refused without a GET).
    pub fn record_failure(&self, failure: Failure, took: Option<Duration>) {
        self.failures[failure as usize].fetch_add(1, Relaxed);
        if let Some(took) = took {
            self.gets.fetch_add(1, Relaxed);
            self.time(took);
        }
    }

    pub fn record_joined(&self) {
        self.joined.fetch_add(1, Relaxed);
    }

    fn time(&self, took: Duration) {
        let secs = took.as_secs_f64();
        if let Some(bucket) = BUCKETS.iter().position(|&bound| secs <= bound) {
            self.buckets[bucket].fetch_add(1, Relaxed);
        }
        self.micros
            .fetch_add(u64::try_from(took.as_micros()).unwrap_or(u64::MAX), Relaxed);
    }

    /// GETs sent since start (each once, whatever its retries).
    pub fn gets(&self) -> u64 {
        self.gets.load(Relaxed)
    }

    pub fn failures(&self, failure: Failure) -> u64 {
        self.failures[failure as usize].load(Relaxed)
    }
}

/// How a counter family reads one source's figure.
type Figure = fn(&RemoteMetrics) -> u64;

/// The figures of every source, one labelled series per source, and the
/// breakers' states (`breakers`: source, state gauge, times opened).
pub fn render(
    out: &mut Exposition,
    sources: &[(&str, &RemoteMetrics)],
    breakers: &[(&str, u64, u64)],
) {
    let counters: [(&str, &str, Figure); 3] = [
        (
            "zugzwang_remote_gets_total",
            "Ranged GETs sent to a remote table source (an object store or an HTTP mirror), each counted once whatever retries it took.",
            RemoteMetrics::gets,
        ),
        (
            "zugzwang_remote_get_bytes_total",
            "Bytes the GETs of a remote table source brought back.",
            |m| m.bytes.load(Relaxed),
        ),
        (
            "zugzwang_remote_gets_joined_total",
            "Reads of a remote table that shared a GET of the same range another probe had out.",
            |m| m.joined.load(Relaxed),
        ),
    ];
    for (name, help, value) in counters {
        out.family(name, help, Kind::Counter);
        for (source, m) in sources {
            out.sample(name, &[("source", source)], value(m));
        }
    }
    let name = "zugzwang_remote_get_failures_total";
    out.family(
        name,
        "Reads of a remote table that failed (each a 503 naming the table), by why: the source did not answer in time or answered 5xx/429 past the retries (unavailable), the object differs from the listing at start (changed), or the breaker was open (breaker_open, no GET sent).",
        Kind::Counter,
    );
    for (source, m) in sources {
        for failure in Failure::ALL {
            out.sample(
                name,
                &[("source", source), ("reason", failure.label())],
                m.failures(failure),
            );
        }
    }
    let name = "zugzwang_remote_get_seconds";
    out.family(
        name,
        "Time from sending a GET to a remote table source to its last byte, retries included.",
        Kind::Histogram,
    );
    let bucket = format!("{name}_bucket");
    for (source, m) in sources {
        let mut cumulative = 0;
        for (bound, count) in BUCKETS.iter().zip(&m.buckets) {
            cumulative += count.load(Relaxed);
            out.sample(
                &bucket,
                &[("source", source), ("le", &bound.to_string())],
                cumulative,
            );
        }
        out.sample(&bucket, &[("source", source), ("le", "+Inf")], m.gets());
        out.sample(
            &format!("{name}_sum"),
            &[("source", source)],
            m.micros.load(Relaxed) as f64 / 1e6,
        );
        out.sample(&format!("{name}_count"), &[("source", source)], m.gets());
    }
    let name = "zugzwang_remote_breaker_state";
    out.family(
        name,
        "A remote table source's circuit breaker: 0 closed, 1 open (reads that need the source fail at once), 2 half-open (one trial GET).",
        Kind::Gauge,
    );
    for (source, state, _) in breakers {
        out.sample(name, &[("source", source)], state);
    }
    let name = "zugzwang_remote_breaker_opened_total";
    out.family(
        name,
        "Times a remote table source's circuit breaker opened.",
        Kind::Counter,
    );
    for (source, _, opened) in breakers {
        out.sample(name, &[("source", source)], opened);
    }
}
