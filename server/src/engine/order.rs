//! The order of moves in an answer, best first, exactly as lila-tablebase
//! gives it: clients play `moves[0]` (lichess's practice mode does), so a
//! different order among equally good moves means a different move played.
//!
//! The rule, compared field by field from the position after each move (the
//! opponent's view, so "loss" is best for the mover):
//!
//! 1. category, with "unknown" just above "loss" (pessimistic);
//! 2. mates and variant ends first;
//! 3. stalemates, then insufficient material;
//! 4. DTM (or DTW, antichess), tightening: a move after which the opponent
//!    is mated soonest first, then unknown and draws alike, then a move
//!    after which the opponent mates, latest first (Zugzwang's only DTW
//!    is 0, which tightens no more than none);
//! 5. a winning mover prefers a conversion (capture or promotion), a
//!    drawing or losing one avoids it; then DTC (always equal here);
//! 6. likewise for zeroing moves, then DTZ (as the table gives it, rounded
//!    or not) from the largest down, an unknown DTZ first;
//! 7. the captured role, then the promoted role, highest first.
//!
//! Moves still equal come out as an unstable sort of shakmaty's legal-move
//! list leaves them, because that is what lila-tablebase does: sorting the
//! same list the same way gives the same bytes.

use std::cmp::Reverse;

use app::api::{Category, MoveInfo};
use shakmaty::Role;

/// A move's answer plus what only the ordering needs (not in the API).
pub struct RankedMove {
    pub info: MoveInfo,
    pub capture: Option<Role>,
    pub promotion: Option<Role>,
}

/// The moves, best first, as lila-tablebase lists them.
pub fn sort_best_first(moves: Vec<RankedMove>) -> Vec<MoveInfo> {
    let mut entries: Vec<Entry> = moves
        .iter()
        .enumerate()
        .map(|(index, m)| Entry {
            key: sort_key(m),
            index,
        })
        .collect();
    entries.sort_unstable_by_key(|entry| entry.key);
    let mut slots: Vec<Option<MoveInfo>> = moves.into_iter().map(|m| Some(m.info)).collect();
    entries
        .iter()
        .filter_map(|entry| slots[entry.index].take())
        .collect()
}

/// What the sort moves around.
///
/// Where moves equal under the key land depends on more than the
/// comparisons: Rust's unstable sort picks its small-sort and partition
/// strategies by the element's size (at most 16, 85 and 96 bytes are the
/// thresholds), by whether it is `Copy`, and by whether it has interior
/// mutability. lila-tablebase sorts its own move record: 64 bytes, not
/// `Copy`, no interior mutability. This entry is of the same kind (a test
/// checks the size), so equal moves land where lila-tablebase puts them.
/// Do not derive `Copy` here.
struct Entry {
    key: SortKey,
    index: usize,
}

/// Field by field, the steps of the module doc; `false` and smaller
/// values sort first.
type SortKey = (
    Category,
    (bool, bool, bool),
    (bool, bool),
    Tightening,
    bool,
    (bool, Option<Reverse<i32>>),
    (Reverse<Option<Role>>, Reverse<Option<Role>>),
);

/// Step 4's key of a metric (plies, negative: the side to move is mated):
/// negatives first, nearest zero first; then none and zero, equal; then
/// positives, largest first.
type Tightening = (Reverse<Option<i32>>, Option<Reverse<i32>>);

fn tightening(metric: Option<i32>) -> Tightening {
    (
        Reverse(metric.filter(|m| *m < 0)),
        metric.filter(|m| *m > 0).map(Reverse),
    )
}

fn sort_key(m: &RankedMove) -> SortKey {
    let after = &m.info.pos;
    // Categories describe the opponent after the move: a move that leaves
    // the opponent winning is one the mover would rather not reset on.
    let opponent_wins = after.category.is_win();
    (
        after.category,
        (!after.checkmate, !after.variant_loss, after.variant_win),
        (!after.stalemate, !after.insufficient_material),
        tightening(after.dtm.or(after.dtw)),
        m.info.conversion == opponent_wins,
        (m.info.zeroing == opponent_wins, after.dtz.map(Reverse)),
        (Reverse(m.capture), Reverse(m.promotion)),
    )
}

#[cfg(test)]
mod tests {
    use app::api::PositionInfo;

    use super::*;

