//! `serve --upstream`: where the local tables end, the answer of an
//! upstream tablebase server, asked politely and kept.
//!
//! A (a real `zugzwang serve` with the embedded 3- and 4-piece tables)
//! asks a fake upstream, an axum server in the test on loopback that
//! answers recorded lichess-shaped JSON (`fixtures/upstream/`, written by
//! a Zugzwang over the shared 5-piece tables, whose JSON is lila's byte for
//! byte; `krvkrn-capture.json` by lila-tablebase itself) and misbehaves on
//! demand: 429, 500, no answer, poisoned moves, forgotten moves,
//! redirects, oversized bodies. The last test puts two real processes on
//! loopback, A asking B (the shared 3-4-5 tables), and replays a 50-client
//! workload; it needs `../shared` (SKIPPED without, unless required).

mod common;
mod process;
mod upstream_support;

use std::{
    collections::{HashMap, HashSet},
    net::SocketAddr,
    path::Path,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{
    Router,
    body::Body,
    extract::{Query, State},
    http::{StatusCode, Uri, header},
    response::{IntoResponse, Response},
};
use process::Server;
use server::upstream::gaps::{self, LocalCoverage};
use upstream_support::{api, client, fetch, try_fetch};

/// The Lucena position (KRPvKR): the embedded tables have no 5-piece table.
const LUCENA: &str = "1K1k4/1P6/8/8/8/8/r7/2R5 w - - 0 1";
/// KBBvKB, Black to move: 5 pieces as well.
const KBB_KB: &str = "8/bB6/8/6B1/2K5/8/8/6k1 b - - 0 1";
/// KRvKRN, where Kxd2 leaves KRvKN: the embedded tables know that move
/// but not the position.
const CAPTURE: &str = "4k3/8/8/8/8/8/3r4/R3K1n1 w - - 0 1";

fn recorded(name: &str) -> Vec<u8> {
    let path = common::fixture(&format!("upstream/{name}"));
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The board, side, castling and en passant of a FEN (underscores or
/// spaces): how the fake upstream finds its recorded answer.
fn fen4(fen: &str) -> String {
    fen.replace('_', " ")
        .split_whitespace()
        .take(4)
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the fake upstream does with the next requests.
#[derive(Debug, Clone)]
enum Mode {
    /// The recorded answer; 404 for a position it has none for.
    Answer,
    /// 429 with `Retry-After: secs`.
    TooMany(u64),
    Fail500,
    /// Never answers.
    Hang,
    /// The recorded answer with its first move left out.
    Poison,
    /// Not JSON.
    Garbage,
    /// The recorded answer with every move unknown, as from a server
    /// without the tables the moves lead to.
    Forgetful,
    /// 302 to this base URL (the path and query kept); paths under `/v2`
    /// are answered as `Answer`.
    Redirect(String),
    /// A recorded answer padded past the size an answer may have, with
    /// `Content-Length` or chunked.
    Oversized {
        chunked: bool,
    },
}

struct FakeState {
    mode: Mutex<Mode>,
    /// Before answering.
    delay: Mutex<Duration>,
    /// When each request came, and for what.
    asked: Mutex<Vec<(Instant, String)>>,
    /// Recorded answers by route and position.
    answers: HashMap<(String, String), Vec<u8>>,
}

/// An upstream tablebase server on loopback, on a runtime of its own; the
/// test's HTTP client runs on the same runtime.
struct Fake {
    addr: SocketAddr,
    state: Arc<FakeState>,
    runtime: tokio::runtime::Runtime,
}

impl Fake {
    fn start() -> Fake {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let mut answers = HashMap::new();
        for (route, fen, file) in [
            ("/standard", LUCENA, "lucena.json"),
            ("/standard", KBB_KB, "kbb-kb.json"),
            ("/standard", CAPTURE, "krvkrn-capture.json"),
            ("/standard/mainline", LUCENA, "lucena-mainline.json"),
        ] {
            answers.insert((route.to_string(), fen4(fen)), recorded(file));
        }
        let state = Arc::new(FakeState {
            mode: Mutex::new(Mode::Answer),
            delay: Mutex::new(Duration::ZERO),
            asked: Mutex::default(),
            answers,
        });
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let app = Router::new()
            .fallback(fake_answer)
            .with_state(Arc::clone(&state));
        runtime.spawn(async move { axum::serve(listener, app).await });
        Fake {
            addr,
            state,
            runtime,
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn host(&self) -> String {
        self.addr.to_string()
    }

    fn set(&self, mode: Mode) {
        *self.state.mode.lock().unwrap() = mode;
    }

    fn delay(&self, delay: Duration) {
        *self.state.delay.lock().unwrap() = delay;
    }

    /// Requests it has had.
    fn asked(&self) -> usize {
        self.state.asked.lock().unwrap().len()
    }

    fn asked_at(&self) -> Vec<Instant> {
        self.state
            .asked
            .lock()
            .unwrap()
            .iter()
            .map(|(at, _)| *at)
            .collect()
    }

    fn block_on<T>(&self, work: impl Future<Output = T>) -> T {
        self.runtime.block_on(work)
    }
}

async fn fake_answer(
    State(state): State<Arc<FakeState>>,
    uri: Uri,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    state
        .asked
        .lock()
        .unwrap()
        .push((Instant::now(), uri.to_string()));
    let delay = *state.delay.lock().unwrap();
    tokio::time::sleep(delay).await;
    let mode = state.mode.lock().unwrap().clone();
    let fen = fen4(query.get("fen").map_or("", String::as_str));
    let path = uri.path().to_string();
    let recorded = |path: &str| state.answers.get(&(path.to_string(), fen.clone())).cloned();
    let json = |body: Vec<u8>| ([(header::CONTENT_TYPE, "application/json")], body).into_response();
    match mode {
        Mode::Answer => match recorded(&path) {
            Some(body) => json(body),
            None => (StatusCode::NOT_FOUND, "{\"error\":\"not found\"}").into_response(),
        },
        Mode::TooMany(secs) => (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, secs.to_string())],
            "too many requests",
        )
            .into_response(),
        Mode::Fail500 => (StatusCode::INTERNAL_SERVER_ERROR, "broken").into_response(),
        Mode::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            "late".into_response()
        }
        Mode::Poison => {
            let body = recorded(&path).expect("a recorded answer");
            let mut value: serde_json::Value = serde_json::from_slice(&body).unwrap();
            value["moves"].as_array_mut().unwrap().remove(0);
            json(serde_json::to_vec(&value).unwrap())
        }
        Mode::Garbage => json(b"<html>upstream maintenance</html>".to_vec()),
        Mode::Forgetful => {
            let body = recorded(&path).expect("a recorded answer");
            let mut value: serde_json::Value = serde_json::from_slice(&body).unwrap();
            for m in value["moves"].as_array_mut().unwrap() {
                m["category"] = "unknown".into();
                for field in ["dtz", "precise_dtz", "dtm"] {
                    m[field] = serde_json::Value::Null;
                }
            }
            json(serde_json::to_vec(&value).unwrap())
        }
        Mode::Redirect(_) if path.starts_with("/v2/") => {
            json(recorded(&path["/v2".len()..]).expect("a recorded answer"))
        }
        Mode::Redirect(to) => (
            StatusCode::FOUND,
            [(header::LOCATION, format!("{to}{uri}"))],
            "",
        )
            .into_response(),
        Mode::Oversized { chunked } => {
            let mut body = recorded(&path).expect("a recorded answer");
            body.extend(std::iter::repeat_n(b' ', 300 << 10));
            if chunked {
                let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
                    body.chunks(16 << 10).map(|c| Ok(c.to_vec())).collect();
                let stream = futures::stream::iter(chunks);
                (
                    [(header::CONTENT_TYPE, "application/json")],
                    Body::from_stream(stream),
                )
                    .into_response()
            } else {
                json(body)
            }
        }
    }
}

/// A budget no test below runs out of: they test what comes back, not the bucket.
const GENEROUS_BUDGET: &[&str] = &["--upstream-rate", "50", "--upstream-burst", "50"];

/// A `zugzwang serve` asking `upstream`, its store in `state`.
fn serve_asking(upstream: &str, state: &Path, extra: &[&str]) -> Server {
    let state = state.to_string_lossy();
    let mut args = vec!["--upstream", upstream, "--state-dir", &state];
    args.extend_from_slice(extra);
    process::serve(&args)
}

/// The value of a `/metrics` sample (the first line starting with `prefix`).
fn metric(text: &str, prefix: &str) -> Option<f64> {
    text.lines()
        .find(|line| line.starts_with(prefix))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// The sum of the samples of a family whose line starts with `prefix`.
fn metric_sum(text: &str, prefix: &str) -> f64 {
    text.lines()
        .filter(|line| line.starts_with(prefix))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

async fn metrics_of(client: &reqwest::Client, addr: SocketAddr) -> String {
    String::from_utf8(fetch(client, addr, "/metrics", &[]).await.body).expect("text")
}

#[test]
fn upstream_answers_come_as_they_were_sent_and_are_kept_across_restarts() {
    let fake = Fake::start();
    let state = tempfile::tempdir().expect("temp dir");
    let http = client();
    let lucena = api("/standard", LUCENA);
    {
        let a = serve_asking(&fake.url(), state.path(), &[]);
        let first = fake.block_on(fetch(&http, a.addr, &lucena, &[]));
        assert_eq!(first.status, StatusCode::OK);
        assert!(first.is_upstream(), "{:?}", first.headers);
        assert_eq!(first.header("x-upstream-host"), Some(fake.host()));
        assert_eq!(first.body, recorded("lucena.json"), "byte for byte");
        assert_eq!(
            first.header("content-type").as_deref(),
            Some("application/json")
        );
        assert_eq!(fake.asked(), 1);
        // Asked again, with other move counters: from the store.
        let again = fake.block_on(fetch(
            &http,
            a.addr,
            &api("/standard", "1K1k4/1P6/8/8/8/8/r7/2R5 w - - 0 57"),
            &[],
        ));
        assert!(again.is_upstream());
        assert_eq!(again.body, first.body);
        assert_eq!(fake.asked(), 1);
        // As CBOR: the same answer.
        let cbor = fake.block_on(fetch(
            &http,
            a.addr,
            &lucena,
            &[("accept", "application/cbor")],
        ));
        assert_eq!(
            cbor.header("content-type").as_deref(),
            Some("application/cbor")
        );
        let decoded: serde_json::Value = ciborium::from_reader(cbor.body.as_slice()).expect("CBOR");
        assert_eq!(decoded, first.json());
        // Revalidated by its ETag.
        let etag = first.header("etag").expect("an ETag");
        let revalidated = fake.block_on(fetch(&http, a.addr, &lucena, &[("if-none-match", &etag)]));
        assert_eq!(revalidated.status, StatusCode::NOT_MODIFIED);
        // The mainline too.
        let line = fake.block_on(fetch(
            &http,
            a.addr,
            &api("/standard/mainline", LUCENA),
            &[],
        ));
        assert_eq!(line.status, StatusCode::OK);
        assert!(line.is_upstream());
        assert_eq!(line.body, recorded("lucena-mainline.json"));
        assert_eq!(fake.asked(), 2);
        let metrics = fake.block_on(metrics_of(&http, a.addr));
        assert_eq!(
            metric(&metrics, "zugzwang_upstream_store_hits_total "),
            Some(3.0),
            "{metrics}"
        );
        assert_eq!(
            metric(
                &metrics,
                &format!(
                    "zugzwang_upstream_requests_total{{upstream=\"{}\",outcome=\"answered\"}}",
                    fake.host()
                )
            ),
            Some(2.0)
        );
        assert_eq!(
            metric(&metrics, "zugzwang_upstream_store_answers "),
            Some(2.0)
        );
        // The page shows the answer, and whose it is.
        let page = fake.block_on(fetch(
            &http,
            a.addr,
            &format!("/?fen={}", LUCENA.replace(' ', "_")),
            &[],
        ));
        let html = String::from_utf8_lossy(&page.body);
        assert!(
            html.contains(&format!("answer from {}", fake.host())),
            "the verdict names the upstream server"
        );
        assert_eq!(fake.asked(), 2, "the page's answer came from the store");
    }
    // A restart serves what was learnt without asking.
    let a = serve_asking(&fake.url(), state.path(), &[]);
    let after = fake.block_on(fetch(&http, a.addr, &lucena, &[]));
    assert!(after.is_upstream());
    assert_eq!(after.body, recorded("lucena.json"));
    assert_eq!(fake.asked(), 2);
    drop(a);
    // `tables status` shows the store.
    let empty = tempfile::tempdir().expect("temp dir");
    let status = process::binary()
        .args(["tables", "status", "--state-dir"])
        .arg(state.path())
        .arg(empty.path())
        .output()
        .expect("tables status");
    let out = String::from_utf8_lossy(&status.stdout);
    assert!(
        out.contains("upstream answers (serve --upstream): 2 kept in"),
        "{out}\n{}",
        String::from_utf8_lossy(&status.stderr)
    );
}

#[test]
fn what_the_local_tables_know_is_never_asked() {
    let fake = Fake::start();
    let state = tempfile::tempdir().expect("temp dir");
    let http = client();
    let a = serve_asking(&fake.url(), state.path(), &[]);
    let walk = std::fs::read_to_string(common::fixture("explore-34.txt")).expect("workload");
    let fens: Vec<&str> = walk.lines().take(300).collect();
    for fen in &fens {
        let got = fake.block_on(fetch(&http, a.addr, &api("/standard", fen), &[]));
        assert_eq!(got.status, StatusCode::OK, "{fen}");
        assert!(!got.is_upstream(), "{fen}");
        assert!(got.header("x-upstream-unavailable").is_none(), "{fen}");
        assert!(
            got.header("etag").is_some(),
            "a whole local answer is for keeping: {fen}"
        );
    }
    for fen in fens.iter().step_by(30) {
        for route in ["/standard/mainline", "/standard/fastest-mate"] {
            let got = fake.block_on(fetch(&http, a.addr, &api(route, fen), &[]));
            assert!(!got.is_upstream(), "{route} {fen}");
        }
    }
    assert_eq!(fake.asked(), 0, "a 3- or 4-piece position went upstream");
    let metrics = fake.block_on(metrics_of(&http, a.addr));
    assert_eq!(
        metric_sum(&metrics, "zugzwang_upstream_requests_sent_total"),
        0.0
    );
}

/// Every 3- and 4-piece position of the recorded positions, and each of
/// their moves, is whole in the embedded tables (DTM included): none is
/// a gap an upstream server would be asked about.
#[test]
fn the_embedded_tables_leave_no_gap_in_three_and_four_pieces() {
    let engine = common::engine_with(Vec::new());
    let coverage = LocalCoverage {
        dtm: engine.dtm_materials(),
    };
    let csv = std::fs::read_to_string(common::fixture("positions-34.csv")).expect("positions");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let mut checked = 0;
    for line in csv.lines().skip(1) {
        let fen = line.split(',').next().expect("a FEN");
        let pos = app::variant::parse_variant_fen(app::variant::Variant::Standard, fen)
            .expect("a legal FEN");
        let answer = runtime
            .block_on(engine.probe(pos.clone()))
            .expect("an answer");
        assert!(
            !gaps::incomplete(&answer, &pos, &coverage),
            "{fen} would be asked upstream"
        );
        checked += 1;
    }
    assert!(checked >= 2000, "{checked}");
    // A 5-piece position is a gap, and so is a position whose DTM table is
    // not installed.
    for fen in [LUCENA, KBB_KB] {
        let pos = app::variant::parse_variant_fen(app::variant::Variant::Standard, fen).unwrap();
        let answer = runtime.block_on(engine.probe(pos.clone())).unwrap();
        assert!(gaps::incomplete(&answer, &pos, &coverage), "{fen}");
    }
    let krk = "4k3/8/8/8/8/8/8/4K2R w - - 0 1";
    let pos = app::variant::parse_variant_fen(app::variant::Variant::Standard, krk).unwrap();
    let answer = runtime.block_on(engine.probe(pos.clone())).unwrap();
    assert!(!gaps::incomplete(&answer, &pos, &coverage));
    // Without DTM tables (`--dtm` naming an empty directory), a won
    // position lacks its mate: a gap.
    let no_dtm = tempfile::tempdir().expect("temp dir");
    let syzygy_only = server::engine::Engine::open(&server::engine::EngineConfig {
        dtm: vec![no_dtm.path().to_path_buf()],
        ..server::engine::EngineConfig::default()
    })
    .expect("tables load");
    let bare = LocalCoverage {
        dtm: syzygy_only.dtm_materials(),
    };
    assert!(bare.dtm.is_empty());
    let answer = runtime.block_on(syzygy_only.probe(pos.clone())).unwrap();
    assert_eq!(answer.pos.dtm, None);
    assert!(gaps::incomplete(&answer, &pos, &bare));
    // Castling rights are in no table anywhere: never asked.
    let castling = "r3k3/8/8/8/8/8/8/R3K2R w KQq - 0 1";
    let pos = app::variant::parse_variant_fen(app::variant::Variant::Standard, castling).unwrap();
    let answer = runtime.block_on(engine.probe(pos.clone())).unwrap();
    assert!(!gaps::incomplete(&answer, &pos, &coverage));
}

#[test]
fn many_asking_at_once_share_one_upstream_request() {
    let fake = Fake::start();
    fake.delay(Duration::from_millis(800));
    let state = tempfile::tempdir().expect("temp dir");
    let http = client();
    let a = serve_asking(&fake.url(), state.path(), &["--upstream-timeout", "10"]);
    let path = api("/standard", KBB_KB);
    let answers = fake.block_on(async {
        let asks = (0..20).map(|_| fetch(&http, a.addr, &path, &[]));
        futures::future::join_all(asks).await
    });
    for got in &answers {
        assert_eq!(got.status, StatusCode::OK);
        assert!(got.is_upstream(), "{:?}", got.headers);
        assert_eq!(got.body, recorded("kbb-kb.json"));
    }
    assert_eq!(fake.asked(), 1, "20 at once, one upstream request");
    let metrics = fake.block_on(metrics_of(&http, a.addr));
    let shared = metric(&metrics, "zugzwang_upstream_coalesced_total ").unwrap_or(0.0)
        + metric(&metrics, "zugzwang_upstream_store_hits_total ").unwrap_or(0.0);
    assert_eq!(shared, 19.0, "{metrics}");
}

#[test]
fn a_429_is_honoured_and_the_local_answer_given_at_once() {
    let fake = Fake::start();
    fake.set(Mode::TooMany(3));
    let state = tempfile::tempdir().expect("temp dir");
    let http = client();
    let a = serve_asking(
        &fake.url(),
        state.path(),
        &[
            "--upstream-rate",
            "50",
            "--upstream-burst",
            "50",
            "--upstream-timeout",
            "10",
        ],
    );
    let first = fake.block_on(fetch(&http, a.addr, &api("/standard", LUCENA), &[]));
    assert_eq!(first.status, StatusCode::OK);
    let why = first.local_because();
    assert_eq!(first.json()["category"], "unknown");
    assert!(why.contains("429"), "{why}");
    assert_eq!(first.header("cache-control").as_deref(), Some("no-store"));
    assert!(first.header("etag").is_none());
    assert!(first.took < Duration::from_secs(5), "{:?}", first.took);
    assert_eq!(fake.asked(), 1);
    // Another position right after: not asked, answered at once.
    fake.set(Mode::Answer);
    let paused = fake.block_on(fetch(&http, a.addr, &api("/standard", KBB_KB), &[]));
    let why = paused.local_because();
    assert!(why.contains("asked to wait"), "{why}");
    assert!(paused.took < Duration::from_secs(5), "{:?}", paused.took);
    assert_eq!(fake.asked(), 1);
    // Once Retry-After has passed, it is asked again.
    let started = Instant::now();
    let answered = loop {
        let got = fake.block_on(fetch(&http, a.addr, &api("/standard", KBB_KB), &[]));
        if got.is_upstream() {
            break got;
        }
        assert!(started.elapsed() < process::PATIENCE, "never asked again");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(answered.body, recorded("kbb-kb.json"));
    let at = fake.asked_at();
    assert_eq!(at.len(), 2, "one request after the pause");
    assert!(
        at[1] - at[0] >= Duration::from_secs(3),
        "asked again {:?} after a Retry-After of 3 s",
        at[1] - at[0]
    );
    let metrics = fake.block_on(metrics_of(&http, a.addr));
    assert_eq!(
        metric(
            &metrics,
            &format!(
                "zugzwang_upstream_requests_total{{upstream=\"{}\",outcome=\"rate_limited\"}}",
                fake.host()
            )
        ),
        Some(1.0)
    );
    assert!(
        metric(
            &metrics,
            &format!(
                "zugzwang_upstream_skipped_total{{upstream=\"{}\",reason=\"paused\"}}",
                fake.host()
            )
        )
        .unwrap_or(0.0)
            >= 1.0
    );
}

#[test]
fn a_failing_upstream_opens_the_breaker() {
    let fake = Fake::start();
    fake.set(Mode::Fail500);
    let state = tempfile::tempdir().expect("temp dir");
    let http = client();
    let a = serve_asking(&fake.url(), state.path(), GENEROUS_BUDGET);
    for _ in 0..5 {
        let got = fake.block_on(fetch(&http, a.addr, &api("/standard", LUCENA), &[]));
        assert_eq!(got.status, StatusCode::OK);
        let why = got.local_because();
        assert!(why.contains("500"), "{why}");
    }
    assert_eq!(fake.asked(), 5);
    let open = fake.block_on(fetch(&http, a.addr, &api("/standard", LUCENA), &[]));
    let why = open.local_because();
    assert!(why.contains("failed repeatedly"), "{why}");
    assert_eq!(fake.asked(), 5, "not asked while the breaker is open");
    let metrics = fake.block_on(metrics_of(&http, a.addr));
    assert_eq!(
        metric(
            &metrics,
            &format!(
                "zugzwang_upstream_breaker_state{{upstream=\"{}\"}}",
                fake.host()
            )
        ),
        Some(1.0),
        "{metrics}"
    );
}

#[test]
fn an_upstream_that_does_not_answer_leaves_the_local_answer_within_the_limit() {
    let fake = Fake::start();
    fake.set(Mode::Hang);
    let state = tempfile::tempdir().expect("temp dir");
    let http = client();
    let a = serve_asking(&fake.url(), state.path(), &["--upstream-timeout", "1"]);
    let got = fake.block_on(fetch(&http, a.addr, &api("/standard", LUCENA), &[]));
    assert_eq!(got.status, StatusCode::OK);
    let why = got.local_because();
    assert!(why.contains("no answer within 1.0 s"), "{why}");
    assert!(got.took < Duration::from_secs(4), "{:?}", got.took);
    // A server that is not there at all.
    let dead = tempfile::tempdir().expect("temp dir");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let a = serve_asking(&format!("http://127.0.0.1:{port}"), dead.path(), &[]);
    let got = fake.block_on(fetch(&http, a.addr, &api("/standard", LUCENA), &[]));
    assert_eq!(got.status, StatusCode::OK);
    let why = got.local_because();
    assert!(why.contains("cannot connect"), "{why}");
    assert!(got.took < Duration::from_secs(4), "{:?}", got.took);
}

#[test]
fn a_poisoned_or_malformed_answer_is_refused_and_not_kept() {
    let fake = Fake::start();
    let state = tempfile::tempdir().expect("temp dir");
    let http = client();
    let a = serve_asking(&fake.url(), state.path(), GENEROUS_BUDGET);
    for (mode, words) in [(Mode::Poison, "missing"), (Mode::Garbage, "not JSON")] {
        fake.set(mode);
        let got = fake.block_on(fetch(&http, a.addr, &api("/standard", LUCENA), &[]));
        assert_eq!(got.status, StatusCode::OK);
        let why = got.local_because();
        assert_eq!(got.json()["category"], "unknown");
        assert!(why.contains("refused") && why.contains(words), "{why}");
    }
    assert_eq!(fake.asked(), 2);
    // Nothing was kept: the next ask goes out again and gets the good answer.
    fake.set(Mode::Answer);
    let got = fake.block_on(fetch(&http, a.addr, &api("/standard", LUCENA), &[]));
    assert!(got.is_upstream());
    assert_eq!(got.body, recorded("lucena.json"));
    assert_eq!(fake.asked(), 3);
    let metrics = fake.block_on(metrics_of(&http, a.addr));
    assert_eq!(
        metric(
            &metrics,
            &format!(
                "zugzwang_upstream_requests_total{{upstream=\"{}\",outcome=\"refused\"}}",
                fake.host()
            )
        ),
        Some(2.0)
    );
    assert_eq!(
        metric(&metrics, "zugzwang_upstream_store_answers "),
        Some(1.0)
    );
}

#[test]
fn redirects_stay_on_the_upstream_host_and_oversized_answers_are_refused() {
    let fake = Fake::start();
    let elsewhere = Fake::start();
    let state = tempfile::tempdir().expect("temp dir");
    let http = client();
    let a = serve_asking(&fake.url(), state.path(), GENEROUS_BUDGET);
    // To another host (`localhost` is not the `127.0.0.1` given): refused.
    fake.set(Mode::Redirect(format!(
        "http://localhost:{}",
        elsewhere.addr.port()
    )));
    let got = fake.block_on(fetch(&http, a.addr, &api("/standard", LUCENA), &[]));
    let why = got.local_because();
    assert!(why.contains("another host"), "{why}");
    assert_eq!(elsewhere.asked(), 0);
    // Oversized, with Content-Length and chunked.
    for chunked in [false, true] {
        fake.set(Mode::Oversized { chunked });
        let got = fake.block_on(fetch(&http, a.addr, &api("/standard", LUCENA), &[]));
        let why = got.local_because();
        assert!(why.contains("bytes or more"), "{why}");
    }
    // On its own host, a redirect is followed.
    fake.set(Mode::Redirect(format!("{}/v2", fake.url())));
    let got = fake.block_on(fetch(&http, a.addr, &api("/standard", LUCENA), &[]));
    assert!(got.is_upstream(), "{:?}", got.headers);
    assert_eq!(got.body, recorded("lucena.json"));
}

#[test]
fn only_http_and_https_upstreams_are_taken() {
    for bad in [
        "ftp://tablebase.example",
        "tablebase.lichess.ovh",
        "file:///tmp/x",
    ] {
        let out = process::binary()
            .args(["serve", "--bind", "127.0.0.1:0", "--upstream", bad])
            .output()
            .expect("zugzwang");
        assert!(!out.status.success(), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--upstream"), "{bad}: {err}");
    }
}

/// Checks with two real processes: A (the embedded tables) asks B (the
/// shared 3-4-5 tables).
#[test]
fn a_server_with_more_tables_answers_where_the_embedded_ones_end() {
    let Some((tables, walk)) = common::shared_tables_and("workloads/explore-345.txt") else {
        return;
    };
    let http = client();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let b_state = tempfile::tempdir().expect("temp dir");
    let tables = tables.to_string_lossy().to_string();
    let b_state_arg = b_state.path().to_string_lossy().to_string();
    let mut b = process::serve(&[
        "--tables",
        &tables,
        "--allow-unchecked",
        "--state-dir",
        &b_state_arg,
    ]);
    let b_url = format!("http://{}", b.addr);
    let asked_of_b = |runtime: &tokio::runtime::Runtime, b: &Server| {
        let text = runtime.block_on(metrics_of(&http, b.addr));
        metric_sum(&text, "zugzwang_http_requests_total{route=\"/standard\"")
    };
    let a_state = tempfile::tempdir().expect("temp dir");
    let a = serve_asking(&b_url, a_state.path(), &[]);
    let walk = std::fs::read_to_string(walk).expect("workload");
    let five: Vec<&str> = {
        let mut seen = HashSet::new();
        walk.lines()
            .filter(|fen| {
                fen.split(' ')
                    .next()
                    .unwrap()
                    .chars()
                    .filter(char::is_ascii_alphabetic)
                    .count()
                    == 5
            })
            .filter(|fen| seen.insert(fen4(fen)))
            .collect()
    };
    assert!(five.len() > 100, "{}", five.len());

    // 1. Byte for byte B's answer (within the burst of 3).
    for fen in &five[..3] {
        let from_a = runtime.block_on(fetch(&http, a.addr, &api("/standard", fen), &[]));
        assert!(from_a.is_upstream(), "{fen}: {:?}", from_a.headers);
        assert_eq!(from_a.header("x-upstream-host"), Some(b.addr.to_string()));
        let from_b = runtime.block_on(fetch(&http, b.addr, &api("/standard", fen), &[]));
        assert_eq!(from_a.body, from_b.body, "{fen}");
    }

    // 2. Fifty clients replaying the walk's 5-piece positions (the ones A
    // cannot answer, each a reason to ask B): B is asked no more than A's
    // bucket allows, and the rest are answered from A's tables at once.
    let before = asked_of_b(&runtime, &b);
    let started = Instant::now();
    let replay = Duration::from_secs(8);
    let lines: Vec<String> = walk
        .lines()
        .filter(|fen| five.contains(fen))
        .map(str::to_string)
        .collect();
    // A connection a request: fifty clients on a busy machine may read an
    // answer later than the server's idle timeout allows a kept one.
    let replayer = reqwest::Client::builder()
        .no_proxy()
        .timeout(process::PATIENCE)
        .pool_max_idle_per_host(0)
        .build()
        .expect("client");
    let results = runtime.block_on(async {
        let clients = (0..50).map(|client| {
            let http = replayer.clone();
            let lines = lines.clone();
            let addr = a.addr;
            async move {
                let mut got = Vec::new();
                let mut i = client * 397;
                while started.elapsed() < replay {
                    let fen = &lines[i % lines.len()];
                    match try_fetch(&http, addr, &api("/standard", fen), &[]).await {
                        Ok(answer) => got.push(Ok((
                            fen.clone(),
                            answer.status,
                            answer.is_upstream(),
                            answer.took,
                        ))),
                        Err(err) => got.push(Err(format!("{fen}: {err:?}"))),
                    }
                    i += 1;
                }
                got
            }
        });
        futures::future::join_all(clients).await
    });
    let elapsed = started.elapsed().as_secs_f64();
    let sent = asked_of_b(&runtime, &b) - before;
    let (answers, failed): (Vec<_>, Vec<_>) =
        results.into_iter().flatten().partition(Result::is_ok);
    assert!(
        failed.is_empty(),
        "{} requests failed, the first: {:?}\nA's log:\n{}\nA's connections: {}",
        failed.len(),
        failed[0],
        a.log(),
        runtime
            .block_on(metrics_of(&http, a.addr))
            .lines()
            .filter(|l| l.starts_with("zugzwang_http_connection") && !l.starts_with("#"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let answers: Vec<_> = answers.into_iter().map(Result::unwrap).collect();
    let slowest = answers.iter().map(|a| a.3).max().unwrap();
    eprintln!(
        "replay: {} answers in {elapsed:.1} s from 50 clients, {} from upstream, B asked {sent} times, slowest {slowest:?}",
        answers.len(),
        answers.iter().filter(|a| a.2).count()
    );
    assert!(answers.len() >= 50, "{} answers", answers.len());
    // The bucket: 3 at once, then 1 a second.
    assert!(
        sent <= 3.0 + elapsed + 1.0,
        "B was asked {sent} times in {elapsed:.1} s"
    );
    for (fen, status, _, _) in &answers {
        assert_eq!(*status, StatusCode::OK, "{fen}");
    }
    // No answer waits for a budget; how long the slowest took is the
    // machine's (fifty clients on a debug build), said above, not the
    // upstream's: that each waits at most its limit is checked alone, below
    // and in the fake upstream's tests.
    assert!(slowest < process::PATIENCE, "slowest answer {slowest:?}");
    let metrics = runtime.block_on(metrics_of(&http, a.addr));
    let skipped = metric(
        &metrics,
        &format!(
            "zugzwang_upstream_skipped_total{{upstream=\"{}\",reason=\"budget\"}}",
            b.addr
        ),
    )
    .unwrap_or(0.0);
    assert!(skipped > 0.0, "the budget was never spent:\n{metrics}");
    let learnt: Vec<String> = answers
        .iter()
        .filter(|a| a.2)
        .map(|a| a.0.clone())
        .chain(five[..3].iter().map(|f| f.to_string()))
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();

    // 3. A restarted serves what it learnt without asking B.
    drop(a);
    let a = serve_asking(&b_url, a_state.path(), &[]);
    let before = asked_of_b(&runtime, &b);
    for fen in &learnt {
        let got = runtime.block_on(fetch(&http, a.addr, &api("/standard", fen), &[]));
        assert!(got.is_upstream(), "{fen} was learnt but asked again");
    }
    assert_eq!(
        asked_of_b(&runtime, &b),
        before,
        "B asked after the restart"
    );

    // 4. B gone: A answers from its own tables at once, saying why.
    b.signal(rustix::process::Signal::KILL);
    b.wait_exit(process::PATIENCE);
    let unknown = five
        .iter()
        .find(|fen| !learnt.iter().any(|l| fen4(l) == fen4(fen)))
        .expect("a position not learnt");
    let got = runtime.block_on(fetch(&http, a.addr, &api("/standard", unknown), &[]));
    assert_eq!(got.status, StatusCode::OK);
    let why = got.local_because();
    assert!(why.contains("cannot connect"), "{why}");
    assert!(got.took < Duration::from_secs(3), "{:?}", got.took);
}

#[test]
fn an_upstream_answer_that_lacks_what_the_local_tables_know_is_not_taken() {
    let fake = Fake::start();
    let state = tempfile::tempdir().expect("temp dir");
    let http = client();
    let a = serve_asking(&fake.url(), state.path(), GENEROUS_BUDGET);
    // It knows the root but not Kxd2, which the embedded tables know.
    fake.set(Mode::Forgetful);
    let got = fake.block_on(fetch(&http, a.addr, &api("/standard", CAPTURE), &[]));
    let why = got.local_because();
    assert!(why.contains("lacks the result after e1d2"), "{why}");
    let kxd2 = got.json()["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .find(|m| m["uci"] == "e1d2")
        .cloned()
        .expect("Kxd2");
    assert_eq!(kxd2["category"], "draw", "the local tables' result");
    // Not kept: a server that knows it all is asked next time, and served.
    fake.set(Mode::Answer);
    let got = fake.block_on(fetch(&http, a.addr, &api("/standard", CAPTURE), &[]));
    assert!(got.is_upstream(), "{:?}", got.headers);
    assert_eq!(got.body, recorded("krvkrn-capture.json"));
    assert_eq!(fake.asked(), 2);
}
