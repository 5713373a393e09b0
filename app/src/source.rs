//! Where the page gets tablebase answers from.
//!
//! On the server the page calls the probe engine directly (the server provides
//! a [`ProbeSource`] as context); in the browser it asks the public
//! `/standard` API, so the page is one more client of the same API.

use crate::api::{ApiError, InstalledTables, MainlineAnswer, TablebaseAnswer};
#[cfg(feature = "ssr")]
use std::{future::Future, pin::Pin, sync::Arc};

#[cfg(feature = "ssr")]
pub type AnswerFuture = Pin<Box<dyn Future<Output = Result<TablebaseAnswer, ApiError>> + Send>>;

/// The server's probe engine, handed to server-side rendering as context.
#[cfg(feature = "ssr")]
#[derive(Clone)]
pub struct ProbeSource(pub Arc<dyn Fn(String) -> AnswerFuture + Send + Sync>);

/// Fetches the answer for a FEN: from the engine during SSR, over HTTP in the browser.
pub async fn fetch_answer(fen: String) -> Result<TablebaseAnswer, ApiError> {
    #[cfg(feature = "ssr")]
    {
        let Some(source) = leptos::prelude::use_context::<ProbeSource>() else {
            return Err(ApiError {
                error: "the page was rendered without a probe engine".to_string(),
            });
        };
        (source.0)(fen).await
    }
    #[cfg(not(feature = "ssr"))]
    {
        get_json(&format!("/standard?fen={}", encode(&fen))).await
    }
}

/// Fetches the list of installed tables: from the server's context during
/// SSR (it is serialised into the page), over HTTP in the browser.
pub async fn fetch_tables() -> Result<InstalledTables, ApiError> {
    #[cfg(feature = "ssr")]
    {
        leptos::prelude::use_context::<InstalledTables>().ok_or_else(|| ApiError {
            error: "the page was rendered without the list of installed tables".to_string(),
        })
    }
    #[cfg(not(feature = "ssr"))]
    {
        get_json("/tables").await
    }
}

/// Fetches the DTZ mainline; only the browser asks for it.
pub async fn fetch_mainline(fen: String) -> Result<MainlineAnswer, ApiError> {
    #[cfg(feature = "ssr")]
    {
        let _ = fen;
        Err(ApiError {
            error: "the mainline is fetched by the browser".to_string(),
        })
    }
    #[cfg(not(feature = "ssr"))]
    {
        get_json(&format!("/standard/mainline?fen={}", encode(&fen))).await
    }
}

/// The page's link to a position: every link and navigation to a position
/// goes through here, so what the URL carries besides the FEN stays in one place.
pub fn position_href(fen: &str) -> String {
    format!("/?fen={}", encode(fen))
}

/// How an answer that never came (network down, server gone) begins, so
/// the page can tell it from a server's refusal and offer a retry.
pub const UNREACHABLE: &str = "the server did not answer";

/// Percent-encodes a FEN for a query string (spaces become underscores, as the API allows).
pub fn encode(fen: &str) -> String {
    // One string grown in place: every move in the list has a link, and a
    // string per character showed in the click's profile.
    let mut out = String::with_capacity(fen.len());
    for c in fen.chars() {
        match c {
            ' ' => out.push('_'),
            '/' | '-' | '_' | '.' => out.push(c),
            c if c.is_ascii_alphanumeric() => out.push(c),
            c => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
        }
    }
    out
}

#[cfg(all(feature = "hydrate", not(feature = "ssr")))]
async fn get_json<T: serde::de::DeserializeOwned>(url: &str) -> Result<T, ApiError> {
    let response = gloo_net::http::Request::get(url)
        .send()
        .await
        .map_err(|err| ApiError {
            error: format!("{UNREACHABLE}: {err}"),
        })?;
    if !response.ok() {
        let status = response.status();
        let body = response.json::<ApiError>().await.map_err(|_| ApiError {
            error: format!("the server answered with status {status}"),
        })?;
        return Err(body);
    }
    response.json::<T>().await.map_err(|err| ApiError {
        error: format!("the server's answer could not be read: {err}"),
    })
}

#[cfg(not(any(feature = "hydrate", feature = "ssr")))]
async fn get_json<T>(_url: &str) -> Result<T, ApiError> {
    Err(ApiError {
        error: "built without a way to reach the server".to_string(),
    })
}
