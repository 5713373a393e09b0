//! The `zugzwang-bench` binary end to end, as the scripts in `server/bench/`
//! drive it: `serve` with every benchmark switch on the embedded tables,
//! `replay` of a handful of FENs against it, and `plot` of the result.

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::{SocketAddr, TcpStream},
    path::Path,
    process::{Child, Command, Output, Stdio},
    sync::mpsc,
    thread,
    time::Duration,
};

/// Generous: a busy 2-core CI machine starts a debug server slowly.
const PATIENCE: Duration = Duration::from_secs(60);

/// Positions the embedded 3- and 4-piece tables answer.
const FENS: [&str; 6] = [
    "4k3/8/8/8/8/8/8/3QK3 w - - 0 1",
    "4k3/8/8/8/8/8/8/4K2R w - - 0 1",
    "8/8/8/8/8/8/8/K1k5 w - - 0 1",
    "8/8/8/4k3/8/8/3PK3/8 w - - 0 1",
    "4k3/8/8/8/8/8/4P3/4K3 b - - 0 1",
    "8/8/8/8/8/2k5/6q1/K7 w - - 0 1",
];

fn zugzwang_bench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_zugzwang-bench"))
}

fn run(command: &mut Command) -> Output {
    let output = command.output().expect("run zugzwang-bench");
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// A `zugzwang-bench serve` child, killed on drop.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = zugzwang_bench()
            .args(["serve", "--bind", "127.0.0.1:0"])
            .args(args)
            .env("NO_COLOR", "1")
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start zugzwang-bench serve");
        let stderr = child.stderr.take().expect("stderr");
        let (found, addr) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("serving on http://").nth(1) {
                    let _ = found.send(rest.trim().to_string());
                }
            }
        });
        let Ok(addr) = addr.recv_timeout(PATIENCE) else {
            let _ = child.kill();
            panic!("zugzwang-bench serve did not start");
        };
        let addr = addr.parse().expect("served address");
        Server { child, addr }
    }

    fn get(&self, path: &str) -> String {
        let mut stream = TcpStream::connect(self.addr).expect("connect");
        stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
        )
        .expect("send");
        let mut text = String::new();
        stream.read_to_string(&mut text).expect("answer");
        text
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn non_empty(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.len() > 0)
}

#[test]
fn serve_replay_and_plot_work_together() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = dir.path().join("trace.tsv");
    // The tables from a directory, as the built-in ones are read from
    // memory and have no disk reads to trace. No checksums are recorded
    // for the repository's copy (and none are written into the checkout):
    // served anyway.
    let tables = concat!(env!("CARGO_MANIFEST_DIR"), "/../tables");
    let server = Server::start(&[
        "--tables",
        tables,
        "--allow-unchecked",
        "--sequential-probes",
        "--pool-only-probes",
        "--read-trace",
        trace.to_str().expect("utf-8 path"),
        "--cache-mb",
        "0",
    ]);
    assert!(trace.exists(), "--read-trace did not start the trace");

    let log = dir.path().join("log.txt");
    std::fs::write(&log, format!("# a few positions\n{}\n", FENS.join("\n"))).expect("log");
    let out = dir.path().join("replay.tsv");
    let summary = dir.path().join("summary.md");
    let replayed = run(zugzwang_bench()
        .arg("replay")
        .arg("--endpoint")
        .arg(format!("http://{}/standard", server.addr))
        .arg("--log")
        .arg(&log)
        .args(["--clients", "2", "--warmup", "1", "--label", "smoke"])
        .arg("--out")
        .arg(&out)
        .arg("--summary")
        .arg(&summary));
    let stdout = String::from_utf8_lossy(&replayed.stdout);
    assert!(stdout.contains("| run | requests |"), "{stdout}");
    assert!(stdout.contains("| smoke | 5 | 0 |"), "{stdout}");
    let rows = std::fs::read_to_string(&summary).expect("summary file");
    assert!(rows.starts_with("| smoke | 5 | 0 |"), "{rows}");
    let results = std::fs::read_to_string(&out).expect("result file");
    let lines: Vec<&str> = results.lines().collect();
    assert_eq!(lines[0], bench::result::HEADER);
    assert_eq!(lines.len(), 1 + FENS.len(), "{results}");
    assert!(
        lines[1..]
            .iter()
            .all(|l| l.split('\t').nth(2) == Some("200")),
        "{results}"
    );

    // --pool-only-probes reached the engine: no probe stayed on the async workers.
    let metrics = server.get("/metrics");
    assert!(
        metrics.contains("zugzwang_probes_total{place=\"inline\"} 0\n"),
        "{metrics}"
    );
    drop(server);

    let svg = dir.path().join("ecdf.svg");
    let png = dir.path().join("ecdf.png");
    run(zugzwang_bench()
        .arg("plot")
        .arg(&out)
        .args(["--label", "smoke", "--ping", "0"])
        .arg("--out")
        .arg(&svg)
        .arg("--out")
        .arg(&png));
    assert!(non_empty(&svg) && non_empty(&png), "plot wrote nothing");
}

/// `zugzwang-bench serve` takes every flag of `zugzwang serve` (flattened
/// from the server library) and the benchmark switches besides.
#[test]
fn serve_help_lists_the_server_flags_and_the_benchmark_switches() {
    let help = run(zugzwang_bench().args(["serve", "--help"]));
    let help = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--bind",
        "--tables",
        "--allow-unchecked",
        "--cache-mb",
        "--request-log",
        "--drain-timeout",
        "--sequential-probes",
        "--pool-only-probes",
        "--read-trace",
    ] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
    for command in ["replay", "plot"] {
        run(zugzwang_bench().args([command, "--help"]));
    }
}
