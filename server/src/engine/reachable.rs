//! Which tables a probe of a position may read: its own material's, and
//! those its captures and promotions lead to (a probe looks one capture
//! deep, a line goes on to the end). Used to refuse, before they take a
//! probe thread, the probes that may need a table whose reads are stuck,
//! and to keep off the async workers those that may wait for a table being
//! opened (`engine::pool`). Erring wide is safe: a probe held back for
//! nothing waits or retries; one let through may block on a stuck read.

use app::variant::Variant;
use shakmaty::{Color, Position, Role, variant::VariantPosition};

use crate::store::layout::variant_of_name;

/// One side's pieces by role, pawn first (as `Role` numbers them).
type Counts = [u8; 6];

const PAWN: usize = Role::Pawn as usize - 1;

/// Whether probing `pos`, or following a line from it, may read the table
/// file `table` (`KQvKR.rtbw`): a table of the position's variant whose
/// material the position's can become by losing pieces and promoting
/// pawns, either side first. False for a file that is not a Syzygy table
/// (a Prophet DTM file: a failing one leaves `dtm` null instead).
pub fn may_read(pos: &VariantPosition, table: &str) -> bool {
    let Some(variant) = variant_of_name(table) else {
        return false;
    };
    if Variant::of(pos) != Some(variant) {
        return false;
    }
    let Some((first, second)) = sides(table) else {
        return false;
    };
    let (white, black) = (counts(pos, Color::White), counts(pos, Color::Black));
    (becomes(white, first) && becomes(black, second))
        || (becomes(white, second) && becomes(black, first))
}

fn counts(pos: &VariantPosition, color: Color) -> Counts {
    let board = pos.board();
    let mut counts = [0; 6];
    for role in Role::ALL {
        counts[role as usize - 1] = (board.by_color(color) & board.by_role(role)).count() as u8;
    }
    counts
}

/// The two sides of a table's name (`KQvKR.rtbw`).
fn sides(table: &str) -> Option<(Counts, Counts)> {
    let stem = table.split('.').next()?;
    let (first, second) = stem.split_once('v')?;
    Some((letters(first)?, letters(second)?))
}

fn letters(side: &str) -> Option<Counts> {
    let mut counts = [0u8; 6];
    for c in side.chars() {
        let role = Role::from_char(c.to_ascii_lowercase())?;
        counts[role as usize - 1] = counts[role as usize - 1].checked_add(1)?;
    }
    Some(counts)
}

/// Whether one side's pieces `from` can become `to` by losing pieces and
/// promoting pawns (to any piece: a king too, in antichess).
fn becomes(from: Counts, to: Counts) -> bool {
    let Some(promoted) = from[PAWN].checked_sub(to[PAWN]) else {
        return false;
    };
    let missing: u32 = (0..6)
        .filter(|&i| i != PAWN)
        .map(|i| u32::from(to[i].saturating_sub(from[i])))
        .sum();
    missing <= u32::from(promoted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(variant: Variant, fen: &str) -> VariantPosition {
        app::variant::parse_variant_fen(variant, fen).expect("legal position")
    }

    #[test]
    fn a_position_may_read_its_own_table_and_those_it_can_become() {
        // KQvKR, black to move.
        let kqkr = pos(Variant::Standard, "4k3/8/8/8/8/8/3r4/KQ6 b - - 0 1");
        for table in ["KQvKR.rtbw", "KQvKR.rtbz", "KQvK.rtbw", "KRvK.rtbz"] {
            assert!(may_read(&kqkr, table), "{table}");
        }
        for table in [
            "KRvK.atbw",    // another variant's
            "KQvKQ.rtbw",   // a piece it has not got
            "KQRvK.rtbw",   // more pieces
            "KQKR.egtb.bz", // not a Syzygy table
        ] {
            assert!(!may_read(&kqkr, table), "{table}");
        }
        let krk = pos(Variant::Standard, "8/8/8/8/8/2k5/8/K2R4 w - - 0 1");
        assert!(!may_read(&krk, "KQvKR.rtbw"));
        assert!(may_read(&krk, "KRvK.rtbw"));
    }

    #[test]
    fn pawns_may_become_any_piece() {
        let kpk = pos(Variant::Standard, "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1");
        for table in ["KPvK.rtbw", "KQvK.rtbw", "KNvK.rtbz"] {
            assert!(may_read(&kpk, table), "{table}");
        }
        assert!(!may_read(&kpk, "KQQvK.rtbw"), "one pawn, one promotion");
        assert!(!may_read(&kpk, "KPPvK.rtbw"));
        assert!(!may_read(&kpk, "KQvKP.rtbw"), "the other side has no pawn");
    }
}
