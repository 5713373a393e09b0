//! `zugzwang tables status` (the real binary): present, missing, damaged
//! and unknown files, as text and JSON, for standard, atomic and antichess
//! tables; the installed tables the engine reports; and serve's start-up
//! log of how complete each piece count is.

mod common;
mod process;

use std::{fs, path::Path};

use app::{material::piece_count, variant::Variant};
use serde_json::Value;
use server::catalog;

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
    let installed = engine.installed_tables(Variant::Standard);
    assert!(installed.contains(&"KQvKR".to_string()));
    assert!(
        !installed.contains(&"KRvK".to_string()),
        "its .rtbz is missing"
    );
    let mut sorted = installed.clone();
    sorted.sort();
    assert_eq!(installed, sorted);
    let all = common::engine_with(vec![common::embedded_tables_dir()])
        .installed_tables(Variant::Standard);
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
    let installed = common::engine_with(vec![shared]).installed_tables(Variant::Standard);
    assert!(installed.iter().any(|m| piece_count(m) == 5));
    for table in &installed {
        for needed in catalog::with_dependencies([table.as_str()]) {
            assert!(
                installed.iter().any(|m| m == needed),
                "{table} needs {needed}"
            );
        }
    }
}

/// The atomic tables with one file missing, one with a flipped byte, one
/// truncated (atomic sizes are not published: only md5 tells these two)
/// and a standard table beside them.
fn damaged_atomic_copy() -> tempfile::TempDir {
    let dir = common::copy_of(&common::atomic_tables_dir());
    let path = |name: &str| dir.path().join(name);
    fs::remove_file(path("KRvK.atbz")).unwrap();
    let mut bytes = fs::read(path("KQvK.atbw")).unwrap();
    bytes[100] ^= 0x01;
    fs::write(path("KQvK.atbw"), bytes).unwrap();
    let bytes = fs::read(path("KPvK.atbz")).unwrap();
    fs::write(path("KPvK.atbz"), &bytes[..bytes.len() - 16]).unwrap();
    fs::copy(
        common::embedded_tables_dir().join("KQvK.rtbw"),
        path("KQvK.rtbw"),
    )
    .unwrap();
    dir
}

#[test]
fn atomic_status_finds_damage_by_md5_only() {
    let dir = damaged_atomic_copy();
    let dir = dir.path().to_str().unwrap();
    let (ok, out, err) = status(&["--variant", "atomic", dir, "--json"]);
    assert!(
        ok,
        "without --verify nothing is known to be damaged:\n{out}\n{err}"
    );
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["variant"], "atomic");
    assert_eq!(value["digest"], "md5");
    assert_eq!(value["sizes_published"], false);
    let pieces: Vec<u64> = value["pieces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pieces"].as_u64().unwrap())
        .collect();
    assert_eq!(pieces, [3, 4, 5]);
    let three = &value["pieces"][0];
    assert_eq!(
        (three["tables"].as_u64(), three["files"].as_u64()),
        (Some(4), Some(9))
    );
    assert_eq!(files(&three["missing"]), ["KRvK.atbz"]);
    assert!(three["bytes_published"].is_null(), "{three}");
    assert_eq!(value["pieces"][1]["tables"], 30);
    assert_eq!(value["pieces"][2]["tables_published"], 110);
    assert!(files(&value["damaged"]).is_empty());
    assert_eq!(files(&value["unknown"]), ["KQvK.rtbw"]);

    let (ok, out, _) = status(&["--variant", "atomic", dir, "--json", "--verify"]);
    assert!(!ok, "damaged files make the exit status non-zero");
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(files(&value["damaged"]), ["KPvK.atbz", "KQvK.atbw"]);
    let problem = value["damaged"][1]["problem"].as_str().unwrap();
    assert!(problem.starts_with("md5 "), "{problem}");
    assert_eq!(value["pieces"][0]["files"], 7);
    assert_eq!(value["to_complete"][0]["set"], "3-4-5");
    assert_eq!(value["to_complete"][0]["files"], 3 + 220);
    assert!(value["to_complete"][0]["bytes"].is_null());
}

