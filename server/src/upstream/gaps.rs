//! Where a local answer stops short, so an upstream server may know more:
//! a position (the root, or the one a move leads to) whose result is
//! unknown because a table is missing, or a won or lost standard position
//! without `dtm` where no local DTM table covers its material (or the one
//! that does failed). Everything else the local tables answer in full and
//! is never asked upstream.
//!
//! No tablebase holds positions with castling rights, and none more than
//! [`MAX_UPSTREAM_PIECES`] pieces (lichess answers some 8-piece positions
//! from op1): such unknowns are nobody's, and are not asked either.

use app::{
    api::{Category, PositionInfo, TablebaseAnswer},
    material::table_name,
    variant::Variant,
};
use shakmaty::{Position, variant::VariantPosition};

/// The most pieces an upstream may know a standard position of (lichess's
/// 8-piece op1 answers); atomic and antichess tables end at 6.
pub const MAX_UPSTREAM_PIECES: usize = 8;

/// What the local tables cover beyond the Syzygy tables themselves.
#[derive(Debug, Clone, Default)]
pub struct LocalCoverage {
    /// Materials with a local DTM table (`KBNvK`), sorted.
    pub dtm: Vec<String>,
}

/// Whether an upstream may know some of what `answer` (the local answer
/// for `pos`) leaves unknown.
pub fn incomplete(answer: &TablebaseAnswer, pos: &VariantPosition, local: &LocalCoverage) -> bool {
    let variant = Variant::of(pos).unwrap_or(Variant::Standard);
    // A local DTM table that failed is named; `dtm` is null where it would have said.
    let dtm_failed = !answer.dtm_unavailable.is_empty();
    if gap(&answer.pos, pos, variant, local, dtm_failed) {
        return true;
    }
    answer.moves.iter().any(|m| {
        // Only moves that may be a gap are played out.
        maybe_gap(&m.pos, variant)
            && play(pos, &m.uci)
                .is_some_and(|after| gap(&m.pos, &after, variant, local, dtm_failed))
    })
}

/// Whether `info` may be a gap, before looking at its position.
fn maybe_gap(info: &PositionInfo, variant: Variant) -> bool {
    info.category == Category::Unknown || (variant == Variant::Standard && lacks_dtm(info))
}

/// A won or lost position (mate not on the board) without its depth to mate.
fn lacks_dtm(info: &PositionInfo) -> bool {
    let decisive = !matches!(info.category, Category::Draw | Category::Unknown);
    decisive && info.dtm.is_none() && !info.checkmate
}

fn gap(
    info: &PositionInfo,
    pos: &VariantPosition,
    variant: Variant,
    local: &LocalCoverage,
    dtm_failed: bool,
) -> bool {
    if !askable(pos, variant) {
        return false;
    }
    if info.category == Category::Unknown {
        return true;
    }
    variant == Variant::Standard
        && lacks_dtm(info)
        && (dtm_failed || local.dtm.binary_search(&table_name(pos.board())).is_err())
}

/// Whether some tablebase could hold the position at all.
fn askable(pos: &VariantPosition, variant: Variant) -> bool {
    let most = match variant {
        Variant::Standard => MAX_UPSTREAM_PIECES,
        other => other.max_table_pieces(),
    };
    !pos.castles().any() && pos.board().occupied().count() <= most
}

/// The position after the move `uci`, if it is legal.
fn play(pos: &VariantPosition, uci: &str) -> Option<VariantPosition> {
    let m = uci
        .parse::<shakmaty::uci::UciMove>()
        .ok()?
        .to_move(pos)
        .ok()?;
    let mut after = pos.clone();
    after.play_unchecked(m);
    Some(after)
}
