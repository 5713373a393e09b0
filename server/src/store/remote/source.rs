//! One remote source: its `object_store` client (S3, or HTTP for a mirror),
//! what its listing at start found, its breaker and figures; and the
//! runtime its requests run on, which synchronous callers wait on.

use std::{
    collections::BTreeMap,
    future::Future,
    io,
    sync::{Arc, Mutex},
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::{
    BackoffConfig, ClientOptions, GetOptions, GetRange, ObjectStore, ObjectStoreExt, RetryConfig,
    aws::{AmazonS3, AmazonS3Builder},
    http::HttpBuilder,
    path::Path as ObjectPath,
};

use super::{
    RemoteError, RemoteOptions, RemoteUrl, Scheme,
    metrics::{Failure, RemoteMetrics},
};
use crate::{
    circuit_breaker::{Breaker, BreakerState, Refused, Rules},
    dtm::format as prophet_format,
    store::{layout::is_table_name, single_flight::Flights},
    sync::lock,
};

/// One object as the listing at start found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub size: u64,
    /// Last modified, in nanoseconds since the epoch (0 where the source
    /// says nothing).
    pub mtime_ns: i128,
    /// The source's ETag, without quotes or weakness mark.
    pub e_tag: Option<String>,
}

impl Listed {
    /// The version of the object, as manifests and quarantine records name it.
    pub fn stamp(&self) -> crate::store::tier::manifest::Stamp {
        crate::store::tier::manifest::Stamp {
            size: self.size,
            mtime_ns: self.mtime_ns,
        }
    }
}

/// The runtime remote requests run on: two threads of its own, so a
/// synchronous caller (a probe on a blocking thread, a command) can wait
/// for a request from anywhere, and the connections stay with the runtime
/// that made them.
pub struct Bridge {
    runtime: Option<tokio::runtime::Runtime>,
}

impl Bridge {
    pub fn new() -> io::Result<Bridge> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("zugzwang-remote")
            .enable_all()
            .build()?;
        Ok(Bridge {
            runtime: Some(runtime),
        })
    }

    /// Runs `work` on the bridge's runtime and waits for it on this thread.
    /// Never to be called on an async worker: the store refuses such reads
    /// in the no-wait pass before they come here (`store::context`).
    pub fn run<F>(&self, work: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let runtime = self
            .runtime
            .as_ref()
            .expect("the bridge's runtime lives as long as it");
        // Unconstrained: a command waits here inside the main runtime's
        // `block_on`, whose cooperative budget would otherwise run out and
        // have this loop poll the handle for ever.
        match futures::executor::block_on(tokio::task::unconstrained(runtime.spawn(work))) {
            Ok(output) => output,
            Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
            // Cancelled: only at shutdown, when nobody waits for the answer.
            Err(err) => panic!("a remote request was cancelled: {err}"),
        }
    }

    /// A handle to spawn on (the listing at start runs its HEADs in parallel).
    pub fn handle(&self) -> tokio::runtime::Handle {
        self.runtime
            .as_ref()
            .expect("the bridge's runtime lives as long as it")
            .handle()
            .clone()
    }
}

impl Drop for Bridge {
    /// Dropping a runtime waits for its threads, which may not be done from
    /// an async context (a test's, a command's); they are let go instead.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Why a GET failed, as the breaker and the reader need to know.
#[derive(Debug)]
pub enum GetError {
    /// The source did not answer in time, or answered 5xx/429 past the
    /// retries, or refused the credentials.
    Unavailable(String),
    /// The object differs from the listing at start, or is gone.
    Changed(String),
    /// The breaker is open: no GET was sent.
    Refused(Refused),
}

/// A remote source of tables.
pub struct RemoteSource {
    url: RemoteUrl,
    store: Arc<dyn ObjectStore>,
    /// Every object under the source's prefix, by its path relative to it.
    objects: BTreeMap<String, Listed>,
    breaker: Mutex<Breaker>,
    pub(super) metrics: RemoteMetrics,
    /// Concurrent GETs of the same range of one object make one.
    pub(super) flights: Flights,
    bridge: Arc<Bridge>,
    /// A GET's whole time, retries included.
    timeout: Duration,
}

impl RemoteSource {
    /// The client for `url`, and its listing.
    pub fn connect(
        url: RemoteUrl,
        options: &RemoteOptions,
        bridge: Arc<Bridge>,
    ) -> Result<RemoteSource, RemoteError> {
        let store = client(&url, options)?;
        let objects = bridge
            .run(list(
                Arc::clone(&store),
                url.clone(),
                options.clone(),
                bridge.handle(),
            ))
            .map_err(|detail| RemoteError::Listing {
                url: url.to_string(),
                detail,
            })?;
        Ok(RemoteSource {
            url,
            store,
            objects,
            breaker: Mutex::new(Breaker::new(breaker_rules(options))),
            metrics: RemoteMetrics::default(),
            flights: Flights::default(),
            bridge,
            timeout: options.timeout,
        })
    }

