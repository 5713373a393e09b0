//! `serve --scrub`: check every table against its published digest in the
//! background, at a bounded rate, yielding to requests. Prophet DTM files
//! (`*.egtb.bz`, also in subdirectories) are checked by their own checksum
//! field and, where an `MD5SUMS` beside them lists them, their md5
//! (`crate::dtm::catalog`), in the same read.
//!
//! A periodic full check that stops whenever the server is busy never
//! finishes on a busy server. So the scrub never stops: it reads at the
//! configured rate while the tables are quiet and at a tenth of it while
//! requests are reading them, which bounds the time a pass takes either way.
//! Load is judged by the table reads the requests make (the resource the
//! scrub competes for), from the same counters `/metrics` shows.

use std::{
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering::Relaxed},
    },
    thread,
    time::{Duration, Instant},
};

use super::{
    layout::{file_name, table_files},
    quarantine::Quarantine,
    read_counters::ReadMetrics,
};
use crate::{
    catalog::whole_file::{self as published, PublishedDigest},
    dtm::catalog::{self as prophet, Listed},
    exposition::{Exposition, Kind},
    sync::lock,
};

/// Table reads per second above which requests count as heavy load.
pub const BUSY_READS_PER_SEC: u64 = 2_000;

/// Share of the rate kept while requests are heavy, so a pass still ends.
pub const BUSY_SHARE: f64 = 0.1;

/// Pause between two passes.
pub const PASS_PAUSE: Duration = Duration::from_secs(6 * 3600);

/// Progress and findings, shown on `/metrics`.
#[derive(Debug, Default)]
pub struct ScrubState {
    pub passes: AtomicU64,
    pub files_total: AtomicU64,
    pub files_checked: AtomicU64,
    pub bytes_total: AtomicU64,
    pub bytes_checked: AtomicU64,
    pub yielding: AtomicBool,
    /// Table and what is wrong with it, from the last completed check of it.
    pub damaged: Mutex<Vec<(String, String)>>,
    /// Where damaged tables are quarantined (the store's, so the server
    /// refuses them at once); `None`: findings are only shown.
    pub quarantine: Option<Arc<Quarantine>>,
}

impl ScrubState {
    pub fn damaged(&self) -> Vec<(String, String)> {
        lock(&self.damaged).clone()
    }
}

impl ScrubState {
    /// Progress and findings, for `/metrics`.
    pub fn render(&self, out: &mut Exposition) {
        let gauges = [
            (
                "zugzwang_scrub_passes_completed",
                "Full scrub passes completed.",
                self.passes.load(Relaxed),
            ),
            (
                "zugzwang_scrub_files",
                "Table files in the current pass.",
                self.files_total.load(Relaxed),
            ),
            (
                "zugzwang_scrub_files_checked",
                "Table files checked in the current pass.",
                self.files_checked.load(Relaxed),
            ),
            (
                "zugzwang_scrub_bytes",
                "Bytes in the current pass.",
                self.bytes_total.load(Relaxed),
            ),
            (
                "zugzwang_scrub_bytes_checked",
                "Bytes checked in the current pass.",
                self.bytes_checked.load(Relaxed),
            ),
            (
                "zugzwang_scrub_yielding",
                "1 while the scrub slows down for request load.",
                u64::from(self.yielding.load(Relaxed)),
            ),
        ];
        for (name, help, value) in gauges {
            out.gauge(name, help, value);
        }
        let name = "zugzwang_scrub_damaged";
        out.family(
            name,
            "Tables whose digest (sha256, md5 for atomic and antichess) differs from the published one, or Prophet DTM files failing their checksum field or listed md5 (a list named as MD5SUMS of prophet dir N: in the Nth served directory holding Prophet files).",
            Kind::Gauge,
        );
        for (table, reason) in self.damaged() {
            out.sample(name, &[("table", &table), ("reason", &reason)], 1);
        }
    }
}

/// Keeps reads to `rate` bytes per second (a tenth of it while `busy`).
struct Throttle<'a> {
    /// The store's read counters, which tell whether requests are busy.
    reads: &'a ReadMetrics,
    rate: f64,
    started: Instant,
    /// Seconds of reading allowed so far at the effective rates.
    budget: f64,
    last_reads: u64,
    last_check: Instant,
}

