//! `zugzwang verify s3://…` and `zugzwang tables status --verify s3://…`
//! (issue 46) against a real S3 store, a one-node Garage on loopback
//! holding the 3-4 piece tables the repository carries, put there with
//! the S3 API: a whole set passes; a flipped byte in a stored object, a
//! truncated object and a deleted one are each named, and the exit status
//! says so.
//!
//! Needs `garage` 2.5.0 on the PATH (`.ci/install` builds it); without it
//! the test says so in one `SKIPPED:` line, or fails under
//! `ZUGZWANG_REQUIRE_SHARED`.

mod common;
mod process;
mod remote_support;

use std::path::Path;

use object_store::{ObjectStoreExt, path::Path as ObjectPath};
use remote_support::{garage::*, *};

/// The tables the repository carries, as (name, bytes).
fn embedded_tables() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tables");
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .expect("the embedded tables")
        .map(|entry| {
            let path = entry.expect("an entry").path();
            let name = path.file_name().expect("a name").to_string_lossy().into();
            (name, std::fs::read(&path).expect("read a table"))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn verify_streams_every_object_and_names_the_damaged_ones() {
    if !available("remote verify") {
        return;
    }
    let garage = Garage::start();
    let tables = embedded_tables();
    upload(&garage.store(), tables.clone());
    let url = format!("s3://{BUCKET}/{PREFIX}");
    let endpoint = garage.endpoint();
    let env = garage.env();
    let state = tempfile::tempdir().expect("temp dir");
    let state_arg = state.path().display().to_string();
    let verify = [
        "verify",
        &url,
        "--partial",
        "--s3-endpoint",
        &endpoint,
        "--state-dir",
        &state_arg,
    ];
    let whole = zugzwang(&verify, &env);
    assert!(
        whole.contains("70 tables (4.14 MiB) checked: 0 damaged, 0 extra, 0 missing"),
        "{whole}"
    );

    // A flipped byte, a truncated object, a deleted one.
    let file = |name: &str| {
        tables
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, bytes)| bytes.clone())
            .expect("an embedded table")
    };
    let mut flipped = file("KRvKP.rtbz");
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x08;
    let mut truncated = file("KQvKR.rtbw");
    truncated.truncate(truncated.len() - 1);
    upload(
        &garage.store(),
        vec![
            ("KRvKP.rtbz".to_string(), flipped),
            ("KQvKR.rtbw".to_string(), truncated),
        ],
    );
    let store = garage.store();
    tokio::runtime::Runtime::new()
        .expect("runtime")
        .block_on(store.delete(&ObjectPath::from(format!("{PREFIX}/KBvK.rtbw"))))
        .expect("delete an object");

    let (ok, out) = try_zugzwang(&verify, &env);
    println!("{out}");
    assert!(!ok, "verify passed a damaged set:\n{out}");
    assert!(
        out.contains("MISMATCH KRvKP.rtbz: sha256"),
        "the flipped byte is not named:\n{out}"
    );
    assert!(
        out.contains("MISMATCH KQvKR.rtbw:") && out.contains("truncated or damaged"),
        "the truncated object is not named:\n{out}"
    );
    assert!(out.contains("MISSING KBvK.rtbw"), "{out}");
    assert!(out.contains("2 damaged, 0 extra, 1 missing"), "{out}");

    let status = [
        "tables",
        "status",
        "--verify",
        &url,
        "--s3-endpoint",
        &endpoint,
    ];
    let (ok, out) = try_zugzwang(&status, &env);
    println!("{out}");
    assert!(!ok, "tables status --verify passed a damaged set:\n{out}");
    assert!(
        out.contains(&format!("DAMAGED KRvKP.rtbz in {url}: sha256")),
        "{out}"
    );
    assert!(
        out.contains(&format!("DAMAGED KQvKR.rtbw in {url}:")),
        "{out}"
    );
}
