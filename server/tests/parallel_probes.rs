//! The probes of one request run together on the pool, and
//! `--sequential-probes` changes only when they run, never the answer.

mod common;

use std::{
    io,
    path::{Path, PathBuf},
    sync::{Arc, Condvar, Mutex},
    time::Duration,
};

use server::{
    engine::{Engine, EngineConfig},
    store::pread::PreadFilesystem,
};
use shakmaty_syzygy::filesystem::{Filesystem, RandomAccessFile, ReadHint};

fn config(sequential_probes: bool) -> EngineConfig {
    EngineConfig {
        tables: vec![common::embedded_tables_dir()],
        cache_bytes: 0,
        sequential_probes,
        ..EngineConfig::default()
    }
}

#[tokio::test]
async fn sequential_and_parallel_probes_give_the_same_answers() {
    let parallel = Engine::open(&config(false)).expect("tables load");
    let sequential = Engine::open(&config(true)).expect("tables load");
    assert!(sequential.sequential_probes() && !parallel.sequential_probes());
    for fen in [
        "8/8/8/8/8/2k5/8/K2R4 w - - 0 1",
        "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
        "8/8/8/8/4k3/8/2K1P3/8 b - - 7 40",
        "6k1/8/8/8/8/8/8/5q1K w - - 0 1",
    ] {
        let pos = app::position::parse_fen(fen).unwrap_or_else(|err| panic!("{fen}: {err}"));
        let a = parallel.probe(pos.clone()).await.expect("parallel probe");
        let b = sequential.probe(pos).await.expect("sequential probe");
        assert_eq!(
            serde_json::to_value(a.as_ref()).unwrap(),
            serde_json::to_value(b.as_ref()).unwrap(),
            "{fen}"
        );
        assert!(!a.moves.is_empty(), "{fen}");
    }
}

/// Reads held back until a second read is in flight, so reads that can
/// overlap do, and the most seen at once says whether probes ran together.
/// A read waits at most `PATIENCE`; after one wait runs out nobody waits
/// again, so a sequential engine is slowed once, not at every read. Armed
/// only once the tables are open: opening a table is one reader's job while
/// the others wait for it, and must not count as probes one after another.
struct Rendezvous {
    inner: PreadFilesystem,
    state: Arc<(Mutex<Overlap>, Condvar)>,
}

#[derive(Default)]
struct Overlap {
    armed: bool,
    in_flight: usize,
    most: usize,
    gave_up: bool,
}

const PATIENCE: Duration = Duration::from_secs(5);

struct RendezvousFile {
    inner: Box<dyn RandomAccessFile>,
    state: Arc<(Mutex<Overlap>, Condvar)>,
}

impl Filesystem for Rendezvous {
    fn regular_file_size(&self, path: &Path) -> io::Result<u64> {
        self.inner.regular_file_size(path)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        self.inner.read_dir(path)
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        Ok(Box::new(RendezvousFile {
            inner: self.inner.open(path)?,
            state: Arc::clone(&self.state),
        }))
    }
}

impl RandomAccessFile for RendezvousFile {
    fn read_at(&self, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<usize> {
        let (lock, wake) = &*self.state;
        let mut overlap = lock.lock().unwrap();
        overlap.in_flight += 1;
        overlap.most = overlap.most.max(overlap.in_flight);
        wake.notify_all();
        if overlap.armed && !overlap.gave_up {
            let (mut waited, timeout) = wake
                .wait_timeout_while(overlap, PATIENCE, |o| o.most < 2 && !o.gave_up)
                .unwrap();
            waited.gave_up |= timeout.timed_out();
            overlap = waited;
        }
        drop(overlap);
        let read = self.inner.read_at(buf, offset, hint);
        lock.lock().unwrap().in_flight -= 1;
        read
    }
}

/// Most reads in flight at once while answering one request, fresh engine.
async fn most_reads_at_once(sequential_probes: bool) -> usize {
    let state = Arc::new((Mutex::new(Overlap::default()), Condvar::new()));
    let filesystem = Arc::new(Rendezvous {
        inner: PreadFilesystem::new(),
        state: Arc::clone(&state),
    });
    let engine = Engine::with_filesystem(
        &config(sequential_probes),
        filesystem,
        &[common::embedded_tables_dir()],
    )
    .expect("tables load");
    // KRvK: fourteen moves, every one probed in the same tables.
    let pos = app::position::parse_fen("4k3/8/8/8/8/8/8/4K2R w - - 0 1").expect("fen");
    engine
        .probe(pos.clone())
        .await
        .expect("probe opening the tables");
    *state.0.lock().unwrap() = Overlap {
        armed: true,
        ..Overlap::default()
    };
    let answer = engine.probe(pos).await.expect("probe");
    assert_eq!(answer.moves.len(), 14);
    state.0.lock().unwrap().most
}

#[tokio::test]
async fn the_probes_of_one_request_overlap_unless_told_otherwise() {
    assert!(
        most_reads_at_once(false).await >= 2,
        "parallel probes never overlapped"
    );
    // The counterpart shows the check can fail: one after another, never two at once.
    assert_eq!(most_reads_at_once(true).await, 1);
}
