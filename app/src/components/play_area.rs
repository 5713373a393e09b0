//! The play area: the board to play on, or the position editor in its place.

use leptos::prelude::*;
use shakmaty::{Color, Move, Position, Square};

use crate::{
    components::{board::Board, editor::Editor, mode::Mode},
    hooks::url_position::UrlPosition,
};

#[component]
pub fn PlayArea(
    url: UrlPosition,
    mode: RwSignal<Mode>,
    /// Whether the editor is open (`mode` is not `Playing`), which changes
    /// less often than `mode`: the editor must not be rebuilt on `Leaving`.
    editing: Memo<bool>,
    orientation: RwSignal<Color>,
    last_move: Signal<Option<(Square, Square)>>,
    hover: RwSignal<Option<(Square, Square)>>,
    on_move: Callback<Move>,
    /// Shows a position by its FEN.
    go: Callback<String>,
) -> impl IntoView {
    let pos = url.pos();
    let placement = url.placement;
    move || {
        if editing.get() {
            let start = placement.get_untracked();
            let turn = pos
                .get_untracked()
                .map(|p| p.turn())
                .unwrap_or(Color::White);
            view! {
                <Editor
                    start
                    start_turn=turn
                    orientation
                    on_done=Callback::new(move |fen: String| {
                        mode.set(Mode::Playing);
                        go.run(fen);
                    })
                    on_cancel=Callback::new(move |_| mode.set(Mode::Playing))
                    mode
                />
            }
            .into_any()
        } else {
            view! {
                <Board
                    pos
                    placement
                    orientation
                    last_move
                    hover
                    on_move
                />
            }
            .into_any()
        }
    }
}
