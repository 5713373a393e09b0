//! The play area: the board to play on, or the position editor in its place.

use leptos::{either::Either, prelude::*};
use shakmaty::{Color, Move, Square};

use crate::{
    components::{
        board::Board,
        board::arrow::HoveredMove,
        editor::EditorProps,
        part::{Loader, Part},
        split_points,
    },
    hooks::{answers::Answers, mode::Mode, url_position::UrlPosition},
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
    hover: RwSignal<Option<HoveredMove>>,
    on_move: Callback<Move>,
    /// Shows a position by its FEN.
    go: Callback<String>,
    /// The editor's position while it is open, for the live analysis.
    editor_fen: RwSignal<Option<String>>,
    answers: Answers,
) -> impl IntoView {
    let pos = url.pos();
    let placement = url.placement;
    move || {
        if editing.get() {
            let on_done = Callback::new(move |fen: String| {
                mode.set(Mode::Playing);
                go.run(fen);
            });
            let on_cancel = Callback::new(move |_| mode.set(Mode::Playing));
            let load = Loader::new(move || {
                split_points::editor(EditorProps {
                    start_fen: url.fen.get_untracked(),
                    live: editor_fen,
                    orientation,
                    on_done,
                    on_cancel,
                    mode,
                })
            });
            // Its code comes on first use: the board's square holds the place.
            Either::Left(view! {
                <Part
                    what="The editor"
                    load
                    waiting=|| view! { <div class="part-waiting board-sized">"Loading the editor…"</div> }
                />
            })
        } else {
            Either::Right(view! {
                <Board
                    pos
                    placement
                    orientation
                    last_move
                    hover
                    on_move
                    answers
                />
            })
        }
    }
}
