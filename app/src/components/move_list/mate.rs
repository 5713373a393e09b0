//! Depth to mate in a player's words: moves, not plies (lila#19645: "mate
//! in 33" is what players say; the API's `dtm` counts plies).
//!
//! `dtm` describes the side to move in the position it belongs to:
//! positive, it mates in that many plies; negative, it is mated; 0, a
//! draw. A move's `dtm` is the opponent's after the move.

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
