//! The answer for one position: its own outcome and that of every legal move,
//! under the position's variant (standard, atomic or antichess).

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use app::api::{Category, DtmUnavailable, MoveInfo, PositionInfo, TablebaseAnswer};
use futures::future::try_join_all;
use shakmaty::{KnownOutcome, Outcome, Position, variant::VariantPosition};
use shakmaty_syzygy::{AmbiguousWdl, MaybeRounded};

use super::{
    EngineError, Tables,
    order::{self, RankedMove},
    pool::{ProbePool, Readiness, Tried},
    probe_memo::{Key, ProbeMemo},
    probed::Probed,
};
use crate::store::context;

/// Probes one position; positions outside the loaded tables are `dtz: None`
/// (the API answers "unknown") and `dtm: None`, unreadable Syzygy tables
/// are errors; a DTM table that failed leaves `dtm: None` and says so
/// (`dtm_failure`).
pub fn probe_position(tables: &Tables, pos: &VariantPosition) -> Result<Probed, EngineError> {
    let dtz = tables.probe_dtz(pos)?;
    let (dtm, dtm_failure) = tables.probe_dtm(pos)?;
    let (variant_win, variant_loss) = match pos.variant_outcome() {
        Outcome::Known(KnownOutcome::Decisive { winner }) => {
            (winner == pos.turn(), winner != pos.turn())
        }
        _ => (false, false),
    };
    let stalemate = pos.is_stalemate();
    Ok(Probed {
        checkmate: pos.is_checkmate(),
        stalemate,
        variant_win,
        variant_loss,
        insufficient_material: pos.is_insufficient_material(),
        dtw_zero: dtw_is_zero(pos, stalemate),
        dtz,
        dtm,
        dtm_failure: dtm_failure.map(Box::new),
        halfmoves: pos.halfmoves(),
    })
}

/// Whether lila-tablebase answers `dtw: 0` for `pos` (`stalemate` is
/// `pos.is_stalemate()`); every other position of Zugzwang's is `dtw: null`.
///
/// lila-tablebase asks its antichess DTW prober (antichess-tb-sys 0.2,
/// `antichess_tb::probe_dtw`) about every antichess position of at most 4
/// pieces without castling rights, the root and each move's. Zugzwang has
/// no DTW tables, but one answer needs none: a side to move with pieces
/// and no legal move has won (an antichess stalemate), and the prober says
/// so as 0 before it looks for a table. A side with no pieces at all, as
/// after a move that takes the opponent's last piece, is refused by the
/// prober (error -1), so lila answers `null` there; every other position
/// needs a table. Standard and atomic positions are never asked: `null`.
///
/// In antichess a king is never in check, so `stalemate` is exactly "both
/// sides have pieces and the side to move has no legal move", the prober's
/// own test; antichess positions never have castling rights (shakmaty
/// refuses them), which lila's test checks all the same.
fn dtw_is_zero(pos: &VariantPosition, stalemate: bool) -> bool {
    matches!(pos, VariantPosition::Antichess(_))
        && stalemate
        && pos.board().occupied().count() <= 4
        && !pos.castles().any()
}

