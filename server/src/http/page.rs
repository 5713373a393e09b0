//! The explorer page, rendered by Leptos on the server and hydrated in the browser.

use std::{collections::HashMap, sync::Arc};

use app::{
    App,
    api::{ApiError, InstalledTables},
    shell,
    source::{InstalledByVariant, ProbeSource},
    variant::{Variant, parse_variant_fen},
};
use axum::Router;
use leptos::prelude::provide_context;
use leptos_axum::{LeptosRoutes, generate_route_list};

use super::AppState;
use crate::engine::Engine;

/// The page routes plus static files (the WASM bundle, CSS, images; the
/// bundle's hashed files kept a year, `bundle_cache`).
/// `installed` is what `GET /tables` answers, handed to the page as context.
pub fn routes(state: AppState, installed: HashMap<Variant, InstalledTables>) -> Router<AppState> {
    let installed = InstalledByVariant(Arc::new(installed));
    // Rendering the route list already runs the app, which may spawn tasks:
    // with no executor set yet they would be dropped (leptos_axum sets one
    // only when it handles a request). Set the tokio one first; a second
    // call is a harmless no-op.
    let _ = any_spawner::Executor::init_tokio();
    let source = probe_source(Arc::clone(&state.engine));
    let options = state.leptos_options.clone();
    Router::new()
        .leptos_routes_with_context(
            &state,
            generate_route_list(App),
            move || {
                provide_context(source.clone());
                provide_context(installed.clone());
            },
            move || shell(options.clone()),
        )
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(shell))
        .layer(axum::middleware::from_fn(super::bundle_cache::layer))
}

/// Lets server-side rendering ask the engine directly instead of over HTTP.
fn probe_source(engine: Arc<Engine>) -> ProbeSource {
    ProbeSource(Arc::new(move |variant, fen: String| {
        let engine = Arc::clone(&engine);
        Box::pin(async move {
            let pos = parse_variant_fen(variant, &fen).map_err(|err| ApiError {
                error: err.to_string(),
            })?;
            engine
                .probe(pos)
                .await
                .map(|answer| answer.as_ref().clone())
                .map_err(|err| ApiError {
                    error: err.to_string(),
                })
        })
    }))
}
