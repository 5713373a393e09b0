//! The explorer page: the position from the URL, the board, the verdict,
//! every move with its DTZ, the FEN box, the editor, the mainline and the
//! endgame statistics.
//!
//! The URL (`/?fen=...`) is the single source of the position: playing a
//! move, loading a FEN or leaving the editor navigates, so back and forward
//! walk the history and every position is a link. The board follows the URL
//! at once (legality and the next FEN come from shakmaty in WASM); the move
//! list waits for the API inside a `Transition`, which keeps the previous list
//! on show, greyed, until the new one arrives.

use std::collections::HashMap;

use leptos::{ev, prelude::*};
use leptos_meta::Title;
use leptos_router::hooks::{use_navigate, use_query_map};
use shakmaty::{Chess, Color, Move, Position, Square, fen::Fen};

use crate::{
    api::TablebaseAnswer,
    components::{
        board::{Board, move_squares},
        editor::Editor,
        fen_box::FenBox,
        mainline::Mainline,
        move_list::{MoveList, listed_moves, unknown_moves},
        stats::{Stats, side_material},
        status::{Status, status_line, turn_text},
    },
    position::{parse_fen, to_fen},
    source::{encode, fetch_answer},
    text::capitalized,
};

/// Where a visitor without a `?fen=` starts: a classic won rook ending.
pub const START_FEN: &str = "4k3/8/8/8/8/8/8/4K2R w - - 0 1";

/// How many answers the tab keeps before starting afresh (a few MB at most).
const ANSWER_CACHE: usize = 2000;

