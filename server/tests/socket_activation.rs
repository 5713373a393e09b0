//! Socket activation without systemd: a listening socket passed as fd 3 with
//! LISTEN_FDS=1 and LISTEN_PID is served instead of --bind, and because the
//! socket outlives the process, a request sent while the server restarts
//! waits in its backlog and is answered by the next process.

mod process;

use std::{
    net::TcpListener,
    os::fd::OwnedFd,
    process::{Command, Stdio},
};

use process::{KQVK, Server, get, read_response, send_get};
use rustix::process::Signal;

/// `zugzwang serve` as systemd would start it: the socket on fd 3,
/// LISTEN_PID naming the server's own pid. The shell execs the server, so its
/// `$$` is that pid; the socket travels in as stdin and is moved to fd 3.
fn socket_activated(listener: &TcpListener) -> Server {
    let socket: OwnedFd = listener.try_clone().expect("dup listener").into();
    let mut command = Command::new("sh");
    command
        .args([
            "-c",
            r#"export LISTEN_PID=$$ LISTEN_FDS=1; exec "$0" "$@" 3<&0 0</dev/null"#,
            env!("CARGO_BIN_EXE_zugzwang"),
            "serve",
            // Unusable on purpose: the inherited socket must win.
            "--bind",
            "192.0.2.1:9",
        ])
        .stdin(Stdio::from(socket));
    Server::start(command)
}

#[test]
fn an_inherited_socket_is_served_and_keeps_requests_across_a_restart() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");

    let mut first = socket_activated(&listener);
    assert_eq!(first.addr, addr, "{}", first.log());
    assert!(first.log().contains("passed by systemd"), "{}", first.log());
    let (status, body) = get(addr, KQVK);
    assert_eq!(status, 200, "{body}\n{}", first.log());

    first.signal(Signal::TERM);
    let status = first.wait_exit(process::PATIENCE);
    assert!(status.success(), "{status}\n{}", first.log());

    // No server runs now; the socket (held here, as systemd holds it) queues this.
    let waiting = send_get(addr, KQVK, true);
    let second = socket_activated(&listener);
    let (status, body) = read_response(waiting);
    assert_eq!(status, 200, "{body}\n{}", second.log());
    assert!(body.contains("\"category\":\"win\""), "{body}");
}
