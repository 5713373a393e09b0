//! What the probes of recent positions found, shared by all requests.
//!
//! An explorer's requests walk lines: a request's position was one of the
//! moves of the request before, and lines transpose. On the explored-lines
//! log (explore-345) a fifth of a request's probes are of positions an
//! earlier request probed, about a sixth of its probing time
//! (server/docs/benchmarks.md, "Probing without a hand-off"); the response
//! cache cannot see this, since it keys whole answers by their position.
//!
//! What a probe finds (the DTZ, mate, stalemate, the variant's end)
//! depends on the position alone, not on its clocks (the 50-move outcome is
//! decided from them afterwards), and the tables do not change while the
//! server runs, so a value once found stays true. Errors are not kept: a
//! table that could not be read is tried again; nor is a probe whose DTM
//! table failed (its `dtm` is unknown, not found), so the table is asked
//! again once the answer cache lets the position go.
//!
//! Keys are 128-bit Zobrist hashes with the variant: two positions share
//! one with a chance of about 2^-100 over a server's life, where 64 bits
//! would leave it at one in millions for a large memo.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use quick_cache::sync::Cache;
use shakmaty::{
    EnPassantMode, Position,
    variant::{Variant, VariantPosition},
    zobrist::Zobrist128,
};

use super::probed::Probed;

/// One position, under its variant's rules, whatever its clocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key(Variant, u128);

impl Key {
    pub fn of(pos: &VariantPosition) -> Key {
        let hash: Zobrist128 = pos.zobrist_hash(EnPassantMode::Legal);
        Key(pos.variant(), hash.0)
    }
}

/// What an entry costs: key, value and the cache's own bookkeeping
/// (measured: 25 MB of resident memory for 256,000 positions).
const ENTRY_BYTES: u64 = 96;

/// A bounded memo of probed positions (`serve --probe-memo-mb`).
pub struct ProbeMemo {
    /// `None` when sized 0: nothing is kept.
    cache: Option<Cache<Key, Probed>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// How probes met the memo, for `/metrics`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct MemoStats {
    pub hits: u64,
    pub misses: u64,
    pub entries: u64,
    pub capacity_entries: u64,
}

impl ProbeMemo {
    /// A memo of about `capacity_bytes` (0: keeps nothing).
    pub fn new(capacity_bytes: u64) -> ProbeMemo {
        let entries = usize::try_from(capacity_bytes / ENTRY_BYTES).unwrap_or(usize::MAX);
        ProbeMemo {
            cache: (entries > 0).then(|| Cache::new(entries)),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// What a probe of the position found before, if it is still kept,
    /// with the clock of `halfmoves`.
    pub fn get(&self, key: Key, halfmoves: u32) -> Option<Probed> {
        let cache = self.cache.as_ref()?;
        let found = cache.get(&key);
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Relaxed);
        found.map(|probed| Probed {
            halfmoves,
            ..probed
        })
    }

    /// Keeps what a probe found, unless its DTM table failed.
    pub fn insert(&self, key: Key, probed: &Probed) {
        if let Some(cache) = &self.cache
            && probed.dtm_failure.is_none()
        {
            cache.insert(key, probed.clone());
        }
    }

    pub fn stats(&self) -> MemoStats {
        MemoStats {
            hits: self.hits.load(Relaxed),
            misses: self.misses.load(Relaxed),
            entries: self.cache.as_ref().map_or(0, |c| c.len() as u64),
            capacity_entries: self.cache.as_ref().map_or(0, Cache::capacity),
        }
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, fen::Fen};
    use shakmaty_syzygy::{Dtz, MaybeRounded};

    use super::*;

    fn position(variant: Variant, fen: &str) -> VariantPosition {
        let fen: Fen = fen.parse().expect("valid FEN");
        VariantPosition::from_setup(variant, fen.into_setup(), CastlingMode::Standard)
            .expect("legal position")
    }

    #[test]
    fn keys_leave_out_the_clocks_but_not_the_variant_or_the_side_to_move() {
        let fen = "8/8/4k3/8/8/8/8/KQ6 w - - 0 1";
        let a = Key::of(&position(Variant::Chess, fen));
        let later = Key::of(&position(Variant::Chess, "8/8/4k3/8/8/8/8/KQ6 w - - 37 80"));
        assert_eq!(a, later);
        assert_ne!(a, Key::of(&position(Variant::Atomic, fen)));
        assert_ne!(
            a,
            Key::of(&position(Variant::Chess, "8/8/4k3/8/8/8/8/KQ6 b - - 0 1"))
        );
    }

    #[test]
    fn keeps_what_was_found_and_takes_the_clock_of_the_asking_position() {
        let memo = ProbeMemo::new(1 << 20);
        let key = Key::of(&position(Variant::Chess, "8/8/4k3/8/8/8/8/KQ6 w - - 0 1"));
        assert!(memo.get(key, 0).is_none());
        let probed = Probed {
            checkmate: false,
            stalemate: false,
            variant_win: false,
            variant_loss: false,
            insufficient_material: false,
            dtw_zero: false,
            dtz: Some(MaybeRounded::Precise(Dtz(19))),
            dtm: Some(19),
            dtm_failure: None,
            halfmoves: 0,
        };
        memo.insert(key, &probed);
        let again = memo.get(key, 37).expect("kept");
        assert!(
            matches!(again.dtz, Some(MaybeRounded::Precise(Dtz(19)))),
            "{again:?}"
        );
        assert_eq!(again.halfmoves, 37);
        let stats = memo.stats();
        assert_eq!((stats.hits, stats.misses, stats.entries), (1, 1, 1));
        let off = ProbeMemo::new(0);
        off.insert(key, &probed);
        assert!(off.get(key, 0).is_none());
        assert_eq!(off.stats(), MemoStats::default());
    }

    /// A probe whose DTM table failed found no `dtm`: kept, it would stand
    /// for the truth after the table is readable again.
    #[test]
    fn a_probe_whose_dtm_table_failed_is_not_kept() {
        let memo = ProbeMemo::new(1 << 20);
        let key = Key::of(&position(Variant::Chess, "8/8/4k3/8/8/8/8/KQ6 w - - 0 1"));
        let degraded = Probed {
            checkmate: false,
            stalemate: false,
            variant_win: false,
            variant_loss: false,
            insufficient_material: false,
            dtw_zero: false,
            dtz: Some(MaybeRounded::Precise(Dtz(19))),
            dtm: None,
            dtm_failure: Some(Box::new(crate::dtm::unavailable::DtmFailure {
                table: "KQK.egtb.bz".to_string(),
                problem: app::api::DtmProblem::Damaged,
            })),
            halfmoves: 0,
        };
        memo.insert(key, &degraded);
        assert!(memo.get(key, 0).is_none());
    }
}
