//! Recent answers, bounded in bytes, with identical requests in flight
//! computed once.
//!
//! Bounded by bytes, not entries: an answer's size varies a hundredfold
//! (a bare king has a few moves, a position with several queens 200+), so a
//! count bounds nothing an operator can plan memory with. The key leaves out
//! the fullmove number, which never changes an answer (the halfmove clock
//! does and stays in): otherwise one position asked with many move numbers
//! fills the cache with copies.
//!
//! An answer whose DTM table failed (`dtm_unavailable`: `dtm` null where
//! the table should have said) is kept [`DEGRADED_TTL`] only: long enough
//! that a popular position does not re-read a damaged table for every
//! request, short enough that the whole answer comes back soon after the
//! table does. It is kept with its reason, so a cached copy still says why.
//!
//! The cache is quick_cache's, as for the other caches of the server:
//! identical requests meet at its placeholder (`get_value_or_guard_async`),
//! where the first computes and the others wait and share what it found,
//! an error too (handed to them, then dropped, so the next request tries
//! again). An answer carries when it stops counting; a lookup that finds
//! it past that time treats it as missing.

use std::{
    future::Future,
    mem::size_of,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use app::api::{MainlineAnswer, MainlineStep, MoveInfo, TablebaseAnswer};
use app::variant::Variant;
use quick_cache::{OptionsBuilder, Weighter, sync::Cache};
use shakmaty::{EnPassantMode, Position, fen::Epd, variant::VariantPosition};

use super::EngineError;

/// How long an answer whose DTM table failed is kept.
pub const DEGRADED_TTL: Duration = Duration::from_secs(10);

/// A typical answer's bytes, for the shard count: the cache keeps about
/// 32 answers a shard, so a small cache is one shard and a big answer
/// still fits a shard.
const TYPICAL_ANSWER_BYTES: u64 = 2 << 10;

/// One cached outcome of a computation: the answer, or the error that the
/// requests waiting on it share (kept no longer than it takes to hand it
/// to them), with when it stops counting and what it weighs.
struct Slot<V> {
    outcome: Result<Arc<V>, Arc<EngineError>>,
    /// `None`: kept until evicted.
    expires: Option<Instant>,
    weight: u64,
}

impl<V> Clone for Slot<V> {
    fn clone(&self) -> Self {
        Slot {
            outcome: self.outcome.clone(),
            expires: self.expires,
            weight: self.weight,
        }
    }
}

impl<V> Slot<V> {
    /// An answer kept for a later request: neither an error nor expired.
    fn fresh_answer(&self, now: Instant) -> Option<&Arc<V>> {
        let live = self.expires.is_none_or(|at| now < at);
        self.outcome.as_ref().ok().filter(|_| live)
    }

    fn expired(&self, now: Instant) -> bool {
        self.expires.is_some_and(|at| now >= at)
    }
}

/// A slot weighs its key and answer bytes, measured once when computed.
#[derive(Clone)]
struct SlotBytes;

impl<V> Weighter<String, Slot<V>> for SlotBytes {
    fn weight(&self, _key: &String, slot: &Slot<V>) -> u64 {
        slot.weight
    }
}

type Slots<V> = Cache<String, Slot<V>, SlotBytes>;

/// What the cache holds per route; one typed cache each.
pub struct AnswerCache {
    probes: Slots<TablebaseAnswer>,
    mainlines: Slots<MainlineAnswer>,
    capacity_bytes: u64,
    counts: Counts,
}

/// How requests met the cache, for `/metrics`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CacheStats {
    /// Answered from the cache.
    pub hits: u64,
    /// Computed (the first of identical requests in flight).
    pub misses: u64,
    /// Waited for an identical request in flight instead of computing.
    pub coalesced: u64,
    /// Answers held now.
    pub entries: u64,
    /// Approximate bytes the held answers take.
    pub bytes: u64,
    /// The bound on `bytes`.
    pub capacity_bytes: u64,
}

#[derive(Default)]
struct Counts {
    hits: AtomicU64,
    misses: AtomicU64,
    coalesced: AtomicU64,
}

