//! Answers from upstream tablebase servers where the local tables end
//! (`serve --upstream URL`, repeatable, in order of preference): any
//! server that speaks the lichess tablebase API (lichess's own, a
//! lila-tablebase, another Zugzwang).
//!
//! Only what the local tables cannot answer in full is asked (`gaps`): a
//! missing table at the root or behind a move, a `dtm` no local DTM table
//! gives. An answer is looked up in the store first (`store`: kept on disk
//! for ever, an answer never changes); else one request goes out for all
//! who ask the same at once (coalesced here), to the first server whose
//! budget allows it (`politeness`: a token bucket, `429`/`Retry-After`, a
//! circuit breaker), within a time limit (`client`); the answer is checked
//! (`check`) before it is served and kept. When no server may be asked
//! now, the caller answers from the local tables at once, with the reason.

pub mod check;
pub mod client;
pub mod comparison;
pub mod gaps;
pub mod metrics;
pub mod politeness;
pub mod store;

use std::{
    collections::{HashMap, HashSet},
    fmt,
    path::PathBuf,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use app::{api::FASTEST_MATE_PATH, variant::Variant};
use futures::{
    FutureExt,
    future::{BoxFuture, Shared},
};
use shakmaty::{EnPassantMode, fen::Fen, variant::VariantPosition};

use crate::{circuit_breaker::BreakerState, engine::answer_cache, sync::lock};
use client::{Reply, UpstreamUrl};
use comparison::LocalAnswer;
use gaps::LocalCoverage;
use politeness::{Limits, Politeness, Refusal};
use store::{AnswerStore, Learnt};

/// Which answer is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Route {
    /// `GET /{variant}`: a position and its moves.
    Probe(Variant),
    /// `GET /{variant}/mainline`.
    Mainline(Variant),
    /// `GET /standard/fastest-mate` (Zugzwang's own: only another Zugzwang has it).
    FastestMate,
}

impl Route {
    pub fn path(self) -> &'static str {
        match self {
            Route::Probe(variant) => variant.api_path(),
            Route::Mainline(variant) => variant.mainline_path(),
            Route::FastestMate => FASTEST_MATE_PATH,
        }
    }
}

/// How `serve` asks upstream servers.
#[derive(Debug, Clone)]
pub struct UpstreamConfig {
    /// In order of preference.
    pub servers: Vec<UpstreamUrl>,
    pub limits: Limits,
    /// How long one answer may take, all servers tried included.
    pub timeout: Duration,
    /// Bytes the store may keep.
    pub store_bytes: u64,
    /// Where the store is kept (`None`: in memory).
    pub state_dir: Option<PathBuf>,
    /// What the local tables cover beyond Syzygy (their DTM materials).
    pub coverage: LocalCoverage,
}

/// Why an answer came from the local tables although they miss part of
/// it: the `X-Upstream-Unavailable` header's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Why(pub String);

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One upstream server and what has been asked of it.
pub struct Server {
    url: UpstreamUrl,
    host: String,
    politeness: Mutex<Politeness>,
    /// Routes it answered 404 for (the fastest mate, which only Zugzwang has).
    lacks: Mutex<HashSet<Route>>,
    counts: metrics::ServerCounts,
}

impl Server {
    pub fn host(&self) -> &str {
        &self.host
    }

    pub fn url(&self) -> &UpstreamUrl {
        &self.url
    }
}

type Outcome = Result<Arc<Learnt>, Why>;

pub struct Upstreams {
    servers: Vec<Server>,
    client: reqwest::Client,
    store: Arc<AnswerStore>,
    /// Requests out now, by store key: later askers wait for the same.
    in_flight: Mutex<HashMap<String, Shared<BoxFuture<'static, Outcome>>>>,
    timeout: Duration,
    coverage: LocalCoverage,
    counts: metrics::Counts,
}

impl Upstreams {
    /// The servers, with the store opened (in `config.state_dir`).
    pub fn new(config: UpstreamConfig) -> Result<Upstreams, reqwest::Error> {
        let now = Instant::now();
        let servers = config
            .servers
            .into_iter()
            .map(|url| Server {
                host: url.host(),
                url,
                politeness: Mutex::new(Politeness::new(config.limits, now)),
                lacks: Mutex::default(),
                counts: metrics::ServerCounts::default(),
            })
            .collect();
        Ok(Upstreams {
            servers,
            client: client::client(config.timeout)?,
            store: Arc::new(AnswerStore::open(
                config.state_dir.as_deref(),
                config.store_bytes,
            )),
            in_flight: Mutex::default(),
            timeout: config.timeout,
            coverage: config.coverage,
            counts: metrics::Counts::default(),
        })
    }

