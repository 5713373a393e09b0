//! Table reads gone to the disk and not back yet, so that one that hangs
//! (a dying disk, a hung NFS mount) is seen instead of spreading.
//!
//! A thread blocked in `pread(2)` cannot be called back: it holds its probe
//! thread until the kernel answers. What can be bounded is how many more
//! join it. So every read that goes to the disk (a page-cache miss, or a
//! descriptor reopened) is registered here with its table and start while
//! it runs, and a table with a read older than the limit
//! (`--stuck-read-secs`) is *suspect*: further reads of it that would go to
//! the disk are refused at once ([`StuckRead`], a 503 naming the table),
//! and the engine refuses probes that may need it before they take a probe
//! thread. The mark lifts when the read returns. Page-cache hits and the
//! chunk cache never come here, so the hot path pays nothing; a read that
//! does comes here twice (a lock of one of a few shards each time), beside
//! a system call that waited for a disk.
//!
//! A read of a table's header means the table is being opened: shakmaty-syzygy
//! opens a table once, and every other probe that needs it meanwhile waits
//! for that open inside the library, with no timeout. [`ReadsInFlight::opening`]
//! names such tables, so that the engine keeps those probes off the async
//! workers and waits for the open without a probe thread (`engine::pool`).
//!
//! [`stall_reads_of`] makes reads hang on purpose, for tests.

use std::{
    fmt, io,
    sync::{
        Arc, Condvar, Mutex, RwLock,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed},
    },
    time::{Duration, Instant},
};

use shakmaty_syzygy::filesystem::ReadHint;

use crate::{
    exposition::{Exposition, Kind},
    sync::{lock, read, wait, write},
};

/// How long a read may be out before its table is suspect, unless told
/// (`--stuck-read-secs`): far above a loaded disk's worst seek (tens of
/// milliseconds), well below the request deadline (10 s), so the refusals
/// start before requests time out.
pub const DEFAULT_STUCK_READ: Duration = Duration::from_secs(3);

const SHARDS: usize = 8;

/// The disk reads of one store in progress.
pub struct ReadsInFlight {
    limit: Duration,
    shards: [Mutex<Vec<Entry>>; SHARDS],
    /// Reads in flight, all shards: at 0 every question is answered
    /// without a lock.
    count: AtomicUsize,
    /// Of them, reads of a table's header (the table is being opened).
    opening: AtomicUsize,
    next_id: AtomicU64,
    epoch: Instant,
    /// When `suspects` was last worked out, in ns after `epoch`.
    looked: AtomicU64,
    suspects: RwLock<Arc<[Suspect]>>,
    any_suspect: AtomicBool,
    /// Reads and probes refused because of a suspect table, and waits for
    /// another's read given up.
    refused: AtomicU64,
}

struct Entry {
    id: u64,
    table: Arc<str>,
    started: Instant,
    opening: bool,
}

/// A table with a read out longer than the limit.
#[derive(Debug, Clone)]
pub struct Suspect {
    /// The file name (`KQvKR.rtbw`).
    pub table: Arc<str>,
    /// When its oldest read in flight started.
    pub since: Instant,
}

impl Default for ReadsInFlight {
    fn default() -> Self {
        ReadsInFlight::new(DEFAULT_STUCK_READ)
    }
}

impl ReadsInFlight {
    /// A table is suspect once one of its reads has been out for `limit`.
    pub fn new(limit: Duration) -> ReadsInFlight {
        ReadsInFlight {
            limit,
            shards: Default::default(),
            count: AtomicUsize::new(0),
            opening: AtomicUsize::new(0),
            next_id: AtomicU64::new(0),
            epoch: Instant::now(),
            looked: AtomicU64::new(0),
            suspects: RwLock::new(Arc::from([])),
            any_suspect: AtomicBool::new(false),
            refused: AtomicU64::new(0),
        }
    }

    /// `--stuck-read-secs`.
    pub fn limit(&self) -> Duration {
        self.limit
    }

