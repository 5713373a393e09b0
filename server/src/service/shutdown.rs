//! Stopping cleanly on SIGTERM (systemd, Docker, Kubernetes) or SIGINT
//! (Ctrl-C): stop accepting, let requests in progress finish, and exit within
//! a deadline, so a restart loses no request that had already reached us.
//!
//! Requests still in progress at the deadline (or at a second signal) are
//! not dropped without a word: each is answered 503 with `Retry-After` and
//! `Connection: close` (`Connections::cut_requests`), and the drain reports
//! how many, for `serve` to exit with a status that says so.

use std::time::{Duration, Instant};

use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio_util::sync::CancellationToken;

use super::{activity::ConnectionStats, connections::Connections};

#[derive(Debug, thiserror::Error)]
pub enum ShutdownError {
    #[error("cannot listen for {name}: {source}")]
    Signal {
        name: &'static str,
        source: std::io::Error,
    },
}

/// Once requests are cut, how long their 503s (and the bodies of answers
/// already under way) get to be written before the process exits anyway: a
/// client that does not read must not hold the exit up.
const CUT_GRACE: Duration = Duration::from_secs(1);

/// The first SIGTERM or SIGINT asks to stop; a second one cuts the drain short.
pub struct Signals {
    stop: CancellationToken,
    cut: CancellationToken,
}

impl Signals {
    /// Installs the handlers. Until then the default action (exit at once)
    /// applies, so call it before serving anything.
    pub fn listen() -> Result<Self, ShutdownError> {
        let mut term = handler(SignalKind::terminate(), "SIGTERM")?;
        let mut int = handler(SignalKind::interrupt(), "SIGINT")?;
        let signals = Signals {
            stop: CancellationToken::new(),
            cut: CancellationToken::new(),
        };
        let (stop, cut) = (signals.stop.clone(), signals.cut.clone());
        tokio::spawn(async move {
            let name = next(&mut term, &mut int).await;
            tracing::info!("{name}: no new connections; finishing the requests in progress");
            stop.cancel();
            let name = next(&mut term, &mut int).await;
            tracing::warn!("{name} again: not waiting for the requests in progress");
            cut.cancel();
        });
        Ok(signals)
    }

    /// Cancelled when the server should stop accepting.
    pub fn stop(&self) -> &CancellationToken {
        &self.stop
    }

    /// Waits until every connection has ended, the `deadline` has passed, or
    /// a second signal arrives. In the last two cases the requests still in
    /// progress are answered 503 (`Connections::cut_requests`), their
    /// connections get [`CUT_GRACE`] to close, and what was cut is logged.
    /// Returns how many requests were cut (0: every one was answered).
    pub async fn drain(&self, connections: &Connections, deadline: Duration) -> usize {
        let stats = connections.stats();
        tracing::info!(
            "draining {} connections with {} requests in progress (deadline {:.1} s)",
            stats.open(),
            stats.requests_in_progress(),
            deadline.as_secs_f64()
        );
        let started = Instant::now();
        let why = tokio::select! {
            () = connections.closed() => {
                tracing::info!("drained in {:.2} s", started.elapsed().as_secs_f64());
                return 0;
            }
            () = tokio::time::sleep(deadline) => "the drain deadline passed (see --drain-timeout)",
            () = self.cut.cancelled() => "a second signal",
        };
        report_cut(why, &stats);
        connections.cut_requests();
        let closed = tokio::time::timeout(CUT_GRACE, connections.closed())
            .await
            .is_ok();
        let cut = connections.requests_cut();
        if !closed {
            tracing::warn!(
                "{} connections still open {:.1} s after the cut (clients not reading their answers): closed by the exit",
                stats.open(),
                CUT_GRACE.as_secs_f64()
            );
        }
        tracing::warn!("{cut} requests were answered 503 (Retry-After) instead of finishing");
        cut
    }
}

fn handler(kind: SignalKind, name: &'static str) -> Result<Signal, ShutdownError> {
    signal(kind).map_err(|source| ShutdownError::Signal { name, source })
}

async fn next(term: &mut Signal, int: &mut Signal) -> &'static str {
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    }
}

fn report_cut(why: &str, stats: &ConnectionStats) {
    tracing::warn!(
        "{why}: cutting {} connections: their {} requests in progress are answered 503 and the connections closed",
        stats.open(),
        stats.requests_in_progress()
    );
}
