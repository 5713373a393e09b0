//! `zugzwang serve`: load the tables, then serve the page and the API until stopped.

use std::{net::SocketAddr, sync::Arc};

use leptos::prelude::LeptosOptions;

use crate::{
    cli::ServeArgs,
    connections::{ConnectionLimits, Connections},
    engine::{Engine, EngineConfig, LoadError},
    http::{AppState, deadline, router},
    limits::{self, DescriptorBudget},
    listener::{self, ListenerError},
    request_log::{self, RequestLog, RequestLogError},
    shutdown::{ShutdownError, Signals},
};

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Listen(#[from] ListenerError),
    #[error(transparent)]
    RequestLog(#[from] RequestLogError),
    #[error(transparent)]
    Shutdown(#[from] ShutdownError),
}

/// Serves until SIGTERM or SIGINT, then drains. `inherited` is the listening
/// socket systemd passed, if any (see [`listener::take_inherited`]); without
/// one the server binds `--bind` itself.
pub async fn serve(
    args: ServeArgs,
    inherited: Option<std::net::TcpListener>,
) -> Result<(), ServeError> {
    let signals = Signals::listen()?;
    let budget = descriptor_budget(&args);
    let engine = open_engine(&args, &budget)?;
    if args.scrub {
        crate::scrub::start_for_serve(&args.tables.dirs, args.scrub_rate);
    }
    let log = match &args.request_log {
        Some(path) => {
            tracing::info!("logging served positions to {}", path.display());
            Some(RequestLog::open(path, args.request_log_max_bytes)?)
        }
        None => None,
    };
    let socket_activated = inherited.is_some();
    let listener = listener::open(inherited, args.bind)?;
    let addr = listener.local_addr().unwrap_or(args.bind);
    if socket_activated {
        tracing::info!("using the listening socket passed by systemd (--bind is ignored)");
    }
    tracing::info!("serving on http://{addr}");
    let connections = Connections::new(ConnectionLimits {
        header_timeout: args.header_timeout,
        idle_timeout: args.idle_timeout,
        max_connections: saturating_usize(budget.connections),
    });
    let state = AppState {
        connections: Some(connections.stats()),
        ..AppState::new(Arc::new(engine), leptos_options(addr))
    };
    let requests = Arc::clone(&state.requests);
    let mut app = router(state);
    if let Some(log) = log {
        app = app.layer(axum::middleware::from_fn_with_state(
            log,
            request_log::middleware,
        ));
    }
    let app = deadline::layer(app, args.request_timeout, requests);
    connections
        .accept_until(listener, app, signals.stop())
        .await;
    signals.drain(&connections, args.drain_timeout).await;
    Ok(())
}

/// Raises the open-files limit and splits it between connections and tables.
fn descriptor_budget(args: &ServeArgs) -> DescriptorBudget {
    let limit = limits::raise_open_files_limit();
    let budget = DescriptorBudget::split(limit, args.max_connections);
    tracing::info!(
        "open-files limit {}: up to {} connections, {} table files open at once",
        budget.limit,
        budget.connections,
        budget.table_handles
    );
    budget
}

fn open_engine(args: &ServeArgs, budget: &DescriptorBudget) -> Result<Engine, LoadError> {
    let config = EngineConfig {
        cache_bytes: args.cache_mb.saturating_mul(1 << 20),
        max_pending: args.max_pending,
        table_handles: Some(saturating_usize(budget.table_handles)),
        ..args.tables.engine_config()
    };
    let engine = Engine::open(&config)?;
    for dir in engine.directories() {
        tracing::info!("{} table files in {}", dir.tables, dir.path.display());
    }
    if engine.max_pieces() == 0 {
        tracing::warn!("no tables found: every position will be answered as unknown");
    }
    Ok(engine)
}

/// Leptos settings: from cargo-leptos's environment when run by it, else the
/// layout `cargo leptos build` leaves in `target/site`.
fn leptos_options(bind: SocketAddr) -> LeptosOptions {
    let env = |key: &str, default: &str| std::env::var(key).unwrap_or_else(|_| default.to_string());
    LeptosOptions::builder()
        .output_name(env("LEPTOS_OUTPUT_NAME", "zugzwang"))
        .site_root(env("LEPTOS_SITE_ROOT", "target/site"))
        .site_pkg_dir(env("LEPTOS_SITE_PKG_DIR", "pkg"))
        .site_addr(bind)
        .build()
}

fn saturating_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}
