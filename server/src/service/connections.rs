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
//! free one: the connection that has been quiet longest (idle, or stuck
//! halfway through its request) is closed to make room, as nginx reuses idle
//! keep-alive connections. A flood of half-sent requests then delays normal
//! clients by moments, not by timeouts.

use std::{
    collections::HashMap,
    io,
    pin::{Pin, pin},
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
    task::{Context, Poll},
    time::{Duration, Instant},
};

use axum::{Router, extract::Request};
use hyper::{server::conn::http1, service::service_fn};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::{TcpListener, TcpStream},
    sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError},
};
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tower_service::Service;

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

/// A connection quiet for less than this is not closed to make room: it may
/// be a client that has just connected and is about to send its request. Kept
/// short because connections that waited in the backlog count from `accept`,
/// so a burst of half-sent requests is cycled through this fast.
const EVICTABLE_AFTER: Duration = Duration::from_millis(500);
const EVICTION_RETRY: Duration = Duration::from_millis(50);

#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
}

/// Counts over all connections: for the report when a drain is cut short, and
/// for `/metrics`.
#[derive(Debug, Default)]
pub struct ConnectionStats {
    open: AtomicUsize,
    requests: AtomicUsize,
}

impl ConnectionStats {
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    pub fn requests_in_progress(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }
}

/// The connections being served, and the slots that cap them.
pub struct Connections {
    limits: ConnectionLimits,
    slots: Arc<Semaphore>,
    tracker: TaskTracker,
    stats: Arc<ConnectionStats>,
    live: Arc<Live>,
}

/// Every open connection's activity, to find the quietest when room is needed.
#[derive(Default)]
struct Live {
    next_id: AtomicU64,
    by_id: Mutex<HashMap<u64, Arc<Activity>>>,
}

