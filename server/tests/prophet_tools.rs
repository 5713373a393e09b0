//! Prophet DTM tables for self-hosters: `tier build`
//! keeps their header and block-size list on the fast tier and records
//! block checksums, so a DTM lookup costs at most one slow read and a
//! damaged block is an error naming the table; `verify`, `tables status`
//! and the scrub know them.

mod common;
mod process;

use std::{
    fs,
    path::{Path, PathBuf},
    sync::Arc,
};

use app::material::piece_count;
use server::dtm::{
    Dtm, ProphetOptions, ProphetTables, Verification,
    index::{Layout, ProphetMaterial},
};
use server::{
    dtm::catalog as dtm,
    progress::Silent,
    store::{
        self, StoreOptions,
        context::{self, ReadEvent},
        read_counters::Tier,
        tier::build::{self as tier, BuildOptions},
    },
};
use shakmaty::{CastlingMode, Chess, Role, fen::Fen};
use shakmaty_syzygy::filesystem::{OsFilesystem, ReadHint};

/// The embedded Prophet tables the repository carries.
fn embedded_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tables-prophet")
}

fn position(fen: &str) -> Chess {
    let fen: Fen = fen.parse().expect("fen parses");
    fen.into_position(CastlingMode::Standard)
        .expect("legal position")
}

/// The md5 the embedded MD5SUMS gives a file.
fn embedded_md5(name: &str) -> String {
    let text = fs::read_to_string(embedded_dir().join("MD5SUMS")).unwrap();
    text.lines()
        .find_map(|line| {
            let (md5, file) = line.split_once("  ")?;
            (file == name).then(|| md5.to_string())
        })
        .unwrap_or_else(|| panic!("{name} is not in MD5SUMS"))
}

/// A directory laid out as the generator writes it (`4men/0pawns/…`, with
/// an MD5SUMS of `./Nmen/Mpawns/NAME` paths at the top), holding `names`
/// from the embedded tables.
fn generator_dir(names: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut md5sums = String::new();
    for name in names {
        let material = ProphetMaterial::from_name(name.strip_suffix(".egtb.bz").unwrap()).unwrap();
        let pawns = material.stm.count(Role::Pawn) + material.sntm.count(Role::Pawn);
        let sub = format!("{}men/{pawns}pawns", piece_count(name));
        fs::create_dir_all(dir.path().join(&sub)).unwrap();
        fs::copy(embedded_dir().join(name), dir.path().join(&sub).join(name)).unwrap();
        md5sums.push_str(&format!("{}  ./{sub}/{name}\n", embedded_md5(name)));
    }
    fs::write(dir.path().join("MD5SUMS"), md5sums).unwrap();
    dir
}

fn path_of(dir: &Path, name: &str) -> PathBuf {
    dtm::find(&[dir.to_path_buf()])
        .files
        .into_iter()
        .map(|(path, _)| path)
        .find(|p| p.file_name().is_some_and(|n| n == name))
        .unwrap_or_else(|| panic!("{name} not found in {}", dir.display()))
}

/// The offset and length of the block holding `pos`'s value in its table.
fn block_of(file: &Path, pos: &Chess) -> (u64, u64) {
    let bytes = fs::read(file).unwrap();
    let word = |i: usize| u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap());
    let (positions, per_block) = (word(1), word(2));
    assert!(per_block <= 65535, "u16 block list expected");
    let blocks = positions.div_ceil(per_block) as usize;
    let lengths: Vec<u64> = (0..blocks)
        .map(|b| u64::from(u16::from_le_bytes([bytes[24 + 2 * b], bytes[25 + 2 * b]])))
        .collect();
    let index = Layout::new(ProphetMaterial::from_position(pos))
        .index(pos)
        .unwrap();
    let block = (index / per_block) as usize;
    let offset = 24 + 2 * blocks as u64 + lengths[..block].iter().sum::<u64>();
    (offset, lengths[block])
}

