//! Shared by the tests of upstream servers (`upstream.rs`,
//! `upstream_lines.rs`): one answer as a test sees it, the client and the
//! requests that fetch it. Needs `mod process;` beside it.

#![allow(dead_code)]

use std::{
    net::SocketAddr,
    time::{Duration, Instant},
};

use axum::http::{HeaderMap, StatusCode};

use crate::process;

pub fn api(path: &str, fen: &str) -> String {
    format!("{path}?fen={}", fen.replace(' ', "_"))
}

/// One answer of a server: status, headers, body, and how long it took.
pub struct Got {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    pub took: Duration,
}

impl Got {
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    }

    pub fn is_upstream(&self) -> bool {
        self.header("x-source").as_deref() == Some("upstream")
    }

    /// Why the answer is the local one: it must be, and must say why.
    pub fn local_because(&self) -> String {
        assert!(!self.is_upstream(), "{:?}", self.headers);
        self.header("x-upstream-unavailable")
            .expect("the reason in X-Upstream-Unavailable")
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .no_proxy()
        .timeout(process::PATIENCE)
        // Below the server's idle timeout (5 s): a connection it is closing
        // is never picked for the next request.
        .pool_idle_timeout(Duration::from_secs(2))
        .build()
        .expect("client")
}

pub async fn fetch(
    client: &reqwest::Client,
    addr: SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
) -> Got {
    try_fetch(client, addr, path, headers)
        .await
        .unwrap_or_else(|err| panic!("{path}: {err}"))
}

pub async fn try_fetch(
    client: &reqwest::Client,
    addr: SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
) -> Result<Got, reqwest::Error> {
    let started = Instant::now();
    let mut request = client.get(format!("http://{addr}{path}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await?;
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.bytes().await?.to_vec();
    Ok(Got {
        status,
        headers,
        body,
        took: started.elapsed(),
    })
}