impl Live {
    fn insert(&self, activity: Arc<Activity>) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.connections().insert(id, activity);
        id
    }

    fn remove(&self, id: u64) {
        self.connections().remove(&id);
    }

    /// Asks the connection quiet longest, if any is evictable, to close.
    fn evict_quietest(&self) -> bool {
        let connections = self.connections();
        let quietest = connections
            .values()
            .filter(|activity| {
                activity.handling.load(Ordering::Relaxed) == 0 && !activity.close.is_cancelled()
            })
            .map(|activity| (activity.quiet_for(), activity))
            .filter(|(quiet, _)| *quiet >= EVICTABLE_AFTER)
            .max_by_key(|(quiet, _)| *quiet);
        match quietest {
            Some((_, activity)) => {
                activity.close.cancel();
                true
            }
            None => false,
        }
    }

    /// The map stays usable even if a thread panicked while holding it: it
    /// only holds counters.
    fn connections(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Activity>>> {
        self.by_id
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Connections {
    pub fn new(limits: ConnectionLimits) -> Self {
        Connections {
            limits,
            slots: Arc::new(Semaphore::new(limits.max_connections)),
            tracker: TaskTracker::new(),
            stats: Arc::default(),
            live: Arc::default(),
        }
    }

    pub fn stats(&self) -> Arc<ConnectionStats> {
        self.stats.clone()
    }

    /// Accepts and serves connections until `stop` is cancelled, then drops
    /// the listener. With every slot taken, the next connection is accepted
    /// only to close the quietest open one for it; if none is quiet enough,
    /// that one connection waits for a slot and the rest wait in the kernel's
    /// backlog, where they cost no descriptor.
    pub async fn accept_until(&self, listener: TcpListener, app: Router, stop: &CancellationToken) {
        let mut warnings = Throttle::default();
        let mut backoff = ACCEPT_BACKOFF_MIN;
        loop {
            let slot = match self.slots.clone().try_acquire_owned() {
                Ok(slot) => Some(slot),
                Err(TryAcquireError::NoPermits) => None,
                Err(TryAcquireError::Closed) => break,
            };
            let stream = tokio::select! {
                biased;
                () = stop.cancelled() => break,
                stream = accept(&listener, &mut backoff, &mut warnings) => stream,
            };
            let slot = match slot {
                Some(slot) => slot,
                None => match self.make_room(stop, &mut warnings).await {
                    Some(slot) => slot,
                    None => break,
                },
            };
            self.spawn(stream, slot, app.clone(), stop);
        }
    }

    /// Closes the quietest connection and waits for a slot (None: stopping).
    /// Looks again every [`EVICTION_RETRY`]: connections become evictable
    /// as they stay quiet.
    async fn make_room(
        &self,
        stop: &CancellationToken,
        warnings: &mut Throttle,
    ) -> Option<OwnedSemaphorePermit> {
        loop {
            let evicted = self.live.evict_quietest();
            if warnings.ready() {
                tracing::warn!(
                    "all {} connection slots are taken (see --max-connections); {}",
                    self.limits.max_connections,
                    if evicted {
                        "closing the connection quiet longest"
                    } else {
                        "every connection is busy or new, new ones wait"
                    }
                );
            }
            tokio::select! {
                biased;
                () = stop.cancelled() => return None,
                slot = self.slots.clone().acquire_owned() => return slot.ok(),
                () = tokio::time::sleep(EVICTION_RETRY) => {}
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
        self.tracker.spawn(async move {
            serve_connection(stream, app, limits, activity).await;
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

/// Serves one connection until it ends, times out, or the server stops.
async fn serve_connection(
    stream: TcpStream,
    app: Router,
    limits: ConnectionLimits,
    activity: Arc<Activity>,
) {
    let io = TokioIo::new(Tracked {
        inner: stream,
        activity: activity.clone(),
    });
    let handler = activity.clone();
    let service = service_fn(move |request: Request<hyper::body::Incoming>| {
        let handling = Handling::start(handler.clone());
        let mut app = app.clone();
        async move {
            let response = app.call(request).await;
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
                }
                return;
            }
            () = activity.close.cancelled(), if !draining => {
                // Quiet connections close now; one with a request in progress
                // finishes it, answering with `Connection: close`.
                connection.as_mut().graceful_shutdown();
                draining = true;
                if activity.expired(limits.idle_timeout, draining) {
                    return;
                }
            }
            () = tokio::time::sleep(check_period(limits.idle_timeout, draining)) => {
                if activity.expired(limits.idle_timeout, draining) {
                    tracing::debug!("closing a quiet connection");
                    return;
                }
            }
        }
    }
}

fn check_period(idle_timeout: Duration, draining: bool) -> Duration {
    if draining {
        DRAIN_QUIET / 5
    } else {
        (idle_timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(1))
    }
}

/// When a connection last moved bytes or finished a request, and how many of
/// its requests are being handled.
struct Activity {
    /// Cancelled when this connection should finish what it does and close.
    close: CancellationToken,
    born: Instant,
    quiet_since_ms: AtomicU64,
    handling: AtomicUsize,
    stats: Arc<ConnectionStats>,
}

impl Activity {
    fn new(stats: Arc<ConnectionStats>, close: CancellationToken) -> Arc<Self> {
        stats.open.fetch_add(1, Ordering::Relaxed);
        Arc::new(Activity {
            close,
            born: Instant::now(),
            quiet_since_ms: AtomicU64::new(0),
            handling: AtomicUsize::new(0),
            stats,
        })
    }

    fn touch(&self) {
        let now = u64::try_from(self.born.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.quiet_since_ms.store(now, Ordering::Relaxed);
    }

    fn quiet_for(&self) -> Duration {
        let since = Duration::from_millis(self.quiet_since_ms.load(Ordering::Relaxed));
        self.born.elapsed().saturating_sub(since)
    }

    /// A request being handled is bounded by the request deadline, not here.
    fn expired(&self, idle_timeout: Duration, draining: bool) -> bool {
        let allowed = if draining {
            DRAIN_QUIET.min(idle_timeout)
        } else {
            idle_timeout
        };
        self.handling.load(Ordering::Relaxed) == 0 && self.quiet_for() >= allowed
    }
}

impl Drop for Activity {
    fn drop(&mut self) {
        self.stats.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Marks a request as being handled for as long as it lives.
struct Handling(Arc<Activity>);

impl Handling {
    fn start(activity: Arc<Activity>) -> Self {
        activity.handling.fetch_add(1, Ordering::Relaxed);
        activity.stats.requests.fetch_add(1, Ordering::Relaxed);
        Handling(activity)
    }
}

impl Drop for Handling {
    fn drop(&mut self) {
        self.0.handling.fetch_sub(1, Ordering::Relaxed);
        self.0.stats.requests.fetch_sub(1, Ordering::Relaxed);
        self.0.touch();
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
