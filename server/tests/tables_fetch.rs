//! `zugzwang tables fetch` (the real binary) against a real HTTP mirror
//! started here, which serves table files with Range support and injects
//! faults: a connection cut mid-file, a flipped byte, a 404, Range ignored.
//! Every run must end in complete, verified files or an error naming the
//! table, with nothing corrupt under a real name. Atomic and antichess
//! tables (md5, no published sizes) go the same way, and Prophet DTM files
//! (`--dtm`) by the md5 the mirror's `MD5SUMS` lists. Every file fetched
//! (or found whole) has its block checksums in `.zugzwang/` beside it, as
//! `verify --init` records them.

mod common;
mod process;

use std::{
    collections::{HashMap, HashSet},
    fs,
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
};

use axum::{
    body::{Body, Bytes},
    extract::{Path as UrlPath, State},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
};
use futures::StreamExt;
use server::{
    catalog::{
        self,
        whole_file::{PublishedDigest, md5_file, sha256_file},
    },
    dtm::format as prophet_format,
    progress::Silent,
    store::{
        layout,
        tier::{
            INTEGRITY_SUBDIR,
            build::{self as tier_build, BuildOptions},
            integrity::{BlockSums, DEFAULT_BLOCK_SIZE, HASH_NAME},
            manifest::{Manifest, Stamp, sums_path},
        },
    },
};

/// Faults the mirror injects, each for the named files.
#[derive(Default)]
struct Faults {
    /// Cut the connection after this many bytes of the body, once.
    cut_after: HashMap<String, usize>,
    /// Flip one byte in the first answer.
    flip_once: HashSet<String>,
    /// Flip one byte in every answer.
    flip_always: HashSet<String>,
    /// Answer 404.
    missing: HashSet<String>,
    /// Answer every Range request with 200 and the whole file.
    ignore_range: bool,
    /// Answer 200 with a body that never ends (zeros, no Content-Length).
    endless: HashSet<String>,
    /// Answer 200 announcing this Content-Length (the body is the file's).
    announce: HashMap<String, u64>,
    /// Answer a Range request with 206, this Content-Range and a body of
    /// this many zeros.
    content_range: HashMap<String, (String, usize)>,
}

/// One request the mirror answered: file, Range header, status.
type Logged = (String, Option<String>, u16);

struct Mirror {
    dir: PathBuf,
    faults: Mutex<Faults>,
    log: Mutex<Vec<Logged>>,
}

impl Mirror {
    fn requests_for(&self, file: &str) -> Vec<Logged> {
        let log = self.log.lock().unwrap();
        log.iter().filter(|(f, _, _)| f == file).cloned().collect()
    }

    fn requests(&self) -> usize {
        self.log.lock().unwrap().len()
    }
}

/// Starts a mirror of `dir` at `http://ADDR/syzygy/NAME`.
async fn start_mirror(dir: &Path, faults: Faults) -> (SocketAddr, Arc<Mirror>) {
    let mirror = Arc::new(Mirror {
        dir: dir.to_path_buf(),
        faults: Mutex::new(faults),
        log: Mutex::new(Vec::new()),
    });
    let app = axum::Router::new()
        .route("/syzygy/{name}", axum::routing::get(serve_file))
        // Prophet mirrors keep the generator's `Nmen/Mpawns/` directories.
        .route("/prophet/{*name}", axum::routing::get(serve_file))
        .with_state(Arc::clone(&mirror));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (addr, mirror)
}

/// `bytes=N-` → N.
fn range_start(headers: &HeaderMap) -> Option<(String, usize)> {
    let value = headers.get(header::RANGE)?.to_str().ok()?.to_string();
    let start = value
        .strip_prefix("bytes=")?
        .strip_suffix('-')?
        .parse()
        .ok()?;
    Some((value, start))
}

async fn serve_file(
    State(mirror): State<Arc<Mirror>>,
    UrlPath(name): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    let range = range_start(&headers);
    let mut faults = mirror.faults.lock().unwrap();
    let bytes = match fs::read(mirror.dir.join(&name)) {
        Ok(bytes) if !faults.missing.contains(&name) => bytes,
        _ => {
            mirror
                .log
                .lock()
                .unwrap()
                .push((name, range.map(|r| r.0), 404));
            return StatusCode::NOT_FOUND.into_response();
        }
    };
    let len = bytes.len();
    if let Some(response) = hostile_answer(&mut faults, &name, range.is_some()) {
        let status = response.status().as_u16();
        mirror
            .log
            .lock()
            .unwrap()
            .push((name, range.map(|r| r.0), status));
        return response;
    }
    // As nginx answers a range past the end: 416 with the file's size.
    if let Some((value, start)) = &range
        && *start >= len
        && !faults.ignore_range
    {
        mirror
            .log
            .lock()
            .unwrap()
            .push((name, Some(value.clone()), 416));
        return Response::builder()
            .status(StatusCode::RANGE_NOT_SATISFIABLE)
            .header(header::CONTENT_RANGE, format!("bytes */{len}"))
            .body(Body::empty())
            .unwrap();
    }
    let start = match &range {
        Some((_, start)) if !faults.ignore_range && *start < len => *start,
        _ => 0,
    };
    let status = if start > 0 {
        StatusCode::PARTIAL_CONTENT
    } else {
        StatusCode::OK
    };
    mirror
        .log
        .lock()
        .unwrap()
        .push((name.clone(), range.map(|r| r.0), status.as_u16()));
    let mut body = bytes[start..].to_vec();
    let flip = faults.flip_once.remove(&name) || faults.flip_always.contains(&name);
    if flip && len / 2 >= start {
        body[len / 2 - start] ^= 0x01;
    }
    let mut response = Response::builder()
        .status(status)
        .header(header::CONTENT_LENGTH, body.len());
    if status == StatusCode::PARTIAL_CONTENT {
        response = response.header(
            header::CONTENT_RANGE,
            format!("bytes {start}-{}/{len}", len - 1),
        );
    }
    let body = match faults.cut_after.remove(&name) {
        // The head promises the whole body; the connection ends midway.
        Some(cut) => {
            let sent = Bytes::from(body[..cut.min(body.len())].to_vec());
            // The pause lets the bytes sent reach the client before the cut.
            let cut = futures::stream::once(async {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                Err(std::io::Error::other("connection cut by the test"))
            });
            Body::from_stream(futures::stream::iter([Ok(sent)]).chain(cut))
        }
        None => Body::from(body),
    };
    response.body(body).unwrap()
}

