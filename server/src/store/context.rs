//! The context a table read is made in: the request it counts for, whether
//! it may wait for a disk, and the lookup it belongs to.
//!
//! # Two passes: inline, then the pool
//!
//! A probe whose bytes are all in memory takes microseconds, and handing it
//! to a blocking thread costs more than the probe itself (futex wake, two
//! context switches, park: two thirds of the hot CPU, see
//! server/docs/benchmarks.md). So the engine first probes every position of
//! a request on the async worker inside [`without_waiting`]: there every
//! read must come from memory (the page cache through `RWF_NOWAIT`, or the
//! process's own caches), and one that would have to wait for a disk, or
//! open a file, is refused at once ([`refuse`]). The probe then comes back
//! as [`Inline::WouldWait`], and only such probes go to the blocking pool,
//! all together, so a cold request's reads still reach the disks at the same
//! time. A refusal is never an answer to a client.
//!
//! # Why per thread
//!
//! The layers that read (the chunk cache, the tiered store, the pread files)
//! sit under shakmaty-syzygy, which cannot pass a context down. A probe runs
//! on one thread from start to end, so the context is this thread's: the
//! HTTP handler sets the request's [`RequestReads`] as a task-local
//! ([`counting`]), and the engine installs it on whichever thread probes
//! ([`with_request`], on the async worker and on the blocking pool alike).

use std::{
    cell::{Cell, RefCell},
    future::Future,
    io,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering::Relaxed},
    },
};

use shakmaty_syzygy::filesystem::ReadHint;

/// Where a read was served from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tier {
    Fast,
    Slow,
    /// Process memory: the chunks kept by `store::chunk_cache`. No read at all.
    Cache,
}

impl Tier {
    pub const ALL: [Tier; 3] = [Tier::Fast, Tier::Slow, Tier::Cache];

    pub fn index(self) -> usize {
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

/// What a probe tried without waiting came to.
#[derive(Debug)]
pub enum Inline<T> {
    /// Every read came from memory: the probe's own outcome.
    Done(T),
    /// A read would have waited for a disk: probe again on the pool.
    WouldWait,
}

/// A request's reads by tier, filled from whichever threads probe for it,
/// and the positions the engine probed for it.
#[derive(Debug)]
pub struct RequestReads {
    /// Requests are numbered in the order they start, so a read trace
    /// (`store::disk_reads`) can tell one request's reads from another's
    /// and leave out the warm-up.
    id: u64,
    fast: AtomicU64,
    slow: AtomicU64,
    cached: AtomicU64,
    /// GETs to remote sources (`store::remote`): at most one per slow read.
    gets: AtomicU64,
    /// Positions probed in the tables (counted by the engine, which knows
    /// what a position is; `/metrics` shows them by route).
    probes: AtomicU64,
}

/// Reads of one request or one thread, by tier.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub fast: u64,
    pub slow: u64,
    pub cached: u64,
    /// GETs to remote sources (0 where the tables are on disk).
    pub gets: u64,
}

static NEXT_REQUEST: AtomicU64 = AtomicU64::new(1);
static NEXT_LOOKUP: AtomicU64 = AtomicU64::new(1);

impl Default for RequestReads {
    fn default() -> Self {
        RequestReads {
            id: NEXT_REQUEST.fetch_add(1, Relaxed),
            fast: AtomicU64::new(0),
            slow: AtomicU64::new(0),
            cached: AtomicU64::new(0),
            gets: AtomicU64::new(0),
            probes: AtomicU64::new(0),
        }
    }
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
            gets: self.gets.load(Relaxed),
        }
    }

    /// Positions probed for this request so far.
    pub fn probes(&self) -> u64 {
        self.probes.load(Relaxed)
    }

    /// Counts `positions` probed for this request.
    pub fn count_probes(&self, positions: usize) {
        self.probes.fetch_add(positions as u64, Relaxed);
    }

    fn count(&self, tier: Tier) {
        let counter = match tier {
            Tier::Fast => &self.fast,
            Tier::Slow => &self.slow,
            Tier::Cache => &self.cached,
        };
        counter.fetch_add(1, Relaxed);
    }
}

/// Requests counted so far (the number the next one gets, minus one).
pub fn requests_started() -> u64 {
    NEXT_REQUEST.load(Relaxed) - 1
}

