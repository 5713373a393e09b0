//! What one connection is doing, as its timeouts and the eviction at the
//! connection cap see it (when it was accepted, when it last moved bytes,
//! whether it has sent a whole request head yet, how many of its requests
//! are being answered), and the counts over all connections that `/metrics`
//! shows.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use tokio_util::sync::CancellationToken;

/// Why the server closed a connection before its first request arrived
/// whole. Evictions at the cap are counted apart ([`Evicted`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The head did not arrive in full within `--header-timeout`.
    HeaderTimeout,
    /// No bytes moved for `--idle-timeout`.
    IdleTimeout,
    /// The head could not be read as HTTP/1 (or was too large).
    Malformed,
}

impl Refusal {
    pub const ALL: [Refusal; 3] = [
        Refusal::HeaderTimeout,
        Refusal::IdleTimeout,
        Refusal::Malformed,
    ];

    /// The `reason` label on `/metrics`.
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::HeaderTimeout => "header_timeout",
            Refusal::IdleTimeout => "idle_timeout",
            Refusal::Malformed => "malformed",
        }
    }
}

/// What a connection closed at the cap to make room was doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evicted {
    /// It had not sent a whole request head yet (half-sent, or silent since
    /// it connected).
    Unfinished,
    /// It had been answered and was waiting, idle, for its next request.
    Idle,
}

impl Evicted {
    pub const ALL: [Evicted; 2] = [Evicted::Unfinished, Evicted::Idle];

    /// The `state` label on `/metrics`.
    pub fn as_str(self) -> &'static str {
        match self {
            Evicted::Unfinished => "unfinished",
            Evicted::Idle => "idle",
        }
    }
}

/// Counts over all connections: for the report when a drain is cut short, and
/// for `/metrics`.
#[derive(Debug, Default)]
pub struct ConnectionStats {
    cap: usize,
    open: AtomicUsize,
    requests: AtomicUsize,
    evicted: [AtomicU64; Evicted::ALL.len()],
    refused: [AtomicU64; Refusal::ALL.len()],
}

impl ConnectionStats {
    pub fn new(cap: usize) -> Self {
        ConnectionStats {
            cap,
            ..ConnectionStats::default()
        }
    }

    /// Connections served at once at most (`--max-connections`, or its share
    /// of the open-files limit).
    pub fn cap(&self) -> usize {
        self.cap
    }

    pub fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    pub fn requests_in_progress(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }

    /// Connections closed at the cap to make room, since start.
    pub fn evicted(&self, state: Evicted) -> u64 {
        self.evicted[state as usize].load(Ordering::Relaxed)
    }

    /// Connections closed before their first request arrived whole, since start.
    pub fn refused(&self, reason: Refusal) -> u64 {
        self.refused[reason as usize].load(Ordering::Relaxed)
    }
}

/// When a connection last moved bytes or finished a request, and how many of
/// its requests have begun and are being handled.
pub struct Activity {
    /// Cancelled when this connection should finish what it does and close.
    pub close: CancellationToken,
    born: Instant,
    quiet_since_ms: AtomicU64,
    handling: AtomicUsize,
    /// Requests whose head arrived whole.
    begun: AtomicU64,
    /// Closed to make room at the cap: close now unless a request is in progress.
    evicted: AtomicBool,
    stats: Arc<ConnectionStats>,
}

impl Activity {
    pub fn new(stats: Arc<ConnectionStats>, close: CancellationToken) -> Arc<Self> {
        stats.open.fetch_add(1, Ordering::Relaxed);
        Arc::new(Activity {
            close,
            born: Instant::now(),
            quiet_since_ms: AtomicU64::new(0),
            handling: AtomicUsize::new(0),
            begun: AtomicU64::new(0),
            evicted: AtomicBool::new(false),
            stats,
        })
    }

    pub fn touch(&self) {
        let now = u64::try_from(self.born.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.quiet_since_ms.store(now, Ordering::Relaxed);
    }

    /// Time since the connection was accepted.
    pub fn age(&self) -> Duration {
        self.born.elapsed()
    }

    pub fn quiet_for(&self) -> Duration {
        let since = Duration::from_millis(self.quiet_since_ms.load(Ordering::Relaxed));
        self.born.elapsed().saturating_sub(since)
    }

    pub fn is_handling(&self) -> bool {
        self.handling.load(Ordering::Relaxed) > 0
    }

    /// Whether a whole request head has arrived on this connection.
    pub fn has_begun(&self) -> bool {
        self.begun.load(Ordering::Relaxed) > 0
    }

    /// A request being handled is bounded by the request deadline, not here.
    pub fn expired(&self, allowed: Duration) -> bool {
        !self.is_handling() && self.quiet_for() >= allowed
    }

    /// Asks the connection to close to make room for a new one, and counts it.
    pub fn evict(&self, state: Evicted) {
        self.evicted.store(true, Ordering::Relaxed);
        self.stats.evicted[state as usize].fetch_add(1, Ordering::Relaxed);
        self.close.cancel();
    }

    pub fn was_evicted(&self) -> bool {
        self.evicted.load(Ordering::Relaxed)
    }

    /// Counts the server closing this connection for `reason`, if no request
    /// of it has arrived whole: a keep-alive connection timing out between
    /// requests is its normal end, not a refusal.
    pub fn refuse(&self, reason: Refusal) {
        if !self.has_begun() {
            self.stats.refused[reason as usize].fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Activity {
    fn drop(&mut self) {
        self.stats.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Marks a request as being handled for as long as it lives.
pub struct Handling(Arc<Activity>);

impl Handling {
    pub fn start(activity: Arc<Activity>) -> Self {
        activity.begun.fetch_add(1, Ordering::Relaxed);
        activity.handling.fetch_add(1, Ordering::Relaxed);
        activity.stats.requests.fetch_add(1, Ordering::Relaxed);
        Handling(activity)
    }
}

impl Drop for Handling {
    fn drop(&mut self) {
        self.0.handling.fetch_sub(1, Ordering::Relaxed);
        self.0.stats.requests.fetch_sub(1, Ordering::Relaxed);
        self.0.touch();
    }
}