    /// Registers a read of `table` about to go to the disk, until the
    /// returned guard is dropped.
    pub fn begin<'a>(&'a self, table: &Arc<str>, hint: ReadHint) -> Reading<'a> {
        let id = self.next_id.fetch_add(1, Relaxed);
        let opening = hint == ReadHint::Header;
        let started = Instant::now();
        lock(&self.shards[id as usize % SHARDS]).push(Entry {
            id,
            table: Arc::clone(table),
            started,
            opening,
        });
        self.count.fetch_add(1, Relaxed);
        if opening {
            self.opening.fetch_add(1, Relaxed);
        }
        Reading {
            reads: self,
            id,
            started,
            opening,
        }
    }

    /// Nothing that should hold a probe back: no suspect table and no table
    /// being opened. One relaxed load while no read is out.
    pub fn calm(&self) -> bool {
        if self.count.load(Relaxed) == 0 {
            return true;
        }
        if self.opening.load(Relaxed) > 0 {
            return false;
        }
        self.look_if_stale();
        !self.any_suspect.load(Relaxed)
    }

    /// The suspect tables now (worked out at most every few tens of
    /// milliseconds, and at once when a stuck read returns).
    pub fn suspects(&self) -> Arc<[Suspect]> {
        if self.count.load(Relaxed) == 0 {
            return Arc::from([]);
        }
        self.suspects_now()
    }

    /// `table`'s mark, if it is suspect.
    pub fn suspect(&self, table: &str) -> Option<Suspect> {
        if self.count.load(Relaxed) == 0 {
            return None;
        }
        self.suspects_now()
            .iter()
            .find(|s| &*s.table == table)
            .cloned()
    }

    /// The tables being opened now (a header read out), with when that read
    /// started.
    pub fn opening(&self) -> Vec<(Arc<str>, Instant)> {
        if self.opening.load(Relaxed) == 0 {
            return Vec::new();
        }
        let mut tables = Vec::new();
        for shard in &self.shards {
            for entry in lock(shard).iter().filter(|e| e.opening) {
                tables.push((Arc::clone(&entry.table), entry.started));
            }
        }
        tables
    }

    /// Reads out now.
    pub fn in_flight(&self) -> usize {
        self.count.load(Relaxed)
    }

    /// How long the oldest read out has been.
    pub fn oldest(&self) -> Option<Duration> {
        if self.count.load(Relaxed) == 0 {
            return None;
        }
        self.shards
            .iter()
            .filter_map(|shard| lock(shard).iter().map(|e| e.started).min())
            .min()
            .map(|started| started.elapsed())
    }

    /// The refusal of a read or probe that needs `suspect` (counted).
    pub fn refusal(&self, suspect: &Suspect) -> StuckRead {
        self.refused.fetch_add(1, Relaxed);
        StuckRead {
            table: suspect.table.to_string(),
            waited: suspect.since.elapsed(),
            limit: self.limit,
        }
    }

    /// A wait for another probe's read of `table`, out for `waited`, given
    /// up (counted).
    pub fn gave_up(&self, table: &str, waited: Duration) -> StuckRead {
        self.refused.fetch_add(1, Relaxed);
        StuckRead {
            table: table.to_string(),
            waited,
            limit: self.limit,
        }
    }

    /// Reads and probes refused because of a suspect table, since start.
    pub fn refused(&self) -> u64 {
        self.refused.load(Relaxed)
    }

    /// The figures: reads out, the oldest's age, the suspect tables.
    pub fn render(&self, out: &mut Exposition) {
        out.gauge(
            "zugzwang_table_reads_in_flight",
            "Table reads gone to the disk and not returned yet.",
            self.in_flight() as u64,
        );
        let name = "zugzwang_oldest_read_in_flight_seconds";
        out.family(
            name,
            "How long the oldest table read in flight has been waiting for the disk (0: none out). Above --stuck-read-secs its table is suspect.",
            Kind::Gauge,
        );
        out.sample(name, &[], seconds(self.oldest().unwrap_or_default()));
        let suspects = self.suspects();
        out.gauge(
            "zugzwang_tables_stuck",
            "Tables with a read out longer than --stuck-read-secs (a failing or hung disk): probes that need them are answered 503 until the read returns.",
            suspects.len() as u64,
        );
        let name = "zugzwang_table_stuck_seconds";
        out.family(
            name,
            "A suspect table, and how long its oldest read has been out.",
            Kind::Gauge,
        );
        for suspect in suspects.iter() {
            let age = seconds(suspect.since.elapsed());
            out.sample(name, &[("table", &suspect.table)], age);
        }
        out.counter(
            "zugzwang_stuck_read_refusals_total",
            "Reads and probes answered 503 because a table they need is suspect, and waits for another probe's read given up after --stuck-read-secs.",
            self.refused(),
        );
    }

    /// The suspect tables, worked out again if the last look is older than
    /// a tick.
    fn suspects_now(&self) -> Arc<[Suspect]> {
        self.look_if_stale();
        Arc::clone(&read(&self.suspects))
    }

    /// Works the suspects out again if the last look is older than a
    /// tick (one thread does; the others keep the last list meanwhile).
    fn look_if_stale(&self) {
        let now = self.nanos(Instant::now());
        let looked = self.looked.load(Relaxed);
        if now.saturating_sub(looked) >= self.tick()
            && self
                .looked
                .compare_exchange(looked, now, Relaxed, Relaxed)
                .is_ok()
        {
            self.look();
        }
    }

    /// How stale the list of suspects may be: an eighth of the limit,
    /// within 10 to 250 ms.
    fn tick(&self) -> u64 {
        let tick = (self.limit / 8).clamp(Duration::from_millis(10), Duration::from_millis(250));
        tick.as_nanos() as u64
    }

    fn nanos(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.epoch).as_nanos() as u64
    }

    /// Works the suspect tables out from the reads out, logging those
    /// newly marked.
    fn look(&self) {
        let now = Instant::now();
        let mut found: Vec<Suspect> = Vec::new();
        for shard in &self.shards {
            for entry in lock(shard).iter() {
                if now.saturating_duration_since(entry.started) < self.limit {
                    continue;
                }
                match found.iter_mut().find(|s| s.table == entry.table) {
                    Some(s) => s.since = s.since.min(entry.started),
                    None => found.push(Suspect {
                        table: Arc::clone(&entry.table),
                        since: entry.started,
                    }),
                }
            }
        }
        found.sort_by(|a, b| a.table.cmp(&b.table));
        let mut suspects = write(&self.suspects);
        for suspect in &found {
            if !suspects.iter().any(|s| s.table == suspect.table) {
                tracing::warn!(
                    "table {}: a read has not returned for {:.1} s (its disk may be failing or hung); probes that need it are answered 503 until it returns",
                    suspect.table,
                    now.saturating_duration_since(suspect.since).as_secs_f64()
                );
            }
        }
        self.any_suspect.store(!found.is_empty(), Relaxed);
        *suspects = Arc::from(found);
    }

    fn end(&self, reading: &Reading<'_>) {
        let mut shard = lock(&self.shards[reading.id as usize % SHARDS]);
        let Some(at) = shard.iter().position(|e| e.id == reading.id) else {
            return;
        };
        let entry = shard.swap_remove(at);
        drop(shard);
        self.count.fetch_sub(1, Relaxed);
        if reading.opening {
            self.opening.fetch_sub(1, Relaxed);
        }
        let took = reading.started.elapsed();
        if took >= self.limit {
            tracing::warn!(
                "table {}: a read returned after {:.1} s; the table is no longer suspect unless another read of it is still out",
                entry.table,
                took.as_secs_f64()
            );
            self.looked.store(self.nanos(Instant::now()), Relaxed);
            self.look();
        }
    }
}

