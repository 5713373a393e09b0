//! The lichess-compatible API over HTTP: answers, categories, errors, CBOR.

mod common;

use app::api::{POSITION_DISTANCES, POSITION_FLAGS};
use axum::http::StatusCode;
use serde_json::Value;

fn embedded_router() -> axum::Router {
    common::router(common::engine_with(Vec::new()))
}

fn uri(path: &str, fen: &str) -> String {
    format!("{path}?fen={}", fen.replace(' ', "_"))
}

#[tokio::test]
async fn rook_ending_is_a_win_with_best_move_first() {
    let router = embedded_router();
    let (status, body) =
        common::get_json(&router, &uri("/standard", "4k3/8/8/8/8/8/8/4K2R w - - 0 1")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["category"], "win");
    assert_eq!(body["dtz"], 21);
    let moves = body["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), 14);
    assert_eq!(moves[0]["san"], "Rh7");
    assert_eq!(moves[0]["uci"], "h1h7");
    assert_eq!(moves[0]["dtz"], -20);
    assert_eq!(moves[0]["category"], "loss");
    for field in POSITION_FLAGS.iter().chain(&POSITION_DISTANCES) {
        assert!(body.get(field).is_some(), "field {field} missing");
        assert!(moves[0].get(field).is_some(), "move field {field} missing");
    }
    for field in ["zeroing", "conversion"] {
        assert!(moves[0].get(field).is_some(), "move field {field} missing");
    }
}

#[tokio::test]
async fn moves_are_sorted_best_first() {
    let router = embedded_router();
    // KQ vs K with a mate in one available: Qb7# style mates come first.
    let (_, body) =
        common::get_json(&router, &uri("/standard", "k7/8/1K6/8/8/8/7Q/8 w - - 0 1")).await;
    let moves = body["moves"].as_array().expect("moves");
    assert_eq!(moves[0]["checkmate"], true, "first move {:?}", moves[0]);
    let rank = |m: &Value| match m["category"].as_str() {
        Some("loss") => 0,
        Some("unknown") => 1,
        Some("syzygy-loss") | Some("maybe-loss") | Some("blessed-loss") => 2,
        Some("draw") => 3,
        _ => 4,
    };
    let ranks: Vec<i32> = moves.iter().map(rank).collect();
    assert!(
        ranks.windows(2).all(|w| w[0] <= w[1]),
        "not grouped best first: {ranks:?}"
    );
    // Among the winning non-mating moves, DTZ never gets faster further down.
    let wins: Vec<i64> = moves
        .iter()
        .filter(|m| m["category"] == "loss" && m["checkmate"] == false && m["zeroing"] == false)
        .map(|m| m["dtz"].as_i64().expect("dtz"))
        .collect();
    assert!(
        wins.windows(2).all(|w| w[0] >= w[1]),
        "wins not fastest first: {wins:?}"
    );
    // Stalemating moves are draws.
    for m in moves.iter().filter(|m| m["stalemate"] == true) {
        assert_eq!(m["category"], "draw");
    }
}

#[tokio::test]
async fn checkmate_stalemate_and_insufficient_material() {
    let router = embedded_router();
    let (_, mate) = common::get_json(
        &router,
        &uri("/standard", "4k3/4Q3/4K3/8/8/8/8/8 b - - 0 1"),
    )
    .await;
    assert_eq!(mate["checkmate"], true);
    assert_eq!(mate["category"], "loss");
    assert_eq!(mate["moves"].as_array().expect("moves").len(), 0);

    let (_, stalemate) =
        common::get_json(&router, &uri("/standard", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")).await;
    assert_eq!(stalemate["stalemate"], true);
    assert_eq!(stalemate["category"], "draw");

    let (_, kbk) =
        common::get_json(&router, &uri("/standard", "4k3/8/8/8/8/8/8/4KB2 w - - 0 1")).await;
    assert_eq!(kbk["insufficient_material"], true);
    assert_eq!(kbk["category"], "draw");
    assert_eq!(kbk["dtz"], 0);
}

#[tokio::test]
async fn halfmove_clock_turns_wins_into_cursed_wins() {
    let router = embedded_router();
    // KRvK needs 21 plies to zero; with 90 plies already on the clock the win is lost.
    let (_, body) = common::get_json(
        &router,
        &uri("/standard", "4k3/8/8/8/8/8/8/4K2R w - - 90 60"),
    )
    .await;
    assert_eq!(body["category"], "cursed-win", "{body}");
}

#[tokio::test]
async fn five_piece_cursed_win() {
    let Some(dir) = common::shared_tables_dir() else {
        return;
    };
    // ../shared has no recorded checksums; this is about the answer.
    let router = common::router(common::engine_allowing_unchecked(vec![dir]));
    // KBB vs KN: White wins in 132 plies to zeroing, too slow for the 50-move rule.
    let (status, body) = common::get_json(
        &router,
        &uri("/standard", "8/8/8/1B6/8/8/8/1KBk2n1 b - - 0 1"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["category"], "blessed-loss", "{body}");
    let best = &body["moves"][0];
    let (_, after) = common::get_json(&router, &uri("/standard", &fen_after(&body, best))).await;
    assert_eq!(after["category"], "cursed-win", "{after}");
    assert!(after["dtz"].as_i64().expect("dtz") > 100);
}

/// The FEN after a move of an answer, computed with shakmaty.
fn fen_after(_answer: &Value, m: &Value) -> String {
    use shakmaty::{Chess, Position, uci::UciMove};
    let mut pos: Chess =
        app::position::parse_fen("8/8/8/1B6/8/8/8/1KBk2n1 b - - 0 1").expect("fen");
    let uci: UciMove = m["uci"].as_str().expect("uci").parse().expect("uci parses");
    pos.play_unchecked(uci.to_move(&pos).expect("legal"));
    app::position::to_fen(&pos)
}

#[tokio::test]
async fn outside_the_tables_is_unknown_with_moves_listed() {
    let router = embedded_router();
    // Five pieces, but only the embedded 3- and 4-piece tables are loaded.
    let (status, body) = common::get_json(
        &router,
        &uri("/standard", "8/8/8/1B6/8/8/8/1KBk2n1 b - - 0 1"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["category"], "unknown");
    assert_eq!(body["dtz"], Value::Null);
    assert!(!body["moves"].as_array().expect("moves").is_empty());
    // Castling rights are never in Syzygy tables: the root's own DTZ is
    // unknown, but every move gives them up, so the moves are known and the
    // category follows from the best of them (as lichess answers).
    let (status, body) =
        common::get_json(&router, &uri("/standard", "4k3/8/8/8/8/8/8/4K2R w K - 0 1")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["dtz"], Value::Null);
    assert_eq!(body["category"], "win");
    assert!(body["moves"][0]["dtz"].is_i64(), "{body}");
}

#[tokio::test]
async fn bad_requests_say_what_is_wrong() {
    let router = embedded_router();
    let cases = [
        ("/standard", "no FEN given"),
        ("/standard?fen=", "no FEN given"),
        ("/standard?fen=hello", "malformed FEN"),
        ("/standard?fen=4k3/8/8_w_-_-_0_1", "board part"),
        (
            "/standard?fen=8/8/8/8/8/8/8/4K3_w_-_-_0_1",
            "king is missing",
        ),
        (
            "/standard?fen=4k3/4R3/8/8/8/8/8/4K3_w_-_-_0_1",
            "side not to move is in check",
        ),
        (
            "/standard?fen=4k2P/8/8/8/8/8/8/4K3_w_-_-_0_1",
            "first or last rank",
        ),
        (
            "/standard?fen=4k3/8/8/8/8/8/8/2KK4_w_-_-_0_1",
            "too many kings",
        ),
        (
            "/standard?fen=4k3/8/3N1N2/8/8/8/8/4K3_w_-_-_0_1",
            "side not to move is in check",
        ),
        (
            "/standard/mainline?fen=4k3/8/8/8/8/8/8/4K3_x_-_-_0_1",
            "side to move",
        ),
    ];
    for (uri, expected) in cases {
        let (status, body) = common::get_json(&router, uri).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}: {body}");
        let message = body["error"].as_str().expect("error message");
        assert!(message.contains(expected), "{uri}: {message}");
    }
}

/// Checks no legal last move could give (pawn and knight together), as
/// position editors and puzzles produce: lila-tablebase and python-chess
/// answer them, and so do we, on every route.
// Multi-threaded, as `serve` runs: the page is rendered by Leptos's tasks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impossible_checks_are_answered_on_every_route() {
    let router = embedded_router();
    let fen = "8/8/8/2K1N3/8/5k2/6P1/8 b - - 0 38";
    let (status, body) = common::get_json(&router, &uri("/standard", fen)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let moves = body["moves"].as_array().expect("moves");
    assert!(moves.iter().any(|m| m["san"] == "Kxg2"), "{body}");
    assert_ne!(body["category"], "unknown", "{body}");
    assert!(body["dtz"].is_i64(), "{body}");

    let (status, body) = common::get_json(&router, &uri("/standard/mainline", fen)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["dtz"].is_i64(), "{body}");

    // A page that never renders must fail the test, not hang the run.
    let page = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        common::get(&router, &uri("/", fen), None),
    )
    .await;
    let (status, content_type, page) = page.expect("the page renders within 60 s");
    assert_eq!(status, StatusCode::OK);
    assert!(content_type.starts_with("text/html"), "{content_type}");
    let page = String::from_utf8_lossy(&page);
    assert!(page.contains("Kxg2"), "the page lists no moves:\n{page}");
    assert!(!page.contains("illegal position"), "{page}");
}

#[tokio::test]
async fn mainline_refuses_castling_and_too_many_pieces() {
    let router = embedded_router();
    let (status, body) = common::get_json(
        &router,
        &uri("/standard/mainline", "r3k3/8/8/8/8/8/8/4K2R w Kq - 0 1"),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(
        body["error"]
            .as_str()
            .expect("message")
            .contains("castling"),
        "{body}"
    );
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    let (status, body) = common::get_json(&router, &uri("/standard/mainline", start)).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(
        body["error"]
            .as_str()
            .expect("message")
            .contains("32 pieces"),
        "{body}"
    );
}

#[tokio::test]
async fn mainline_of_a_win_ends_in_mate_and_of_a_draw_is_empty() {
    let router = embedded_router();
    let (status, body) = common::get_json(
        &router,
        &uri("/standard/mainline", "4k3/8/8/8/8/8/8/4K2R w - - 0 1"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["dtz"], 21);
    assert_eq!(body["winner"], "w");
    let line = body["mainline"].as_array().expect("mainline");
    assert!(!line.is_empty());
    let last = line.last().expect("last step");
    assert!(
        last["san"].as_str().expect("san").ends_with('#'),
        "ends with {last}"
    );

    // KP vs K with the pawn about to promote: the line zeroes on the way.
    let (_, body) = common::get_json(
        &router,
        &uri("/standard/mainline", "8/4P3/8/8/8/2k5/8/4K3 w - - 0 1"),
    )
    .await;
    assert_eq!(body["winner"], "w");
    assert!(
        body["mainline"][0]["san"]
            .as_str()
            .expect("san")
            .starts_with("e8=Q"),
        "{body}"
    );

    let (status, body) = common::get_json(
        &router,
        &uri("/standard/mainline", "4k3/8/8/8/8/8/8/3NK1N1 w - - 0 1"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["dtz"], 0);
    assert_eq!(body["mainline"].as_array().expect("mainline").len(), 0);
    assert_eq!(body["winner"], Value::Null);
}

/// Byte-identical to lila-tablebase means the fields in its order too.
#[tokio::test]
async fn json_fields_come_in_lilas_order() {
    let router = embedded_router();
    let fen = "4k3/8/8/8/8/8/8/4K2R w - - 0 1";
    let (_, _, body) = common::get(&router, &uri("/standard", fen), None).await;
    let body = String::from_utf8(body).expect("UTF-8");
    let root = r#"{"checkmate":false,"stalemate":false,"variant_win":false,"variant_loss":false,"insufficient_material":false,"dtz":21,"precise_dtz":"#;
    assert!(body.starts_with(root), "{body}");
    let first_move = r#","dtm":21,"dtw":null,"dtc":null,"category":"win","moves":[{"uci":"h1h7","san":"Rh7","zeroing":false,"conversion":false,"checkmate":false,"stalemate":false,"variant_win":false,"variant_loss":false,"insufficient_material":false,"dtz":-20,"precise_dtz":"#;
    assert!(body.contains(first_move), "{body}");

    let (_, _, body) = common::get(&router, &uri("/standard/mainline", fen), None).await;
    let body = String::from_utf8(body).expect("UTF-8");
    assert!(body.starts_with(r#"{"mainline":[{"uci":""#), "{body}");
    assert!(
        body.contains(r#"],"winner":"w","dtz":21,"precise_dtz":"#),
        "{body}"
    );
}

#[tokio::test]
async fn cbor_decodes_to_the_same_value_as_json() {
    let router = embedded_router();
    for path in ["/standard", "/standard/mainline"] {
        let uri = uri(path, "4k3/8/8/8/8/8/8/4K2R w - - 0 1");
        let (_, json) = common::get_json(&router, &uri).await;
        let (status, content_type, body) =
            common::get(&router, &uri, Some("application/cbor")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(content_type, "application/cbor");
        let cbor: Value = ciborium::from_reader(body.as_slice()).expect("CBOR body");
        assert_eq!(cbor, json, "{path}");
    }
}
