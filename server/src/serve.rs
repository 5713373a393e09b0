//! `zugzwang serve`: load the tables, then serve the page and the API until stopped.

use std::{net::SocketAddr, sync::Arc};

use leptos::prelude::LeptosOptions;

use crate::{
    cli::ServeArgs,
    engine::{Engine, EngineConfig, LoadError},
    http::{AppState, router},
    limits,
    request_log::{self, RequestLog, RequestLogError},
};

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error(transparent)]
    RequestLog(#[from] RequestLogError),
    #[error("server stopped: {0}")]
    Serve(std::io::Error),
}

pub async fn serve(args: ServeArgs) -> Result<(), ServeError> {
    if let Some(limit) = limits::raise_open_files_limit() {
        tracing::info!("open-files limit: {limit}");
    }
    let config = EngineConfig {
        cache_entries: args.cache_entries,
        max_pending: args.max_pending,
        ..args.tables.engine_config()
    };
    let engine = Engine::open(&config)?;
    for dir in engine.directories() {
        tracing::info!("{} table files in {}", dir.tables, dir.path.display());
    }
    if engine.max_pieces() == 0 {
        tracing::warn!("no tables found: every position will be answered as unknown");
    }
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
    let state = AppState {
        engine: Arc::new(engine),
        leptos_options: leptos_options(args.bind),
    };
    let listener = tokio::net::TcpListener::bind(args.bind)
        .await
        .map_err(|source| ServeError::Bind {
            addr: args.bind,
            source,
        })?;
    tracing::info!("serving on http://{}", args.bind);
    let mut app = router(state);
    if let Some(log) = log {
        app = app.layer(axum::middleware::from_fn_with_state(
            log,
            request_log::middleware,
        ));
    }
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await
        .map_err(ServeError::Serve)
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

async fn shutdown_signal() {
    if let Err(err) = tokio::signal::ctrl_c().await {
        tracing::warn!("cannot listen for Ctrl-C: {err}");
        std::future::pending::<()>().await;
    }
    tracing::info!("shutting down");
}