/// Positions whose side to move has its own table here, with their value
/// where known (else compared with a plain reader).
const POSITIONS: [(&str, Option<Dtm>); 5] = [
    ("8/8/8/8/8/7B/8/Nk5K w - - 0 1", Some(Dtm::Win(65))),
    ("7K/6Q1/8/8/8/3k4/8/8 w - - 0 1", Some(Dtm::Win(19))),
    ("k7/8/1K6/8/8/8/8/7R w - - 0 1", Some(Dtm::Win(1))),
    ("8/8/8/4k3/8/8/8/K6R w - - 0 1", None),
    ("8/8/8/4k3/8/8/8/K7 w - - 0 1", Some(Dtm::Draw)),
];

const NAMES: [&str; 4] = ["KBNK.egtb.bz", "KQK.egtb.bz", "KRK.egtb.bz", "KK.egtb.bz"];

#[test]
fn tier_serves_dtm_with_at_most_one_slow_read_per_lookup() {
    let slow = generator_dir(&NAMES);
    let fast = tempfile::tempdir().unwrap();
    let summary = tier::build(
        &BuildOptions::new(vec![slow.path().to_owned()], fast.path().to_owned()),
        &Silent,
    );
    assert!(summary.failures.is_empty(), "{:?}", summary.failures);
    assert_eq!(summary.dtm.tables, 4, "{summary:?}");
    assert_eq!(summary.built, 4);
    assert_eq!(summary.wdl.tables + summary.dtz.tables, 0);
    // Header (24 bytes) and a u16 per block of 32768 positions.
    assert!(summary.dtm.block_lengths > 0 && summary.dtm.header_and_sparse == 4 * 24);
    for name in NAMES {
        assert!(
            fast.path().join(format!("{name}.manifest")).is_file(),
            "{name}"
        );
        assert!(
            fast.path().join(format!("{name}.prefix")).is_file(),
            "{name}"
        );
    }
    let render = server::cli::tier::render_summary(&summary);
    assert!(render.contains("DTM"), "{render}");

    let dirs = [slow.path().to_owned()];
    let store = store::open(
        &StoreOptions {
            fast: Some(fast.path().to_owned()),
            ..StoreOptions::default()
        },
        &dirs,
    )
    .unwrap();
    context::start_thread_log();
    let tables =
        ProphetTables::open_with(&dirs, Arc::clone(&store.filesystem), unchecked()).unwrap();
    assert_eq!(tables.len(), 4);
    // Opening read every header and block list: from the fast tier (the
    // block list then from the index cache the header's read filled),
    // never from the slow one.
    let opening = context::take_thread_log();
    let is_prefix = |e: &&ReadEvent| matches!(e.hint, ReadHint::Header | ReadHint::BlockLengths);
    assert!(
        opening.iter().filter(is_prefix).count() >= 8,
        "{opening:#?}"
    );
    assert!(
        opening.iter().all(|e| e.tier != Tier::Slow),
        "a header or block list came from the slow tier: {opening:#?}"
    );
    assert_eq!(
        opening
            .iter()
            .filter(|e| e.tier == Tier::Fast && e.hint == ReadHint::Header)
            .count(),
        4,
        "{opening:#?}"
    );
    assert_eq!(store.metrics.reads.totals().slow, 0);
    assert!(store.metrics.reads.totals().fast >= 4);

    let plain = ProphetTables::open(&dirs, Arc::new(OsFilesystem::new())).unwrap();
    for (fen, expected) in POSITIONS {
        let pos = position(fen);
        let value = tables.probe(&pos).unwrap();
        assert!(value.is_some(), "{fen}");
        if expected.is_some() {
            assert_eq!(value, expected, "{fen}");
        }
        assert_eq!(value, plain.probe(&pos).unwrap(), "{fen}");
        let events = context::take_thread_log();
        let slow_reads = events.iter().filter(|e| e.tier == Tier::Slow).count();
        assert!(slow_reads <= 1, "{fen}: {events:#?}");
        assert!(
            events
                .iter()
                .all(|e| e.tier != Tier::Slow || e.hint == ReadHint::Data),
            "{fen}: {events:#?}"
        );
    }
    assert!(store.metrics.reads.suspect_tables().is_empty());
}