#[component]
pub fn Explorer() -> impl IntoView {
    let query = use_query_map();
    let navigate = use_navigate();
    let fen = Memo::new(move |_| {
        query
            .read()
            .get("fen")
            .unwrap_or_else(|| START_FEN.to_string())
    });
    let parsed = Memo::new(move |_| parse_fen(&fen.get()).map_err(|err| err.to_string()));
    let pos = Signal::derive(move || parsed.get().ok());
    let current_fen = Memo::new(move |_| parsed.get().ok().map(|p| to_fen(&p)));
    // An illegal position still shows the pieces its FEN places, if it places any.
    let placement = Memo::new(move |_| match parsed.get() {
        Ok(p) => p.board().clone(),
        Err(_) => Fen::from_ascii(fen.get().replace('_', " ").trim().as_bytes())
            .map(|f| f.into_setup().board)
            .unwrap_or_else(|_| shakmaty::Board::empty()),
    });

    let orientation = RwSignal::new(Color::White);
    let hover = RwSignal::new(None::<(Square, Square)>);
    let editing = RwSignal::new(false);
    // Asks an open editor to check its position and leave (like its Done button).
    let leave_editor = RwSignal::new(0u32);
    let toggle_editor = move || {
        if editing.get_untracked() {
            leave_editor.update(|n| *n += 1);
        } else {
            editing.set(true);
        }
    };
    // The move that led to each position seen in this tab, to highlight it
    // again when back/forward return there.
    let last_moves = RwSignal::new(HashMap::<String, (Square, Square)>::new());
    let last_move = Signal::derive(move || {
        let fen = current_fen.get()?;
        last_moves.with(|m| m.get(&fen).copied())
    });

    // Answers seen in this tab, so back/forward and a move hovered before it
    // is clicked show their list at once, without asking the server again.
    let answers = StoredValue::new(HashMap::<String, TablebaseAnswer>::new());
    let remember = move |fen: String, answer: TablebaseAnswer| {
        answers.try_update_value(|map| {
            if map.len() >= ANSWER_CACHE {
                map.clear();
            }
            map.insert(fen, answer);
        });
    };
    let answer = Resource::new(
        move || parsed.get().map(|p| to_fen(&p)),
        move |key: Result<String, String>| async move {
            let fen = key?;
            if let Some(hit) = answers
                .try_with_value(|map| map.get(&fen).cloned())
                .flatten()
            {
                return Ok((fen, hit));
            }
            let answer = sendable(fetch_answer(fen.clone()))
                .await
                .map_err(|err| err.error)?;
            remember(fen.clone(), answer.clone());
            Ok::<_, String>((fen, answer))
        },
    );
    // Hovering a move asks for its answer ahead of the click.
    let on_prefetch = Callback::new(move |fen: String| {
        if answers.try_with_value(|map| map.contains_key(&fen)) != Some(false) {
            return;
        }
        leptos::task::spawn_local(async move {
            if let Ok(answer) = fetch_answer(fen.clone()).await {
                remember(fen, answer);
            }
        });
    });

    let go = Callback::new({
        let navigate = navigate.clone();
        move |fen: String| {
            hover.set(None);
            navigate(&format!("/?fen={}", encode(&fen)), Default::default());
        }
    });
    let on_move = Callback::new(move |m: Move| {
        let Some(mut after) = pos.get_untracked() else {
            return;
        };
        let squares = move_squares(&m);
        after.play_unchecked(m);
        let fen = to_fen(&after);
        if let Some(squares) = squares {
            last_moves.update(|map| {
                map.insert(fen.clone(), squares);
            });
        }
        go.run(fen);
    });
    let on_pick = Callback::new(move |(fen, squares): (String, (Square, Square))| {
        last_moves.update(|map| {
            map.insert(fen, squares);
        });
    });
    let on_hover = Callback::new(move |squares| hover.set(squares));
    let on_line = Callback::new(move |(fen, squares): (String, Option<(Square, Square)>)| {
        if let Some(squares) = squares {
            last_moves.update(|map| {
                map.insert(fen.clone(), squares);
            });
        }
        go.run(fen);
    });

    // Keyboard: ←/→ walk the history, f flips, e opens or closes the editor.
    Effect::new(move |_| {
        let handle = window_event_listener(ev::keydown, move |ev| {
            // Keys typed into a text field are text, not shortcuts (radio
            // buttons and checkboxes do not take letters).
            let typing = ev.target().is_some_and(|t| {
                use leptos::wasm_bindgen::JsCast;
                if let Some(input) = t.dyn_ref::<leptos::web_sys::HtmlInputElement>() {
                    !matches!(
                        input.type_().as_str(),
                        "radio" | "checkbox" | "button" | "submit"
                    )
                } else {
                    t.dyn_ref::<leptos::web_sys::HtmlElement>()
                        .is_some_and(|el| matches!(el.tag_name().as_str(), "TEXTAREA" | "SELECT"))
                }
            });
            if typing || ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
                return;
            }
            let history = window().history().ok();
            match ev.key().as_str() {
                "ArrowLeft" if !editing.get_untracked() => {
                    if let Some(h) = history {
                        let _ = h.back();
                    }
                }
                "ArrowRight" if !editing.get_untracked() => {
                    if let Some(h) = history {
                        let _ = h.forward();
                    }
                }
                "f" => orientation.update(|o| *o = o.other()),
                "e" => toggle_editor(),
                _ => return,
            }
            ev.prevent_default();
        });
        on_cleanup(move || handle.remove());
    });

    let (pending, set_pending) = signal(false);
    // Effects run only in the browser: this marks the page as interactive,
    // so tests (and curious people) can tell SSR from hydrated.
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));

    let play_area = move || {
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
                        editing.set(false);
                        go.run(fen);
                    })
                    on_cancel=Callback::new(move |_| editing.set(false))
                    leave=leave_editor
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
    };

    let results = move || {
        Suspend::new(async move {
            let answer = answer.await;
            if let Ok((fen, a)) = &answer {
                remember(fen.clone(), a.clone());
            }
            let pos = parsed.get_untracked();
            match (pos, answer) {
                (Err(reason), _) => view! {
                    <Status text=capitalized(&reason) class="error"/>
                    <div class="move-list" data-fen="">
                        <p class="no-moves">"No moves: the position is not legal."</p>
                    </div>
                }
                .into_any(),
                (Ok(pos), Ok((fen, answer))) => {
                    answer_view(&pos, fen, answer, on_hover, on_pick, on_prefetch)
                }
                (Ok(pos), Err(message)) => {
                    let (text, class) = status_line(&pos, Err(&message));
                    let moves = listed_moves(&pos, &unknown_moves(&pos));
                    view! {
                        <Status text class/>
                        <div class="move-list" data-fen=to_fen(&pos)>
                            <MoveList moves on_hover on_pick on_prefetch/>
                        </div>
                    }
                    .into_any()
                }
            }
        })
    };

    // The tab names the material and the side to move: "KRvK, white to move".
    // The server renders <title> after the page's reactive values may
    // already be disposed, so the closure falls back to the title of the
    // position this page was rendered for instead of panicking.
    let first_title = page_title(&placement.get_untracked(), parsed.get_untracked().ok());
    let title = move || match (placement.try_get(), parsed.try_get()) {
        (Some(board), Some(pos)) => page_title(&board, pos.ok()),
        _ => first_title.clone(),
    };

    view! {
        <Title text=title/>
        <div
            class="explorer"
            class:editing=move || editing.get()
            data-hydrated=move || hydrated.get().to_string()
        >
            <div class="play">
                {play_area}
                <div class="board-tools">
                    <button class="flip js-only" title="Flip the board (f)" on:click=move |_| orientation.update(|o| *o = o.other())>
                        "⇅ Flip"
                    </button>
                    <button class="edit js-only" title="Set up a position (e)" class:active=move || editing.get() on:click=move |_| toggle_editor()>
                        {move || if editing.get() { "Close editor" } else { "✎ Editor" }}
                    </button>
                    <span class="turn">{move || pos.get().map(|p| turn_text(p.turn()))}</span>
                </div>
            </div>
            <div class="side">
                <div class="results" class:pending=move || pending.get() aria-busy=move || pending.get().to_string()>
                    <Transition
                        fallback=|| view! { <p class="status">"Probing the tables…"</p> }
                        set_pending=set_pending
                    >
                        {results}
                    </Transition>
                </div>
                <Mainline pos on_go=on_line/>
                <FenBox fen=Signal::derive(move || current_fen.get().unwrap_or_else(|| fen.get())) on_fen=go/>
                <Stats placement/>
            </div>
        </div>
    }
}

