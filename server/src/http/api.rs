//! `GET /standard` and `GET /standard/mainline`, as the lichess tablebase API.

use std::collections::HashMap;

use app::position::{FenError, parse_fen};
use axum::{
    Json,
    extract::{Query, State},
    http::{HeaderMap, HeaderValue, header},
    response::{IntoResponse, Response},
};
use serde::Serialize;
use shakmaty::Chess;

use super::{AppState, error::HttpError, metrics, table_set::Validator};
use crate::engine::EngineError;

const CBOR: &str = "application/cbor";

pub async fn standard(
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let pos = position(&query)?;
    let validator = validator(&state, "/standard", &pos, &headers);
    if validator.matches(&headers) {
        return Ok(validator.not_modified());
    }
    let (answer, reads) = metrics::counting_reads(state.engine.probe(pos)).await;
    let mut response = negotiate(&headers, answer?.as_ref());
    response.headers_mut().insert(metrics::PROBE_READS, reads);
    validator.stamp(response.headers_mut());
    Ok(response)
}

pub async fn mainline(
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let pos = position(&query)?;
    let validator = validator(&state, "/standard/mainline", &pos, &headers);
    if validator.matches(&headers) {
        return Ok(validator.not_modified());
    }
    let (answer, reads) = metrics::counting_reads(state.engine.mainline(pos)).await;
    let mut response = negotiate(&headers, answer?.as_ref());
    response.headers_mut().insert(metrics::PROBE_READS, reads);
    validator.stamp(response.headers_mut());
    Ok(response)
}

fn position(query: &HashMap<String, String>) -> Result<Chess, FenError> {
    let fen = query.get("fen").ok_or(FenError::Missing)?;
    parse_fen(fen)
}

/// The ETag of this request's answer: a conditional request is answered
/// before probing, since the answer cannot have changed with the tables.
fn validator(state: &AppState, route: &str, pos: &Chess, headers: &HeaderMap) -> Validator {
    let format = if wants_cbor(headers) { "cbor" } else { "json" };
    Validator::new(state.engine.table_set(), route, pos, format)
}

fn wants_cbor(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains(CBOR))
}

/// JSON unless the client asks for CBOR.
fn negotiate<T: Serialize>(headers: &HeaderMap, body: &T) -> Response {
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
