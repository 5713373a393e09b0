//! The lines of positions an upstream server answered (`serve --upstream`):
//! the page's "Show line" and "Fastest mate" there ask `/standard/mainline`
//! and `/standard/fastest-mate`, which go upstream where the local tables
//! cannot follow, and stepping through a line asks each position's
//! answer, every request within the upstream's budget.
//!
//! The page itself, rendered where no upstream server can be asked now,
//! marks its local answer to be asked again, so the browser does not keep
//! it for the tab.
//!
//! A is a real `zugzwang serve` with the embedded 3- and 4-piece tables;
//! its upstream is either B, a second one with the shared 3-4-5 tables
//! (SKIPPED without `../shared`, unless required), or a fake on loopback
//! that has no `/standard/fastest-mate` at all, as lichess's server has not.

mod common;
mod process;
mod upstream_support;

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use axum::{
    Router,
    http::{StatusCode, Uri, header},
    response::IntoResponse,
};
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position, fen::Fen, uci::UciMove};
use upstream_support::{api, client, fetch};

/// The Lucena position (KRPvKR): the embedded tables have no 5-piece table.
const LUCENA: &str = "1K1k4/1P6/8/8/8/8/r7/2R5 w - - 0 1";
/// KBBvKB, Black to move: 5 pieces as well.
const KBB_KB: &str = "8/bB6/8/6B1/2K5/8/8/6k1 b - - 0 1";