/// What the cache needs to know of an answer to keep it.
trait Answer {
    /// What it costs to keep, for [`Slot::weight`].
    fn bytes(&self) -> usize;
    /// Whether its DTM table failed, so it is kept [`DEGRADED_TTL`] only.
    fn degraded(&self) -> bool;
}

impl Answer for TablebaseAnswer {
    fn bytes(&self) -> usize {
        probe_bytes(self)
    }

    fn degraded(&self) -> bool {
        !self.dtm_unavailable.is_empty()
    }
}

impl Answer for MainlineAnswer {
    fn bytes(&self) -> usize {
        mainline_bytes_of(self)
    }

    fn degraded(&self) -> bool {
        false
    }
}

impl AnswerCache {
    /// A cache of at most `capacity_bytes`, split between the two routes
    /// (mainlines are rare and small: an eighth is plenty). 0 keeps nothing
    /// but still coalesces identical requests in flight.
    pub fn new(capacity_bytes: u64) -> AnswerCache {
        let mainline_bytes = capacity_bytes / 8;
        AnswerCache {
            probes: slots(capacity_bytes - mainline_bytes),
            mainlines: slots(mainline_bytes),
            capacity_bytes,
            counts: Counts::default(),
        }
    }

    pub async fn probe(
        &self,
        pos: &VariantPosition,
        compute: impl Future<Output = Result<TablebaseAnswer, EngineError>>,
    ) -> Result<Arc<TablebaseAnswer>, EngineError> {
        self.get_or_compute(&self.probes, key(pos), compute).await
    }

    pub async fn mainline(
        &self,
        pos: &VariantPosition,
        compute: impl Future<Output = Result<MainlineAnswer, EngineError>>,
    ) -> Result<Arc<MainlineAnswer>, EngineError> {
        self.get_or_compute(&self.mainlines, key(pos), compute)
            .await
    }

    /// The answer if it is cached, without computing anything (so a request
    /// that would be refused as overload can still be served).
    pub fn cached_probe(&self, pos: &VariantPosition) -> Option<Arc<TablebaseAnswer>> {
        self.hit(&self.probes, &key(pos))
    }

    pub fn cached_mainline(&self, pos: &VariantPosition) -> Option<Arc<MainlineAnswer>> {
        self.hit(&self.mainlines, &key(pos))
    }

    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.counts.hits.load(Ordering::Relaxed),
            misses: self.counts.misses.load(Ordering::Relaxed),
            coalesced: self.counts.coalesced.load(Ordering::Relaxed),
            entries: (self.probes.len() + self.mainlines.len()) as u64,
            bytes: self.probes.weight() + self.mainlines.weight(),
            capacity_bytes: self.capacity_bytes,
        }
    }

    fn hit<V>(&self, cache: &Slots<V>, key: &str) -> Option<Arc<V>> {
        let found = cache.get(key)?.fresh_answer(Instant::now()).cloned();
        if found.is_some() {
            self.counts.hits.fetch_add(1, Ordering::Relaxed);
        }
        found
    }

    /// The answer from the cache or from the identical request in flight,
    /// else computed here and kept. An expired answer counts as missing; an
    /// error is handed to the requests that waited for it and not kept.
    async fn get_or_compute<V: Answer>(
        &self,
        cache: &Slots<V>,
        key: String,
        compute: impl Future<Output = Result<V, EngineError>>,
    ) -> Result<Arc<V>, EngineError> {
        let guard = loop {
            match cache.get_value_or_guard_async(&key).await {
                Ok(slot) if slot.expired(Instant::now()) && slot.outcome.is_ok() => {
                    // Gone stale: drop it (unless already replaced) and ask
                    // again, to compute it or wait for who does.
                    cache.remove_if(&key, |kept| kept.expires == slot.expires);
                }
                Ok(slot) => {
                    self.counts.coalesced.fetch_add(1, Ordering::Relaxed);
                    return slot.outcome.map_err(|err| err.as_ref().clone());
                }
                Err(guard) => break guard,
            }
        };
        self.counts.misses.fetch_add(1, Ordering::Relaxed);
        let computed = compute.await;
        let key_bytes = key.len();
        let slot = match computed {
            Ok(answer) => Slot {
                weight: weight(key_bytes, answer.bytes()),
                expires: expiry(&answer, Instant::now()),
                outcome: Ok(Arc::new(answer)),
            },
            Err(err) => Slot {
                weight: weight(key_bytes, size_of::<EngineError>()),
                expires: Some(Instant::now()),
                outcome: Err(Arc::new(err)),
            },
        };
        let outcome = slot.outcome.clone();
        // Inserting wakes the waiters with the slot; an error then leaves.
        let _ = guard.insert(slot);
        match outcome {
            Ok(answer) => Ok(answer),
            Err(err) => {
                cache.remove_if(&key, |kept| kept.outcome.is_err());
                Err(err.as_ref().clone())
            }
        }
    }
}

