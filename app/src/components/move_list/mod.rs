//! What the position and each move lead to: the verdict and every move.
//!
//! The verdict and the move list for the position on show. The list waits
//! for the API inside a `Transition`, which keeps the previous list on show,
//! greyed, until the new one arrives.

pub mod mate;
pub mod moves;
pub mod outcome;
pub mod verdict;

use leptos::{either::Either, prelude::*};
use shakmaty::Square;

use moves::{ListedMove, MoveList, listed_moves, unknown_moves};
use verdict::{NoAnswer, Status, status_line};

use crate::game::{Game, parse_game_fen};
use crate::{
    api::{Category, InstalledTables},
    components::board::arrow::HoveredMove,
    hooks::answers::{AnswerResource, Answers, TablesResource},
    needed_table::{UnknownReason, fetch_command, unknown_reason},
    position::to_fen,
    text::capitalized,
    variant::Variant,
};

/// What the move list reports back to the page.
#[derive(Clone, Copy)]
pub struct MoveEvents {
    /// The move under the mouse or focus (`None` when it leaves).
    pub on_hover: Callback<Option<HoveredMove>>,
    /// A move played from the list: the FEN after it and its squares (the
    /// page shows it; the link's own navigation is held back).
    pub on_pick: Callback<(String, (Square, Square))>,
    /// The FEN after a move the mouse came over, to ask for its answer early.
    pub on_prefetch: Callback<String>,
}

#[component]
pub fn Results(
    parsed: Memo<Result<Game, String>>,
    answers: Answers,
    answer: AnswerResource,
    tables: TablesResource,
    events: MoveEvents,
) -> impl IntoView {
    let (pending, set_pending) = signal(false);
    let resource = answer;
    let results = move || {
        Suspend::new(async move {
            let answer = answer.await;
            let installed = tables.await;
            // In the browser the first answer comes with the page, not
            // through the cache: keep it for back/forward too.
            if let Ok((fen, a)) = &answer {
                answers.remember(fen.clone(), a.clone());
            }
            let installed = installed.as_ref();
            match (parsed.get_untracked(), answer) {
                (Err(reason), _) => Either::Left(illegal_view(&reason)),
                (Ok(pos), Ok((fen, answer))) => {
                    let verdict = status_line(&pos, Ok(&answer), installed);
                    let listed = listed_moves(&pos, &answer.moves);
                    let (moves, missing) = explained(&pos, answer.pos.category, listed, installed);
                    Either::Right(listed_view(
                        verdict,
                        fen,
                        moves,
                        events,
                        Either::Left(fetch_hint(pos.variant(), missing)),
                    ))
                }
                (Ok(pos), Err(message)) => {
                    let why = NoAnswer::from_message(message);
                    let verdict = status_line(&pos, Err(&why), installed);
                    let moves = listed_moves(&pos, &unknown_moves(&pos));
                    let retry = view! {
                        <button class="retry" on:click=move |_| resource.refetch()>"Retry"</button>
                    };
                    Either::Right(listed_view(
                        verdict,
                        to_fen(&pos),
                        moves,
                        events,
                        Either::Right(retry),
                    ))
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

/// Gives each unknown move (and the root, if unknown) the reason the
/// installed tables give none, and collects the tables missing for them,
/// each once, for the fetch hint.
fn explained(
    pos: &Game,
    root: Category,
    mut moves: Vec<ListedMove>,
    installed: Option<&InstalledTables>,
) -> (Vec<ListedMove>, Vec<String>) {
    let Some(installed) = installed else {
        return (moves, Vec::new());
    };
    let mut missing = Vec::new();
    let mut note = |reason: UnknownReason| {
        if let UnknownReason::NotInstalled(table) = &reason
            && !missing.contains(table)
        {
            missing.push(table.clone());
        }
        capitalized(&reason.to_string())
    };
    if root == Category::Unknown
        && let Some(reason) = unknown_reason(pos, installed)
    {
        note(reason);
    }
    for m in &mut moves {
        if m.info.pos.category != Category::Unknown {
            continue;
        }
        let after = m
            .fen_after
            .as_deref()
            .and_then(|fen| parse_game_fen(pos.variant(), fen).ok());
        let reason = after.and_then(|after| unknown_reason(&after, installed));
        // A missing table is said once, above the list ("Not installed:
        // KRPvKR"), not under each of the moves that need it.
        m.why_above = matches!(reason, Some(UnknownReason::NotInstalled(_)));
        m.unknown_because = reason.map(&mut note);
    }
    (moves, missing)
}

/// The command that fetches the missing tables, for whoever hosts the server.
fn fetch_hint(variant: Variant, missing: Vec<String>) -> Option<impl IntoView + use<>> {
    if missing.is_empty() {
        return None;
    }
    let command = fetch_command(variant, &missing.join(","));
    Some(view! {
        <details class="missing-tables">
            <summary>{format!("Not installed: {}", missing.join(", "))}</summary>
            <p>"If you host this server, this fetches them (and the tables their captures lead to):"</p>
            <pre><code>{command}</code></pre>
        </details>
    })
}

fn illegal_view(reason: &str) -> impl IntoView + use<> {
    view! {
        <Status text=capitalized(reason) class="error"/>
        <div class="move-list" data-fen="">
            <p class="no-moves">"No moves: the position is not legal."</p>
        </div>
    }
}

/// The verdict, what to do about it (fetch the missing tables, or retry),
/// and the grouped move list of the position `fen`.
///
/// Either types rather than `AnyView` throughout the list: an `AnyView`
/// carries the async hydration of what it holds into the first download.
fn listed_view(
    (text, class): (String, &'static str),
    fen: String,
    moves: Vec<ListedMove>,
    MoveEvents {
        on_hover,
        on_pick,
        on_prefetch,
    }: MoveEvents,
    action: Either<impl IntoView + 'static, impl IntoView + 'static>,
) -> impl IntoView {
    view! {
        <Status text class/>
        {action}
        <div class="move-list" data-fen=fen>
            <MoveList moves on_hover on_pick on_prefetch/>
        </div>
    }
}
