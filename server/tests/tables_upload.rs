//! `zugzwang tables fetch --to s3://…` (issue 46) against a real S3 store,
//! a one-node Garage on loopback: a local table directory is uploaded, a
//! damaged file in it is named and never uploaded, an upload killed
//! midway continues from its journalled parts on the next run, a third
//! run finds everything complete, and `serve --tables s3://…` then
//! answers as the local directory does. The same tables from an HTTP
//! mirror (tower-http's `ServeDir`) go through the staging directory.
//! Prophet DTM files (`--dtm`, `../shared/prophet`) go in with an `MD5SUMS`
//! object beside them, and `serve --dtm s3://…` answers as the directory.
//!
//! Needs `garage` 2.5.0 on the PATH (`.ci/install` builds it) and
//! `../shared` (a 5-piece table, the only ones larger than S3's smallest
//! part of 5 MiB, for the multipart upload); without either the test
//! says so in one `SKIPPED:` line, or fails under `ZUGZWANG_REQUIRE_SHARED`.

mod common;
mod process;
mod remote_support;

use std::{
    path::{Path, PathBuf},
    thread,
    time::{Duration, Instant},
};

use process::PATIENCE;
use remote_support::{garage::*, *};

/// The table uploaded in parts: 16 MB, four parts of 5 MiB.
const LARGE: &str = "KRPvKR.rtbw";

/// A table directory: the 3-4 piece tables the repository carries and
/// the large one from the shared tables.
fn table_dir(shared: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let embedded = Path::new(env!("CARGO_MANIFEST_DIR")).join("tables");
    for entry in std::fs::read_dir(&embedded).expect("the embedded tables") {
        let path = entry.expect("an entry").path();
        let name = path.file_name().expect("a name");
        std::fs::copy(&path, dir.path().join(name)).expect("copy a table");
    }
    for name in [LARGE, "KRPvKR.rtbz"] {
        std::fs::copy(shared.join(name), dir.path().join(name)).expect("copy a shared table");
    }
    dir
}

/// A plain HTTP mirror of `dir` on loopback (tower-http's `ServeDir`,
/// with Range), served while the runtime lives.
fn mirror(dir: &Path) -> (String, tokio::runtime::Runtime) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let addr = listener.local_addr().expect("an address");
    let app = axum::Router::new().fallback_service(tower_http::services::ServeDir::new(dir));
    runtime.spawn(async move {
        let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
        axum::serve(listener, app).await.expect("the mirror serves");
    });
    (format!("http://{addr}/"), runtime)
}

/// `tables fetch` from `from` to `to`, in parts of 5 MiB.
fn upload_args<'a>(from: &'a str, to: &'a str, endpoint: &'a str, state: &'a str) -> Vec<&'a str> {
    vec![
        "tables",
        "fetch",
        "--from",
        from,
        "--to",
        to,
        "--s3-endpoint",
        endpoint,
        "--state-dir",
        state,
        "--part-size-mib",
        "5",
    ]
}

/// Asserts an upload's `total` line counts `[files, uploaded, already
/// there, failed]`.
fn assert_totals(out: &str, counts: [&str; 4]) {
    println!("{out}");
    let total = out
        .lines()
        .find(|line| line.starts_with("total"))
        .unwrap_or_else(|| panic!("no total line:\n{out}"));
    let found: Vec<&str> = total.split_whitespace().skip(1).collect();
    assert_eq!(found, counts, "{out}");
}

/// Flips one byte of `path` in place.
fn flip_byte(path: &Path, at: usize) {
    let mut bytes = std::fs::read(path).expect("read");
    bytes[at] ^= 0x20;
    std::fs::write(path, bytes).expect("write");
}

/// Runs the upload with `args` and kills it once its journal records a
/// part sent; returns the journal's path.
fn kill_after_first_part(args: &[&str], env: &[(&str, String)], state: &Path) -> PathBuf {
    let journal = state
        .join("uploads")
        .join(BUCKET)
        .join(PREFIX)
        .join(format!("{LARGE}.json"));
    let mut command = process::binary();
    command
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().expect("start zugzwang");
    let started = Instant::now();
    loop {
        let parts = std::fs::read_to_string(&journal)
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
            .and_then(|value| Some(value["parts"].as_array()?.len()))
            .unwrap_or(0);
        if parts > 0 {
            break;
        }
        let exited = child.try_wait().expect("wait").is_some();
        assert!(
            !exited,
            "the upload ended before its journal recorded a part of {LARGE}"
        );
        assert!(started.elapsed() < PATIENCE, "no part of {LARGE} was sent");
        thread::sleep(Duration::from_millis(2));
    }
    child.kill().expect("kill the upload");
    let _ = child.wait();
    journal
}