/// The sum of the `/metrics` samples whose line starts with `prefix`.
async fn metric_sum(client: &reqwest::Client, addr: SocketAddr, prefix: &str) -> f64 {
    let text = String::from_utf8(fetch(client, addr, "/metrics", &[]).await.body).expect("text");
    text.lines()
        .filter(|line| line.starts_with(prefix))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Requests B had on `route`.
async fn asked_of(client: &reqwest::Client, b: SocketAddr, route: &str) -> f64 {
    metric_sum(
        client,
        b,
        &format!("zugzwang_http_requests_total{{route=\"{route}\""),
    )
    .await
}

/// The positions along a line of UCI moves from `fen`.
fn along(fen: &str, ucis: &[String]) -> Vec<String> {
    let mut pos: Chess = fen
        .parse::<Fen>()
        .expect("fen")
        .into_position(CastlingMode::Standard)
        .expect("legal");
    ucis.iter()
        .map(|uci| {
            let m = uci
                .parse::<UciMove>()
                .expect("uci")
                .to_move(&pos)
                .expect("legal");
            pos.play_unchecked(m);
            Fen::from_position(&pos, EnPassantMode::Legal).to_string()
        })
        .collect()
}

/// A asks B (the shared 3-4-5 tables) for the Lucena position's mainline
/// and then for each position of it, as the page does when the line is
/// stepped through: B is asked no more than A's bucket allows (counted at
/// B), the rest are answered from A's tables at once, saying why. The
/// fastest mate B has no DTM table for is not kept from the next position.
#[test]
fn lines_from_upstream_are_asked_within_its_budget() {
    let Some(tables) = common::shared_tables_dir() else {
        return;
    };
    let http = client();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let b_state = tempfile::tempdir().expect("temp dir");
    let tables = tables.to_string_lossy().to_string();
    let b_state_arg = b_state.path().to_string_lossy().to_string();
    let b = process::serve(&[
        "--tables",
        &tables,
        "--allow-unchecked",
        "--state-dir",
        &b_state_arg,
    ]);
    let a_state = tempfile::tempdir().expect("temp dir");
    let a_state_arg = a_state.path().to_string_lossy().to_string();
    let b_url = format!("http://{}", b.addr);
    // The default budget: one a second, three at once.
    let a = process::serve(&["--upstream", &b_url, "--state-dir", &a_state_arg]);

    // The mainline: one request to B, its answer byte for byte.
    let line = runtime.block_on(fetch(
        &http,
        a.addr,
        &api("/standard/mainline", LUCENA),
        &[],
    ));
    assert_eq!(line.status, StatusCode::OK, "{}", a.log());
    assert!(line.is_upstream(), "{:?}", line.headers);
    assert_eq!(line.header("x-upstream-host"), Some(b.addr.to_string()));
    let from_b = runtime.block_on(fetch(
        &http,
        b.addr,
        &api("/standard/mainline", LUCENA),
        &[],
    ));
    assert_eq!(line.body, from_b.body);
    let mainline: serde_json::Value = serde_json::from_slice(&line.body).expect("json");
    let ucis: Vec<String> = mainline["mainline"]
        .as_array()
        .expect("a line")
        .iter()
        .map(|step| step["uci"].as_str().expect("uci").to_string())
        .collect();
    assert!(ucis.len() >= 10, "{ucis:?}");
    assert_eq!(
        runtime.block_on(asked_of(&http, b.addr, "/standard/mainline")),
        2.0,
        "A's request and the test's own"
    );

    // Stepping through it: each position asked of A at once, as a hurried
    // reader clicks; positions of 5 pieces are B's to answer.
    let positions = along(LUCENA, &ucis[..10]);
    let before = runtime.block_on(asked_of(&http, b.addr, "/standard"));
    let started = Instant::now();
    let mut upstream = 0;
    let mut local = Vec::new();
    for fen in &positions {
        let got = runtime.block_on(fetch(&http, a.addr, &api("/standard", fen), &[]));
        assert_eq!(got.status, StatusCode::OK, "{fen}");
        if got.is_upstream() {
            upstream += 1;
        } else if let Some(why) = got.header("x-upstream-unavailable") {
            assert!(got.took < Duration::from_secs(1), "{fen}: {:?}", got.took);
            local.push(why);
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let asked = runtime.block_on(asked_of(&http, b.addr, "/standard")) - before;
    eprintln!(
        "{} positions in {elapsed:.2} s: {upstream} from B, {} local ({:?}); B asked {asked} times",
        positions.len(),
        local.len(),
        local.first()
    );
    assert_eq!(asked, upstream as f64, "every request to B was answered");
    assert!(
        asked <= 3.0 + elapsed + 1.0,
        "B was asked {asked} times in {elapsed:.1} s"
    );
    // The mainline took one of the three at once.
    assert!(upstream >= 2, "the rest of the burst was used");
    if elapsed < 5.0 {
        assert!(
            local.iter().any(|why| why.contains("budget")),
            "{} upstream answers in {elapsed:.1} s and none refused: {local:?}",
            upstream
        );
    }

    // The fastest mate: B has no 5-piece DTM table and says so in JSON;
    // A answers why at once, and asks B again for the next position.
    std::thread::sleep(Duration::from_secs(3));
    let before = runtime.block_on(asked_of(&http, b.addr, "/standard/fastest-mate"));
    for fen in [LUCENA, KBB_KB] {
        let got = runtime.block_on(fetch(
            &http,
            a.addr,
            &api("/standard/fastest-mate", fen),
            &[],
        ));
        assert_eq!(got.status, StatusCode::NOT_FOUND, "{fen}");
        let why = got.header("x-upstream-unavailable").expect("why");
        assert!(why.contains("does not answer this (404"), "{why}");
        let body = String::from_utf8_lossy(&got.body).to_string();
        assert!(body.contains("DTM"), "{body}");
    }
    assert_eq!(
        runtime.block_on(asked_of(&http, b.addr, "/standard/fastest-mate")) - before,
        2.0,
        "B was asked for both positions"
    );
}

/// An upstream without `/standard/fastest-mate` (lichess's: its 404 is no
/// JSON error) is not asked for it again; one whose 404 says in JSON that
/// it lacks this position's table is asked for the next.
#[test]
fn a_route_the_upstream_lacks_is_not_asked_again() {
    for (json, expected) in [(false, 1), (true, 2)] {
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        let asked = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&asked);
        let app = Router::new().fallback(move |uri: Uri| {
            let counted = Arc::clone(&counted);
            async move {
                if uri.path() == "/standard/fastest-mate" {
                    counted.fetch_add(1, Ordering::SeqCst);
                }
                if json {
                    (
                        StatusCode::NOT_FOUND,
                        [(header::CONTENT_TYPE, "application/json")],
                        r#"{"error":"no DTM table for KRPvKR is installed"}"#,
                    )
                        .into_response()
                } else {
                    (StatusCode::NOT_FOUND, "Not Found").into_response()
                }
            }
        });
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind");
        let fake = listener.local_addr().expect("addr");
        runtime.spawn(async move { axum::serve(listener, app).await });
        let state = tempfile::tempdir().expect("temp dir");
        let state_arg = state.path().to_string_lossy().to_string();
        let upstream = format!("http://{fake}");
        let a = process::serve(&[
            "--upstream",
            &upstream,
            "--state-dir",
            &state_arg,
            "--upstream-rate",
            "50",
            "--upstream-burst",
            "50",
        ]);
        let http = client();
        for fen in [LUCENA, KBB_KB] {
            let got = runtime.block_on(fetch(
                &http,
                a.addr,
                &api("/standard/fastest-mate", fen),
                &[],
            ));
            assert_eq!(got.status, StatusCode::NOT_FOUND, "{fen}");
            assert!(got.header("x-upstream-unavailable").is_some(), "{fen}");
        }
        assert_eq!(
            asked.load(Ordering::SeqCst),
            expected,
            "json 404: {json}\n{}",
            a.log()
        );
    }
}

/// A page whose upstream server cannot be asked shows the local answer at
/// once, marked to be asked again (the browser keeps no such answer); the
/// API says the same in `X-Upstream-Unavailable`.
#[test]
fn a_page_whose_upstream_cannot_be_asked_is_asked_again() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let state = tempfile::tempdir().expect("temp dir");
    let state_arg = state.path().to_string_lossy().to_string();
    let upstream = format!("http://127.0.0.1:{port}");
    let a = process::serve(&["--upstream", &upstream, "--state-dir", &state_arg]);
    let http = client();
    let page = runtime.block_on(fetch(
        &http,
        a.addr,
        &format!("/?fen={}", LUCENA.replace(' ', "_")),
        &[],
    ));
    assert_eq!(page.status, StatusCode::OK);
    let html = String::from_utf8_lossy(&page.body);
    assert!(html.contains("KRPvKR not installed"), "{html}");
    assert!(
        html.contains(r#"\"ask_again\":true"#) || html.contains(r#""ask_again":true"#),
        "{html}"
    );
    assert!(!html.contains("answer from"), "{html}");
    assert!(page.took < Duration::from_secs(5), "{:?}", page.took);
    let api = runtime.block_on(fetch(&http, a.addr, &api("/standard", LUCENA), &[]));
    assert!(api.header("x-upstream-unavailable").is_some());
    // The API's JSON stays lila's: the mark is the header's.
    assert!(!String::from_utf8_lossy(&api.body).contains("ask_again"));
}
