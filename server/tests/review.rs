//! `POST /review`: a game's moves judged by the tablebase, over HTTP.

mod common;

use axum::http::StatusCode;
use serde_json::Value;

fn embedded_router() -> axum::Router {
    common::router(common::engine_with(Vec::new()))
}

/// A POST's status, content type and body.
async fn post(
    router: &axum::Router,
    uri: &str,
    content_type: &str,
    accept: Option<&str>,
    body: &str,
) -> (StatusCode, String, Vec<u8>) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let mut request = axum::http::Request::post(uri).header("content-type", content_type);
    if let Some(accept) = accept {
        request = request.header("accept", accept);
    }
    let response = router
        .clone()
        .oneshot(
            request
                .body(axum::body::Body::from(body.to_string()))
                .expect("request"),
        )
        .await
        .expect("router answers");
    let (parts, body) = response.into_parts();
    let content_type = parts
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = body.collect().await.expect("body").to_bytes().to_vec();
    (parts.status, content_type, body)
}

async fn review(router: &axum::Router, pgn: &str) -> (StatusCode, Value) {
    let (status, content_type, body) =
        post(router, "/review", "application/x-chess-pgn", None, pgn).await;
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    (status, serde_json::from_slice(&body).expect("JSON"))
}

/// KRvK from a position: best moves, a slower defence (2...Kc8, Ke8 resists
/// longer) and 3.Rd7?? (the king takes the rook: the win thrown away).
const ROOK_GAME: &str = "[Event \"Club\"]\n[White \"Ann\"]\n[Black \"Bob\"]\n[Result \"1/2-1/2\"]\n[SetUp \"1\"]\n[FEN \"4k3/8/8/8/8/8/8/4K2R w - - 0 1\"]\n\n1. Rh7 Kd8 2. Kd2 Kc8 3. Rd7 Kxd7 1/2-1/2\n";

fn marks(body: &Value) -> Vec<String> {
    body["plies"]
        .as_array()
        .expect("plies")
        .iter()
        .map(|p| match p["judgement"]["mark"].as_str() {
            Some(mark) => format!("{} {mark}", p["label"].as_str().unwrap_or("")),
            None => format!("{} {}", p["label"].as_str().unwrap_or(""), p["verdict"]),
        })
        .collect()
}

#[tokio::test]
async fn every_move_is_judged_as_practice_judges_it() {
    let router = embedded_router();
    let (status, body) = review(&router, ROOK_GAME).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        marks(&body),
        [
            "1.Rh7 Best",
            "1…Kd8 Best",
            "2.Kd2 Best",
            "2…Kc8 Slower",
            "3.Rd7 Mistake",
            "3…Kxd7 Best"
        ]
    );
    assert_eq!(body["games"], 1);
    assert_eq!(body["judged_from"], 0);
    assert_eq!(body["from_position"], true);
    let plies = body["plies"].as_array().expect("plies");
    assert_eq!(plies[3]["nag"], 2);
    assert_eq!(
        plies[3]["words"],
        "slower: was mated in 9, now mated in 8; best Ke8"
    );
    assert_eq!(plies[4]["nag"], 4);
    assert_eq!(plies[4]["metric"], "dtm");
    assert_eq!(
        body["moments"][0]["words"],
        "3.Rd7?? threw the win away: now a draw; 3.Kc3 kept the win"
    );
    assert_eq!(body["counts"]["white"]["best"], 2);
    assert_eq!(body["counts"]["white"]["mistake"], 1);
    assert_eq!(body["counts"]["black"]["slower"], 1);
    // Each verdict is the practice judge's on the position's own answer.
    for ply in plies {
        let fen = ply["fen"].as_str().expect("fen").replace(' ', "_");
        let (_, answer) = common::get_json(&router, &format!("/standard?fen={fen}")).await;
        let answer: app::api::TablebaseAnswer = serde_json::from_value(answer).expect("answer");
        let judged = app::practice::judge::judge(&answer, ply["uci"].as_str().expect("uci"));
        let said: Option<app::practice::judge::Judgement> =
            serde_json::from_value(ply["judgement"].clone()).expect("a judgement");
        assert_eq!(said, judged, "{}", ply["label"]);
    }
}

