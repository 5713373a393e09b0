//! Where the listening socket comes from: handed over by systemd (socket
//! activation) or bound here.
//!
//! With socket activation the socket belongs to systemd and outlives the
//! process, so connections that arrive while the server restarts wait in its
//! backlog instead of being refused.

use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpSocket};

/// Connections the kernel queues before `accept`: room for a burst, and for
/// the clients waiting while every connection slot is taken.
const BACKLOG: u32 = 1024;

#[derive(Debug, thiserror::Error)]
pub enum ListenerError {
    #[error(
        "LISTEN_FDS hands over a socket, but fd 3 is not a listening TCP socket ({0}); check \
         ListenStream= in the systemd socket unit"
    )]
    Inherited(std::io::Error),
    #[error("cannot use the inherited listening socket: {0}")]
    Adopt(std::io::Error),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// The socket systemd passed (LISTEN_FDS, LISTEN_PID), if any.
///
/// Call it before any thread starts: it clears those variables from the
/// environment so that child processes do not take the socket for theirs.
pub fn take_inherited() -> Result<Option<std::net::TcpListener>, ListenerError> {
    listenfd::ListenFd::from_env()
        .take_tcp_listener(0)
        .map_err(ListenerError::Inherited)
}

/// The inherited socket if there is one, else a new one bound to `addr`.
pub fn open(
    inherited: Option<std::net::TcpListener>,
    addr: SocketAddr,
) -> Result<TcpListener, ListenerError> {
    match inherited {
        Some(listener) => adopt(listener),
        None => bind(addr),
    }
}

fn adopt(listener: std::net::TcpListener) -> Result<TcpListener, ListenerError> {
    // systemd hands sockets over in blocking mode; tokio needs them non-blocking.
    listener
        .set_nonblocking(true)
        .map_err(ListenerError::Adopt)?;
    TcpListener::from_std(listener).map_err(ListenerError::Adopt)
}

fn bind(addr: SocketAddr) -> Result<TcpListener, ListenerError> {
    let bind_error = |source| ListenerError::Bind { addr, source };
    let socket = match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4(),
        SocketAddr::V6(_) => TcpSocket::new_v6(),
    }
    .map_err(bind_error)?;
    // A restart must not wait for the old process's connections in TIME_WAIT.
    socket.set_reuseaddr(true).map_err(bind_error)?;
    socket.bind(addr).map_err(bind_error)?;
    socket.listen(BACKLOG).map_err(bind_error)
}
