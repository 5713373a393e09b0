//! The end of a practice game: how it ended, the player's marks counted,
//! the game as PGN with each move's result as a comment, and two ways to
//! try again (from the start, or from the first mistake).

use leptos::prelude::*;

use crate::{
    components::{
        line::movetext::{data_url, pgn},
        practice::{Marks, Shown},
    },
    game_review::review_link,
    practice::{
        judge::{Judgement, Mark},
        replay::{End, PracticeGame},
        review::Marked,
    },
};

#[component]
pub fn Summary(shown: Shown, marks: Marks) -> impl IntoView {
    move || {
        marks.with(|marks| {
            shown.with(|game| {
                let game = game.as_ref().ok()?;
                Some(summary_view(game, &game.end()?, marks))
            })
        })
    }
}

fn summary_view(game: &PracticeGame, end: &End, marks: &[Marked]) -> impl IntoView + use<> {
    let count = |mark: Mark| {
        marks
            .iter()
            .filter_map(Marked::judgement)
            .filter(|j| j.mark == mark)
            .count()
    };
    let unjudged = marks
        .iter()
        .filter(|m| **m == Marked::NotJudgedHere)
        .count();
    let counts = format!(
        "Best {} · slower {} · mistakes {}",
        count(Mark::Best),
        count(Mark::Slower),
        count(Mark::Mistake)
    );
    let counts = match unjudged {
        0 => counts,
        1 => format!("{counts} · 1 older move not judged here"),
        n => format!("{counts} · {n} older moves not judged here"),
    };
    let text = game_pgn(game, end, marks);
    let href = data_url("application/x-chess-pgn", &text);
    let again = game.setup.with_moves(Vec::new()).href();
    let setup = &game.setup;
    let review = review_link(
        setup.variant,
        Some(&setup.fen),
        setup.moves.iter().map(String::as_str),
    );
    let plies = game.player_plies();
    let first_mistake = marks
        .iter()
        .position(|m| m.judgement().is_some_and(|j| j.mark == Mark::Mistake))
        .and_then(|j| plies.get(j))
        .map(|&ply| (game.from_ply(ply).href(), game.plies[ply].san.clone()));
    view! {
        <section class="practice-summary" aria-labelledby="practice-summary-title">
            <h3 id="practice-summary-title">{end.words()}</h3>
            <p class="practice-counts">{counts}</p>
            <div class="practice-again">
                <a class="again button" href=again>"Try again from the start"</a>
                {first_mistake.map(|(href, san)| view! {
                    <a class="again-mistake button" href=href title=format!("Back to before {san}")>
                        "Try again from my first mistake"
                    </a>
                })}
                <a class="pgn" href=href download="zugzwang-practice.pgn" data-pgn=text>"Download PGN"</a>
                <a class="to-review" href=review title="Every move of both sides judged, on the review page">"Review both sides"</a>
            </div>
        </section>
    }
}

/// The game as PGN: each of the player's moves has its mark and result
/// as a comment ("{mistake: win thrown away: now a draw (was mate in 12);
/// Rh7 was best}").
fn game_pgn(game: &PracticeGame, end: &End, marks: &[Marked]) -> String {
    // Each ply's mark, if it is the player's: one pass, not a search per ply.
    let mut by_ply = vec![None; game.plies.len()];
    for (&ply, mark) in game.player_plies().iter().zip(marks) {
        by_ply[ply] = mark.judgement().map(comment);
    }
    let moves: Vec<(String, Option<String>)> = game
        .plies
        .iter()
        .zip(by_ply)
        .map(|(p, comment)| (p.san.clone(), comment))
        .collect();
    pgn("Zugzwang practice", &game.setup.fen, &moves, end.result())
}

/// A move's PGN comment; braces cannot appear inside one.
fn comment(j: &Judgement) -> String {
    let mut text = j.words();
    if j.mark != Mark::Best {
        text.push_str(&format!("; {} was best", j.best_san));
    }
    text.replace(['{', '}'], "")
}