/// What a hostile or broken mirror answers for `name` (`Faults::endless`,
/// `announce`, `content_range`), if it is one of those.
fn hostile_answer(faults: &mut Faults, name: &str, ranged: bool) -> Option<Response> {
    if faults.endless.contains(name) {
        let zeros = Bytes::from(vec![0u8; 64 << 10]);
        let body = futures::stream::repeat_with(move || Ok::<_, std::io::Error>(zeros.clone()));
        return Some(Response::new(Body::from_stream(body)));
    }
    if let Some(&length) = faults.announce.get(name) {
        let body =
            futures::stream::repeat_with(|| Ok::<_, std::io::Error>(Bytes::from(vec![0u8; 4096])));
        let response = Response::builder()
            .header(header::CONTENT_LENGTH, length)
            .body(Body::from_stream(body.take(16)))
            .unwrap();
        return Some(response);
    }
    if ranged && let Some((value, len)) = faults.content_range.get(name) {
        let response = Response::builder()
            .status(StatusCode::PARTIAL_CONTENT)
            .header(header::CONTENT_RANGE, value.as_str())
            .body(Body::from(vec![0u8; *len]))
            .unwrap();
        return Some(response);
    }
    None
}

/// Runs `zugzwang tables fetch` against the mirror: exit success, stdout, stderr.
async fn fetch(addr: SocketAddr, to: &Path, args: &[&str]) -> (bool, String, String) {
    let mut command = process::binary();
    command
        .args(["tables", "fetch", "--from"])
        .arg(format!("http://{addr}/syzygy"))
        .arg("--to")
        .arg(to)
        .args(args);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Every file under its real name in `dir` has its published sha256, and no
/// `.part` is left.
fn assert_all_verified(dir: &Path) {
    for name in names_in(dir) {
        let path = dir.join(&name);
        assert!(!name.ends_with(".part"), "{name} left behind");
        let digest = sha256_file(&path, |_| {}).unwrap();
        assert_eq!(
            Some(digest.as_str()),
            catalog::sha256(&name),
            "{name} is corrupt"
        );
    }
}

/// The summary's total row: files, fetched, already there, failed.
fn total_row(out: &str) -> Vec<String> {
    let line = out
        .lines()
        .find(|l| l.starts_with("total"))
        .unwrap_or_else(|| panic!("no total row:\n{out}"));
    line.split_whitespace()
        .skip(1)
        .map(str::to_string)
        .collect()
}

/// The files in `dir`, sorted, without the checksums' folder (`.zugzwang`,
/// see [`assert_checked_from_birth`]).
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != INTEGRITY_SUBDIR)
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumes_a_cut_transfer_with_range() {
    let faults = Faults {
        cut_after: HashMap::from([("KBNvK.rtbz".to_string(), 200_000)]),
        ..Faults::default()
    };
    let (addr, mirror) = start_mirror(&common::embedded_tables_dir(), faults).await;
    let to = tempfile::tempdir().unwrap();
    let (ok, out, err) = fetch(addr, to.path(), &["--only", "KBNvK"]).await;
    assert!(ok, "{out}\n{err}");
    assert_eq!(names_in(to.path()), ["KBNvK.rtbw", "KBNvK.rtbz"]);
    assert_all_verified(to.path());
    let requests = mirror.requests_for("KBNvK.rtbz");
    assert_eq!(requests.len(), 2, "{requests:?}");
    let (_, range, status) = &requests[1];
    let start: u64 = range
        .as_deref()
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.strip_suffix('-'))
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("the second request asked for no range: {requests:?}"));
    assert!(start > 0 && start <= 200_000, "resumed at {start}");
    assert_eq!(*status, 206);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starts_over_when_the_mirror_ignores_range() {
    let faults = Faults {
        cut_after: HashMap::from([("KQvKR.rtbz".to_string(), 100_000)]),
        ignore_range: true,
        ..Faults::default()
    };
    let (addr, mirror) = start_mirror(&common::embedded_tables_dir(), faults).await;
    let to = tempfile::tempdir().unwrap();
    let (ok, out, err) = fetch(addr, to.path(), &["--only", "KQvKR"]).await;
    assert!(ok, "{out}\n{err}");
    assert_all_verified(to.path());
    let requests = mirror.requests_for("KQvKR.rtbz");
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(requests[1].1.is_some(), "the resume asked for a range");
    assert_eq!(requests[1].2, 200, "and got the whole file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetches_a_flipped_file_again_from_scratch() {
    let faults = Faults {
        flip_once: HashSet::from(["KBNvK.rtbz".to_string()]),
        ..Faults::default()
    };
    let (addr, mirror) = start_mirror(&common::embedded_tables_dir(), faults).await;
    let to = tempfile::tempdir().unwrap();
    let (ok, out, err) = fetch(addr, to.path(), &["--only", "KBNvK"]).await;
    assert!(ok, "{out}\n{err}");
    assert_all_verified(to.path());
    let requests = mirror.requests_for("KBNvK.rtbz");
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(
        requests
            .iter()
            .all(|(_, range, status)| range.is_none() && *status == 200)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_a_file_damaged_twice_and_keeps_it_out_of_sight() {
    let faults = Faults {
        flip_always: HashSet::from(["KQvKR.rtbw".to_string()]),
        ..Faults::default()
    };
    let (addr, _mirror) = start_mirror(&common::embedded_tables_dir(), faults).await;
    let to = tempfile::tempdir().unwrap();
    let (ok, out, err) = fetch(addr, to.path(), &["--only", "KQvKR"]).await;
    assert!(!ok, "a damaged file must fail the run:\n{out}");
    assert!(
        out.contains("FAILED KQvKR.rtbw: sha256") && out.contains("use another mirror"),
        "{out}"
    );
    assert!(err.contains("1 of 2 files could not be fetched"), "{err}");
    assert_eq!(names_in(to.path()), ["KQvKR.rtbz"]);
    assert_all_verified(to.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_a_file_the_mirror_lacks() {
    let faults = Faults {
        missing: HashSet::from(["KRvKB.rtbz".to_string()]),
        ..Faults::default()
    };
    let (addr, mirror) = start_mirror(&common::embedded_tables_dir(), faults).await;
    let to = tempfile::tempdir().unwrap();
    let (ok, out, _) = fetch(addr, to.path(), &["--only", "KRvKB"]).await;
    assert!(!ok, "{out}");
    assert!(
        out.contains("FAILED KRvKB.rtbz: not on the mirror") && out.contains("404"),
        "{out}"
    );
    assert_eq!(names_in(to.path()), ["KRvKB.rtbw"]);
    assert_all_verified(to.path());
    assert_eq!(
        mirror.requests_for("KRvKB.rtbz").len(),
        1,
        "a 404 is not retried"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetches_a_set_once_and_replaces_only_what_is_damaged() {
    let (addr, mirror) = start_mirror(&common::embedded_tables_dir(), Faults::default()).await;
    let to = tempfile::tempdir().unwrap();
    let (ok, out, err) = fetch(addr, to.path(), &["--pieces", "3-4", "--jobs", "3"]).await;
    assert!(ok, "{out}\n{err}");
    assert_eq!(names_in(to.path()).len(), 70);
    assert_all_verified(to.path());
    assert_eq!(mirror.requests(), 70);

    // A damaged file under its real name and a stale .part of another.
    let damaged = to.path().join("KQvKR.rtbz");
    let mut bytes = fs::read(&damaged).unwrap();
    bytes[1000] ^= 0xff;
    fs::write(&damaged, bytes).unwrap();
    fs::remove_file(to.path().join("KBNvK.rtbz")).unwrap();
    fs::write(to.path().join("KBNvK.rtbz.part"), b"not a table").unwrap();

    let (ok, out, err) = fetch(addr, to.path(), &["--pieces", "3-4"]).await;
    assert!(ok, "{out}\n{err}");
    assert_all_verified(to.path());
    assert_eq!(names_in(to.path()).len(), 70);
    assert_eq!(
        total_row(&out),
        ["70", "2", "68", "0"],
        "two fetched, the rest already there:\n{out}"
    );
    let again: Vec<String> = mirror.log.lock().unwrap()[70..]
        .iter()
        .map(|(f, _, _)| f.clone())
        .collect();
    // The stale .part is resumed, fails its digest, and is fetched from scratch.
    assert!(
        again.iter().all(|f| f == "KQvKR.rtbz" || f == "KBNvK.rtbz"),
        "{again:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetches_what_captures_and_promotions_lead_to() {
    let Some(shared) = common::shared_tables_dir() else {
        return;
    };
    let (addr, _mirror) = start_mirror(&shared, Faults::default()).await;
    let to = tempfile::tempdir().unwrap();
    let (ok, out, err) = fetch(
        addr,
        to.path(),
        &["--only", "KQQPvK", "--with-dependencies"],
    )
    .await;
    assert!(ok, "{out}\n{err}");
    assert_all_verified(to.path());
    let closure = catalog::with_dependencies(["KQQPvK"]);
    let expected: Vec<String> = closure.iter().flat_map(|m| catalog::files_of(m)).collect();
    let mut expected = expected;
    expected.sort();
    assert_eq!(names_in(to.path()), expected);
    assert!(closure.contains("KQQQvK") && closure.contains("KQPvK") && closure.contains("KQvK"));
}

#[tokio::test]
async fn refuses_a_bad_selection_before_any_transfer() {
    let to = tempfile::tempdir().unwrap();
    let addr: SocketAddr = "127.0.0.1:9".parse().unwrap();
    let (ok, _, err) = fetch(addr, to.path(), &["--only", "KRPvKX"]).await;
    assert!(!ok && err.contains("KRPvKX"), "{err}");
    let (ok, _, err) = fetch(addr, to.path(), &["--pieces", "8"]).await;
    assert!(!ok && err.contains("3-4-5"), "{err}");
    let (ok, _, err) = fetch(addr, to.path(), &[]).await;
    assert!(!ok && err.contains("--pieces"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asks_the_next_mirror_for_a_file_the_first_lacks() {
    let wdl_only = Faults {
        missing: HashSet::from(["KBNvK.rtbz".to_string()]),
        ..Faults::default()
    };
    let (first, _) = start_mirror(&common::embedded_tables_dir(), wdl_only).await;
    let (second, mirror) = start_mirror(&common::embedded_tables_dir(), Faults::default()).await;
    let to = tempfile::tempdir().unwrap();
    let other = format!("http://{second}/syzygy/");
    let (ok, out, err) = fetch(first, to.path(), &["--from", &other, "--only", "KBNvK"]).await;
    assert!(ok, "{out}\n{err}");
    assert_all_verified(to.path());
    assert_eq!(names_in(to.path()), ["KBNvK.rtbw", "KBNvK.rtbz"]);
    assert_eq!(mirror.requests_for("KBNvK.rtbz").len(), 1);
    assert_eq!(mirror.requests_for("KBNvK.rtbw").len(), 0);
}

/// Every file under its real name in `dir` has its published digest (md5
/// for atomic and antichess), and no `.part` is left.
fn assert_all_match_published_digests(dir: &Path) {
    for name in names_in(dir) {
        assert!(!name.ends_with(".part"), "{name} left behind");
        let published = PublishedDigest::of(&name).unwrap_or_else(|| panic!("{name}: no digest"));
        let digest = published.of_table(&dir.join(&name), None, |_| {}).unwrap();
        assert_eq!(digest, published.hex(), "{name} is corrupt");
    }
}

fn files_of_tables(variant: app::variant::Variant, tables: &[&str]) -> Vec<String> {
    let mut files: Vec<String> = tables
        .iter()
        .flat_map(|m| catalog::of(variant).files_of(m))
        .collect();
    files.sort();
    files
}

/// Atomic captures explode the capturer too: KQvKP leads to the tables of
/// its promotions only, never to KQvK or KPvK. A file damaged once is
/// fetched again (its md5 tells), one damaged every time is named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetches_atomic_tables_and_what_their_promotions_lead_to() {
    let faults = Faults {
        flip_once: HashSet::from(["KQvKQ.atbz".to_string()]),
        flip_always: HashSet::from(["KQvKN.atbw".to_string()]),
        ..Faults::default()
    };
    let (addr, mirror) = start_mirror(&common::atomic_tables_dir(), faults).await;
    let to = tempfile::tempdir().unwrap();
    let args = [
        "--variant",
        "atomic",
        "--only",
        "KQvKP",
        "--with-dependencies",
    ];
    let (ok, out, err) = fetch(addr, to.path(), &args).await;
    assert!(!ok, "a damaged file must fail the run:\n{out}");
    assert!(out.contains("5 atomic tables, 10 files"), "{out}");
    assert!(
        out.contains("FAILED KQvKN.atbw: md5") && out.contains("use another mirror"),
        "{out}"
    );
    assert!(err.contains("1 of 10 files could not be fetched"), "{err}");
    let mut expected = files_of_tables(
        app::variant::Variant::Atomic,
        &["KQvKP", "KQvKQ", "KQvKR", "KQvKB", "KQvKN"],
    );
    expected.retain(|f| f != "KQvKN.atbw");
    assert_eq!(names_in(to.path()), expected);
    assert_all_match_published_digests(to.path());
    assert_eq!(mirror.requests_for("KQvKQ.atbz").len(), 2);
    assert!(mirror.requests_for("KQvK.atbw").is_empty());
    assert!(mirror.requests_for("KPvK.atbw").is_empty());

    // A second run checks what is there by md5 and fetches nothing again.
    mirror.faults.lock().unwrap().flip_always.clear();
    let before = mirror.requests();
    let (ok, out, err) = fetch(addr, to.path(), &args).await;
    assert!(ok, "{out}\n{err}");
    assert_eq!(total_row(&out), ["10", "1", "9", "0"], "{out}");
    assert_eq!(mirror.requests(), before + 1);
    assert_all_match_published_digests(to.path());
}

/// Without a published size, a cut transfer still resumes with Range: the
/// mirror's Content-Length says how long the file is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumes_a_cut_atomic_transfer_without_a_published_size() {
    let faults = Faults {
        cut_after: HashMap::from([("KRvKP.atbz".to_string(), 100_000)]),
        ..Faults::default()
    };
    let (addr, mirror) = start_mirror(&common::atomic_tables_dir(), faults).await;
    let to = tempfile::tempdir().unwrap();
    let (ok, out, err) = fetch(addr, to.path(), &["--variant", "atomic", "--only", "KRvKP"]).await;
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("2 files whose size is not published"), "{out}");
    assert_all_match_published_digests(to.path());
    let requests = mirror.requests_for("KRvKP.atbz");
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(
        requests[1].1.is_some() && requests[1].2 == 206,
        "{requests:?}"
    );
}

/// The lichess mirror keeps antichess tables with pawns (`.gtbw`) and
/// without (`.stbw`) in two directories: with both given as --from, each
/// file comes from the one that has it. A pawn may become a king, so KvP
/// needs KvK.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetches_antichess_tables_from_the_directories_that_hold_them() {
    let fixture = common::antichess_tables_dir();
    let all_but = |suffix: &str| -> HashSet<String> {
        names_in(&fixture)
            .into_iter()
            .filter(|name| !name.contains(suffix))
            .collect()
    };
    let giveaway = Faults {
        missing: all_but(".gtb"),
        ..Faults::default()
    };
    let pawnless = Faults {
        missing: all_but(".stb"),
        ..Faults::default()
    };
    let (first, first_mirror) = start_mirror(&fixture, giveaway).await;
    let (second, second_mirror) = start_mirror(&fixture, pawnless).await;
    let to = tempfile::tempdir().unwrap();
    let other = format!("http://{second}/syzygy/");
    let args = [
        "--from",
        &other,
        "--variant",
        "antichess",
        "--only",
        "PvK",
        "--with-dependencies",
    ];
    let (ok, out, err) = fetch(first, to.path(), &args).await;
    assert!(ok, "{out}\n{err}");
    let expected = files_of_tables(
        app::variant::Variant::Antichess,
        &["KvP", "KvQ", "KvR", "KvB", "KvN", "KvK"],
    );
    assert_eq!(names_in(to.path()), expected);
    assert!(
        expected.contains(&"KvP.gtbw".to_string()) && expected.contains(&"KvK.stbz".to_string())
    );
    assert_all_match_published_digests(to.path());
    assert_eq!(first_mirror.requests_for("KvP.gtbw")[0].2, 200);
    assert_eq!(first_mirror.requests_for("KvK.stbw")[0].2, 404);
    assert_eq!(second_mirror.requests_for("KvK.stbw")[0].2, 200);
    assert!(second_mirror.requests_for("KvP.gtbw").is_empty());
}

#[tokio::test]
async fn refuses_piece_counts_a_variants_list_lacks() {
    let to = tempfile::tempdir().unwrap();
    let addr: SocketAddr = "127.0.0.1:9".parse().unwrap();
    let (ok, _, err) = fetch(addr, to.path(), &["--variant", "atomic", "--pieces", "6"]).await;
    assert!(
        !ok && err.contains("atomic-3-4-5.md5") && err.contains("3, 4, 5"),
        "{err}"
    );
    let (ok, _, err) = fetch(
        addr,
        to.path(),
        &["--variant", "antichess", "--only", "KRPvK"],
    )
    .await;
    assert!(!ok && err.contains("not a published antichess"), "{err}");
}

/// A run stopped after the last byte arrived but before the file was
/// checked leaves a whole `.part`; without a published size, the mirror's
/// 416 to the resume says it is whole, and its md5 decides.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn takes_a_whole_part_file_the_mirror_has_nothing_more_for() {
    let (addr, mirror) = start_mirror(&common::atomic_tables_dir(), Faults::default()).await;
    let to = tempfile::tempdir().unwrap();
    fs::copy(
        common::atomic_tables_dir().join("KQvK.atbw"),
        to.path().join("KQvK.atbw.part"),
    )
    .unwrap();
    let (ok, out, err) = fetch(addr, to.path(), &["--variant", "atomic", "--only", "KQvK"]).await;
    assert!(ok, "{out}\n{err}");
    assert_eq!(names_in(to.path()), ["KQvK.atbw", "KQvK.atbz"]);
    assert_all_match_published_digests(to.path());
    let requests = mirror.requests_for("KQvK.atbw");
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0].2, 416);
}

/// The Prophet files the DTM tests serve, in the generator's layout.
const PROPHET_FILES: [&str; 5] = [
    "2men/0pawns/KK.egtb.bz",
    "3men/0pawns/KKQ.egtb.bz",
    "3men/0pawns/KQK.egtb.bz",
    "4men/0pawns/KBNK.egtb.bz",
    "4men/0pawns/KKBN.egtb.bz",
];

/// A Prophet mirror's directory: a few files of the embedded set in the
/// generator's layout, and (with `list`) its `MD5SUMS` as the generator
/// writes it, with a line for a file that is no table.
fn prophet_mirror_dir(list: bool) -> tempfile::TempDir {
    let embedded = Path::new(env!("CARGO_MANIFEST_DIR")).join("tables-prophet");
    let dir = tempfile::tempdir().unwrap();
    let mut md5sums = String::new();
    for path in PROPHET_FILES {
        let target = dir.path().join(path);
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        let name = path.rsplit('/').next().unwrap();
        fs::copy(embedded.join(name), &target).unwrap();
        let md5 = md5_file(&target, |_| {}).unwrap();
        md5sums.push_str(&format!("{md5}  ./{path}\n"));
    }
    fs::write(dir.path().join("README.md"), "a mirror\n").unwrap();
    md5sums.push_str("0123456789abcdef0123456789abcdef  ./README.md\n");
    if list {
        fs::write(dir.path().join("MD5SUMS"), md5sums).unwrap();
    }
    dir
}

/// `zugzwang tables fetch --dtm` from the Prophet mirror: success, stdout, stderr.
async fn fetch_dtm(addr: SocketAddr, to: &Path, args: &[&str]) -> (bool, String, String) {
    let mut command = process::binary();
    command
        .args(["tables", "fetch", "--dtm", "--from"])
        .arg(format!("http://{addr}/prophet/"))
        .arg("--to")
        .arg(to)
        .args(args);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Every file below `dir`, as paths relative to it, sorted, without the
/// checksums' folders (`.zugzwang`, see [`assert_checked_from_birth`]).
fn files_below(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.ends_with(INTEGRITY_SUBDIR) {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let relative = path.strip_prefix(root).unwrap();
                out.push(relative.to_string_lossy().into_owned());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Each of `files` below `to` is byte for byte the mirror's.
fn assert_same_as_mirror(mirror: &Path, to: &Path, files: &[&str]) {
    for file in files {
        assert_eq!(
            fs::read(mirror.join(file)).unwrap(),
            fs::read(to.join(file)).unwrap(),
            "{file} differs from the mirror's"
        );
    }
}

/// Every listed file arrives at its listed path, checked by md5; the
/// `MD5SUMS` written beside them lets `tables status --dtm --verify` check
/// them; a second run fetches nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetches_every_prophet_file_the_mirrors_md5sums_lists() {
    let source = prophet_mirror_dir(true);
    let (addr, mirror) = start_mirror(source.path(), Faults::default()).await;
    let to = tempfile::tempdir().unwrap();
    let (ok, out, err) = fetch_dtm(addr, to.path(), &["--pieces", "2-3-4", "--jobs", "2"]).await;
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains("5 Prophet DTM files listed in") && out.contains("5 selected"),
        "{out}"
    );
    assert_eq!(total_row(&out), ["5", "5", "0", "0"], "{out}");
    let mut expected: Vec<String> = PROPHET_FILES.iter().map(|f| f.to_string()).collect();
    expected.push("MD5SUMS".to_string());
    expected.sort();
    assert_eq!(files_below(to.path()), expected);
    assert_same_as_mirror(source.path(), to.path(), &PROPHET_FILES);
    assert!(mirror.requests_for("README.md").is_empty());
    let list = fs::read_to_string(to.path().join("MD5SUMS")).unwrap();
    assert!(list.contains("  ./4men/0pawns/KBNK.egtb.bz\n"), "{list}");
    assert_eq!(list.lines().count(), 5, "{list}");

    let status = process::binary()
        .args(["tables", "status", "--verify", "--dtm"])
        .arg(to.path())
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{report}");
    assert!(
        report.contains(&format!(
            "md5 list: {}",
            to.path().join("MD5SUMS").display()
        )),
        "{report}"
    );

    let before = mirror.requests();
    let (ok, out, err) = fetch_dtm(addr, to.path(), &["--pieces", "2-3-4"]).await;
    assert!(ok, "{out}\n{err}");
    assert_eq!(total_row(&out), ["5", "0", "5", "0"], "{out}");
    assert_eq!(mirror.requests(), before + 1, "only MD5SUMS asked again");
}

/// `--pieces` and `--only` choose among the listed files: only those are
/// asked of the mirror.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetches_the_prophet_files_of_the_piece_counts_selected() {
    let source = prophet_mirror_dir(true);
    let (addr, mirror) = start_mirror(source.path(), Faults::default()).await;
    let to = tempfile::tempdir().unwrap();
    let (ok, out, err) = fetch_dtm(addr, to.path(), &["--pieces", "3"]).await;
    assert!(ok, "{out}\n{err}");
    assert_eq!(
        files_below(to.path()),
        [
            "3men/0pawns/KKQ.egtb.bz",
            "3men/0pawns/KQK.egtb.bz",
            "MD5SUMS"
        ]
    );
    assert!(mirror.requests_for("4men/0pawns/KBNK.egtb.bz").is_empty());
    assert!(mirror.requests_for("2men/0pawns/KK.egtb.bz").is_empty());

    let (ok, out, err) = fetch_dtm(addr, to.path(), &["--only", "KBNvK"]).await;
    assert!(ok, "{out}\n{err}");
    assert_eq!(total_row(&out), ["2", "2", "0", "0"], "{out}");
    assert_same_as_mirror(source.path(), to.path(), &PROPHET_FILES[1..]);
    // The list in --to keeps the 3-piece lines and adds the 4-piece ones.
    let list = fs::read_to_string(to.path().join("MD5SUMS")).unwrap();
    assert_eq!(list.lines().count(), 4, "{list}");

    let (ok, _, err) = fetch_dtm(addr, to.path(), &["--pieces", "5"]).await;
    assert!(!ok && err.contains("2, 3, 4 pieces"), "{err}");
    let (ok, _, err) = fetch_dtm(addr, to.path(), &["--only", "KRRK"]).await;
    assert!(!ok && err.contains("--only KRRK"), "{err}");
}

/// A file that arrives damaged every time is named, and is neither under
/// its real name nor left as `.part`; a listed file the mirror lacks is
/// named too. The others arrive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_a_damaged_prophet_file_and_names_a_missing_one() {
    let source = prophet_mirror_dir(true);
    let faults = Faults {
        flip_always: HashSet::from(["4men/0pawns/KBNK.egtb.bz".to_string()]),
        missing: HashSet::from(["3men/0pawns/KKQ.egtb.bz".to_string()]),
        ..Faults::default()
    };
    let (addr, mirror) = start_mirror(source.path(), faults).await;
    let to = tempfile::tempdir().unwrap();
    let (ok, out, err) = fetch_dtm(addr, to.path(), &["--pieces", "2-3-4"]).await;
    assert!(!ok, "{out}");
    assert!(
        out.contains("FAILED 4men/0pawns/KBNK.egtb.bz: md5")
            && out.contains("(the mirror's MD5SUMS) twice")
            && out.contains("use another mirror"),
        "{out}"
    );
    assert!(
        out.contains("FAILED 3men/0pawns/KKQ.egtb.bz: not on the mirror")
            && out.contains("MD5SUMS lists it"),
        "{out}"
    );
    assert!(err.contains("2 of 5 files could not be fetched"), "{err}");
    assert_eq!(
        files_below(to.path()),
        [
            "2men/0pawns/KK.egtb.bz",
            "3men/0pawns/KQK.egtb.bz",
            "4men/0pawns/KKBN.egtb.bz",
            "MD5SUMS"
        ]
    );
    assert_same_as_mirror(
        source.path(),
        to.path(),
        &[PROPHET_FILES[0], PROPHET_FILES[2], PROPHET_FILES[4]],
    );
    let list = fs::read_to_string(to.path().join("MD5SUMS")).unwrap();
    assert!(!list.contains("KBNK") && !list.contains("KKQ"), "{list}");
    let gets = mirror
        .requests_for("4men/0pawns/KBNK.egtb.bz")
        .into_iter()
        .filter(|(_, _, status)| *status == 200)
        .count();
    assert!(gets >= 2, "fetched again from scratch once");
}

/// A mirror without an `MD5SUMS` is refused before any transfer, with what
/// to do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_a_prophet_mirror_without_md5sums() {
    let source = prophet_mirror_dir(false);
    let (addr, mirror) = start_mirror(source.path(), Faults::default()).await;
    let to = tempfile::tempdir().unwrap();
    let (ok, out, err) = fetch_dtm(addr, to.path(), &["--pieces", "2-3-4"]).await;
    assert!(!ok, "{out}");
    assert!(
        err.contains("/prophet/MD5SUMS answered 404") && err.contains("--from"),
        "{err}"
    );
    assert_eq!(mirror.requests(), 1);
    assert!(files_below(to.path()).is_empty());

    // --dtm takes no variant and no dependencies.
    let (ok, _, err) = fetch_dtm(addr, to.path(), &["--with-dependencies"]).await;
    assert!(!ok && err.contains("--with-dependencies"), "{err}");
}

/// Each of `files` (paths below `dir`) is checked from birth: `.zugzwang/`
/// beside it holds its manifest, which matches the file as it is (size,
/// modification time) and records its sha256, and its block checksums,
/// the very ones `verify --init` computes (`BlockSums::of` its bytes). And
/// `verify --init`'s builder (`tier_build` with `per_directory`), run over
/// `dir`, finds every entry up to date: nothing to record again.
fn assert_checked_from_birth(dir: &Path, files: &[&str]) {
    for file in files {
        let path = dir.join(file);
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let integrity = path.parent().unwrap().join(INTEGRITY_SUBDIR);
        let manifest = Manifest::load(&integrity, &name)
            .unwrap()
            .unwrap_or_else(|| panic!("{file}: no manifest in {}", integrity.display()));
        let meta = Stamp::of(&fs::metadata(&path).unwrap());
        assert!(
            manifest.matches_source(&meta),
            "{file}: the manifest is not the file's: {}",
            manifest.staleness(&meta)
        );
        assert_eq!(manifest.table, name);
        assert_eq!(
            (
                manifest.block_size,
                manifest.hash.as_str(),
                manifest.fast_len
            ),
            (DEFAULT_BLOCK_SIZE, HASH_NAME, 0),
            "{file}"
        );
        assert_eq!(
            manifest.sha256,
            sha256_file(&path, |_| {}).unwrap(),
            "{file}"
        );
        let prefix_len = if prophet_format::is_table_name(&name) {
            prophet_format::layout(&path).unwrap().prefix_len
        } else {
            layout::parse_file(&path).unwrap().prefix_len
        };
        assert_eq!(manifest.prefix_len, prefix_len, "{file}");
        let expected = BlockSums::of(&fs::read(&path).unwrap(), DEFAULT_BLOCK_SIZE);
        let sums = fs::read(sums_path(&integrity, &name)).unwrap();
        assert_eq!(sums, expected.to_bytes(), "{file}: sums differ");
    }
    let options = BuildOptions {
        from: vec![dir.to_path_buf()],
        to: dir.join(INTEGRITY_SUBDIR),
        dry_run: false,
        block_size: DEFAULT_BLOCK_SIZE,
        prefixes: false,
        per_directory: true,
        remote: None,
    };
    let summary = tier_build::build(&options, &Silent);
    assert_eq!(summary.failures, [], "verify --init fails them");
    assert_eq!(
        (summary.built, summary.up_to_date),
        (0, files.len() as u64),
        "verify --init would record them again"
    );
}

/// A fetched table is checked from its first read: its block checksums
/// are recorded as it arrives. A file already there without them gets
/// them (it is read to check its digest anyway); a damaged one is fetched
/// again and its checksums recorded anew; a run with nothing to do writes
/// nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_block_checksums_of_every_file_it_fetches() {
    let (addr, _mirror) = start_mirror(&common::embedded_tables_dir(), Faults::default()).await;
    let to = tempfile::tempdir().unwrap();
    let files = ["KBNvK.rtbw", "KBNvK.rtbz", "KQvKR.rtbw", "KQvKR.rtbz"];
    let (ok, out, err) = fetch(addr, to.path(), &["--only", "KBNvK,KQvKR"]).await;
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains("block checksums recorded for 4 files in .zugzwang/"),
        "{out}"
    );
    assert_eq!(names_in(to.path()), files);
    assert_checked_from_birth(to.path(), &files);

    // Checksums lost for one file, another damaged under its real name.
    let integrity = to.path().join(INTEGRITY_SUBDIR);
    fs::remove_file(integrity.join("KBNvK.rtbw.manifest")).unwrap();
    fs::remove_file(integrity.join("KBNvK.rtbw.sums")).unwrap();
    let damaged = to.path().join("KQvKR.rtbz");
    let mut bytes = fs::read(&damaged).unwrap();
    bytes[1000] ^= 0xff;
    fs::write(&damaged, bytes).unwrap();
    let (ok, out, err) = fetch(addr, to.path(), &["--only", "KBNvK,KQvKR"]).await;
    assert!(ok, "{out}\n{err}");
    assert_eq!(total_row(&out), ["4", "1", "3", "0"], "{out}");
    assert!(
        out.contains("block checksums recorded for 2 files (1 of them already there without)"),
        "{out}"
    );
    assert_all_verified(to.path());
    assert_checked_from_birth(to.path(), &files);

    let (ok, out, err) = fetch(addr, to.path(), &["--only", "KBNvK,KQvKR"]).await;
    assert!(ok, "{out}\n{err}");
    assert_eq!(total_row(&out), ["4", "0", "4", "0"], "{out}");
    assert!(!out.contains("block checksums recorded"), "{out}");
    assert_checked_from_birth(to.path(), &files);
}

