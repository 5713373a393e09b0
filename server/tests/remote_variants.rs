//! Atomic, antichess and Prophet DTM tables on remote sources (issue 46):
//! `serve --atomic URL --antichess URL --dtm URL`, over an S3 bucket (a
//! one-node Garage) and over plain HTTP mirrors, answers as the same tables
//! in local directories do, byte for byte, with each set read by GETs. The
//! tables are small: the sets the repository carries (atomic 3-4 pieces,
//! Prophet DTM 2-4 pieces) and the 2-3 piece antichess tables of
//! `../shared` (without it, that part says SKIPPED and the rest runs).

mod common;
mod process;
mod remote_support;

use std::path::{Path, PathBuf};

use remote_support::{
    garage::{self, BUCKET, Garage, table_files, upload_under},
    mirror::Mirror,
    *,
};

/// One kind of table source: its `serve` flag, its local directory, its
/// name under the bucket, and requests that read it.
struct TableSet {
    flag: &'static str,
    dir: PathBuf,
    prefix: &'static str,
    paths: Vec<String>,
}

/// The sets under test; antichess only where `../shared` has its tables
/// (the repository carries only 2-piece ones, which a fast tier holds
/// whole: they would make no GET).
fn table_sets(antichess: Option<&Path>) -> Vec<TableSet> {
    let mut sets = vec![
        TableSet {
            flag: "--atomic",
            dir: common::atomic_tables_dir(),
            prefix: "atomic",
            paths: fixture_paths("atomic-34.csv", 3, "atomic"),
        },
        TableSet {
            flag: "--dtm",
            dir: prophet_tables_dir(),
            prefix: "dtm",
            // Standard 3-4 piece positions: the standard tables are the
            // embedded ones, every move's `dtm` comes from the tables
            // under test.
            paths: fixture_paths("positions-34.csv", 4, "standard"),
        },
    ];
    if let Some(dir) = antichess {
        sets.push(TableSet {
            flag: "--antichess",
            dir: dir.to_path_buf(),
            prefix: "antichess",
            paths: antichess_paths(dir),
        });
    }
    sets
}

/// The 2- and 3-piece antichess tables of `../shared` (0.9 MB), copied
/// into `antichess/` of a temp dir (a mirror serves it by that name);
/// `None` after [`common::missing`].
fn small_antichess_tables() -> Option<tempfile::TempDir> {
    let shared = common::shared_dir(
        "syzygy/antichess",
        "the antichess part of the remote variants test",
    )?;
    let copy = tempfile::tempdir().expect("temp dir");
    let to = copy.path().join("antichess");
    std::fs::create_dir(&to).expect("a directory for the copy");
    for entry in std::fs::read_dir(&shared).expect("the antichess tables") {
        let path = entry.expect("an entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let pieces = name.split('.').next().unwrap_or("").replace('v', "").len();
        if pieces <= 3 {
            std::fs::copy(&path, to.join(name)).expect("copy a table");
        }
    }
    Some(copy)
}

/// The Prophet DTM tables (2-4 pieces) the repository carries.
fn prophet_tables_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tables-prophet")
}

/// Every `step`-th position of a CSV fixture (FEN first), as requests to
/// `endpoint`.
fn fixture_paths(fixture: &str, step: usize, endpoint: &str) -> Vec<String> {
    let text = std::fs::read_to_string(common::fixture(fixture)).expect("positions");
    text.lines()
        .skip(1)
        .step_by(step)
        .filter_map(|line| line.split(',').next())
        .map(|fen| format!("/{endpoint}?fen={}", fen.trim().replace(' ', "_")))
        .collect()
}

/// Positions of every other 3-piece antichess table in `dir` (`BNvP.gtbw`:
/// a white bishop and knight against a black pawn), on two sets of
/// squares (none on the first or last rank: pawns), either side to move.
fn antichess_paths(dir: &Path) -> Vec<String> {
    let squares = [["c3", "f6", "b5"], ["e2", "g4", "d7"]];
    let mut materials: Vec<String> = std::fs::read_dir(dir)
        .expect("the antichess tables")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            let stem = name
                .strip_suffix(".gtbw")
                .or_else(|| name.strip_suffix(".stbw"))?;
            (stem.len() == 4).then(|| stem.to_string())
        })
        .collect();
    materials.sort();
    let mut paths = Vec::new();
    for material in materials.iter().step_by(2) {
        let Some((white, black)) = material.split_once('v') else {
            continue;
        };
        let pieces: Vec<char> = white
            .chars()
            .chain(black.chars().map(|c| c.to_ascii_lowercase()))
            .collect();
        for at in squares {
            let placed: Vec<(char, &str)> = pieces.iter().copied().zip(at).collect();
            for turn in ['w', 'b'] {
                paths.push(format!("/antichess?fen={}_{turn}_-_-_0_1", board(&placed)));
            }
        }
    }
    paths
}

