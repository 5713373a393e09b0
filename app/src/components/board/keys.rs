//! The board from the keyboard, shared by the play board and the editor:
//! one tab stop (the square with the keyboard cursor), the arrow keys move
//! the cursor as the squares are drawn, Enter or Space acts on the square;
//! and the board's name for screen readers, which tells how.

use leptos::{html, prelude::*, wasm_bindgen::JsCast, web_sys};
use shakmaty::{Color, File, Rank, Square};

/// The board's name for screen readers, with how to use it by keyboard:
/// `enter` says what Enter does (the play board plays, the editor edits).
pub fn board_label(orientation: Color, enter: &str) -> String {
    let bottom = match orientation {
        Color::White => "White",
        Color::Black => "Black",
    };
    format!("Board, {bottom} at the bottom. Arrow keys move between squares; {enter}.")
}

/// What a key on the board does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoardKey {
    /// Move the cursor to this square.
    MoveTo(Square),
    /// Act on the cursor's square (select, move, place).
    Activate,
}

/// The key's meaning with the cursor on `at` and the board drawn with
/// `orientation` at the bottom; `None` for keys the board leaves alone.
pub fn board_key(key: &str, at: Square, orientation: Color) -> Option<BoardKey> {
    let (file, rank) = (i32::from(at.file()), i32::from(at.rank()));
    // Up on screen is towards the top player's side.
    let up = if orientation == Color::White { 1 } else { -1 };
    let (df, dr) = match key {
        "ArrowUp" => (0, up),
        "ArrowDown" => (0, -up),
        "ArrowLeft" => (-up, 0),
        "ArrowRight" => (up, 0),
        "Enter" | " " => return Some(BoardKey::Activate),
        _ => return None,
    };
    let (f, r) = ((file + df).clamp(0, 7), (rank + dr).clamp(0, 7));
    Some(BoardKey::MoveTo(Square::from_coords(
        File::new(f as u32),
        Rank::new(r as u32),
    )))
}

/// Handles a keydown on a board: moves the cursor (and the focus with it)
/// or calls `activate` on the cursor's square. Keys the board uses do not
/// reach the page's shortcuts (←/→ step the history elsewhere).
pub fn on_board_keydown(
    ev: &web_sys::KeyboardEvent,
    cursor: RwSignal<Square>,
    orientation: Color,
    node: NodeRef<html::Div>,
    activate: impl Fn(Square),
) {
    if ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
        return;
    }
    let at = cursor.get_untracked();
    let Some(key) = board_key(&ev.key(), at, orientation) else {
        return;
    };
    ev.prevent_default();
    ev.stop_propagation();
    match key {
        BoardKey::Activate => activate(at),
        BoardKey::MoveTo(sq) => {
            cursor.set(sq);
            focus_square(node, sq);
        }
    }
}

/// Puts the keyboard focus on a square of the board.
pub fn focus_square(node: NodeRef<html::Div>, sq: Square) {
    let Some(board) = node.get_untracked() else {
        return;
    };
    let selector = format!("[data-square=\"{sq}\"]");
    if let Ok(Some(el)) = board.query_selector(&selector)
        && let Ok(el) = el.dyn_into::<web_sys::HtmlElement>()
    {
        let _ = el.focus();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrows_follow_the_screen() {
        assert_eq!(
            board_key("ArrowUp", Square::E2, Color::White),
            Some(BoardKey::MoveTo(Square::E3))
        );
        assert_eq!(
            board_key("ArrowUp", Square::E2, Color::Black),
            Some(BoardKey::MoveTo(Square::E1))
        );
        assert_eq!(
            board_key("ArrowLeft", Square::A1, Color::White),
            Some(BoardKey::MoveTo(Square::A1))
        );
        assert_eq!(
            board_key("ArrowLeft", Square::A1, Color::Black),
            Some(BoardKey::MoveTo(Square::B1))
        );
        assert_eq!(
            board_key("Enter", Square::A1, Color::White),
            Some(BoardKey::Activate)
        );
        assert_eq!(board_key("x", Square::A1, Color::White), None);
    }
}
