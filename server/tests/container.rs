//! The container image (`server/container/`) as a self-hoster runs it, in
//! podman: built by `build.sh` from the release build in `target/` (the
//! server and the `--split` page), tables mounted read-only and checked once
//! with `verify --init` into the state volume, then served. It answers
//! 5-piece positions byte for byte as the binary beside it does, serves the
//! page, says it is healthy, sizes its caches from the container's memory
//! limit, holds no shell, runs as a non-root user and stops on SIGTERM with
//! exit status 0. Prints the image's size and how long the container took
//! to answer.
//!
//! Ignored in a plain `cargo test`: it needs the release build, which
//! `.ci/run` makes in its end-to-end step (`cargo leptos end-to-end
//! --release --split`) and then runs this with `--ignored`. Without podman
//! (or the release build, or `../shared`) it says SKIPPED in one line, or
//! fails under `ZUGZWANG_REQUIRE_SHARED` (`.ci/install` installs podman).
//!
//! The podman flags below are this machine's, not a user's: runc with
//! cgroupfs (crun refuses the hybrid cgroup layout), the open-files and
//! process limits as they are (raising them is refused), the host's network
//! and `--isolation chroot` for the build. `server/docs/operations.md`
//! shows the plain `podman run -p 3000:3000`.

mod common;
mod process;

use std::{
    net::{SocketAddr, TcpListener},
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
    thread,
    time::{Duration, Instant},
};

use process::{PATIENCE, get};

/// The user the image runs as (`server/container/build.sh`).
const USER: &str = "65532:65532";

/// King against king: answered once the server listens (the health check's).
const KVK: &str = "/standard?fen=4k3/8/8/8/8/8/8/4K3_w_-_-_0_1";

/// The Lucena position: KRPvKR, white to move wins.
const LUCENA: &str = "1K1k4/1P6/8/8/8/8/r7/2R5_w_-_-_0_1";