    pub fn url(&self) -> &RemoteUrl {
        &self.url
    }

    /// The objects the listing at start found, by relative path.
    pub fn objects(&self) -> &BTreeMap<String, Listed> {
        &self.objects
    }

    /// The object store client itself (uploads, whole-object reads).
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    pub fn bridge(&self) -> &Arc<Bridge> {
        &self.bridge
    }

    /// Where an object lies in the store.
    pub fn location(&self, relative: &str) -> ObjectPath {
        self.url.location(relative)
    }

    pub fn metrics(&self) -> &RemoteMetrics {
        &self.metrics
    }

    /// The breaker's state gauge and how often it opened.
    pub fn breaker_figures(&self) -> (u64, u64) {
        let breaker = lock(&self.breaker);
        (breaker.state(Instant::now()).gauge(), breaker.opened())
    }

    /// Whether the breaker lets a GET go now (without taking the trial).
    pub fn refused_now(&self) -> Option<Refused> {
        let breaker = lock(&self.breaker);
        match breaker.state(Instant::now()) {
            BreakerState::Open => breaker.check(Instant::now()).err(),
            _ => None,
        }
    }

    /// One ranged GET of `range` of the object `relative` (listed as
    /// `listed`), through the breaker, timed and counted.
    pub fn get_range(
        &self,
        relative: &str,
        listed: &Listed,
        range: std::ops::Range<u64>,
    ) -> Result<Bytes, GetError> {
        if let Err(refused) = lock(&self.breaker).admit(Instant::now()) {
            self.metrics.record_failure(Failure::BreakerOpen, None);
            return Err(GetError::Refused(refused));
        }
        let started = Instant::now();
        let store = Arc::clone(&self.store);
        let location = self.location(relative);
        let wanted = range.clone();
        let timeout = self.timeout;
        let outcome = self.bridge.run(async move {
            let get = async {
                let options = GetOptions {
                    range: Some(GetRange::Bounded(wanted)),
                    ..GetOptions::default()
                };
                let result = store.get_opts(&location, options).await?;
                let meta = result.meta.clone();
                let bytes = result.bytes().await?;
                Ok::<_, object_store::Error>((meta, bytes))
            };
            match tokio::time::timeout(timeout, get).await {
                Ok(result) => result.map_err(classify),
                Err(_) => Err(GetError::Unavailable(format!(
                    "no answer within {:.1} s",
                    timeout.as_secs_f64()
                ))),
            }
        });
        let took = started.elapsed();
        let checked = outcome.and_then(|(meta, bytes)| {
            if meta.size != listed.size {
                return Err(GetError::Changed(format!(
                    "the object is {} bytes now, {} when listed at start",
                    meta.size, listed.size
                )));
            }
            let e_tag = meta.e_tag.as_deref().map(bare_e_tag);
            if let (Some(now), Some(then)) = (e_tag, listed.e_tag.as_deref())
                && now != then
            {
                return Err(GetError::Changed(format!(
                    "the object was replaced since it was listed at start (ETag {then} → {now})"
                )));
            }
            if bytes.len() as u64 != range.end - range.start {
                return Err(GetError::Unavailable(format!(
                    "asked for {} bytes at offset {}, got {}",
                    range.end - range.start,
                    range.start,
                    bytes.len()
                )));
            }
            Ok(bytes)
        });
        match &checked {
            Ok(bytes) => {
                lock(&self.breaker).succeeded();
                self.metrics.record_get(bytes.len(), took);
            }
            Err(GetError::Unavailable(_)) => {
                lock(&self.breaker).failed(Instant::now());
                self.metrics
                    .record_failure(Failure::Unavailable, Some(took));
            }
            Err(GetError::Changed(_)) => {
                // The source answered: it is the object that is wrong.
                lock(&self.breaker).succeeded();
                self.metrics.record_failure(Failure::Changed, Some(took));
            }
            Err(GetError::Refused(_)) => {}
        }
        checked
    }
}

/// An `object_store` error sorted for the breaker.
fn classify(err: object_store::Error) -> GetError {
    match err {
        object_store::Error::NotFound { .. } => GetError::Changed(
            "the object is gone from the store since it was listed at start".into(),
        ),
        object_store::Error::Precondition { .. } => {
            GetError::Changed("the object was replaced since it was listed at start".into())
        }
        other => GetError::Unavailable(other.to_string()),
    }
}

/// An ETag without its quotes and weakness mark, as listings and GETs
/// spell it differently.
pub fn bare_e_tag(tag: &str) -> String {
    tag.trim_start_matches("W/").trim_matches('"').to_string()
}

/// Nanoseconds since the epoch.
fn nanos(time: impl Into<SystemTime>) -> i128 {
    match time.into().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(before) => -(before.duration().as_nanos() as i128),
    }
}

