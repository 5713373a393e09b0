//! The panels beside the board: the help, the verdict and moves, the moves
//! played, the mainline, the FEN box, the statistics and the installed
//! tables, in the order a visitor reads them.

use leptos::prelude::*;

use super::navigation::Moves;
use crate::{
    components::{
        about::help::Help,
        about::installed::{InstalledTablesProps, server_view},
        about::stats::{Stats, StatsProps},
        editor::fen_box::{FenBox, FenBoxProps},
        line::history_panel::History,
        line::mainline::{Mainline, MainlineProps},
        move_list::Results,
        part::{Loader, ServerPart, server_html},
        split_points,
    },
    hooks::explorer::ExplorerState,
    variant::Variant,
};

#[component]
pub fn SidePanels(
    state: ExplorerState,
    moves: Moves,
    /// True once the page shows another position than the first: the
    /// server-rendered parts are needed live.
    left_first: Signal<bool>,
) -> impl IntoView {
    let ExplorerState {
        url,
        shown,
        history,
        answers,
        answer,
        tables,
        fen_shown,
        ..
    } = state;
    // The mainline starts from the URL's position, not the editor's.
    let pos = url.pos();
    let fen_box = move || FenBoxProps {
        fen: fen_shown,
        on_fen: moves.go,
    };
    view! {
        <div class="side">
            <Help/>
            <Results parsed=shown.parsed answers answer tables events=moves.events/>
            <History history answers/>
            <ServerPart
                what="The mainline"
                html=server_html(move || Mainline(MainlineProps { pos, history, tables, answer }).into_any())
                load=Loader::new(move || split_points::mainline(MainlineProps { pos, history, tables, answer }))
            />
            <ServerPart
                what="The FEN box"
                html=server_html(move || FenBox(fen_box()).into_any())
                load=Loader::new(move || split_points::fen_box(fen_box()))
                load_when=left_first
            />
            // The statistics are the standard tables'.
            <Show when=move || url.variant.get() == Variant::Standard>
                <ServerPart
                    what="The statistics"
                    html=server_html(move || Stats(StatsProps { placement: shown.placement.into(), fen: fen_shown }).into_any())
                    load=Loader::new(move || split_points::stats(StatsProps { placement: shown.placement.into(), fen: fen_shown }))
                    load_when=moved_from(shown.placement)
                />
            </Show>
            // Its code is needed only when the rules change.
            <ServerPart
                what="The list of installed tables"
                html=server_html(move || server_view(url.variant.get_untracked()))
                load=Loader::new(move || split_points::installed(InstalledTablesProps { tables }))
                load_when=changed_from(url.variant)
            />
        </div>
    }
}

/// True once the board's material or placement differs from the first: a
/// part that follows the board is needed live from then on.
fn moved_from(placement: Memo<shakmaty::Board>) -> Signal<bool> {
    let first = placement.get_untracked();
    Signal::derive(move || placement.with(|p| *p != first))
}

/// True once the rules differ from the first page's.
fn changed_from(variant: Memo<Variant>) -> Signal<bool> {
    let first = variant.get_untracked();
    Signal::derive(move || variant.get() != first)
}