/// Atomic tables are published with md5 only: the pass that checks it
/// computes the sha256 the manifest records too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_block_checksums_of_variant_tables() {
    let (addr, _mirror) = start_mirror(&common::atomic_tables_dir(), Faults::default()).await;
    let to = tempfile::tempdir().unwrap();
    let (ok, out, err) = fetch(addr, to.path(), &["--variant", "atomic", "--only", "KRvKP"]).await;
    assert!(ok, "{out}\n{err}");
    assert_eq!(names_in(to.path()), ["KRvKP.atbw", "KRvKP.atbz"]);
    assert_all_match_published_digests(to.path());
    assert_checked_from_birth(to.path(), &["KRvKP.atbw", "KRvKP.atbz"]);
}

/// Prophet files in the generator's subdirectories: each gets the
/// `.zugzwang/` of its own directory, where the reader looks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_block_checksums_beside_nested_prophet_files() {
    let source = prophet_mirror_dir(true);
    let (addr, _mirror) = start_mirror(source.path(), Faults::default()).await;
    let to = tempfile::tempdir().unwrap();
    let (ok, out, err) = fetch_dtm(addr, to.path(), &["--pieces", "2-3-4"]).await;
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains("block checksums recorded for 5 files"),
        "{out}"
    );
    assert!(
        to.path()
            .join("4men/0pawns")
            .join(INTEGRITY_SUBDIR)
            .join("KBNK.egtb.bz.manifest")
            .is_file()
    );
    assert_checked_from_birth(to.path(), &PROPHET_FILES);
}

