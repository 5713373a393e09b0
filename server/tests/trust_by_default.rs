//! Trust by default, on the real binary as an operator runs it: a table
//! whose bytes were never checked is refused, a table a check found damaged
//! stays refused across restarts (even with `--allow-unchecked`) until it
//! is replaced, and no answer is ever a wrong 200.

mod common;
mod process;

use std::{
    fs,
    net::SocketAddr,
    path::{Path, PathBuf},
    process::Output,
};

use process::{Server, binary, get, serve};

/// The table damaged in these tests, and the material of its positions.
const TABLE: &str = "KQvKR.rtbz";

/// KQvKR positions spread over the board (White: K, Q; Black: K, R),
/// legal ones only, from a fixed sequence so every run asks the same.
fn positions(count: usize) -> Vec<String> {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % 64) as usize
    };
    let mut fens = Vec::new();
    while fens.len() < count {
        let squares = [next(), next(), next(), next()];
        let mut sorted = squares;
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            continue;
        }
        let mut board = [' '; 64];
        for (square, piece) in squares.iter().zip(['K', 'Q', 'k', 'r']) {
            board[*square] = piece;
        }
        let fen = format!("{}_w_-_-_0_1", placement(&board));
        let legal = app::variant::parse_variant_fen(
            app::variant::Variant::Standard,
            &fen.replace('_', " "),
        )
        .is_ok();
        if legal {
            fens.push(fen);
        }
    }
    fens
}

fn placement(board: &[char; 64]) -> String {
    let mut ranks = Vec::new();
    for rank in (0..8).rev() {
        let mut text = String::new();
        let mut empty = 0;
        for file in 0..8 {
            match board[rank * 8 + file] {
                ' ' => empty += 1,
                piece => {
                    if empty > 0 {
                        text.push_str(&empty.to_string());
                        empty = 0;
                    }
                    text.push(piece);
                }
            }
        }
        if empty > 0 {
            text.push_str(&empty.to_string());
        }
        ranks.push(text);
    }
    ranks.join("/")
}

/// Answers of a server for the positions: status and body.
fn answers(addr: SocketAddr, fens: &[String]) -> Vec<(u16, String)> {
    fens.iter()
        .map(|fen| get(addr, &format!("/standard?fen={fen}")))
        .collect()
}

/// Asserts no 200 differs from the truth (the embedded tables), no body
/// shows `dir`, and returns how many were 200.
fn assert_never_wrong(got: &[(u16, String)], truth: &[(u16, String)], dir: &Path) -> usize {
    let mut ok = 0;
    for ((status, body), (_, right)) in got.iter().zip(truth) {
        assert!(
            !body.contains(&*dir.to_string_lossy()),
            "a body shows the tables' directory: {body}"
        );
        if *status == 200 {
            assert_eq!(body, right, "a wrong 200");
            ok += 1;
        } else {
            assert!(*status >= 500, "{status} {body}");
        }
    }
    ok
}

/// One byte flipped every 4 KiB, as a failing disk might, keeping the
/// modification time (the checksums recorded before still claim to apply).
fn flip_every_4k(path: &Path) {
    common::damage(path, |bytes| {
        for i in (100..bytes.len()).step_by(4096) {
            bytes[i] ^= 0x5a;
        }
    });
}

/// The whole response, head and body.
fn raw_response(addr: SocketAddr, path: &str) -> String {
    let mut stream = process::send_get(addr, path, true);
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut stream, &mut raw).expect("read the response");
    String::from_utf8_lossy(&raw).into_owned()
}

