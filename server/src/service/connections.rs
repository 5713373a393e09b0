//! Accepting and serving connections: HTTP/1 through hyper, with timeouts and
//! a cap, so idle or half-sent sockets cannot take the descriptors that
//! requests and tables need.
//!
//! hyper closes a connection whose request head does not arrive within the
//! header timeout; its timer starts whenever the connection waits for a head,
//! so it also bounds an idle keep-alive connection. What hyper does not do is
//! watched here: a connection that moves no bytes for the idle timeout while
//! none of its requests is being handled (idle keep-alive, a sender or reader
//! that stalled) is closed, and when the server stops, quiet connections are
//! closed at once instead of waiting for their timeouts.
//!
//! When every slot is taken, a new connection does not wait for a timeout to
//! free one: it is accepted, and an open connection is closed to make room
//! (`eviction`: the one that has gone longest without sending a whole
//! request head, else the idle keep-alive one quiet longest), as nginx
//! reuses idle keep-alive connections. A flood of half-sent requests then
//! delays normal clients by the time it takes to accept the connections
//! ahead of them, not by timeouts.
//!
//! When a drain runs out of time ([`Connections::cut_requests`]), every
//! request still in progress is answered at once: 503 with `Retry-After` and
//! `Connection: close`, so its client knows it was not served and may retry,
//! instead of seeing the connection drop without a reply.

use std::{
    io,
    pin::{Pin, pin},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    task::{Context, Poll},
    time::{Duration, Instant},
};

use app::api::ApiError;
use axum::{
    Json, Router,
    extract::Request,
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use hyper::{server::conn::http1, service::service_fn};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::{TcpListener, TcpStream},
    sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError},
};
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tower_service::Service;

use super::{
    activity::{Activity, ConnectionStats, Handling, Refusal},
    eviction::{Registry, Room},
};
use crate::http::security_headers;

/// While stopping, a connection with no request in progress that moved no
/// bytes for this long is closed: it is idle or sending a head it may never
/// finish, and waiting for its timeout would only delay the exit.
const DRAIN_QUIET: Duration = Duration::from_millis(250);

/// Accept errors that are not about the peer (EMFILE, ENFILE, ENOBUFS) repeat
/// at once while the cause lasts; waiting between attempts keeps the loop from
/// spinning, and the cap keeps the wait short so queued clients are not held long.
const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(5);
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_millis(100);

/// Warnings that could repeat thousands of times a second are logged at most this often.
const WARN_EVERY: Duration = Duration::from_secs(1);

/// At the cap with no connection to close, how often to look again:
/// connections become closable as they stay idle, and a slot that frees
/// wakes the loop before this anyway.
const EVICTION_RETRY: Duration = Duration::from_millis(50);

#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
    /// How old a connection that has not sent a whole request head must be
    /// before it may be closed to make room
    /// ([`super::eviction::UNFINISHED_GRACE`] unless measuring).
    pub unfinished_grace: Duration,
}

/// The connections being served, and the slots that cap them.
pub struct Connections {
    limits: ConnectionLimits,
    slots: Arc<Semaphore>,
    tracker: TaskTracker,
    stats: Arc<ConnectionStats>,
    live: Arc<Registry>,
    /// Cancelled when the drain runs out of time: requests in progress are
    /// answered 503 at once ([`Self::cut_requests`]).
    cut: CancellationToken,
    /// Requests answered 503 that way.
    requests_cut: Arc<AtomicUsize>,
}

impl Connections {
    pub fn new(limits: ConnectionLimits) -> Self {
        Connections {
            limits,
            slots: Arc::new(Semaphore::new(limits.max_connections)),
            tracker: TaskTracker::new(),
            stats: Arc::new(ConnectionStats::new(limits.max_connections)),
            live: Arc::default(),
            cut: CancellationToken::new(),
            requests_cut: Arc::default(),
        }
    }

    /// Answers every request in progress, and any that begins from now on,
    /// with [`cut_response`] instead of waiting for it (the drain's deadline
    /// has passed); the connections close once it is written.
    pub fn cut_requests(&self) {
        self.cut.cancel();
    }