#[test]
fn atomic_status_text_says_sizes_are_not_published() {
    let dir = damaged_atomic_copy();
    let dir = dir.path().to_str().unwrap();
    let (ok, out, _) = status(&["--variant", "atomic", dir]);
    assert!(ok, "{out}");
    for expected in [
        "Atomic tables in",
        "sizes are not published for these tables; --verify checks md5",
        "missing 3-piece (1 files): KRvK.atbz",
        "1 standard table files in",
        "--variant standard",
        "completing the 3-4-5 set adds 221 files, sizes not published (`zugzwang tables fetch --variant atomic --pieces 3-4-5",
    ] {
        assert!(out.contains(expected), "{expected:?} not in:\n{out}");
    }
    let (ok, out, err) = status(&["--variant", "atomic", dir, "--verify"]);
    assert!(!ok && err.contains("damaged or unreadable"), "{err}");
    assert!(out.contains("(md5 checked)"), "{out}");
    assert!(out.contains("DAMAGED KQvK.atbw in"), "{out}");

    // The standard survey of the same directory counts the one standard file.
    let (_, out, _) = status(&[dir]);
    assert!(out.contains("69 atomic table files in"), "{out}");
}

#[test]
fn antichess_status_knows_both_suffixes() {
    let dir = common::copy_of(&common::antichess_tables_dir());
    let path = |name: &str| dir.path().join(name);
    let mut bytes = fs::read(path("BvP.gtbw")).unwrap();
    bytes[100] ^= 0x01;
    fs::write(path("BvP.gtbw"), bytes).unwrap();
    // A table with a pawn under the pawnless suffix is no published file.
    fs::copy(path("BvP.gtbz"), path("BvP.stbz")).unwrap();
    let dir = dir.path().to_str().unwrap();
    let (ok, value) = {
        let (ok, out, err) = status(&["--variant", "antichess", dir, "--json", "--verify"]);
        let value: Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
        (ok, value)
    };
    assert!(!ok);
    let counts: Vec<(u64, u64, u64)> = value["pieces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let n = |key: &str| p[key].as_u64().unwrap();
            (n("pieces"), n("tables"), n("tables_published"))
        })
        .collect();
    assert_eq!(counts, [(2, 20, 21), (3, 0, 126), (4, 0, 295)]);
    assert_eq!(files(&value["damaged"]), ["BvP.gtbw"]);
    assert_eq!(files(&value["unknown"]), ["BvP.stbz"]);
    assert_eq!(value["to_complete"][0]["set"], "2-3-4");
    assert_eq!(value["to_complete"][0]["files"], 884 - 41);

    let (_, out, _) = status(&["--variant", "antichess", dir]);
    assert!(
        out.contains("unknown BvP.stbz") && out.contains("antichess-published.md5"),
        "{out}"
    );
    assert!(out.contains("4-piece ones without pawns"), "{out}");
}

#[test]
fn every_shared_variant_table_is_counted() {
    for (variant, dir, tables) in [
        ("atomic", "syzygy/atomic", 35),
        ("antichess", "syzygy/antichess", 442),
    ] {
        let Some(dir) = common::shared_dir(dir, "the survey of the shared variant tables") else {
            return;
        };
        let (ok, out, err) = status(&["--variant", variant, dir.to_str().unwrap(), "--json"]);
        assert!(ok, "{out}\n{err}");
        let value: Value = serde_json::from_str(&out).unwrap();
        let counted: u64 = value["pieces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["tables"].as_u64().unwrap())
            .sum();
        assert_eq!(counted, tables, "{variant}");
        assert!(files(&value["unknown"]).is_empty(), "{variant}: {out}");
    }
}