    pub fn servers(&self) -> &[Server] {
        &self.servers
    }

    pub fn store(&self) -> &AnswerStore {
        &self.store
    }

    /// What the local tables cover, for [`gaps::incomplete`].
    pub fn coverage(&self) -> &LocalCoverage {
        &self.coverage
    }

    /// The answer of `route` for `pos` from the store, or from the first
    /// upstream server that may be asked now and answers within the time
    /// limit; or why there is none (at once, when no server may be asked).
    /// `local`, what the local tables' answer knows (a position's, not a
    /// line's), is what an upstream answer must know at least to be taken
    /// (`comparison`).
    pub async fn ask(
        self: &Arc<Self>,
        route: Route,
        pos: &VariantPosition,
        local: Option<LocalAnswer>,
    ) -> Outcome {
        let key = format!("{} {}", route.path(), answer_cache::key(pos));
        // Off the async workers: a read waits while a commit (an fsync),
        // this process's or another replica's, holds the store's header.
        let store = Arc::clone(&self.store);
        let lookup = key.clone();
        match tokio::task::spawn_blocking(move || store.get(&lookup)).await {
            Ok(Ok(Some(learnt))) => {
                self.counts.store_hit();
                return Ok(Arc::new(learnt));
            }
            Ok(Ok(None)) => {}
            Ok(Err(err)) => tracing::warn!("the upstream answer store failed a read: {err}"),
            Err(err) => tracing::warn!("the upstream answer store failed a read: {err}"),
        }
        let asked = {
            let mut in_flight = lock(&self.in_flight);
            match in_flight.get(&key) {
                Some(out) => {
                    self.counts.coalesced();
                    out.clone()
                }
                None => {
                    let out = self.start(route, pos, local, key.clone());
                    in_flight.insert(key, out.clone());
                    out
                }
            }
        };
        asked.await
    }

