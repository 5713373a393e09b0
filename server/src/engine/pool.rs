//! Where probes run: on the async worker while their reads are in memory,
//! on a bounded pool of blocking threads when a read must wait for a disk
//! (the two passes are explained once, in `store::context`).
//!
//! # A stuck read does not spread
//!
//! A probe thread blocked in a read that does not return (a dying disk, a
//! hung NFS mount) cannot be freed; what is bounded is how many follow it.
//! The store watches its reads out on the disk (`store::stuck_reads`); before
//! a probe runs, [`ProbePool::readiness`] refuses it (503 naming the table)
//! if it may need a table with a read out longer than `--stuck-read-secs`
//! (`engine::reachable` says which tables a position may read), and holds
//! it back while a table it may need is being opened: shakmaty-syzygy opens
//! a table once and every other probe needing it meanwhile waits inside the
//! library, without a timeout, so such a probe neither runs inline (it
//! would park an async worker) nor takes a probe thread: it waits here,
//! asynchronously, until the open is done or the table turns suspect
//! ([`ProbePool::wait_ready`]). When a request is gone (its deadline
//! passed, the client left), its work on the pool stops at the next
//! position ([`Gone`]) and work queued but not started is skipped, so its
//! probe thread is given back as soon as the read in progress returns.
//!
//! Those that started before the table turned suspect still hold their
//! threads, perhaps for good (a read on a dead disk may never return). So
//! that they do not hold the pool's places too, a probe that finds every
//! place taken writes off the work that has run longer than the limit: its
//! place goes back to the pool and its thread is left to finish or hang
//! on its own, counted as stuck (`/metrics`). A long piece of work that was
//! merely slow only lets one more run for a while.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed},
    },
    time::{Duration, Instant},
};

use shakmaty::variant::VariantPosition;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{EngineConfig, EngineError, Tables, reachable};
use crate::{
    store::{
        context::{self, Inline},
        stuck_reads::ReadsInFlight,
    },
    sync::lock,
};

/// The loaded tables and the blocking threads allowed to probe them at once.
pub struct ProbePool {
    tables: Arc<Tables>,
    slots: Arc<Semaphore>,
    threads: usize,
    sequential: bool,
    inline: bool,
    inline_probes: AtomicU64,
    pooled_probes: AtomicU64,
    /// The store's reads out on the disk (none for embedded tables).
    reads: Arc<ReadsInFlight>,
    /// The work on the blocking threads now, with its place in `slots`.
    running: Arc<Running>,
}

/// Work on the blocking threads, and the threads written off.
#[derive(Default)]
struct Running {
    works: Mutex<Vec<Arc<Work>>>,
    /// Written off and not returned yet.
    stuck: AtomicUsize,
}

/// One piece of work on a blocking thread.
struct Work {
    started: Instant,
    /// Its place in the pool; `None` once written off.
    place: Mutex<Option<OwnedSemaphorePermit>>,
}

/// Ends a piece of work: its place back to the pool (unless written off),
/// itself out of the list; even if it panicked.
struct Finished {
    running: Arc<Running>,
    work: Arc<Work>,
}

impl Drop for Finished {
    fn drop(&mut self) {
        if lock(&self.work.place).take().is_none() {
            self.running.stuck.fetch_sub(1, Relaxed);
        }
        let mut works = lock(&self.running.works);
        if let Some(at) = works.iter().position(|w| Arc::ptr_eq(w, &self.work)) {
            works.swap_remove(at);
        }
    }
}

/// How often a probe waiting for a place looks for work to write off.
const WRITE_OFF_TICK: Duration = Duration::from_millis(100);

/// Whether a probe may run now (see [`ProbePool::readiness`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    Ready,
    /// A table it may need is being opened: not inline, and not on a
    /// probe thread before the open is done.
    TableOpening,
}