impl Probed {
    /// The outcome under the 50-move rule; `halfmoves_before` is the clock of
    /// the position before the last move, which decides whether a mate or a
    /// conversion still came in time. A variant's end is decided as a mate
    /// is, as lila-tablebase decides it.
    pub fn category(&self, halfmoves_before: u32) -> Category {
        let variant_end = self.variant_win || self.variant_loss;
        if !variant_end
            && (self.stalemate
                || self.insufficient_material
                || self.dtz.is_some_and(|d| d.is_zero()))
        {
            return Category::Draw;
        }
        if self.checkmate || self.variant_loss {
            return if halfmoves_before < 100 {
                Category::Loss
            } else {
                Category::BlessedLoss
            };
        }
        if self.variant_win {
            return if halfmoves_before < 100 {
                Category::Win
            } else {
                Category::CursedWin
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
            // Rounding leaves the 50-move outcome open: the tables alone say
            // "win", as lila-tablebase's syzygy-win.
            AmbiguousWdl::MaybeWin => Category::SyzygyWin,
            AmbiguousWdl::CursedWin => Category::CursedWin,
            AmbiguousWdl::Draw => Category::Draw,
            AmbiguousWdl::BlessedLoss => Category::BlessedLoss,
            AmbiguousWdl::MaybeLoss => Category::SyzygyLoss,
            AmbiguousWdl::Loss => Category::Loss,
        }
    }

    pub fn info(&self, category: Category) -> PositionInfo {
        PositionInfo {
            checkmate: self.checkmate,
            stalemate: self.stalemate,
            variant_win: self.variant_win,
            variant_loss: self.variant_loss,
            insufficient_material: self.insufficient_material,
            dtz: self.dtz.map(|d| d.ignore_rounding().0),
            precise_dtz: self.dtz.and_then(MaybeRounded::precise).map(|d| d.0),
            dtm: self.dtm,
            dtw: self.dtw_zero.then_some(0),
            dtc: None,
            category,
        }
    }
}

/// Probes the root and every legal move at once on the pool, so the reads
/// of one request reach the disks together (or one after another with
/// `--sequential-probes`, to measure what that buys).
pub async fn answer(
    pool: &ProbePool,
    memo: &ProbeMemo,
    pos: VariantPosition,
) -> Result<TablebaseAnswer, EngineError> {
    let halfmoves = pos.halfmoves();
    let legal = pos.legal_moves();
    let mut positions = Vec::with_capacity(legal.len() + 1);
    positions.push(pos.clone());
    let mut played = Vec::with_capacity(legal.len());
    for m in legal {
        let (info, after) = MoveInfo::play(&pos, m);
        positions.push(after);
        played.push((m, info));
    }

    let probed = probe_all(pool, memo, positions).await?;
    let dtm_unavailable = dtm_unavailable(&probed);
    let mut probed = probed.into_iter();
    let root = probed
        .next()
        .ok_or_else(|| EngineError::Internal("the root position was not probed".into()))?;
    let ranked: Vec<RankedMove> = played
        .into_iter()
        .zip(probed)
        .map(|((m, info), after)| RankedMove {
            info: MoveInfo {
                pos: after.info(after.category(halfmoves)),
                ..info
            },
            capture: m.capture(),
            promotion: m.promotion(),
        })
        .collect();

    let mut moves = order::sort_best_first(ranked);
    let own = root.category(halfmoves.saturating_sub(1));
    resolve_rounding(own, &mut moves);
    let category = moves.first().map_or(own, |best| best.pos.category.flip());
    Ok(TablebaseAnswer {
        pos: root.info(category),
        moves,
        dtm_unavailable,
        source: None,
        ask_again: false,
    })
}

/// The DTM tables that failed for an answer's positions (the root first,
/// then the moves'), each table and problem once.
fn dtm_unavailable(probed: &[Probed]) -> Vec<DtmUnavailable> {
    let mut list: Vec<DtmUnavailable> = Vec::new();
    for (i, failure) in probed.iter().enumerate() {
        let Some(failure) = &failure.dtm_failure else {
            continue;
        };
        let known = list
            .iter()
            .any(|u| u.table == failure.table && u.problem == failure.problem);
        if !known {
            list.push(DtmUnavailable {
                table: failure.table.clone(),
                problem: failure.problem,
                root: i == 0,
            });
        }
    }
    list
}

/// Probes positions, answers in the order given: those the memo has from
/// earlier requests first, then each of the rest on the async worker with
/// reads that refuse to wait, then those that needed a disk on the pool,
/// together. A position that may need a table suspect of a stuck read
/// fails the request at once (503); one that may need a table being opened
/// waits for the open before the pool (see `engine::pool`).
async fn probe_all(
    pool: &ProbePool,
    memo: &ProbeMemo,
    positions: Vec<VariantPosition>,
) -> Result<Vec<Probed>, EngineError> {
    let keys: Vec<Key> = positions.iter().map(Key::of).collect();
    let mut answers: Vec<Option<Probed>> = positions
        .iter()
        .zip(&keys)
        .map(|(pos, key)| memo.get(*key, pos.halfmoves()))
        .collect();
    if let Some(reads) = context::current_request() {
        reads.count_probes(answers.iter().filter(|a| a.is_none()).count());
    }
    let mut waiting = Vec::new();
    // The first that needs a table not open yet.
    let mut opener = None;
    for (i, pos) in positions.iter().enumerate() {
        if answers[i].is_some() {
            continue;
        }
        // A 200-move position is a millisecond of probes: let other tasks in.
        tokio::task::consume_budget().await;
        if pool.readiness(pos)? == Readiness::TableOpening {
            waiting.push(i);
            continue;
        }
        match pool.try_inline(|tables| probe_position(tables, pos)) {
            Tried::Done(probed) => {
                let probed = probed?;
                memo.insert(keys[i], &probed);
                answers[i] = Some(probed);
            }
            Tried::WouldOpen => {
                opener.get_or_insert(i);
                waiting.push(i);
            }
            Tried::WouldWait => waiting.push(i),
        }
    }
    if !waiting.is_empty() {
        pool.wait_ready(waiting.iter().map(|&i| &positions[i]))
            .await?;
        for (i, probed) in probe_on_pool(pool, positions, waiting, opener).await? {
            memo.insert(keys[i], &probed);
            answers[i] = Some(probed);
        }
    }
    answers
        .into_iter()
        .map(|probed| {
            probed.ok_or_else(|| EngineError::Internal("a position was left unprobed".into()))
        })
        .collect()
}

/// Probes `positions[i]` for each `i` of `waiting` in parallel on the pool.
///
/// As many workers as there are positions or probe threads each take the
/// next unprobed position until none is left: the same parallelism as one
/// pool task per position, but one hand-off to the pool per worker instead
/// of per position. With `--sequential-probes` one worker takes them all,
/// one after another. Once the request is gone, workers stop at the next
/// position and give their probe thread back.
///
/// `opener`, a position that needs a table not open yet, is probed first,
/// alone: shakmaty-syzygy opens a table once, and the probes that need it
/// meanwhile would each wait for that open on a probe thread of their own
/// (all of them for as long as the disk does not answer, if it hangs).
/// It costs one probe's time, once per table.
async fn probe_on_pool(
    pool: &ProbePool,
    positions: Vec<VariantPosition>,
    mut waiting: Vec<usize>,
    opener: Option<usize>,
) -> Result<Vec<(usize, Probed)>, EngineError> {
    pool.count_pooled(waiting.len());
    let mut probed = Vec::with_capacity(waiting.len());
    if let Some(first) = opener {
        waiting.retain(|&i| i != first);
        let pos = positions[first].clone();
        probed.push((
            first,
            pool.run(move |tables| probe_position(tables, &pos))
                .await??,
        ));
    }
    if waiting.is_empty() {
        return Ok(probed);
    }
    let count = waiting.len();
    let workers = pool.workers(count);
    let work = Arc::new((positions, waiting));
    let next = Arc::new(AtomicUsize::new(0));
    let tasks = (0..workers).map(|_| {
        let work = Arc::clone(&work);
        let next = Arc::clone(&next);
        pool.run_until_gone(move |tables, gone| {
            let (positions, waiting) = &*work;
            let mut done = Vec::new();
            loop {
                if gone.is_set() {
                    return done;
                }
                let Some(&i) = waiting.get(next.fetch_add(1, Ordering::Relaxed)) else {
                    return done;
                };
                let probed = probe_position(tables, &positions[i]);
                if probed.is_err() {
                    // The request fails anyway; leave the rest unprobed.
                    next.store(count, Ordering::Relaxed);
                }
                done.push((i, probed));
            }
        })
    });
    for (i, result) in try_join_all(tasks).await?.into_iter().flatten() {
        probed.push((i, result?));
    }
    Ok(probed)
}

/// A rounded DTZ can leave a move's 50-move outcome open (syzygy-win or
/// -loss); when the root's own result is certain, the best moves share it.
fn resolve_rounding(own: Category, moves: &mut [MoveInfo]) {
    let (open, certain) = match own {
        Category::Win => (Category::SyzygyLoss, Category::Loss),
        Category::CursedWin => (Category::SyzygyLoss, Category::BlessedLoss),
        Category::BlessedLoss => (Category::SyzygyWin, Category::CursedWin),
        Category::Loss => (Category::SyzygyWin, Category::Win),
        _ => return,
    };
    for m in moves.iter_mut().take_while(|m| m.pos.category == open) {
        m.pos.category = certain;
    }
}
