//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use server::{
    engine::{Engine, EngineConfig},
    store::StoreOptions,
};

/// The 3- and 4-piece tables the repo carries (the same files the binary embeds).
pub fn embedded_tables_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tables")
}

/// A file the repository carries in `tests/fixtures/` (cut from `shared/`,
/// so that tests of the embedded tables run on a bare clone too).
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The shared 5-piece tables beside the checkout, if present. A test that
/// needs them says so in one `SKIPPED:` line when they are missing, rather
/// than passing silently (or fails, under [`REQUIRE_SHARED`]).
pub fn shared_tables_dir() -> Option<PathBuf> {
    let [dir] = shared(["syzygy/standard"])?;
    Some(dir)
}

/// The shared 5-piece tables and a file of `shared/` that goes with them
/// (a 5-piece workload or expected values), if both are present; otherwise
/// [`missing`] names what is not there.
pub fn shared_tables_and(file: &str) -> Option<(PathBuf, PathBuf)> {
    let [dir, file] = shared(["syzygy/standard", file])?;
    Some((dir, file))
}

/// A directory of `shared/` beside the checkout (e.g. `syzygy/antichess`),
/// if present; otherwise [`missing`] says what did not run.
pub fn shared_dir(relative: &str, what_did_not_run: &str) -> Option<PathBuf> {
    let path = shared_root().join(relative);
    if path.exists() {
        return Some(path);
    }
    missing(&format!(
        "{} not found; {what_did_not_run} did not run",
        path.display()
    ));
    None
}

/// `shared/` beside the checkout.
fn shared_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("the checkout has a parent")
        .join("shared")
}

/// Paths in `shared/` beside the checkout (CI has it, a fresh clone does not).
fn shared<const N: usize>(relative: [&str; N]) -> Option<[PathBuf; N]> {
    let root = shared_root();
    let paths = relative.map(|path| root.join(path));
    let missing_paths: Vec<String> = paths
        .iter()
        .filter(|path| !path.exists())
        .map(|path| path.display().to_string())
        .collect();
    if missing_paths.is_empty() {
        return Some(paths);
    }
    missing(&format!(
        "{} not found; the 5-piece part of this test did not run",
        missing_paths.join(" and ")
    ));
    None
}

/// Set (to anything but empty or `0`) where every test must run in full,
/// as `.ci/run` does: a green CI run without `../shared` would otherwise
/// look like one that checked the 5-piece tables.
pub const REQUIRE_SHARED: &str = "ZUGZWANG_REQUIRE_SHARED";

/// Something the test needs that CI provides is missing: `../shared`, or a
/// tool `.ci/install` installs. Prints one `SKIPPED:` line, or panics with
/// the same words under [`REQUIRE_SHARED`]. The caller returns afterwards.
pub fn missing(why: &str) {
    let required = std::env::var_os(REQUIRE_SHARED).is_some_and(|v| !v.is_empty() && v != "0");
    match on_missing(required, &current_test(), why) {
        Ok(line) => print_skip(&line),
        Err(failure) => panic!("{failure}"),
    }
}

/// This machine cannot do what the test needs (a kernel feature, root), and
/// no installing fixes that: one `SKIPPED:` line even under [`REQUIRE_SHARED`].
pub fn unsupported(why: &str) {
    print_skip(&skip_line(&current_test(), why));
}

/// What [`missing`] does, without doing it: `Ok` with the line a skip
/// prints, or `Err` with the message the test fails with.
pub fn on_missing(required: bool, test: &str, why: &str) -> Result<String, String> {
    if required {
        Err(format!(
            "{test}: {why} ({REQUIRE_SHARED} is set, so this fails instead of skipping)"
        ))
    } else {
        Ok(skip_line(test, why))
    }
}

fn skip_line(test: &str, why: &str) -> String {
    format!("SKIPPED: {test}: {why}")
}

fn current_test() -> String {
    std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string()
}

/// Straight to stderr: the test harness captures `eprintln!` of passing
/// tests, and a skip should be seen.
fn print_skip(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// An engine over `dirs` (none: the embedded tables) as `serve` opens it
/// by default: tables never checked against their published digest are
/// refused.
pub fn engine_with(dirs: Vec<PathBuf>) -> Engine {
    Engine::open(&EngineConfig {
        tables: dirs,
        ..EngineConfig::default()
    })
    .expect("tables load")
}

/// The store of `serve --allow-unchecked`, for tests whose subject is not
/// integrity: copies of the repository's tables and `../shared` carry no
/// recorded block checksums, so the default store refuses them.
pub fn store_allowing_unchecked() -> StoreOptions {
    StoreOptions {
        allow_unchecked: true,
        ..StoreOptions::default()
    }
}

/// An engine over `dirs` that serves tables never checked
/// (`--allow-unchecked`; see [`store_allowing_unchecked`]).
pub fn engine_allowing_unchecked(dirs: Vec<PathBuf>) -> Engine {
    Engine::open(&EngineConfig {
        tables: dirs,
        store: store_allowing_unchecked(),
        ..EngineConfig::default()
    })
    .expect("tables load")
}

/// Copies the embedded tables into a fresh temporary directory the test may
/// damage; writable even where the checkout's tables are read-only.
pub fn copy_of_embedded_tables() -> tempfile::TempDir {
    copy_of(&embedded_tables_dir())
}

/// The atomic 3-4 piece tables the repository carries (the binary embeds them).
pub fn atomic_tables_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tables-atomic")
}