/// A Prophet file whose md5 is the one the mirror lists, but which fails
/// its own check (its values' checksum field): the mirror lists a damaged
/// file. It is refused at once (fetching it again would bring the same
/// bytes), never appears under its real name, and no checksums vouch for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_a_prophet_file_the_mirror_lists_damaged() {
    let source = prophet_mirror_dir(true);
    let damaged = "3men/0pawns/KQK.egtb.bz";
    let path = source.path().join(damaged);
    let mut bytes = fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x10;
    fs::write(&path, &bytes).unwrap();
    let md5 = md5_file(&path, |_| {}).unwrap();
    let list = fs::read_to_string(source.path().join("MD5SUMS")).unwrap();
    let list: String = list
        .lines()
        .map(|line| match line.ends_with(damaged) {
            true => format!("{md5}  ./{damaged}\n"),
            false => format!("{line}\n"),
        })
        .collect();
    fs::write(source.path().join("MD5SUMS"), list).unwrap();
    let (addr, mirror) = start_mirror(source.path(), Faults::default()).await;
    let to = tempfile::tempdir().unwrap();
    let (ok, out, err) = fetch_dtm(addr, to.path(), &["--pieces", "3"]).await;
    assert!(!ok, "{out}");
    assert!(err.contains("1 of 2 files could not be fetched"), "{err}");
    assert!(
        out.contains(&format!(
            "FAILED {damaged}: its md5 is the expected one, but the file fails its own check"
        )) && out.contains("use another mirror"),
        "{out}"
    );
    // As many requests as for a good file (HEAD for the size, one GET).
    assert_eq!(
        mirror.requests_for(damaged).len(),
        mirror.requests_for("3men/0pawns/KKQ.egtb.bz").len(),
        "not fetched again"
    );
    assert_eq!(
        files_below(to.path()),
        ["3men/0pawns/KKQ.egtb.bz", "MD5SUMS"]
    );
    assert!(
        !to.path()
            .join("3men/0pawns/.zugzwang/KQK.egtb.bz.manifest")
            .exists()
    );
    assert_checked_from_birth(to.path(), &["3men/0pawns/KKQ.egtb.bz"]);
}

