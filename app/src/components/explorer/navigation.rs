//! How the explorer changes position: a move on the board, a move picked
//! from the list, a FEN typed in; and the move under the mouse, which the
//! board draws as an arrow.
//!
//! Every way goes through the URL (`go`), the page's single source of the
//! position. A move also notes its squares (`last_moves`), which the URL
//! does not hold, so back/forward can highlight it again, and asks for the
//! next answer before the navigation's work.

use leptos::prelude::*;
use shakmaty::{Move, Position, Square};

use crate::{
    components::{board::arrow::HoveredMove, move_list::MoveEvents},
    hooks::{explorer::ExplorerState, pick::use_pick},
    move_squares::move_squares,
    position::to_fen,
    source::position_href,
    url::use_navigate,
};

/// The page's ways of moving, handed to the board, the list and the FEN box.
#[derive(Clone, Copy)]
pub struct Moves {
    /// The list's move under the mouse or focus, drawn on the board.
    pub hover: RwSignal<Option<HoveredMove>>,
    /// Shows a position by its FEN.
    pub go: Callback<String>,
    /// A move played on the board.
    pub on_move: Callback<Move>,
    /// What the move list reports back.
    pub events: MoveEvents,
}

/// The ways of moving from the URL's position, owned by the calling component.
pub fn use_moves(state: ExplorerState) -> Moves {
    let ExplorerState {
        url,
        answers,
        last_moves,
        ..
    } = state;
    let navigate = use_navigate();
    let pos = url.pos();
    let hover = RwSignal::new(None::<HoveredMove>);
    let go = Callback::new(move |fen: String| {
        hover.set(None);
        navigate(
            &position_href(url.variant.get_untracked(), &fen),
            Default::default(),
        );
    });
    // Shows a position and remembers the move that led there, if any.
    let on_line = Callback::new(move |(fen, squares): (String, Option<(Square, Square)>)| {
        answers.prefetch(fen.clone());
        if let Some(squares) = squares {
            last_moves.record(fen.clone(), squares);
        }
        go.run(fen);
    });
    let pick = use_pick(answers, go, url.fen);
    let on_move = Callback::new(move |m: Move| {
        let Some(mut after) = pos.get_untracked() else {
            return;
        };
        let squares = move_squares(&m);
        after.play_unchecked(m);
        on_line.run((to_fen(&after), squares));
    });
    let events = MoveEvents {
        on_hover: Callback::new(move |squares| hover.set(squares)),
        on_pick: Callback::new(move |(fen, squares): (String, _)| {
            last_moves.record(fen.clone(), squares);
            pick.run(fen);
        }),
        on_prefetch: Callback::new(move |fen| answers.prefetch(fen)),
    };
    Moves {
        hover,
        go,
        on_move,
        events,
    }
}
