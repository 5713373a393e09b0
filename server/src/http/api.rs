//! `GET /{variant}` and `GET /{variant}/mainline` for standard, atomic and
//! antichess, as the lichess tablebase API; and Zugzwang's own
//! `GET /standard/fastest-mate`, the DTM-optimal line.
//!
//! Where the local tables cannot answer in full and upstream servers are
//! configured (`serve --upstream`), the answer is an upstream server's, its
//! JSON byte for byte, marked `X-Source: upstream` and `X-Upstream-Host`;
//! when none may be asked now, the local answer goes out at once with the
//! reason in `X-Upstream-Unavailable`, not to be cached.

use std::{collections::HashMap, sync::Arc};

use app::{
    api::{
        DTM_UNAVAILABLE_HEADER, DtmUnavailable, FASTEST_MATE_PATH, MainlineAnswer, MateLineAnswer,
        TablebaseAnswer,
    },
    position::FenError,
    variant::{Variant, parse_variant_fen},
};
use axum::{
    Json, Router,
    extract::{Query, State},
    http::{HeaderMap, HeaderValue, header},
    response::{IntoResponse, Response},
    routing::get,
};
use serde::Serialize;
use shakmaty::variant::VariantPosition;

use super::{AppState, error::HttpError, etag::Validator, metrics};
use crate::{
    engine::EngineError,
    upstream::{Route, comparison::LocalAnswer, gaps, store::Learnt},
};

const CBOR: &str = "application/cbor";

/// Says an answer may come from tables served unchecked.
pub const INTEGRITY: &str = "x-integrity";

/// `upstream` on an answer an upstream server gave (`serve --upstream`).
pub const SOURCE: &str = "x-source";

/// The upstream server an answer came from (`tablebase.lichess.ovh`),
/// which the page reads for its verdict.
pub const UPSTREAM_HOST: &str = app::api::UPSTREAM_HOST_HEADER;

/// Why a local answer that misses part of itself was not asked upstream,
/// or upstream did not answer.
pub const UPSTREAM_UNAVAILABLE: &str = app::api::UPSTREAM_UNAVAILABLE_HEADER;

/// The two routes of every variant: `/standard`, `/atomic/mainline`, ...
/// (fixed paths rather than lila's `/{variant}` capture, so they never
/// shadow the page's own paths).
pub fn routes() -> Router<AppState> {
    let mut router = Router::new();
    for variant in Variant::ALL {
        router = router
            .route(
                variant.api_path(),
                get(move |state, query, headers| probe(variant, state, query, headers)),
            )
            .route(
                variant.mainline_path(),
                get(move |state, query, headers| mainline(variant, state, query, headers)),
            );
    }
    router.route(FASTEST_MATE_PATH, get(fastest_mate))
}

pub async fn probe(
    variant: Variant,
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let pos = position(variant, &query)?;
    respond(&state, Route::Probe(variant), pos, &headers, |pos| {
        state.engine.probe(pos)
    })
    .await
}

pub async fn mainline(
    variant: Variant,
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let pos = position(variant, &query)?;
    respond(&state, Route::Mainline(variant), pos, &headers, |pos| {
        state.engine.mainline(pos)
    })
    .await
}

pub async fn fastest_mate(
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let pos = position(Variant::Standard, &query)?;
    respond(&state, Route::FastestMate, pos, &headers, |pos| {
        state.engine.mate_line(pos)
    })
    .await
}

/// A route's answer for a position: 304 when the client's copy is still
/// the answer (before probing), else the answer in the format asked for,
/// with the number of table reads it took. Where the local answer misses
/// part of itself and upstream servers are configured, theirs.
async fn respond<T, F>(
    state: &AppState,
    route: Route,
    pos: VariantPosition,
    headers: &HeaderMap,
    answer: impl FnOnce(VariantPosition) -> F,
) -> Result<Response, HttpError>
where
    T: ApiAnswer,
    F: Future<Output = Result<Arc<T>, EngineError>>,
{
    let validator = validator(state, route.path(), &pos, headers);
    if validator.matches(headers) {
        return Ok(validator.not_modified());
    }
    let unchecked = state.engine.unchecked_tables().touched_by(&pos);
    let asked = state.upstream.is_some().then(|| pos.clone());
    let (answer, reads) = metrics::counting_reads(&state.requests, route.path(), answer(pos)).await;
    let mut unavailable = None;
    if let (Some(upstream), Some(pos)) = (&state.upstream, &asked) {
        let wanted = match &answer {
            Ok(answer) => answer.incomplete(pos, upstream.coverage()),
            // A line the local tables cannot follow to its end.
            Err(EngineError::NotInTables(_)) => true,
            Err(_) => false,
        };
        if wanted {
            let local = answer.as_ref().ok().and_then(|a| a.local_answer());
            match upstream.ask(route, pos, local).await {
                Ok(learnt) => return Ok(upstream_response(headers, &learnt, reads)),
                Err(why) => unavailable = Some(why),
            }
        }
    }
    let mut response = match answer {
        Ok(answer) => negotiate(headers, answer.as_ref()),
        Err(err) => {
            let mut response = HttpError::from(err).into_response();
            if let Some(why) = &unavailable {
                mark_unavailable(response.headers_mut(), &why.0);
            }
            return Ok(response);
        }
    };
    response.headers_mut().insert(metrics::PROBE_READS, reads);
    if unchecked {
        // The answer may come from bytes never checked (--allow-unchecked).
        response
            .headers_mut()
            .insert(INTEGRITY, HeaderValue::from_static("unchecked"));
    }
    match &unavailable {
        // Not the whole answer: an upstream server may give it soon.
        Some(why) => mark_unavailable(response.headers_mut(), &why.0),
        None => validator.stamp(response.headers_mut()),
    }
    Ok(response)
}

