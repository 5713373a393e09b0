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

use std::{
    future::Future,
    mem::size_of,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use app::api::{MainlineAnswer, MainlineStep, MoveInfo, TablebaseAnswer};
use app::variant::Variant;
use moka::{Expiry, future::Cache};
use shakmaty::{EnPassantMode, Position, fen::Epd, variant::VariantPosition};

use super::EngineError;

/// How long an answer whose DTM table failed is kept.
pub const DEGRADED_TTL: Duration = Duration::from_secs(10);

/// Keeps whole answers until evicted, degraded ones [`DEGRADED_TTL`].
struct DegradedExpiry;

impl Expiry<String, Arc<TablebaseAnswer>> for DegradedExpiry {
    fn expire_after_create(
        &self,
        _key: &String,
        answer: &Arc<TablebaseAnswer>,
        _created_at: Instant,
    ) -> Option<Duration> {
        (!answer.dtm_unavailable.is_empty()).then_some(DEGRADED_TTL)
    }
}

/// What the cache holds per route; one typed cache each.
pub struct AnswerCache {
    probes: Cache<String, Arc<TablebaseAnswer>>,
    mainlines: Cache<String, Arc<MainlineAnswer>>,
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

impl AnswerCache {
    /// A cache of at most `capacity_bytes`, split between the two routes
    /// (mainlines are rare and small: an eighth is plenty). 0 keeps nothing
    /// but still coalesces identical requests in flight.
    pub fn new(capacity_bytes: u64) -> AnswerCache {
        let mainline_bytes = capacity_bytes / 8;
        AnswerCache {
            probes: Cache::builder()
                .max_capacity(capacity_bytes - mainline_bytes)
                .weigher(|key: &String, answer: &Arc<TablebaseAnswer>| {
                    weight(key, probe_bytes(answer))
                })
                .expire_after(DegradedExpiry)
                .build(),
            mainlines: Cache::builder()
                .max_capacity(mainline_bytes)
                .weigher(|key: &String, answer: &Arc<MainlineAnswer>| {
                    weight(key, mainline_bytes_of(answer))
                })
                .build(),
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
    pub async fn cached_probe(&self, pos: &VariantPosition) -> Option<Arc<TablebaseAnswer>> {
        self.hit(self.probes.get(&key(pos)).await)
    }

    pub async fn cached_mainline(&self, pos: &VariantPosition) -> Option<Arc<MainlineAnswer>> {
        self.hit(self.mainlines.get(&key(pos)).await)
    }

    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.counts.hits.load(Ordering::Relaxed),
            misses: self.counts.misses.load(Ordering::Relaxed),
            coalesced: self.counts.coalesced.load(Ordering::Relaxed),
            entries: self.probes.entry_count() + self.mainlines.entry_count(),
            bytes: self.probes.weighted_size() + self.mainlines.weighted_size(),
            capacity_bytes: self.probes.policy().max_capacity().unwrap_or(0)
                + self.mainlines.policy().max_capacity().unwrap_or(0),
        }
    }

    /// Lets moka finish its pending bookkeeping (evictions, sizes); for
    /// tests and `/metrics`, which want current figures.
    pub async fn settle(&self) {
        self.probes.run_pending_tasks().await;
        self.mainlines.run_pending_tasks().await;
    }

    fn hit<V>(&self, found: Option<V>) -> Option<V> {
        if found.is_some() {
            self.counts.hits.fetch_add(1, Ordering::Relaxed);
        }
        found
    }

    async fn get_or_compute<V: Send + Sync + 'static>(
        &self,
        cache: &Cache<String, Arc<V>>,
        key: String,
        compute: impl Future<Output = Result<V, EngineError>>,
    ) -> Result<Arc<V>, EngineError> {
        let computed_here = AtomicBool::new(false);
        let result = cache
            .try_get_with(key, async {
                computed_here.store(true, Ordering::Relaxed);
                compute.await.map(Arc::new)
            })
            .await
            .map_err(|err: Arc<EngineError>| err.as_ref().clone());
        let count = if computed_here.load(Ordering::Relaxed) {
            &self.counts.misses
        } else {
            &self.counts.coalesced
        };
        count.fetch_add(1, Ordering::Relaxed);
        result
    }
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

fn weight(key: &str, answer_bytes: usize) -> u32 {
    u32::try_from(key.len() + answer_bytes).unwrap_or(u32::MAX)
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
        };
        let now = Instant::now();
        let key = String::new();
        let whole = Arc::new(answer.clone());
        assert_eq!(DegradedExpiry.expire_after_create(&key, &whole, now), None);
        answer.dtm_unavailable =
            app::api::DtmUnavailable::from_header("KQKR.egtb.bz;problem=damaged;root");
        let degraded = Arc::new(answer);
        assert_eq!(
            DegradedExpiry.expire_after_create(&key, &degraded, now),
            Some(DEGRADED_TTL)
        );
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
