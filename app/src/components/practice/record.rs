//! The game so far, one line per move of the player with its mark and the
//! result before and after, and the tablebase's reply after it. The page
//! the server writes marks the last few moves only (`review`); a note
//! says so while older ones are unmarked.

use leptos::{html, prelude::*};
use shakmaty::Position;

use crate::{
    components::practice::{Marks, Shown},
    practice::{
        replay::PracticeGame,
        review::{JUDGED_MOVES, Marked},
    },
};

/// One line of the record.
#[derive(Clone, Debug, PartialEq)]
struct Line {
    /// "12." or "12...".
    number: String,
    san: String,
    marked: Marked,
    reply: Option<String>,
}

#[component]
pub fn Record(shown: Shown, marks: Marks) -> impl IntoView {
    let lines = move || {
        marks.with(|marks| shown.with(|game| Some(record_lines(game.as_ref().ok()?, marks))))
    };
    let list = NodeRef::<html::Ol>::new();
    keep_last_in_view(list);
    move || {
        let (opening, lines) = lines()?;
        if opening.is_none() && lines.is_empty() {
            return None;
        }
        let unjudged = lines
            .iter()
            .any(|line| line.marked == Marked::NotJudgedHere);
        Some(view! {
            {unjudged.then(|| view! { <p class="practice-note">{unjudged_note()}</p> })}
            <ol class="practice-record" aria-label="Your moves and their results" node_ref=list>
                {opening.map(|san| view! { <li class="opening">"The tablebase began: "{san}</li> })}
                {lines.into_iter().map(line_view).collect_view()}
            </ol>
        })
    }
}

/// Scrolls the record (and only it) to its end, so the last move is in
/// sight: the list is drawn anew when a move or a mark comes, and a new
/// list would open at its top with the latest moves cut off below.
fn keep_last_in_view(list: NodeRef<html::Ol>) {
    Effect::new(move |_| {
        if let Some(list) = list.get() {
            // At the next frame, once the list is laid out.
            request_animation_frame(move || list.set_scroll_top(list.scroll_height()));
        }
    });
}

fn line_view(line: Line) -> impl IntoView {
    let (class, icon, words) = match &line.marked {
        Marked::Judged(j) => (format!("mark {}", j.mark.label()), j.mark.icon(), j.words()),
        Marked::Unknown => (
            "mark unjudged".to_string(),
            "?",
            "not judged: the tables do not know this result".to_string(),
        ),
        Marked::NotJudgedHere => (
            "mark unjudged older".to_string(),
            "·",
            "not judged here".to_string(),
        ),
        Marked::Pending => ("mark unjudged".to_string(), "…", "being judged".to_string()),
    };
    view! {
        <li>
            <span class="move-number">{line.number}</span>" "
            <span class="san">{line.san}</span>" "
            <span class=class>
                <span aria-hidden="true">{icon}</span>" "{words}
            </span>
            {line.reply.map(|san| view! { " " <span class="reply">"→ "{san}</span> })}
        </li>
    }
}

/// Why older moves are unmarked: the page as the server writes it judges
/// the last few only, and the browser judges the rest after it loads.
pub fn unjudged_note() -> String {
    format!(
        "The page judges your last {JUDGED_MOVES} moves as it opens; your browser judges the \
         older ones afterwards, one at a time. Without JavaScript they stay “not judged here”."
    )
}

/// The tablebase's moves before the player's first, and a line per
/// player move.
fn record_lines(game: &PracticeGame, marks: &[Marked]) -> (Option<String>, Vec<Line>) {
    let plies = game.player_plies();
    let first = plies.first().copied().unwrap_or(game.plies.len());
    let opening = (first > 0).then(|| {
        game.plies[..first]
            .iter()
            .map(|p| p.san.clone())
            .collect::<Vec<_>>()
            .join(" ")
    });
    let lines = plies
        .iter()
        .enumerate()
        .map(|(j, &ply)| {
            let pos = &game.positions[ply];
            let number = pos.fullmoves().get();
            let number = match pos.turn() {
                shakmaty::Color::White => format!("{number}."),
                shakmaty::Color::Black => format!("{number}..."),
            };
            Line {
                number,
                san: game.plies[ply].san.clone(),
                marked: marks.get(j).cloned().unwrap_or(Marked::Pending),
                reply: game.plies.get(ply + 1).map(|p| p.san.clone()),
            }
        })
        .collect();
    (opening, lines)
}
