//! The explorer page: the position from the URL, the board, the verdict,
//! every move with its DTZ, the FEN box, the editor, the mainline and the
//! endgame statistics.
//!
//! The URL is the single source of the position (`hooks::url_position`).
//! The board follows it at once (legality and the next FEN come from
//! shakmaty in WASM); the move list waits for the API (`move_list`).
//!
//! The page's state is a hook (`hooks::explorer`) and the ways of moving
//! (`navigation`), so this file only lays out the two columns: the board's
//! (`play`) and the panels beside it (`side`).

pub mod navigation;
pub mod play;
pub mod side;
pub mod title;

use leptos::prelude::*;
use leptos_meta::Title;

use crate::{
    components::{practice_route, split_points},
    hooks::explorer::{ExplorerState, use_explorer},
    variant::Variant,
};
use navigation::use_moves;
use play::PlayColumn;
use side::SidePanels;
use title::title;

#[component]
pub fn Explorer() -> impl IntoView {
    let state = use_explorer();
    let moves = use_moves(state);
    let hydrated = use_hydrated();
    let ExplorerState {
        url,
        shown,
        editing,
        fen_shown,
        ..
    } = state;
    let left_first = left_first(url.variant, fen_shown, editing);
    view! {
        <Title text=title(url.variant, shown.placement, shown.parsed)/>
        <div
            class="explorer"
            class:editing=move || editing.get()
            data-hydrated=move || hydrated.get().to_string()
        >
            <PlayColumn state moves left_first/>
            <SidePanels state moves left_first/>
        </div>
    }
}

/// Effects run only in the browser: this marks the page as interactive,
/// so tests (and curious people) can tell SSR from hydrated; then the
/// parts not yet used load while the browser is idle.
fn use_hydrated() -> ReadSignal<bool> {
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| {
        hydrated.set(true);
        split_points::prefetch(|| {
            leptos::task::spawn_local(async {
                practice_route::preload().await;
            })
        });
    });
    hydrated.read_only()
}

/// True once the page shows another position or rules than the first, or
/// the editor is open: the parts the server rendered for the first position
/// are needed live from then on.
fn left_first(variant: Memo<Variant>, fen: Signal<String>, editing: Memo<bool>) -> Signal<bool> {
    let first_variant = variant.get_untracked();
    let first_fen = fen.get_untracked();
    Signal::derive(move || {
        editing.get() || variant.get() != first_variant || fen.with(|f| *f != first_fen)
    })
}
