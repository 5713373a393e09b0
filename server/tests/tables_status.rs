//! `zugzwang tables status` (the real binary): present, missing, damaged
//! and unknown files, as text and JSON; the installed tables the engine
//! reports; and serve's start-up log of how complete each piece count is.

mod common;
mod process;

use std::{fs, path::Path};

use serde_json::Value;
use server::store::catalog;

/// Runs `zugzwang tables status`: exit success, stdout, stderr.
fn status(args: &[&str]) -> (bool, String, String) {
    let output = process::binary()
        .args(["tables", "status"])
        .args(args)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The embedded tables with one file truncated, one missing, one with a
/// flipped byte (same size) and two files that are no standard table.
fn damaged_copy() -> tempfile::TempDir {
    let dir = common::copy_of_embedded_tables();
    let path = |name: &str| dir.path().join(name);
    let bytes = fs::read(path("KQvK.rtbw")).unwrap();
    fs::write(path("KQvK.rtbw"), &bytes[..bytes.len() / 2]).unwrap();
    fs::remove_file(path("KRvK.rtbz")).unwrap();
    let mut bytes = fs::read(path("KPvK.rtbw")).unwrap();
    bytes[100] ^= 0x01;
    fs::write(path("KPvK.rtbw"), bytes).unwrap();
    fs::write(path("notes.txt"), "mine").unwrap();
    fs::write(path("KQvK.atbw"), "atomic").unwrap();
    fs::create_dir(path(".zugzwang")).unwrap();
    dir
}

fn json_status(dir: &Path, verify: bool) -> (bool, Value) {
    let dir = dir.to_str().unwrap();
    let args: &[&str] = if verify {
        &[dir, "--json", "--verify"]
    } else {
        &[dir, "--json"]
    };
    let (ok, out, err) = status(args);
    let value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    (ok, value)
}

fn files(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v["file"].as_str().or(v.as_str()).unwrap())
        .collect()
}

#[test]
fn json_names_present_missing_damaged_and_unknown_files() {
    let dir = damaged_copy();
    let (ok, value) = json_status(dir.path(), false);
    assert!(!ok, "a damaged file makes the exit status non-zero");
    let three = &value["pieces"][0];
    assert_eq!(three["pieces"], 3);
    // KQvK.rtbw is damaged, KRvK.rtbz missing: 3 of 5 tables, 8 of 10 files.
    assert_eq!(
        (three["tables"].as_u64(), three["files"].as_u64()),
        (Some(3), Some(8))
    );
    assert_eq!(three["tables_published"], 5);
    assert_eq!(files(&three["missing"]), ["KRvK.rtbz"]);
    assert_eq!(files(&value["damaged"]), ["KQvK.rtbw"]);
    assert_eq!(files(&value["unknown"]), ["KQvK.atbw", "notes.txt"]);
    assert_eq!(value["pieces"][1]["tables"], 30);
    assert_eq!(value["pieces"][2]["files_published"], 220);
    let sets = &value["to_complete"];
    assert_eq!(sets[0]["set"], "3-4-5");
    assert_eq!(sets[0]["files"], 2 + 220);
    assert_eq!(sets[2]["files"], 2002);

    // Only --verify reads the bytes and finds the flipped one.
    let (_, verified) = json_status(dir.path(), true);
    assert_eq!(files(&verified["damaged"]), ["KQvK.rtbw", "KPvK.rtbw"]);
    assert_eq!(verified["pieces"][0]["files"], 7);
}

#[test]
fn text_says_what_is_wrong_and_what_completing_adds() {
    let dir = damaged_copy();
    let (ok, out, err) = status(&[dir.path().to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("damaged or unreadable"), "{err}");
    for expected in [
        "missing 3-piece (1 files): KRvK.rtbz",
        "DAMAGED KQvK.rtbw",
        "unknown notes.txt",
        "completing the 3-4-5 set adds 222 files",
        "tables fetch --pieces 6",
    ] {
        assert!(out.contains(expected), "{expected:?} not in:\n{out}");
    }

    let (ok, out, _) = status(&[common::embedded_tables_dir().to_str().unwrap()]);
    assert!(ok, "{out}");
    assert!(!out.contains("missing 4-piece"), "{out}");
}

#[test]
fn the_engine_lists_tables_with_both_files() {
    let dir = damaged_copy();
    let engine = common::engine_with(vec![dir.path().to_path_buf()]);
    let installed = engine.installed_tables();
    assert!(installed.contains(&"KQvKR".to_string()));
    assert!(
        !installed.contains(&"KRvK".to_string()),
        "its .rtbz is missing"
    );
    let mut sorted = installed.clone();
    sorted.sort();
    assert_eq!(installed, sorted);
    let all = common::engine_with(vec![common::embedded_tables_dir()]).installed_tables();
    assert_eq!(all.len(), 35);
}

#[test]
fn serve_logs_how_complete_each_piece_count_is() {
    let dir = common::copy_of_embedded_tables();
    fs::remove_file(dir.path().join("KRvK.rtbz")).unwrap();
    let server = process::serve(&["--tables", dir.path().to_str().unwrap()]);
    let log = server.log();
    assert!(
        log.contains("69 table files in")
            && log.contains("3-piece: 4 of 5 tables, 4-piece: 30 of 30 tables"),
        "{log}"
    );
}

#[test]
fn every_shared_table_has_what_its_captures_and_promotions_need() {
    let Some(shared) = common::shared_tables_dir() else {
        return;
    };
    let installed = common::engine_with(vec![shared]).installed_tables();
    assert!(installed.iter().any(|m| catalog::piece_count(m) == 5));
    for table in &installed {
        for needed in catalog::with_dependencies([table.as_str()]) {
            assert!(
                installed.iter().any(|m| m == needed),
                "{table} needs {needed}"
            );
        }
    }
}
