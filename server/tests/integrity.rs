//! Integrity on read: a flipped bit on a disk becomes an error for the
//! probes that read it, never a wrong value; other probes keep answering.

mod common;
mod tier_support;

use std::{
    collections::HashMap,
    fs,
    path::{Path, PathBuf},
};

use common::{copy_of_embedded_tables, embedded_tables_dir, shared_tables_and};
use server::{
    catalog::whole_file as published,
    engine::{Engine, EngineConfig, EngineError},
    exposition::Exposition,
    progress::Silent,
    store::tier::build::{self as tier, BuildOptions},
    store::{
        StoreOptions, context, layout,
        read_counters::{ReadMetrics, Tier},
        tier::{INTEGRITY_SUBDIR, TierOptions, TieredFilesystem, manifest::prefix_path},
    },
};
use shakmaty::Chess;
use shakmaty_syzygy::{SyzygyError, Tablebase, filesystem::ReadHint};
use tier_support::*;

/// Flips a bit in each byte of `offsets`, as a failing disk does.
fn damage(path: &Path, offsets: std::ops::Range<u64>) {
    common::damage(path, |bytes| {
        for b in &mut bytes[offsets.start as usize..offsets.end as usize] {
            *b ^= 0x10;
        }
    });
}

fn flip(path: &Path, offset: u64) {
    damage(path, offset..offset + 1);
}

fn answers(tb: &Tablebase<Chess>, pos: &Chess) -> Result<String, SyzygyError> {
    Ok(format!(
        "{:?} {:?}",
        tb.probe_wdl_after_zeroing(pos)?,
        tb.probe_dtz(pos)?
    ))
}

/// The table most looked up by the first positions of the 3-4 piece log, and
/// the offset of one data byte that those lookups read from the slow tier.
fn busiest_data_byte(positions: &[Chess]) -> (String, u64) {
    let tb = tablebase(&[embedded_tables_dir()], None, false);
    let mut reads: HashMap<String, Vec<(u64, usize)>> = HashMap::new();
    let mut fast_lens = HashMap::new();
    replay(&tb, positions, |events| {
        for e in events.iter().filter(|e| e.hint == ReadHint::Data) {
            let fast_len = *fast_lens.entry(e.table.to_string()).or_insert_with(|| {
                tier::fast_len(
                    &layout::parse_file(&embedded_tables_dir().join(&*e.table)).unwrap(),
                    4096,
                )
            });
            if e.offset < fast_len {
                continue;
            }
            reads
                .entry(e.table.to_string())
                .or_default()
                .push((e.offset, e.len));
        }
    });
    let (table, offsets) = reads.into_iter().max_by_key(|(_, o)| o.len()).unwrap();
    let (offset, len) = offsets[offsets.len() / 2];
    (table, offset + len as u64 / 2)
}

/// What a replay over a damaged table saw.
#[derive(Debug, Default)]
struct DamagedReplay {
    answered: u64,
    failed: u64,
    /// Positions answered after the table was quarantined (from other tables).
    answered_after: u64,
    /// The position whose probe found the damage.
    found_at: Option<usize>,
}

/// Replays positions over tables of `dir` of which `table` is damaged at
/// `offset`: every answer is checked against the undamaged tables; the first
/// failure is the block check that finds the damage, every later one the
/// quarantine of that table (naming it, never `dir`).
fn replay_damaged(
    tb: &Tablebase<Chess>,
    positions: &[Chess],
    dir: &Path,
    table: &str,
    offset: u64,
) -> DamagedReplay {
    let reference = tablebase(&[embedded_tables_dir()], None, false);
    let mut seen = DamagedReplay::default();
    for (i, pos) in positions.iter().enumerate() {
        match answers(tb, pos) {
            Ok(answer) => {
                assert_eq!(
                    answer,
                    answers(&reference, pos).unwrap(),
                    "wrong answer for {pos:?}"
                );
                seen.answered += 1;
                if seen.found_at.is_some() {
                    seen.answered_after += 1;
                }
            }
            Err(err) => {
                let damage = damage_of(&err).unwrap_or_else(|| panic!("unexpected {err}"));
                assert_eq!(damage.table(), table, "{err}");
                match (seen.found_at, damage) {
                    (None, Damage::Found { offset: found, .. }) => {
                        assert_eq!(found, offset / 4096 * 4096);
                        seen.found_at = Some(i);
                    }
                    (Some(_), Damage::Quarantined { message, .. }) => {
                        assert!(
                            !message.contains(&*dir.to_string_lossy()),
                            "the refusal shows the directory: {message}"
                        );
                    }
                    (found_at, damage) => {
                        panic!("position {i} (damage found at {found_at:?}): {damage:?}")
                    }
                }
                seen.failed += 1;
            }
        }
    }
    seen
}

