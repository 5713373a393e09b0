//! The fast tier: its prefixes hold exactly what a lookup reads before the
//! data block, so with it every table lookup costs at most one slow read.
//!
//! Run with `cargo test -p server --test tier -- --nocapture` to see the
//! replay totals with and without the tier.

mod common;
mod tier_support;

use std::{path::Path, sync::Arc};

use common::{embedded_tables_dir, shared_tables_and};
use server::{
    progress::Silent,
    store::tier::build::{self as tier, BuildOptions},
    store::{
        context,
        read_counters::Tier,
        tier::{TierOptions, TieredFilesystem},
    },
};
use shakmaty::Chess;
use shakmaty_syzygy::{Tablebase, filesystem::ReadHint};
use tier_support::*;

/// Replays a request log with and without the fast tier; with it, no lookup
/// may make more than one slow read and no table open any; both must give
/// the same answers.
fn replay_both(dir: &Path, log: &Path) {
    let positions = workload(log);
    let log = log.file_name().unwrap().to_string_lossy();
    let dirs = &[dir.to_path_buf()];
    let fast = tempfile::tempdir().unwrap();
    let summary = build_tier(dir, fast.path());
    println!(
        "{log}: tier built for {} tables:\n{}",
        summary.total().tables,
        server::cli::tier::render_summary(&summary)
    );

    let tiered = tablebase(dirs, Some(fast.path()), true);
    let plain = tablebase(dirs, None, false);
    let mut answers = Vec::new();
    let check = |tb: &Tablebase<Chess>, pos: &Chess| {
        format!(
            "{:?} {:?}",
            tb.probe_wdl_after_zeroing(pos).ok(),
            tb.probe_dtz(pos).ok()
        )
    };
    let with_tier = replay(&tiered, &positions, |events| {
        let mut one = Replay::default();
        count_lookups(events, &mut one);
        assert!(
            one.max_slow_per_lookup <= 1 && one.slow_header_reads == 0,
            "a lookup made more than one slow read: {events:#?}"
        );
    });
    for pos in &positions {
        answers.push(check(&tiered, pos));
    }
    let without = replay(&plain, &positions, |_| {});
    for (pos, answer) in positions.iter().zip(&answers) {
        assert_eq!(&check(&plain, pos), answer, "{pos:?}");
    }
    with_tier.print(&format!("{log} with fast tier   "));
    without.print(&format!("{log} without fast tier"));
    assert!(
        with_tier.lookups > 1000,
        "the replay looked up too little: {with_tier:?}"
    );
    assert_eq!(with_tier.max_slow_per_lookup, 1);
    assert!(without.max_slow_per_lookup >= 2);
}

#[test]
fn replay_34_costs_at_most_one_slow_read_per_lookup() {
    replay_both(&embedded_tables_dir(), &common::fixture("explore-34.txt"));
}

#[test]
fn replay_345_costs_at_most_one_slow_read_per_lookup() {
    let Some((shared, log)) = shared_tables_and("workloads/explore-345.txt") else {
        return;
    };
    replay_both(&shared, &log);
}

/// The parser's prefix boundary is where shakmaty-syzygy's reads change from
/// metadata to data blocks: every sparse-index, block-length and DTZ-map read
/// lies inside the prefix, every data read after it.
#[test]
fn prefix_ends_where_the_prober_reads_data() {
    let mut dirs = vec![embedded_tables_dir()];
    let mut logs = vec![common::fixture("explore-34.txt")];
    if let Some((shared, log)) = shared_tables_and("workloads/explore-345.txt") {
        dirs = vec![shared];
        logs.push(log);
    }
    let prefixes = prefix_lengths(&dirs);
    let tb = tablebase(&dirs, None, false);
    let mut seen = 0;
    for log in logs {
        let positions = workload(&log);
        replay(&tb, &positions, |events| {
            for e in events {
                let prefix = prefixes[&*e.table];
                if e.hint == ReadHint::Data {
                    assert!(
                        e.offset >= prefix,
                        "{e:?} reads data inside the prefix ({prefix})"
                    );
                } else {
                    // Block lengths are read 16 at a time, so near the end of
                    // the list the read runs on into the data (that slack is
                    // kept on the fast tier too).
                    assert!(
                        e.offset + e.len as u64 <= prefix + tier::READAHEAD_SLACK,
                        "{e:?} reads metadata past the prefix ({prefix})"
                    );
                }
                seen += 1;
            }
        });
    }
    assert!(seen > 10_000);
}

#[test]
fn rerun_skips_up_to_date_prefixes_and_dry_run_writes_nothing() {
    let fast = tempfile::tempdir().unwrap();
    let dry = tier::build(
        &BuildOptions {
            dry_run: true,
            ..BuildOptions::new(vec![embedded_tables_dir()], fast.path().join("never"))
        },
        &Silent,
    );
    assert_eq!(dry.total().tables, 70);
    assert!(!fast.path().join("never").exists());
    let first = build_tier(&embedded_tables_dir(), fast.path());
    assert_eq!((first.built, first.up_to_date), (70, 0));
    let second = build_tier(&embedded_tables_dir(), fast.path());
    assert_eq!((second.built, second.up_to_date), (0, 70));
    // The summary's regions add up to the files.
    let bytes: u64 = std::fs::read_dir(embedded_tables_dir())
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert_eq!(first.total().total(), bytes);
}

/// A table replaced after the tier was built: its prefix must not be used.
#[test]
fn stale_prefix_is_detected_and_not_used() {
    let slow = tempfile::tempdir().unwrap();
    let fast = tempfile::tempdir().unwrap();
    for name in [
        "KRvK.rtbw",
        "KRvK.rtbz",
        "KQvK.rtbw",
        "KQvK.rtbz",
        "KQvKR.rtbw",
        "KQvKR.rtbz",
    ] {
        std::fs::copy(embedded_tables_dir().join(name), slow.path().join(name)).unwrap();
    }
    build_tier(slow.path(), fast.path());
    // Replace KQvKR.rtbw: same bytes, new file (a new modification time).
    let table = slow.path().join("KQvKR.rtbw");
    let bytes = std::fs::read(&table).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::remove_file(&table).unwrap();
    std::fs::write(&table, &bytes).unwrap();

    let fs = TieredFilesystem::new(TierOptions {
        fast_dir: Some(fast.path().to_path_buf()),
        ..TierOptions::default()
    });
    let reads = Arc::clone(fs.metrics());
    let mut tb = Tablebase::<Chess>::with_filesystem(Arc::new(fs));
    tb.add_directory(slow.path()).unwrap();
    let pos: Chess = shakmaty::fen::Fen::from_ascii(b"4k3/8/8/8/8/8/3r4/KQ6 w - - 0 1")
        .unwrap()
        .into_position(shakmaty::CastlingMode::Standard)
        .unwrap();
    context::start_thread_log();
    tb.probe_wdl_after_zeroing(&pos).unwrap();
    let events = context::take_thread_log();
    let stale: Vec<_> = events
        .iter()
        .filter(|e| &*e.table == "KQvKR.rtbw")
        .collect();
    assert!(!stale.is_empty());
    assert!(
        stale.iter().all(|e| e.tier != Tier::Fast),
        "the stale prefix was used: {stale:?}"
    );
    let mut rendered = server::exposition::Exposition::default();
    reads.render_fast_tier(&mut rendered);
    let rendered = rendered.into_string();
    assert!(
        rendered.contains("zugzwang_prefix_fallback{table=\"KQvKR.rtbw\",reason=\"the table changed since the fast tier was built"),
        "{rendered}"
    );
}
