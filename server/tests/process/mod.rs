//! A `zugzwang serve` child process and a plain HTTP/1 client, for tests of
//! what only a real process shows: signals, descriptor limits, inherited sockets.

#![allow(dead_code)]

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::{SocketAddr, TcpStream},
    process::{Child, Command, ExitStatus, Stdio},
    sync::{Arc, Mutex, mpsc},
    thread,
    time::{Duration, Instant},
};

/// Bounds for things that take milliseconds on an idle machine: generous, so
/// a busy 2-core CI machine does not make the tests flaky.
pub const PATIENCE: Duration = Duration::from_secs(60);

pub const KQVK: &str = "/standard?fen=4k3/8/8/8/8/8/8/3QK3_w_-_-_0_1";

pub fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_zugzwang"))
}

/// `zugzwang serve` on a free port, with `args` added.
pub fn serve(args: &[&str]) -> Server {
    let mut command = binary();
    command.args(["serve", "--bind", "127.0.0.1:0"]).args(args);
    Server::start(command)
}

pub struct Server {
    child: Child,
    pub addr: SocketAddr,
    log: Arc<Mutex<String>>,
}

impl Server {
    /// Starts `command` and waits until it logs the address it serves on.
    pub fn start(mut command: Command) -> Server {
        command
            .env("NO_COLOR", "1")
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("start zugzwang");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(String::new()));
        let (found, addr) = mpsc::channel();
        let collected = log.clone();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(addr) = served_addr(&line) {
                    let _ = found.send(addr);
                }
                let mut log = collected.lock().expect("log");
                log.push_str(&line);
                log.push('\n');
            }
        });
        let addr = match addr.recv_timeout(PATIENCE) {
            Ok(addr) => addr,
            Err(_) => {
                let _ = child.kill();
                panic!("the server did not start:\n{}", log.lock().expect("log"));
            }
        };
        Server { child, addr, log }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn log(&self) -> String {
        self.log.lock().expect("log").clone()
    }

    pub fn signal(&self, signal: rustix::process::Signal) {
        let pid = rustix::process::Pid::from_child(&self.child);
        rustix::process::kill_process(pid, signal).expect("signal the server");
    }

    /// Waits for the process to end, polling; panics with its log after `within`.
    pub fn wait_exit(&mut self, within: Duration) -> ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            if started.elapsed() > within {
                panic!("the server still runs after {within:?}:\n{}", self.log());
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// How many sockets the server holds (its listener included).
    pub fn open_sockets(&self) -> usize {
        let Ok(entries) = std::fs::read_dir(format!("/proc/{}/fd", self.pid())) else {
            return 0;
        };
        entries
            .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
            .filter(|target| target.to_string_lossy().starts_with("socket:"))
            .count()
    }

    /// Polls until `done` holds; panics with the log after [`PATIENCE`].
    pub fn wait_until(&self, what: &str, mut done: impl FnMut(&Server) -> bool) {
        let started = Instant::now();
        while !done(self) {
            if started.elapsed() > PATIENCE {
                panic!("waited {PATIENCE:?} for {what}:\n{}", self.log());
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The address in the "serving on http://ADDR" line.
fn served_addr(line: &str) -> Option<SocketAddr> {
    let rest = &line[line.find("serving on http://")? + "serving on http://".len()..];
    let end = rest
        .find(|c: char| !(c.is_ascii_hexdigit() || ".:[]".contains(c)))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// A connection that sent `GET path` (keep-alive unless `close`), not yet read.
pub fn send_get(addr: SocketAddr, path: &str, close: bool) -> TcpStream {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
    let connection = if close { "close" } else { "keep-alive" };
    let request = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: {connection}\r\n\r\n");
    stream.write_all(request.as_bytes()).expect("send request");
    stream
}

/// Reads until the server closes the connection and returns the status and
/// body of the (single) response. Panics if nothing comes within [`PATIENCE`].
pub fn read_response(mut stream: TcpStream) -> (u16, String) {
    let mut raw = Vec::new();
    if let Err(err) = stream.read_to_end(&mut raw) {
        panic!(
            "no complete answer ({err}); got {:?}",
            String::from_utf8_lossy(&raw)
        );
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no response head in {text:?}"));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    (status, body.to_string())
}

/// `GET path` on a fresh connection: status and body.
pub fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    read_response(send_get(addr, path, true))
}

/// Whether the server closed `stream` (EOF or reset) within [`PATIENCE`],
/// reading and dropping anything it sent first (such as a 408).
pub fn closed_by_server(stream: &mut TcpStream) -> bool {
    closed_within(stream, PATIENCE)
}

/// Whether the server closes `stream` (EOF or reset) within `left`,
/// reading and dropping anything it sends first.
pub fn closed_within(stream: &mut TcpStream, left: Duration) -> bool {
    if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
        return false;
    }
    let mut buf = [0; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(err) if err.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}
