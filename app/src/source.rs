//! Where the page gets tablebase answers from.
//!
//! On the server the page calls the probe engine directly (the server provides
//! a [`ProbeSource`] as context); in the browser it asks the public
//! `/standard`, `/atomic` or `/antichess` API, so the page is one more client
//! of the same API.

use crate::{
    api::{ApiError, InstalledTables, MainlineAnswer, MateLineAnswer, TablebaseAnswer},
    variant::Variant,
};
#[cfg(feature = "ssr")]
use std::{future::Future, pin::Pin, sync::Arc};

#[cfg(feature = "ssr")]
pub type AnswerFuture = Pin<Box<dyn Future<Output = Result<TablebaseAnswer, ApiError>> + Send>>;

/// The server's probe engine, handed to server-side rendering as context.
#[cfg(feature = "ssr")]
#[derive(Clone)]
pub struct ProbeSource(pub Arc<dyn Fn(Variant, String) -> AnswerFuture + Send + Sync>);

/// Every variant's installed tables, handed to server-side rendering as
/// context (what `GET /tables?variant=` answers).
#[cfg(feature = "ssr")]
#[derive(Clone)]
pub struct InstalledByVariant(pub Arc<std::collections::HashMap<Variant, InstalledTables>>);

/// Fetches the answer for a FEN: from the engine during SSR, over HTTP in the browser.
pub async fn fetch_answer(variant: Variant, fen: String) -> Result<TablebaseAnswer, ApiError> {
    #[cfg(feature = "ssr")]
    {
        let Some(source) = leptos::prelude::use_context::<ProbeSource>() else {
            return Err(ApiError {
                error: "the page was rendered without a probe engine".to_string(),
            });
        };
        (source.0)(variant, fen).await
    }
    #[cfg(not(feature = "ssr"))]
    {
        // What lila's JSON cannot say comes in headers, leaving the JSON
        // as lila's (an upstream server's byte for byte): the DTM tables
        // that failed, so the page can say why mate in N is unknown; the
        // upstream server that answered, for the verdict; and whether the
        // answer is the local tables' only for now (the upstream's budget
        // spent), not to be kept.
        let url = format!("{}?fen={}", variant.api_path(), encode(&fen));
        let (mut answer, headers) = get_json_and::<TablebaseAnswer>(&url).await?;
        let header = |name| headers.get(name).ok().flatten();
        // Only the headers say these: never a field of the JSON.
        answer.dtm_unavailable = header(crate::api::DTM_UNAVAILABLE_HEADER)
            .map(|value| crate::api::DtmUnavailable::from_header(&value))
            .unwrap_or_default();
        answer.source = header(crate::api::UPSTREAM_HOST_HEADER);
        answer.ask_again = header(crate::api::UPSTREAM_UNAVAILABLE_HEADER).is_some();
        Ok(answer)
    }
}

/// Fetches a variant's installed tables: from the server's context during
/// SSR (it is serialised into the page), over HTTP in the browser.
pub async fn fetch_tables(variant: Variant) -> Result<InstalledTables, ApiError> {
    #[cfg(feature = "ssr")]
    {
        leptos::prelude::use_context::<InstalledByVariant>()
            .and_then(|all| all.0.get(&variant).cloned())
            .ok_or_else(|| ApiError {
                error: "the page was rendered without the list of installed tables".to_string(),
            })
    }
    #[cfg(not(feature = "ssr"))]
    {
        match variant {
            Variant::Standard => get_json("/tables").await,
            other => get_json(&format!("/tables?variant={other}")).await,
        }
    }
}

/// Fetches the DTZ mainline; only the browser asks for it.
pub async fn fetch_mainline(variant: Variant, fen: String) -> Result<MainlineAnswer, ApiError> {
    #[cfg(feature = "ssr")]
    {
        let _ = (variant, fen);
        Err(ApiError {
            error: "the mainline is fetched by the browser".to_string(),
        })
    }
    #[cfg(not(feature = "ssr"))]
    {
        get_json(&format!("{}?fen={}", variant.mainline_path(), encode(&fen))).await
    }
}

