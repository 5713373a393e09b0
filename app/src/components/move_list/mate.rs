//! Depth to mate in a player's words: moves, not plies (players say "mate
//! in 33"; the API's `dtm` counts plies).
//!
//! `dtm` describes the side to move in the position it belongs to:
//! positive, it mates in that many plies; negative, it is mated; 0, a
//! draw. A move's `dtm` is the opponent's after the move.

use crate::api::TablebaseAnswer;

/// Full moves of the mating side in `plies` plies (the last ply is the
/// mate, played by the mating side).
pub fn moves(plies: u32) -> u32 {
    plies.div_ceil(2)
}

/// What a move leads to for its player, from the `dtm` after it:
/// `Some(Mates(n))` or `Some(Mated(n))` in full moves, counting the move
/// itself; `None` when unknown or a draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveMate {
    /// The player mates in this many moves (this one included).
    Mates(u32),
    /// The player is mated in this many moves of the opponent.
    Mated(u32),
}

impl MoveMate {
    pub fn of_move(dtm_after: Option<i32>) -> Option<MoveMate> {
        match dtm_after? {
            0 => None,
            // The opponent is mated in d plies after this one: d + 1 plies
            // from here, this move the first of them.
            d if d < 0 => Some(MoveMate::Mates(moves(d.unsigned_abs() + 1))),
            d => Some(MoveMate::Mated(moves(d.unsigned_abs()))),
        }
    }

    /// As the move list shows it: "Mate in 33", "Mated in 4".
    pub fn text(self) -> String {
        match self {
            MoveMate::Mates(n) => format!("Mate in {n}"),
            MoveMate::Mated(n) => format!("Mated in {n}"),
        }
    }
}

/// The position's depth to mate: the answer's own, or, where its table
/// has none (the API keeps lila's `dtm: null`) but every move that
/// decides the result has one (captures into DTM tables), one ply more
/// than the best of them: the fastest mate of a win, the longest
/// resistance of a loss. `None` where a deciding move's DTM is not known.
pub fn root_dtm(answer: &TablebaseAnswer) -> Option<i32> {
    if answer.pos.dtm.is_some() {
        return answer.pos.dtm;
    }
    let wins = answer.pos.category.is_win();
    if !wins && !answer.pos.category.flip().is_win() {
        return None;
    }
    let mut best: Option<i32> = None;
    for m in &answer.moves {
        // What decides a win: its moves that keep it (the opponent loses,
        // with or without the 50-move rule); a loss: every move.
        if wins && !m.pos.category.flip().is_win() {
            continue;
        }
        let plies = if m.pos.checkmate { 0 } else { m.pos.dtm?.abs() };
        best = Some(match best {
            Some(b) if wins => b.min(plies),
            Some(b) => b.max(plies),
            None => plies,
        });
    }
    best.map(|b| if wins { b + 1 } else { -(b + 1) })
}

/// The verdict's words for a position's `dtm` (its side to move is
/// `side`, the other `other`): "White mates in 33"; `None` for a draw or
/// an unknown depth.
pub fn verdict(dtm: Option<i32>, side: &str, other: &str) -> Option<String> {
    match dtm? {
        0 => None,
        d if d > 0 => Some(format!("{side} mates in {}", moves(d.unsigned_abs()))),
        d => Some(format!("{other} mates in {}", moves(d.unsigned_abs()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        api::Category,
        practice::defence::tests::{after, answer},
    };

    #[test]
    fn a_roots_mate_comes_from_its_moves_where_its_table_has_none() {
        // KQBvKQ 8/8/3k4/8/8/2q5/8/1KQB4 w: no DTM table for the root; its
        // only winning move Qxc3 leaves Black mated in 12 plies.
        let kqbkq = answer(
            Category::Win,
            None,
            vec![
                after("c1c3", Category::Loss, -3, Some(-12)),
                after("b1a1", Category::Draw, 0, None),
                after("d1e2", Category::Win, 5, None),
            ],
        );
        assert_eq!(root_dtm(&kqbkq), Some(13));
        assert_eq!(
            verdict(root_dtm(&kqbkq), "White", "Black").as_deref(),
            Some("White mates in 7")
        );
        assert_eq!(MoveMate::of_move(Some(-12)), Some(MoveMate::Mates(7)));
        // A winning move without DTM: unknown.
        let mut partial = kqbkq.clone();
        partial.moves.push(after("c1c2", Category::Loss, -9, None));
        assert_eq!(root_dtm(&partial), None);
        // A mate at once is mate in 1.
        let mut mate = after("h1h8", Category::Loss, 0, None);
        mate.pos.checkmate = true;
        let mut mates = kqbkq.clone();
        mates.moves.push(mate);
        assert_eq!(root_dtm(&mates), Some(1));
        // A loss: every move's DTM, the longest.
        let lost = answer(
            Category::Loss,
            None,
            vec![
                after("a", Category::Win, 3, Some(5)),
                after("b", Category::Win, 9, Some(11)),
            ],
        );
        assert_eq!(root_dtm(&lost), Some(-12));
        assert_eq!(
            verdict(root_dtm(&lost), "Black", "White").as_deref(),
            Some("White mates in 6")
        );
        let mut unknown = lost.clone();
        unknown.moves[0].pos.dtm = None;
        assert_eq!(root_dtm(&unknown), None);
        // The answer's own DTM stands; a draw has none.
        assert_eq!(
            root_dtm(&answer(Category::Win, Some(65), Vec::new())),
            Some(65)
        );
        assert_eq!(root_dtm(&answer(Category::Draw, None, Vec::new())), None);
    }

    #[test]
    fn counts_full_moves_of_the_mating_side() {
        // KBNvK's longest: 65 plies, White's 33rd move mates.
        assert_eq!(
            verdict(Some(65), "White", "Black").as_deref(),
            Some("White mates in 33")
        );
        // Its best move leaves Black mated in 64 plies: White's move and 32 more.
        assert_eq!(MoveMate::of_move(Some(-64)), Some(MoveMate::Mates(33)));
        assert_eq!(
            MoveMate::of_move(Some(-64)).map(MoveMate::text).as_deref(),
            Some("Mate in 33")
        );
        // A move into a mate in 1 for the opponent.
        assert_eq!(MoveMate::of_move(Some(1)), Some(MoveMate::Mated(1)));
        // Mated in 2 plies: the opponent's first move after ours.
        assert_eq!(
            verdict(Some(-2), "Black", "White").as_deref(),
            Some("White mates in 1")
        );
        assert_eq!(MoveMate::of_move(Some(0)), None);
        assert_eq!(MoveMate::of_move(None), None);
        assert_eq!(verdict(Some(0), "White", "Black"), None);
    }
}
