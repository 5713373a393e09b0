//! The answer for one position: its own outcome and that of every legal move.

use std::cmp::Reverse;

use app::api::{Category, MoveInfo, PositionInfo, TablebaseAnswer};
use futures::future::try_join_all;
use shakmaty::{CastlingMode, Chess, Position, san::SanPlus};
use shakmaty_syzygy::{AmbiguousWdl, Dtz, MaybeRounded, SyzygyError};

use super::{Engine, EngineError, Tables};

/// What the tables and the rules say about one position, before the
/// 50-move-rule category is decided (that needs the clock of the move before).
#[derive(Debug, Clone, Copy)]
pub struct Probed {
    pub checkmate: bool,
    pub stalemate: bool,
    pub insufficient_material: bool,
    pub dtz: Option<MaybeRounded<Dtz>>,
    pub halfmoves: u32,
}

/// Probes one position; positions outside the loaded tables are `dtz: None`
/// (the API answers "unknown"), unreadable tables are errors.
pub fn probe_position(tables: &Tables, pos: &Chess) -> Result<Probed, EngineError> {
    let dtz = match tables.tablebase.probe_dtz(pos) {
        Ok(dtz) => Some(dtz),
        Err(SyzygyError::Castling | SyzygyError::TooManyPieces) => None,
        Err(err @ SyzygyError::MissingTable { .. }) => match tables.explain(err) {
            EngineError::NotInTables(_) => None,
            rejected => return Err(rejected),
        },
        Err(err) => return Err(tables.explain(err)),
    };
    Ok(Probed {
        checkmate: pos.is_checkmate(),
        stalemate: pos.is_stalemate(),
        insufficient_material: pos.is_insufficient_material(),
        dtz,
        halfmoves: pos.halfmoves(),
    })
}

impl Probed {
    /// The outcome under the 50-move rule; `halfmoves_before` is the clock of
    /// the position before the last move, which decides whether a mate or a
    /// conversion still came in time.
    pub fn category(&self, halfmoves_before: u32) -> Category {
        if self.stalemate || self.insufficient_material || self.dtz.is_some_and(|d| d.is_zero()) {
            return Category::Draw;
        }
        if self.checkmate {
            return if halfmoves_before < 100 {
                Category::Loss
            } else {
                Category::BlessedLoss
            };
        }
        let Some(dtz) = self.dtz else {
            return Category::Unknown;
        };
        if halfmoves_before >= 100 {
            return if dtz.is_negative() {
                Category::BlessedLoss
            } else {
                Category::CursedWin
            };
        }
        match AmbiguousWdl::from_dtz_and_halfmoves(dtz, self.halfmoves) {
            AmbiguousWdl::Win => Category::Win,
            AmbiguousWdl::MaybeWin => Category::MaybeWin,
            AmbiguousWdl::CursedWin => Category::CursedWin,
            AmbiguousWdl::Draw => Category::Draw,
            AmbiguousWdl::BlessedLoss => Category::BlessedLoss,
            AmbiguousWdl::MaybeLoss => Category::MaybeLoss,
            AmbiguousWdl::Loss => Category::Loss,
        }
    }

    pub fn info(&self, category: Category) -> PositionInfo {
        PositionInfo {
            checkmate: self.checkmate,
            stalemate: self.stalemate,
            variant_win: false,
            variant_loss: false,
            insufficient_material: self.insufficient_material,
            dtz: self.dtz.map(|d| d.ignore_rounding().0),
            precise_dtz: self.dtz.and_then(MaybeRounded::precise).map(|d| d.0),
            dtm: None,
            dtw: None,
            dtc: None,
            category,
        }
    }
}

/// A legal move with what it leads to, plus what the ordering needs.
struct Candidate {
    info: MoveInfo,
    capture: bool,
    promotion: bool,
}

/// Probes the root and every legal move at once on the engine's pool, so
/// the reads of one request reach the disks together (or one after another
/// with `--sequential-probes`, to measure what that buys).
pub async fn answer(engine: &Engine, pos: Chess) -> Result<TablebaseAnswer, EngineError> {
    let halfmoves = pos.halfmoves();
    let root_pos = pos.clone();
    let root = async {
        engine
            .blocking(move |tb| probe_position(tb, &root_pos))
            .await?
    };
    let moves = pos.legal_moves().into_iter().map(|m| {
        let mut after = pos.clone();
        let uci = m.to_uci(CastlingMode::Standard).to_string();
        let san = SanPlus::from_move_and_play_unchecked(&mut after, m).to_string();
        async move {
            let probed = engine
                .blocking(move |tb| probe_position(tb, &after))
                .await??;
            Ok::<_, EngineError>(Candidate {
                info: MoveInfo {
                    uci,
                    san,
                    zeroing: m.is_zeroing(),
                    conversion: m.is_capture() || m.is_promotion(),
                    pos: probed.info(probed.category(halfmoves)),
                },
                capture: m.is_capture(),
                promotion: m.is_promotion(),
            })
        }
    });
    let (root, candidates) = if engine.sequential_probes() {
        let root = root.await;
        (root, one_after_another(moves).await)
    } else {
        tokio::join!(root, try_join_all(moves))
    };
    let root = root?;
    let mut candidates = candidates?;

    candidates.sort_by_key(sort_key);
    let mut moves: Vec<MoveInfo> = candidates.into_iter().map(|c| c.info).collect();
    let own = root.category(halfmoves.saturating_sub(1));
    resolve_maybe(own, &mut moves);
    let category = moves.first().map_or(own, |best| best.pos.category.flip());
    Ok(TablebaseAnswer {
        pos: root.info(category),
        moves,
    })
}

async fn one_after_another<T>(
    probes: impl Iterator<Item = impl Future<Output = Result<T, EngineError>>>,
) -> Result<Vec<T>, EngineError> {
    let mut done = Vec::new();
    for probe in probes {
        done.push(probe.await?);
    }
    Ok(done)
}

/// Ordering of moves, compared field by field (false sorts first).
type SortKey = (Category, bool, bool, bool, bool, bool, Reverse<i32>, bool);

/// Best first: moves that leave the opponent worst off; among wins mates,
/// then zeroing moves, then the fastest DTZ; among losses the longest resistance.
fn sort_key(c: &Candidate) -> SortKey {
    let after = &c.info.pos;
    let dtz = after.dtz.unwrap_or(0);
    // The mover is winning or drawing: resetting the clock is good.
    let mover_not_losing = dtz <= 0;
    (
        after.category,
        !after.checkmate,
        !after.stalemate,
        !after.insufficient_material,
        c.info.zeroing != mover_not_losing,
        c.capture != mover_not_losing,
        Reverse(dtz),
        !c.promotion,
    )
}

/// A rounded DTZ can leave a move "maybe" winning; when the root's own
/// result is certain, the best moves share it.
fn resolve_maybe(own: Category, moves: &mut [MoveInfo]) {
    let (maybe, certain) = match own {
        Category::Win => (Category::MaybeLoss, Category::Loss),
        Category::CursedWin => (Category::MaybeLoss, Category::BlessedLoss),
        Category::BlessedLoss => (Category::MaybeWin, Category::CursedWin),
        Category::Loss => (Category::MaybeWin, Category::Win),
        _ => return,
    };
    for m in moves.iter_mut().take_while(|m| m.pos.category == maybe) {
        m.pos.category = certain;
    }
}
