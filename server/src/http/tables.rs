//! `GET /tables`: which standard tables this server has installed, so the
//! page can name the table an unknown move needs and say how complete each
//! piece count is. Not part of lila's API; it changes only with a restart.

use std::sync::Arc;

use app::api::{InstalledTables, PieceCoverage};
use axum::{
    body::Bytes,
    http::header,
    routing::{MethodRouter, get},
};

use super::AppState;
use crate::{engine::Engine, store::catalog};

/// `GET /tables`, answered with the JSON written once when the routes are
/// made (the list changes only with a restart).
pub fn route(installed: &InstalledTables) -> MethodRouter<AppState> {
    let body = Bytes::from(serde_json::to_vec(installed).unwrap_or_default());
    get(move || {
        let body = body.clone();
        async move { ([(header::CONTENT_TYPE, "application/json")], body) }
    })
}

/// The engine's installed tables and, per piece count, how many of the
/// published ones they are.
pub fn installed_tables(engine: &Arc<Engine>) -> InstalledTables {
    let tables = engine.installed_tables();
    let pieces = (3..=7)
        .map(|pieces| {
            let published = catalog::materials_with(pieces).count();
            let installed = tables
                .iter()
                .filter(|t| catalog::piece_count(t) == pieces)
                .count();
            PieceCoverage {
                pieces: pieces as u8,
                installed: u32::try_from(installed).unwrap_or(u32::MAX),
                published: u32::try_from(published).unwrap_or(u32::MAX),
            }
        })
        .collect();
    InstalledTables { tables, pieces }
}