#[tokio::test]
async fn castling_rights_are_outside_the_tables() {
    let router = embedded_router();
    let pgn = "[FEN \"4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1\"]\n\n1. O-O Kd7 2. Ra7+ Kc6 *";
    let (status, body) = review(&router, pgn).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["judged_from"], 1);
    assert_eq!(body["plies"][0]["verdict"], "before-tables");
    assert_eq!(body["plies"][0]["judgement"], Value::Null);
    assert_eq!(body["plies"][1]["verdict"], "judged");
    assert!(
        body["not_judged"]
            .as_str()
            .is_some_and(|w| w.contains("from 1…Kd7 on")),
        "{}",
        body["not_judged"]
    );
    // Castling rights kept to the end: nothing judged, and said why.
    let (_, body) = review(
        &router,
        "[FEN \"4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1\"]\n\n1. Ra2 Kd7 *",
    )
    .await;
    assert_eq!(body["judged_from"], Value::Null);
    assert!(
        body["not_judged"]
            .as_str()
            .is_some_and(|w| w.contains("castling rights"))
    );
    // A game from the start never comes down to the tables.
    let (_, body) = review(&router, "1. e4 e5 2. Nf3 Nc6 *").await;
    assert!(
        body["not_judged"]
            .as_str()
            .is_some_and(|w| w.contains("never comes down to")),
        "{}",
        body["not_judged"]
    );
}

#[tokio::test]
async fn bad_pgn_is_a_400_naming_the_move() {
    let router = embedded_router();
    let (status, body) = review(
        &router,
        "[FEN \"4k3/8/8/8/8/8/8/4K2R w - - 0 1\"]\n\n1. Rh7 Kd8 2. Ke5 Kc8 *",
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let error = body["error"].as_str().expect("error");
    assert!(
        error.starts_with("game 1, move 2.Ke5: not a legal move"),
        "{error}"
    );
    let (status, body) = review(&router, "[Variant \"Crazyhouse\"]\n\n1. e4 *").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("Crazyhouse"))
    );
    let (status, body) = review(&router, "").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("no game"))
    );
    // curl --data-binary's default type is the PGN as it is, not a form.
    let (status, content_type, body) = post(
        &router,
        "/review",
        "application/x-www-form-urlencoded",
        None,
        ROOK_GAME,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    let body: Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(body["plies"][0]["san"], "Rh7");
    let (status, _, body) = post(&router, "/review", "application/json", None, "{}").await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert!(String::from_utf8_lossy(&body).contains("application/x-chess-pgn"));
}

#[tokio::test]
async fn long_games_and_large_bodies_are_refused_at_once() {
    let router = embedded_router();
    // 2,000 plies: refused with the cap, before any probing.
    let long = "Nf3 Nf6 Ng1 Ng8 ".repeat(500);
    let started = std::time::Instant::now();
    let (status, body) = review(&router, &long).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("longer than 1000 plies")),
        "{body}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let (status, _, body) = post(
        &router,
        "/review",
        "text/plain",
        None,
        &"1. e4 e5 ".repeat(200_000),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(String::from_utf8_lossy(&body).contains("larger than 1024 KiB"));
    let games = "1. e4 e5 *\n\n".repeat(101);
    let (status, body) = review(&router, &games).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("more than 100 games"))
    );
}

#[tokio::test]
async fn one_game_of_several_is_reviewed() {
    let router = embedded_router();
    let two = format!("1. e4 e5 *\n\n{ROOK_GAME}");
    let (status, body) = review(&router, &two).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["games"], 2);
    assert_eq!(body["game"], 1);
    assert_eq!(body["titles"][1], "Ann – Bob, Club (1/2-1/2)");
    let (status, _, bytes) = post(&router, "/review?game=2", "text/plain", None, &two).await;
    assert_eq!(status, StatusCode::OK);
    let body: Value = serde_json::from_slice(&bytes).expect("JSON");
    assert_eq!(body["game"], 2);
    assert_eq!(body["moments"].as_array().map(Vec::len), Some(1));
    let (status, _, bytes) = post(&router, "/review?game=3", "text/plain", None, &two).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(String::from_utf8_lossy(&bytes).contains("there is no game 3: the PGN holds 2"));
}

