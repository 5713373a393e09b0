//! Names and image classes for pieces, shared by the board, the editor's
//! palette and the promotion dialog so every piece looks the same everywhere.
//!
//! The images are our own SVGs in `public/pieces/` (`wK.svg` ... `bP.svg`),
//! set as CSS backgrounds by `style/main.css`, so the markup stays a plain `div`.

use shakmaty::{Color, Piece, Role};

/// The CSS classes that draw a piece, e.g. `"piece wK"`.
pub fn piece_class(piece: Piece) -> String {
    format!("piece {}", piece_code(piece))
}

/// The short code of a piece as in the image file names: `wK`, `bN`, ...
pub fn piece_code(piece: Piece) -> String {
    let color = match piece.color {
        Color::White => 'w',
        Color::Black => 'b',
    };
    format!("{color}{}", piece.role.upper_char())
}

/// A piece in words, for screen readers and tooltips: "white knight".
pub fn piece_name(piece: Piece) -> String {
    format!("{} {}", color_name(piece.color), role_name(piece.role))
}

pub fn color_name(color: Color) -> &'static str {
    match color {
        Color::White => "white",
        Color::Black => "black",
    }
}

pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::King => "king",
        Role::Queen => "queen",
        Role::Rook => "rook",
        Role::Bishop => "bishop",
        Role::Knight => "knight",
        Role::Pawn => "pawn",
    }
}
