//! The explorer page, rendered by Leptos on the server and hydrated in the browser.

use std::{collections::HashMap, path::Path, sync::Arc};

use app::{
    api::{ApiError, InstalledTables, TablebaseAnswer},
    shell,
    source::{InstalledByVariant, ProbeSource},
    variant::{Variant, parse_variant_fen},
};
use axum::{
    Router,
    http::{HeaderValue, StatusCode, Uri, header::RETRY_AFTER, request::Parts},
    response::Redirect,
    routing::get,
};
use leptos::prelude::{LeptosOptions, provide_context, use_context};

use super::{AppState, installed::with_damaged, security_headers};
use super::{
    metrics,
    page_budget::PageBudget,
    request_metrics::{OTHER_ROUTE, RequestMetrics},
};
use crate::{
    engine::{Engine, EngineError},
    upstream::{Route, Upstreams, comparison::LocalAnswer, gaps},
};

/// The page routes plus static files (the WASM bundle, CSS, images; the
/// bundle's hashed files kept a year, `bundle_cache`, and sent compressed
/// at the best quality, `bundle_compression`). Every page, the 404 included,
/// is rendered with the nonce its `Content-Security-Policy` names
/// (`security_headers`).
/// `installed` is what `GET /tables` answers, handed to the page as context.
pub fn routes(state: AppState, installed: HashMap<Variant, InstalledTables>) -> Router<AppState> {
    let engine = Arc::clone(&state.engine);
    // Rendering runs the app, which may spawn tasks: with no executor set
    // they would be dropped. Set the tokio one; a second call is a harmless
    // no-op.
    let _ = any_spawner::Executor::init_tokio();
    let source = probe_source(
        Arc::clone(&state.engine),
        Arc::clone(&state.requests),
        state.upstream.clone(),
    );
    let options = state.leptos_options.clone();
    let style = page_style(&options);
    let fallback_style = style.clone();
    // The app picks the page by the request's path (`app::url`). Async:
    // the page is sent once the first position's answer is in it, so the
    // move list shows without waiting for the WASM.
    let render = leptos_axum::render_app_async_with_context(
        move || {
            security_headers::provide_nonce();
            provide_context(source.clone());
            // The damaged tables as of this request: a check may find one
            // at any time.
            let current = installed
                .iter()
                .map(|(variant, tables)| (*variant, with_damaged(&engine, *variant, tables)))
                .collect();
            provide_context(InstalledByVariant(Arc::new(current)));
        },
        move || shell(options.clone(), style.clone()),
    );
    Router::new()
        .route("/", get(render.clone()))
        .route(
            app::components::practice_route::PATH,
            get(render).layer(axum::middleware::from_fn_with_state(
                Arc::new(PageBudget::for_this_machine()),
                super::page_budget::layer,
            )),
        )
        .route(PRACTICE_WITH_SLASH, get(practice_without_slash))
        .fallback(leptos_axum::file_and_error_handler_with_context::<
            AppState,
            _,
        >(security_headers::provide_nonce, move |options| {
            shell(options, fallback_style.clone())
        }))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state.bundle),
            super::bundle_compression::layer,
        ))
        .layer(axum::middleware::from_fn(super::bundle_cache::layer))
}

const PRACTICE_WITH_SLASH: &str = "/practice/";

/// `/practice/` is the practice page too: a link typed or pasted with the
/// slash keeps its game instead of landing on "Page not found".
async fn practice_without_slash(uri: Uri) -> Redirect {
    let query = uri.query().map(|q| format!("?{q}")).unwrap_or_default();
    Redirect::permanent(&format!("{}{query}", app::components::practice_route::PATH))
}

/// The page's stylesheet, read once, for the shell to write into the head;
/// `None` (the page links it instead) when the site has not been built.
/// Its name carries the content hash listed in the site's `hash.txt`, as
/// cargo-leptos writes it (`css: <hash>`).
pub(super) fn page_style(options: &LeptosOptions) -> Option<Arc<str>> {
    let pkg = Path::new(&*options.site_root).join(&*options.site_pkg_dir);
    let hash = options
        .hash_files
        .then(|| std::fs::read_to_string(&*options.hash_file).ok())
        .flatten();
    let name = match hash.as_deref().and_then(css_hash) {
        Some(hash) => format!("{}.{hash}.css", options.output_name),
        None => format!("{}.css", options.output_name),
    };
    let path = pkg.join(name);
    match std::fs::read_to_string(&path) {
        Ok(css) => Some(Arc::from(css)),
        Err(err) => {
            tracing::debug!(path = %path.display(), "stylesheet not inlined, linked instead: {err}");
            None
        }
    }
}

