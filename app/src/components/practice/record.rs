//! The game so far, one line per move of the player with its mark and the
//! result before and after, and the tablebase's reply after it.

use leptos::prelude::*;
use shakmaty::Position;

use crate::{
    components::practice::Shown,
    practice::{
        game::PracticeGame,
        review::{Marked, ReviewResource},
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
pub fn Record(shown: Shown, reviewed: ReviewResource) -> impl IntoView {
    let lines = move || {
        let game = shown.get().ok()?;
        let marks = match reviewed.get() {
            Some(Ok(review)) => review.marks_for(&game),
            _ => Vec::new(),
        };
        Some(record_lines(&game, &marks))
    };
    move || {
        let (opening, lines) = lines()?;
        if opening.is_none() && lines.is_empty() {
            return None;
        }
        Some(view! {
            <ol class="practice-record" aria-label="Your moves and their results">
                {opening.map(|san| view! { <li class="opening">"The tablebase began: "{san}</li> })}
                {lines.into_iter().map(line_view).collect_view()}
            </ol>
        })
    }
}

fn line_view(line: Line) -> impl IntoView {
    let (class, icon, words) = match &line.marked {
        Marked::Judged(j) => (format!("mark {}", j.mark.label()), j.mark.icon(), j.words()),
        Marked::Unknown => (
            "mark unjudged".to_string(),
            "?",
            "not judged: the tables do not know this result".to_string(),
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
