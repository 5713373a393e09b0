//! One request to an upstream tablebase server, within what the operator
//! allowed: only the http(s) URL given (`--upstream`), redirects only on
//! that host (and never from https to http), at most [`MAX_ANSWER_BYTES`]
//! of body, and an answer within the time left; what came back sorted into
//! [`Reply`].

use std::{fmt, str::FromStr, time::Duration};

use reqwest::{Client, StatusCode, Url, header, redirect};

/// The most bytes an upstream answer may have. A position's answer is at
/// most a few tens of KB (about 200 bytes a move, at most 218 moves); a
/// mainline about 60 bytes a step, at most a few hundred steps.
pub const MAX_ANSWER_BYTES: usize = 256 << 10;

/// Redirects followed on the upstream's own host before giving up.
const MAX_REDIRECTS: usize = 5;

/// An upstream server as the operator named it: an http(s) URL with a
/// host, without credentials, query or fragment; the API's paths
/// (`/standard`, ...) go after its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamUrl {
    base: Url,
}

/// Why a `--upstream` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("`{0}` is not a URL (give one like https://tablebase.lichess.ovh)")]
    NotAUrl(String),
    #[error("`{0}`: only http:// and https:// upstream servers are asked")]
    Scheme(String),
    #[error("`{0}` names no host")]
    NoHost(String),
    #[error("`{0}`: credentials, a query or a fragment have no place in an upstream URL")]
    Extra(String),
}

impl FromStr for UpstreamUrl {
    type Err = UrlError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let base = Url::parse(text).map_err(|_| UrlError::NotAUrl(text.to_string()))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(UrlError::Scheme(text.to_string()));
        }
        if base.host_str().is_none_or(str::is_empty) {
            return Err(UrlError::NoHost(text.to_string()));
        }
        if !base.username().is_empty()
            || base.password().is_some()
            || base.query().is_some()
            || base.fragment().is_some()
        {
            return Err(UrlError::Extra(text.to_string()));
        }
        Ok(UpstreamUrl { base })
    }
}

impl fmt::Display for UpstreamUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.base.as_str().trim_end_matches('/'))
    }
}

impl UpstreamUrl {
    /// The server's name as the page and the logs say it: the host, and
    /// the port where it is not the scheme's own (`tablebase.lichess.ovh`,
    /// `127.0.0.1:9000`).
    pub fn host(&self) -> String {
        let host = self.base.host_str().unwrap_or_default();
        match self.base.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        }
    }

    /// The URL of `path` (`/standard/mainline`) for the FEN `fen`.
    pub fn route(&self, path: &str, fen: &str) -> Url {
        let mut url = self.base.clone();
        let joined = format!("{}{path}", self.base.path().trim_end_matches('/'));
        url.set_path(&joined);
        // Spaces as underscores, as lichess's documentation writes FENs.
        url.query_pairs_mut()
            .append_pair("fen", &fen.replace(' ', "_"));
        url
    }
}

/// What one request brought back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// 200 with a body of at most [`MAX_ANSWER_BYTES`].
    Body(Vec<u8>),
    /// 429, with its `Retry-After` when it has one.
    RateLimited(Option<Duration>),
    /// A 4xx other than 429: the server does not answer this. `json`: it
    /// said why in JSON (`{"error": "no DTM table for KRPvKR is
    /// installed"}`, as Zugzwang does), so it is this position it lacks the
    /// tables for; a route it does not have (lichess's has no
    /// `/standard/fastest-mate`) is answered otherwise.
    NotKnown { status: StatusCode, json: bool },
    /// No answer: the connection, the time limit or a 5xx (a 503 may say
    /// when to come back).
    Failed {
        reason: String,
        retry_after: Option<Duration>,
    },
    /// An answer that is not taken: too large, or a redirect elsewhere.
    Refused(String),
}

/// The client every upstream request goes through: rustls with the ring
/// provider (as `tables fetch`), redirects only on the same host and never
/// from https to http, connections given up after `timeout`.
pub fn client(timeout: Duration) -> Result<Client, reqwest::Error> {
    // reqwest is built without a provider of its own; another install won.
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder()
        .user_agent(concat!(
            "zugzwang/",
            env!("CARGO_PKG_VERSION"),
            " (upstream tablebase client; serve --upstream)"
        ))
        .connect_timeout(timeout)
        .redirect(redirect_policy())
        .build()
}

/// Follows a redirect only to the host the chain started on (another
/// port or path there is fine), never from https to plain http.
fn redirect_policy() -> redirect::Policy {
    redirect::Policy::custom(|attempt| {
        let verdict = match attempt.previous().first() {
            _ if attempt.previous().len() > MAX_REDIRECTS => {
                Err(format!("more than {MAX_REDIRECTS} redirects"))
            }
            Some(first) => same_host(first, attempt.url()),
            None => Ok(()),
        };
        match verdict {
            Ok(()) => attempt.follow(),
            Err(why) => attempt.error(why),
        }
    })
}

/// Whether a redirect from a chain that began at `first` may go to `next`.
fn same_host(first: &Url, next: &Url) -> Result<(), String> {
    if first.host_str() != next.host_str() {
        return Err(format!(
            "redirected to another host ({}), which was not given as --upstream",
            next.host_str().unwrap_or("none")
        ));
    }
    if first.scheme() == "https" && next.scheme() != "https" {
        return Err(format!("redirected from https to {next}"));
    }
    Ok(())
}