/// The stylesheet's hash in a cargo-leptos hash list.
fn css_hash(hashes: &str) -> Option<&str> {
    hashes.lines().find_map(|line| {
        let (kind, hash) = line.split_once(':')?;
        (kind.trim() == "css").then(|| hash.trim())
    })
}

/// Lets server-side rendering ask the engine directly instead of over HTTP,
/// through the same admission as the API (`--max-pending`): a page whose
/// answer the engine sheds is a 503 with `Retry-After`, as the API's would
/// be. The positions probed count for the page's route on `/metrics`.
/// Where the local answer misses part of itself, an upstream server's
/// answer (`serve --upstream`) is shown instead, as the API would give it,
/// with the server's name for the verdict.
fn probe_source(
    engine: Arc<Engine>,
    requests: Arc<RequestMetrics>,
    upstream: Option<Arc<Upstreams>>,
) -> ProbeSource {
    ProbeSource(Arc::new(move |variant, fen: String| {
        let engine = Arc::clone(&engine);
        let requests = Arc::clone(&requests);
        let upstream = upstream.clone();
        // The request being rendered: asked now, while its context is at hand.
        let route =
            use_context::<Parts>().map_or(OTHER_ROUTE, |parts| page_route(parts.uri.path()));
        let response = use_context::<leptos_axum::ResponseOptions>();
        Box::pin(async move {
            let pos = parse_variant_fen(variant, &fen).map_err(|err| ApiError {
                error: err.to_string(),
            })?;
            let asked = upstream.is_some().then(|| pos.clone());
            let answer = metrics::counting_probes(&requests, route, engine.probe(pos)).await;
            let answer = answer
                .map(|answer| answer.as_ref().clone())
                .map_err(|err| {
                    if let (EngineError::Overloaded(_), Some(response)) = (&err, &response) {
                        response.set_status(StatusCode::SERVICE_UNAVAILABLE);
                        response.insert_header(RETRY_AFTER, HeaderValue::from_static("1"));
                    }
                    ApiError {
                        error: err.to_string(),
                    }
                })?;
            match (upstream, asked) {
                (Some(upstream), Some(pos))
                    if gaps::incomplete(&answer, &pos, upstream.coverage()) =>
                {
                    Ok(upstream_answer(&upstream, variant, &pos, answer).await)
                }
                _ => Ok(answer),
            }
        })
    }))
}

/// An upstream server's answer for the page, read as the browser reads
/// the API's (`app::json`), with the server's name for the verdict; else
/// `local`, the local tables' answer: marked to be asked again when no
/// server could be asked now (as the API's `X-Upstream-Unavailable`).
async fn upstream_answer(
    upstream: &Arc<Upstreams>,
    variant: Variant,
    pos: &shakmaty::variant::VariantPosition,
    mut local: TablebaseAnswer,
) -> TablebaseAnswer {
    let asked = upstream.ask(Route::Probe(variant), pos, Some(LocalAnswer::of(&local)));
    let learnt = match asked.await {
        Ok(learnt) => learnt,
        Err(_) => {
            local.ask_again = true;
            return local;
        }
    };
    let text = String::from_utf8_lossy(&learnt.json);
    match app::json::read::<TablebaseAnswer>(&text) {
        Ok(mut answer) => {
            // What the page's own fields say is this server's to say, not
            // the upstream JSON's.
            answer.source = Some(learnt.host.clone());
            answer.dtm_unavailable = Vec::new();
            answer.ask_again = false;
            answer
        }
        Err(err) => {
            tracing::warn!(
                "{}'s answer is served by the API but the page cannot read it: {err}",
                learnt.host
            );
            local
        }
    }
}

/// The route label of a page's path, as the router's templates name them.
fn page_route(path: &str) -> &'static str {
    match path {
        "/" => "/",
        app::components::practice_route::PATH => app::components::practice_route::PATH,
        _ => OTHER_ROUTE,
    }
}

#[cfg(test)]
mod tests {
    use super::css_hash;

    #[test]
    fn the_stylesheet_hash_comes_from_its_line() {
        let hashes = "js: AAA\nwasm: BBB\ncss: o0lsyJf-22cCJqzS4eRkHA\nmanifest: CCC\n";
        assert_eq!(css_hash(hashes), Some("o0lsyJf-22cCJqzS4eRkHA"));
        assert_eq!(css_hash("js: AAA\n"), None);
    }
}