    /// Requests answered 503 by [`Self::cut_requests`].
    pub fn requests_cut(&self) -> usize {
        self.requests_cut.load(Ordering::Relaxed)
    }

    pub fn stats(&self) -> Arc<ConnectionStats> {
        self.stats.clone()
    }

    /// Accepts and serves connections until `stop` is cancelled, then drops
    /// the listener. With every slot taken, the next connection is accepted
    /// at once and an open one is closed for it (`eviction`); if none may be
    /// closed (all busy, or idle only for a moment), that one connection
    /// waits for a slot and the rest wait in the kernel's backlog, where
    /// they cost no descriptor.
    pub async fn accept_until(&self, listener: TcpListener, app: Router, stop: &CancellationToken) {
        let mut warnings = Throttle::default();
        let mut backoff = ACCEPT_BACKOFF_MIN;
        loop {
            let stream = tokio::select! {
                biased;
                () = stop.cancelled() => break,
                stream = accept(&listener, &mut backoff, &mut warnings) => stream,
            };
            let slot = match self.slots.clone().try_acquire_owned() {
                Ok(slot) => slot,
                Err(TryAcquireError::NoPermits) => {
                    match self.make_room(stop, &mut warnings).await {
                        Some(slot) => slot,
                        None => break,
                    }
                }
                Err(TryAcquireError::Closed) => break,
            };
            self.spawn(stream, slot, app.clone(), stop);
        }
    }

    /// Closes a connection to make room and waits for its slot (None:
    /// stopping). Looks again when the oldest unfinished connection is old
    /// enough, or every [`EVICTION_RETRY`] while there is none to close.
    async fn make_room(
        &self,
        stop: &CancellationToken,
        warnings: &mut Throttle,
    ) -> Option<OwnedSemaphorePermit> {
        loop {
            let room = self.live.make_room(self.limits.unfinished_grace);
            if warnings.ready() {
                tracing::warn!(
                    "all {} connection slots are taken (see --max-connections); {}",
                    self.limits.max_connections,
                    match room {
                        Room::Made(_) | Room::NotYet(_) =>
                            "closing connections that have not sent a whole request, oldest first",
                        Room::None =>
                            "every connection is busy or idle only briefly, new ones wait",
                    }
                );
            }
            let retry = match room {
                Room::NotYet(wait) => wait,
                Room::Made(_) | Room::None => EVICTION_RETRY,
            };
            tokio::select! {
                biased;
                () = stop.cancelled() => return None,
                slot = self.slots.clone().acquire_owned() => return slot.ok(),
                () = tokio::time::sleep(retry) => {}
            }
        }
    }

    /// Resolves once every connection has ended. Call after [`Self::accept_until`].
    pub async fn closed(&self) {
        self.tracker.close();
        self.tracker.wait().await;
    }

    fn spawn(
        &self,
        stream: TcpStream,
        slot: OwnedSemaphorePermit,
        app: Router,
        stop: &CancellationToken,
    ) {
        // Answers are small and written whole: waiting to coalesce them only adds latency.
        if let Err(err) = stream.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY: {err}");
        }
        // Closed when the server stops, or alone to make room for another.
        let activity = Activity::new(self.stats.clone(), stop.child_token());
        let id = self.live.insert(activity.clone());
        let (limits, live) = (self.limits, self.live.clone());
        let cut = Cut {
            token: self.cut.clone(),
            count: self.requests_cut.clone(),
        };
        self.tracker.spawn(async move {
            serve_connection(stream, app, limits, activity, cut).await;
            live.remove(id);
            drop(slot);
        });
    }
}

/// Waits for the next connection. Errors about one peer (it gave up before
/// `accept`) are skipped; errors about the process (out of descriptors) are
/// waited out with a short, growing pause.
async fn accept(
    listener: &TcpListener,
    backoff: &mut Duration,
    warnings: &mut Throttle,
) -> TcpStream {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                *backoff = ACCEPT_BACKOFF_MIN;
                return stream;
            }
            Err(err) if is_peer_error(&err) => {}
            Err(err) => {
                if warnings.ready() {
                    tracing::warn!("cannot accept a connection: {err}; retrying");
                }
                tokio::time::sleep(*backoff).await;
                *backoff = (*backoff * 2).min(ACCEPT_BACKOFF_MAX);
            }
        }
    }
}