fn podman_installed() -> bool {
    Command::new("podman")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// `podman` with the runtime this machine can run containers with.
fn podman() -> Command {
    let mut command = Command::new("podman");
    command.args(["--runtime", "runc", "--cgroup-manager", "cgroupfs"]);
    command
}

/// Runs `podman args...` to the end; panics with its output unless it succeeded.
fn podman_ok(args: &[&str]) -> String {
    let output = podman().args(args).output().expect("run podman");
    assert!(
        output.status.success(),
        "podman {}: {}",
        args.join(" "),
        text(&output)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

fn text(output: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The run flags every container of this test gets (see the module's notes).
const RUN_FLAGS: &[&str] = &[
    "--ulimit",
    "nofile=1024:1024",
    "--ulimit",
    "nproc=1024:1024",
    "--network",
    "host",
    // podman starts the HEALTHCHECK's timer with systemd, which is not
    // here; the test runs the check itself.
    "--health-interval",
    "disable",
];

/// What the test made, removed however it ends.
struct Made {
    image: String,
    containers: Vec<String>,
    volume: String,
}

impl Drop for Made {
    fn drop(&mut self) {
        for name in &self.containers {
            let _ = podman()
                .args(["rm", "--force", "--volumes", "--time", "0", name])
                .output();
        }
        let _ = podman()
            .args(["volume", "rm", "--force", &self.volume])
            .output();
        let _ = podman().args(["rmi", "--force", &self.image]).output();
    }
}

/// A port nothing listens on now (the kernel's pick, released at once).
fn free_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("local addr")
}

/// The release build `cargo leptos build --release --split` leaves beside
/// this test's own (debug) binary: the server and the site.
fn release_build() -> (PathBuf, PathBuf) {
    let target = Path::new(env!("CARGO_BIN_EXE_zugzwang"))
        .ancestors()
        .nth(2)
        .expect("the binary is in target/debug")
        .to_path_buf();
    (target.join("release/zugzwang"), target.join("site"))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace holds server/")
        .to_path_buf()
}

/// A line of the test's findings, straight to stderr: the harness keeps
/// `eprintln!` of a passing test to itself.
fn report(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Polls until `GET path` answers 200; how long that was after `started`.
fn wait_for_200(addr: SocketAddr, path: &str, container: &str, started: Instant) -> Duration {
    loop {
        if std::net::TcpStream::connect(addr).is_ok() && get(addr, path).0 == 200 {
            return started.elapsed();
        }
        if started.elapsed() > PATIENCE {
            let logs = podman().args(["logs", container]).output().expect("logs");
            panic!("{container} did not answer {path}:\n{}", text(&logs));
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// The sum of the `zugzwang_memory_budget_bytes` samples on `/metrics`.
fn memory_budget(addr: SocketAddr) -> f64 {
    let (status, metrics) = get(addr, "/metrics");
    assert_eq!(status, 200, "{metrics}");
    metrics
        .lines()
        .filter(|line| line.starts_with("zugzwang_memory_budget_bytes{"))
        .filter_map(|line| line.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

/// Up to `count` 5-piece positions of the expected values, as query FENs.
fn five_piece_fens(csv: &Path, count: usize) -> Vec<String> {
    let text = std::fs::read_to_string(csv).expect("positions");
    text.lines()
        .skip(1)
        .filter_map(|line| line.split(',').next())
        .filter(|fen| {
            let board = fen.split(' ').next().unwrap_or_default();
            board.chars().filter(char::is_ascii_alphabetic).count() == 5
        })
        .take(count)
        .map(|fen| fen.replace(' ', "_"))
        .collect()
}

/// Files in the image whose names are a shell, a package manager or a
/// compiler, by walking its mounted root.
fn tools_in(root: &Path) -> Vec<String> {
    const TOOLS: &[&str] = &[
        "sh", "bash", "dash", "ash", "busybox", "apt", "apt-get", "dpkg", "apk", "rpm", "cc",
        "gcc", "rustc", "cargo", "curl", "wget",
    ];
    let mut found = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read the image's files") {
            let entry = entry.expect("entry");
            let path = entry.path();
            if entry.file_type().expect("file type").is_dir() {
                dirs.push(path);
            } else if TOOLS.contains(&entry.file_name().to_string_lossy().as_ref()) {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

#[test]
#[ignore = "needs the release build and podman; .ci/run runs it after the end-to-end step"]
fn the_image_serves_what_the_binary_serves() {
    if !podman_installed() {
        common::missing(
            "podman not installed (apt-get install -y podman runc); the container image was not tested",
        );
        return;
    }
    let (bin, site) = release_build();
    if !bin.is_file() || !site.join("hash.txt").is_file() {
        common::missing(&format!(
            "{} or {} not found (`cargo leptos build --release --split` makes them); the container image was not tested",
            bin.display(),
            site.join("hash.txt").display()
        ));
        return;
    }
    let Some((tables, csv)) = common::shared_tables_and("testdata/positions-345.csv") else {
        return;
    };
    let tables = tables.canonicalize().expect("the shared tables' path");

    let id = std::process::id();
    let mut made = Made {
        image: format!("localhost/zugzwang-test-{id}:latest"),
        containers: Vec::new(),
        volume: format!("zugzwang-test-{id}-state"),
    };
    let image = made.image.clone();

    // The image, as build.sh makes it from the release build.
    let started = Instant::now();
    let build = Command::new("bash")
        .arg(root().join("server/container/build.sh"))
        .env("IMAGE", &image)
        .env("ZUGZWANG_BIN", &bin)
        .env("ZUGZWANG_SITE", &site)
        .env("BUILD_FLAGS", "--isolation chroot")
        .env("CONTAINER_TOOL", "podman")
        .output()
        .expect("run build.sh");
    assert!(build.status.success(), "build.sh: {}", text(&build));
    let build_time = started.elapsed();
    let size: u64 = podman_ok(&["image", "inspect", "--format", "{{.Size}}", &image])
        .parse()
        .expect("the image's size");
    report(&format!(
        "container image {image}: {:.1} MB ({size} bytes), built in {:.1} s",
        size as f64 / 1e6,
        build_time.as_secs_f64()
    ));

    // Non-root, and nothing in it but the server, its libraries and the page.
    let user = podman_ok(&["image", "inspect", "--format", "{{.Config.User}}", &image]);
    assert_eq!(user, USER, "the image's user");
    let mount = podman_ok(&["image", "mount", &image]);
    let mounted = Path::new(&mount);
    assert!(!mounted.join("bin/sh").exists(), "/bin/sh is in the image");
    let tools = tools_in(mounted);
    assert!(
        mounted
            .join("usr/local/share/zugzwang/site/hash.txt")
            .is_file(),
        "the site is not in the image"
    );
    podman_ok(&["image", "unmount", &image]);
    assert!(tools.is_empty(), "the image holds {tools:?}");
    let shell = podman()
        .args(["run", "--rm"])
        .args(RUN_FLAGS)
        .args(["--entrypoint", "/bin/sh", &image, "-c", "true"])
        .output()
        .expect("run podman");
    assert!(!shell.status.success(), "/bin/sh ran: {}", text(&shell));

    // The tables read-only; their checksums go to the state volume.
    let mount_tables = format!("{}:/tables:ro", tables.display());
    let mount_state = format!("{}:/state", made.volume);
    podman_ok(&["volume", "create", &made.volume]);
    let verify = podman()
        .args(["run", "--rm"])
        .args(RUN_FLAGS)
        .args(["-v", &mount_tables, "-v", &mount_state, &image])
        .args(["verify", "--init", "/tables"])
        .output()
        .expect("run podman");
    assert!(verify.status.success(), "verify --init: {}", text(&verify));
    assert!(
        text(&verify).contains("/state/checksums"),
        "verify --init: {}",
        text(&verify)
    );

    // Served with a 512 MiB limit, as `podman run` starts it.
    let addr = free_port();
    let name = format!("zugzwang-test-{id}");
    made.containers.push(name.clone());
    let started = Instant::now();
    podman_ok(
        &[
            &["run", "--detach", "--name", &name][..],
            RUN_FLAGS,
            &["--memory", "512m", "--env"],
            &[&format!("ZUGZWANG_BIND={addr}")],
            &["-v", &mount_tables, "-v", &mount_state, &image],
            &["serve", "--tables", "/tables"],
        ]
        .concat(),
    );
    let start_time = wait_for_200(addr, KVK, &name, started);
    report(&format!(
        "container {name}: answering {:.0} ms after `podman run` ({} table files mounted)",
        start_time.as_secs_f64() * 1e3,
        std::fs::read_dir(&tables).expect("tables").count()
    ));

    // The same answers as the binary beside it, reading the same tables
    // with the checksums the container recorded.
    let state = podman_ok(&[
        "volume",
        "inspect",
        "--format",
        "{{.Mountpoint}}",
        &made.volume,
    ]);
    let host = process::serve(&[
        "--tables",
        tables.to_str().expect("a UTF-8 path"),
        "--state-dir",
        &state,
    ]);
    let mut fens = five_piece_fens(&csv, 3);
    fens.push(LUCENA.to_string());
    for fen in &fens {
        let path = format!("/standard?fen={fen}");
        let (status, ours) = get(addr, &path);
        assert_eq!(status, 200, "{path}: {ours}");
        assert_eq!(get(host.addr, &path), (200, ours.clone()), "{path}");
    }
    let (_, lucena) = get(addr, &format!("/standard?fen={LUCENA}"));
    assert!(lucena.contains("\"category\":\"win\""), "{lucena}");

    // The page, and a file of its bundle.
    let (status, page) = get(addr, "/");
    assert_eq!(status, 200, "{page}");
    let wasm = page
        .split(['"', '\''])
        .find(|part| part.starts_with("/pkg/") && part.ends_with(".wasm"))
        .unwrap_or_else(|| panic!("the page names no /pkg/*.wasm: {page}"))
        .to_string();
    let (status, body) = get(addr, &wasm);
    assert_eq!(status, 200, "{wasm}");
    assert!(!body.is_empty(), "{wasm} is empty");

    // The server itself runs as that user, not as root.
    let pid = podman_ok(&["inspect", "--format", "{{.State.Pid}}", &name]);
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("its status");
    let uid = status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))
        .expect("a Uid line");
    assert_eq!(
        uid.split_whitespace().collect::<Vec<_>>(),
        ["65532"; 4],
        "the server's user ids"
    );

    // The image's HEALTHCHECK.
    let health = podman()
        .args(["healthcheck", "run", &name])
        .output()
        .expect("run podman");
    assert!(health.status.success(), "healthcheck: {}", text(&health));

    // The caches' budget is a sixteenth of the limit (the floor, 32 MiB),
    // not of the host's memory.
    let logs = text(&podman().args(["logs", &name]).output().expect("logs"));
    assert!(
        logs.contains("memory budget: 32.0 MiB in all"),
        "the memory budget under --memory 512m:\n{logs}"
    );
    let budget = memory_budget(addr);
    assert!(
        (budget - (32u64 << 20) as f64).abs() < 1e-3 * budget,
        "zugzwang_memory_budget_bytes add up to {budget}"
    );
    // And a limit between the floor and the ceiling (32 MiB): 448 MiB / 16.
    let wide = format!("{name}-448m");
    made.containers.push(wide.clone());
    let wide_addr = free_port();
    podman_ok(
        &[
            &["run", "--detach", "--name", &wide][..],
            RUN_FLAGS,
            &["--memory", "448m", "--env"],
            &[&format!("ZUGZWANG_BIND={wide_addr}")],
            &[&image],
        ]
        .concat(),
    );
    wait_for_200(wide_addr, "/metrics", &wide, Instant::now());
    let budget = memory_budget(wide_addr);
    assert!(
        (budget - (28u64 << 20) as f64).abs() < 1e-3 * budget,
        "under --memory 448m, zugzwang_memory_budget_bytes add up to {budget}"
    );
    podman_ok(&["rm", "--force", "--volumes", "--time", "0", &wide]);

    // SIGTERM: the drain, then exit 0.
    let started = Instant::now();
    podman_ok(&["stop", "--time", "30", &name]);
    let stop_time = started.elapsed();
    let exit = podman_ok(&["inspect", "--format", "{{.State.ExitCode}}", &name]);
    let logs = text(&podman().args(["logs", &name]).output().expect("logs"));
    assert_eq!(exit, "0", "exit status after SIGTERM:\n{logs}");
    assert!(logs.contains("SIGTERM"), "{logs}");
    report(&format!(
        "container {name}: stopped in {:.0} ms, exit 0",
        stop_time.as_secs_f64() * 1e3
    ));
}

/// The compose file (`server/container/compose.yaml`) cannot run here (no
/// registry to pull nginx from, and podman runs containers only on the
/// host's network): what it names must at least be what the repository
/// has, and nginx's command must render the upstream of both replicas.
#[test]
fn the_compose_file_names_what_the_repository_has() {
    let container = root().join("server/container");
    let compose = std::fs::read_to_string(container.join("compose.yaml")).expect("compose.yaml");
    let build = std::fs::read_to_string(container.join("build.sh")).expect("build.sh");
    assert!(compose.contains("image: zugzwang:latest"), "{compose}");
    assert!(
        build.contains("zugzwang:latest"),
        "build.sh tags another name"
    );
    for service in ["zugzwang-a:", "zugzwang-b:", "nginx:"] {
        assert!(
            compose.lines().any(|line| line == format!("  {service}")),
            "no service {service}"
        );
    }
    // The nginx files are mounted from beside the compose file.
    let deploy = container.join("../deploy/nginx");
    assert!(compose.contains("- ../deploy/nginx:/etc/zugzwang-nginx:ro"));
    assert!(deploy.join("zugzwang.conf.template").is_file());
    // The command nginx starts with, run here with bash.
    let command = compose
        .split("      - >-\n")
        .nth(1)
        .and_then(|rest| rest.split("\n    restart:").next())
        .expect("nginx's folded command");
    let command = command.split_whitespace().collect::<Vec<_>>().join(" ");
    let render = command
        .split(" > ")
        .next()
        .expect("the render.sh part")
        .replace("/etc/zugzwang-nginx", &deploy.display().to_string());
    assert!(
        render.contains("zugzwang-a:3000 zugzwang-b:3000"),
        "{render}"
    );
    let rendered = Command::new("bash")
        .args(["-c", &render])
        .output()
        .expect("run render.sh");
    assert!(rendered.status.success(), "{}", text(&rendered));
    let conf = String::from_utf8_lossy(&rendered.stdout);
    for line in [
        "server zugzwang-a:3000 max_fails=3 fail_timeout=2s;",
        "server zugzwang-b:3000 max_fails=3 fail_timeout=2s;",
        "listen 80;",
        "hash $zugzwang_position consistent;",
    ] {
        assert!(conf.contains(line), "no `{line}` in:\n{conf}");
    }
    assert!(
        command.ends_with("> /etc/nginx/conf.d/default.conf && exec nginx -g 'daemon off;'"),
        "{command}"
    );
}