/// The bytes of `file` below `dir`, or `None` without it.
fn size_of(dir: &Path, file: &str) -> Option<u64> {
    fs::metadata(dir.join(file)).ok().map(|meta| meta.len())
}

/// A file without a published size whose body never ends (no
/// Content-Length) stops at the most a file of its kind can be (an atomic
/// 3-piece file: 1 MiB; a Prophet file: what its material allows), named
/// in the summary; its `.part` is removed, and the other files arrive. A
/// mirror that announces a size past the bound is refused before a byte
/// is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stops_a_body_without_end_at_the_most_its_kind_can_be() {
    let faults = Faults {
        endless: HashSet::from(["KQvK.atbw".to_string()]),
        announce: HashMap::from([("KRvK.atbz".to_string(), 1_000_000_000_000)]),
        ..Faults::default()
    };
    let (addr, mirror) = start_mirror(&common::atomic_tables_dir(), faults).await;
    let to = tempfile::tempdir().unwrap();
    let args = ["--variant", "atomic", "--only", "KQvK,KRvK"];
    let (ok, out, err) = fetch(addr, to.path(), &args).await;
    assert!(!ok, "{out}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        out.contains("FAILED KQvK.atbw: the mirror sent ")
            && out.contains("bytes, more than 1048576 (the bound for a 3-piece table file)")
            && out.contains("KQvK.atbw.part was removed; use another mirror"),
        "{out}"
    );
    assert!(
        out.contains(
            "FAILED KRvK.atbz: the mirror announces 1000000000000 bytes, more than 1048576"
        ),
        "{out}"
    );
    assert!(err.contains("2 of 4 files could not be fetched"), "{err}");
    assert_eq!(names_in(to.path()), ["KQvK.atbz", "KRvK.atbw"]);
    // Not retried: a body that never ends would only end the same way.
    assert_eq!(mirror.requests_for("KQvK.atbw").len(), 1);
    assert_eq!(mirror.requests_for("KRvK.atbz").len(), 1);

    // A Prophet file: the bound comes from its material (KQK: 28644
    // positions, one block at most zstd's bound).
    let source = prophet_mirror_dir(true);
    let faults = Faults {
        endless: HashSet::from(["3men/0pawns/KQK.egtb.bz".to_string()]),
        ..Faults::default()
    };
    let (addr, _mirror) = start_mirror(source.path(), faults).await;
    let to = tempfile::tempdir().unwrap();
    let (ok, out, err) = fetch_dtm(addr, to.path(), &["--pieces", "3"]).await;
    assert!(!ok, "{out}");
    assert!(!err.contains("panicked"), "{err}");
    let bound = 24 + 2 + zstd::zstd_safe::compress_bound(2 * 32768) as u64;
    assert!(
        out.contains("FAILED 3men/0pawns/KQK.egtb.bz: the mirror sent ")
            && out.contains(&format!(
                " bytes, more than {bound} (the most a Prophet file of its material can hold)"
            )),
        "{out}"
    );
    assert_eq!(
        files_below(to.path()),
        ["3men/0pawns/KKQ.egtb.bz", "MD5SUMS"]
    );
}