/// A cache of slots bounded by `capacity_bytes`.
fn slots<V>(capacity_bytes: u64) -> Slots<V> {
    let typical = (capacity_bytes / TYPICAL_ANSWER_BYTES).max(1);
    let options = OptionsBuilder::new()
        .estimated_items_capacity(usize::try_from(typical).unwrap_or(usize::MAX))
        .weight_capacity(capacity_bytes)
        .build()
        .expect("both sizes are set");
    Cache::with_options(options, SlotBytes, Default::default(), Default::default())
}

/// When an answer stops counting: an answer whose DTM table failed after
/// [`DEGRADED_TTL`], a whole one never (it stays until evicted).
fn expiry<V: Answer>(answer: &V, now: Instant) -> Option<Instant> {
    answer.degraded().then(|| now + DEGRADED_TTL)
}

/// The position without its fullmove number: board, side, castling, en
/// passant and the halfmove clock, which is all an answer depends on, after
/// the variant's name (standard positions keep the bare key).
pub fn key(pos: &VariantPosition) -> String {
    let epd = Epd::from_position(pos, EnPassantMode::Legal);
    match Variant::of(pos) {
        Some(Variant::Standard) => format!("{epd} {}", pos.halfmoves()),
        _ => format!("{} {epd} {}", pos.variant(), pos.halfmoves()),
    }
}

fn weight(key_bytes: usize, answer_bytes: usize) -> u64 {
    u64::try_from(key_bytes + answer_bytes).unwrap_or(u64::MAX)
}

/// Approximate heap and inline bytes of an answer: what it costs to keep.
fn probe_bytes(answer: &TablebaseAnswer) -> usize {
    let moves: usize = answer
        .moves
        .iter()
        .map(|m| size_of::<MoveInfo>() + m.uci.capacity() + m.san.capacity())
        .sum();
    size_of::<TablebaseAnswer>() + moves
}