fn is_peer_error(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
    )
}

/// What a connection needs to answer its requests in progress when the
/// drain runs out of time.
#[derive(Clone)]
struct Cut {
    token: CancellationToken,
    count: Arc<AtomicUsize>,
}

/// The answer to a request still in progress when the drain ran out of time:
/// 503 with the API's JSON error, `Retry-After: 1` (a restarted server, or
/// another replica, answers soon) and `Connection: close` (hyper closes the
/// connection once it is written).
fn cut_response() -> Response {
    let body = ApiError {
        error: "the server is stopping and could not finish this request in time; retry"
            .to_string(),
    };
    let mut response = (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    security_headers::stamp(headers);
    response
}

/// Serves one connection until it ends, times out, or the server stops.
async fn serve_connection(
    stream: TcpStream,
    app: Router,
    limits: ConnectionLimits,
    activity: Arc<Activity>,
    cut: Cut,
) {
    let io = TokioIo::new(Tracked {
        inner: stream,
        activity: activity.clone(),
    });
    let handler = activity.clone();
    let service = service_fn(move |request: Request<hyper::body::Incoming>| {
        let handling = Handling::start(handler.clone());
        let mut app = app.clone();
        let cut = cut.clone();
        async move {
            // The answer when it is ready; a 503 if the drain runs out of
            // time first (dropping the request's work).
            let response = tokio::select! {
                biased;
                response = app.call(request) => response,
                () = cut.token.cancelled() => {
                    cut.count.fetch_add(1, Ordering::Relaxed);
                    Ok(cut_response())
                }
            };
            drop(handling);
            response
        }
    });
    let mut connection = pin!(
        http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_timeout)
            .serve_connection(io, service)
    );
    let mut draining = false;
    loop {
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(err) = result {
                    tracing::debug!("connection closed: {err}");
                    if err.is_timeout() {
                        activity.refuse(Refusal::HeaderTimeout);
                    } else if err.is_parse() {
                        activity.refuse(Refusal::Malformed);
                    }
                }
                return;
            }
            () = activity.close.cancelled(), if !draining => {
                // Quiet connections close now; one with a request in progress
                // finishes it, answering with `Connection: close`.
                connection.as_mut().graceful_shutdown();
                draining = true;
                // Closed to make room: the new connection needs the slot now,
                // not once this one has been quiet for a while.
                if activity.was_evicted() && !activity.is_handling() {
                    return;
                }
                if activity.expired(quiet_allowed(limits.idle_timeout, draining)) {
                    return;
                }
            }
            () = tokio::time::sleep(check_period(limits.idle_timeout, draining)) => {
                if activity.expired(quiet_allowed(limits.idle_timeout, draining)) {
                    tracing::debug!("closing a quiet connection");
                    if !draining {
                        activity.refuse(Refusal::IdleTimeout);
                    }
                    return;
                }
            }
        }
    }
}

/// How long a connection with no request in progress may stay quiet.
fn quiet_allowed(idle_timeout: Duration, draining: bool) -> Duration {
    if draining {
        DRAIN_QUIET.min(idle_timeout)
    } else {
        idle_timeout
    }
}

fn check_period(idle_timeout: Duration, draining: bool) -> Duration {
    if draining {
        DRAIN_QUIET / 5
    } else {
        (idle_timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(1))
    }
}

/// A socket that notes in its [`Activity`] every time bytes move.
struct Tracked {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.touch();
        }
        polled
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.note_written(&polled);
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.note_written(&polled);
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

impl Tracked {
    fn note_written(&self, polled: &Poll<io::Result<usize>>) {
        if matches!(polled, Poll::Ready(Ok(written)) if *written > 0) {
            self.activity.touch();
        }
    }
}

/// Lets a warning through at most once per [`WARN_EVERY`].
#[derive(Default)]
struct Throttle {
    last: Option<Instant>,
}

impl Throttle {
    fn ready(&mut self) -> bool {
        let due = self.last.is_none_or(|last| last.elapsed() >= WARN_EVERY);
        if due {
            self.last = Some(Instant::now());
        }
        due
    }
}