/// A `Content-Range` that does not add up (a span other than the body's,
/// an end before its start, a number past 2^64, a total past the bound)
/// is an error naming the file and what is wrong, never a panic or an
/// overflow; the `.part` is kept as it was (or removed), nothing appears
/// under the real name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_a_hostile_content_range() {
    let source = common::atomic_tables_dir();
    let original = fs::read(source.join("KQvK.atbw")).unwrap();
    let cases: [(&str, usize, &str); 5] = [
        (
            "bytes 100-18446744073709551614/18446744073709551615",
            10,
            "spans 18446744073709551515 bytes, but the Content-Length is 10",
        ),
        (
            "bytes 100-99/*",
            0,
            "ends (byte 99) before it starts (byte 100)",
        ),
        (
            "bytes 100-99999999999999999999999/*",
            10,
            "is not `bytes FIRST-LAST/TOTAL`",
        ),
        (
            "bytes 0-18446744073709551615/*",
            10,
            "spans 2^64 bytes, but the Content-Length is 10",
        ),
        (
            "bytes 100-1048675/1048676",
            1_048_576,
            "announces 1048676 bytes, more than 1048576",
        ),
    ];
    for (value, len, says) in cases {
        let faults = Faults {
            content_range: HashMap::from([("KQvK.atbw".to_string(), (value.to_string(), len))]),
            ..Faults::default()
        };
        let (addr, mirror) = start_mirror(&source, faults).await;
        let to = tempfile::tempdir().unwrap();
        fs::write(to.path().join("KQvK.atbw.part"), &original[..100]).unwrap();
        let args = ["--variant", "atomic", "--only", "KQvK"];
        let (ok, out, err) = fetch(addr, to.path(), &args).await;
        assert!(!ok, "{value}: {out}");
        assert!(!err.contains("panicked"), "{value}: {err}");
        assert!(
            out.contains("FAILED KQvK.atbw: ") && out.contains(says),
            "{value}: {out}"
        );
        assert_eq!(size_of(to.path(), "KQvK.atbw"), None, "{value}");
        let part = size_of(to.path(), "KQvK.atbw.part");
        assert!(part.is_none_or(|bytes| bytes == 100), "{value}: {part:?}");
        assert_eq!(mirror.requests_for("KQvK.atbw").len(), 1, "{value}");
        let whole = fs::metadata(source.join("KQvK.atbz")).unwrap().len();
        assert_eq!(size_of(to.path(), "KQvK.atbz"), Some(whole), "{value}");
    }
}

