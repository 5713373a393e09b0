//! `GET /tables[?variant=atomic]`: which tables of a variant this server
//! has installed, so the page can name the table an unknown move needs and
//! say how complete each piece count is, and which it refuses as damaged.
//! Not part of lila's API; the installed tables change only with a
//! restart, the damaged ones whenever a check finds one.

use std::{collections::HashMap, sync::Arc};

use app::{
    api::{DamagedTable, InstalledTables, PieceCoverage},
    material::piece_count,
    variant::Variant,
};
use axum::{
    Json,
    extract::{Query, State},
    response::{IntoResponse, Response},
    routing::{MethodRouter, get},
};

use super::{AppState, error::HttpError};
use crate::{
    catalog, dtm::format as prophet_format, engine::Engine, store::layout::variant_of_name,
};

/// `GET /tables`, from the lists made when the routes are made and the
/// damaged tables known now. Without a `variant` parameter it answers for
/// standard chess.
pub fn route(installed: &HashMap<Variant, InstalledTables>) -> MethodRouter<AppState> {
    let installed = Arc::new(installed.clone());
    get(
        move |State(state): State<AppState>, Query(query): Query<HashMap<String, String>>| {
            let installed = Arc::clone(&installed);
            async move { answer(&state.engine, &installed, &query) }
        },
    )
}

fn answer(
    engine: &Engine,
    installed: &HashMap<Variant, InstalledTables>,
    query: &HashMap<String, String>,
) -> Response {
    let variant = match query.get("variant").map(|v| v.parse::<Variant>()) {
        None => Variant::Standard,
        Some(Ok(variant)) => variant,
        Some(Err(err)) => return HttpError::from(err).into_response(),
    };
    let tables = installed.get(&variant).cloned().unwrap_or_default();
    Json(with_damaged(engine, variant, &tables)).into_response()
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
                .filter(|t| piece_count(t) == pieces && published.canonical(t).is_some())
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
        damaged: Vec::new(),
    }
}

/// The installed tables with the damaged ones found so far (a scrub or a
/// read may find one at any time), named by file: Prophet files with
/// standard chess.
pub fn with_damaged(
    engine: &Engine,
    variant: Variant,
    installed: &InstalledTables,
) -> InstalledTables {
    let damaged = engine
        .store_metrics()
        .quarantine
        .records()
        .into_iter()
        .filter(|record| {
            let of = variant_of_name(&record.table).or_else(|| {
                prophet_format::is_table_name(&record.table).then_some(Variant::Standard)
            });
            of == Some(variant)
        })
        .map(|record| DamagedTable {
            reason: record.refusal(),
            table: record.table,
        })
        .collect();
    InstalledTables {
        damaged,
        ..installed.clone()
    }
}
