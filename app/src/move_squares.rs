//! The squares a move is drawn on. Castling is a king move to a player
//! (shakmaty writes it as the king taking its own rook), so the board
//! highlights the king's real destination, and takes a drop on either that
//! square or the rook's. Shared by the board, the move list and the move
//! history, which highlight a move alike.

use shakmaty::{CastlingSide, Move, Square};

/// The squares a player may drop on for a move: for castling both the
/// king's destination and the rook's square, as most boards allow.
pub fn ui_targets(m: &Move) -> Vec<Square> {
    match *m {
        Move::Castle { king, rook } => {
            let side = CastlingSide::from_queen_side(rook < king);
            vec![Square::from_coords(side.king_to_file(), king.rank()), rook]
        }
        _ => vec![m.to()],
    }
}

/// The squares of a move as the board highlights them (king's real destination when castling).
pub fn move_squares(m: &Move) -> Option<(Square, Square)> {
    let from = m.from()?;
    let to = ui_targets(m).first().copied().unwrap_or(m.to());
    Some((from, to))
}