/// A read in flight; dropping it says the read returned.
pub struct Reading<'a> {
    reads: &'a ReadsInFlight,
    id: u64,
    started: Instant,
    opening: bool,
}

impl Drop for Reading<'_> {
    fn drop(&mut self) {
        self.reads.end(self);
    }
}

/// Why a read was refused: its table has a read out longer than the limit,
/// or the read it waited for did not return within it. Carried inside an
/// `io::Error` up through shakmaty-syzygy; the engine answers 503 naming
/// the table.
#[derive(Debug, Clone)]
pub struct StuckRead {
    /// The file name (`KQvKR.rtbw`).
    pub table: String,
    /// How long the read has been out.
    pub waited: Duration,
    /// `--stuck-read-secs`.
    pub limit: Duration,
}

impl StuckRead {
    pub fn into_io(self) -> io::Error {
        io::Error::new(io::ErrorKind::TimedOut, self)
    }
}

impl fmt::Display for StuckRead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: a read has not returned for {:.1} s (more than --stuck-read-secs {:.1}); its disk may be failing or hung",
            self.table,
            self.waited.as_secs_f64(),
            self.limit.as_secs_f64()
        )
    }
}

impl std::error::Error for StuckRead {}

/// The refusal inside `err`, if it is one.
pub fn stuck_read(err: &io::Error) -> Option<&StuckRead> {
    err.get_ref().and_then(|e| e.downcast_ref::<StuckRead>())
}

/// The name a file's reads are registered under: a fast-tier prefix
/// (`KQvKR.rtbw.prefix`) counts as its table.
pub fn table_of(file_name: &str) -> Arc<str> {
    Arc::from(file_name.strip_suffix(".prefix").unwrap_or(file_name))
}

/// For tests: while the returned guard lives, every read of the tables
/// whose file name starts with `stem` and a dot (`KQvKR` stalls
/// `KQvKR.rtbw` and `KQvKR.rtbz`) that reaches the pread layer behaves as
/// a page-cache miss on a disk that does not answer: it hangs until the
/// guard is dropped. The server never calls this; while no test does, a
/// read pays one relaxed load for it.
pub fn stall_reads_of(stem: &str) -> Stall {
    let mut stems = lock(&STALLS.stems);
    stems.push(format!("{stem}."));
    STALLING.store(true, Relaxed);
    drop(stems);
    Stall {
        stem: format!("{stem}."),
    }
}