/// What a probe tried on the async worker came to ([`ProbePool::try_inline`]).
pub enum Tried<T> {
    Done(Result<T, EngineError>),
    /// A read would have waited for a disk: probe it on the pool.
    WouldWait,
    /// And a table it needs is not open yet: probe it on the pool ahead of
    /// the request's others, which would otherwise all wait for that open
    /// inside shakmaty-syzygy, each holding a probe thread (and all of them
    /// for good if the open hangs).
    WouldOpen,
}

/// How often a probe held back by a table being opened looks again.
const OPEN_POLL: Duration = Duration::from_millis(5);

/// How often a request waiting for another's computation looks whether a
/// table it needs turned suspect.
const STUCK_POLL: Duration = Duration::from_millis(25);

/// Set once the request a piece of pool work is for is gone (its future
/// was dropped): the work stops at its next position.
#[derive(Debug, Clone, Default)]
pub struct Gone(Arc<AtomicBool>);

impl Gone {
    pub fn is_set(&self) -> bool {
        self.0.load(Relaxed)
    }
}

/// Sets [`Gone`] when dropped: held by the future that awaits the work.
struct SetOnDrop(Gone);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.0.store(true, Relaxed);
    }
}

/// How many probes ran where, since start (`/metrics`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProbeCounts {
    /// Answered on the async worker, every read from memory.
    pub inline: u64,
    /// Sent to the blocking threads (a read had to wait, or inline is off).
    pub pooled: u64,
}

impl ProbePool {
    /// `probe_threads` probes at once (at least one), one after another
    /// when `sequential_probes`, inline first when `inline_probes`.
    pub fn new(tables: Tables, config: &EngineConfig) -> ProbePool {
        let threads = config.probe_threads.max(1);
        ProbePool {
            tables: Arc::new(tables),
            slots: Arc::new(Semaphore::new(threads)),
            threads,
            sequential: config.sequential_probes,
            inline: config.inline_probes,
            inline_probes: AtomicU64::new(0),
            pooled_probes: AtomicU64::new(0),
            reads: Arc::default(),
            running: Arc::default(),
        }
    }

    /// Watches the reads of the store the tables are read through.
    pub fn watch_reads(&mut self, reads: Arc<ReadsInFlight>) {
        self.reads = reads;
    }

    /// Whether a probe of `pos` (or a line from it) may run now: an error
    /// (503) if it may need a table suspect of a stuck read. One relaxed
    /// load while no read is out on the disk.
    pub fn readiness(&self, pos: &VariantPosition) -> Result<Readiness, EngineError> {
        if self.reads.calm() {
            return Ok(Readiness::Ready);
        }
        if let Some(suspect) = self
            .reads
            .suspects()
            .iter()
            .find(|s| reachable::may_read(pos, &s.table))
        {
            return Err(EngineError::stuck(&self.reads.refusal(suspect)));
        }
        let opening = self.reads.opening();
        if opening
            .iter()
            .any(|(table, _)| reachable::may_read(pos, table))
        {
            return Ok(Readiness::TableOpening);
        }
        Ok(Readiness::Ready)
    }