impl<'a> Throttle<'a> {
    fn new(mb_per_sec: f64, reads: &'a ReadMetrics) -> Throttle<'a> {
        let now = Instant::now();
        Throttle {
            reads,
            rate: (mb_per_sec * 1e6).max(1.0),
            started: now,
            budget: 0.0,
            last_reads: reads.totals_reads(),
            last_check: now,
        }
    }

    /// Whether requests read tables heavily since the last look.
    fn busy(&mut self) -> bool {
        let now = Instant::now();
        let elapsed = now.duration_since(self.last_check).as_secs_f64();
        if elapsed < 0.2 {
            return false;
        }
        let reads = self.reads.totals_reads();
        let rate = reads.saturating_sub(self.last_reads) as f64 / elapsed;
        self.last_reads = reads;
        self.last_check = now;
        rate > BUSY_READS_PER_SEC as f64
    }

    /// Accounts for `bytes` read and sleeps until they fit the rate.
    fn pace(&mut self, bytes: usize, state: &ScrubState) {
        let busy = self.busy();
        state.yielding.store(busy, Relaxed);
        let rate = if busy {
            self.rate * BUSY_SHARE
        } else {
            self.rate
        };
        self.budget += bytes as f64 / rate;
        let ahead = self.budget - self.started.elapsed().as_secs_f64();
        if ahead > 0.0 {
            thread::sleep(Duration::from_secs_f64(ahead));
        } else if ahead < -1.0 {
            // Do not bank idle time (e.g. a slow disk) for a burst later.
            self.budget = self.started.elapsed().as_secs_f64() - 1.0;
        }
    }
}

/// Runs one pass over the table files of `dirs`, of any variant: each
/// file with a published digest (sha256, or md5 for atomic and antichess),
/// and each Prophet DTM file (its checksum field, its md5 where listed).
/// `reads` are the counters of the store serving the same tables: their
/// pace says when requests are busy, and a damaged table becomes suspect
/// there.
pub fn scrub_pass(dirs: &[PathBuf], mb_per_sec: f64, state: &ScrubState, reads: &ReadMetrics) {
    let mut failures = Vec::new();
    let mut files: Vec<(PathBuf, Option<Option<Listed>>)> = table_files(dirs, &mut failures)
        .into_iter()
        .filter(|p| PublishedDigest::of(&file_name(p)).is_some())
        .map(|p| (p, None))
        .collect();
    let dtm = prophet::find(dirs);
    let prophet_dirs: Vec<&Path> = dirs
        .iter()
        .map(PathBuf::as_path)
        .filter(|dir| dtm.files.iter().any(|(file, _)| file.starts_with(dir)))
        .collect();
    files.extend(dtm.files.into_iter().map(|(p, listed)| (p, Some(listed))));
    // A directory that cannot be listed is named once.
    for failure in dtm.failures {
        if !failures.contains(&failure) {
            failures.push(failure);
        }
    }
    let sizes: Vec<u64> = files
        .iter()
        .map(|(f, _)| f.metadata().map_or(0, |m| m.len()))
        .collect();
    state.files_total.store(files.len() as u64, Relaxed);
    state.bytes_total.store(sizes.iter().sum(), Relaxed);
    state.files_checked.store(0, Relaxed);
    state.bytes_checked.store(0, Relaxed);
    let mut throttle = Throttle::new(mb_per_sec, reads);
    for (path, dtm) in &files {
        let table = file_name(path);
        let pace = |n: usize| {
            state.bytes_checked.fetch_add(n as u64, Relaxed);
            throttle.pace(n, state);
        };
        // Err((problem, whether the bytes are wrong rather than unreadable)).
        let result = match dtm {
            None => published::check_file(path, pace).map_err(|err| {
                let damaged = matches!(err, published::CheckError::Damaged(_));
                (err.to_string(), damaged)
            }),
            Some(listed) => prophet::check_file(path, listed.as_ref(), pace)
                .map_err(|err| (err.to_string(), err.is_damage())),
        };
        if let Some(quarantine) = &state.quarantine {
            match &result {
                Ok(()) => {
                    quarantine.clear(path);
                }
                Err((problem, true)) => {
                    let _ = quarantine.record(path, "the scrub", problem);
                }
                Err(_) => {}
            }
        }
        let result = result.map_err(|(problem, _)| problem);
        let mut damaged = lock(&state.damaged);
        damaged.retain(|(t, _)| *t != table);
        if let Err(problem) = result {
            tracing::error!(path = %path.display(), "scrub: {table}: {problem}");
            reads.record_scrub_finding(&table);
            let listed = dtm.as_ref().and_then(Option::as_ref);
            damaged.push((table, without_paths(problem, listed, &prophet_dirs)));
        }
        drop(damaged);
        state.files_checked.fetch_add(1, Relaxed);
    }
    for (dir, problem) in failures {
        tracing::warn!("scrub: {dir}: {problem}");
    }
    state.yielding.store(false, Relaxed);
    state.passes.fetch_add(1, Relaxed);
}

/// A finding as `/metrics` shows it: an md5 list is named by the served
/// directory it is in (`MD5SUMS of prophet dir 2`: the second of
/// `prophet_dirs`, the served directories holding Prophet files), never
/// by its path, whether the finding gives that or says `its MD5SUMS`; the
/// findings name the table file only otherwise.
fn without_paths(problem: String, listed: Option<&Listed>, prophet_dirs: &[&Path]) -> String {
    let Some(listed) = listed else {
        return problem;
    };
    let holder = prophet_dirs
        .iter()
        .enumerate()
        .filter(|(_, dir)| listed.list.starts_with(dir))
        .max_by_key(|(_, dir)| dir.as_os_str().len());
    let name = match holder {
        Some((i, _)) => format!("MD5SUMS of prophet dir {}", i + 1),
        None => "MD5SUMS".to_string(),
    };
    problem
        .replace(&listed.list.display().to_string(), &name)
        .replace(&format!("its {}", file_name(&listed.list)), &name)
}

/// Starts scrubbing in a background thread, pass after pass, and shows its
/// progress on `/metrics`.
pub fn start(
    dirs: Vec<PathBuf>,
    mb_per_sec: f64,
    reads: Arc<ReadMetrics>,
    quarantine: Option<Arc<Quarantine>>,
) -> Arc<ScrubState> {
    let state = Arc::new(ScrubState {
        quarantine,
        ..ScrubState::default()
    });
    let worker = Arc::clone(&state);
    let spawned = thread::Builder::new().name("scrub".into()).spawn(move || {
        loop {
            let started = Instant::now();
            scrub_pass(&dirs, mb_per_sec, &worker, &reads);
            tracing::info!(
                "scrub pass {} done in {:.0?}: {} tables, {} damaged",
                worker.passes.load(Relaxed),
                started.elapsed(),
                worker.files_checked.load(Relaxed),
                worker.damaged().len()
            );
            thread::sleep(PASS_PAUSE);
        }
    });
    if let Err(err) = spawned {
        tracing::error!("cannot start the scrub: {err}");
    }
    state
}

/// `serve --scrub`: starts the scrub over the served table directories,
/// whose store counts `reads`.
pub fn start_for_serve(
    dirs: &[PathBuf],
    mb_per_sec: f64,
    reads: Arc<ReadMetrics>,
    quarantine: Arc<Quarantine>,
) -> Option<Arc<ScrubState>> {
    if dirs.is_empty() {
        tracing::warn!(
            "--scrub: the built-in tables are part of the binary; there is nothing to scrub"
        );
        return None;
    }
    tracing::info!("scrubbing the tables in the background at up to {mb_per_sec} MB/s");
    Some(start(dirs.to_vec(), mb_per_sec, reads, Some(quarantine)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttle_keeps_the_rate() {
        let state = ScrubState::default();
        let reads = ReadMetrics::default();
        let mut throttle = Throttle::new(10.0, &reads);
        let started = Instant::now();
        for _ in 0..5 {
            throttle.pace(1_000_000, &state);
        }
        // 5 MB at 10 MB/s: half a second, give or take the scheduler.
        let took = started.elapsed().as_secs_f64();
        assert!((0.45..2.0).contains(&took), "{took}");
    }
}
