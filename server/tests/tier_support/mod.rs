//! Shared by the tier and integrity tests: building a tier or checksums,
//! the request logs, and a replay that checks the reads of every table
//! lookup. Needs `mod common;` beside it.

#![allow(dead_code)]

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::Arc,
};

use server::{
    progress::Silent,
    store::tier::build as tier,
    store::{
        context::{self, ReadEvent},
        layout,
        read_counters::{ReadMetrics, Tier},
        table_error::TableIoError,
        tier::{INTEGRITY_SUBDIR, TierOptions, TieredFilesystem, integrity::IntegrityError},
    },
};
use shakmaty::{CastlingMode, Chess, fen::Fen};
use shakmaty_syzygy::{ProbeError, SyzygyError, Tablebase, filesystem::ReadHint};

/// Builds a fast tier (prefixes and checksums) for the tables of one
/// directory, as `tier build` does, and insists every table made it.
pub fn build_tier(tables: &Path, fast: &Path) -> tier::Summary {
    build(tier::BuildOptions::new(
        vec![tables.to_path_buf()],
        fast.to_path_buf(),
    ))
}

/// Writes checksums only, beside the tables, as `verify --init` does, and
/// insists every table made it.
pub fn init_checksums(tables: &Path) -> tier::Summary {
    build(tier::BuildOptions {
        prefixes: false,
        ..tier::BuildOptions::new(vec![tables.to_path_buf()], tables.join(INTEGRITY_SUBDIR))
    })
}

fn build(options: tier::BuildOptions) -> tier::Summary {
    let summary = tier::build(&options, &Silent);
    assert!(summary.failures.is_empty(), "{:?}", summary.failures);
    summary
}

/// The positions of a request log (one FEN per line).
pub fn workload(path: &Path) -> Vec<Chess> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    text.lines()
        .filter_map(|line| Fen::from_ascii(line.trim().as_bytes()).ok())
        .filter_map(|fen| fen.into_position::<Chess>(CastlingMode::Standard).ok())
        .collect()
}

/// The 3-4 piece request log the repository carries.
pub fn workload_34() -> Vec<Chess> {
    workload(&crate::common::fixture("explore-34.txt"))
}

pub fn tablebase(dirs: &[PathBuf], fast: Option<&Path>, check_blocks: bool) -> Tablebase<Chess> {
    tablebase_with_reads(dirs, fast, check_blocks).0
}

/// Like `tablebase`, with the store's read counters (which are its own,
/// whatever other tests in the process read).
pub fn tablebase_with_reads(
    dirs: &[PathBuf],
    fast: Option<&Path>,
    check_blocks: bool,
) -> (Tablebase<Chess>, Arc<ReadMetrics>) {
    let fs = TieredFilesystem::new(TierOptions {
        fast_dir: fast.map(Path::to_path_buf),
        check_blocks,
        ..TierOptions::default()
    });
    let reads = Arc::clone(fs.metrics());
    let mut tb = Tablebase::with_filesystem(Arc::new(fs));
    for dir in dirs {
        tb.add_directory(dir).expect("table directory");
    }
    (tb, reads)
}

/// What a replay saw.
#[derive(Debug, Default, Clone)]
pub struct Replay {
    pub positions: u64,
    pub unanswered: u64,
    pub lookups: u64,
    pub fast_reads: u64,
    pub slow_reads: u64,
    /// Blocks served from the verified-block cache, without a read.
    pub cached: u64,
    /// Reads of table headers (when a table is opened) that went to the slow tier.
    pub slow_header_reads: u64,
    /// Lookups by the number of slow reads they made (0, 1, 2, 3 or more).
    pub by_slow_reads: [u64; 4],
    pub max_slow_per_lookup: u64,
}

impl Replay {
    pub fn slow_per_lookup(&self) -> f64 {
        (self.slow_reads - self.slow_header_reads) as f64 / self.lookups.max(1) as f64
    }

    pub fn print(&self, label: &str) {
        println!(
            "{label}: {} positions ({} not in the tables), {} table lookups, reads fast={} slow={} (of which table-open header reads slow={}), served from memory (verified-block or index cache)={}, slow reads per lookup: mean {:.3}, max {}, lookups with 0/1/2/3+ slow reads: {:?}",
            self.positions,
            self.unanswered,
            self.lookups,
            self.fast_reads,
            self.slow_reads,
            self.slow_header_reads,
            self.cached,
            self.slow_per_lookup(),
            self.max_slow_per_lookup,
            self.by_slow_reads
        );
    }
}

