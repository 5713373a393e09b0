//! The moves played in this tab, numbered as on a score sheet, each a link
//! to its position, with buttons to step through them and "Copy PGN".
//! Loaded with the first move (`split_points::played`).

use leptos::{prelude::*, task::spawn_local};
use shakmaty::Position;

use crate::{
    components::{
        line::movetext::{Movetext, ShownMove, dtz_comment, pgn},
        line::step_buttons::StepButtons,
    },
    game::parse_game_fen,
    hooks::{
        answers::Answers,
        history::{Line, MoveHistory},
    },
    source::position_href,
};

/// What the copy button last did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CopyState {
    Idle,
    Copied,
    /// The browser refused (plain HTTP on a LAN, say): the PGN is shown to copy by hand.
    Refused,
}

/// The controls and the numbered moves, once there are moves.
#[component]
pub fn Played(history: MoveHistory, answers: Answers) -> impl IntoView {
    history.keep_in_url();
    let copy = RwSignal::new(CopyState::Idle);
    // The PGN's DTZ comments come from answers that arrive after the move,
    // so the PGN is written again when it is copied.
    let copies = RwSignal::new(0u32);
    let text = Memo::new(move |_| {
        copies.track();
        history.with(|l| line_pgn(l, answers))
    });
    Effect::watch(
        move || history.with(|l| l.plies.len()),
        move |_, _, _| copy.set(CopyState::Idle),
        false,
    );
    let on_copy = move |_| {
        copies.update(|n| *n += 1);
        let pgn = text.get_untracked();
        spawn_local(async move {
            let done = copy_text(pgn).await;
            copy.set(if done {
                CopyState::Copied
            } else {
                CopyState::Refused
            });
        });
    };
    // Memos, not a view rebuilt per move: the list keeps its links and
    // only the moves that changed are drawn again.
    let start = Memo::new(move |_| history.with(|l| l.start.clone()));
    let shown = Memo::new(move |_| {
        history.with(|l| {
            l.plies
                .iter()
                .enumerate()
                .map(|(i, p)| ShownMove {
                    san: p.san.clone(),
                    href: position_href(l.variant, &p.fen),
                    current: i + 1 == l.cursor,
                })
                .collect::<Vec<_>>()
        })
    });
    view! {
        <div class="history-controls">
            <StepButtons
                at_start=Signal::derive(move || history.with(|l| l.cursor == 0))
                at_end=Signal::derive(move || history.with(|l| l.cursor >= l.plies.len()))
                on_step=Callback::new(move |step| history.step(step))
            />
            <button type="button" class="copy-pgn" data-pgn=move || text.get() on:click=on_copy>
                {move || match copy.get() {
                    CopyState::Copied => "Copied",
                    _ => "Copy PGN",
                }}
            </button>
        </div>
        <div class="history-moves">
            <Movetext start_fen=start moves=shown/>
        </div>
        {move || {
            (copy.get() == CopyState::Refused)
                .then(|| {
                    view! {
                        <textarea class="pgn-text" readonly aria-label="PGN to copy">
                            {text.get()}
                        </textarea>
                    }
                })
        }}
    }
}

/// The line as PGN: from its start FEN, a DTZ comment after each move whose
/// position's answer this tab has seen, and the result if the game is over.
fn line_pgn(line: &Line, answers: Answers) -> String {
    let mut before = line.start.as_str();
    let mut moves = Vec::new();
    for ply in &line.plies {
        moves.push((
            ply.san.clone(),
            dtz_comment(dtz_after(answers, before, ply)),
        ));
        before = &ply.fen;
    }
    let result = parse_game_fen(line.variant, before)
        .map(|p| p.outcome().as_str())
        .unwrap_or("*");
    pgn("Zugzwang analysis", &line.start, &moves, result)
}

/// The DTZ of the position a move leads to: from that position's answer,
/// or from the move's entry in the answer before it.
fn dtz_after(answers: Answers, before: &str, ply: &crate::hooks::history::Ply) -> Option<i32> {
    if let Some(dtz) = answers.read(&ply.fen, |answer| answer.pos.dtz) {
        return dtz;
    }
    answers
        .read(before, |answer| {
            answer
                .moves
                .iter()
                .find(|m| m.uci == ply.uci)
                .and_then(|m| m.pos.dtz)
        })
        .flatten()
}

/// Puts text on the clipboard; false when the browser refuses (the
/// clipboard needs a secure context: HTTPS or localhost).
#[cfg(feature = "hydrate")]
async fn copy_text(text: String) -> bool {
    let window = window();
    if !window.is_secure_context() {
        return false;
    }
    let promise = window.navigator().clipboard().write_text(&text);
    wasm_bindgen_futures::JsFuture::from(promise).await.is_ok()
}

#[cfg(not(feature = "hydrate"))]
async fn copy_text(_text: String) -> bool {
    false
}
