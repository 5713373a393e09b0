//! Shared by the tests of remote table sources (`object_store.rs`,
//! `http_mirror.rs`, `remote_variants.rs`): `zugzwang tier build` and
//! `serve` run as child processes, a replay of a request log against two
//! servers, and the comparison of their answers; a Garage (`garage`) and an
//! HTTP mirror (`mirror`) to hold the tables. Needs `mod common; mod
//! process;` beside it.

#![allow(dead_code)]

use std::{
    io::Read,
    net::{SocketAddr, TcpListener},
    path::Path,
    process::Command,
};

use crate::process::{self, Server};

pub mod garage;
pub mod mirror;

/// A port nobody listens on now, for a server a test starts.
pub fn free_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("local addr")
}

/// Runs `zugzwang ARGS` to its end with `env` added; panics with its
/// output if it fails. Returns what it printed.
pub fn zugzwang(args: &[&str], env: &[(&str, String)]) -> String {
    let mut command = process::binary();
    command.args(args).env("NO_COLOR", "1");
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("run zugzwang");
    assert!(
        output.status.success(),
        "zugzwang {}: {}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `zugzwang ARGS` with `env` added, to its end: whether it succeeded, and
/// what it printed (stdout, then stderr).
pub fn try_zugzwang(args: &[&str], env: &[(&str, String)]) -> (bool, String) {
    let mut command = process::binary();
    command.args(args).env("NO_COLOR", "1");
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("run zugzwang");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// `zugzwang tier build --from FROM` (with `extra` flags and `env`) into a
/// new temp dir, returned with its path.
pub fn tier_build(
    from: &str,
    extra: &[&str],
    env: &[(&str, String)],
) -> (tempfile::TempDir, String) {
    let fast = tempfile::tempdir().expect("temp dir");
    let to = fast.path().display().to_string();
    let mut args = vec!["tier", "build", "--from", from, "--to", &to];
    args.extend_from_slice(extra);
    zugzwang(&args, env);
    (fast, to)
}

/// `zugzwang serve ARGS` with `env` added, on a free port, its caches
/// evicting nothing ([`NO_EVICTION`]).
pub fn serve(args: &[&str], env: &[(&str, String)]) -> Server {
    let mut command = process::binary();
    // Generous: a busy CI machine must not turn a slow answer into a 504.
    command
        .args(["serve", "--bind", "127.0.0.1:0", "--request-timeout", "120"])
        .args(NO_EVICTION)
        .args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    Server::start(command)
}

/// Fast tiers built by `tier build`, from local directories and from
/// remote sources holding the same tables.
pub struct Tiers {
    pub local: tempfile::TempDir,
    pub remote: tempfile::TempDir,
    /// What `tier build --from URL...` printed.
    pub remote_output: String,
}

impl Tiers {
    /// `remote_args` (`--s3-endpoint`) and `env` (credentials) are for
    /// the remote sources' build.
    pub fn build(
        local: &[&str],
        remote: &[&str],
        remote_args: &[&str],
        env: &[(&str, String)],
    ) -> Tiers {
        let local_dir = tempfile::tempdir().expect("temp dir");
        let remote_dir = tempfile::tempdir().expect("temp dir");
        let build = |from: &[&str], to: &tempfile::TempDir, extra: &[&str], env| {
            let to = to.path().display().to_string();
            let mut args = vec!["tier", "build", "--to", &to, "--from"];
            args.extend(from);
            args.extend(extra);
            zugzwang(&args, env)
        };
        build(local, &local_dir, &[], &[]);
        let remote_output = build(remote, &remote_dir, remote_args, env);
        Tiers {
            local: local_dir,
            remote: remote_dir,
            remote_output,
        }
    }

    pub fn dirs(&self) -> (String, String) {
        (
            self.local.path().display().to_string(),
            self.remote.path().display().to_string(),
        )
    }
}

/// One answer: its status, body and the reads `X-Probe-Reads` counted.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub body: String,
    pub slow: u64,
    pub gets: u64,
}

/// `GET path` on a fresh connection, with the read counts of its answer.
pub fn ask(addr: SocketAddr, path: &str) -> Answer {
    let mut stream = process::send_get(addr, path, true);
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("answer");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("a response head");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("a status");
    let reads = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("x-probe-reads")
                .then(|| value.trim().to_string())
        })
        .unwrap_or_default();
    Answer {
        status,
        body: body.to_string(),
        slow: field(&reads, "slow="),
        gets: field(&reads, "gets="),
    }
}

