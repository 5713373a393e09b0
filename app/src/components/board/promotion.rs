//! The choice of the new piece when a pawn reaches the last rank: a column
//! over the promotion square, as on lichess, with each piece's result from
//! the tables, so the player sees which promotion wins before picking.
//! It takes the keyboard focus when it opens; Esc cancels it; the tap that
//! opened it picks nothing.

use leptos::{ev, html, prelude::*, wasm_bindgen::JsCast, web_sys};
use shakmaty::{Color, Move, Piece, Role, Square, uci::UciMove};

use crate::{
    api::MoveInfo,
    components::{
        board::pieces::{piece_class, role_name},
        move_list::outcome::{Label, Outcome},
    },
};

/// A pawn move waiting for the player to pick the new piece.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingPromotion {
    pub to: Square,
    pub color: Color,
    /// The same pawn move with each piece it may become.
    pub moves: Vec<Move>,
}

/// The result of one promotion choice, as the list shows it ("▲ DTZ 3").
fn choice_result(m: &Move, answered: &[MoveInfo]) -> Option<(Outcome, String)> {
    let uci = UciMove::from_standard(*m).to_string();
    let info = answered.iter().find(|i| i.uci == uci)?;
    let mover = info.pos.category.flip();
    let text = match info.pos.dtz.filter(|d| *d != 0) {
        Some(d) => format!("{} · DTZ {}", Label::of(mover).words(), d.abs()),
        None => Label::of(mover).words().to_string(),
    };
    Some((Outcome::of(mover), text))
}

/// Where the column stands: over the target's file (its `left`), hanging
/// from the top edge or standing on the bottom one (`true`: the top).
/// Set through the CSSOM (`style:`), which the page's Content-Security-Policy
/// allows, rather than as a `style` attribute, which it refuses.
fn placement(to: Square, orientation: Color) -> (String, bool) {
    let file = u32::from(to.file());
    let col = if orientation == Color::White {
        file
    } else {
        7 - file
    };
    let at_top = (to.rank() == shakmaty::Rank::Eighth) == (orientation == Color::White);
    // col × 12.5 %, written without float printing.
    let tenths = col * 125;
    (format!("{}.{}%", tenths / 10, tenths % 10), at_top)
}

/// The dialog while a promotion waits; `choose` gets the piece picked.
pub fn promotion_dialog(
    promotion: RwSignal<Option<PendingPromotion>>,
    orientation: Signal<Color>,
    answered: Signal<Vec<MoveInfo>>,
    choose: impl Fn(Role) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let dialog = NodeRef::<html::Div>::new();
    let pressed = StoredValue::new(false);
    Effect::new(move |_| {
        pressed.set_value(false);
        if promotion.with(Option::is_none) {
            return;
        }
        let first = dialog
            .get()
            .and_then(|d| d.query_selector("button.choice").ok().flatten())
            .and_then(|b| b.dyn_into::<web_sys::HtmlElement>().ok());
        if let Some(button) = first {
            let _ = button.focus();
        }
    });
    let cancel = move || promotion.set(None);
    // On a touch screen the tap that opens the dialog (on the promotion
    // square) ends in a click on the piece now drawn under the finger: a
    // pointer's click counts only after a press inside the dialog. Clicks
    // from the keyboard (Enter, Space) have no press and `detail` 0.
    let ours = move |ev: &ev::MouseEvent| ev.detail() == 0 || pressed.get_value();
    move || {
        promotion.get().map(|p| {
            // The pieces this pawn may become, in the usual order; in
            // antichess a king too.
            let roles: Vec<Role> = [Role::Queen, Role::Knight, Role::Rook, Role::Bishop, Role::King]
                .into_iter()
                .filter(|r| p.moves.iter().any(|m| m.promotion() == Some(*r)))
                .collect();
            let moves = answered.get();
            let (left, at_top) = placement(p.to, orientation.get_untracked());
            view! {
                <div
                    class="promotion"
                    role="dialog"
                    node_ref=dialog
                    aria-label="Promote to"
                    style:left=left
                    style:top=at_top.then_some("0")
                    style:bottom=(!at_top).then_some("0")
                    on:pointerdown=move |_| pressed.set_value(true)
                    on:keydown=move |ev: ev::KeyboardEvent| {
                        ev.stop_propagation();
                        if ev.key() == "Escape" {
                            ev.prevent_default();
                            cancel();
                        }
                    }
                >
                    {roles
                        .into_iter()
                        .map(|role| {
                            let piece = Piece { color: p.color, role };
                            let result = p
                                .moves
                                .iter()
                                .find(|m| m.promotion() == Some(role))
                                .and_then(|m| choice_result(m, &moves));
                            let class = result.as_ref().map(|(o, _)| o.class()).unwrap_or("unknown");
                            let text = result.map(|(_, t)| t).unwrap_or_default();
                            let label = format!("Promote to {}: {text}", role_name(role));
                            view! {
                                <button
                                    class=format!("choice {class}")
                                    data-role=role.char().to_string()
                                    aria-label=label.clone()
                                    title=label
                                    on:click=move |ev| {
                                        if ours(&ev) {
                                            choose(role);
                                        }
                                    }
                                >
                                    <div class=piece_class(piece)></div>
                                    <span class="choice-result">{text}</span>
                                </button>
                            }
                        })
                        .collect_view()}
                    <button
                        class="cancel"
                        on:click=move |ev| {
                            if ours(&ev) {
                                cancel();
                            }
                        }
                        title="Cancel (Esc)"
                    >
                        "✕"
                    </button>
                    <span class="to" hidden>{p.to.to_string()}</span>
                </div>
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stands_over_the_target_file() {
        assert_eq!(
            placement(Square::C8, Color::White),
            ("25.0%".to_string(), true)
        );
        assert_eq!(
            placement(Square::C8, Color::Black),
            ("62.5%".to_string(), false)
        );
        assert_eq!(
            placement(Square::C1, Color::Black),
            ("62.5%".to_string(), true)
        );
    }
}
