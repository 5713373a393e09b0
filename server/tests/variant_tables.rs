//! Atomic and antichess table files in the store's tools: `verify` and the
//! scrub check them against the published md5 lists, `tier build` takes
//! them (both antichess suffixes; refusing a damaged one), the tiered store
//! serves them to `/atomic` and `/antichess`, and `/metrics` names a
//! damaged one by its file name.

mod common;
mod tier_support;

use std::{path::Path, sync::Arc, sync::atomic::Ordering::Relaxed};

use app::variant::{Variant, parse_variant_fen};
use server::{
    catalog::whole_file::check_dirs,
    engine::{Engine, EngineConfig},
    exposition::Exposition,
    progress::Silent,
    store::scrub::{ScrubState, scrub_pass},
    store::tier::build as tier_build,
    store::{
        StoreOptions, context,
        read_counters::{ReadMetrics, Tier},
        tier::{TierOptions, TieredFilesystem},
    },
};
use shakmaty::{CastlingMode, fen::Fen, variant::Atomic};
use shakmaty_syzygy::{Tablebase, filesystem::ReadHint};

/// A writable copy of the atomic tables.
fn copy_of_atomic_tables() -> tempfile::TempDir {
    common::copy_of(&common::atomic_tables_dir())
}

#[test]
fn the_embedded_atomic_tables_match_the_published_md5() {
    let findings = check_dirs(&[common::atomic_tables_dir()], None, &Silent);
    assert_eq!(findings.checked, 70, "{findings:?}");
    assert!(findings.is_clean(false), "{findings:?}");
}

#[test]
fn verify_names_a_damaged_atomic_table_by_its_md5() {
    let copy = copy_of_atomic_tables();
    common::damage(&copy.path().join("KQvK.atbz"), |bytes| bytes[100] ^= 1);
    let findings = check_dirs(&[copy.path().to_path_buf()], None, &Silent);
    assert_eq!(findings.mismatched.len(), 1, "{findings:?}");
    let (name, problem) = &findings.mismatched[0];
    assert_eq!(name, "KQvK.atbz");
    assert!(problem.contains("md5"), "{problem}");
}

#[test]
fn the_shared_antichess_tables_match_the_published_md5() {
    let Some(dir) = common::shared_dir("syzygy/antichess", "the antichess digest check") else {
        return;
    };
    let findings = check_dirs(&[dir], None, &Silent);
    assert_eq!(findings.checked, 884, "{findings:?}");
    assert!(findings.is_clean(false), "{findings:?}");
}

#[test]
fn tier_build_refuses_a_damaged_atomic_table() {
    let copy = copy_of_atomic_tables();
    // A byte near the end: in the data, past the header tier build parses.
    common::damage(&copy.path().join("KRvKN.atbw"), |bytes| {
        let last = bytes.len() - 1;
        bytes[last] ^= 4;
    });
    let fast = tempfile::tempdir().expect("temp dir");
    let options =
        tier_build::BuildOptions::new(vec![copy.path().to_path_buf()], fast.path().to_path_buf());
    let summary = tier_build::build(&options, &Silent);
    assert_eq!(summary.failures.len(), 1, "{:?}", summary.failures);
    let (name, problem) = &summary.failures[0];
    assert!(name.contains("KRvKN.atbw"), "{name}");
    assert!(problem.contains("md5"), "{problem}");
}

#[tokio::test]
async fn atomic_tables_are_served_from_a_fast_tier() {
    let slow = copy_of_atomic_tables();
    let fast = tempfile::tempdir().expect("temp dir");
    tier_support::build_tier(slow.path(), fast.path());
    let engine = Engine::open(&EngineConfig {
        atomic: vec![slow.path().to_path_buf()],
        store: StoreOptions {
            fast: Some(fast.path().to_path_buf()),
            ..StoreOptions::default()
        },
        ..EngineConfig::default()
    })
    .expect("tables load");
    let pos =
        parse_variant_fen(Variant::Atomic, "4k3/3n4/8/8/8/8/3Q4/K7 w - - 0 1").expect("legal");
    let answer = engine.probe(pos).await.expect("answer");
    assert_eq!(answer.pos.dtz, Some(1));
    assert_eq!(answer.moves[0].san, "Qxd7#");
}

#[test]
fn the_antichess_fixture_matches_the_published_md5() {
    let findings = check_dirs(&[common::antichess_tables_dir()], None, &Silent);
    assert_eq!(findings.checked, 42, "{findings:?}");
    assert!(findings.mismatched.is_empty() && findings.extra.is_empty());
}