/// Every 2-piece antichess table (`.gtbw/.gtbz` with a pawn, `.stbw/.stbz`
/// without), a fixture the repository carries.
pub fn antichess_tables_dir() -> PathBuf {
    fixture("antichess-2")
}

/// Copies the files of a table directory into a fresh temporary directory
/// the test may damage, writable whatever the originals' permissions.
pub fn copy_of(tables: &Path) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    for entry in std::fs::read_dir(tables).expect("tables dir") {
        let path = entry.expect("entry").path();
        let to = dir.path().join(path.file_name().expect("file name"));
        std::fs::copy(&path, &to).expect("copy");
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    }
    dir
}

/// A `/standard` that never answers, as a probe stuck on a dead disk does.
pub fn stuck_route() -> axum::Router {
    axum::Router::new().route(
        "/standard",
        axum::routing::get(|| async {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            "never"
        }),
    )
}

/// The full HTTP router over an engine, as `serve` builds it.
pub fn router(engine: Engine) -> axum::Router {
    use leptos::prelude::LeptosOptions;
    let leptos_options = LeptosOptions::builder()
        .output_name("zugzwang")
        .site_root("target/site")
        .build();
    server::http::router(server::http::AppState::new(
        std::sync::Arc::new(engine),
        leptos_options,
    ))
}

/// A GET request's status, content type and body.
pub async fn get(
    router: &axum::Router,
    uri: &str,
    accept: Option<&str>,
) -> (axum::http::StatusCode, String, Vec<u8>) {
    let (status, headers, body) = get_with_headers(router, uri, accept).await;
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    (status, content_type, body)
}

/// A GET request's status, all its headers and body.
pub async fn get_with_headers(
    router: &axum::Router,
    uri: &str,
    accept: Option<&str>,
) -> (axum::http::StatusCode, axum::http::HeaderMap, Vec<u8>) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let mut request = axum::http::Request::get(uri);
    if let Some(accept) = accept {
        request = request.header("accept", accept);
    }
    let response = router
        .clone()
        .oneshot(request.body(axum::body::Body::empty()).expect("request"))
        .await
        .expect("router answers");
    let (parts, body) = response.into_parts();
    let body = body.collect().await.expect("body").to_bytes().to_vec();
    (parts.status, parts.headers, body)
}

/// A GET that must answer with JSON; returns status and the parsed body.
pub async fn get_json(
    router: &axum::Router,
    uri: &str,
) -> (axum::http::StatusCode, serde_json::Value) {
    let (status, content_type, body) = get(router, uri, None).await;
    assert!(
        content_type.starts_with("application/json"),
        "{uri}: content type {content_type}"
    );
    (status, serde_json::from_slice(&body).expect("JSON body"))
}

/// Error answers go to anyone; where the tables live is the operator's
/// business, so no answer may show `dir`.
pub fn assert_no_path(body: &serde_json::Value, dir: &Path) {
    let text = body.to_string();
    assert!(
        !text.contains(&*dir.to_string_lossy()),
        "the answer shows a path of the server's disks: {text}"
    );
}

/// Changes a file's bytes as a failing disk does: the modification time
/// stays, so the checksums recorded for the file still claim to apply.
pub fn damage(path: &Path, change: impl FnOnce(&mut [u8])) {
    let modified = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .expect("mtime");
    let mut bytes = std::fs::read(path).expect("read");
    change(&mut bytes);
    std::fs::write(path, bytes).expect("write");
    let file = std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open");
    file.set_modified(modified).expect("keep mtime");
}

/// Uses up every descriptor the process may have, as a flood of
/// connections would; dropping it gives them back, and the limit in force
/// before.
pub struct Exhaustion {
    saved: rustix::process::Rlimit,
    fillers: Vec<std::fs::File>,
}

impl Exhaustion {
    pub fn start() -> Exhaustion {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        let saved = getrlimit(Resource::Nofile);
        let no_room = Rlimit {
            current: Some(highest_open_fd() + 1),
            maximum: saved.maximum,
        };
        setrlimit(Resource::Nofile, no_room).expect("lower the limit");
        // Fill any free numbers below the limit, so no descriptor is left at all.
        let mut fillers = Vec::new();
        while let Ok(file) = std::fs::File::open("/dev/null") {
            fillers.push(file);
        }
        Exhaustion { saved, fillers }
    }

    /// Gives back exactly one descriptor.
    pub fn spare_one(&mut self) {
        self.fillers.pop();
    }
}

impl Drop for Exhaustion {
    fn drop(&mut self) {
        self.fillers.clear();
        let _ = rustix::process::setrlimit(rustix::process::Resource::Nofile, self.saved);
    }
}

/// Highest file descriptor number in use, from /proc.
fn highest_open_fd() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u64>().ok())
        .max()
        .expect("some descriptor is open")
}
