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
    assert!(body.contains("KQvK.rtb") && body.contains("verify --init"), "{body}");
    let (_, metrics) = get(server.addr, "/metrics");
    assert!(metrics.contains("zugzwang_tables_without_checksums 70"), "{metrics}");

    // --allow-unchecked answers, and says so.
    let allowed = setup.serve(&["--allow-unchecked"]);
    let (status, body) = get(allowed.addr, "/standard?fen=4k3/8/8/8/8/8/8/3QK3_w_-_-_0_1");
    assert_eq!(status, 200, "{body}");
    let raw = raw_response(allowed.addr, "/standard?fen=4k3/8/8/8/8/8/8/3QK3_w_-_-_0_1");
    assert!(raw.to_ascii_lowercase().contains("x-integrity: unchecked"), "{raw}");
    let (_, metrics) = get(allowed.addr, "/metrics");
    assert!(metrics.contains("zugzwang_unchecked_answers_total 2"), "{metrics}");
}

#[test]
fn a_failed_verify_init_quarantines_the_table_across_restarts() {
    let setup = Setup::new();
    flip_every_4k(&setup.table());
    let dir = setup.dir().to_str().expect("utf-8");
    let init = run(&["verify", "--init", dir, "--state-dir", setup.state()]);
    assert!(!init.status.success(), "{}", text(&init));
    assert!(text(&init).contains(&format!("FAILED {TABLE}")), "{}", text(&init));
    // Even --allow-unchecked does not serve a table found damaged.
    let server = setup.serve(&["--allow-unchecked"]);
    assert!(setup.check(&server) < setup.fens.len() / 4);
    let (status, body) = get(server.addr, &format!("/standard?fen={}", setup.fens[1]));
    assert_eq!(status, 500);
    assert!(body.contains(TABLE) && body.contains("damaged"), "{body}");
    let (_, metrics) = get(server.addr, "/metrics");
    assert!(
        metrics.contains(&format!("zugzwang_table_quarantined{{table=\"{TABLE}\",check=\"verify --init\"}} 1")),
        "{metrics}"
    );
    assert!(!metrics.contains(dir), "{metrics}");
    let status = run(&["tables", "status", dir, "--state-dir", setup.state()]);
    assert!(!status.status.success());
    assert!(text(&status).contains(&format!("QUARANTINED {TABLE}")), "{}", text(&status));

    // Replaced by a good copy (a new file) and checked, it is served again.
    fs::remove_file(setup.table()).expect("rm");
    fs::copy(common::embedded_tables_dir().join(TABLE), setup.table()).expect("copy");
    let init = run(&["verify", "--init", dir, "--state-dir", setup.state()]);
    assert!(init.status.success(), "{}", text(&init));
    let server = setup.serve(&[]);
    assert_eq!(setup.check(&server), setup.fens.len(), "{}", server.log());
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
    let build = run(&["tier", "build", "--from", dir, "--to", fast_dir, "--state-dir", setup.state()]);
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
    assert!(metrics.contains("zugzwang_tables_quarantined 1"), "{metrics}");
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
    assert!(setup.state.path().join("checksums").join(format!("{TABLE}.manifest")).is_file());
    flip_every_4k(&setup.table());
    let server = setup.serve(&[]);
    assert!(setup.check(&server) < setup.fens.len());
    let records = fs::read_dir(setup.state.path().join("quarantine"))
        .unwrap_or_else(|err| panic!("no records ({err}): {}", server.log()));
    assert_eq!(records.count(), 1);
}