fn run(args: &[&str]) -> Output {
    binary()
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run zugzwang")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

struct Setup {
    tables: tempfile::TempDir,
    state: tempfile::TempDir,
    truth: Vec<(u16, String)>,
    fens: Vec<String>,
}

impl Setup {
    fn new() -> Setup {
        let fens = positions(150);
        let embedded = serve(&[]);
        let truth = answers(embedded.addr, &fens);
        assert!(truth.iter().all(|(status, _)| *status == 200));
        Setup {
            tables: common::copy_of_embedded_tables(),
            state: tempfile::tempdir().expect("state dir"),
            truth,
            fens,
        }
    }

    fn dir(&self) -> &Path {
        self.tables.path()
    }

    fn table(&self) -> PathBuf {
        self.dir().join(TABLE)
    }

    fn state(&self) -> &str {
        self.state.path().to_str().expect("utf-8 temp path")
    }

    fn serve(&self, extra: &[&str]) -> Server {
        let dir = self.dir().to_str().expect("utf-8 temp path");
        let mut args = vec!["--tables", dir, "--state-dir", self.state()];
        args.extend(extra);
        serve(&args)
    }

    fn check(&self, server: &Server) -> usize {
        let got = answers(server.addr, &self.fens);
        assert_never_wrong(&got, &self.truth, self.dir())
    }
}

#[test]
fn never_checked_tables_are_refused_and_the_start_says_what_to_run() {
    let setup = Setup::new();
    flip_every_4k(&setup.table());
    let server = setup.serve(&[]);
    assert_eq!(setup.check(&server), 0, "nothing unchecked answers");
    let log = server.log();
    assert!(
        log.contains("never checked") && log.contains("zugzwang verify --init"),
        "{log}"
    );
    let (status, body) = get(server.addr, "/standard?fen=4k3/8/8/8/8/8/8/3QK3_w_-_-_0_1");
    assert_eq!(status, 500, "{body}");
    assert!(
        body.contains("KQvK.rtb") && body.contains("verify --init"),
        "{body}"
    );
    let (_, metrics) = get(server.addr, "/metrics");
    assert!(
        metrics.contains("zugzwang_tables_without_checksums 70"),
        "{metrics}"
    );

    // --allow-unchecked answers, and says so.
    let allowed = setup.serve(&["--allow-unchecked"]);
    let (status, body) = get(allowed.addr, "/standard?fen=4k3/8/8/8/8/8/8/3QK3_w_-_-_0_1");
    assert_eq!(status, 200, "{body}");
    let raw = raw_response(allowed.addr, "/standard?fen=4k3/8/8/8/8/8/8/3QK3_w_-_-_0_1");
    assert!(
        raw.to_ascii_lowercase().contains("x-integrity: unchecked"),
        "{raw}"
    );
    let (_, metrics) = get(allowed.addr, "/metrics");
    assert!(
        metrics.contains("zugzwang_unchecked_answers_total 2"),
        "{metrics}"
    );
}

#[test]
fn a_failed_verify_init_quarantines_the_table_across_restarts() {
    let setup = Setup::new();
    flip_every_4k(&setup.table());
    let dir = setup.dir().to_str().expect("utf-8");
    let init = run(&["verify", "--init", dir, "--state-dir", setup.state()]);
    assert!(!init.status.success(), "{}", text(&init));
    assert!(
        text(&init).contains(&format!("FAILED {TABLE}")),
        "{}",
        text(&init)
    );
    // Even --allow-unchecked does not serve a table found damaged.
    let server = setup.serve(&["--allow-unchecked"]);
    assert!(setup.check(&server) < setup.fens.len() / 4);
    let (status, body) = get(server.addr, &format!("/standard?fen={}", setup.fens[1]));
    assert_eq!(status, 500);
    assert!(body.contains(TABLE) && body.contains("damaged"), "{body}");
    let (_, metrics) = get(server.addr, "/metrics");
    assert!(
        metrics.contains(&format!(
            "zugzwang_table_quarantined{{table=\"{TABLE}\",check=\"verify --init\"}} 1"
        )),
        "{metrics}"
    );
    assert!(!metrics.contains(dir), "{metrics}");
    let (_, tables) = get(server.addr, "/tables");
    let tables: serde_json::Value = serde_json::from_str(&tables).expect("JSON");
    assert_eq!(tables["damaged"][0]["table"], TABLE, "{tables}");
    assert!(!tables.to_string().contains(dir), "{tables}");
    let (_, page) = get(server.addr, "/");
    assert!(page.contains("KQvKR is damaged"), "the page names it");
    let status = run(&["tables", "status", dir, "--state-dir", setup.state()]);
    assert!(!status.status.success());
    assert!(
        text(&status).contains(&format!("QUARANTINED {TABLE}")),
        "{}",
        text(&status)
    );

    // Replaced by a good copy (a new file) and checked, it is served again.
    fs::remove_file(setup.table()).expect("rm");
    fs::copy(common::embedded_tables_dir().join(TABLE), setup.table()).expect("copy");
    let init = run(&["verify", "--init", dir, "--state-dir", setup.state()]);
    assert!(init.status.success(), "{}", text(&init));
    let server = setup.serve(&[]);
    assert_eq!(setup.check(&server), setup.fens.len(), "{}", server.log());
}

#[test]
fn a_truncated_table_found_by_verify_init_is_quarantined() {
    let setup = Setup::new();
    let len = fs::metadata(setup.table()).expect("stat").len();
    fs::File::options()
        .write(true)
        .open(setup.table())
        .and_then(|f| f.set_len(len - 1000))
        .expect("truncate");
    let dir = setup.dir().to_str().expect("utf-8");
    let init = run(&["verify", "--init", dir, "--state-dir", setup.state()]);
    assert!(!init.status.success(), "{}", text(&init));
    assert!(text(&init).contains("QUARANTINED"), "{}", text(&init));
    let server = setup.serve(&["--allow-unchecked"]);
    assert!(setup.check(&server) < setup.fens.len() / 4);
    let (_, body) = get(server.addr, &format!("/standard?fen={}", setup.fens[1]));
    assert!(body.contains("damaged") && body.contains(TABLE), "{body}");
}

#[test]
fn a_failed_tier_build_quarantines_the_table() {
    let setup = Setup::new();
    flip_every_4k(&setup.table());
    let fast = tempfile::tempdir().expect("fast dir");
    let (dir, fast_dir) = (
        setup.dir().to_str().expect("utf-8"),
        fast.path().to_str().expect("utf-8"),
    );
    let build = run(&[
        "tier",
        "build",
        "--from",
        dir,
        "--to",
        fast_dir,
        "--state-dir",
        setup.state(),
    ]);
    assert!(!build.status.success(), "{}", text(&build));
    let server = setup.serve(&["--fast", fast_dir, "--allow-unchecked"]);
    // Only positions whose answer needs no DTZ of this table answer.
    assert!(setup.check(&server) < setup.fens.len() / 4);
}

#[test]
fn damage_after_a_good_verify_init_is_caught_on_read_and_remembered() {
    let setup = Setup::new();
    let dir = setup.dir().to_str().expect("utf-8");
    let init = run(&["verify", "--init", dir, "--state-dir", setup.state()]);
    assert!(init.status.success(), "{}", text(&init));
    flip_every_4k(&setup.table());
    let server = setup.serve(&[]);
    let served = setup.check(&server);
    assert!(served < setup.fens.len(), "the damage was read");
    let (_, metrics) = get(server.addr, "/metrics");
    assert!(
        metrics.contains("zugzwang_tables_quarantined 1"),
        "{metrics}"
    );
    drop(server);
    // After a restart nothing of it is served, damaged block or not.
    let server = setup.serve(&[]);
    assert!(setup.check(&server) < setup.fens.len() / 4);
    let verify = run(&["verify", "--partial", dir, "--state-dir", setup.state()]);
    assert!(!verify.status.success(), "{}", text(&verify));
}

#[test]
fn a_read_only_table_directory_keeps_checksums_and_records_in_the_state_directory() {
    let setup = Setup::new();
    let dir = setup.dir().to_str().expect("utf-8");
    // A file where `.zugzwang` would go: nothing can be written beside the tables.
    fs::write(setup.dir().join(".zugzwang"), b"").expect("block");
    let init = run(&["verify", "--init", dir, "--state-dir", setup.state()]);
    assert!(init.status.success(), "{}", text(&init));
    assert!(
        setup
            .state
            .path()
            .join("checksums")
            .join(format!("{TABLE}.manifest"))
            .is_file()
    );
    flip_every_4k(&setup.table());
    let server = setup.serve(&[]);
    assert!(setup.check(&server) < setup.fens.len());
    let records = fs::read_dir(setup.state.path().join("quarantine"))
        .unwrap_or_else(|err| panic!("no records ({err}): {}", server.log()));
    assert_eq!(records.count(), 1);
}

/// Swaps the first two data blocks of a Prophet file together with their
/// lengths in the block-size list: the file stays well formed and its own
/// checksum field (an XOR over the values) does not see it.
fn swap_first_two_blocks(path: &Path) {
    common::damage(path, |bytes| {
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let (positions, per_block) = (u64_at(8), u64_at(16));
        assert!(per_block <= 65_535, "u16 block sizes");
        let blocks = positions.div_ceil(per_block) as usize;
        assert!(blocks >= 2, "at least two blocks");
        let size = |bytes: &[u8], i: usize| {
            u16::from_le_bytes([bytes[24 + 2 * i], bytes[25 + 2 * i]]) as usize
        };
        let (a, b) = (size(bytes, 0), size(bytes, 1));
        let data = 24 + 2 * blocks;
        let swapped: Vec<u8> = bytes[data + a..data + a + b]
            .iter()
            .chain(&bytes[data..data + a])
            .copied()
            .collect();
        bytes[data..data + a + b].copy_from_slice(&swapped);
        bytes[24..26].copy_from_slice(&(b as u16).to_le_bytes());
        bytes[26..28].copy_from_slice(&(a as u16).to_le_bytes());
    });
}

/// Asserts every 200 has the truth's WDL and DTZ and no `dtm` other than
/// the truth's (null is allowed: unknown is not wrong); returns how many
/// `dtm` values (root and moves) were null.
fn assert_no_wrong_dtm(got: &[(u16, String)], truth: &[(u16, String)], dir: &Path) -> usize {
    let mut nulls = 0;
    for ((status, body), (_, right)) in got.iter().zip(truth) {
        assert_eq!(*status, 200, "DTM damage costs only dtm: {body}");
        assert!(!body.contains(&*dir.to_string_lossy()), "{body}");
        let got: serde_json::Value = serde_json::from_str(body).expect("JSON");
        let right: serde_json::Value = serde_json::from_str(right).expect("JSON");
        // By move: a null dtm may change lila's order of equal moves.
        let entries = |v: &serde_json::Value| {
            let mut all = vec![v.clone()];
            let mut moves = v["moves"].as_array().cloned().unwrap_or_default();
            moves.sort_by_key(|m| m["uci"].as_str().unwrap_or("").to_string());
            all.extend(moves);
            all
        };
        let (got_all, right_all) = (entries(&got), entries(&right));
        assert_eq!(got_all.len(), right_all.len(), "{body}");
        for (g, r) in got_all.iter().zip(&right_all) {
            assert_eq!(g["uci"], r["uci"]);
            assert_eq!(g["dtz"], r["dtz"], "{body}");
            assert_eq!(g["category"], r["category"], "{body}");
            if g["dtm"].is_null() {
                nulls += usize::from(!r["dtm"].is_null());
            } else {
                assert_eq!(g["dtm"], r["dtm"], "a wrong dtm: {body}");
            }
        }
    }
    nulls
}

struct DtmSetup {
    dtm: tempfile::TempDir,
    state: tempfile::TempDir,
    fens: Vec<String>,
    truth: Vec<(u16, String)>,
}

impl DtmSetup {
    fn new() -> DtmSetup {
        let fens = positions(80);
        let embedded = serve(&[]);
        let truth = answers(embedded.addr, &fens);
        let dtm = common::copy_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tables-prophet"));
        DtmSetup {
            dtm,
            state: tempfile::tempdir().expect("state dir"),
            fens,
            truth,
        }
    }

    fn dir(&self) -> &str {
        self.dtm.path().to_str().expect("utf-8")
    }

    fn state(&self) -> &str {
        self.state.path().to_str().expect("utf-8")
    }

    fn serve(&self) -> Server {
        serve(&["--dtm", self.dir(), "--state-dir", self.state()])
    }

    fn verify_init(&self) -> Output {
        run(&["verify", "--init", self.dir(), "--state-dir", self.state()])
    }
}

#[test]
fn swapped_prophet_blocks_after_a_good_verify_init_cost_only_dtm() {
    let setup = DtmSetup::new();
    let init = setup.verify_init();
    assert!(init.status.success(), "{}", text(&init));
    swap_first_two_blocks(&setup.dtm.path().join("KQKR.egtb.bz"));
    let server = setup.serve();
    let got = answers(server.addr, &setup.fens);
    let nulls = assert_no_wrong_dtm(&got, &setup.truth, setup.dtm.path());
    assert!(nulls > 0, "the damage was read: {}", server.log());
}

#[test]
fn prophet_files_without_md5sums_are_unchecked_and_cost_only_dtm() {
    let setup = DtmSetup::new();
    fs::remove_file(setup.dtm.path().join("MD5SUMS")).expect("rm MD5SUMS");
    swap_first_two_blocks(&setup.dtm.path().join("KQKR.egtb.bz"));
    let verify = run(&["verify", setup.dir(), "--state-dir", setup.state()]);
    assert!(!verify.status.success(), "{}", text(&verify));
    assert!(
        text(&verify).contains("UNCHECKED KQKR.egtb.bz"),
        "{}",
        text(&verify)
    );
    let init = setup.verify_init();
    assert!(!init.status.success(), "{}", text(&init));
    let server = setup.serve();
    let got = answers(server.addr, &setup.fens);
    let nulls = assert_no_wrong_dtm(&got, &setup.truth, setup.dtm.path());
    assert!(nulls > 0);
}

#[test]
fn truncated_and_flipped_prophet_files_cost_only_dtm() {
    let setup = DtmSetup::new();
    let init = setup.verify_init();
    assert!(init.status.success(), "{}", text(&init));
    flip_every_4k(&setup.dtm.path().join("KQKR.egtb.bz"));
    let kqk = setup.dtm.path().join("KQK.egtb.bz");
    let len = fs::metadata(&kqk).expect("stat").len();
    fs::File::options()
        .write(true)
        .open(&kqk)
        .and_then(|f| f.set_len(len / 2))
        .expect("truncate");
    let server = setup.serve();
    let got = answers(server.addr, &setup.fens);
    assert!(assert_no_wrong_dtm(&got, &setup.truth, setup.dtm.path()) > 0);
    let (_, metrics) = get(server.addr, "/metrics");
    assert!(!metrics.contains(setup.dir()), "{metrics}");
}