fn field(reads: &str, name: &str) -> u64 {
    reads
        .split(' ')
        .find_map(|f| f.strip_prefix(name)?.parse().ok())
        .unwrap_or(0)
}

/// The API path of a FEN.
pub fn api_path(fen: &str) -> String {
    format!("/standard?fen={}", fen.trim().replace(' ', "_"))
}

/// Every `step`-th line of a request log, from `first`, as API paths.
pub fn slice(log: &Path, first: usize, step: usize) -> Vec<String> {
    let text = std::fs::read_to_string(log).expect("request log");
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .skip(first)
        .step_by(step)
        .map(api_path)
        .collect()
}

/// The answers of `paths`, asked one after the other.
pub fn replay(addr: SocketAddr, paths: &[String]) -> Vec<Answer> {
    paths.iter().map(|path| ask(addr, path)).collect()
}

/// Asserts `remote` answered as `local` did, byte for byte, and that no
/// request of the remote sent more GETs than it made slow reads; returns
/// the totals (slow reads of the local, GETs of the remote).
pub fn assert_same(paths: &[String], local: &[Answer], remote: &[Answer]) -> (u64, u64) {
    for ((path, local), remote) in paths.iter().zip(local).zip(remote) {
        assert_eq!(
            local.status, 200,
            "{path}: the local server: {}",
            local.body
        );
        assert_eq!(
            (remote.status, &remote.body),
            (local.status, &local.body),
            "{path}: the remote source answered otherwise"
        );
        assert!(
            remote.gets <= remote.slow,
            "{path}: {} GETs for {} slow reads",
            remote.gets,
            remote.slow
        );
    }
    (
        local.iter().map(|a| a.slow).sum(),
        remote.iter().map(|a| a.gets).sum(),
    )
}

/// A replay's GETs against the local slow tier's slow reads over the same
/// requests (issue 46). Per request the check is exact against the remote
/// server's own slow reads (`assert_same`: each GET is one slow read; a
/// probe that joins another's GET makes a slow read and no GET). Against
/// the local tier it cannot be exact, per request or over a replay,
/// because what both count depends on the order in which a request's
/// probes read, and that order differs by design:
///
/// - A data read is a Syzygy block (64-byte aligned) widened to the 4 KiB
///   chunks of the data cache, so two probes' reads often overlap in part
///   (one chunk against two). Read longer-first they cost one read, the
///   shorter one then a cache hit; shorter-first, two. The local server
///   probes inline, one position after another in a fixed order; the
///   remote one sends every probe that needs a GET to the pool at once,
///   in whatever order the threads run. On 400 explore-345 requests, 301
///   of 3436 GETs overlapped an earlier GET's range in part.
/// - A GET that has just landed is no longer in flight but its bytes are
///   not yet in the data cache (they are checked against the block sums
///   first): a probe asking for the same range in those microseconds
///   sends it again (34 of the 3436).
/// - The local count moves too: a table's first open is refused inline,
///   so the probes that need it run on the pool together and may read one
///   block twice (no single flight for page-cache hits): 3414 and 3490
///   slow reads on two runs of the same replay.
/// - With the default 8 MiB data cache, which blocks are evicted depends
///   on the order as well; the tests give both servers caches that evict
///   nothing ([`NO_EVICTION`]).
///
/// Measured so: 29 to 36 of 400 requests made more GETs than the local
/// tier's slow reads (by 1 to 7), and about as many fewer; over the replay
/// the GETs were 98.5 % and 100.7 % of the local slow reads on the 3-4-5
/// tables (`object_store.rs`), 103.6 % (543 for 524) on the 3-4 piece
/// mirror (`http_mirror.rs`), where fewer reads make each order effect
/// weigh more. So 10 % more are allowed over a replay.
pub fn assert_gets_within(gets: u64, slow: u64) {
    assert!(
        gets * 100 <= slow * 110,
        "{gets} GETs for the {slow} slow reads of the local tier"
    );
}

/// `serve` flags that give every cache room for a test's whole replay, so
/// that no answer, block or probe is evicted in an order that depends on
/// timing (see [`assert_gets_within`]).
pub const NO_EVICTION: [&str; 2] = ["--memory-mb", "1024"];

/// Whether `command` runs (`--version` or the like succeeds).
pub fn installed(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}