/// Lookups begun so far (see [`begin_lookup`]).
pub fn lookups_started() -> u64 {
    NEXT_LOOKUP.load(Relaxed) - 1
}

/// One read, as the per-thread log records it (for tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadEvent {
    pub table: Arc<str>,
    pub tier: Tier,
    pub hint: ReadHint,
    pub offset: u64,
    pub len: usize,
}

/// This thread's context.
#[derive(Default)]
struct Context {
    request: Option<Arc<RequestReads>>,
    /// A read was refused since [`without_waiting`] began.
    refused: bool,
    /// Of the refusals, one was of opening a table (see [`refuse_open`]).
    refused_open: bool,
    /// The lookup this thread is in; 0: none yet.
    lookup: u64,
    /// Every read of this thread, once a test asked for it.
    log: Option<Vec<ReadEvent>>,
}

thread_local! {
    static CONTEXT: RefCell<Context> = RefCell::default();
    /// Kept apart from `CONTEXT`: read on every read, it must cost no borrow.
    static REFUSING: Cell<bool> = const { Cell::new(false) };
}

/// Whether any thread ever started a read log (tests do; the server never
/// does): until then a read costs one relaxed load, not a log lookup.
static THREAD_LOGS: AtomicBool = AtomicBool::new(false);

tokio::task_local! {
    /// The reads of the request being served, set around the engine call by
    /// the HTTP handler and carried onto the threads that probe.
    static REQUEST_READS: Arc<RequestReads>;
}

/// Runs `work` (an engine call) counting the table reads it makes,
/// wherever they run; returns them with its outcome.
pub async fn counting<T>(work: impl Future<Output = T>) -> (T, Arc<RequestReads>) {
    let reads = Arc::new(RequestReads::default());
    let result = REQUEST_READS.scope(Arc::clone(&reads), work).await;
    (result, reads)
}

/// The read counter of the request the calling task serves, if any: what
/// the engine hands to the thread that probes for it.
pub fn current_request() -> Option<Arc<RequestReads>> {
    REQUEST_READS.try_with(Arc::clone).ok()
}

/// The number of the request this thread reads for; 0 outside requests.
pub fn current_request_id() -> u64 {
    CONTEXT.with(|c| c.borrow().request.as_ref().map_or(0, |r| r.id))
}

/// Counts this thread's reads into `reads` while `work` runs.
pub fn with_request<T>(reads: Option<Arc<RequestReads>>, work: impl FnOnce() -> T) -> T {
    let previous = CONTEXT.with(|c| std::mem::replace(&mut c.borrow_mut().request, reads));
    let result = work();
    CONTEXT.with(|c| c.borrow_mut().request = previous);
    result
}

/// Counts `positions` probed for the request this thread serves, if any
/// (work on the blocking pool, inside [`with_request`]).
pub fn count_probes(positions: usize) {
    CONTEXT.with(|c| {
        if let Some(reads) = &c.borrow().request {
            reads.count_probes(positions);
        }
    });
}

/// Runs `work` with every read on this thread refusing to wait for a disk:
/// [`Inline::WouldWait`] if one was refused, whatever `work` made of it.
pub fn without_waiting<T>(work: impl FnOnce() -> T) -> Inline<T> {
    /// Restores the mode even if `work` panics (the engine catches probe
    /// panics and goes on with this thread).
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            REFUSING.with(|r| r.set(self.0));
        }
    }
    let _restore = Restore(REFUSING.with(|r| r.replace(true)));
    let before = CONTEXT.with(|c| std::mem::replace(&mut c.borrow_mut().refused, false));
    let result = work();
    let refused = CONTEXT.with(|c| std::mem::replace(&mut c.borrow_mut().refused, before));
    if refused {
        Inline::WouldWait
    } else {
        Inline::Done(result)
    }
}

/// Whether reads on this thread must not wait (inside [`without_waiting`]).
pub fn refusing() -> bool {
    REFUSING.with(Cell::get)
}

/// Refuses a read that would wait: remembered for [`without_waiting`], and
/// the error the read returns to its caller (shakmaty-syzygy passes it up).
pub fn refuse() -> io::Error {
    CONTEXT.with(|c| c.borrow_mut().refused = true);
    io::Error::new(
        io::ErrorKind::WouldBlock,
        "the read would have to wait for the disk",
    )
}

