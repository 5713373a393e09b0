//! The move under the mouse in the list, drawn as an arrow on the board so
//! it reads at a glance, in the colour of its result (a losing move must
//! not look like a good idea).

use leptos::prelude::*;
use shakmaty::{Color, Square};

use crate::components::{outcome::Outcome, square::square_center};

/// A move of the list under the mouse or keyboard focus.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HoveredMove {
    pub squares: (Square, Square),
    /// What the move leads to for the player making it.
    pub outcome: Outcome,
}

/// An arrow in board units: the shaft's ends and the head's three corners.
#[derive(Clone, Debug, PartialEq)]
struct ArrowShape {
    from: (f64, f64),
    shaft_end: (f64, f64),
    head: String,
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
            "{:.3},{:.3} {:.3},{:.3} {:.3},{:.3}",
            x2 - ux * 0.1,
            y2 - uy * 0.1,
            bx - uy * 0.25,
            by + ux * 0.25,
            bx + uy * 0.25,
            by - ux * 0.25
        );
        ArrowShape {
            from: (x1, y1),
            shaft_end: (bx, by),
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
                <svg class=format!("arrow {}", outcome.class()) viewBox="0 0 8 8" aria-hidden="true">
                    <line
                        x1=format!("{x1:.3}")
                        y1=format!("{y1:.3}")
                        x2=format!("{bx:.3}")
                        y2=format!("{by:.3}")
                        stroke-width="0.18"
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
        assert_eq!(shape.from, (4.5, 6.5));
        assert!((shape.shaft_end.1 - 4.9).abs() < 1e-9, "{shape:?}");
        assert_eq!(shape.head, "4.500,4.600 4.750,4.900 4.250,4.900");
    }
}