/// The verdict and the grouped move list for an answered position.
fn answer_view(
    pos: &Chess,
    fen: String,
    answer: TablebaseAnswer,
    on_hover: Callback<Option<(Square, Square)>>,
    on_pick: Callback<(String, (Square, Square))>,
    on_prefetch: Callback<String>,
) -> AnyView {
    let (text, class) = status_line(pos, Ok(&answer));
    let moves = listed_moves(pos, &answer.moves);
    view! {
        <Status text class/>
        <div class="move-list" data-fen=fen>
            <MoveList moves on_hover on_pick on_prefetch/>
        </div>
    }
    .into_any()
}

/// Resources need `Send` futures, but the browser's HTTP futures are not
/// (WASM runs on one thread, so wrapping them is sound); on the server the
/// engine's futures are `Send` already and must stay free to move threads.
#[cfg(not(feature = "ssr"))]
fn sendable<F: std::future::Future>(future: F) -> send_wrapper::SendWrapper<F> {
    send_wrapper::SendWrapper::new(future)
}

#[cfg(feature = "ssr")]
fn sendable<F: std::future::Future>(future: F) -> F {
    future
}

/// The tab's title: the material and the side to move, "KRvK, white to move".
fn page_title(board: &shakmaty::Board, pos: Option<Chess>) -> String {
    let material = format!(
        "{}v{}",
        side_material(board, Color::White),
        side_material(board, Color::Black)
    );
    match pos {
        Some(p) => format!(
            "{material}, {} — Zugzwang",
            turn_text(p.turn()).to_lowercase()
        ),
        None => "Illegal position — Zugzwang".to_string(),
    }
}