/// Why the answer is the local tables' although they miss part of it; not
/// for keeping (no ETag, `no-store`), since it may be whole next time.
fn mark_unavailable(headers: &mut HeaderMap, why: &str) {
    let printable: String = why
        .chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() {
                c
            } else {
                '?'
            }
        })
        .collect();
    if let Ok(value) = HeaderValue::from_str(&printable) {
        headers.insert(UPSTREAM_UNAVAILABLE, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.append(header::VARY, HeaderValue::from_static("accept"));
}

/// An upstream server's answer: its JSON as it came (or the same as CBOR),
/// said to be upstream's and whose, with an ETag of its own bytes.
fn upstream_response(headers: &HeaderMap, learnt: &Learnt, reads: HeaderValue) -> Response {
    let cbor = wants_cbor(headers);
    let validator = Validator::of_upstream(&learnt.json, if cbor { "cbor" } else { "json" });
    let mut response = if validator.matches(headers) {
        validator.not_modified()
    } else if cbor {
        match serde_json::from_slice::<serde_json::Value>(&learnt.json) {
            Ok(value) => encode(headers, &value),
            Err(err) => HttpError::Engine(EngineError::Internal(format!(
                "a stored upstream answer is not JSON: {err}"
            )))
            .into_response(),
        }
    } else {
        (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            learnt.json.clone(),
        )
            .into_response()
    };
    let out = response.headers_mut();
    out.insert(SOURCE, HeaderValue::from_static("upstream"));
    if let Ok(host) = HeaderValue::from_str(&learnt.host) {
        out.insert(UPSTREAM_HOST, host);
    }
    out.insert(metrics::PROBE_READS, reads);
    if response.status().is_success() {
        validator.stamp(response.headers_mut());
    }
    response
}

/// The `fen` parameter under the variant's rules (400 when it is missing,
/// malformed or illegal there).
fn position(
    variant: Variant,
    query: &HashMap<String, String>,
) -> Result<VariantPosition, FenError> {
    let fen = query.get("fen").ok_or(FenError::Missing)?;
    parse_variant_fen(variant, fen)
}

/// The ETag of this request's answer: a conditional request is answered
/// before probing, since the answer cannot have changed with the tables.
/// With upstream servers the ETags of local answers differ from those
/// without: a copy kept from before may miss what upstream now gives.
fn validator(
    state: &AppState,
    route: &str,
    pos: &VariantPosition,
    headers: &HeaderMap,
) -> Validator {
    let format = if wants_cbor(headers) { "cbor" } else { "json" };
    let route = match state.upstream {
        Some(_) => format!("{route} with upstream"),
        None => route.to_string(),
    };
    Validator::new(state.engine.table_set(), &route, pos, format)
}

fn wants_cbor(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains(CBOR))
}

/// What a route answers: a body in lila-tablebase's shape, and what that
/// shape has no field for, in headers.
trait ApiAnswer {
    /// The response: the body as the client asked for it, and its headers.
    fn respond(&self, headers: &HeaderMap) -> Response;

    /// Whether the local tables left part of it unknown that an upstream
    /// server may know (`upstream::gaps`). A line the local tables answer
    /// is whole.
    fn incomplete(&self, _pos: &VariantPosition, _local: &gaps::LocalCoverage) -> bool {
        false
    }

    /// What an upstream answer must know at least to be served instead
    /// (a position's answer; a line the local tables answer is not asked).
    fn local_answer(&self) -> Option<LocalAnswer> {
        None
    }
}

/// A position's answer; DTM tables that failed for it are named in
/// `X-Dtm-Unavailable` (its `dtm` is null where they would have said),
/// and such an answer is not for keeping (`Validator::stamp`).
impl ApiAnswer for TablebaseAnswer {
    fn respond(&self, headers: &HeaderMap) -> Response {
        let mut response = encode(headers, &self.lila());
        if let Some(value) = DtmUnavailable::header_value(&self.dtm_unavailable)
            .and_then(|value| HeaderValue::from_str(&value).ok())
        {
            response.headers_mut().insert(DTM_UNAVAILABLE_HEADER, value);
        }
        response
    }

    fn incomplete(&self, pos: &VariantPosition, local: &gaps::LocalCoverage) -> bool {
        gaps::incomplete(self, pos, local)
    }

    fn local_answer(&self) -> Option<LocalAnswer> {
        Some(LocalAnswer::of(self))
    }
}

impl ApiAnswer for MainlineAnswer {
    fn respond(&self, headers: &HeaderMap) -> Response {
        encode(headers, self)
    }
}

impl ApiAnswer for MateLineAnswer {
    fn respond(&self, headers: &HeaderMap) -> Response {
        encode(headers, self)
    }
}

/// The answer, as the client asked for it.
fn negotiate<T: ApiAnswer>(headers: &HeaderMap, answer: &T) -> Response {
    answer.respond(headers)
}

/// JSON unless the client asks for CBOR.
fn encode<T: Serialize>(headers: &HeaderMap, body: &T) -> Response {
    if !wants_cbor(headers) {
        return Json(body).into_response();
    }
    let mut bytes = Vec::new();
    if let Err(err) = ciborium::into_writer(body, &mut bytes) {
        return HttpError::Engine(EngineError::Internal(format!("cannot encode CBOR: {err}")))
            .into_response();
    }
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(CBOR))],
        bytes,
    )
        .into_response()
}