#[test]
fn a_damaged_block_in_the_slow_copy_is_an_error_naming_the_table() {
    let slow = generator_dir(&NAMES);
    let fast = tempfile::tempdir().unwrap();
    let summary = tier::build(
        &BuildOptions::new(vec![slow.path().to_owned()], fast.path().to_owned()),
        &Silent,
    );
    assert!(summary.failures.is_empty(), "{:?}", summary.failures);

    // Flip a byte in the middle of the block holding KBNK's longest mate.
    let pos = position(POSITIONS[0].0);
    let file = path_of(slow.path(), "KBNK.egtb.bz");
    let (offset, len) = block_of(&file, &pos);
    let mut bytes = fs::read(&file).unwrap();
    bytes[(offset + len / 2) as usize] ^= 0x10;
    fs::write(&file, &bytes).unwrap();

    let dirs = [slow.path().to_owned()];
    let store = store::open(
        &StoreOptions {
            fast: Some(fast.path().to_owned()),
            ..StoreOptions::default()
        },
        &dirs,
    )
    .unwrap();
    let tables =
        ProphetTables::open_with(&dirs, Arc::clone(&store.filesystem), unchecked()).unwrap();
    for _ in 0..2 {
        let err = tables
            .probe(&pos)
            .expect_err("a damaged block must not answer");
        let message = err.to_string();
        assert!(message.contains("KBNK.egtb.bz"), "{message}");
    }
    assert_eq!(store.metrics.reads.suspect_tables(), ["KBNK.egtb.bz"]);
    // The other tables still answer.
    assert_eq!(
        tables.probe(&position(POSITIONS[1].0)).unwrap(),
        POSITIONS[1].1
    );

    // A rebuild refuses the damaged file: its checksum field (and md5)
    // say so, and nothing is recorded for it.
    let again = tempfile::tempdir().unwrap();
    let summary = tier::build(
        &BuildOptions::new(vec![slow.path().to_owned()], again.path().to_owned()),
        &Silent,
    );
    assert_eq!(summary.built, 3, "{summary:?}");
    assert_eq!(summary.failures.len(), 1, "{:?}", summary.failures);
    let (table, problem) = &summary.failures[0];
    assert_eq!(table, "KBNK.egtb.bz");
    assert!(problem.contains("md5"), "{problem}");
    assert!(!again.path().join("KBNK.egtb.bz.manifest").exists());
}

/// Without an `MD5SUMS`, `verify` still finds a damaged file by its own
/// checksum field (and quarantines it); `tier build` refuses to vouch for
/// any file no list names, damaged or not: a failure naming it, not a
/// verdict on its bytes, and nothing recorded for it.
#[test]
fn a_damaged_file_without_a_list_fails_its_own_checksum_and_is_not_built() {
    // No MD5SUMS (a flat directory, as the embedded tables lie).
    let dir = tempfile::tempdir().unwrap();
    let pos = position(POSITIONS[1].0);
    let file = dir.path().join("KQK.egtb.bz");
    fs::copy(embedded_dir().join("KQK.egtb.bz"), &file).unwrap();
    let (offset, len) = block_of(&file, &pos);
    let mut bytes = fs::read(&file).unwrap();
    bytes[(offset + len / 2) as usize] ^= 0x01;
    fs::write(&file, &bytes).unwrap();
    let err = dtm::check_file(&file, None, |_| {}).unwrap_err();
    assert!(err.is_damage(), "{err}");
    assert!(err.to_string().contains("KQK.egtb.bz"), "{err}");
    let checked = dtm::check_dirs(&[dir.path().to_owned()], &Silent);
    assert_eq!(
        checked
            .damaged_paths
            .iter()
            .map(|(path, _)| path)
            .collect::<Vec<_>>(),
        [&file]
    );
    assert!(checked.unlisted.is_empty(), "{:?}", checked.unlisted);

    let fast = dir.path().join("fast");
    let summary = tier::build(
        &BuildOptions::new(vec![dir.path().to_owned()], fast.clone()),
        &Silent,
    );
    assert_eq!(summary.failures.len(), 1, "{:?}", summary.failures);
    let (table, problem) = &summary.failures[0];
    assert_eq!(table, "KQK.egtb.bz");
    assert!(problem.contains("no MD5SUMS"), "{problem}");
    assert!(summary.damaged.is_empty(), "{:?}", summary.damaged);
    assert!(!fast.join("KQK.egtb.bz.manifest").exists());
}

