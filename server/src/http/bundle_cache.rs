//! How long browsers and proxies keep the page's bundle (`/pkg/`): a year,
//! immutable, for files whose names carry a content hash (cargo-leptos's
//! `hash-files`: `zugzwang.<hash>.wasm`). An upgrade brings new names, so a
//! kept file is never stale, and a returning visitor fetches nothing of the
//! bundle. Other files keep the file server's own headers.

use axum::{
    extract::Request,
    http::{HeaderValue, header::CACHE_CONTROL},
    middleware::Next,
    response::Response,
};

/// What a hashed bundle file is sent with.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// Adds [`IMMUTABLE`] to a successful answer for a hashed file under `/pkg/`.
pub async fn layer(request: Request, next: Next) -> Response {
    let hashed = is_hashed_bundle_file(request.uri().path());
    let mut response = next.run(request).await;
    if hashed && response.status().is_success() {
        response
            .headers_mut()
            .insert(CACHE_CONTROL, HeaderValue::from_static(IMMUTABLE));
    }
    response
}

/// `/pkg/name.<hash>.ext`, the hash as cargo-leptos writes it: an MD5 in
/// unpadded URL-safe base64, 22 characters.
pub fn is_hashed_bundle_file(path: &str) -> bool {
    let Some(name) = path.strip_prefix("/pkg/") else {
        return false;
    };
    let parts: Vec<&str> = name.split('.').collect();
    parts.len() >= 3
        && !name.contains('/')
        && parts[parts.len() - 2].len() == 22
        && parts[parts.len() - 2]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::is_hashed_bundle_file;

    #[test]
    fn only_hashed_names_under_pkg() {
        assert!(is_hashed_bundle_file(
            "/pkg/zugzwang.AbCdEfGhIjKlMnOpQrSt-_.wasm"
        ));
        assert!(is_hashed_bundle_file(
            "/pkg/__wasm_split.AbCdEfGhIjKlMnOpQrSt-_.js"
        ));
        assert!(!is_hashed_bundle_file("/pkg/zugzwang.wasm"));
        assert!(!is_hashed_bundle_file(
            "/pkg/snippets/x.AbCdEfGhIjKlMnOpQrSt-_.js"
        ));
        assert!(!is_hashed_bundle_file(
            "/pieces/wK.AbCdEfGhIjKlMnOpQrSt-_.svg"
        ));
        assert!(!is_hashed_bundle_file(
            "/pkg/zugzwang.AbCdEfGhIjKlMnOpQrS.wasm"
        ));
    }
}