/// An https server for 127.0.0.1 (the test certificate in
/// `tests/fixtures/`, which the fetching process is told to trust with
/// `SSL_CERT_FILE`): `/down/P` redirects to `http://{http}/P` (plain http),
/// `/same/P` to `/gone/P` on itself (https), `/gone/...` answers 404. One
/// blocking thread per connection, rustls on a std socket.
fn start_tls_redirector(http: SocketAddr) -> SocketAddr {
    use std::io::{Read, Write};

    use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};

    let cert = CertificateDer::from_pem_file(common::fixture("tls-test-127.0.0.1.pem")).unwrap();
    let key = PrivateKeyDer::from_pem_file(common::fixture("tls-test-127.0.0.1.key")).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .unwrap();
    let config = Arc::new(config);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let https = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let config = Arc::clone(&config);
            std::thread::spawn(move || {
                let connection = rustls::ServerConnection::new(config).unwrap();
                let mut tls = rustls::StreamOwned::new(connection, stream);
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    match tls.read(&mut byte) {
                        Ok(1) => head.push(byte[0]),
                        _ => return,
                    }
                }
                let head = String::from_utf8_lossy(&head);
                let path = head.split_whitespace().nth(1).unwrap_or("/");
                let location = if let Some(rest) = path.strip_prefix("/down/") {
                    Some(format!("http://{http}/{rest}"))
                } else {
                    path.strip_prefix("/same/")
                        .map(|rest| format!("https://{https}/gone/{rest}"))
                };
                let response = match location {
                    Some(location) => format!(
                        "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    ),
                    None => {
                        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .to_string()
                    }
                };
                let _ = tls.write_all(response.as_bytes());
                tls.conn.send_close_notify();
                let _ = tls.flush();
            });
        }
    });
    https
}

