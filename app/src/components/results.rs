//! The verdict and the move list for the URL's position. The list waits for
//! the API inside a `Transition`, which keeps the previous list on show,
//! greyed, until the new one arrives.

use leptos::prelude::*;
use shakmaty::{Chess, Square};

use crate::{
    components::{
        move_list::{ListedMove, MoveList, listed_moves, unknown_moves},
        status::{Status, status_line},
    },
    hooks::answers::{AnswerResource, Answers},
    position::to_fen,
    text::capitalized,
};

/// What the move list reports back to the page.
#[derive(Clone, Copy)]
pub struct MoveEvents {
    /// A move's squares while the mouse is over it (`None` when it leaves).
    pub on_hover: Callback<Option<(Square, Square)>>,
    /// A move about to be played from the list: the FEN after it and its squares.
    pub on_pick: Callback<(String, (Square, Square))>,
    /// The FEN after a move the mouse came over, to ask for its answer early.
    pub on_prefetch: Callback<String>,
}

#[component]
pub fn Results(
    parsed: Memo<Result<Chess, String>>,
    answers: Answers,
    answer: AnswerResource,
    events: MoveEvents,
) -> impl IntoView {
    let (pending, set_pending) = signal(false);
    let results = move || {
        Suspend::new(async move {
            let answer = answer.await;
            // In the browser the first answer comes with the page, not
            // through the cache: keep it for back/forward too.
            if let Ok((fen, a)) = &answer {
                answers.remember(fen.clone(), a.clone());
            }
            match (parsed.get_untracked(), answer) {
                (Err(reason), _) => illegal_view(&reason),
                (Ok(pos), Ok((fen, answer))) => {
                    let verdict = status_line(&pos, Ok(&answer));
                    listed_view(verdict, fen, listed_moves(&pos, &answer.moves), events)
                }
                (Ok(pos), Err(message)) => {
                    let verdict = status_line(&pos, Err(&message));
                    let moves = listed_moves(&pos, &unknown_moves(&pos));
                    listed_view(verdict, to_fen(&pos), moves, events)
                }
            }
        })
    };
    view! {
        <div class="results" class:pending=move || pending.get() aria-busy=move || pending.get().to_string()>
            <Transition
                fallback=|| view! { <p class="status">"Probing the tables…"</p> }
                set_pending=set_pending
            >
                {results}
            </Transition>
        </div>
    }
}

fn illegal_view(reason: &str) -> AnyView {
    view! {
        <Status text=capitalized(reason) class="error"/>
        <div class="move-list" data-fen="">
            <p class="no-moves">"No moves: the position is not legal."</p>
        </div>
    }
    .into_any()
}

/// The verdict and the grouped move list of the position `fen`.
fn listed_view(
    (text, class): (String, &'static str),
    fen: String,
    moves: Vec<ListedMove>,
    MoveEvents {
        on_hover,
        on_pick,
        on_prefetch,
    }: MoveEvents,
) -> AnyView {
    view! {
        <Status text class/>
        <div class="move-list" data-fen=fen>
            <MoveList moves on_hover on_pick on_prefetch/>
        </div>
    }
    .into_any()
}