/// The board part of a FEN with `pieces` (letter, square) on it.
fn board(pieces: &[(char, &str)]) -> String {
    let mut squares = [[None; 8]; 8];
    for &(piece, square) in pieces {
        let bytes = square.as_bytes();
        let file = usize::from(bytes[0] - b'a');
        let rank = usize::from(bytes[1] - b'1');
        squares[7 - rank][file] = Some(piece);
    }
    let rows: Vec<String> = squares
        .iter()
        .map(|row| {
            let mut text = String::new();
            let mut empty = 0;
            for square in row {
                match square {
                    Some(piece) => {
                        if empty > 0 {
                            text.push_str(&empty.to_string());
                            empty = 0;
                        }
                        text.push(*piece);
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                text.push_str(&empty.to_string());
            }
            text
        })
        .collect();
    rows.join("/")
}

/// Serves every set from local directories and from `urls` (one per set,
/// in order), each over its fast tier built by `tier build`, and compares
/// the answers; every set must have been read by GETs.
fn assert_remote_sets_answer_as_local(
    sets: &[TableSet],
    urls: &[String],
    remote_args: &[&str],
    env: &[(&str, String)],
) {
    let locals: Vec<String> = sets.iter().map(|s| s.dir.display().to_string()).collect();
    let local_refs: Vec<&str> = locals.iter().map(String::as_str).collect();
    let url_refs: Vec<&str> = urls.iter().map(String::as_str).collect();
    let tiers = Tiers::build(&local_refs, &url_refs, remote_args, env);
    let (local_fast, remote_fast) = tiers.dirs();
    let mut local_args = vec!["--fast", local_fast.as_str()];
    let mut remote = vec!["--fast", remote_fast.as_str()];
    remote.extend(remote_args);
    for ((set, dir), url) in sets.iter().zip(&locals).zip(&url_refs) {
        local_args.extend([set.flag, dir.as_str()]);
        remote.extend([set.flag, url]);
    }
    let local = serve(&local_args, &[]);
    let remote_server = serve(&remote, env);
    for set in sets {
        assert!(
            set.paths.len() > 50,
            "{}: {} positions",
            set.flag,
            set.paths.len()
        );
        let local_answers = replay(local.addr, &set.paths);
        let remote_answers = replay(remote_server.addr, &set.paths);
        let (slow, gets) = assert_same(&set.paths, &local_answers, &remote_answers);
        println!(
            "{} {}: {} requests, {slow} slow reads on the local directory, {gets} GETs",
            set.flag,
            set.prefix,
            set.paths.len()
        );
        assert!(
            gets > 0,
            "{}: no GET was counted:\n{}",
            set.flag,
            remote_server.log()
        );
    }
}

#[test]
fn variant_and_dtm_tables_in_garage_answer_as_local_directories_do() {
    if !garage::available("atomic, antichess and DTM tables in an object store") {
        return;
    }
    let antichess = small_antichess_tables();
    let garage = Garage::start();
    let sets = table_sets(
        antichess
            .as_ref()
            .map(|dir| dir.path().join("antichess"))
            .as_deref(),
    );
    for set in &sets {
        upload_under(&garage.store(), set.prefix, table_files(&set.dir));
    }
    let urls: Vec<String> = sets
        .iter()
        .map(|set| format!("s3://{BUCKET}/{}", set.prefix))
        .collect();
    let endpoint = garage.endpoint();
    assert_remote_sets_answer_as_local(&sets, &urls, &["--s3-endpoint", &endpoint], &garage.env());
}

#[test]
fn variant_and_dtm_tables_on_mirrors_answer_as_local_directories_do() {
    let antichess = small_antichess_tables();
    let sets = table_sets(
        antichess
            .as_ref()
            .map(|dir| dir.path().join("antichess"))
            .as_deref(),
    );
    let mirrors: Vec<Mirror> = sets.iter().map(|set| Mirror::start(&set.dir)).collect();
    let urls: Vec<String> = mirrors.iter().map(Mirror::url).collect();
    assert_remote_sets_answer_as_local(&sets, &urls, &[], &[]);
}
