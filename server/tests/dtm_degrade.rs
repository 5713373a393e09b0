//! "Degrade, don't fail" and "no path in anything a client
//! sees", for DTM: a Prophet table that is truncated or has flipped bytes
//! leaves `dtm: null` for the positions it covers, and every answer is
//! still the 200 the Syzygy tables give, with the same `dtz` and
//! `category`. The damaged table is named (file only) in the
//! `X-Dtm-Unavailable` header and on `/metrics`; no body, header or metric
//! shows the directory the tables are in.
//!
//! The tables are copies of the embedded 2-4 piece Prophet set
//! (`server/tables-prophet`, in every checkout) with their block checksums
//! recorded, as `zugzwang verify --init` records them; the last test takes
//! the generator's layout from `../shared/prophet` and skips, saying so,
//! without it.

mod common;

use std::{
    collections::HashMap,
    fs,
    path::{Path, PathBuf},
};

use axum::http::StatusCode;
use serde_json::Value;
use server::{
    dtm::index::ProphetMaterial,
    engine::{Engine, EngineConfig},
    progress::Silent,
    store::tier::build::{self as tier, BuildOptions},
};
use shakmaty::{
    CastlingMode, Chess, Color, FromSetup, Piece, Position, Role, Setup, Square, fen::Fen,
};

/// The table damaged here: KQvKR with the side with the queen to move.
const DAMAGED: &str = "KQKR.egtb.bz";

fn embedded_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tables-prophet")
}

/// A copy of the embedded Prophet tables (and their MD5SUMS) with block
/// checksums recorded beside them, as `zugzwang verify --init DIR` does.
fn checked_copy() -> tempfile::TempDir {
    let dir = common::copy_of(&embedded_dir());
    let dirs = vec![dir.path().to_owned()];
    let summary = tier::build(
        &BuildOptions {
            prefixes: false,
            per_directory: true,
            ..BuildOptions::new(dirs, dir.path().join(".zugzwang"))
        },
        &Silent,
    );
    assert!(summary.failures.is_empty(), "{:?}", summary.failures);
    dir
}

/// Where a Prophet file's blocks begin: after its 24-byte header and its
/// list of block sizes (2 bytes each, 4 for blocks over 65535 positions).
fn data_start(bytes: &[u8]) -> usize {
    let word = |i: usize| u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap());
    let (positions, per_block) = (word(1), word(2));
    let width = if per_block > 65535 { 4 } else { 2 };
    24 + (positions.div_ceil(per_block) * width) as usize
}

/// Standard tables embedded, DTM tables from `dir`, every other choice the
/// default `serve` makes.
fn router(dir: &Path) -> axum::Router {
    let engine = Engine::open(&EngineConfig {
        dtm: vec![dir.to_owned()],
        ..EngineConfig::default()
    })
    .expect("tables load");
    common::router(engine)
}

fn uri(path: &str, fen: &str) -> String {
    format!("{path}?fen={}", fen.replace(' ', "_"))
}

struct Answer {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    text: String,
    body: Value,
}

async fn get(router: &axum::Router, uri: &str) -> Answer {
    let (status, headers, body) = common::get_with_headers(router, uri, None).await;
    let text = String::from_utf8(body).expect("UTF-8");
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Answer {
        status,
        headers,
        text,
        body,
    }
}

fn header<'a>(answer: &'a Answer, name: &str) -> Option<&'a str> {
    answer.headers.get(name).and_then(|v| v.to_str().ok())
}

/// Nothing a client sees shows the directory.
fn assert_no_dir(what: &str, text: &str, dir: &Path) {
    let dir = dir.display().to_string();
    assert!(
        !text.contains(&dir),
        "{what} shows the tables' directory {dir}: {text}"
    );
}

/// A tiny deterministic generator, so a failure names a position that
/// comes back on the next run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Legal KQvKR positions (White has the queen), either side to move.
fn kqkr_positions(count: usize) -> Vec<Chess> {
    let mut rng = Rng(38);
    let mut out = Vec::new();
    while out.len() < count {
        let mut setup = Setup::empty();
        let pieces = [
            (Color::White, Role::King),
            (Color::White, Role::Queen),
            (Color::Black, Role::King),
            (Color::Black, Role::Rook),
        ];
        let mut ok = true;
        for (color, role) in pieces {
            let sq = Square::new(rng.below(64) as u32);
            if setup.board.piece_at(sq).is_some() {
                ok = false;
                break;
            }
            setup.board.set_piece_at(sq, Piece { color, role });
        }
        setup.turn = if out.len() % 2 == 0 {
            Color::White
        } else {
            Color::Black
        };
        if ok
            && let Ok(pos) = Chess::from_setup(setup, CastlingMode::Standard)
            && !pos.legal_moves().is_empty()
        {
            out.push(pos);
        }
    }
    out
}