#[test]
fn every_embedded_table_passes_its_whole_file_check() {
    let checked = dtm::check_dirs(&[embedded_dir()], &Silent);
    assert_eq!(checked.files, 66);
    assert!(checked.damaged.is_empty(), "{:?}", checked.damaged);
    assert!(checked.missing.is_empty(), "{:?}", checked.missing);
}

#[test]
fn shared_tables_in_the_generators_layout_pass() {
    let Some(dir) = common::shared_dir("prophet", "the check of shared/prophet") else {
        return;
    };
    let found = dtm::find(std::slice::from_ref(&dir));
    assert_eq!(found.files.len(), 66);
    assert!(found.files.iter().all(|(_, listed)| listed.is_some()));
    let checked = dtm::check_dirs(&[dir], &Silent);
    assert!(checked.damaged.is_empty(), "{:?}", checked.damaged);
    assert!(checked.missing.is_empty(), "{:?}", checked.missing);
}

/// Runs the real binary: exit success and stdout.
fn zugzwang(args: &[&str]) -> (bool, String) {
    let output = process::binary().args(args).output().unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr),
    )
}

fn flip_block_of(dir: &Path, name: &str, fen: &str) {
    let file = path_of(dir, name);
    let (offset, len) = block_of(&file, &position(fen));
    let mut bytes = fs::read(&file).unwrap();
    bytes[(offset + len / 2) as usize] ^= 0x10;
    fs::write(&file, &bytes).unwrap();
}

#[test]
fn verify_checks_prophet_files_by_checksum_and_md5sums() {
    let dir = generator_dir(&NAMES);
    let path = dir.path().to_str().unwrap();
    let (ok, out) = zugzwang(&["verify", path, "--partial"]);
    assert!(ok, "{out}");
    assert!(out.contains("of which 4 Prophet DTM files"), "{out}");
    assert!(out.contains("0 damaged"), "{out}");
    // Without --partial the rest of the 2-4 piece set is missing.
    let (ok, out) = zugzwang(&["verify", path]);
    assert!(!ok, "{out}");
    assert!(out.contains("MISSING KBBK.egtb.bz"), "{out}");
    assert!(!out.contains("MISSING KBNK.egtb.bz"), "{out}");
    let missing: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("MISSING "))
        .filter_map(|l| l.split(':').next())
        .collect();
    assert_eq!(missing.len(), 66 - 4, "{out}");
    assert!(missing.iter().all(|n| piece_count(n) <= 4), "{out}");

    // A damaged block: md5 against MD5SUMS names the list.
    flip_block_of(dir.path(), "KBNK.egtb.bz", POSITIONS[0].0);
    let (ok, out) = zugzwang(&["verify", path, "--partial"]);
    assert!(!ok, "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("MISMATCH KBNK.egtb.bz: md5"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("MD5SUMS") && line.contains("fetch it again"),
        "{line}"
    );

    // Without the list, the file's own checksum field tells.
    fs::remove_file(dir.path().join("MD5SUMS")).unwrap();
    let (ok, out) = zugzwang(&["verify", path, "--partial"]);
    assert!(!ok, "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("MISMATCH KBNK.egtb.bz: ")
                && l.contains("KBNK.egtb.bz is damaged")),
        "{out}"
    );
    assert!(out.contains("1 damaged"), "{out}");

    // A truncated file.
    let krk = path_of(dir.path(), "KRK.egtb.bz");
    let bytes = fs::read(&krk).unwrap();
    fs::write(&krk, &bytes[..bytes.len() - 10]).unwrap();
    let (ok, out) = zugzwang(&["verify", path, "--partial"]);
    assert!(!ok, "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("MISMATCH KRK.egtb.bz: ") && l.contains("truncated")),
        "{out}"
    );
}