    /// Waits, without a probe thread, until no table the positions may
    /// need is being opened; an error (503) as soon as one they may need is
    /// suspect. The wait is bounded: an open that takes longer than
    /// `--stuck-read-secs` makes its table suspect.
    pub async fn wait_ready<'a>(
        &self,
        positions: impl Iterator<Item = &'a VariantPosition> + Clone,
    ) -> Result<(), EngineError> {
        loop {
            let mut opening = false;
            for pos in positions.clone() {
                opening |= self.readiness(pos)? == Readiness::TableOpening;
            }
            if !opening {
                return Ok(());
            }
            tokio::time::sleep(OPEN_POLL).await;
        }
    }

    /// `work`'s outcome, or the refusal (503) as soon as a table `pos` may
    /// need turns suspect: `work` may be waiting for an identical request
    /// in flight (the response cache shares one computation), and that
    /// one for a stuck read. Just `work` while no read is out on the disk.
    pub async fn unless_stuck<T>(
        &self,
        pos: &VariantPosition,
        work: impl Future<Output = Result<T, EngineError>>,
    ) -> Result<T, EngineError> {
        if self.reads.calm() {
            return work.await;
        }
        let stuck = async {
            loop {
                if let Err(refused) = self.readiness(pos) {
                    return refused;
                }
                tokio::time::sleep(STUCK_POLL).await;
            }
        };
        tokio::select! {
            outcome = work => outcome,
            refused = stuck => Err(refused),
        }
    }

    /// Probe threads busy now (those written off as stuck not counted).
    pub fn busy(&self) -> usize {
        self.threads - self.slots.available_permits().min(self.threads)
    }

    /// Probe threads written off as stuck that have not returned yet.
    pub fn stuck(&self) -> usize {
        self.running.stuck.load(Relaxed)
    }

    /// A place in the pool; while none is free, work that has run longer
    /// than the stuck-read limit is written off to make one.
    async fn place(&self) -> Result<OwnedSemaphorePermit, EngineError> {
        let closed = |_| EngineError::Internal("probe pool closed".into());
        if let Ok(place) = Arc::clone(&self.slots).try_acquire_owned() {
            return Ok(place);
        }
        let acquire = Arc::clone(&self.slots).acquire_owned();
        tokio::pin!(acquire);
        loop {
            self.write_off_overdue();
            tokio::select! {
                place = &mut acquire => return place.map_err(closed),
                () = tokio::time::sleep(WRITE_OFF_TICK) => {}
            }
        }
    }

    /// Gives the places of work running longer than the limit back to the
    /// pool; their threads go on without one.
    fn write_off_overdue(&self) {
        let limit = self.reads.limit();
        for work in lock(&self.running.works).iter() {
            if work.started.elapsed() < limit {
                continue;
            }
            let Some(place) = lock(&work.place).take() else {
                continue;
            };
            place.forget();
            self.slots.add_permits(1);
            self.running.stuck.fetch_add(1, Relaxed);
            tracing::warn!(
                "a probe thread has been busy for {:.1} s (stuck on a failing disk, or a long line): its place goes to the probes waiting for one",
                work.started.elapsed().as_secs_f64()
            );
        }
    }

    pub fn tables(&self) -> &Tables {
        &self.tables
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    pub fn sequential(&self) -> bool {
        self.sequential
    }

    pub fn counts(&self) -> ProbeCounts {
        ProbeCounts {
            inline: self.inline_probes.load(Relaxed),
            pooled: self.pooled_probes.load(Relaxed),
        }
    }

    /// Workers for `count` probes of one request.
    pub fn workers(&self, count: usize) -> usize {
        if self.sequential {
            1
        } else {
            count.min(self.threads)
        }
    }

    /// Runs `probe` here, on the async worker, with every read refusing to
    /// wait: not done when inline probing is off or a read would have
    /// waited (the caller then sends it to the pool). The probe must not
    /// block in any other way.
    pub fn try_inline<T>(&self, probe: impl FnOnce(&Tables) -> Result<T, EngineError>) -> Tried<T> {
        if !self.inline {
            return Tried::WouldWait;
        }
        let reads = context::current_request();
        let attempt =
            context::with_request(reads, || context::without_waiting(|| probe(&self.tables)));
        let Inline::Done(result) = attempt else {
            return match context::take_refused_open() {
                true => Tried::WouldOpen,
                false => Tried::WouldWait,
            };
        };
        self.inline_probes.fetch_add(1, Relaxed);
        Tried::Done(result)
    }

    /// Counts `probes` sent to the blocking threads.
    pub fn count_pooled(&self, probes: usize) {
        self.pooled_probes.fetch_add(probes as u64, Relaxed);
    }

    /// Runs table work on the blocking pool, never on the async workers,
    /// with the request's read counters.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Tables) -> T + Send + 'static,
    ) -> Result<T, EngineError> {
        self.run_until_gone(|tables, _| work(tables)).await
    }

    /// [`ProbePool::run`] for work that can stop early: [`Gone`] is set
    /// once this future is dropped (the request went away), and the work
    /// should then stop at its next position. Its probe thread is given
    /// back when the work returns, whether or not anyone still awaits it;
    /// work whose request is gone before it starts is not started.
    pub async fn run_until_gone<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Tables, &Gone) -> T + Send + 'static,
    ) -> Result<T, EngineError> {
        let place = self.place().await?;
        let tables = Arc::clone(&self.tables);
        let reads = context::current_request();
        let gone = Gone::default();
        let _awaited = SetOnDrop(gone.clone());
        let running = Arc::clone(&self.running);
        let started = tokio::task::spawn_blocking(move || {
            let work_here = Arc::new(Work {
                started: Instant::now(),
                place: Mutex::new(Some(place)),
            });
            lock(&running.works).push(Arc::clone(&work_here));
            let _finished = Finished {
                running,
                work: work_here,
            };
            if gone.is_set() {
                return None;
            }
            Some(context::with_request(reads, || work(&tables, &gone)))
        })
        .await
        .map_err(|err| EngineError::Internal(format!("probe task failed: {err}")))?;
        // `None` only when this future was dropped first: never seen here.
        started.ok_or_else(|| EngineError::Internal("the request was gone".into()))
    }
}