fn listed(meta: &object_store::ObjectMeta) -> Listed {
    Listed {
        size: meta.size,
        mtime_ns: nanos(meta.last_modified),
        e_tag: meta.e_tag.as_deref().map(bare_e_tag),
    }
}

/// The client options every source shares: timeouts (per wait for bytes
/// where whole objects are streamed), the pool sized for the probe
/// threads, plain HTTP where the URL asks for it.
fn client_options(options: &RemoteOptions, allow_http: bool) -> ClientOptions {
    let client = ClientOptions::new()
        .with_allow_http(allow_http)
        .with_connect_timeout(options.connect_timeout());
    let client = match options.streams {
        true => client
            .with_timeout_disabled()
            .with_read_timeout(options.timeout),
        false => client.with_timeout(options.timeout),
    };
    client
        .with_pool_max_idle_per_host(match options.keep_alive {
            true => options.connections.max(1),
            false => 0,
        })
        .with_pool_idle_timeout(Duration::from_secs(60))
}

/// Retries with backoff on 5xx, 429 and dropped connections, within the
/// GET's time.
fn retry_config(options: &RemoteOptions) -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_millis(800),
            base: 2.0,
        },
        max_retries: options.retries,
        retry_timeout: options.timeout,
    }
}

/// The `object_store` client for a source.
fn client(url: &RemoteUrl, options: &RemoteOptions) -> Result<Arc<dyn ObjectStore>, RemoteError> {
    // reqwest is built with rustls and no provider of its own: ring, the
    // one `upstream` and `fetch` install too.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let failed = |err: object_store::Error| RemoteError::Client {
        url: url.to_string(),
        detail: err.to_string(),
    };
    match &url.scheme {
        Scheme::S3 { bucket, .. } => Ok(Arc::new(s3_client(url, bucket, options)?)),
        Scheme::Http { base } => {
            let store = HttpBuilder::new()
                .with_url(base.clone())
                .with_client_options(client_options(options, base.starts_with("http://")))
                .with_retry(retry_config(options))
                .build()
                .map_err(failed)?;
            Ok(Arc::new(store))
        }
    }
}

/// The S3 client for `bucket` (`url` names it in errors), with the
/// settings of every source; `tables fetch --to s3://` uploads with it.
pub fn s3_client(
    url: &RemoteUrl,
    bucket: &str,
    options: &RemoteOptions,
) -> Result<AmazonS3, RemoteError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    // AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION,
    // AWS_SESSION_TOKEN... from the environment.
    let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
    let endpoint = options.s3_endpoint.clone();
    let allow_http = endpoint
        .as_deref()
        .is_some_and(|e| e.starts_with("http://"));
    if let Some(endpoint) = endpoint {
        builder = builder.with_endpoint(endpoint);
    }
    if let Some(region) = &options.s3_region {
        builder = builder.with_region(region);
    }
    builder
        .with_virtual_hosted_style_request(options.s3_virtual_hosted)
        .with_client_options(client_options(options, allow_http))
        .with_retry(retry_config(options))
        .build()
        .map_err(|err| RemoteError::Client {
            url: url.to_string(),
            detail: err.to_string(),
        })
}

/// A remote source's breaker: a store that went away fails a request's
/// parallel probes together, so a few failures in a row already say so
/// (one slow object does not); requests are waiting for it, so it is
/// asked again within seconds. A trial GET out longer than a GET may take
/// (timeout and retries) is lost.
fn breaker_rules(options: &RemoteOptions) -> Rules {
    Rules {
        failures_to_open: 5,
        cooldown: Duration::from_secs(1),
        max_cooldown: Duration::from_secs(8),
        trial_patience: Some(options.timeout + Duration::from_secs(1)),
    }
}

