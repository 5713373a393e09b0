//! The index cache: once a table's index parts are learnt, a lookup reads
//! only its data block from the store, and every answer is the one the
//! store alone gives, whatever the budget.
//!
//! Run with `cargo test -p server --test index_cache -- --nocapture` to see
//! the replay totals.

mod common;
mod tier_support;

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use common::{copy_of_embedded_tables, embedded_tables_dir, shared_tables_and};
use server::store::{
    chunk_cache::{ChunkCache, ChunkCachedFilesystem},
    layout,
    read_counters::Tier,
    tier::{TierOptions, TieredFilesystem},
};
use shakmaty::Chess;
use shakmaty_syzygy::{SyzygyError, Tablebase, filesystem::ReadHint};
use tier_support::*;

/// The default store (no fast tier; checksums checked where recorded) with
/// `capacity` bytes of index cache above it; tables without recorded
/// checksums are refused unless `allow_unchecked` (`--allow-unchecked`).
fn cached_tablebase(
    dirs: &[PathBuf],
    capacity: usize,
    allow_unchecked: bool,
) -> (Tablebase<Chess>, Arc<ChunkCache>) {
    let store = TieredFilesystem::new(TierOptions {
        check_blocks: true,
        ..TierOptions::default()
    })
    .with_allow_unchecked(allow_unchecked);
    let cache = Arc::new(ChunkCache::for_index(capacity));
    let reads = Arc::clone(store.metrics());
    let fs = ChunkCachedFilesystem::new(
        Arc::new(store),
        Arc::clone(&cache),
        Arc::new(ChunkCache::for_data(0)),
        reads,
    );
    let mut tb = Tablebase::with_filesystem(Arc::new(fs));
    for dir in dirs {
        tb.add_directory(dir).expect("table directory");
    }
    (tb, cache)
}

fn answer(tb: &Tablebase<Chess>, pos: &Chess) -> String {
    format!(
        "{:?} {:?}",
        tb.probe_wdl_after_zeroing(pos).ok(),
        tb.probe_dtz(pos).ok()
    )
}

/// Replays a log twice through a cache that holds every index: the second
/// pass reads nothing but data blocks from the store. Then once through a
/// cache far too small for the index: same answers, memory within budget.
/// `positions` keeps the 5-piece run short in a debug build. No checksums
/// are recorded for `dir` (the repository's tables, `../shared`): they are
/// served anyway, as this is about the cache, not integrity.
fn replay_through_the_cache(dir: &Path, log: &Path, positions: usize) {
    let all = workload(log);
    let positions = &all[..all.len().min(positions)];
    let dirs = &[dir.to_path_buf()];
    let plain = tablebase(dirs, None, false);
    let (tb, cache) = cached_tablebase(dirs, 64 << 20, true);

    let learning = replay(&tb, positions, |_| {});
    let learnt = replay(&tb, positions, |events| {
        let not_data: Vec<_> = events
            .iter()
            .filter(|e| e.tier != Tier::Cache && e.hint != ReadHint::Data)
            .collect();
        assert!(
            not_data.is_empty(),
            "index reads reached the store after the index was learnt: {not_data:#?}"
        );
    });
    let log = log.file_name().unwrap().to_string_lossy();
    learning.print(&format!("{log}, index cache learning"));
    learnt.print(&format!("{log}, index cache learnt  "));
    println!("{log}: index cache holds {} bytes", cache.bytes());
    assert!(learnt.lookups > 1000, "too few lookups: {learnt:?}");
    assert_eq!(learnt.max_slow_per_lookup, 1);
    assert!(learning.max_slow_per_lookup >= 2, "{learning:?}");

    let small = 256 << 10;
    let (squeezed, small_cache) = cached_tablebase(dirs, small, true);
    for pos in positions {
        let expected = answer(&plain, pos);
        assert_eq!(answer(&tb, pos), expected, "{pos:?}");
        assert_eq!(answer(&squeezed, pos), expected, "{pos:?} (small cache)");
    }
    assert!(
        small_cache.bytes() <= small && small_cache.bytes() > small / 2,
        "{} bytes held",
        small_cache.bytes()
    );
}

#[test]
fn replay_34_reads_only_data_blocks_once_the_index_is_learnt() {
    replay_through_the_cache(
        &embedded_tables_dir(),
        &common::fixture("explore-34.txt"),
        usize::MAX,
    );
}