/// Fetches the fastest mate (standard chess); only the browser asks for it.
pub async fn fetch_mate_line(fen: String) -> Result<MateLineAnswer, ApiError> {
    #[cfg(feature = "ssr")]
    {
        let _ = fen;
        Err(ApiError {
            error: "the fastest mate is fetched by the browser".to_string(),
        })
    }
    #[cfg(not(feature = "ssr"))]
    {
        get_json(&format!(
            "{}?fen={}",
            crate::api::FASTEST_MATE_PATH,
            encode(&fen)
        ))
        .await
    }
}

/// The page's link to a position: every link and navigation to a position
/// goes through here, so what the URL carries besides the FEN stays in one place.
pub fn position_href(variant: Variant, fen: &str) -> String {
    match variant {
        Variant::Standard => format!("/?fen={}", encode(fen)),
        other => format!("/?variant={other}&fen={}", encode(fen)),
    }
}

/// How an answer that never came (network down, server gone) begins, so
/// the page can tell it from a server's refusal and offer a retry. Said in
/// a player's words, not the browser's (`TypeError: Failed to fetch`,
/// which its console shows with the request).
pub const UNREACHABLE: &str = "The server cannot be reached";

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

/// GETs an API URL and reads its JSON: the answer, or the server's own
/// message (`{"error": ...}`), or why neither came.
#[cfg(all(feature = "hydrate", not(feature = "ssr")))]
async fn get_json<T: crate::json::FromJson>(url: &str) -> Result<T, ApiError> {
    get_json_and(url).await.map(|(answer, _)| answer)
}

/// [`get_json`], and the response's headers.
#[cfg(all(feature = "hydrate", not(feature = "ssr")))]
async fn get_json_and<T: crate::json::FromJson>(
    url: &str,
) -> Result<(T, web_sys::Headers), ApiError> {
    use crate::json::read;

    let (status, headers, body) = get_text(url).await?;
    let unread = |err: String| ApiError {
        error: format!("the server's answer could not be read: {err}"),
    };
    match (status, body) {
        (200..=299, Ok(body)) => read(&body)
            .map(|answer| (answer, headers))
            .map_err(|err| unread(err.to_string())),
        (200..=299, Err(err)) => Err(unread(err)),
        (_, body) => Err(body
            .ok()
            .and_then(|body| read::<ApiError>(&body).ok())
            .unwrap_or_else(|| ApiError {
                error: format!("the server answered with status {status}"),
            })),
    }
}

/// The status, the headers and the body text of a GET, with the browser's
/// own `fetch` (one function for every answer type; an HTTP client crate
/// was about 3 KB of the gzipped WASM for this). `Err` when no answer came
/// at all.
#[cfg(all(feature = "hydrate", not(feature = "ssr")))]
async fn get_text(url: &str) -> Result<(u16, web_sys::Headers, Result<String, String>), ApiError> {
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;

    let unreachable = |_: wasm_bindgen::JsValue| ApiError {
        error: format!("{UNREACHABLE}: check your connection and try again"),
    };
    let window = web_sys::window().ok_or_else(|| ApiError {
        error: "the page has no browser window to fetch from".to_string(),
    })?;
    let response: web_sys::Response = JsFuture::from(window.fetch_with_str(url))
        .await
        .map_err(unreachable)?
        .unchecked_into();
    let body = match response.text() {
        Ok(text) => JsFuture::from(text)
            .await
            .map(|text| text.as_string().unwrap_or_default())
            .map_err(|err| js_error_text(&err)),
        Err(err) => Err(js_error_text(&err)),
    };
    Ok((response.status(), response.headers(), body))
}

/// A JavaScript error as the browser prints it (`TypeError: Failed to fetch`).
#[cfg(all(feature = "hydrate", not(feature = "ssr")))]
fn js_error_text(err: &wasm_bindgen::JsValue) -> String {
    use wasm_bindgen::JsCast;

    match err.dyn_ref::<js_sys::Error>() {
        Some(err) => String::from(err.to_string()),
        None => "an error that is not a JavaScript Error".to_string(),
    }
}

#[cfg(not(any(feature = "hydrate", feature = "ssr")))]
async fn get_json<T>(_url: &str) -> Result<T, ApiError> {
    Err(ApiError {
        error: "built without a way to reach the server".to_string(),
    })
}

#[cfg(not(any(feature = "hydrate", feature = "ssr")))]
async fn get_json_and<T>(url: &str) -> Result<(T, web_sys::Headers), ApiError> {
    get_json(url).await
}