/// Waits until `tables status` lists the bucket: the key may take a
/// moment to be usable after Garage's layout applies.
fn wait_for_bucket(url: &str, endpoint: &str, env: &[(&str, String)]) {
    let started = Instant::now();
    while !try_zugzwang(&["tables", "status", url, "--s3-endpoint", endpoint], env)
        .1
        .contains("tables in s3://")
    {
        assert!(started.elapsed() < PATIENCE, "the bucket never listed");
        thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn a_table_directory_goes_into_garage_resumably_and_is_served_from_there() {
    if !available("uploads to an object store") {
        return;
    }
    let Some(shared) = common::shared_tables_dir() else {
        return;
    };
    let garage = Garage::start();
    let tables = table_dir(&shared);
    let state = tempfile::tempdir().expect("temp dir");
    let url = format!("s3://{BUCKET}/{PREFIX}");
    let endpoint = garage.endpoint();
    let tables_arg = tables.path().display().to_string();
    let state_arg = state.path().display().to_string();
    let env = garage.env();
    let mut args = upload_args(&tables_arg, &url, &endpoint, &state_arg);
    args.extend(["--jobs", "1"]);
    wait_for_bucket(&url, &endpoint, &env);

    // A damaged file is named and not uploaded; the upload of the large
    // table is cut after its first part.
    let damaged = tables.path().join("KQvK.rtbz");
    let whole = std::fs::read(&damaged).expect("read");
    flip_byte(&damaged, whole.len() / 2);
    let journal = kill_after_first_part(&args, &env, state.path());
    let (ok, out) = try_zugzwang(&args, &env);
    println!("{out}");
    assert!(!ok, "a damaged file must fail the run:\n{out}");
    assert!(
        out.contains("DAMAGED KQvK.rtbz: sha256"),
        "the damaged file is not named:\n{out}"
    );
    assert!(
        out.contains("1 cut uploads continued ("),
        "the cut upload did not continue from its part:\n{out}"
    );
    assert!(!journal.exists(), "the completed upload left its journal");
    let listed = zugzwang(
        &["tables", "status", &url, "--s3-endpoint", &endpoint],
        &env,
    );
    assert!(
        listed.contains("missing 3-piece (1 files): KQvK.rtbz"),
        "the damaged file is in the store:\n{listed}"
    );

    // Whole again: only it is uploaded; the others are complete.
    std::fs::write(&damaged, &whole).expect("write");
    let out = zugzwang(&args, &env);
    assert_totals(&out, ["72", "1", "71", "0"]);

    // Served from the bucket as from the directory.
    let s3 = ["--s3-endpoint", endpoint.as_str()];
    let (_fast, fast_arg) = tier_build(&url, &s3, &env);
    let remote = serve(&["--tables", &url, "--fast", &fast_arg, s3[0], s3[1]], &env);
    let (_local_fast, local_fast_arg) = tier_build(&tables_arg, &[], &[]);
    let local = serve(&["--tables", &tables_arg, "--fast", &local_fast_arg], &[]);
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/explore-34.txt");
    // A few: each takes most of a second in a debug build.
    let paths = slice(&log, 1, 300);
    let local_answers = replay(local.addr, &paths);
    let remote_answers = replay(remote.addr, &paths);
    for ((path, local), remote) in paths.iter().zip(&local_answers).zip(&remote_answers) {
        assert_eq!(local.status, 200, "{path}: {}", local.body);
        assert_eq!(
            (remote.status, &remote.body),
            (local.status, &local.body),
            "{path}: the bucket answered otherwise"
        );
    }
    drop((local, remote));

    // From a mirror: each file fetched into the state directory, uploaded
    // (the large one in parts) and removed there; the bucket then passes
    // `verify`.
    let (from, _mirror) = mirror(tables.path());
    let mirrored = format!("s3://{BUCKET}/mirrored");
    let mut args = upload_args(&from, &mirrored, &endpoint, &state_arg);
    args.extend(["--only", "KQvK,KRPvKR"]);
    let out = zugzwang(&args, &env);
    assert_totals(&out, ["4", "4", "0", "0"]);
    let staging = state.path().join("uploads").join(BUCKET).join(".staging");
    let left: Vec<_> = std::fs::read_dir(&staging)
        .expect("the staging directory")
        .filter_map(|e| Some(e.ok()?.file_name()))
        .filter(|name| name != ".zugzwang")
        .collect();
    assert!(left.is_empty(), "staged files left behind: {left:?}");
    let verified = zugzwang(
        &[
            "verify",
            &mirrored,
            "--partial",
            "--s3-endpoint",
            &endpoint,
            "--state-dir",
            &state_arg,
        ],
        &env,
    );
    assert!(verified.contains("4 tables"), "{verified}");
    assert!(verified.contains(": 0 damaged, 0 extra"), "{verified}");
}

/// A copy of `from` (its subdirectories too) in a new temp dir, writable.
fn copy_tree(from: &Path) -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("create a directory");
        for entry in std::fs::read_dir(from).expect("read a directory") {
            let path = entry.expect("an entry").path();
            let target = to.join(path.file_name().expect("a name"));
            match path.is_dir() {
                true => copy(&path, &target),
                false => {
                    std::fs::write(&target, std::fs::read(&path).expect("read")).expect("write")
                }
            }
        }
    }
    let dir = tempfile::tempdir().expect("temp dir");
    copy(from, dir.path());
    dir
}

