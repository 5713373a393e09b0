//! Table reads the page cache could not serve: the ones that wait for a
//! disk, and the ones that decide throughput when tables are larger than RAM.
//!
//! `store::pread` tells them apart (its read that refuses to wait failed
//! first) and reports each here. They are counted by kind of read on
//! `/metrics`, and with `serve --read-trace FILE` written one per line, with
//! the request and the table lookup they belong to, so that
//! `server/bench/read-trace.py` can say which tables and parts of tables
//! they go to and which of them repeat a read made shortly before. Without
//! read-around (`--read-around 0`) every read is a plain read and nothing is
//! reported: hits and misses cannot be told apart then.
//!
//! The trace is written by its own thread through a bounded queue, so a
//! probe never waits for it; lines that do not fit are dropped and counted.

use std::{
    cell::Cell,
    fmt::Write as _,
    fs::File,
    io::{self, BufWriter, Write},
    ops::Range,
    path::{Path, PathBuf},
    sync::{
        LazyLock, OnceLock,
        atomic::{AtomicU64, Ordering::Relaxed},
        mpsc::{self, Receiver, RecvTimeoutError, SyncSender},
    },
    time::{Duration, Instant},
};

use shakmaty_syzygy::filesystem::ReadHint;

use super::{
    format::file_name,
    metrics::{self, KINDS},
};

/// Trace lines waiting for the writer before new ones are dropped.
const QUEUE: usize = 65_536;

/// How often the trace notes the requests and lookups so far.
const TICK: Duration = Duration::from_secs(1);

/// One read that waited for the disk.
#[derive(Debug, Clone)]
pub struct DiskRead<'a> {
    pub path: &'a Path,
    pub hint: ReadHint,
    /// The bytes asked for.
    pub offset: u64,
    pub len: usize,
    /// The bytes read from the disk for them (the window around them).
    pub window: Range<u64>,
    /// Another probe was reading the window already; this one waited for
    /// that read instead of making its own (`store::single_flight`).
    pub joined: bool,
    pub started: Instant,
    pub took: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot create the read trace {path}: {source} (is the directory there and writable?)")]
    Create { path: PathBuf, source: io::Error },
    #[error("a read trace is already being written; give --read-trace once")]
    AlreadyStarted,
}

struct Counter {
    reads: AtomicU64,
    nanos: AtomicU64,
}

static COUNTS: [Counter; KINDS.len()] = [const {
    Counter {
        reads: AtomicU64::new(0),
        nanos: AtomicU64::new(0),
    }
}; KINDS.len()];

/// Reads that waited for another probe's read of their window.
static JOINED: AtomicU64 = AtomicU64::new(0);
static NEXT_LOOKUP: AtomicU64 = AtomicU64::new(1);
static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);
static TRACE: OnceLock<Trace> = OnceLock::new();

thread_local! {
    /// The lookup this thread is in (see [`begin_lookup`]); 0: none yet.
    static LOOKUP: Cell<u64> = const { Cell::new(0) };
}

/// Marks the start of a table lookup on this thread (its sparse-index
/// read), so the disk reads that follow on it are grouped under one lookup.
pub fn begin_lookup() {
    LOOKUP.with(|l| l.set(NEXT_LOOKUP.fetch_add(1, Relaxed)));
}

/// Lookups begun so far.
pub fn lookups() -> u64 {
    NEXT_LOOKUP.load(Relaxed) - 1
}

/// Disk reads made so far, of all kinds (not counting those that waited
/// for another probe's read).
pub fn total() -> u64 {
    COUNTS.iter().map(|c| c.reads.load(Relaxed)).sum()
}

/// Counts a read that waited for the disk, and traces it if asked to.
pub fn record(read: &DiskRead) {
    if let Some(trace) = TRACE.get() {
        trace.send(read);
    }
    if read.joined {
        JOINED.fetch_add(1, Relaxed);
        return;
    }
    let counter = &COUNTS[metrics::kind_index(read.hint)];
    counter.reads.fetch_add(1, Relaxed);
    let nanos = u64::try_from(read.took.as_nanos()).unwrap_or(u64::MAX);
    counter.nanos.fetch_add(nanos, Relaxed);
}

/// Starts writing every disk read to `path` (replacing it), one line each.
pub fn start_trace(path: &Path) -> Result<(), TraceError> {
    let create = |source| TraceError::Create {
        path: path.to_path_buf(),
        source,
    };
    let mut out = BufWriter::new(File::create(path).map_err(create)?);
    writeln!(out, "{HEADER}").map_err(create)?;
    let (tx, rx) = mpsc::sync_channel(QUEUE);
    let trace = Trace {
        tx,
        dropped: AtomicU64::new(0),
    };
    TRACE.set(trace).map_err(|_| TraceError::AlreadyStarted)?;
    LazyLock::force(&EPOCH);
    let shown = path.display().to_string();
    std::thread::Builder::new()
        .name("read-trace".into())
        .spawn(move || write_trace(out, rx, &shown))
        .map_err(create)?;
    Ok(())
}

