//! Where each square sits on screen for an orientation: the play board, the
//! editor, the drag and the arrow all place squares the same way.

use shakmaty::{Color, File, Rank, Square};

/// The square at a display column and row (0,0 = top left) for an orientation.
pub fn display_square(orientation: Color, col: u32, row: u32) -> Square {
    let (file, rank) = match orientation {
        Color::White => (col, 7 - row),
        Color::Black => (7 - col, row),
    };
    Square::from_coords(File::new(file.min(7)), Rank::new(rank.min(7)))
}

/// The centre of a square in board units (0..8 from the top left) for an orientation.
pub fn square_center(orientation: Color, sq: Square) -> (f64, f64) {
    let (file, rank) = (
        f64::from(u32::from(sq.file())),
        f64::from(u32::from(sq.rank())),
    );
    match orientation {
        Color::White => (file + 0.5, 7.5 - rank),
        Color::Black => (7.5 - file, rank + 0.5),
    }
}