/// The scrub reads every variant's directories (serve passes `--atomic`
/// and `--antichess` too) and names a damaged file by its md5, in its
/// state and on `/metrics`.
#[test]
fn the_scrub_checks_atomic_and_antichess_tables_by_md5() {
    let atomic = copy_of_atomic_tables();
    let antichess = common::copy_of(&common::antichess_tables_dir());
    common::damage(&atomic.path().join("KQvK.atbz"), |bytes| bytes[100] ^= 1);
    common::damage(&antichess.path().join("BvP.gtbw"), |bytes| bytes[100] ^= 1);
    let state = ScrubState::default();
    let dirs = [atomic.path().to_path_buf(), antichess.path().to_path_buf()];
    let reads = ReadMetrics::default();
    scrub_pass(&dirs, 1000.0, &state, &reads);
    assert_eq!(state.files_checked.load(Relaxed), 70 + 42);
    let mut damaged = state.damaged();
    damaged.sort();
    let names: Vec<&str> = damaged.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(names, ["BvP.gtbw", "KQvK.atbz"]);
    assert!(
        damaged.iter().all(|(_, why)| why.contains("md5")),
        "{damaged:?}"
    );
    let mut text = Exposition::default();
    state.render(&mut text);
    let text = text.into_string();
    assert!(
        text.contains("zugzwang_scrub_damaged{table=\"KQvK.atbz\""),
        "{text}"
    );
    let mut page = Exposition::default();
    reads.render_integrity(&mut page);
    let page = page.into_string();
    assert!(
        page.contains("zugzwang_table_suspect{table=\"BvP.gtbw\"} 1"),
        "{page}"
    );
}

/// `tier build` takes antichess tables of both suffixes (`.gtbw` with
/// pawns, `.stbw` without), and the engine answers `/antichess` from the
/// fast tier with checksums required.
#[tokio::test]
async fn antichess_tables_of_both_suffixes_are_served_from_a_fast_tier() {
    let slow = common::copy_of(&common::antichess_tables_dir());
    let fast = tempfile::tempdir().expect("temp dir");
    let summary = tier_support::build_tier(slow.path(), fast.path());
    assert_eq!(summary.built, 42);
    let built: Vec<String> = std::fs::read_dir(fast.path())
        .expect("fast dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    for suffix in ["gtbw", "gtbz", "stbw", "stbz"] {
        assert!(
            built
                .iter()
                .any(|name| name.contains(&format!(".{suffix}"))),
            "nothing for .{suffix} in {built:?}"
        );
    }
    let engine = Engine::open(&EngineConfig {
        antichess: vec![slow.path().to_path_buf()],
        store: StoreOptions {
            fast: Some(fast.path().to_path_buf()),
            ..StoreOptions::default()
        },
        ..EngineConfig::default()
    })
    .expect("tables load");
    // KvP and, after the promotions, KvQ ... KvK: both suffixes are read.
    let pos = parse_variant_fen(Variant::Antichess, "8/8/8/8/8/8/7p/K7 b - - 0 1").expect("legal");
    let answer = engine.probe(pos).await.expect("answer");
    assert!(answer.pos.dtz.is_some(), "{:?}", answer.pos);
    assert!(
        answer.moves.iter().all(|m| m.pos.dtz.is_some()),
        "{:?}",
        answer.moves
    );
}

/// A data block of an atomic table that fails its checksum: the probe
/// fails and `/metrics` names the table, suffix and all.
#[test]
fn a_damaged_atomic_block_marks_its_table_suspect_on_metrics() {
    let slow = copy_of_atomic_tables();
    let fast = tempfile::tempdir().expect("temp dir");
    tier_support::build_tier(slow.path(), fast.path());
    let positions = atomic_positions();
    let (pos, table, offset) = positions
        .iter()
        .find_map(|pos| {
            let event = slow_data_reads(slow.path(), fast.path(), pos)
                .into_iter()
                .next()?;
            Some((pos, event.0, event.1))
        })
        .expect("some atomic probe reads a data block from the slow tier");
    assert!(
        table.ends_with(".atbw") || table.ends_with(".atbz"),
        "{table}"
    );
    common::damage(&slow.path().join(&table), |bytes| {
        bytes[offset as usize] ^= 0x10;
    });
    let (tb, reads) = atomic_tablebase(slow.path(), fast.path());
    let failed = tb.probe_wdl(pos).is_err() || tb.probe_dtz(pos).is_err();
    assert!(
        failed,
        "{table} damaged at {offset}, yet the probe answered"
    );
    let mut page = Exposition::default();
    reads.render_integrity(&mut page);
    let page = page.into_string();
    assert!(
        page.contains(&format!("zugzwang_table_suspect{{table=\"{table}\"}}")),
        "{table} not suspect in:\n{page}"
    );
}

