//! The explorer's board column: the rules switch above the board, the board
//! (or the editor in its place) and the tools under it.

use leptos::prelude::*;
use shakmaty::{Color, Position};

use super::navigation::Moves;
use crate::{
    components::{
        board::clock::{Clock, ClockProps},
        board::flip::FlipButton,
        editor::variant_switch::{VariantSwitch, VariantSwitchProps},
        move_list::verdict::turn_text,
        part::{Loader, ServerPart, server_html},
        play_area::PlayArea,
        split_points,
    },
    game::Game,
    hooks::{explorer::ExplorerState, mode::Mode},
    practice::setup::practice_href,
    variant::Variant,
};

#[component]
pub fn PlayColumn(
    state: ExplorerState,
    moves: Moves,
    /// True once the page shows another position than the first: the
    /// server-rendered parts are needed live.
    left_first: Signal<bool>,
) -> impl IntoView {
    let ExplorerState {
        url,
        shown,
        mode,
        editing,
        editor_fen,
        orientation,
        last_moves,
        answers,
        fen_shown,
        ..
    } = state;
    let variant_switch = move || VariantSwitchProps {
        variant: url.variant,
        fen: fen_shown,
    };
    view! {
        <div class="play">
            <ServerPart
                what="The rules switch"
                html=server_html(move || VariantSwitch(variant_switch()).into_any())
                load=Loader::new(move || split_points::variant_switch(variant_switch()))
                load_when=left_first
            />
            <PlayArea
                url
                mode
                editing
                orientation
                last_move=last_moves.leading_to(url.current_fen)
                hover=moves.hover
                on_move=moves.on_move
                go=moves.go
                editor_fen
                answers
            />
            <BoardTools orientation mode editing pos=shown.pos() variant=url.variant fen=fen_shown left_first/>
        </div>
    }
}

/// Flip, the editor's toggle, "Play this out", whose turn it is and the
/// halfmove clock, under the board. While editing, the editor's own Done
/// and Cancel are the ways out, so the toggle steps aside.
#[component]
fn BoardTools(
    orientation: RwSignal<Color>,
    mode: RwSignal<Mode>,
    editing: Memo<bool>,
    pos: Signal<Option<Game>>,
    variant: Memo<Variant>,
    /// The position on show, for the practice link.
    fen: Signal<String>,
    /// True once the page shows another position than the first: the clock
    /// is needed live.
    left_first: Signal<bool>,
) -> impl IntoView {
    // A link, so it works without JavaScript; an illegal position has none.
    let play_out = move || {
        (pos.with(Option::is_some) && !editing.get()).then(|| {
            view! {
                <a class="play-out button" href=practice_href(variant.get(), &fen.get()) title="Play this position out against the tablebase">
                    "▶ Play this out"
                </a>
            }
        })
    };
    view! {
        <div class="board-tools">
            <FlipButton orientation title="Flip the board (f)"/>
            <button class="edit js-only" title="Set up a position (e)" hidden=move || editing.get() on:click=move |_| mode.update(Mode::toggle_editor)>
                "✎ Editor"
            </button>
            {play_out}
            <span class="turn">{move || pos.get().map(|p| turn_text(p.turn()))}</span>
        </div>
        <ServerPart
            what="The halfmove clock"
            html=server_html(move || Clock(ClockProps { pos }).into_any())
            load=Loader::new(move || split_points::clock(ClockProps { pos }))
            load_when=left_first
        />
    }
}