/// The Prophet 2-3-4 set of `../shared` (issue 46): uploaded with `tables
/// fetch --dtm --to s3://…` from a directory (a damaged file named and
/// not uploaded, the rerun uploading only it), then served by `serve --dtm
/// s3://…` as the directory is, checked against the `MD5SUMS` object the
/// upload wrote; a part of it from an HTTP mirror, through the staging
/// directory, with a list naming just those files.
#[test]
fn prophet_dtm_files_go_into_garage_with_their_md5sums_and_are_served_from_there() {
    if !available("Prophet DTM uploads to an object store") {
        return;
    }
    let Some(shared) = common::shared_dir("prophet", "the Prophet DTM upload test") else {
        return;
    };
    let garage = Garage::start();
    let prophet = copy_tree(&shared);
    let listed = std::fs::read_to_string(prophet.path().join("MD5SUMS")).expect("MD5SUMS");
    let files = listed.lines().filter(|l| l.ends_with(".egtb.bz")).count();
    let state = tempfile::tempdir().expect("temp dir");
    let url = format!("s3://{BUCKET}/dtm");
    let endpoint = garage.endpoint();
    let from = prophet.path().display().to_string();
    let state_arg = state.path().display().to_string();
    let env = garage.env();
    let mut args = upload_args(&from, &url, &endpoint, &state_arg);
    args.push("--dtm");
    wait_for_bucket(&format!("s3://{BUCKET}/{PREFIX}"), &endpoint, &env);

    let damaged = prophet.path().join("4men/0pawns/KBNK.egtb.bz");
    let whole = std::fs::read(&damaged).expect("read");
    flip_byte(&damaged, whole.len() / 2);
    let (ok, out) = try_zugzwang(&args, &env);
    println!("{out}");
    assert!(!ok, "a damaged file must fail the run:\n{out}");
    assert!(
        out.contains("DAMAGED 4men/0pawns/KBNK.egtb.bz: md5"),
        "the damaged file is not named:\n{out}"
    );
    std::fs::write(&damaged, &whole).expect("write");
    let out = zugzwang(&args, &env);
    let rest = (files - 1).to_string();
    assert_totals(&out, [&files.to_string(), "1", &rest, "0"]);
    assert!(out.contains("md5 of the files there: s3://"), "{out}");
    let store = garage.store();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let list = |prefix: &str| {
        let location = object_store::path::Path::from(format!("{prefix}/MD5SUMS"));
        let bytes = runtime
            .block_on(async {
                store
                    .get_opts(&location, Default::default())
                    .await?
                    .bytes()
                    .await
            })
            .expect("the MD5SUMS object");
        String::from_utf8(bytes.to_vec()).expect("text")
    };
    assert_eq!(list("dtm"), listed, "the MD5SUMS object");
    // `verify` does not read them, and says so rather than passing them.
    let verify = [
        "verify",
        url.as_str(),
        "--partial",
        "--s3-endpoint",
        endpoint.as_str(),
    ];
    let (_, out) = try_zugzwang(&verify, &env);
    let unchecked = format!("UNCHECKED {files} Prophet DTM files in {url}: `zugzwang tier build");
    assert!(out.contains(&unchecked), "{out}");

    // Served from the bucket as from the directory: every move's `dtm`.
    let s3 = ["--s3-endpoint", endpoint.as_str()];
    let tiers = Tiers::build(&[&from], &[&url], &s3, &env);
    let (local_fast, remote_fast) = tiers.dirs();
    let local = serve(&["--fast", &local_fast, "--dtm", &from], &[]);
    let remote = serve(&["--fast", &remote_fast, "--dtm", &url, s3[0], s3[1]], &env);
    let text = std::fs::read_to_string(common::fixture("positions-34.csv")).expect("positions");
    let paths: Vec<String> = text
        .lines()
        .skip(1)
        .step_by(100)
        .filter_map(|line| line.split(',').next())
        .map(api_path)
        .collect();
    let local_answers = replay(local.addr, &paths);
    let remote_answers = replay(remote.addr, &paths);
    let (_, gets) = assert_same(&paths, &local_answers, &remote_answers);
    assert!(gets > 0, "no GET was counted:\n{}", remote.log());
    assert!(
        local_answers.iter().all(|a| a.body.contains("\"dtm\":")),
        "answers without dtm"
    );
    drop((local, remote));

    // From a mirror: only KBNvK, and a list of those two files.
    let (mirror_url, _mirror) = mirror(prophet.path());
    let mirrored = format!("s3://{BUCKET}/dtm-mirrored");
    let mut args = upload_args(&mirror_url, &mirrored, &endpoint, &state_arg);
    args.extend(["--dtm", "--only", "KBNvK"]);
    let out = zugzwang(&args, &env);
    assert_totals(&out, ["2", "2", "0", "0"]);
    let kbn: String = listed
        .lines()
        .filter(|line| line.ends_with("/KBNK.egtb.bz") || line.ends_with("/KKBN.egtb.bz"))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(list("dtm-mirrored"), kbn, "the mirrored MD5SUMS object");
}
