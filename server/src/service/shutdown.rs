//! Stopping cleanly on SIGTERM (systemd, Docker, Kubernetes) or SIGINT
//! (Ctrl-C): stop accepting, let requests in progress finish, and exit within
//! a deadline, so a restart loses no request that had already reached us.

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
    /// a second signal arrives, and logs what was cut if any.
    pub async fn drain(&self, connections: &Connections, deadline: Duration) {
        let stats = connections.stats();
        tracing::info!(
            "draining {} connections with {} requests in progress (deadline {:.1} s)",
            stats.open(),
            stats.requests_in_progress(),
            deadline.as_secs_f64()
        );
        let started = Instant::now();
        tokio::select! {
            () = connections.closed() => {
                tracing::info!("drained in {:.2} s", started.elapsed().as_secs_f64());
            }
            () = tokio::time::sleep(deadline) => {
                report_cut("the drain deadline passed (see --drain-timeout)", &stats);
            }
            () = self.cut.cancelled() => report_cut("a second signal", &stats),
        }
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
        "{why}: cutting {} connections with {} requests in progress",
        stats.open(),
        stats.requests_in_progress()
    );
}