/// Refuses opening a table inside [`without_waiting`], as [`refuse`]
/// refuses a read, remembering that the probe needs a table not open yet:
/// the engine then probes it on the pool ahead of the request's other
/// probes, which would otherwise all wait for that one open inside
/// shakmaty-syzygy, each on a thread of its own (`engine::pool`).
pub fn refuse_open() -> io::Error {
    CONTEXT.with(|c| c.borrow_mut().refused_open = true);
    refuse()
}

/// Whether an open was refused on this thread since the last call
/// ([`refuse_open`]); clears it.
pub fn take_refused_open() -> bool {
    CONTEXT.with(|c| std::mem::take(&mut c.borrow_mut().refused_open))
}

/// Whether a read on this thread was refused since [`without_waiting`]
/// began: the error in hand is then that refusal, not a damaged table.
pub fn refused() -> bool {
    refusing() && CONTEXT.with(|c| c.borrow().refused)
}

/// Marks the start of a table lookup on this thread (its sparse-index
/// read), so the disk reads that follow on it are grouped under one lookup.
pub fn begin_lookup() {
    let id = NEXT_LOOKUP.fetch_add(1, Relaxed);
    CONTEXT.with(|c| c.borrow_mut().lookup = id);
}

/// The lookup this thread is in; 0 before its first.
pub fn current_lookup() -> u64 {
    CONTEXT.with(|c| c.borrow().lookup)
}

/// Counts one GET to a remote source for the request this thread serves.
pub fn count_get() {
    CONTEXT.with(|c| {
        if let Some(reads) = &c.borrow().request {
            reads.gets.fetch_add(1, Relaxed);
        }
    });
}

/// Counts one read for the request this thread serves, and logs it if a
/// test asked for this thread's reads.
pub fn count_read(table: &Arc<str>, tier: Tier, hint: ReadHint, offset: u64, len: usize) {
    let logging = THREAD_LOGS.load(Relaxed);
    CONTEXT.with(|c| {
        let mut context = c.borrow_mut();
        if let Some(reads) = &context.request {
            reads.count(tier);
        }
        if !logging {
            return;
        }
        if let Some(log) = context.log.as_mut() {
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

/// Starts (or restarts) recording every read of this thread (for tests).
pub fn start_thread_log() {
    THREAD_LOGS.store(true, Relaxed);
    CONTEXT.with(|c| c.borrow_mut().log = Some(Vec::new()));
}

/// The reads recorded since `start_thread_log`, emptying the log.
pub fn take_thread_log() -> Vec<ReadEvent> {
    CONTEXT.with(|c| {
        c.borrow_mut()
            .log
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_holds_inside_only_and_survives_a_panic() {
        assert!(!refusing());
        assert!(matches!(without_waiting(refusing), Inline::Done(true)));
        assert!(!refusing());
        let caught = std::panic::catch_unwind(|| without_waiting(|| panic!("probe failed")));
        assert!(caught.is_err());
        assert!(!refusing(), "a panic must not leave the thread refusing");
    }

    #[test]
    fn a_refused_read_makes_the_attempt_would_wait_whatever_became_of_its_error() {
        let swallowed = without_waiting(|| {
            let _ = refuse();
            "the caller dropped the error"
        });
        assert!(matches!(swallowed, Inline::WouldWait));
        assert!(matches!(without_waiting(|| 7), Inline::Done(7)));
        assert!(!refused(), "outside the mode nothing counts as refused");
    }

    #[test]
    fn reads_count_for_the_request_installed_on_the_thread() {
        let reads = Arc::new(RequestReads::default());
        let table: Arc<str> = "KQvK.rtbw".into();
        with_request(Some(Arc::clone(&reads)), || {
            count_read(&table, Tier::Slow, ReadHint::Data, 0, 10);
            count_read(&table, Tier::Cache, ReadHint::Data, 0, 10);
        });
        count_read(&table, Tier::Slow, ReadHint::Data, 0, 10);
        assert_eq!(
            reads.tally(),
            Tally {
                fast: 0,
                slow: 1,
                cached: 1,
                gets: 0
            }
        );
    }
}