/// Splits a thread's reads into table lookups and counts each one's slow
/// reads. A lookup (one probe of one table: shakmaty-syzygy's
/// `decompress_pairs`) reads the sparse index exactly once, first, then
/// block lengths, then one data block (DTZ: then the value map). So a lookup
/// is the run of reads from one sparse-index read to the next. Header reads
/// are not part of any lookup: they happen when a table is opened, possibly
/// in the middle of a probe that then looks up another table; they are
/// counted apart. Single-valued tables are answered without any read and
/// are not lookups here.
pub fn count_lookups(events: &[ReadEvent], replay: &mut Replay) {
    let mut current: Option<u64> = None;
    let close = |slow: Option<u64>, replay: &mut Replay| {
        if let Some(slow) = slow {
            replay.lookups += 1;
            replay.by_slow_reads[slow.min(3) as usize] += 1;
            replay.max_slow_per_lookup = replay.max_slow_per_lookup.max(slow);
        }
    };
    for event in events {
        match event.tier {
            Tier::Fast => replay.fast_reads += 1,
            Tier::Slow => replay.slow_reads += 1,
            Tier::Cache => replay.cached += 1,
        }
        if event.hint == ReadHint::Header {
            if event.tier == Tier::Slow {
                replay.slow_header_reads += 1;
            }
            continue;
        }
        if event.hint == ReadHint::SparseIndex {
            close(current.take(), replay);
            current = Some(0);
        }
        if event.tier == Tier::Slow {
            *current.get_or_insert(0) += 1;
        }
    }
    close(current, replay);
}

/// Probes WDL and DTZ of every position (as the server does for each
/// position it shows), recording the reads; `each_lookup_batch` sees the
/// reads of each position's probes.
pub fn replay(
    tb: &Tablebase<Chess>,
    positions: &[Chess],
    mut each_position: impl FnMut(&[ReadEvent]),
) -> Replay {
    let mut replay = Replay::default();
    context::start_thread_log();
    for pos in positions {
        replay.positions += 1;
        let wdl = tb.probe_wdl_after_zeroing(pos);
        let dtz = tb.probe_dtz(pos);
        if wdl.is_err() || dtz.is_err() {
            replay.unanswered += 1;
        }
        let events = context::take_thread_log();
        each_position(&events);
        count_lookups(&events, &mut replay);
    }
    replay
}

/// Prefix length of every table in the directories.
pub fn prefix_lengths(dirs: &[PathBuf]) -> HashMap<String, u64> {
    let mut lengths = HashMap::new();
    for dir in dirs {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if layout::is_table_name(&name) {
                lengths.insert(name, layout::parse_file(&path).unwrap().prefix_len);
            }
        }
    }
    lengths
}

/// How a probe of a damaged table with recorded checksums fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Damage {
    /// The block check that found it: the table and the bad block's offset.
    Found { table: String, offset: u64 },
    /// The table refused since (quarantined after a block check on read),
    /// whatever the probe would have read: its name and the message.
    Quarantined { table: String, message: String },
}

impl Damage {
    pub fn table(&self) -> &str {
        match self {
            Damage::Found { table, .. } | Damage::Quarantined { table, .. } => table,
        }
    }
}

/// What `err` says of damage, if it is a failed block check or the
/// quarantine that follows one.
pub fn damage_of(err: &SyzygyError) -> Option<Damage> {
    let SyzygyError::ProbeFailed { error, .. } = err else {
        return None;
    };
    let ProbeError::Read { error } = error.as_ref() else {
        return None;
    };
    let inner = error.get_ref()?;
    if let Some(found) = inner.downcast_ref::<IntegrityError>() {
        return Some(Damage::Found {
            table: found.table(),
            offset: found.offset,
        });
    }
    let refused = inner.downcast_ref::<TableIoError>()?;
    let quarantined = refused.detail.starts_with("damaged (")
        && refused.detail.contains("found by a block check on read")
        && refused.detail.contains("not served until it is replaced");
    quarantined.then(|| Damage::Quarantined {
        table: refused.table(),
        message: refused.to_string(),
    })
}

/// The quarantine record a failed block check leaves beside a table in
/// `tables` (a writable directory), read back.
pub fn quarantine_record(tables: &Path, table: &str) -> Option<String> {
    std::fs::read_to_string(
        tables
            .join(INTEGRITY_SUBDIR)
            .join(format!("{table}.quarantine")),
    )
    .ok()
}
