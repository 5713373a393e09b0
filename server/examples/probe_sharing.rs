//! Where a hot request's probing goes, counted outside the server: data
//! reads of the root and of the moves, how many of them are distinct
//! blocks, and how many top-level probes an earlier request already made
//! (server/docs/benchmarks.md, "What the positions of a request share with
//! earlier requests").
//!
//! cargo run --release -p server --example probe_sharing -- TABLES LOG [REQUESTS]

use std::{
    collections::HashSet,
    io,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, PoisonError},
    time::Instant,
};

use shakmaty::{CastlingMode, Chess, EnPassantMode, Position, fen::Fen, zobrist::Zobrist128};
use shakmaty_syzygy::{
    Tablebase,
    filesystem::{Filesystem, OsFilesystem, RandomAccessFile, ReadHint},
};

/// Data-block reads since the last `take`: how many, and which.
#[derive(Default)]
struct Reads {
    data: u64,
    blocks: HashSet<(usize, u64)>,
}

struct CountingFilesystem {
    inner: OsFilesystem,
    reads: Arc<Mutex<Reads>>,
    opened: Mutex<usize>,
}

struct CountingFile {
    inner: Box<dyn RandomAccessFile>,
    id: usize,
    reads: Arc<Mutex<Reads>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Filesystem for CountingFilesystem {
    fn regular_file_size(&self, path: &Path) -> io::Result<u64> {
        self.inner.regular_file_size(path)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        self.inner.read_dir(path)
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        let mut opened = lock(&self.opened);
        *opened += 1;
        Ok(Box::new(CountingFile {
            inner: self.inner.open(path)?,
            id: *opened,
            reads: Arc::clone(&self.reads),
        }))
    }
}

impl RandomAccessFile for CountingFile {
    fn read_at(&self, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<usize> {
        if matches!(hint, ReadHint::Data) {
            let mut reads = lock(&self.reads);
            reads.data += 1;
            reads.blocks.insert((self.id, offset));
        }
        self.inner.read_at(buf, offset, hint)
    }
}

#[derive(Default)]
struct Totals {
    requests: u64,
    moves: u64,
    root_reads: u64,
    move_reads: u64,
    distinct_blocks: u64,
    probes: u64,
    probed_before: u64,
    seconds: f64,
    seconds_probed_before: f64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(tables), Some(log)) = (args.get(1), args.get(2)) else {
        return Err("usage: probe_sharing TABLES LOG [REQUESTS]".into());
    };
    let requests: usize = args.get(3).map_or(Ok(5000), |n| n.parse())?;
    let reads = Arc::new(Mutex::new(Reads::default()));
    let filesystem = CountingFilesystem {
        inner: OsFilesystem::new(),
        reads: Arc::clone(&reads),
        opened: Mutex::new(0),
    };
    let mut tablebase = Tablebase::<Chess>::with_filesystem(Arc::new(filesystem));
    tablebase.add_directory(tables)?;
    let log = std::fs::read_to_string(log)?;
    let positions: Vec<Chess> = log
        .lines()
        .take(requests)
        .filter_map(|line| line.parse::<Fen>().ok())
        .filter_map(|fen| fen.into_position(CastlingMode::Standard).ok())
        .collect();

    // The first pass opens the tables and fills the page cache; the
    // second is the one counted.
    let mut totals = Totals::default();
    for _pass in 0..2 {
        let mut seen = HashSet::new();
        totals = Totals::default();
        for pos in &positions {
            request(&tablebase, pos, &reads, &mut seen, &mut totals);
        }
    }
    let n = totals.requests.max(1) as f64;
    println!(
        "requests {}, moves per request {:.1}",
        totals.requests,
        totals.moves as f64 / n
    );
    println!(
        "data reads per request: root {:.1}, moves {:.1}; distinct blocks {:.1}",
        totals.root_reads as f64 / n,
        totals.move_reads as f64 / n,
        totals.distinct_blocks as f64 / n
    );
    println!(
        "probes an earlier request made: {} of {} ({:.1} %), {:.1} % of the probing time",
        totals.probed_before,
        totals.probes,
        100.0 * totals.probed_before as f64 / totals.probes.max(1) as f64,
        100.0 * totals.seconds_probed_before / totals.seconds.max(f64::MIN_POSITIVE)
    );
    Ok(())
}

/// Probes a position and each of its moves as the server does, counting.
fn request(
    tablebase: &Tablebase<Chess>,
    pos: &Chess,
    reads: &Mutex<Reads>,
    seen: &mut HashSet<u128>,
    totals: &mut Totals,
) {
    *lock(reads) = Reads::default();
    let mut probe = |pos: &Chess, totals: &mut Totals| {
        let started = Instant::now();
        let _ = tablebase.probe_dtz(pos);
        let seconds = started.elapsed().as_secs_f64();
        let key = pos.zobrist_hash::<Zobrist128>(EnPassantMode::Legal).0;
        totals.probes += 1;
        totals.seconds += seconds;
        if !seen.insert(key) {
            totals.probed_before += 1;
            totals.seconds_probed_before += seconds;
        }
    };
    probe(pos, totals);
    let root_reads = lock(reads).data;
    let moves = pos.legal_moves();
    for m in &moves {
        let mut after = pos.clone();
        after.play_unchecked(*m);
        probe(&after, totals);
    }
    let reads = lock(reads);
    totals.requests += 1;
    totals.moves += moves.len() as u64;
    totals.root_reads += root_reads;
    totals.move_reads += reads.data - root_reads;
    totals.distinct_blocks += reads.blocks.len() as u64;
}