#[cfg(test)]
mod tests {
    use std::{path::PathBuf, sync::mpsc, time::Instant};

    use shakmaty_syzygy::filesystem::ReadHint;

    use super::*;
    use crate::store::embedded::{EMBEDDED_DIR, EmbeddedFilesystem};

    fn pool(threads: usize) -> ProbePool {
        let (tables, _) =
            Tables::load(Arc::new(EmbeddedFilesystem), &[PathBuf::from(EMBEDDED_DIR)])
                .expect("embedded tables");
        let config = EngineConfig {
            probe_threads: threads,
            ..EngineConfig::default()
        };
        ProbePool::new(tables, &config)
    }

    async fn until_idle(pool: &ProbePool) {
        let since = Instant::now();
        while pool.busy() > 0 {
            assert!(
                since.elapsed() < Duration::from_secs(10),
                "the probe thread was not given back"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_gone_request_gives_its_thread_back_when_its_read_returns() {
        let pool = pool(2);
        let (release, read) = mpsc::channel::<()>();
        let (started, running) = tokio::sync::oneshot::channel();
        let saw_gone = Arc::new(AtomicBool::new(false));
        let saw = Arc::clone(&saw_gone);
        let mut work = Box::pin(pool.run_until_gone(move |_, gone| {
            let _ = started.send(());
            // A read that hangs until the test lets it return.
            let _ = read.recv();
            saw.store(gone.is_set(), Relaxed);
        }));
        tokio::select! {
            _ = &mut work => panic!("the work should still be reading"),
            started = running => started.expect("the work started"),
        }
        // The request's deadline passes: its future is dropped.
        drop(work);
        assert_eq!(pool.busy(), 1, "held while its read is out");
        release.send(()).expect("the work waits");
        until_idle(&pool).await;
        assert!(
            saw_gone.load(Relaxed),
            "the work was told its request is gone"
        );
    }

    #[test]
    fn work_of_a_gone_request_that_had_not_started_is_skipped() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            // One blocking thread: the second piece of work queues behind the first.
            .max_blocking_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let pool = Arc::new(pool(2));
            let (release, read) = mpsc::channel::<()>();
            let first_runs = Arc::new(AtomicBool::new(false));
            let first = tokio::spawn({
                let pool = Arc::clone(&pool);
                let first_runs = Arc::clone(&first_runs);
                async move {
                    pool.run_until_gone(move |_, _| {
                        first_runs.store(true, Relaxed);
                        let _ = read.recv();
                    })
                    .await
                }
            });
            // Until the first holds the one blocking thread: a slot taken is
            // not enough, on a busy machine the second could still get there
            // first.
            while !first_runs.load(Relaxed) {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            let ran = Arc::new(AtomicBool::new(false));
            let ran_too = Arc::clone(&ran);
            let queued = pool.run_until_gone(move |_, _| ran_too.store(true, Relaxed));
            // Queued behind the first, then given up on.
            assert!(
                tokio::time::timeout(Duration::from_millis(50), queued)
                    .await
                    .is_err()
            );
            release.send(()).expect("the first waits");
            first.await.expect("joined").expect("ran");
            until_idle(&pool).await;
            assert!(!ran.load(Relaxed), "work of a gone request was started");
        });
    }

    #[tokio::test]
    async fn probes_that_may_need_a_suspect_table_are_refused_and_others_wait_for_an_open() {
        let mut pool = pool(2);
        let reads = Arc::new(ReadsInFlight::new(Duration::from_millis(20)));
        pool.watch_reads(Arc::clone(&reads));
        let kqkr = app::position::parse_fen("4k3/8/8/8/8/8/3r4/KQ6 b - - 0 1").expect("legal");
        let krk = app::position::parse_fen("8/8/8/8/8/2k5/8/K2R4 w - - 0 1").expect("legal");
        let (kqkr, krk) = (VariantPosition::Chess(kqkr), VariantPosition::Chess(krk));
        assert_eq!(pool.readiness(&kqkr).expect("calm"), Readiness::Ready);

        let stuck: Arc<str> = "KQvKR.rtbw".into();
        let _stuck = reads.begin(&stuck, ReadHint::Data);
        tokio::time::sleep(Duration::from_millis(60)).await;
        let refused = pool.readiness(&kqkr).expect_err("KQvKR.rtbw is suspect");
        assert!(
            matches!(&refused, EngineError::Stuck { table, .. } if table == "KQvKR.rtbw"),
            "{refused}"
        );
        assert_eq!(pool.readiness(&krk).expect("not stuck"), Readiness::Ready);

        // An open is never suspect within this test.
        let reads = Arc::new(ReadsInFlight::new(Duration::from_secs(60)));
        pool.watch_reads(Arc::clone(&reads));
        let opened: Arc<str> = "KRvK.rtbz".into();
        let opening = reads.begin(&opened, ReadHint::Header);
        assert_eq!(
            pool.readiness(&krk).expect("not stuck"),
            Readiness::TableOpening
        );
        let waited = Instant::now();
        let open_done = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            drop(opening);
        };
        let (ready, ()) = tokio::join!(pool.wait_ready(std::iter::once(&krk)), open_done);
        ready.expect("ready once the open is done");
        assert!(waited.elapsed() >= Duration::from_millis(10));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn work_stuck_past_the_limit_gives_its_place_to_the_next_probe() {
        let mut pool = pool(1);
        pool.watch_reads(Arc::new(ReadsInFlight::new(Duration::from_millis(50))));
        let pool = Arc::new(pool);
        let (release, read) = mpsc::channel::<()>();
        let hung = tokio::spawn({
            let pool = Arc::clone(&pool);
            async move { pool.run(move |_| read.recv().is_ok()).await }
        });
        while pool.busy() == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // The only place is taken; past the limit the next probe gets it.
        let asked = Instant::now();
        let next = tokio::time::timeout(Duration::from_secs(10), pool.run(|_| 7))
            .await
            .expect("a place was made")
            .expect("ran");
        assert_eq!(next, 7);
        assert!(
            asked.elapsed() >= Duration::from_millis(30),
            "not before the limit"
        );
        assert_eq!((pool.stuck(), pool.busy()), (1, 0));
        release.send(()).expect("the hung work waits");
        assert!(hung.await.expect("joined").expect("ran"));
        assert_eq!((pool.stuck(), pool.busy()), (0, 0));
        // The pool has its one place, no more.
        let _one = Arc::clone(&pool.slots)
            .try_acquire_owned()
            .expect("one place");
        assert!(Arc::clone(&pool.slots).try_acquire_owned().is_err());
    }
}