    /// A move named `san` whose position after it has `category` and `dtz`.
    fn after(san: &str, category: Category, dtz: Option<i32>) -> RankedMove {
        RankedMove {
            info: MoveInfo {
                uci: san.to_lowercase(),
                san: san.to_string(),
                zeroing: false,
                conversion: false,
                pos: PositionInfo {
                    checkmate: false,
                    stalemate: false,
                    variant_win: false,
                    variant_loss: false,
                    insufficient_material: false,
                    dtz,
                    precise_dtz: None,
                    dtm: None,
                    dtw: None,
                    dtc: None,
                    category,
                },
            },
            capture: None,
            promotion: None,
        }
    }

    fn zeroing(mut m: RankedMove) -> RankedMove {
        m.info.zeroing = true;
        m
    }

    fn capturing(mut m: RankedMove, role: Role) -> RankedMove {
        m.info.zeroing = true;
        m.info.conversion = true;
        m.capture = Some(role);
        m
    }

    fn promoting(mut m: RankedMove, role: Role) -> RankedMove {
        m.info.zeroing = true;
        m.info.conversion = true;
        m.promotion = Some(role);
        m
    }

    /// Sorts and returns the names, so a test reads as the expected order.
    fn sorted(moves: Vec<RankedMove>) -> Vec<String> {
        sort_best_first(moves).into_iter().map(|m| m.san).collect()
    }

    #[test]
    fn entries_are_sorted_like_lilas_move_records() {
        // Between 16 and 4096 / 48 = 85 bytes, as lila-tablebase's 64-byte
        // record: the same small-sort and partition strategies.
        let size = std::mem::size_of::<Entry>();
        assert!(size > 16 && size <= 85, "Entry is {size} bytes");
    }

    #[test]
    fn category_first_with_unknown_just_above_loss() {
        use Category::*;
        let moves = vec![
            after("win", Win, Some(5)),
            after("draw", Draw, Some(0)),
            after("unknown", Unknown, None),
            after("blessed", BlessedLoss, Some(-120)),
            after("loss", Loss, Some(-3)),
            after("cursed", CursedWin, Some(120)),
            after("syzygy-loss", SyzygyLoss, Some(-100)),
        ];
        assert_eq!(
            sorted(moves),
            [
                "loss",
                "unknown",
                "syzygy-loss",
                "blessed",
                "draw",
                "cursed",
                "win"
            ]
        );
    }

    #[test]
    fn tightening_puts_the_fastest_mate_first_and_the_slowest_loss_last() {
        let metrics = [Some(-1), Some(-2), None, Some(0), Some(2), Some(1)];
        assert!(metrics.is_sorted_by_key(|m| tightening(*m)));
        assert_eq!(tightening(None), tightening(Some(0)));
    }

    #[test]
    fn dtm_decides_before_conversion_and_dtz() {
        let with_dtm = |san: &str, dtm: i32, dtz: i32| {
            let mut m = after(san, Category::Loss, Some(dtz));
            m.info.pos.dtm = Some(dtm);
            m
        };
        // The fastest mate wins over a zeroing move and a shorter DTZ.
        let slow = zeroing(with_dtm("slow", -9, -1));
        let fast = with_dtm("fast", -3, -8);
        let mid = with_dtm("mid", -5, -2);
        assert_eq!(sorted(vec![slow, mid, fast]), ["fast", "mid", "slow"]);
    }

    #[test]
    fn mate_before_any_dtz() {
        let mut mate = after("mate", Category::Loss, Some(-1));
        mate.info.pos.checkmate = true;
        let fast = zeroing(after("fast", Category::Loss, Some(-1)));
        assert_eq!(sorted(vec![fast, mate]), ["mate", "fast"]);
    }

    #[test]
    fn stalemate_then_insufficient_material_among_draws() {
        let plain = zeroing(after("plain", Category::Draw, Some(0)));
        let mut bare = after("bare", Category::Draw, Some(0));
        bare.info.pos.insufficient_material = true;
        let mut stale = after("stale", Category::Draw, Some(0));
        stale.info.pos.stalemate = true;
        assert_eq!(sorted(vec![plain, bare, stale]), ["stale", "bare", "plain"]);
    }

