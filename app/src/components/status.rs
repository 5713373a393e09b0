//! The one-line verdict on the position: who wins, draws or loses and the DTZ,
//! or why there is no verdict (mate, stalemate, outside the tables, illegal).

use leptos::prelude::*;
use shakmaty::{Chess, Color, Position};

use crate::{
    api::{Category, TablebaseAnswer},
    components::{outcome::Outcome, pieces::color_name},
    position::piece_count,
    text::capitalized,
};

/// The verdict in words plus a class for its colour (`win`, `draw`, `loss`,
/// `unknown`, `error`), seen from the side to move.
pub fn status_line(pos: &Chess, answer: Result<&TablebaseAnswer, &str>) -> (String, &'static str) {
    let side = capitalized(color_name(pos.turn()));
    let other = capitalized(color_name(pos.turn().other()));
    if pos.is_checkmate() {
        return (format!("Checkmate: {other} wins"), "loss");
    }
    if pos.is_stalemate() {
        return ("Stalemate: draw".to_string(), "draw");
    }
    if pos.is_insufficient_material() {
        return ("Insufficient material: draw".to_string(), "draw");
    }
    let pieces = piece_count(pos);
    let answer = match answer {
        Ok(answer) => answer,
        Err(message) if message.contains("table") || message.contains("cover") => {
            return (
                format!("Not in the tables ({pieces} pieces): {message}"),
                "unknown",
            );
        }
        Err(message) => return (format!("No answer from the tables: {message}"), "error"),
    };
    let dtz = answer
        .pos
        .dtz
        .map(|d| format!(" · DTZ {}", d.abs()))
        .unwrap_or_default();
    let text = match answer.pos.category {
        Category::Win => format!("{side} to move wins{dtz}"),
        // DTZ rounding leaves open whether the win comes within 50 moves.
        Category::SyzygyWin | Category::MaybeWin => {
            format!("{side} to move wins or has a cursed win{dtz}")
        }
        Category::CursedWin => {
            format!("{side} to move has a cursed win: a draw under the 50-move rule{dtz}")
        }
        Category::Draw => format!("Draw ({side} to move)"),
        Category::BlessedLoss => {
            format!("{side} to move has a blessed loss: a draw under the 50-move rule{dtz}")
        }
        Category::SyzygyLoss | Category::MaybeLoss => {
            format!("{side} to move loses or has a blessed loss{dtz}")
        }
        Category::Loss => format!("{side} to move loses{dtz}"),
        Category::Unknown => format!("Not in the tables ({pieces} pieces)"),
    };
    (text, Outcome::of(answer.pos.category).class())
}

/// Who is to move, for the line under the status.
pub fn turn_text(turn: Color) -> String {
    format!("{} to move", capitalized(color_name(turn)))
}

#[component]
pub fn Status(text: String, class: &'static str) -> impl IntoView {
    view! {
        <p class=format!("status {class}") role="status" aria-live="polite">
            {text}
        </p>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::parse_fen;

    #[test]
    fn mate_stalemate_and_outside_the_tables() {
        let mate = parse_fen("k7/1Q6/1K6/8/8/8/8/8 b - - 0 1").expect("legal");
        assert_eq!(status_line(&mate, Err("-")).0, "Checkmate: White wins");
        let stalemate = parse_fen("k7/8/1QK5/8/8/8/8/8 b - - 0 1").expect("legal");
        assert_eq!(status_line(&stalemate, Err("-")).1, "draw");
        let five = parse_fen("k7/8/8/8/8/8/8/KQRN4 w - - 0 1").expect("legal");
        let (text, class) = status_line(&five, Err("table KQRNvK.rtbw is not loaded"));
        assert!(text.starts_with("Not in the tables (5 pieces)"), "{text}");
        assert_eq!(class, "unknown");
    }
}