/// The listing at start: every object under an S3 prefix; for an HTTP
/// mirror, the table files its directory page links to, each asked for
/// its size with a HEAD.
async fn list(
    store: Arc<dyn ObjectStore>,
    url: RemoteUrl,
    options: RemoteOptions,
    handle: tokio::runtime::Handle,
) -> Result<BTreeMap<String, Listed>, String> {
    match &url.scheme {
        Scheme::S3 { prefix, .. } => {
            let root = (!prefix.is_empty()).then(|| ObjectPath::from(prefix.as_str()));
            let metas: Vec<object_store::ObjectMeta> = store
                .list(root.as_ref())
                .try_collect()
                .await
                .map_err(|err| err.to_string())?;
            let mut objects = BTreeMap::new();
            for meta in metas {
                let key = meta.location.as_ref();
                let relative = match prefix.is_empty() {
                    true => key,
                    false => match key.strip_prefix(prefix.as_str()) {
                        Some(rest) => rest.trim_start_matches('/'),
                        None => continue,
                    },
                };
                objects.insert(relative.to_string(), listed(&meta));
            }
            Ok(objects)
        }
        Scheme::Http { base } => {
            let names = index_names(base, &options).await?;
            let heads = futures::stream::iter(names)
                .map(|name| {
                    let store = Arc::clone(&store);
                    let location = url.location(&name);
                    handle.spawn(async move { (name, store.head(&location).await) })
                })
                .buffer_unordered(16);
            let mut objects = BTreeMap::new();
            let mut heads = std::pin::pin!(heads);
            while let Some(joined) = heads.next().await {
                let (name, head) = joined.map_err(|err| err.to_string())?;
                match head {
                    Ok(meta) => {
                        objects.insert(name, listed(&meta));
                    }
                    // Linked but not there: not a table of this source.
                    Err(object_store::Error::NotFound { .. }) => {}
                    Err(err) => return Err(format!("HEAD {name}: {err}")),
                }
            }
            Ok(objects)
        }
    }
}

/// The table files an HTTP directory page links to (nginx's `autoindex`,
/// Apache's index, the lichess mirror's pages).
async fn index_names(base: &str, options: &RemoteOptions) -> Result<Vec<String>, String> {
    let client = reqwest::Client::builder()
        .connect_timeout(options.connect_timeout())
        .timeout(options.timeout.max(Duration::from_secs(10)))
        .build()
        .map_err(|err| err.to_string())?;
    let page = format!("{base}/");
    let response = client
        .get(&page)
        .send()
        .await
        .map_err(|err| format!("GET {page}: {err}"))?;
    if !response.status().is_success() {
        return Err(format!(
            "GET {page}: {} (an HTTP mirror must list its directory, as nginx does with `autoindex on`)",
            response.status()
        ));
    }
    let text = response
        .text()
        .await
        .map_err(|err| format!("GET {page}: {err}"))?;
    Ok(linked_table_names(&text))
}

/// File names of tables an HTML page links to (`href="KQvK.rtbw"`, also
/// as the last part of a longer link), each once, sorted: Syzygy tables of
/// every variant, Prophet DTM tables (`KQK.egtb.bz`) and the `MD5SUMS`
/// that vouches for them (`tier build` checks them against it). A mirror
/// must list them in one directory page: links to subdirectories are not
/// followed.
pub fn linked_table_names(html: &str) -> Vec<String> {
    let mut names: Vec<String> = html
        .split("href=")
        .skip(1)
        .filter_map(|rest| {
            let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
            let link = rest[1..].split(quote).next()?;
            let link = link.split(['?', '#']).next()?;
            let name = link.rsplit('/').next()?;
            let wanted = is_table_name(name)
                || prophet_format::is_table_name(name)
                || name == prophet_format::MD5SUMS;
            wanted.then(|| name.to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_table_names_a_directory_page_links_to() {
        let page = r#"<html><body><h1>Index of /tables/</h1><hr><pre><a href="../">../</a>
<a href="KQvK.rtbw">KQvK.rtbw</a>       06-Dec-2026 10:00     1234
<a href='/tables/KQvK.rtbz'>KQvK.rtbz</a>
<a href="KQvK.rtbw">again</a><a href="README.txt">README</a><a href="sub/">sub/</a>
<a href="KRvK.rtbw?download=1">x</a><a href="KQK.egtb.bz">KQK.egtb.bz</a>
<a href="KQvK.atbw">a</a><a href="KvK.stbz">s</a><a href="KQ.egtb.bz">no</a>
<a href="MD5SUMS">MD5SUMS</a></pre></body></html>"#;
        assert_eq!(
            linked_table_names(page),
            vec![
                "KQK.egtb.bz",
                "KQvK.atbw",
                "KQvK.rtbw",
                "KQvK.rtbz",
                "KRvK.rtbw",
                "KvK.stbz",
                "MD5SUMS"
            ]
        );
    }

    #[test]
    fn etags_compare_without_quotes() {
        assert_eq!(bare_e_tag("\"abc\""), "abc");
        assert_eq!(bare_e_tag("W/\"abc\""), "abc");
        assert_eq!(bare_e_tag("abc"), "abc");
    }
}
