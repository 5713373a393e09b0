//! The explorer page's state in one place: its hooks wired together in the
//! order they feed each other (the URL, then the editor's switch, the
//! position on show, the line of moves, the answers), so the page's view
//! reads as its panels and nothing else.
//!
//! What ties the state to components (the hovered move, the move list's
//! events) is the page's own (`components::explorer::navigation`): hooks never
//! import components.

use leptos::prelude::*;
use shakmaty::Color;

use crate::hooks::{
    answers::{AnswerResource, Answers, TablesResource, use_answers, use_installed_tables},
    history::{MoveHistory, use_history},
    last_moves::{LastMoves, use_last_moves},
    mode::Mode,
    orientation::use_orientation,
    shortcuts::use_shortcuts,
    url_position::{UrlPosition, use_shown_position, use_url_position},
};

/// The explorer's state: small `Copy` handles the panels take what they need from.
#[derive(Clone, Copy)]
pub struct ExplorerState {
    /// The URL's position, which moves, links and the line of moves follow.
    pub url: UrlPosition,
    /// The position analysed: the editor's while it is open, else the URL's.
    pub shown: UrlPosition,
    pub mode: RwSignal<Mode>,
    /// Whether the editor is open, which changes less often than `mode`.
    pub editing: Memo<bool>,
    /// The editor's position while it is open, for the live analysis.
    pub editor_fen: RwSignal<Option<String>>,
    pub orientation: RwSignal<Color>,
    pub last_moves: LastMoves,
    pub history: MoveHistory,
    pub answers: Answers,
    /// The answer for the position on show.
    pub answer: AnswerResource,
    pub tables: TablesResource,
    /// The FEN the FEN box, the rules switch and the practice link offer:
    /// the editor's while it is open, else the legal position's in full,
    /// else the URL's as it is spelled.
    pub fen_shown: Signal<String>,
}

/// The explorer's state, owned by the calling component (the page).
pub fn use_explorer() -> ExplorerState {
    let url = use_url_position();
    let (mode, editing, editor_fen) = use_editor_switch(url.fen);
    let shown = use_shown_position(url, editor_fen.into());
    let orientation = use_orientation();
    let last_moves = use_last_moves();
    // Components that read FENs or build links take the variant from here.
    provide_context(url.variant);
    let history = use_history(url.variant, url.current_fen, last_moves);
    let (answers, answer) = use_answers(url.variant, shown.parsed);
    let tables = use_installed_tables(url.variant);
    use_shortcuts(orientation, mode, history);
    // While the editor is open, its position as it is set up.
    let fen_shown = Signal::derive(move || {
        editor_fen
            .get()
            .or_else(|| url.current_fen.get())
            .unwrap_or_else(|| url.fen.get())
    });
    ExplorerState {
        url,
        shown,
        mode,
        editing,
        editor_fen,
        orientation,
        last_moves,
        history,
        answers,
        answer,
        tables,
        fen_shown,
    }
}

/// The editor's switch, whether it is open, and its position while it is:
/// the analysis follows that position live, and forgets it when the editor
/// closes. A position reached while editing (a move in the list,
/// back/forward) ends the editing.
fn use_editor_switch(
    url_fen: Memo<String>,
) -> (RwSignal<Mode>, Memo<bool>, RwSignal<Option<String>>) {
    let mode = RwSignal::new(Mode::Playing);
    let editing = Memo::new(move |_| mode.get() != Mode::Playing);
    let editor_fen = RwSignal::new(None::<String>);
    Effect::watch(
        move || editing.get(),
        move |editing, _, _| {
            if !editing {
                editor_fen.set(None);
            }
        },
        false,
    );
    Effect::watch(
        move || url_fen.get(),
        move |_, _, _| mode.set(Mode::Playing),
        false,
    );
    (mode, editing, editor_fen)
}
