//! Tables on a plain HTTP mirror that lists its directory and honours Range
//! (issue 46): `tier build --from http://…` builds the prefixes from the
//! mirror's files (checked against the published digests), and `serve
//! --tables http://…` answers the request log as the local directory does,
//! byte for byte, with at most one GET per slow read. The mirror is
//! tower-http's `ServeDir` (Range, HEAD) in the test, over the 3-4 piece
//! tables the repository carries, so this runs on a bare clone too.

mod common;
mod process;
mod remote_support;

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
};

use axum::{Router, extract::Request, middleware::Next, response::Html, routing::get};
use remote_support::*;

/// An HTTP mirror of `dir` (at `/NAME/`, NAME its own) on loopback: an index page linking its files
/// (as nginx's `autoindex` does), the files with Range; counts ranged GETs.
struct Mirror {
    addr: SocketAddr,
    name: String,
    ranged_gets: Arc<AtomicU64>,
    _runtime: tokio::runtime::Runtime,
}

impl Mirror {
    fn start(dir: &Path) -> Mirror {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("read the tables")
            .filter_map(|e| Some(e.ok()?.file_name().to_str()?.to_string()))
            .collect();
        names.sort();
        let links: String = names
            .iter()
            .map(|name| format!("<a href=\"{name}\">{name}</a>\n"))
            .collect();
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a directory name")
            .to_string();
        let index =
            format!("<html><body><pre><a href=\"../\">../</a>\n{links}</pre></body></html>");
        let ranged_gets = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&ranged_gets);
        let app = Router::new()
            .route(
                &format!("/{name}/"),
                get(move || async move { Html(index) }),
            )
            .fallback_service(tower_http::services::ServeDir::new(
                dir.parent().expect("the tables' parent"),
            ))
            .layer(axum::middleware::from_fn(
                move |request: Request, next: Next| {
                    let counted = Arc::clone(&counted);
                    async move {
                        if request.headers().contains_key("range") {
                            counted.fetch_add(1, Ordering::Relaxed);
                        }
                        next.run(request).await
                    }
                },
            ));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        runtime.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            axum::serve(listener, app).await.expect("the mirror serves");
        });
        Mirror {
            addr,
            name,
            ranged_gets,
            _runtime: runtime,
        }
    }

    fn url(&self) -> String {
        format!("http://{}/{}/", self.addr, self.name)
    }
}

/// Fast tiers built by `tier build` from the directory and from its mirror.
struct Tiers {
    local: tempfile::TempDir,
    remote: tempfile::TempDir,
    /// What `tier build --from URL` printed.
    remote_output: String,
}

impl Tiers {
    fn build(tables: &str, url: &str) -> Tiers {
        let local = tempfile::tempdir().expect("temp dir");
        let remote = tempfile::tempdir().expect("temp dir");
        let to = |dir: &tempfile::TempDir| dir.path().display().to_string();
        zugzwang(
            &["tier", "build", "--from", tables, "--to", &to(&local)],
            &[],
        );
        let remote_output = zugzwang(&["tier", "build", "--from", url, "--to", &to(&remote)], &[]);
        Tiers {
            local,
            remote,
            remote_output,
        }
    }

    fn dirs(&self) -> (String, String) {
        (
            self.local.path().display().to_string(),
            self.remote.path().display().to_string(),
        )
    }
}

fn tables_dir() -> PathBuf {
    common::embedded_tables_dir()
}

#[test]
fn an_http_mirror_answers_as_the_local_directory_does() {
    let mirror = Mirror::start(&tables_dir());
    let url = mirror.url();
    let tables = tables_dir().display().to_string();
    let tiers = Tiers::build(&tables, &url);
    let built = &tiers.remote_output;
    let (local_fast_dir, remote_fast_dir) = tiers.dirs();
    let tables_there = std::fs::read_dir(tables_dir())
        .expect("the tables")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x != "md"))
        })
        .count();
    assert!(
        built.contains(&format!("{tables_there} prefixes written")),
        "not every table of the mirror was built:\n{built}"
    );

    let local = serve(&["--tables", &tables, "--fast", &local_fast_dir], &[]);
    let remote = serve(&["--tables", &url, "--fast", &remote_fast_dir], &[]);
    let paths = slice(&common::fixture("explore-34.txt"), 0, 7);
    assert!(paths.len() > 200, "{} positions", paths.len());
    let before = mirror.ranged_gets.load(Ordering::Relaxed);
    let local_answers = replay(local.addr, &paths);
    let remote_answers = replay(remote.addr, &paths);
    let (slow, gets) = assert_same(&paths, &local_answers, &remote_answers);
    let seen = mirror.ranged_gets.load(Ordering::Relaxed) - before;
    let remote_slow: u64 = remote_answers.iter().map(|a| a.slow).sum();
    println!(
        "{} requests: {slow} slow reads on the local directory, {remote_slow} slow reads and {gets} GETs counted by the server on the mirror, {seen} ranged GETs seen by the mirror",
        paths.len()
    );

    assert!(gets > 0, "no GET was counted:\n{}", remote.log());
    assert_gets_within(gets, slow);
    assert_eq!(
        seen, gets,
        "the mirror saw other GETs than the server counted"
    );
}

#[test]
fn atomic_tables_on_a_mirror_answer_as_the_local_directory_does() {
    let dir = common::atomic_tables_dir();
    let mirror = Mirror::start(&dir);
    let url = mirror.url();
    let tables = dir.display().to_string();
    let tiers = Tiers::build(&tables, &url);
    let (local_fast_dir, remote_fast_dir) = tiers.dirs();
    let local = serve(&["--atomic", &tables, "--fast", &local_fast_dir], &[]);
    let remote = serve(&["--atomic", &url, "--fast", &remote_fast_dir], &[]);
    let text = std::fs::read_to_string(common::fixture("atomic-34.csv")).expect("positions");
    let paths: Vec<String> = text
        .lines()
        .skip(1)
        .step_by(3)
        .filter_map(|line| line.split(',').next())
        .map(|fen| format!("/atomic?fen={}", fen.replace(' ', "_")))
        .collect();
    assert!(paths.len() > 90, "{} positions", paths.len());
    let (_, gets) = assert_same(
        &paths,
        &replay(local.addr, &paths),
        &replay(remote.addr, &paths),
    );
    assert!(gets > 0, "no GET was counted:\n{}", remote.log());
}

#[test]
fn tables_status_judges_a_mirror_by_its_listing() {
    let mirror = Mirror::start(&tables_dir());
    let url = mirror.url();
    let local = zugzwang(
        &["tables", "status", &tables_dir().display().to_string()],
        &[],
    );
    let remote = zugzwang(&["tables", "status", &url], &[]);
    let counts = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|line| line.starts_with(|c: char| c.is_ascii_digit()))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(counts(&local).len(), 5, "a row per piece count: {local}");
    assert_eq!(counts(&remote), counts(&local), "{remote}");
}

#[test]
fn a_mirror_that_is_gone_at_start_is_named() {
    let gone = free_port();
    let url = format!("http://{gone}/syzygy/");
    let output = process::binary()
        .args(["serve", "--bind", "127.0.0.1:0", "--tables", &url])
        .env("NO_COLOR", "1")
        .output()
        .expect("run zugzwang");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("cannot list the tables at http://{gone}/syzygy")),
        "{stderr}"
    );
}