/// GETs `url` and reads its answer, all within `time_left`.
pub async fn get(client: &Client, url: Url, time_left: Duration) -> Reply {
    match tokio::time::timeout(time_left, get_unbounded(client, url)).await {
        Ok(reply) => reply,
        Err(_) => Reply::Failed {
            reason: format!("no answer within {:.1} s", time_left.as_secs_f64()),
            retry_after: None,
        },
    }
}

async fn get_unbounded(client: &Client, url: Url) -> Reply {
    let mut response = match client
        .get(url)
        .header(header::ACCEPT, "application/json")
        .send()
        .await
    {
        Ok(response) => response,
        Err(err) if err.is_redirect() => return Reply::Refused(describe(&err)),
        Err(err) => {
            return Reply::Failed {
                reason: describe(&err),
                retry_after: None,
            };
        }
    };
    let status = response.status();
    let retry_after = retry_after(response.headers());
    match status {
        StatusCode::OK => {}
        StatusCode::TOO_MANY_REQUESTS => return Reply::RateLimited(retry_after),
        s if s.is_client_error() => {
            let json = response
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("application/json"));
            return Reply::NotKnown { status: s, json };
        }
        s if s.is_redirection() => {
            return Reply::Refused(format!(
                "answered {s} without a redirect that may be followed"
            ));
        }
        s => {
            return Reply::Failed {
                reason: format!("answered {s}"),
                retry_after: (s == StatusCode::SERVICE_UNAVAILABLE)
                    .then_some(retry_after)
                    .flatten(),
            };
        }
    }
    if let Some(length) = response.content_length()
        && length > MAX_ANSWER_BYTES as u64
    {
        return too_large(length);
    }
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                    return too_large((body.len() + chunk.len()) as u64);
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Reply::Body(body),
            Err(err) => {
                return Reply::Failed {
                    reason: format!("the answer broke off: {}", describe(&err)),
                    retry_after: None,
                };
            }
        }
    }
}

fn too_large(bytes: u64) -> Reply {
    Reply::Refused(format!(
        "an answer of {bytes} bytes or more, over the {MAX_ANSWER_BYTES} an answer may have"
    ))
}

/// `Retry-After` as seconds or as an HTTP date.
pub fn retry_after(headers: &header::HeaderMap) -> Option<Duration> {
    let value = headers.get(header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or_default(),
    )
}

/// An error with its causes, as far as they say something.
fn describe(err: &reqwest::Error) -> String {
    let mut text = if err.is_timeout() {
        "timed out".to_string()
    } else if err.is_connect() {
        "cannot connect".to_string()
    } else {
        err.to_string()
    };
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text = format!("{text}: {cause_text}");
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_http_and_https_urls_with_a_host_are_upstreams() {
        let url: UpstreamUrl = "https://tablebase.lichess.ovh".parse().unwrap();
        assert_eq!(url.host(), "tablebase.lichess.ovh");
        assert_eq!(
            url.route("/standard", "8/8/8/8/8/8/8/K1k5 w - - 0 1")
                .as_str(),
            "https://tablebase.lichess.ovh/standard?fen=8%2F8%2F8%2F8%2F8%2F8%2F8%2FK1k5_w_-_-_0_1"
        );
        let prefixed: UpstreamUrl = "http://127.0.0.1:9000/tb/".parse().unwrap();
        assert_eq!(prefixed.host(), "127.0.0.1:9000");
        assert!(
            prefixed
                .route("/standard/mainline", "k7/8/8/8/8/8/8/K7 w - - 0 1")
                .as_str()
                .starts_with("http://127.0.0.1:9000/tb/standard/mainline?fen=")
        );
        assert_eq!(prefixed.to_string(), "http://127.0.0.1:9000/tb");
        for bad in [
            "ftp://example.org",
            "file:///etc/passwd",
            "tablebase.lichess.ovh",
            "https://user:pw@example.org",
            "https://example.org/?x=1",
            "unix:/run/tb.sock",
        ] {
            assert!(bad.parse::<UpstreamUrl>().is_err(), "{bad}");
        }
    }

    #[test]
    fn redirects_stay_on_the_host_and_never_leave_https() {
        let a = |s: &str| Url::parse(s).unwrap();
        assert!(
            same_host(
                &a("http://tb.example/standard"),
                &a("http://tb.example/v2/standard")
            )
            .is_ok()
        );
        assert!(same_host(&a("http://tb.example/x"), &a("https://tb.example/x")).is_ok());
        assert!(same_host(&a("https://tb.example/x"), &a("http://tb.example/x")).is_err());
        assert!(same_host(&a("http://tb.example/x"), &a("http://evil.example/x")).is_err());
    }

    #[test]
    fn retry_after_in_seconds_or_as_a_date() {
        let mut headers = header::HeaderMap::new();
        headers.insert(header::RETRY_AFTER, "42".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(42)));
        let later = std::time::SystemTime::now() + Duration::from_secs(120);
        headers.insert(
            header::RETRY_AFTER,
            httpdate::fmt_http_date(later).parse().unwrap(),
        );
        let got = retry_after(&headers).unwrap();
        assert!(got > Duration::from_secs(110) && got <= Duration::from_secs(120));
        headers.insert(header::RETRY_AFTER, "soon".parse().unwrap());
        assert_eq!(retry_after(&headers), None);
    }
}