/// A flipped byte in a data block: the probe that reads it fails its block
/// check, and from then on the table is refused (quarantined, also after a
/// restart) while the other tables keep answering; never a wrong answer.
fn damaged_data_block(with_fast_tier: bool) {
    let positions = &workload_34()[..3000];
    let (table, offset) = busiest_data_byte(positions);
    let slow = copy_of_embedded_tables();
    let fast = tempfile::tempdir().unwrap();
    if with_fast_tier {
        build_tier(slow.path(), fast.path());
    } else {
        init_checksums(slow.path());
    }
    flip(&slow.path().join(&table), offset);

    let fast_dir = with_fast_tier.then_some(fast.path());
    let (tb, reads) = tablebase_with_reads(&[slow.path().to_path_buf()], fast_dir, true);
    let seen = replay_damaged(&tb, positions, slow.path(), &table, offset);
    println!("{table} damaged at byte {offset}: {seen:?}");
    let found_at = seen.found_at.expect("no probe read the damaged block");
    assert!(
        seen.failed > 1 && seen.answered_after > 0,
        "the table is refused after the check, the others answer: {seen:?}"
    );
    assert!(reads.suspect_tables().contains(&table));

    // The verdict lasts: beside the table, and for a restarted store.
    let record = quarantine_record(slow.path(), &table).expect("a quarantine record");
    assert!(
        record.contains(&format!("table {table}\n"))
            && record.contains("check a block check on read\n"),
        "{record}"
    );
    let restarted = tablebase(&[slow.path().to_path_buf()], fast_dir, true);
    let err = answers(&restarted, &positions[found_at]).unwrap_err();
    assert!(
        matches!(damage_of(&err), Some(Damage::Quarantined { table: named, .. }) if named == table),
        "{err}"
    );

    // verify names the file.
    let findings = published::check_dirs(&[slow.path().to_path_buf()], None, &Silent);
    let named: Vec<&str> = findings
        .mismatched
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(named, [table.as_str()]);
}

#[test]
fn damaged_data_block_quarantines_its_table_with_a_fast_tier() {
    damaged_data_block(true);
}

#[test]
fn damaged_data_block_quarantines_its_table_with_verify_init_checksums() {
    damaged_data_block(false);
}

/// A flipped byte in a prefix on the fast tier: the table falls back to the
/// slow tier and answers stay right.
#[test]
fn damaged_prefix_falls_back_to_the_slow_tier() {
    let positions = &workload_34()[..2000];
    let slow = copy_of_embedded_tables();
    let fast = tempfile::tempdir().unwrap();
    build_tier(slow.path(), fast.path());
    // Damage the sparse index of the busiest table's prefix.
    let (table, _) = busiest_data_byte(positions);
    let layout = layout::parse_file(&slow.path().join(&table)).unwrap();
    let sparse = layout.subtables[0].sparse_index.clone();
    flip(
        &prefix_path(fast.path(), &table),
        (sparse.start + sparse.end) / 2,
    );

    let (tb, reads) = tablebase_with_reads(&[slow.path().to_path_buf()], Some(fast.path()), true);
    let reference = tablebase(&[embedded_tables_dir()], None, false);
    context::start_thread_log();
    for pos in positions {
        assert_eq!(
            answers(&tb, pos).ok(),
            answers(&reference, pos).ok(),
            "{pos:?}"
        );
    }
    let events = context::take_thread_log();
    let last = events
        .iter()
        .rfind(|e| *e.table == *table && e.tier != Tier::Cache)
        .unwrap();
    assert_eq!(last.tier, Tier::Slow, "the damaged prefix is still used");
    let mut rendered = Exposition::default();
    reads.render_fast_tier(&mut rendered);
    let rendered = rendered.into_string();
    assert!(
        rendered.contains(&format!(
            "zugzwang_prefix_fallback{{table=\"{table}\",reason=\"the prefix block at offset"
        )),
        "{rendered}"
    );
}