#[test]
fn verify_init_records_block_checksums_beside_nested_prophet_files() {
    let dir = generator_dir(&NAMES);
    let path = dir.path().to_str().unwrap();
    let (ok, out) = zugzwang(&["verify", "--init", path]);
    assert!(ok, "{out}");
    assert!(out.contains("block checksums for 4 tables"), "{out}");
    // Beside each file, where the reader looks.
    assert!(
        dir.path()
            .join("4men/0pawns/.zugzwang/KBNK.egtb.bz.manifest")
            .is_file()
    );
    assert!(
        dir.path()
            .join("2men/0pawns/.zugzwang/KK.egtb.bz.sums")
            .is_file()
    );
    let (ok, out) = zugzwang(&["verify", "--init", path]);
    assert!(ok && out.contains("4 already up to date"), "{out}");

    // Served without a fast tier, a damaged block fails its check.
    flip_block_of(dir.path(), "KBNK.egtb.bz", POSITIONS[0].0);
    let dirs = [dir.path().to_owned()];
    let store = store::open(&StoreOptions::default(), &dirs).unwrap();
    let tables =
        ProphetTables::open_with(&dirs, Arc::clone(&store.filesystem), unchecked()).unwrap();
    let err = tables.probe(&position(POSITIONS[0].0)).unwrap_err();
    assert!(err.to_string().contains("KBNK.egtb.bz"), "{err}");
    assert_eq!(store.metrics.reads.suspect_tables(), ["KBNK.egtb.bz"]);
    assert_eq!(
        tables.probe(&position(POSITIONS[1].0)).unwrap(),
        POSITIONS[1].1
    );
}

#[test]
fn tables_status_counts_prophet_files_and_names_missing_ones() {
    let dir = generator_dir(&NAMES);
    let path = dir.path().to_str().unwrap();
    let (ok, out) = zugzwang(&["tables", "status", "--dtm", path]);
    assert!(ok, "{out}");
    assert!(
        !out.contains("standard tables in"),
        "only --dtm: no Syzygy survey of the current directory: {out}"
    );
    assert!(out.contains("Prophet DTM tables in"), "{out}");
    assert!(out.contains("(md5 list: "), "{out}");
    let row = |pieces: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(pieces))
            .unwrap_or_else(|| panic!("no {pieces}-piece row: {out}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let expected = dtm::expected_files();
    let of = |p: usize| expected.iter().filter(|n| piece_count(n) == p).count();
    assert!(row("2").starts_with("2 1 of 1"), "{out}");
    assert!(row("3").starts_with(&format!("3 2 of {}", of(3))), "{out}");
    assert!(row("4").starts_with(&format!("4 1 of {}", of(4))), "{out}");
    let kbnk = fs::metadata(path_of(dir.path(), "KBNK.egtb.bz"))
        .unwrap()
        .len();
    assert!(kbnk > 1000);
    let missing = out
        .lines()
        .find(|l| l.starts_with("missing 4-piece DTM"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        missing.contains(" KBBK") && !missing.contains(" KBNK "),
        "{missing}"
    );
    assert!(
        out.contains("completing the 2-3-4 DTM set adds 62 files"),
        "{out}"
    );

    // JSON, with both kinds of directory, and a truncated file found
    // without reading every byte.
    let krk = path_of(dir.path(), "KRK.egtb.bz");
    let bytes = fs::read(&krk).unwrap();
    fs::write(&krk, &bytes[..bytes.len() - 3]).unwrap();
    let output = process::binary()
        .args(["tables", "status", "--json", "--dtm", path])
        .arg(common::embedded_tables_dir())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["pieces"][0]["pieces"], 3, "the Syzygy survey: {json}");
    let dtm_json = &json["dtm"];
    assert_eq!(dtm_json["damaged"][0]["file"], "KRK.egtb.bz", "{dtm_json}");
    let four = dtm_json["pieces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pieces"] == 4)
        .unwrap();
    assert_eq!(four["files"], 1);
    assert_eq!(four["bytes"], kbnk);

    // The embedded set is complete; --verify reads every file.
    let embedded = embedded_dir();
    let (ok, out) = zugzwang(&[
        "tables",
        "status",
        "--verify",
        "--dtm",
        embedded.to_str().unwrap(),
    ]);
    assert!(ok, "{out}");
    assert!(out.contains("the 2-3-4 DTM set is complete"), "{out}");
}