fn fen(pos: &Chess) -> String {
    Fen::from_position(pos, shakmaty::EnPassantMode::Legal).to_string()
}

/// The Prophet file a position's `dtm` comes from.
fn file_of(pos: &Chess) -> String {
    format!("{}.egtb.bz", ProphetMaterial::from_position(pos).name())
}

/// Every field but `dtm` (and the moves, compared one by one).
fn without_dtm(info: &Value) -> Value {
    let mut info = info.clone();
    if let Some(object) = info.as_object_mut() {
        object.remove("dtm");
        object.remove("moves");
    }
    info
}

/// Positions of the damaged table's material, both sides to move: each
/// answer is a 200 with `dtz`, `category` and the rest as from the
/// pristine tables, `dtm` null exactly where the damaged file would have
/// said (the root with the queen's side to move, the moves of the other
/// side that do not take the queen), the header naming it; cached and
/// memoised answers say the same; nothing shows the directory.
async fn check_degraded(what: &str, pristine: &axum::Router, damaged: &axum::Router, dir: &Path) {
    let positions = kqkr_positions(60);
    let mut null_roots = 0;
    let mut null_moves = 0;
    for pos in &positions {
        let fen = fen(pos);
        let good = get(pristine, &uri("/standard", &fen)).await;
        assert_eq!(good.status, StatusCode::OK, "{what} {fen}: {}", good.text);
        for round in ["computed", "from the response cache"] {
            let bad = get(damaged, &uri("/standard", &fen)).await;
            let at = format!("{what}, {fen}, {round}");
            assert_eq!(bad.status, StatusCode::OK, "{at}: {}", bad.text);
            assert_no_dir(&at, &bad.text, dir);
            assert_eq!(without_dtm(&bad.body), without_dtm(&good.body), "{at}");
            let root_failed = file_of(pos) == DAMAGED;
            if root_failed {
                assert_eq!(bad.body["dtm"], Value::Null, "{at}");
            } else {
                assert_eq!(bad.body["dtm"], good.body["dtm"], "{at}");
            }
            let good_moves: HashMap<&str, &Value> = good.body["moves"]
                .as_array()
                .expect("moves")
                .iter()
                .map(|m| (m["uci"].as_str().expect("uci"), m))
                .collect();
            let mut move_failed = false;
            for m in bad.body["moves"].as_array().expect("moves") {
                let uci = m["uci"].as_str().expect("uci");
                let good = good_moves[uci];
                assert_eq!(without_dtm(m), without_dtm(good), "{at} {uci}");
                let mv = uci
                    .parse::<shakmaty::uci::UciMove>()
                    .expect("uci")
                    .to_move(pos)
                    .expect("legal");
                let mut after = pos.clone();
                after.play_unchecked(mv);
                if file_of(&after) == DAMAGED {
                    assert_eq!(m["dtm"], Value::Null, "{at} {uci}");
                    move_failed = true;
                    null_moves += 1;
                } else {
                    assert_eq!(m["dtm"], good["dtm"], "{at} {uci}");
                }
            }
            null_roots += usize::from(root_failed);
            let named = header(&bad, "x-dtm-unavailable");
            match (root_failed, move_failed) {
                (false, false) => assert_eq!(named, None, "{at}"),
                (true, _) => assert_eq!(named, Some("KQKR.egtb.bz;problem=damaged;root"), "{at}"),
                (false, true) => {
                    assert_eq!(named, Some("KQKR.egtb.bz;problem=damaged"), "{at}")
                }
            }
            if root_failed || move_failed {
                // Not the table set's answer: never revalidated by ETag.
                assert_eq!(header(&bad, "cache-control"), Some("no-store"), "{at}");
                assert_eq!(header(&bad, "etag"), None, "{at}");
            } else {
                assert!(header(&bad, "etag").is_some(), "{at}");
            }
        }
    }
    assert!(
        null_roots > 20 && null_moves > 100,
        "{null_roots} {null_moves}"
    );

    // The moves probed above (memoised where whole) asked as roots.
    for pos in positions
        .iter()
        .filter(|p| p.turn() == Color::Black)
        .take(5)
    {
        let m = pos.legal_moves()[0];
        let mut after = pos.clone();
        after.play_unchecked(m);
        let fen = fen(&after);
        let bad = get(damaged, &uri("/standard", &fen)).await;
        assert_eq!(bad.status, StatusCode::OK, "{what} {fen}");
        if file_of(&after) == DAMAGED {
            assert_eq!(bad.body["dtm"], Value::Null, "{what} {fen}");
            assert_eq!(
                header(&bad, "x-dtm-unavailable"),
                Some("KQKR.egtb.bz;problem=damaged;root"),
                "{what} {fen}"
            );
        }
    }

    // The fastest mate needs DTM: an error naming the file, not the path.
    let white = positions
        .iter()
        .find(|p| p.turn() == Color::White)
        .expect("one");
    let line = get(damaged, &uri("/standard/fastest-mate", &fen(white))).await;
    assert!(line.status.is_server_error(), "{what}: {}", line.text);
    assert!(line.text.contains(DAMAGED), "{what}: {}", line.text);
    assert_no_dir(what, &line.text, dir);

    let metrics = get(damaged, "/metrics").await;
    assert_no_dir(&format!("{what}, /metrics"), &metrics.text, dir);
    let counted: u64 = metrics
        .text
        .lines()
        .find_map(|l| {
            l.strip_prefix(
                "zugzwang_dtm_unavailable_total{table=\"KQKR.egtb.bz\",problem=\"damaged\"} ",
            )
        })
        .unwrap_or_else(|| panic!("{what}: not counted: {}", metrics.text))
        .parse()
        .expect("a count");
    assert!(counted > 0, "{what}");
}

