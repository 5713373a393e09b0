//! The headers browsers expect of a public site: on the HTML pages a
//! `Content-Security-Policy` built on the nonce their inline scripts carry
//! (and `X-Frame-Options` for browsers without `frame-ancestors`); on every
//! response `X-Content-Type-Options: nosniff` and `Referrer-Policy:
//! same-origin`.
//!
//! The nonce is made here, one per request, and handed to Leptos through the
//! request ([`provide_nonce`], called where the page is rendered), so the
//! policy and the page name the same one. What the policy allows is what the
//! page uses, nothing more:
//!
//! - scripts: the inline hydration and resource scripts (by nonce) and the
//!   bundle's own files (`/pkg/`, split parts included), and instantiating
//!   its WebAssembly (`'wasm-unsafe-eval'`);
//! - styles: the stylesheet written into the head (by nonce; `'self'` when
//!   it is linked instead); the drag ghost and the promotion dialog set their
//!   position through the CSSOM, which a policy does not govern;
//! - images: the piece images (`'self'`) and the favicon (a `data:` URL);
//! - fetches: the API, the WASM and the split manifest, all same-origin.
//!
//! Everything else (frames, plugins, other origins, `<base>`) is refused.

use axum::{
    Router,
    extract::Request,
    http::{HeaderMap, HeaderValue, header, request::Parts},
    middleware::{self, Next},
    response::Response,
};
use leptos::{
    nonce::Nonce,
    prelude::{provide_context, use_context},
};

/// Adds the headers to every response of `router`.
pub fn layer(router: Router) -> Router {
    router.layer(middleware::from_fn(apply))
}

/// The nonce of one request's policy, carried to the page's rendering in
/// the request's extensions.
#[derive(Clone)]
struct PageNonce(Nonce);

async fn apply(mut request: Request, next: Next) -> Response {
    let nonce = Nonce::new();
    request.extensions_mut().insert(PageNonce(nonce.clone()));
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    stamp(headers);
    if is_html(headers) {
        headers.insert(header::CONTENT_SECURITY_POLICY, page_policy(&nonce));
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
    response
}

/// The headers every response carries, for answers made outside the router
/// (the request deadline's 504, the drain's 503).
pub fn stamp(headers: &mut HeaderMap) {
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
}

/// Makes this request's nonce the one Leptos writes into the page's inline
/// scripts and stylesheet: call it in the rendering's additional context
/// (after Leptos has provided its own, which it replaces). A page rendered
/// outside [`layer`] keeps Leptos's nonce and gets no policy.
pub fn provide_nonce() {
    let nonce = use_context::<Parts>()
        .and_then(|parts| parts.extensions.get::<PageNonce>().map(|n| n.0.clone()));
    if let Some(nonce) = nonce {
        provide_context(nonce);
    }
}

/// This request's nonce, for a page written outside Leptos (the review
/// page): its inline style and script carry it.
pub fn nonce_of(extensions: &axum::http::Extensions) -> Option<Nonce> {
    extensions.get::<PageNonce>().map(|n| n.0.clone())
}

fn is_html(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim_start().starts_with("text/html"))
}

/// The page's policy for one nonce.
fn page_policy(nonce: &Nonce) -> HeaderValue {
    let policy = format!(
        "default-src 'none'; \
         script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self' 'nonce-{nonce}'; \
         img-src 'self' data:; \
         connect-src 'self'; \
         form-action 'self'; \
         base-uri 'none'; \
         frame-ancestors 'none'"
    );
    // A nonce is URL-safe base64: always a valid header value.
    HeaderValue::from_str(&policy).expect("the policy is visible ASCII")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_names_the_nonce_for_scripts_and_styles() {
        let nonce = Nonce::from_value("abc-_123");
        let policy = page_policy(&nonce);
        let policy = policy.to_str().expect("ascii");
        assert!(policy.contains("script-src 'self' 'nonce-abc-_123' 'wasm-unsafe-eval'"));
        assert!(policy.contains("style-src 'self' 'nonce-abc-_123'"));
        assert!(policy.contains("frame-ancestors 'none'"));
        assert!(!policy.contains("unsafe-inline"));
    }

    #[test]
    fn only_html_gets_the_policy() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        assert!(is_html(&headers));
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        assert!(!is_html(&headers));
    }
}