/// A mirror on https that redirects to plain http is not followed: the
/// transfer stops at once with an error naming both addresses, and the
/// http server is never asked. A redirect that stays on https is followed
/// (here to a 404), so the refusal is the downgrade's, not the TLS setup's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_a_redirect_from_https_to_http() {
    let (http, mirror) = start_mirror(&common::atomic_tables_dir(), Faults::default()).await;
    let https = start_tls_redirector(http);
    let run = |from: String| async move {
        let to = tempfile::tempdir().unwrap();
        let mut command = process::binary();
        command
            .env("SSL_CERT_FILE", common::fixture("tls-test-127.0.0.1.pem"))
            .args(["tables", "fetch", "--variant", "atomic", "--only", "KQvK"])
            .args(["--from", &from, "--to"])
            .arg(to.path());
        let output = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        let names = names_in(to.path());
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
            names,
        )
    };

    let (ok, out, err, names) = run(format!("https://{https}/same/syzygy/")).await;
    assert!(!ok && names.is_empty(), "{out}\n{err}");
    assert!(
        out.contains("FAILED KQvK.atbw: not on the mirror")
            && out.contains("FAILED KQvK.atbz: not on the mirror"),
        "followed to https://{https}/gone/...: {out}\n{err}"
    );

    let (ok, out, err, names) = run(format!("https://{https}/down/syzygy/")).await;
    assert!(!ok && names.is_empty(), "{out}\n{err}");
    assert!(
        out.contains(&format!(
            "FAILED KQvK.atbw: https://{https}/down/syzygy/KQvK.atbw redirected to http://{http}/syzygy/KQvK.atbw: from https to plain http"
        )) && out.contains("refused; give as --from an https address"),
        "{out}\n{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(mirror.requests(), 0, "the http mirror was asked");
}

/// A file that would not fit in what is free is stopped before the disk
/// fills, with what to do, its `.part` kept to resume from: one whose
/// mirror announces 20 MiB on a 16 MiB file system, and one of unknown
/// size (a body without end) where 16 MiB is less than the margin kept for
/// it. The file system is a tmpfs of its own, mounted in a user and mount
/// namespace (`unshare`) around the fetching process; where namespaces are
/// not allowed the test says so and does not run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stops_before_the_disk_is_full() {
    let faults = Faults {
        announce: HashMap::from([("KQvKP.atbw".to_string(), 20 << 20)]),
        endless: HashSet::from(["KQvKP.atbz".to_string()]),
        ..Faults::default()
    };
    let (addr, mirror) = start_mirror(&common::atomic_tables_dir(), faults).await;
    let to = tempfile::tempdir().unwrap();
    let mount = to.path().to_owned();
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new("unshare")
            .args(["--user", "--map-root-user", "--mount", "sh", "-c"])
            .arg(
                "mount -t tmpfs -o size=16m none \"$1\" || exit 97; echo mounted; shift; \
                 \"$@\"; status=$?; find \"$5\" -type f -printf '%s %P\\n'; exit $status",
            )
            .arg("sh")
            .arg(&mount)
            .arg(env!("CARGO_BIN_EXE_zugzwang"))
            .args(["tables", "fetch", "--to"])
            .arg(&mount)
            .arg("--from")
            .arg(format!("http://{addr}/syzygy"))
            .args(["--variant", "atomic", "--only", "KQvKP", "--jobs", "1"])
            .output()
    })
    .await
    .unwrap();
    let output = match output {
        Ok(output) if output.stdout.starts_with(b"mounted\n") => output,
        other => {
            let why = match other {
                Ok(output) => String::from_utf8_lossy(&output.stderr).trim().to_string(),
                Err(err) => format!("unshare: {err}"),
            };
            common::unsupported(&format!(
                "cannot mount a tmpfs in a user namespace here ({why})"
            ));
            return;
        }
    };
    let out = String::from_utf8_lossy(&output.stdout);
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{out}\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        out.contains("FAILED KQvKP.atbw: ")
            && out.contains(" is free in ")
            && out.contains("and the file needs 20.00 MiB more; stopped before the disk is full (the bytes received are kept in KQvKP.atbw.part): free some space, then run the same command again"),
        "{out}\n{err}"
    );
    assert!(
        out.contains("FAILED KQvKP.atbz: ")
            && out.contains("MiB kept free while a file of unknown size arrives"),
        "{out}\n{err}"
    );
    // Only what arrived before the check: nothing of either body.
    let mut files: Vec<&str> = out.lines().filter(|line| line.ends_with(".part")).collect();
    files.sort();
    assert_eq!(files, ["0 KQvKP.atbw.part", "0 KQvKP.atbz.part"], "{out}");
    assert_eq!(mirror.requests_for("KQvKP.atbw").len(), 1);
}
