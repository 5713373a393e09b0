//! The halfmove clock in words: it decides whether a win is cursed, so a
//! player must see it without reading the FEN.

use leptos::prelude::*;
use shakmaty::Position;

use crate::game::Game;

/// Plies without a capture or pawn move after which a draw can be claimed.
const CLAIM: u32 = 100;
/// Plies after which the game is drawn without a claim (the 75-move rule).
const AUTOMATIC: u32 = 150;

/// The clock of a position as a sentence, and whether it needs attention.
pub fn clock_text(halfmoves: u32) -> (String, bool) {
    match halfmoves {
        0 => (
            format!("Halfmove clock 0: {CLAIM} plies until a draw can be claimed"),
            false,
        ),
        h if h < CLAIM => (
            format!(
                "Halfmove clock {h}: {} plies until a draw can be claimed",
                CLAIM - h
            ),
            false,
        ),
        h if h < AUTOMATIC => (
            format!("Halfmove clock {h}: a draw can be claimed now (50-move rule)"),
            true,
        ),
        h => (
            format!(
                "Halfmove clock {h}: the game ended in a draw at {AUTOMATIC} plies (75-move rule); the results assume a draw claim"
            ),
            true,
        ),
    }
}

#[component]
pub fn Clock(#[prop(into)] pos: Signal<Option<Game>>) -> impl IntoView {
    move || {
        pos.get().map(|p| {
            let (text, warn) = clock_text(p.halfmoves());
            view! {
                <p class="clock" class:warn=warn title="Plies since the last capture or pawn move, from the FEN">
                    {text}
                </p>
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_down_to_a_claim() {
        assert_eq!(
            clock_text(37).0,
            "Halfmove clock 37: 63 plies until a draw can be claimed"
        );
        assert!(clock_text(100).0.contains("can be claimed now"));
        let (text, warn) = clock_text(150);
        assert!(text.contains("75-move rule") && warn, "{text}");
    }
}
