//! Atomic and antichess table files in the store's tools: `verify` checks
//! them against the published md5 lists, `tier build` takes them (refusing
//! a damaged one), and the tiered store serves them to `/atomic`.

mod common;
mod tier_support;

use std::path::{Path, PathBuf};

use app::variant::{Variant, parse_variant_fen};
use server::{
    engine::{Engine, EngineConfig},
    store::{StoreOptions, published::check_dirs, tier},
};

/// The atomic 3-4 piece tables the repository carries (the binary embeds them).
fn atomic_tables_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tables-atomic")
}

/// A writable copy of the atomic tables.
fn copy_of_atomic_tables() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    for entry in std::fs::read_dir(atomic_tables_dir()).expect("tables dir") {
        let path = entry.expect("entry").path();
        let to = dir.path().join(path.file_name().expect("file name"));
        std::fs::copy(&path, &to).expect("copy");
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    }
    dir
}

#[test]
fn the_embedded_atomic_tables_match_the_published_md5() {
    let findings = check_dirs(&[atomic_tables_dir()], false);
    assert_eq!(findings.checked, 70, "{findings:?}");
    assert!(findings.is_clean(false), "{findings:?}");
}

#[test]
fn verify_names_a_damaged_atomic_table_by_its_md5() {
    let copy = copy_of_atomic_tables();
    common::damage(&copy.path().join("KQvK.atbz"), |bytes| bytes[100] ^= 1);
    let findings = check_dirs(&[copy.path().to_path_buf()], false);
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
    let findings = check_dirs(&[dir], false);
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
    let summary = tier::build(&tier::BuildOptions::new(
        vec![copy.path().to_path_buf()],
        fast.path().to_path_buf(),
    ));
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
            require_checksums: true,
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