    /// Starts asking on a task of its own, so a request whose client left
    /// still ends (and keeps the breaker's count true); the task takes its
    /// key out of the requests in flight when done.
    fn start(
        self: &Arc<Self>,
        route: Route,
        pos: &VariantPosition,
        local: Option<LocalAnswer>,
        key: String,
    ) -> Shared<BoxFuture<'static, Outcome>> {
        let me = Arc::clone(self);
        let pos = pos.clone();
        let task = tokio::spawn(async move {
            let outcome = me.fetch(route, &pos, local.as_ref(), &key).await;
            lock(&me.in_flight).remove(&key);
            outcome
        });
        async move {
            task.await
                .unwrap_or_else(|err| Err(Why(format!("asking upstream failed: {err}"))))
        }
        .boxed()
        .shared()
    }

    /// Asks the servers in order until one answers; keeps the answer.
    async fn fetch(
        &self,
        route: Route,
        pos: &VariantPosition,
        local: Option<&LocalAnswer>,
        key: &str,
    ) -> Outcome {
        let deadline = Instant::now() + self.timeout;
        let fen = Fen::from_position(pos, EnPassantMode::Legal).to_string();
        let mut first_why: Option<Why> = None;
        for server in &self.servers {
            let why = match self
                .ask_one(server, route, pos, local, &fen, deadline)
                .await
            {
                Ok(learnt) => {
                    let learnt = Arc::new(learnt);
                    self.keep(key, &learnt).await;
                    return Ok(learnt);
                }
                Err(why) => why,
            };
            first_why.get_or_insert(why);
        }
        Err(first_why.unwrap_or_else(|| Why("no upstream server is configured".into())))
    }

    /// One server's answer, if it may be asked now and gives a good one.
    async fn ask_one(
        &self,
        server: &Server,
        route: Route,
        pos: &VariantPosition,
        local: Option<&LocalAnswer>,
        fen: &str,
        deadline: Instant,
    ) -> Result<Learnt, Why> {
        let host = &server.host;
        if lock(&server.lacks).contains(&route) {
            return Err(Why(format!("{host} does not serve {}", route.path())));
        }
        let admitted = lock(&server.politeness).admit(Instant::now());
        if let Err(refusal) = admitted {
            server.counts.skipped(refusal);
            return Err(Why(refusal_words(server, refusal)));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Why(format!("no time was left to ask {host}")));
        }
        server.counts.sent();
        let reply = client::get(&self.client, server.url.route(route.path(), fen), left).await;
        let now = Instant::now();
        let mut politeness = lock(&server.politeness);
        let was = politeness.breaker(now);
        let outcome = match reply {
            Reply::Body(json) => match check::check(route, pos, &json)
                .map(|()| local.and_then(|local| local.shortfall(&json)))
            {
                Ok(Some(shortfall)) => {
                    politeness.answered();
                    server.counts.answered();
                    Err(Why(format!("{host}'s answer was not taken: {shortfall}")))
                }
                Ok(None) => {
                    politeness.answered();
                    server.counts.answered();
                    Ok(Learnt {
                        host: host.clone(),
                        json,
                    })
                }
                Err(invalid) => {
                    politeness.failed(now, None);
                    server.counts.refused();
                    tracing::warn!(
                        "{host}: its answer for {fen} ({}) was refused and not kept: {invalid}",
                        route.path()
                    );
                    Err(Why(format!("{host}'s answer was refused: {invalid}")))
                }
            },
            Reply::RateLimited(retry_after) => {
                politeness.rate_limited(now, retry_after);
                server.counts.rate_limited();
                let wait = match politeness.paused_for(now) {
                    Some(wait) => format!("; next request in {:.0} s", wait.as_secs_f64().ceil()),
                    None => String::new(),
                };
                tracing::info!("{host} answered 429 Too Many Requests{wait}");
                Err(Why(format!("{host} answered 429 Too Many Requests{wait}")))
            }
            Reply::NotKnown { status, json } => {
                politeness.answered();
                server.counts.not_known();
                // A route it does not have is not asked again; a position
                // it lacks the tables for (its JSON says which) leaves the
                // route to the others.
                if route == Route::FastestMate && status == reqwest::StatusCode::NOT_FOUND && !json
                {
                    lock(&server.lacks).insert(route);
                }
                Err(Why(format!("{host} does not answer this ({status})")))
            }
            Reply::Failed {
                reason,
                retry_after,
            } => {
                politeness.failed(now, retry_after);
                server.counts.failed();
                Err(Why(format!("{host}: {reason}")))
            }
            Reply::Refused(reason) => {
                politeness.failed(now, None);
                server.counts.refused();
                tracing::warn!("{host}: answer refused: {reason}");
                Err(Why(format!("{host}: {reason}")))
            }
        };
        if was != BreakerState::Open && politeness.breaker(now) == BreakerState::Open {
            tracing::warn!(
                "{host} failed {} times in a row: not asked until its cool-down is over (answers come from the local tables meanwhile)",
                politeness.failures_in_a_row()
            );
        }
        outcome
    }

    /// Keeps an answer in the store (a disk write, off the async workers).
    async fn keep(&self, key: &str, learnt: &Arc<Learnt>) {
        let store = Arc::clone(&self.store);
        let (key, learnt) = (key.to_string(), Arc::clone(learnt));
        let kept = tokio::task::spawn_blocking(move || store.put(&key, &learnt)).await;
        match kept {
            Ok(Ok(())) => self.counts.stored(),
            Ok(Err(err)) => {
                self.counts.store_failed();
                tracing::warn!("an upstream answer could not be kept: {err}");
            }
            Err(err) => tracing::warn!("an upstream answer could not be kept: {err}"),
        }
    }
}

/// A refusal in words, naming the server.
fn refusal_words(server: &Server, refusal: Refusal) -> String {
    let host = &server.host;
    let secs = |wait: Duration| wait.as_secs_f64();
    match refusal {
        Refusal::Budget { wait } => {
            let limits = lock(&server.politeness).limits();
            format!(
                "the request budget for {host} is spent ({} a second, {} at once); next request in {:.1} s",
                limits.rate,
                limits.burst,
                secs(wait)
            )
        }
        Refusal::Paused { wait } => format!(
            "{host} asked to wait (429 Too Many Requests or Retry-After); next request in {:.0} s",
            secs(wait).ceil()
        ),
        Refusal::BreakerOpen { wait } => format!(
            "{host} failed repeatedly; asked again in {:.0} s",
            secs(wait).ceil()
        ),
        Refusal::TrialOut => {
            format!("{host} failed repeatedly; a trial request is out to see whether it is back")
        }
    }
}
