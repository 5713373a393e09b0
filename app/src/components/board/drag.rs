//! Dragging a piece over a board, shared by the play board and the editor.
//!
//! Both keep their pointer handlers on the board element and map pixel
//! coordinates to squares, so re-rendering a square never loses a drag and the
//! same code serves mouse, pen and touch.

use leptos::{html, prelude::*, web_sys::PointerEvent};
use shakmaty::{Color, Piece, Square};

use crate::components::board::{geometry::display_square, pieces::piece_class};

/// How far (in pixels, summed over both axes) the pointer must travel before
/// a press becomes a drag; less is a click, and clicks must keep working on
/// shaky touch screens.
const DRAG_THRESHOLD: f64 = 4.0;

/// A pointer position in pixels from the board's top-left corner, with the
/// size of one square at the time (the board resizes with the window).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoardPoint {
    pub x: f64,
    pub y: f64,
    pub square_size: f64,
}

impl BoardPoint {
    /// Where an event happened on the board; `None` before the board is mounted.
    pub fn of(board: NodeRef<html::Div>, ev: &PointerEvent) -> Option<Self> {
        let rect = board.get_untracked()?.get_bounding_client_rect();
        Some(Self {
            x: f64::from(ev.client_x()) - rect.left(),
            y: f64::from(ev.client_y()) - rect.top(),
            square_size: rect.width() / 8.0,
        })
    }

    /// The square under the point; `None` off the board.
    pub fn square(self, orientation: Color) -> Option<Square> {
        let Self { x, y, square_size } = self;
        let edge = square_size * 8.0;
        if square_size <= 0.0 || x < 0.0 || y < 0.0 || x >= edge || y >= edge {
            return None;
        }
        let col = (x / square_size) as u32;
        let row = (y / square_size) as u32;
        Some(display_square(orientation, col, row))
    }
}

/// Where a primary-button press landed and on which square; `None` for
/// other buttons, before the board is mounted, or off the board.
pub fn pressed_square(
    board: NodeRef<html::Div>,
    ev: &PointerEvent,
    orientation: Color,
) -> Option<(BoardPoint, Square)> {
    if ev.button() != 0 {
        return None;
    }
    let at = BoardPoint::of(board, ev)?;
    Some((at, at.square(orientation)?))
}

/// A piece picked up from a square, following the pointer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Drag {
    pub from: Square,
    pub piece: Piece,
    pub at: BoardPoint,
    start: BoardPoint,
}

impl Drag {
    pub fn new(from: Square, piece: Piece, at: BoardPoint) -> Self {
        Self {
            from,
            piece,
            at,
            start: at,
        }
    }

    /// The same drag with the pointer somewhere else.
    pub fn to(self, at: BoardPoint) -> Self {
        Self { at, ..self }
    }

    /// Whether the pointer travelled far enough for this to be a drag, not a click.
    pub fn moved(&self) -> bool {
        (self.at.x - self.start.x).abs() + (self.at.y - self.start.y).abs() > DRAG_THRESHOLD
    }

    /// Whether this drag lifted the piece on `sq` (which is then drawn faded).
    pub fn lifts(drag: Option<Self>, sq: Square) -> bool {
        drag.is_some_and(|d| d.moved() && d.from == sq)
    }
}

/// Moves a dragged piece along with the pointer (nothing when no drag is on).
pub fn follow_pointer(drag: RwSignal<Option<Drag>>, board: NodeRef<html::Div>, ev: &PointerEvent) {
    if let (Some(d), Some(at)) = (drag.get_untracked(), BoardPoint::of(board, ev)) {
        drag.set(Some(d.to(at)));
    }
}

/// Ends a drag where the pointer was released: the drag, and the square it
/// was dropped on (`None` off the board). `None` when no drag was on.
pub fn drop_piece(
    drag: RwSignal<Option<Drag>>,
    board: NodeRef<html::Div>,
    ev: &PointerEvent,
    orientation: Color,
) -> Option<(Drag, Option<Square>)> {
    let d = drag.get_untracked()?;
    drag.set(None);
    let target = BoardPoint::of(board, ev).and_then(|at| at.square(orientation));
    Some((d, target))
}

/// Keeps pointer events coming to the board while the pointer leaves it, so a
/// drop off the board is seen (the editor removes the piece then).
pub fn capture_pointer(board: NodeRef<html::Div>, ev: &PointerEvent) {
    if let Some(el) = board.get_untracked() {
        // Failing only means the pointer is already gone; the drag then ends on its own.
        let _ = el.set_pointer_capture(ev.pointer_id());
    }
}

/// The piece under the pointer while dragging, drawn above the squares.
pub fn ghost(drag: Signal<Option<Drag>>) -> impl IntoView {
    move || {
        drag.get().filter(Drag::moved).map(|d| {
            // Whole pixels: formatting floats would pull float-printing
            // code into the WASM for no visible difference.
            // Set through the CSSOM (`style:`), which the page's
            // Content-Security-Policy allows; a `style` attribute it refuses.
            let s = d.at.square_size;
            let side = format!("{}px", s.round() as i64);
            let transform = format!(
                "translate({x}px,{y}px)",
                x = (d.at.x - s / 2.0).round() as i64,
                y = (d.at.y - s / 2.0).round() as i64
            );
            view! {
                <div
                    class=format!("{} ghost", piece_class(d.piece))
                    style:width=side.clone()
                    style:height=side
                    style:transform=transform
                ></div>
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(x: f64, y: f64) -> BoardPoint {
        BoardPoint {
            x,
            y,
            square_size: 50.0,
        }
    }

    #[test]
    fn points_map_to_squares_in_both_orientations() {
        assert_eq!(point(10.0, 10.0).square(Color::White), Some(Square::A8));
        assert_eq!(point(399.0, 399.0).square(Color::White), Some(Square::H1));
        assert_eq!(point(10.0, 10.0).square(Color::Black), Some(Square::H1));
        assert_eq!(point(400.0, 10.0).square(Color::White), None);
        assert_eq!(point(-1.0, 10.0).square(Color::White), None);
    }

    #[test]
    fn a_few_pixels_are_a_click_more_are_a_drag() {
        let piece = Piece {
            color: Color::White,
            role: shakmaty::Role::Knight,
        };
        let press = Drag::new(Square::B1, piece, point(75.0, 375.0));
        assert!(!press.to(point(77.0, 376.0)).moved());
        assert!(press.to(point(90.0, 360.0)).moved());
        assert!(!Drag::lifts(Some(press), Square::B1));
        assert!(Drag::lifts(Some(press.to(point(90.0, 360.0))), Square::B1));
    }
}
