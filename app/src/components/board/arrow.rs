//! The move under the mouse in the list, drawn as an arrow on the board so
//! it reads at a glance, in the colour of its result (a losing move must
//! not look like a good idea).

use leptos::prelude::*;
use shakmaty::{Color, Square};

use crate::components::{board::geometry::square_center, move_list::outcome::Outcome};

/// A move of the list under the mouse or keyboard focus.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HoveredMove {
    pub squares: (Square, Square),
    /// What the move leads to for the player making it.
    pub outcome: Outcome,
}

/// One square's size in the arrow's drawing units: whole numbers, so the
/// SVG needs no float printing (which would add to the WASM).
const UNIT: f64 = 100.0;

/// An arrow in drawing units (a square is `UNIT` wide): the shaft's ends
/// and the head's three corners.
#[derive(Clone, Debug, PartialEq)]
struct ArrowShape {
    from: (i32, i32),
    shaft_end: (i32, i32),
    head: String,
}

/// A board coordinate in whole drawing units.
fn units(v: f64) -> i32 {
    (v * UNIT).round() as i32
}

impl ArrowShape {
    fn new(orientation: Color, from: Square, to: Square) -> Self {
        let (x1, y1) = square_center(orientation, from);
        let (x2, y2) = square_center(orientation, to);
        let (dx, dy) = (x2 - x1, y2 - y1);
        let len = (dx * dx + dy * dy).sqrt().max(0.01);
        let (ux, uy) = (dx / len, dy / len);
        // Stop the shaft short of the head; the head is a triangle at the target.
        let (bx, by) = (x2 - ux * 0.4, y2 - uy * 0.4);
        let head = format!(
            "{},{} {},{} {},{}",
            units(x2 - ux * 0.1),
            units(y2 - uy * 0.1),
            units(bx - uy * 0.25),
            units(by + ux * 0.25),
            units(bx + uy * 0.25),
            units(by - ux * 0.25)
        );
        ArrowShape {
            from: (units(x1), units(y1)),
            shaft_end: (units(bx), units(by)),
            head,
        }
    }
}

/// The hovered move's arrow, nothing while no move is hovered.
pub fn arrow(orientation: Signal<Color>, hover: Signal<Option<HoveredMove>>) -> impl IntoView {
    move || {
        hover.get().map(|HoveredMove { squares: (from, to), outcome }| {
            let ArrowShape {
                from: (x1, y1),
                shaft_end: (bx, by),
                head,
            } = ArrowShape::new(orientation.get(), from, to);
            view! {
                <svg class=format!("arrow {}", outcome.class()) viewBox="0 0 800 800" aria-hidden="true">
                    <line
                        x1=x1.to_string()
                        y1=y1.to_string()
                        x2=bx.to_string()
                        y2=by.to_string()
                        stroke-width="18"
                        stroke-linecap="round"
                    ></line>
                    <polygon points=head></polygon>
                </svg>
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shaft_stops_short_of_the_head() {
        let shape = ArrowShape::new(Color::White, Square::E2, Square::E4);
        assert_eq!(shape.from, (450, 650));
        assert_eq!(shape.shaft_end, (450, 490));
        assert_eq!(shape.head, "450,460 475,490 425,490");
    }
}
