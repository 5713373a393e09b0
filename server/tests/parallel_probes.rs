//! The probes of one request that must wait for a disk run together on the
//! pool; probes whose reads are all in memory stay on the async worker; and
//! `--sequential-probes` and `--pool-only-probes` change only where and when
//! probes run, never the answer.

mod common;

use std::{
    io,
    path::{Path, PathBuf},
    sync::{Arc, Condvar, Mutex},
    time::Duration,
};

use server::{
    engine::{Engine, EngineConfig},
    store::{context, pread::PreadFilesystem},
};
use shakmaty_syzygy::filesystem::{Filesystem, RandomAccessFile, ReadHint};

/// No response cache and no probe memo: a request asked again probes again,
/// which is what these tests watch. The tables are read from the disk, where
/// no checksums are recorded for them (these tests are not about that).
fn config(sequential_probes: bool) -> EngineConfig {
    EngineConfig {
        tables: vec![common::embedded_tables_dir()],
        store: common::store_allowing_unchecked(),
        cache_bytes: 0,
        memo_bytes: 0,
        sequential_probes,
        ..EngineConfig::default()
    }
}

#[tokio::test]
async fn sequential_parallel_and_pool_only_probes_give_the_same_answers() {
    let parallel = Engine::open(&config(false)).expect("tables load");
    let sequential = Engine::open(&config(true)).expect("tables load");
    let pool_only = Engine::open(&EngineConfig {
        inline_probes: false,
        ..config(false)
    })
    .expect("tables load");
    assert!(sequential.sequential_probes() && !parallel.sequential_probes());
    for fen in [
        "8/8/8/8/8/2k5/8/K2R4 w - - 0 1",
        "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
        "8/8/8/8/4k3/8/2K1P3/8 b - - 7 40",
        "6k1/8/8/8/8/8/8/5q1K w - - 0 1",
    ] {
        let pos = app::position::parse_fen(fen).unwrap_or_else(|err| panic!("{fen}: {err}"));
        let a = parallel.probe(pos.clone()).await.expect("parallel probe");
        let b = sequential
            .probe(pos.clone())
            .await
            .expect("sequential probe");
        let c = pool_only.probe(pos).await.expect("pool-only probe");
        let a = serde_json::to_value(a.as_ref()).unwrap();
        assert_eq!(a, serde_json::to_value(b.as_ref()).unwrap(), "{fen}");
        assert_eq!(a, serde_json::to_value(c.as_ref()).unwrap(), "{fen}");
        assert!(!a["moves"].as_array().unwrap().is_empty(), "{fen}");
    }
    assert_eq!(pool_only.probes_by_place().inline, 0);
}

/// KRvK: the root and fourteen moves, every one probed in the same tables.
const KRVK: &str = "4k3/8/8/8/8/8/8/4K2R w - - 0 1";

/// The second request for a position finds every block in the page cache:
/// none of its probes pays for a hand-off to the blocking threads, while
/// the first, which opens the tables, needs them.
#[tokio::test]
async fn probes_whose_reads_are_in_the_page_cache_stay_on_the_async_worker() {
    let dir = common::embedded_tables_dir();
    let table = dir.join("KRvK.rtbw");
    if !server::store::pread::reads_without_waiting(&table).expect("read a table") {
        common::unsupported(&format!(
            "the file system of {} cannot do RWF_NOWAIT reads, so every probe goes to the pool",
            dir.display()
        ));
        return;
    }
    let engine = Engine::open(&config(false)).expect("tables load");
    let pos = app::position::parse_fen(KRVK).expect("fen");
    engine.probe(pos.clone()).await.expect("first probe");
    let before = engine.probes_by_place();
    assert!(before.pooled > 0, "opening the tables needs the pool");
    engine.probe(pos).await.expect("second probe");
    let after = engine.probes_by_place();
    assert_eq!(after.pooled, before.pooled, "a hot probe went to the pool");
    assert_eq!(after.inline - before.inline, 15, "the root and 14 moves");
}

/// Tables compiled into the binary are memory: no probe of theirs waits.
#[tokio::test]
async fn probes_of_the_embedded_tables_never_leave_the_async_worker() {
    let engine = Engine::open(&EngineConfig {
        cache_bytes: 0,
        memo_bytes: 0,
        ..EngineConfig::default()
    })
    .expect("embedded tables load");
    let pos = app::position::parse_fen(KRVK).expect("fen");
    engine.probe(pos.clone()).await.expect("first probe");
    engine.probe(pos).await.expect("second probe");
    assert_eq!(
        engine.probes_by_place(),
        server::engine::ProbeCounts {
            inline: 30,
            pooled: 0
        }
    );
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
        if context::refusing() {
            // Armed, every read stands for a disk read: none is in memory.
            if overlap.armed {
                return Err(context::refuse());
            }
            drop(overlap);
            return self.inner.read_at(buf, offset, hint);
        }
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

/// Most reads in flight at once while answering one request whose reads
/// all wait for the disk, fresh engine.
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
    let pos = app::position::parse_fen(KRVK).expect("fen");
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