/// The tables over a fast tier, and the store's read counters.
fn atomic_tablebase(slow: &Path, fast: &Path) -> (Tablebase<Atomic>, Arc<ReadMetrics>) {
    let fs = TieredFilesystem::new(TierOptions {
        fast_dir: Some(fast.to_path_buf()),
        check_blocks: true,
        ..TierOptions::default()
    });
    let reads = Arc::clone(fs.metrics());
    let mut tb = Tablebase::with_filesystem(Arc::new(fs));
    tb.add_directory(slow).expect("table directory");
    (tb, reads)
}

/// The table and offset of each data read a probe makes from the slow tier.
fn slow_data_reads(slow: &Path, fast: &Path, pos: &Atomic) -> Vec<(String, u64)> {
    let (tb, _) = atomic_tablebase(slow, fast);
    context::start_thread_log();
    let _ = tb.probe_wdl(pos);
    let _ = tb.probe_dtz(pos);
    context::take_thread_log()
        .into_iter()
        .filter(|e| e.hint == ReadHint::Data && e.tier == Tier::Slow)
        .map(|e| (e.table.to_string(), e.offset + e.len as u64 / 2))
        .collect()
}

/// The atomic positions of the fixture python-chess's values came for.
fn atomic_positions() -> Vec<Atomic> {
    let text = std::fs::read_to_string(common::fixture("atomic-34.csv")).expect("fixture");
    text.lines()
        .skip(1)
        .filter_map(|line| line.split(',').next())
        .filter_map(|fen| Fen::from_ascii(fen.as_bytes()).ok())
        .filter_map(|fen| fen.into_position(CastlingMode::Standard).ok())
        .collect()
}

/// `GET /tables?variant=` lists that variant's tables against its own
/// catalogue (the page names an unknown move's missing table from it); a
/// variant it does not know is a 400 that says which exist.
#[tokio::test]
async fn installed_tables_are_listed_per_variant() {
    let engine = Engine::open(&EngineConfig {
        antichess: vec![common::fixture("antichess-2")],
        ..EngineConfig::default()
    })
    .expect("tables load");
    let router = common::router(engine);
    let tables = |uri: &'static str| {
        let router = router.clone();
        async move {
            let (status, _, body) = common::get(&router, uri, None).await;
            let json: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
            (status.as_u16(), json)
        }
    };
    let (status, standard) = tables("/tables").await;
    assert_eq!(status, 200);
    assert_eq!(standard["tables"].as_array().map(Vec::len), Some(35));
    // The embedded DTM tables: every 2- to 4-piece material, by Syzygy name.
    let dtm = standard["dtm"].as_array().expect("dtm list");
    assert!(
        dtm.contains(&"KBNvK".into()) && dtm.contains(&"KvK".into()),
        "{standard}"
    );
    assert_eq!(dtm.len(), 36, "{standard}");
    let (_, atomic) = tables("/tables?variant=atomic").await;
    let atomic_names = atomic["tables"].as_array().expect("list");
    assert_eq!(atomic_names.len(), 35, "{atomic}");
    assert_eq!(atomic["pieces"][0]["pieces"], 3, "{atomic}");
    assert_eq!(atomic["dtm"], serde_json::json!([]), "{atomic}");
    let (_, antichess) = tables("/tables?variant=antichess").await;
    let two = &antichess["pieces"][0];
    assert_eq!(
        (&two["pieces"], &two["installed"], &two["published"]),
        (&2.into(), &21.into(), &21.into()),
        "{antichess}"
    );
    assert!(
        antichess["tables"]
            .as_array()
            .expect("list")
            .contains(&"KvK".into()),
        "{antichess}"
    );
    let (status, refused) = tables("/tables?variant=crazyhouse").await;
    assert_eq!(status, 400);
    let message = refused["error"].as_str().expect("message");
    assert!(
        message.contains("standard, atomic or antichess"),
        "{message}"
    );
}
