//! The line that says whose turn it is and what the last move did, read
//! out by screen readers as it changes: "You played Rh7: slower: was mate
//! in 12, now mate in 14. Black replied Kd8. Your move."

use leptos::prelude::*;

use crate::{
    components::{
        board::pieces::color_name,
        practice::{Marks, Shown},
    },
    practice::{
        replay::PracticeGame,
        review::{Marked, Review, ReviewResource},
    },
    text::capitalized,
};

#[component]
pub fn Status(shown: Shown, reviewed: ReviewResource, marks: Marks) -> impl IntoView {
    let text = move || {
        reviewed.with(|review| {
            marks.with(|marks| {
                shown.with(|game| Some(status_text(game.as_ref().ok()?, review.as_ref(), marks)))
            })
        })
    };
    let failed = move || matches!(reviewed.get(), Some(Err(_)));
    view! {
        <p class="status practice-status" role="status" aria-live="polite">{text}</p>
        <Source reviewed/>
        {move || failed().then(|| view! {
            <button class="retry js-only" on:click=move |_| reviewed.refetch()>"Retry"</button>
        })}
    }
}

/// Where the local tables end, whose answers the game is played on
/// (`serve --upstream`); nothing otherwise.
#[component]
pub fn Source(reviewed: ReviewResource) -> impl IntoView {
    let host = move || {
        reviewed.with(|review| match review {
            Some(Ok(review)) => review.source.clone(),
            _ => None,
        })
    };
    move || {
        host().map(|host| {
            view! {
                <p class="practice-source">
                    {format!("Answers from {host}, where this server's tables end.")}
                </p>
            }
        })
    }
}

/// The status in words.
fn status_text(
    game: &PracticeGame,
    review: Option<&Result<Review, String>>,
    marks: &[Marked],
) -> String {
    let mut parts = Vec::new();
    if let Some(dropped) = &game.dropped {
        parts.push(dropped.clone());
    }
    let guessed = matches!(review, Some(Ok(r)) if r.last_move_guessed(game));
    parts.extend(last_exchange(game, marks, guessed));
    if let Some(end) = game.end() {
        parts.push(format!("{}.", end.words()));
        return parts.join(" ");
    }
    let Some(side) = game.setup.side else {
        return parts.join(" ");
    };
    if game.players_turn() {
        parts.push(format!("Your move ({}).", color_name(side)));
    } else if let Some(Err(why)) = review {
        parts.push(format!("No reply from the tablebase: {why}."));
    } else {
        parts.push(format!(
            "{} is replying…",
            capitalized(color_name(side.other()))
        ));
    }
    parts.join(" ")
}

/// "You played Rh7: best: mate in 12. Black replied Kd8." A reply the
/// tables could not judge (`guessed`) says it is a guess.
fn last_exchange(game: &PracticeGame, marks: &[Marked], guessed: bool) -> Vec<String> {
    let (Some(side), Some(&ply)) = (game.setup.side, game.player_plies().last()) else {
        return Vec::new();
    };
    let san = &game.plies[ply].san;
    let mut out = vec![match marks.last() {
        Some(Marked::Judged(j)) => format!("You played {san}: {}.", j.words()),
        Some(Marked::Unknown) => {
            format!("You played {san}: not judged (the tables do not know this result).")
        }
        _ => format!("You played {san}."),
    }];
    if let Some(reply) = game.plies.get(ply + 1) {
        let guess = if guessed && ply + 2 == game.plies.len() {
            " (a guess: the tables do not know this position)"
        } else {
            ""
        };
        out.push(format!(
            "{} replied {}{guess}.",
            capitalized(color_name(side.other())),
            reply.san
        ));
    }
    out
}
