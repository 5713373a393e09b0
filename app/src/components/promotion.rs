//! The choice of the new piece when a pawn reaches the last rank.

use leptos::prelude::*;
use shakmaty::{Color, Move, Piece, Role, Square};

use crate::components::pieces::{piece_class, role_name};

/// A pawn move waiting for the player to pick the new piece.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingPromotion {
    pub to: Square,
    pub color: Color,
    /// The same pawn move with each piece it may become.
    pub moves: Vec<Move>,
}

/// The dialog while a promotion waits; `choose` gets the piece picked.
pub fn promotion_dialog(
    promotion: RwSignal<Option<PendingPromotion>>,
    choose: impl Fn(Role) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    move || {
        promotion.get().map(|p| {
            let roles = [Role::Queen, Role::Rook, Role::Bishop, Role::Knight];
            view! {
                <div class="promotion" role="dialog" aria-label="Promote to">
                    <p>"Promote to"</p>
                    <div class="choices">
                        {roles
                            .into_iter()
                            .map(|role| {
                                let piece = Piece { color: p.color, role };
                                view! {
                                    <button
                                        class="choice"
                                        data-role=role.char().to_string()
                                        aria-label=format!("Promote to {}", role_name(role))
                                        title=role_name(role)
                                        on:click=move |_| choose(role)
                                    >
                                        <div class=piece_class(piece)></div>
                                    </button>
                                }
                            })
                            .collect_view()}
                    </div>
                    <button class="cancel" on:click=move |_| promotion.set(None)>
                        "Cancel"
                    </button>
                    <span class="to" hidden>{p.to.to_string()}</span>
                </div>
            }
        })
    }
}