#[tokio::test]
async fn the_annotated_pgn_and_cbor() {
    let router = embedded_router();
    let (status, content_type, body) = post(
        &router,
        "/review",
        "application/x-chess-pgn",
        Some("application/x-chess-pgn"),
        ROOK_GAME,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(content_type.starts_with("application/x-chess-pgn"));
    let pgn = String::from_utf8(body).expect("text");
    assert!(pgn.contains("[White \"Ann\"]\n"), "{pgn}");
    assert!(
        pgn.contains("[SetUp \"1\"]\n[FEN \"4k3/8/8/8/8/8/8/4K2R w - - 0 1\"]\n"),
        "{pgn}"
    );
    let movetext = pgn.replace('\n', " ");
    assert!(
        movetext.contains("2... Kc8 $2 {slower: was mated in 9, now mated in 8; best Ke8}"),
        "{pgn}"
    );
    assert!(
        movetext.contains("3. Rd7 $4 {mistake: win thrown away: now a draw (was mate in 8); best"),
        "{pgn}"
    );
    assert!(movetext.contains("1. Rh7 {best: mate in 11}"), "{pgn}");
    assert!(movetext.trim_end().ends_with("1/2-1/2"));

    let (_, json) = review(&router, ROOK_GAME).await;
    let (status, content_type, cbor) = post(
        &router,
        "/review",
        "application/x-chess-pgn",
        Some("application/cbor"),
        ROOK_GAME,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(content_type, "application/cbor");
    let decoded: Value = ciborium::from_reader(cbor.as_slice()).expect("CBOR");
    assert_eq!(decoded, json);
}

/// The review page at `uri`, which must be a 200 in HTML.
async fn page(router: &axum::Router, uri: &str) -> String {
    let (status, content_type, body) = common::get(router, uri, None).await;
    assert_eq!(status, StatusCode::OK, "{uri}");
    assert!(content_type.starts_with("text/html"), "{content_type}");
    String::from_utf8(body).expect("html")
}

/// The page's answer to its form posted with `pgn`, as a browser without
/// JavaScript posts it.
async fn post_form(router: &axum::Router, pgn: &str) -> String {
    let form = format!("pgn={}", form_urlencoded(pgn));
    let (status, _, body) = post(
        router,
        "/review",
        "application/x-www-form-urlencoded",
        Some("text/html"),
        &form,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    String::from_utf8(body).expect("html")
}

#[tokio::test]
async fn the_page_reviews_a_posted_form_and_a_link_without_javascript() {
    let router = embedded_router();
    let html = page(&router, "/review").await;
    assert!(
        html.contains("<form class=\"review-form\" method=\"post\""),
        "{html}"
    );

    let html = post_form(&router, ROOK_GAME).await;
    for expected in [
        "3.Rd7?? threw the win away: now a draw; 3.Kc3 kept the win",
        "href=\"/?fen=2k5/7R/8/8/8/8/3K4/8_w_-_-_4_3\"",
        "/practice?fen=2k5/7R/8/8/8/8/3K4/8_w_-_-_4_3",
        "Download the annotated PGN",
        "<img class=\"review-chart\" src=\"/review/chart.svg?",
    ] {
        assert!(html.contains(expected), "{expected} missing from {html}");
    }

    // The link it gives reopens the same review.
    let (_, json) = review(&router, ROOK_GAME).await;
    let link = json["link"].as_str().expect("link");
    let html = page(&router, link).await;
    assert!(html.contains("3.Rd7?? threw the win away"), "{html}");

    // A whole PGN in the URL, as a tool links it.
    let two = format!("1. e4 *\n\n{ROOK_GAME}");
    let html = page(
        &router,
        &format!("/review?game=2&pgn={}", form_urlencoded(&two)),
    )
    .await;
    assert!(html.contains("3.Rd7?? threw the win away"), "{html}");

    // A bad PGN shows the form again with what is wrong.
    let html = post_form(&router, "1. e4 e5 2. Ke3 *").await;
    assert!(
        html.contains("game 1, move 2.Ke3: not a legal move"),
        "{html}"
    );
}

#[tokio::test]
async fn the_chart_is_an_svg_of_the_review() {
    let router = embedded_router();
    let (_, json) = review(&router, ROOK_GAME).await;
    let chart = json["chart"].as_str().expect("chart");
    let (status, content_type, body) = common::get(&router, chart, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(content_type, "image/svg+xml");
    let svg = String::from_utf8(body).expect("svg");
    assert!(svg.contains("1. White mates in 11"), "{svg}");
    assert!(svg.contains("class=\"x\""), "{svg}");
    let (status, _, _) = common::get(&router, "/review/chart.svg?s=m1.q", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_variant_game_is_judged_with_its_tables() {
    let router = embedded_router();
    let pgn = "[Variant \"Atomic\"]\n[FEN \"4k3/8/8/8/8/8/8/3QK3 w - - 0 1\"]\n\n1. Qd5 Ke7 *";
    let (status, body) = review(&router, pgn).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["variant"], "atomic");
    let plies = body["plies"].as_array().expect("plies");
    assert_eq!(marks(&body), ["1.Qd5 Slower", "1…Ke7 Best"]);
    for ply in plies {
        assert_eq!(ply["verdict"], "judged", "{ply}");
        // No DTM tables for atomic: distances are DTZ.
        assert_eq!(ply["metric"], "dtz", "{ply}");
        let fen = ply["fen"].as_str().expect("fen").replace(' ', "_");
        let (_, answer) = common::get_json(&router, &format!("/atomic?fen={fen}")).await;
        let answer: app::api::TablebaseAnswer = serde_json::from_value(answer).expect("answer");
        let judged = app::practice::judge::judge(&answer, ply["uci"].as_str().expect("uci"));
        let said: Option<app::practice::judge::Judgement> =
            serde_json::from_value(ply["judgement"].clone()).expect("a judgement");
        assert_eq!(said, judged, "{}", ply["label"]);
    }
    assert!(
        body["link"]
            .as_str()
            .is_some_and(|l| l.starts_with("/review?variant=atomic&"))
    );
    let (_, _, annotated) = post(
        &router,
        "/review",
        "text/plain",
        Some("application/x-chess-pgn"),
        pgn,
    )
    .await;
    assert!(String::from_utf8_lossy(&annotated).contains("[Variant \"Atomic\"]\n"));
}

/// The review of a game whose positions were asked for once before, so
/// a cold debug build's first reads of the 5-piece tables on a loaded
/// machine do not spend the review's probe budget (5 s).
async fn review_warm(router: &axum::Router, pgn: &str) -> (StatusCode, Value) {
    let (_, first) = review(router, pgn).await;
    for ply in first["plies"].as_array().into_iter().flatten() {
        let fen = ply["fen"].as_str().unwrap_or_default().replace(' ', "_");
        common::get_json(router, &format!("/standard?fen={fen}")).await;
    }
    review(router, pgn).await
}

/// Five pieces, where no DTM table reaches: `?` and the best move by DTZ.
#[tokio::test]
async fn a_five_piece_game_is_judged_by_dtz() {
    let Some(dir) = common::shared_tables_dir() else {
        return;
    };
    let router = common::router(common::engine_allowing_unchecked(vec![dir]));
    // The Lucena position: 3.Rd2?? lets the rook go.
    let pgn = "[FEN \"1K1k4/1P6/8/8/8/8/r7/2R5 w - - 0 1\"]\n\n\
               1. Rd1+ Ke8 2. Rd5 Ke7 3. Rd2 Rxd2 4. Kc7 *";
    let (status, body) = review_warm(&router, pgn).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        marks(&body),
        [
            "1.Rd1+ Best",
            "1…Ke8 Slower",
            "2.Rd5 Slower",
            "2…Ke7 Best",
            "3.Rd2 Mistake",
            "3…Rxd2 Best",
            "4.Kc7 Best"
        ]
    );
    let plies = body["plies"].as_array().expect("plies");
    assert_eq!(plies[2]["metric"], "dtz");
    assert_eq!(plies[2]["nag"], 2);
    assert_eq!(
        plies[2]["words"],
        "slower: was win (DTZ 7), now win (DTZ 8); best Rd6"
    );
    assert_eq!(
        body["moments"][0]["words"],
        "3.Rd2?? threw the win away: now a draw; 3.Kc7 kept the win"
    );
}

/// A position whose table is not installed is in the tables' reach but
/// not judged, and the review names the table.
#[tokio::test]
async fn a_table_not_installed_is_named() {
    let Some(dir) = common::shared_tables_dir() else {
        return;
    };
    let router = common::router(common::engine_allowing_unchecked(vec![dir]));
    let pgn = "[FEN \"3qk3/8/8/8/8/8/4P3/R3K3 w - - 0 1\"]\n\n1. Ra8 Qxa8 2. e4 *";
    let (status, body) = review_warm(&router, pgn).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["plies"][0]["verdict"], "unknown");
    assert_eq!(
        body["plies"][0]["words"],
        "not judged: KRPvKQ not installed"
    );
    assert_eq!(body["counts"]["white"]["not_judged"], 1);
    assert_eq!(body["plies"][2]["verdict"], "judged");
}

fn form_urlencoded(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[tokio::test]
async fn the_explorer_help_links_to_the_review_page() {
    let html = page(&embedded_router(), "/").await;
    assert!(
        html.contains("<a href=\"/review\">review page</a>"),
        "{html}"
    );
}
