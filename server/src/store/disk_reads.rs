//! Table reads the page cache could not serve: the ones that wait for a
//! disk, and the ones that decide throughput when tables are larger than RAM.
//!
//! `store::pread` tells them apart (its read that refuses to wait failed
//! first) and reports each to its store's [`DiskReads`]. They are counted by
//! kind of read on `/metrics`, and with a trace (`StoreOptions::read_trace`,
//! the benchmarks' `--read-trace FILE`) written one per line, with
//! the request and the table lookup they belong to, so that
//! `server/bench/read-trace.py` can say which tables and parts of tables
//! they go to and which of them repeat a read made shortly before. Without
//! read-around (`--read-around 0`) every read is a plain read and nothing is
//! reported: hits and misses cannot be told apart then.
//!
//! The trace is written by its own thread through a bounded queue, so a
//! probe never waits for it; lines that do not fit are dropped and counted.

use std::{
    fs::File,
    io::{self, BufWriter, Write},
    ops::Range,
    path::{Path, PathBuf},
    sync::{
        OnceLock,
        atomic::{AtomicU64, Ordering::Relaxed},
        mpsc::{self, Receiver, RecvTimeoutError, SyncSender},
    },
    time::{Duration, Instant},
};

use shakmaty_syzygy::filesystem::ReadHint;

use super::{
    context,
    layout::file_name,
    read_counters::{KINDS, kind_index},
};
use crate::exposition::{Exposition, Kind};

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

#[derive(Default)]
struct Counter {
    reads: AtomicU64,
    nanos: AtomicU64,
}

/// One store's reads that waited for the disk, and its trace if asked for.
#[derive(Default)]
pub struct DiskReads {
    counts: [Counter; KINDS.len()],
    /// Reads that waited for another probe's read of their window.
    joined: AtomicU64,
    trace: OnceLock<Trace>,
}

impl DiskReads {
    /// Disk reads made so far, of all kinds (not counting those that
    /// waited for another probe's read).
    pub fn total(&self) -> u64 {
        self.counts.iter().map(|c| c.reads.load(Relaxed)).sum()
    }

    /// Counts a read that waited for the disk, and traces it if asked to.
    pub fn record(&self, read: &DiskRead) {
        if let Some(trace) = self.trace.get() {
            trace.send(read);
        }
        if read.joined {
            self.joined.fetch_add(1, Relaxed);
            return;
        }
        let counter = &self.counts[kind_index(read.hint)];
        counter.reads.fetch_add(1, Relaxed);
        let nanos = u64::try_from(read.took.as_nanos()).unwrap_or(u64::MAX);
        counter.nanos.fetch_add(nanos, Relaxed);
    }

    /// Starts writing every disk read to `path` (replacing it), one line
    /// each, by a thread of its own that lives as long as the process.
    pub fn start_trace(self: &std::sync::Arc<Self>, path: &Path) -> Result<(), TraceError> {
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
            epoch: Instant::now(),
        };
        self.trace
            .set(trace)
            .map_err(|_| TraceError::AlreadyStarted)?;
        let shown = path.display().to_string();
        let reads = std::sync::Arc::clone(self);
        std::thread::Builder::new()
            .name("read-trace".into())
            .spawn(move || reads.write_trace(out, rx, &shown))
            .map_err(create)?;
        Ok(())
    }

    fn tick_line(&self) -> String {
        let (dropped, elapsed) = self.trace.get().map_or((0, Duration::ZERO), |t| {
            (t.dropped.load(Relaxed), t.epoch.elapsed())
        });
        format!(
            "#tick\t{}\t{}\t{}\t{}\t{dropped}",
            millis(elapsed),
            context::requests_started(),
            context::lookups_started(),
            self.total(),
        )
    }

    /// The writer thread: lines as they come, a tick every second, flushed
    /// whenever the queue is empty, so a killed server leaves a usable file.
    fn write_trace(&self, mut out: BufWriter<File>, rx: Receiver<String>, path: &str) {
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
                        writeln!(out, "{}", self.tick_line())?;
                    }
                    out.flush()
                });
            if let Err(err) = written {
                tracing::error!("cannot write the read trace {path}: {err}; tracing stops");
                return;
            }
        }
    }

    /// The counters, for `/metrics`.
    pub fn render(&self, out: &mut Exposition) {
        let name = "zugzwang_table_disk_reads_total";
        out.family(name, "Table reads the page cache could not serve (they waited for the disk), by kind of read; counted with --read-around above 0 only.", Kind::Counter);
        for (counter, (_, kind)) in self.counts.iter().zip(KINDS) {
            out.sample(name, &[("kind", kind)], counter.reads.load(Relaxed));
        }
        out.counter(
            "zugzwang_table_disk_reads_joined_total",
            "Table reads that missed the page cache while another probe was reading the same window, and waited for that read instead of making their own.",
            self.joined.load(Relaxed),
        );
        let name = "zugzwang_table_disk_read_seconds_total";
        out.family(
            name,
            "Time spent in table reads that waited for the disk, by kind of read.",
            Kind::Counter,
        );
        for (counter, (_, kind)) in self.counts.iter().zip(KINDS) {
            let secs = counter.nanos.load(Relaxed) as f64 / 1e9;
            out.sample(name, &[("kind", kind)], secs);
        }
    }
}

/// The columns of a trace line. Lines starting with `#tick` are written
/// every second instead: time, requests started, lookups begun, disk reads
/// counted and trace lines dropped so far.
pub const HEADER: &str =
    "t_ms\tms\trequest\tlookup\ttable\tkind\toffset\tlen\twindow_start\twindow_len\tjoined";

struct Trace {
    tx: SyncSender<String>,
    dropped: AtomicU64,
    /// When the trace began: lines give their time since.
    epoch: Instant,
}

impl Trace {
    fn send(&self, read: &DiskRead) {
        if self.tx.try_send(self.line(read)).is_err() {
            let before = self.dropped.fetch_add(1, Relaxed);
            if before.is_power_of_two() || before == 0 {
                tracing::warn!("read trace falling behind: {} lines dropped", before + 1);
            }
        }
    }

    fn line(&self, read: &DiskRead) -> String {
        format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            millis(read.started.saturating_duration_since(self.epoch)),
            millis(read.took),
            context::current_request_id(),
            context::current_lookup(),
            file_name(read.path),
            kind_label(read.hint),
            read.offset,
            read.len,
            read.window.start,
            read.window.end - read.window.start,
            u8::from(read.joined),
        )
    }
}

fn millis(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

fn kind_label(hint: ReadHint) -> &'static str {
    KINDS[kind_index(hint)].1
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
        let (tx, _rx) = mpsc::sync_channel(1);
        let trace = Trace {
            tx,
            dropped: AtomicU64::new(0),
            epoch: Instant::now(),
        };
        let line = trace.line(&read);
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
        context::begin_lookup();
        let here = context::current_lookup();
        let there = std::thread::spawn(|| {
            context::begin_lookup();
            context::current_lookup()
        })
        .join()
        .expect("thread");
        assert!(here > 0 && there > 0 && here != there);
        assert_eq!(context::current_lookup(), here);
    }

    #[test]
    fn two_stores_count_their_own_disk_reads() {
        let (one, two) = (DiskReads::default(), DiskReads::default());
        let read = DiskRead {
            path: Path::new("/tables/KQvK.rtbw"),
            hint: ReadHint::Data,
            offset: 0,
            len: 32,
            window: 0..4096,
            joined: false,
            started: Instant::now(),
            took: Duration::from_micros(10),
        };
        one.record(&read);
        assert_eq!((one.total(), two.total()), (1, 0));
    }
}