#[test]
fn the_scrub_checks_prophet_files_and_names_a_damaged_one() {
    use server::{
        store::read_counters::ReadMetrics,
        store::scrub::{ScrubState, scrub_pass},
    };
    use std::sync::atomic::Ordering::Relaxed;

    let dir = generator_dir(&NAMES);
    // Syzygy tables beside them are scrubbed as before.
    for name in ["KQvK.rtbw", "KQvK.rtbz"] {
        fs::copy(
            common::embedded_tables_dir().join(name),
            dir.path().join(name),
        )
        .unwrap();
    }
    let dirs = [dir.path().to_owned()];
    let reads = ReadMetrics::default();
    let state = ScrubState::default();
    scrub_pass(&dirs, 1000.0, &state, &reads);
    assert_eq!(state.files_checked.load(Relaxed), 6);
    assert!(state.damaged().is_empty(), "{:?}", state.damaged());

    flip_block_of(dir.path(), "KBNK.egtb.bz", POSITIONS[0].0);
    // Without a list, the checksum field alone finds it.
    fs::remove_file(dir.path().join("MD5SUMS")).unwrap();
    scrub_pass(&dirs, 1000.0, &state, &reads);
    let damaged = state.damaged();
    assert_eq!(damaged.len(), 1, "{damaged:?}");
    assert_eq!(damaged[0].0, "KBNK.egtb.bz");
    assert!(damaged[0].1.contains("is damaged"), "{damaged:?}");
    assert_eq!(reads.suspect_tables(), ["KBNK.egtb.bz"]);
    let mut metrics = server::exposition::Exposition::default();
    state.render(&mut metrics);
    let text = metrics.into_string();
    assert!(
        text.contains("zugzwang_scrub_damaged{table=\"KBNK.egtb.bz\""),
        "{text}"
    );
}

#[test]
fn start_up_survey_counts_prophet_files_without_checksums() {
    use server::store::tier::{TierOptions, TieredFilesystem};
    let dir = generator_dir(&NAMES);
    let dirs = [dir.path().to_owned()];
    let fs = TieredFilesystem::new(TierOptions::default());
    let uncovered = server::store::coverage::survey(&fs, &dirs);
    assert_eq!(uncovered[0].unchecked.len(), 4, "{uncovered:?}");
    let store = store::open(&StoreOptions::default(), &dirs).expect("opens, refusing them");
    assert_eq!(store.metrics.unchecked_tables, 4);

    let summary = tier::build(
        &BuildOptions {
            prefixes: false,
            per_directory: true,
            ..BuildOptions::new(dirs.to_vec(), dir.path().join(".zugzwang"))
        },
        &Silent,
    );
    assert!(summary.failures.is_empty(), "{:?}", summary.failures);
    let uncovered = server::store::coverage::survey(&fs, &dirs);
    assert!(uncovered.is_empty(), "{uncovered:?}");
}

/// Lookups that read only their block: the tier checks each block.
fn unchecked() -> ProphetOptions {
    ProphetOptions {
        verification: Verification::Never,
        ..ProphetOptions::default()
    }
}