/// Through the engine, the error names the table and the offset (the HTTP
/// layer answers 500 with it): the block check's own error, or the
/// quarantine it left, which a probe of the same request running beside
/// it may meet first.
#[tokio::test]
async fn engine_error_names_table_and_offset() {
    let slow = copy_of_embedded_tables();
    let fast = tempfile::tempdir().unwrap();
    build_tier(slow.path(), fast.path());
    let table = "KQvKR.rtbz";
    let layout = layout::parse_file(&slow.path().join(table)).unwrap();
    // Damage every data block, so any DTZ lookup in the table fails.
    let path = slow.path().join(table);
    damage(&path, tier::fast_len(&layout, 4096)..layout.file_size);
    let engine = Engine::open(&EngineConfig {
        tables: vec![slow.path().to_path_buf()],
        store: StoreOptions {
            fast: Some(fast.path().to_path_buf()),
            ..StoreOptions::default()
        },
        ..EngineConfig::default()
    })
    .unwrap();
    let pos: Chess = shakmaty::fen::Fen::from_ascii(b"4k3/8/8/8/8/8/3r4/KQ6 b - - 0 1")
        .unwrap()
        .into_position(shakmaty::CastlingMode::Standard)
        .unwrap();
    let err = engine.probe(pos).await.unwrap_err();
    let EngineError::Table {
        table: named,
        reason,
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(named, table);
    assert!(
        reason.contains("checksum") && reason.contains("at offset"),
        "{reason}"
    );
    assert!(
        !reason.contains(&*slow.path().to_string_lossy()),
        "{reason}"
    );
}

/// A file system that fills up during `tier build`: the failing tables are
/// named, the others built, no temporary files left, and the run fails.
#[test]
fn tier_build_on_a_nearly_full_file_system_names_what_failed() {
    let mount = tempfile::tempdir().unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=160k", "tmpfs"])
        .arg(mount.path())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        common::unsupported(
            "cannot mount a small tmpfs here (needs root); the full-disk test did not run",
        );
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mount.path().to_path_buf());
    let slow = copy_of_embedded_tables();
    fs::write(slow.path().join("KQvKQ.rtbw"), b"not a table at all").unwrap();
    let summary = tier::build(
        &BuildOptions::new(vec![slow.path().to_path_buf()], mount.path().to_path_buf()),
        &Silent,
    );
    println!("built {}, failed {:?}", summary.built, summary.failures);
    assert!(summary.built > 0, "nothing fitted");
    let full: Vec<_> = summary
        .failures
        .iter()
        .filter(|(_, why)| why.contains("No space left on device"))
        .collect();
    assert!(!full.is_empty(), "{:?}", summary.failures);
    assert!(
        full.iter()
            .all(|(table, why)| layout::is_table_name(table) && why.contains(table.as_str()))
    );
    assert!(
        summary
            .failures
            .iter()
            .any(|(table, _)| table == "KQvKQ.rtbw")
    );
    let debris: Vec<_> = fs::read_dir(mount.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp."))
        .collect();
    assert!(debris.is_empty(), "temporary files left: {debris:?}");
    // Whatever was built is complete and used; the rest has no checksums,
    // so it is refused as never checked, not served unchecked.
    fs::remove_file(slow.path().join("KQvKQ.rtbw")).unwrap();
    let tb = tablebase(&[slow.path().to_path_buf()], Some(mount.path()), true);
    let positions = workload_34();
    let reference = tablebase(&[embedded_tables_dir()], None, false);
    let (mut answered, mut refused) = (0, 0);
    for pos in &positions[..500] {
        match answers(&tb, pos) {
            Ok(answer) => {
                assert_eq!(Some(answer), answers(&reference, pos).ok(), "{pos:?}");
                answered += 1;
            }
            Err(err) => {
                let message = err.to_string();
                assert!(
                    message.contains("never checked")
                        && full
                            .iter()
                            .any(|(table, _)| message.contains(&format!("{table}: "))),
                    "not the refusal of a table that failed: {message}"
                );
                refused += 1;
            }
        }
    }
    println!("{answered} positions answered, {refused} refused");
    assert!(answered > 0, "nothing built was used");
}

/// What checking every read costs on a hot page cache (the worst case: no
/// disk time to hide it). Run in release mode:
/// `cargo test --release -p server --test integrity -- --ignored --nocapture`
/// Times are the probing thread's own CPU time (so other work on a busy
/// machine does not count), best of several rounds, configurations
/// interleaved so drifts hit them alike.
#[test]
#[ignore = "a measurement; run in release mode"]
fn integrity_cost_on_hot_cache() {
    use std::{sync::Arc, time::Instant};

    use server::store::pread::PreadFilesystem;

    /// CPU time of this thread, in nanoseconds.
    fn cpu_ns() -> u64 {
        let stat = fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
        stat.split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }

    let (dir, log) = shared_tables_and("workloads/explore-345.txt")
        .unwrap_or_else(|| (embedded_tables_dir(), common::fixture("explore-34.txt")));
    let positions = workload(&log);
    let log = log.file_name().unwrap().to_string_lossy();
    let mut tiers = Vec::new();
    for block_size in [1024u32, 4096, 16384] {
        let fast = tempfile::tempdir().unwrap();
        let summary = tier::build(
            &BuildOptions {
                block_size,
                ..BuildOptions::new(vec![dir.clone()], fast.path().to_path_buf())
            },
            &Silent,
        );
        assert!(summary.failures.is_empty());
        tiers.push((block_size, fast));
    }
    let dirs = std::slice::from_ref(&dir);
    let mut plain = Tablebase::<Chess>::with_filesystem(Arc::new(PreadFilesystem::new()));
    plain.add_directory(&dir).unwrap();
    let mut configs: Vec<(String, Tablebase<Chess>)> = vec![
        ("pread, no tier, no checks".into(), plain),
        (
            "fast tier, no checks".into(),
            tablebase(dirs, Some(tiers[1].1.path()), false),
        ),
    ];
    for (block_size, fast) in &tiers {
        configs.push((
            format!("fast tier, xxh3 per {block_size:5} B block"),
            tablebase(dirs, Some(fast.path()), true),
        ));
    }
    let mut best = vec![(f64::MAX, f64::MAX); configs.len()];
    for _ in 0..5 {
        for ((_, tb), best) in configs.iter().zip(&mut best) {
            let (wall, cpu) = (Instant::now(), cpu_ns());
            for pos in &positions {
                let _ = std::hint::black_box(answers(tb, pos));
            }
            let per = |x: f64| x / positions.len() as f64;
            best.0 = best.0.min(per((cpu_ns() - cpu) as f64 / 1e3));
            best.1 = best.1.min(per(wall.elapsed().as_secs_f64() * 1e6));
        }
    }
    println!(
        "{log}, {} positions, WDL+DTZ probe each, hot cache, best of 5 rounds, thread CPU time (wall):",
        positions.len()
    );
    let unchecked = best[1].0;
    for ((label, _), (cpu, wall)) in configs.iter().zip(&best) {
        println!(
            "  {label:<50} {cpu:7.2} µs/position ({wall:7.2}) {:+6.1}% vs fast tier without checks",
            100.0 * (cpu / unchecked - 1.0)
        );
    }
    // The hashes themselves, per 4 KiB block.
    let block = vec![0x5au8; 4096];
    let rounds = 100_000;
    let started = cpu_ns();
    for _ in 0..rounds {
        std::hint::black_box(xxhash_rust::xxh3::xxh3_64(std::hint::black_box(&block)));
    }
    let xxh3 = (cpu_ns() - started) as f64 / rounds as f64;
    let started = cpu_ns();
    for _ in 0..rounds / 10 {
        use sha2::Digest;
        std::hint::black_box(sha2::Sha256::digest(std::hint::black_box(&block)));
    }
    let sha = (cpu_ns() - started) as f64 / (rounds / 10) as f64;
    println!("  hashing 4 KiB: xxh3-64 {xxh3:.0} ns, sha256 {sha:.0} ns");
}

/// The background scrub finds a damaged table by its published digest and
/// shows it, with its progress, on `/metrics`.
#[test]
fn scrub_names_a_damaged_table() {
    let slow = copy_of_embedded_tables();
    flip(&slow.path().join("KRvKB.rtbz"), 100);
    let state = server::store::scrub::ScrubState::default();
    let reads = ReadMetrics::default();
    server::store::scrub::scrub_pass(&[slow.path().to_path_buf()], 1000.0, &state, &reads);
    let damaged: Vec<String> = state.damaged().into_iter().map(|(t, _)| t).collect();
    assert_eq!(damaged, ["KRvKB.rtbz"]);
    assert_eq!(
        state
            .files_checked
            .load(std::sync::atomic::Ordering::Relaxed),
        70
    );
    let mut text = Exposition::default();
    state.render(&mut text);
    let text = text.into_string();
    assert!(text.contains("zugzwang_scrub_files_checked 70"), "{text}");
    assert!(
        text.contains("zugzwang_scrub_damaged{table=\"KRvKB.rtbz\""),
        "{text}"
    );
    assert!(reads.suspect_tables().contains(&"KRvKB.rtbz".to_string()));
}

fn kqvk_position() -> Chess {
    shakmaty::fen::Fen::from_ascii(b"4k3/8/8/8/8/8/8/3QK3 w - - 0 1")
        .unwrap()
        .into_position(shakmaty::CastlingMode::Standard)
        .unwrap()
}

/// A table whose header fails its checksum cannot be opened; the table is
/// quarantined, so the next probes fail at once instead of reading it again.
#[test]
fn header_that_fails_its_checksum_is_not_reread_on_every_probe() {
    let slow = copy_of_embedded_tables();
    init_checksums(slow.path());
    flip(&slow.path().join("KQvK.rtbw"), 20);
    let tb = tablebase(&[slow.path().to_path_buf()], None, true);
    let pos = kqvk_position();
    let header_reads = |events: Vec<context::ReadEvent>| {
        events
            .iter()
            .filter(|e| &*e.table == "KQvK.rtbw" && e.tier != Tier::Cache)
            .count()
    };
    context::start_thread_log();
    let first = tb.probe_wdl_after_zeroing(&pos).unwrap_err().to_string();
    assert!(header_reads(context::take_thread_log()) > 0);
    assert!(first.contains("checksum mismatch"), "{first}");
    for _ in 0..3 {
        let err = tb.probe_wdl_after_zeroing(&pos).unwrap_err();
        assert_eq!(
            header_reads(context::take_thread_log()),
            0,
            "the damaged table was read again"
        );
        let again = err.to_string();
        assert!(
            matches!(damage_of(&err), Some(Damage::Quarantined { table, .. }) if table == "KQvK.rtbw")
                && again.contains("checksum"),
            "{again}"
        );
        assert!(!again.contains(&*slow.path().to_string_lossy()), "{again}");
    }
}

/// A manifest that exists but cannot be read fails the probes of its table
/// (never serving it unchecked), and a later probe tries again.
#[tokio::test]
async fn unreadable_manifest_fails_the_probe_and_is_retried() {
    let slow = copy_of_embedded_tables();
    let sums = slow.path().join(INTEGRITY_SUBDIR);
    init_checksums(slow.path());
    let manifest = sums.join("KQvK.rtbw.manifest");
    let saved = sums.join("saved.manifest");
    fs::rename(&manifest, &saved).unwrap();
    // Reading a directory fails with EISDIR: an error other than "not there".
    fs::create_dir(&manifest).unwrap();
    let engine = Engine::open(&EngineConfig {
        tables: vec![slow.path().to_path_buf()],
        ..EngineConfig::default()
    })
    .unwrap();
    let err = engine.probe(kqvk_position()).await.unwrap_err();
    let EngineError::Table { table, reason } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(table, "KQvK.rtbw");
    assert!(reason.contains("checksum manifest"), "{reason}");
    assert!(
        !reason.contains(&*slow.path().to_string_lossy()),
        "{reason}"
    );

    fs::remove_dir(&manifest).unwrap();
    fs::rename(&saved, &manifest).unwrap();
    let answer = engine.probe(kqvk_position()).await.unwrap();
    assert_eq!(answer.pos.category, app::api::Category::Win);
}

/// By default a table whose bytes were never checked is refused, naming
/// what to run; once checked it answers, and a table whose checksums go
/// missing later is refused again, never served unchecked.
#[tokio::test]
async fn unchecked_tables_are_refused_by_default() {
    let slow = copy_of_embedded_tables();
    let config = EngineConfig {
        tables: vec![slow.path().to_path_buf()],
        ..EngineConfig::default()
    };
    let engine = Engine::open(&config).expect("starts, serving the rest");
    let err = engine.probe(kqvk_position()).await.unwrap_err();
    let EngineError::Table { table, reason } = &err else {
        panic!("{err:?}");
    };
    assert!(table.starts_with("KQvK.rtb"), "{table}");
    assert!(
        reason.contains("never checked") && reason.contains("verify --init"),
        "{reason}"
    );
    assert!(
        !err.to_string().contains(&*slow.path().to_string_lossy()),
        "{err}"
    );

    init_checksums(slow.path());
    let engine = Engine::open(&config).unwrap();
    engine
        .probe(kqvk_position())
        .await
        .expect("checked tables answer");
    fs::remove_file(
        slow.path()
            .join(INTEGRITY_SUBDIR)
            .join("KQvK.rtbw.manifest"),
    )
    .unwrap();
    let engine = Engine::open(&config).unwrap();
    let err = engine.probe(kqvk_position()).await.unwrap_err();
    assert!(err.to_string().contains("never checked"), "{err}");

    let allowed = EngineConfig {
        store: StoreOptions {
            allow_unchecked: true,
            ..StoreOptions::default()
        },
        ..config
    };
    let engine = Engine::open(&allowed).unwrap();
    engine
        .probe(kqvk_position())
        .await
        .expect("--allow-unchecked answers");
}

/// Unchecked tables are counted per directory at start and shown on
/// `/metrics`.
#[test]
fn tables_without_checksums_are_counted() {
    let slow = copy_of_embedded_tables();
    let fs = TieredFilesystem::new(TierOptions::default());
    let uncovered = server::store::coverage::survey(&fs, &[slow.path().to_path_buf()]);
    assert_eq!(uncovered.len(), 1);
    assert_eq!(uncovered[0].unchecked.len(), 70);
    let store = server::store::open(&StoreOptions::default(), &[slow.path().to_path_buf()])
        .expect("the store opens, refusing the tables without checksums");
    let mut rendered = Exposition::default();
    store.metrics.render(&mut rendered);
    assert!(rendered.into_string().contains(
        "# TYPE zugzwang_tables_without_checksums gauge\nzugzwang_tables_without_checksums 70\n"
    ));
    init_checksums(slow.path());
    let uncovered = server::store::coverage::survey(&fs, &[slow.path().to_path_buf()]);
    assert!(uncovered.is_empty(), "{uncovered:?}");
}
