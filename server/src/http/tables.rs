//! `GET /tables[?variant=atomic]`: which tables of a variant this server
//! has installed, so the page can name the table an unknown move needs and
//! say how complete each piece count is. Not part of lila's API; it changes
//! only with a restart.

use std::{collections::HashMap, sync::Arc};

use app::{
    api::{InstalledTables, PieceCoverage},
    variant::Variant,
};
use axum::{
    body::Bytes,
    extract::Query,
    http::header,
    response::{IntoResponse, Response},
    routing::{MethodRouter, get},
};

use super::{AppState, error::HttpError};
use crate::{catalog, engine::Engine};

/// `GET /tables`, answered with the JSON written once per variant when the
/// routes are made (the lists change only with a restart). Without a
/// `variant` parameter it answers for standard chess.
pub fn route(installed: &HashMap<Variant, InstalledTables>) -> MethodRouter<AppState> {
    let bodies: Arc<HashMap<Variant, Bytes>> = Arc::new(
        installed
            .iter()
            .map(|(variant, tables)| {
                let json = serde_json::to_vec(tables).unwrap_or_default();
                (*variant, Bytes::from(json))
            })
            .collect(),
    );
    get(move |Query(query): Query<HashMap<String, String>>| {
        let bodies = Arc::clone(&bodies);
        async move { answer(&bodies, &query) }
    })
}

fn answer(bodies: &HashMap<Variant, Bytes>, query: &HashMap<String, String>) -> Response {
    let variant = match query.get("variant").map(|v| v.parse::<Variant>()) {
        None => Variant::Standard,
        Some(Ok(variant)) => variant,
        Some(Err(err)) => return HttpError::from(err).into_response(),
    };
    let body = bodies.get(&variant).cloned().unwrap_or_default();
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// Every variant's installed tables, for `GET /tables` and the page.
pub fn installed_by_variant(engine: &Arc<Engine>) -> HashMap<Variant, InstalledTables> {
    Variant::ALL
        .into_iter()
        .map(|variant| (variant, installed_tables(engine, variant)))
        .collect()
}

/// A variant's installed tables and, per piece count it publishes tables
/// for, how many of those they are.
fn installed_tables(engine: &Arc<Engine>, variant: Variant) -> InstalledTables {
    let tables = engine.installed_tables(variant);
    let published = catalog::of(variant);
    let pieces = published
        .piece_counts()
        .into_iter()
        .map(|pieces| {
            // Of the published ones: tables beyond the shipped list are
            // named in `tables` but not counted against it.
            let installed = tables
                .iter()
                .filter(|t| catalog::piece_count(t) == pieces && published.canonical(t).is_some())
                .count();
            PieceCoverage {
                pieces: u8::try_from(pieces).unwrap_or(u8::MAX),
                installed: u32::try_from(installed).unwrap_or(u32::MAX),
                published: u32::try_from(published.materials_with(pieces).count())
                    .unwrap_or(u32::MAX),
            }
        })
        .collect();
    let dtm = match variant {
        Variant::Standard => engine.dtm_materials(),
        _ => Vec::new(),
    };
    InstalledTables {
        tables,
        pieces,
        dtm,
    }
}