/// Reads of a table stall while this lives ([`stall_reads_of`]).
pub struct Stall {
    stem: String,
}

impl Drop for Stall {
    fn drop(&mut self) {
        let mut stems = lock(&STALLS.stems);
        if let Some(at) = stems.iter().position(|s| *s == self.stem) {
            stems.swap_remove(at);
        }
        STALLING.store(!stems.is_empty(), Relaxed);
        drop(stems);
        STALLS.released.notify_all();
    }
}

struct Stalls {
    stems: Mutex<Vec<String>>,
    released: Condvar,
}

static STALLING: AtomicBool = AtomicBool::new(false);
static STALLS: Stalls = Stalls {
    stems: Mutex::new(Vec::new()),
    released: Condvar::new(),
};

/// Whether a test stalls the reads of `table` ([`stall_reads_of`]).
pub fn stalled(table: &str) -> bool {
    STALLING.load(Relaxed) && lock(&STALLS.stems).iter().any(|s| table.starts_with(s))
}

/// Hangs while a test stalls the reads of `table`.
pub fn wait_while_stalled(table: &str) {
    if !STALLING.load(Relaxed) {
        return;
    }
    let mut stems = lock(&STALLS.stems);
    while stems.iter().any(|s| table.starts_with(s)) {
        stems = wait(&STALLS.released, stems);
    }
}

/// A duration as `/metrics` gives seconds: to the millisecond.
fn seconds(duration: Duration) -> String {
    format!("{:.3}", duration.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use std::thread;

    use super::*;

    #[test]
    fn a_read_out_past_the_limit_marks_its_table_until_it_returns() {
        let reads = ReadsInFlight::new(Duration::from_millis(40));
        let stuck: Arc<str> = "KQvKR.rtbw".into();
        let other: Arc<str> = "KRvK.rtbw".into();
        assert!(reads.calm());
        let reading = reads.begin(&stuck, ReadHint::Data);
        let quick = reads.begin(&other, ReadHint::Data);
        drop(quick);
        assert!(
            reads.suspect("KQvKR.rtbw").is_none(),
            "not before the limit"
        );
        thread::sleep(Duration::from_millis(60));
        let suspect = reads.suspect("KQvKR.rtbw").expect("suspect past the limit");
        assert!(suspect.since.elapsed() >= Duration::from_millis(40));
        assert!(reads.suspect("KRvK.rtbw").is_none());
        assert!(!reads.calm());
        assert!(reads.oldest().expect("one out") >= Duration::from_millis(40));
        let refusal = reads.refusal(&suspect).into_io();
        assert_eq!(
            stuck_read(&refusal).map(|s| s.table.as_str()),
            Some("KQvKR.rtbw")
        );
        assert_eq!(reads.refused(), 1);
        drop(reading);
        assert!(reads.suspect("KQvKR.rtbw").is_none(), "lifted on return");
        assert!(reads.calm());
        assert_eq!((reads.in_flight(), reads.oldest()), (0, None));
    }

    #[test]
    fn header_reads_name_the_tables_being_opened() {
        let reads = ReadsInFlight::default();
        let table: Arc<str> = "KQvKR.rtbz".into();
        let data = reads.begin(&table, ReadHint::Data);
        assert!(reads.opening().is_empty());
        assert!(reads.calm(), "an ordinary read holds nobody back");
        let header = reads.begin(&table, ReadHint::Header);
        assert_eq!(reads.opening().len(), 1);
        assert!(!reads.calm());
        drop((data, header));
        assert!(reads.opening().is_empty() && reads.calm());
    }

    #[test]
    fn the_figures_show_the_oldest_read_and_the_suspects() {
        let reads = ReadsInFlight::new(Duration::from_millis(10));
        let table: Arc<str> = "KQvKR.rtbw".into();
        let _reading = reads.begin(&table, ReadHint::Data);
        thread::sleep(Duration::from_millis(30));
        let mut out = Exposition::default();
        reads.render(&mut out);
        let text = out.into_string();
        assert!(text.contains("zugzwang_tables_stuck 1"), "{text}");
        assert!(
            text.contains("zugzwang_table_stuck_seconds{table=\"KQvKR.rtbw\"}"),
            "{text}"
        );
        let oldest: f64 = text
            .lines()
            .find_map(|l| l.strip_prefix("zugzwang_oldest_read_in_flight_seconds "))
            .and_then(|v| v.parse().ok())
            .expect("oldest read's age");
        assert!(oldest >= 0.03, "{text}");
    }

    #[test]
    fn prefixes_count_as_their_table() {
        assert_eq!(&*table_of("KQvKR.rtbw.prefix"), "KQvKR.rtbw");
        assert_eq!(&*table_of("KQvKR.rtbz"), "KQvKR.rtbz");
    }
}