#[test]
fn replay_345_reads_only_data_blocks_once_the_index_is_learnt() {
    let Some((shared, log)) = shared_tables_and("workloads/explore-345.txt") else {
        return;
    };
    replay_through_the_cache(&shared, &log, 5000);
}

/// WDL and DTZ of a position, or the error of the first that failed.
fn answers(tb: &Tablebase<Chess>, pos: &Chess) -> Result<String, SyzygyError> {
    Ok(format!(
        "{:?} {:?}",
        tb.probe_wdl_after_zeroing(pos)?,
        tb.probe_dtz(pos)?
    ))
}

/// The table with the largest run of index bytes (a sparse index or a
/// block-length list) outside the checksum blocks its header lies in
/// (damage there would refuse the whole table at open), and that run.
fn largest_index_run_past_the_header(dir: &Path) -> (String, std::ops::Range<u64>) {
    let mut best = (String::new(), 0..0);
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !layout::is_table_name(&name) {
            continue;
        }
        let layout = layout::parse_file(&path).unwrap();
        let past_header = layout.header_bytes.div_ceil(4096) * 4096;
        for sub in &layout.subtables {
            for run in [&sub.sparse_index, &sub.block_lengths] {
                let range = run.start.max(past_header)..run.end.max(past_header);
                if range.end - range.start > best.1.end - best.1.start {
                    best = (name.clone(), range);
                }
            }
        }
    }
    assert!(
        !best.1.is_empty(),
        "no table has index bytes past its header"
    );
    best
}

/// A damaged index fails the block check of the first lookup that reads
/// it, and from then on its table is refused (quarantined), on every probe
/// that needs it: the cache never keeps bytes that failed their checksum
/// nor serves the table's data past the verdict, and the answers that
/// succeed are right.
#[test]
fn damaged_index_bytes_quarantine_their_table() {
    let tables = copy_of_embedded_tables();
    init_checksums(tables.path());
    let (table, damaged) = largest_index_run_past_the_header(tables.path());
    let table = table.as_str();
    common::damage(&tables.path().join(table), |bytes| {
        for b in &mut bytes[damaged.start as usize..damaged.end as usize] {
            *b ^= 0x10;
        }
    });
    let (tb, _) = cached_tablebase(&[tables.path().to_path_buf()], 64 << 20, false);
    let reference = tablebase(&[embedded_tables_dir()], None, false);
    let positions = &workload_34()[..3000];
    // The positions that failed, and how.
    let failures = |tb: &Tablebase<Chess>| -> Vec<(usize, Damage)> {
        let mut failed = Vec::new();
        for (i, pos) in positions.iter().enumerate() {
            match answers(tb, pos) {
                Ok(answer) => assert_eq!(answer, answers(&reference, pos).unwrap(), "{pos:?}"),
                Err(err) => {
                    let damage = damage_of(&err).unwrap_or_else(|| panic!("unexpected {err}"));
                    assert_eq!(damage.table(), table, "{err}");
                    if let Damage::Quarantined { message, .. } = &damage {
                        let dir = tables.path().to_string_lossy();
                        assert!(!message.contains(&*dir), "{message}");
                    }
                    failed.push((i, damage));
                }
            }
        }
        failed
    };
    let first = failures(&tb);
    println!(
        "{table}: bytes {damaged:?} damaged, {} of {} positions failed",
        first.len(),
        positions.len()
    );
    let Some(((_, found), refused)) = first.split_first() else {
        panic!("no lookup read the damaged index");
    };
    assert!(matches!(found, Damage::Found { .. }), "{found:?}");
    assert!(
        !refused.is_empty(),
        "the table was not refused after the check"
    );
    assert!(
        refused
            .iter()
            .all(|(_, d)| matches!(d, Damage::Quarantined { .. })),
        "{refused:?}"
    );
    // Again, through the same cache and after a restart: refused from the
    // start, on every position that failed (the one that found the damage
    // too), never answered from what the cache kept.
    let second = failures(&tb);
    let (restarted, _) = cached_tablebase(&[tables.path().to_path_buf()], 64 << 20, false);
    for again in [second, failures(&restarted)] {
        assert!(
            again
                .iter()
                .all(|(_, d)| matches!(d, Damage::Quarantined { .. })),
            "{again:?}"
        );
        let positions: Vec<usize> = again.iter().map(|(i, _)| *i).collect();
        assert!(
            first.iter().all(|(i, _)| positions.contains(i)),
            "refused {positions:?}, failed {:?} at first",
            first.iter().map(|(i, _)| i).collect::<Vec<_>>()
        );
    }
}
