//! `GET /{variant}` and `GET /{variant}/mainline` for standard, atomic and
//! antichess, as the lichess tablebase API; and Zugzwang's own
//! `GET /standard/fastest-mate`, the DTM-optimal line.

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
use crate::engine::EngineError;

const CBOR: &str = "application/cbor";

/// Says an answer may come from tables served unchecked.
pub const INTEGRITY: &str = "x-integrity";

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
    respond(&state, variant.api_path(), pos, &headers, |pos| {
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
    respond(&state, variant.mainline_path(), pos, &headers, |pos| {
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
    respond(&state, FASTEST_MATE_PATH, pos, &headers, |pos| {
        state.engine.mate_line(pos)
    })
    .await
}

/// A route's answer for a position: 304 when the client's copy is still
/// the answer (before probing), else the answer in the format asked for,
/// with the number of table reads it took.
async fn respond<T, F>(
    state: &AppState,
    route: &'static str,
    pos: VariantPosition,
    headers: &HeaderMap,
    answer: impl FnOnce(VariantPosition) -> F,
) -> Result<Response, HttpError>
where
    T: ApiAnswer,
    F: Future<Output = Result<Arc<T>, EngineError>>,
{
    let validator = validator(state, route, &pos, headers);
    if validator.matches(headers) {
        return Ok(validator.not_modified());
    }
    let unchecked = state.engine.unchecked_tables().touched_by(&pos);
    let (answer, reads) = metrics::counting_reads(&state.requests, route, answer(pos)).await;
    let mut response = negotiate(headers, answer?.as_ref());
    response.headers_mut().insert(metrics::PROBE_READS, reads);
    if unchecked {
        // The answer may come from bytes never checked (--allow-unchecked).
        response
            .headers_mut()
            .insert(INTEGRITY, HeaderValue::from_static("unchecked"));
    }
    validator.stamp(response.headers_mut());
    Ok(response)
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
fn validator(
    state: &AppState,
    route: &str,
    pos: &VariantPosition,
    headers: &HeaderMap,
) -> Validator {
    let format = if wants_cbor(headers) { "cbor" } else { "json" };
    Validator::new(state.engine.table_set(), route, pos, format)
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