fn mainline_bytes_of(answer: &MainlineAnswer) -> usize {
    let steps: usize = answer
        .mainline
        .iter()
        .map(|s| size_of::<MainlineStep>() + s.uci.capacity() + s.san.capacity())
        .sum();
    size_of::<MainlineAnswer>() + steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_ignores_the_move_number_but_not_the_clock() {
        let at = |fen: &str| key(&app::position::parse_fen(fen).expect("legal").into());
        assert_eq!(
            at("4k3/8/8/8/8/8/8/4K2R w - - 0 1"),
            at("4k3/8/8/8/8/8/8/4K2R w - - 0 77")
        );
        assert_ne!(
            at("4k3/8/8/8/8/8/8/4K2R w - - 0 1"),
            at("4k3/8/8/8/8/8/8/4K2R w - - 9 1")
        );
        assert_ne!(
            at("4k3/8/8/8/8/8/8/4K2R w - - 0 1"),
            at("4k3/8/8/8/8/8/8/4K2R b - - 0 1")
        );
    }

    #[test]
    fn only_answers_whose_dtm_table_failed_expire() {
        let mut answer = TablebaseAnswer {
            pos: app::api::PositionInfo::unknown(),
            moves: Vec::new(),
            dtm_unavailable: Vec::new(),
            source: None,
            ask_again: false,
        };
        let now = Instant::now();
        assert_eq!(expiry(&answer, now), None);
        answer.dtm_unavailable =
            app::api::DtmUnavailable::from_header("KQKR.egtb.bz;problem=damaged;root");
        assert_eq!(expiry(&answer, now), Some(now + DEGRADED_TTL));
    }

    fn answer(dtm_unavailable: &str) -> TablebaseAnswer {
        TablebaseAnswer {
            pos: app::api::PositionInfo::unknown(),
            moves: Vec::new(),
            dtm_unavailable: app::api::DtmUnavailable::from_header(dtm_unavailable),
            source: None,
            ask_again: false,
        }
    }

    fn computed_twice() -> Result<TablebaseAnswer, EngineError> {
        panic!("an identical request in flight computed again")
    }

    fn kpk() -> VariantPosition {
        app::position::parse_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")
            .expect("legal")
            .into()
    }

    #[tokio::test]
    async fn an_expired_answer_is_computed_again() {
        let cache = AnswerCache::new(1 << 20);
        let pos = kpk();
        let degraded = "KQKR.egtb.bz;problem=damaged;root";
        cache
            .probe(&pos, async { Ok(answer(degraded)) })
            .await
            .expect("answer");
        assert!(cache.cached_probe(&pos).is_some());
        // Age the kept slot past its time.
        let key = key(&pos);
        let mut slot = cache.probes.get(&key).expect("kept");
        slot.expires = Some(Instant::now());
        cache.probes.insert(key, slot);
        assert!(cache.cached_probe(&pos).is_none());
        let again = cache
            .probe(&pos, async { Ok(answer("")) })
            .await
            .expect("answer");
        assert!(again.dtm_unavailable.is_empty());
        assert!(cache.cached_probe(&pos).is_some());
        let stats = cache.stats();
        assert_eq!((stats.misses, stats.entries), (2, 1), "{stats:?}");
    }

    #[tokio::test]
    async fn waiters_share_one_computation_and_its_error() {
        let cache = AnswerCache::new(1 << 20);
        let pos = kpk();
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let first = cache.probe(&pos, async {
            released.await.expect("released");
            Err(EngineError::Internal("boom".into()))
        });
        let second = cache.probe(&pos, async { computed_twice() });
        let (first, second, ()) = tokio::join!(first, second, async {
            tokio::task::yield_now().await;
            release.send(()).expect("first waits");
        });
        assert!(matches!(first, Err(EngineError::Internal(_))), "{first:?}");
        assert!(
            matches!(second, Err(EngineError::Internal(_))),
            "{second:?}"
        );
        let stats = cache.stats();
        assert_eq!((stats.misses, stats.coalesced, stats.entries), (1, 1, 0));
        // The error is not kept: the next request computes.
        let answer = cache.probe(&pos, async { Ok(answer("")) }).await;
        assert!(answer.is_ok());
        assert_eq!(cache.stats().misses, 2);
    }

    #[tokio::test]
    async fn a_cache_of_nothing_still_coalesces() {
        let cache = AnswerCache::new(0);
        let pos = kpk();
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let first = cache.probe(&pos, async {
            released.await.expect("released");
            Ok(answer(""))
        });
        let second = cache.probe(&pos, async { computed_twice() });
        let (first, second, ()) = tokio::join!(first, second, async {
            tokio::task::yield_now().await;
            release.send(()).expect("first waits");
        });
        assert!(Arc::ptr_eq(
            &first.expect("answer"),
            &second.expect("answer")
        ));
        let stats = cache.stats();
        assert_eq!((stats.misses, stats.coalesced, stats.entries), (1, 1, 0));
    }

    #[test]
    fn the_same_board_in_another_variant_is_another_key() {
        use app::variant::{Variant, parse_variant_fen};
        let fen = "8/8/8/8/8/2k5/8/K6R w - - 0 1";
        let standard = key(&parse_variant_fen(Variant::Standard, fen).expect("legal"));
        let atomic = key(&parse_variant_fen(Variant::Atomic, fen).expect("legal"));
        assert_eq!(standard, "8/8/8/8/8/2k5/8/K6R w - - 0");
        assert_eq!(atomic, format!("atomic {standard}"));
    }
}
