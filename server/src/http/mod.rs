//! The HTTP face of the server: the lichess-compatible API and the page.

pub mod api;
pub mod bundle_cache;
pub mod bundle_compression;
pub mod deadline;
pub mod dtz_histogram;
pub mod error;
pub mod etag;
pub mod installed;
pub mod metrics;
pub mod page;
pub mod page_budget;
pub mod request_metrics;
pub mod review;
pub mod review_chart;
pub mod review_page;
pub mod security_headers;
pub mod svg_chart;

use std::sync::Arc;

use axum::{Router, extract::FromRef, routing::get};
use leptos::prelude::LeptosOptions;
use tower_http::{
    compression::CompressionLayer,
    cors::CorsLayer,
    trace::{DefaultOnFailure, TraceLayer},
};
use tracing::Level;

use crate::{
    engine::Engine,
    service::{activity::ConnectionStats, request_log::RequestLog},
    store::scrub::ScrubState,
    upstream::Upstreams,
};
use bundle_compression::CompressedBundle;
use request_metrics::RequestMetrics;

/// Everything a handler may need.
#[derive(Clone)]
pub struct AppState {
    pub engine: Arc<Engine>,
    pub leptos_options: LeptosOptions,
    /// Requests by route and status, filled by the router's own layer.
    pub requests: Arc<RequestMetrics>,
    /// The open connections, when the server accepts them itself (`serve`);
    /// a router driven directly (tests) has none to count.
    pub connections: Option<Arc<ConnectionStats>>,
    /// The log of served positions (`serve --request-log`), for its
    /// dropped count on /metrics.
    pub request_log: Option<RequestLog>,
    /// The background whole-table check (`serve --scrub`), for its
    /// progress on /metrics.
    pub scrub: Option<Arc<ScrubState>>,
    /// The bundle's files, compressed once (`bundle_compression`).
    pub bundle: Arc<CompressedBundle>,
    /// `/metrics` is served on an address of its own (`serve
    /// --metrics-bind`, [`metrics_router`]), not beside the API.
    pub metrics_apart: bool,
    /// The upstream servers asked where the local tables end (`serve
    /// --upstream`), with the store of their answers.
    pub upstream: Option<Arc<Upstreams>>,
}

impl AppState {
    pub fn new(engine: Arc<Engine>, leptos_options: LeptosOptions) -> Self {
        let pkg =
            std::path::Path::new(&*leptos_options.site_root).join(&*leptos_options.site_pkg_dir);
        AppState {
            bundle: Arc::new(CompressedBundle::new(pkg)),
            engine,
            leptos_options,
            requests: Arc::default(),
            connections: None,
            request_log: None,
            scrub: None,
            metrics_apart: false,
            upstream: None,
        }
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> LeptosOptions {
        state.leptos_options.clone()
    }
}

/// All routes: the API (open to other origins, as lichess's is), the page,
/// and `/metrics` unless it is served apart ([`metrics_router`]).
/// API answers, errors included, name the table set they came from; every
/// answer carries the security headers (`security_headers`).
pub fn router(state: AppState) -> Router {
    let table_set = etag::header_value(state.engine.table_set());
    let installed = installed::installed_by_variant(&state.engine);
    let review = review_page::routes(page::page_style(&state.leptos_options));
    let api = api::routes()
        .merge(review)
        .layer(CorsLayer::permissive())
        .route("/tables", installed::route(&installed))
        .route(app::api::DTZ_HISTOGRAM_PATH, get(dtz_histogram::dtz_svg))
        .layer(axum::middleware::map_response(
            move |mut response: axum::response::Response| {
                let table_set = table_set.clone();
                async move {
                    response.headers_mut().insert(etag::X_TABLE_SET, table_set);
                    response
                }
            },
        ));
    let api = match state.metrics_apart {
        true => api,
        false => api.route("/metrics", get(metrics::metrics)),
    };
    let requests = Arc::clone(&state.requests);
    let routes = page::routes(state.clone(), installed)
        .merge(api)
        .with_state(state);
    finish(routes, requests)
}

/// `/metrics` alone, for its own address (`serve --metrics-bind`); anything
/// else there is a 404.
pub fn metrics_router(state: AppState) -> Router {
    let requests = Arc::clone(&state.requests);
    let routes = Router::new()
        .route("/metrics", get(metrics::metrics))
        .with_state(state);
    finish(routes, requests)
}

/// The layers around all routes: request counts, compression, tracing and
/// the security headers.
fn finish(routes: Router, requests: Arc<RequestMetrics>) -> Router {
    let routes = request_metrics::layer(routes, requests)
        .layer(CompressionLayer::new())
        // Failed answers are logged once, with their reason, where they are
        // made (HttpError); a second generic line per 5xx floods the log
        // under overload.
        .layer(TraceLayer::new_for_http().on_failure(DefaultOnFailure::new().level(Level::DEBUG)));
    security_headers::layer(routes)
}