    #[test]
    fn a_winning_mover_converts_first_even_at_a_longer_dtz() {
        // A position where lila-tablebase's order and ours once differed:
        // promotions before the faster pawn push.
        let moves = vec![
            after("Ke1", Category::Loss, Some(-2)),
            zeroing(after("b5", Category::Loss, Some(-2))),
            promoting(after("f8=B", Category::Loss, Some(-10)), Role::Bishop),
            promoting(after("f8=N", Category::Loss, Some(-6)), Role::Knight),
            promoting(after("f8=R+", Category::Loss, Some(-2)), Role::Rook),
            promoting(after("f8=Q+", Category::Loss, Some(-2)), Role::Queen),
        ];
        assert_eq!(
            sorted(moves),
            ["f8=Q+", "f8=R+", "f8=N", "f8=B", "b5", "Ke1"]
        );
    }

    #[test]
    fn a_drawing_mover_also_prefers_conversions_and_zeroing() {
        let moves = vec![
            after("quiet", Category::Draw, Some(0)),
            zeroing(after("push", Category::Draw, Some(0))),
            capturing(after("take", Category::Draw, Some(0)), Role::Knight),
        ];
        assert_eq!(sorted(moves), ["take", "push", "quiet"]);
    }

    #[test]
    fn a_losing_mover_avoids_conversions_and_zeroing_then_resists_longest() {
        let moves = vec![
            capturing(after("take", Category::Win, Some(30)), Role::Pawn),
            zeroing(after("push", Category::Win, Some(40))),
            after("short", Category::Win, Some(5)),
            after("long", Category::Win, Some(9)),
        ];
        assert_eq!(sorted(moves), ["long", "short", "push", "take"]);
    }

    #[test]
    fn a_winning_mover_zeroes_first_then_takes_the_fastest_dtz() {
        let moves = vec![
            after("slow", Category::Loss, Some(-9)),
            after("fast", Category::Loss, Some(-3)),
            zeroing(after("push", Category::Loss, Some(-15))),
        ];
        assert_eq!(sorted(moves), ["push", "fast", "slow"]);
    }

    #[test]
    fn a_dtw_of_0_ranks_as_no_dtw() {
        // lila ranks by DTW tightening: negative first, then none or 0
        // alike, then positive. Zugzwang's only DTW is 0 (an antichess
        // stalemate win), so it must leave the order as it is without one.
        let order = |dtw: [Option<i32>; 3]| {
            let moves = ["a", "b", "c"]
                .into_iter()
                .zip(dtw)
                .map(|(san, dtw)| {
                    let mut m = after(san, Category::Win, None);
                    m.info.pos.stalemate = true;
                    m.info.pos.variant_win = true;
                    m.info.pos.dtw = dtw;
                    m
                })
                .collect();
            sorted(moves)
        };
        let without = order([None; 3]);
        assert_eq!(order([Some(0), None, None]), without);
        assert_eq!(order([None, Some(0), Some(0)]), without);
        assert_eq!(order([Some(0); 3]), without);
    }

    #[test]
    fn an_unknown_dtz_sorts_before_a_known_one() {
        let known = after("known", Category::Unknown, Some(-3));
        let unknown = after("unknown", Category::Unknown, None);
        assert_eq!(sorted(vec![known, unknown]), ["unknown", "known"]);
    }

    #[test]
    fn equal_moves_prefer_the_bigger_capture_then_the_bigger_promotion() {
        let moves = vec![
            capturing(after("xN", Category::Loss, Some(-4)), Role::Knight),
            capturing(after("xQ", Category::Loss, Some(-4)), Role::Queen),
            capturing(after("xR", Category::Loss, Some(-4)), Role::Rook),
        ];
        assert_eq!(sorted(moves), ["xQ", "xR", "xN"]);
        let mut queen_taking_rook =
            capturing(after("bxa8=Q", Category::Loss, Some(-4)), Role::Rook);
        queen_taking_rook.promotion = Some(Role::Queen);
        let mut knight_taking_rook =
            capturing(after("bxa8=N", Category::Loss, Some(-4)), Role::Rook);
        knight_taking_rook.promotion = Some(Role::Knight);
        let plain_rook_capture = capturing(after("Kxa8", Category::Loss, Some(-4)), Role::Rook);
        assert_eq!(
            sorted(vec![
                plain_rook_capture,
                knight_taking_rook,
                queen_taking_rook
            ]),
            ["bxa8=Q", "bxa8=N", "Kxa8"]
        );
    }
}