/// The columns of a trace line. Lines starting with `#tick` are written
/// every second instead: time, requests started, lookups begun, disk reads
/// counted and trace lines dropped so far.
pub const HEADER: &str =
    "t_ms\tms\trequest\tlookup\ttable\tkind\toffset\tlen\twindow_start\twindow_len\tjoined";

struct Trace {
    tx: SyncSender<String>,
    dropped: AtomicU64,
}

impl Trace {
    fn send(&self, read: &DiskRead) {
        if self.tx.try_send(line(read)).is_err() {
            let before = self.dropped.fetch_add(1, Relaxed);
            if before.is_power_of_two() || before == 0 {
                tracing::warn!("read trace falling behind: {} lines dropped", before + 1);
            }
        }
    }
}

fn millis(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

fn kind_label(hint: ReadHint) -> &'static str {
    KINDS[metrics::kind_index(hint)].1
}

fn line(read: &DiskRead) -> String {
    format!(
        "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
        millis(read.started.saturating_duration_since(*EPOCH)),
        millis(read.took),
        metrics::current_request_id(),
        LOOKUP.with(Cell::get),
        file_name(read.path),
        kind_label(read.hint),
        read.offset,
        read.len,
        read.window.start,
        read.window.end - read.window.start,
        u8::from(read.joined),
    )
}

fn tick_line() -> String {
    let dropped = TRACE.get().map_or(0, |t| t.dropped.load(Relaxed));
    format!(
        "#tick\t{}\t{}\t{}\t{}\t{dropped}",
        millis(EPOCH.elapsed()),
        metrics::requests_started(),
        lookups(),
        total(),
    )
}

/// The writer thread: lines as they come, a tick every second, flushed
/// whenever the queue is empty, so a killed server leaves a usable file.
fn write_trace(mut out: BufWriter<File>, rx: Receiver<String>, path: &str) {
    let mut next_tick = Instant::now();
    loop {
        let line = match rx.recv_timeout(TICK) {
            Ok(line) => Some(line),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => return,
        };
        let written = line
            .into_iter()
            .chain(rx.try_iter())
            .try_for_each(|line| writeln!(out, "{line}"))
            .and_then(|()| {
                if Instant::now() >= next_tick {
                    next_tick += TICK;
                    writeln!(out, "{}", tick_line())?;
                }
                out.flush()
            });
        if let Err(err) = written {
            tracing::error!("cannot write the read trace {path}: {err}; tracing stops");
            return;
        }
    }
}

/// The counters, in the Prometheus text exposition format.
pub fn render(out: &mut String) {
    out.push_str("# HELP zugzwang_table_disk_reads_total Table reads the page cache could not serve (they waited for the disk), by kind of read; counted with --read-around above 0 only.\n");
    out.push_str("# TYPE zugzwang_table_disk_reads_total counter\n");
    for (i, (_, kind)) in KINDS.iter().enumerate() {
        let _ = writeln!(
            out,
            "zugzwang_table_disk_reads_total{{kind=\"{kind}\"}} {}",
            COUNTS[i].reads.load(Relaxed)
        );
    }
    out.push_str("# HELP zugzwang_table_disk_reads_joined_total Table reads that missed the page cache while another probe was reading the same window, and waited for that read instead of making their own.\n");
    out.push_str("# TYPE zugzwang_table_disk_reads_joined_total counter\n");
    let _ = writeln!(
        out,
        "zugzwang_table_disk_reads_joined_total {}",
        JOINED.load(Relaxed)
    );
    out.push_str("# HELP zugzwang_table_disk_read_seconds_total Time spent in table reads that waited for the disk, by kind of read.\n");
    out.push_str("# TYPE zugzwang_table_disk_read_seconds_total counter\n");
    for (i, (_, kind)) in KINDS.iter().enumerate() {
        let secs = COUNTS[i].nanos.load(Relaxed) as f64 / 1e9;
        let _ = writeln!(
            out,
            "zugzwang_table_disk_read_seconds_total{{kind=\"{kind}\"}} {secs}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_line_has_every_column_of_the_header() {
        let read = DiskRead {
            path: Path::new("/tables/KQvK.rtbw"),
            hint: ReadHint::BlockLengths,
            offset: 140_000,
            len: 32,
            window: 131_072..262_144,
            joined: true,
            started: Instant::now(),
            took: Duration::from_micros(2500),
        };
        let line = line(&read);
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), HEADER.split('\t').count(), "{line}");
        assert_eq!(fields[1], "2.500");
        assert_eq!(
            &fields[4..],
            [
                "KQvK.rtbw",
                "block_lengths",
                "140000",
                "32",
                "131072",
                "131072",
                "1"
            ]
        );
    }

    #[test]
    fn lookups_are_numbered_per_thread() {
        begin_lookup();
        let here = LOOKUP.with(Cell::get);
        let there = std::thread::spawn(|| {
            begin_lookup();
            LOOKUP.with(Cell::get)
        })
        .join()
        .expect("thread");
        assert!(here > 0 && there > 0 && here != there);
        assert_eq!(LOOKUP.with(Cell::get), here);
    }
}