#[tokio::test]
async fn a_truncated_dtm_table_leaves_dtm_null_and_the_answer_whole() {
    let pristine_dir = checked_copy();
    let pristine = router(pristine_dir.path());
    let dir = checked_copy();
    let path = dir.path().join(DAMAGED);
    let bytes = fs::read(&path).expect("read");
    fs::write(&path, &bytes[..bytes.len() - 1000]).expect("truncate");
    check_degraded("truncated", &pristine, &router(dir.path()), dir.path()).await;
}

#[tokio::test]
async fn flipped_bytes_in_a_dtm_table_leave_dtm_null_and_the_answer_whole() {
    let pristine_dir = checked_copy();
    let pristine = router(pristine_dir.path());
    let dir = checked_copy();
    let path = dir.path().join(DAMAGED);
    // One byte of every 4 KiB checksum block of the data, as a failing
    // disk flips them; size and time stay, so the recorded checksums still
    // claim the file.
    common::damage(&path, |bytes| {
        let start = data_start(bytes);
        for at in (start..bytes.len()).step_by(4096) {
            bytes[at] ^= 0x5a;
        }
    });
    check_degraded("flipped", &pristine, &router(dir.path()), dir.path()).await;
}

/// The same damage without recorded block checksums: the file's own
/// checksum field (or zstd) finds it, and the answer degrades the same.
#[tokio::test]
async fn flipped_bytes_found_by_the_files_own_checksum_degrade_alike() {
    let pristine_dir = checked_copy();
    let pristine = router(pristine_dir.path());
    // Read straight from the disk, not through the store (which refuses
    // files no checksums vouch for), each table checked whole on first use.
    let copy = common::copy_of(&embedded_dir());
    common::damage(&copy.path().join(DAMAGED), |bytes| {
        let start = data_start(bytes);
        let middle = start + (bytes.len() - start) / 2;
        bytes[middle] ^= 0x01;
    });
    let sets = server::engine::TableDirsByVariant {
        standard: server::engine::TableDirs {
            filesystem: std::sync::Arc::new(server::store::embedded::EmbeddedFilesystem),
            dirs: vec![PathBuf::from(server::store::embedded::EMBEDDED_DIR)],
        },
        atomic: server::engine::TableDirs::none(),
        antichess: server::engine::TableDirs::none(),
        dtm: server::engine::TableDirs {
            filesystem: std::sync::Arc::new(shakmaty_syzygy::filesystem::OsFilesystem::new()),
            dirs: vec![copy.path().to_owned()],
        },
        dtm_cache_bytes: 16 << 20,
        dtm_verification: server::dtm::Verification::OnFirstUse,
    };
    let engine = Engine::with_table_sets(&EngineConfig::default(), &sets).expect("tables load");
    check_degraded(
        "flipped, no block checksums",
        &pristine,
        &common::router(engine),
        copy.path(),
    )
    .await;
}

/// Tables whose block checksums were never recorded are not served by
/// default: their positions answer without `dtm`, named `unchecked`
/// (not damaged), the rest of the answer whole.
#[tokio::test]
async fn a_dtm_table_never_checked_is_named_unchecked() {
    let pristine_dir = checked_copy();
    let pristine = router(pristine_dir.path());
    let dir = common::copy_of(&embedded_dir());
    let unchecked = router(dir.path());
    let fen = "8/8/3k4/8/3r4/8/3QK3/8 w - - 0 1";
    let good = get(&pristine, &uri("/standard", fen)).await;
    let bad = get(&unchecked, &uri("/standard", fen)).await;
    assert_eq!(bad.status, StatusCode::OK, "{}", bad.text);
    assert_eq!(bad.body["dtm"], Value::Null);
    assert!(good.body["dtm"].is_i64(), "{}", good.text);
    assert_eq!(without_dtm(&bad.body), without_dtm(&good.body));
    let named = header(&bad, "x-dtm-unavailable").expect("named");
    assert!(
        named.starts_with("KQKR.egtb.bz;problem=unchecked;root, "),
        "{named}"
    );
    assert!(!named.contains("damaged"), "{named}");
    assert_no_dir("the answer", &bad.text, dir.path());
    let metrics = get(&unchecked, "/metrics").await;
    assert!(
        metrics.text.contains(
            "zugzwang_dtm_unavailable_total{table=\"KQKR.egtb.bz\",problem=\"unchecked\"} 1"
        ),
        "{}",
        metrics.text
    );
    assert_no_dir("/metrics", &metrics.text, dir.path());
}

/// The scrub's finding on `/metrics` names an md5 list by the served
/// directory it is in, never by its path: the generator's layout from
/// `../shared/prophet` (its `MD5SUMS` at the top, `./4men/0pawns/…` in
/// it) served second, after the embedded flat copy.
#[test]
fn the_scrub_names_an_md5_list_without_its_path() {
    use server::{
        store::read_counters::ReadMetrics,
        store::scrub::{ScrubState, scrub_pass},
    };
    let Some(shared) = common::shared_dir("prophet", "the scrub's MD5SUMS label check") else {
        return;
    };
    let name = "KBNK.egtb.bz";
    let first = common::copy_of(&embedded_dir());
    // One file of a name: the scrub's findings are by file name.
    fs::remove_file(first.path().join(name)).expect("remove");
    let second = tempfile::tempdir().expect("temp dir");
    fs::copy(shared.join("MD5SUMS"), second.path().join("MD5SUMS")).expect("MD5SUMS");
    let sub = second.path().join("4men/0pawns");
    fs::create_dir_all(&sub).expect("mkdir");
    let mut bytes = fs::read(shared.join("4men/0pawns").join(name)).expect("shared table");
    let start = data_start(&bytes);
    bytes[start + 100] ^= 0x10;
    fs::write(sub.join(name), bytes).expect("write");

    let dirs = [first.path().to_owned(), second.path().to_owned()];
    let state = ScrubState::default();
    scrub_pass(&dirs, 1000.0, &state, &ReadMetrics::default());
    let damaged = state.damaged();
    assert_eq!(
        damaged.len(),
        1,
        "{damaged:?}, {} files checked",
        state
            .files_checked
            .load(std::sync::atomic::Ordering::Relaxed)
    );
    assert_eq!(damaged[0].0, name);
    assert!(
        damaged[0].1.contains("in MD5SUMS of prophet dir 2"),
        "{damaged:?}"
    );
    let mut out = server::exposition::Exposition::default();
    state.render(&mut out);
    let text = out.into_string();
    assert!(text.contains("MD5SUMS of prophet dir 2"), "{text}");
    for dir in &dirs {
        assert_no_dir("/metrics", &text, dir);
    }
}
