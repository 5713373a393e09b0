//! The hint: first the result each move leads to (which moves win, draw
//! or lose), not which is best; asked again, the best move.

use leptos::{prelude::*, task::spawn_local};

use crate::{
    api::TablebaseAnswer,
    components::{move_list::outcome::Outcome, practice::Shown},
    hooks::answers::Answers,
    practice::defence::{best_moves, guessed},
};

/// How much the hint shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    None,
    Results,
    Best,
}

#[component]
pub fn Hint(shown: Shown, answers: Answers) -> impl IntoView {
    let level = RwSignal::new(Level::None);
    let answer = RwSignal::new(None::<Result<TablebaseAnswer, String>>);
    let fen = Memo::new(move |_| {
        shown.with(|g| {
            g.as_ref()
                .ok()
                .filter(|g| g.players_turn() && g.end().is_none())
                .map(|g| g.fen())
        })
    });
    // A new position takes the hint away.
    Effect::watch(
        move || fen.get(),
        move |_, _, _| {
            level.set(Level::None);
            answer.set(None);
        },
        false,
    );
    let ask = move |_| {
        let Some(fen) = fen.get_untracked() else {
            return;
        };
        level.update(|l| {
            *l = match l {
                Level::None => Level::Results,
                _ => Level::Best,
            }
        });
        spawn_local(async move {
            let got = answers.answer(fen).await.map(|(_, a)| a);
            answer.set(Some(got));
        });
    };
    let label = move || match level.get() {
        Level::None => "Hint",
        _ => "Show the best move",
    };
    view! {
        {move || fen.get().is_some().then(|| view! {
            <button class="hint js-only" on:click=ask disabled=move || level.get() == Level::Best>
                {label}
            </button>
        })}
        <div class="practice-hint" aria-live="polite">
            {move || {
                let level = level.get();
                if level == Level::None {
                    return None;
                }
                Some(match answer.get()? {
                    Ok(answer) => hint_view(&answer, level).into_any(),
                    Err(why) => view! { <p class="line-error" role="alert">{why}</p> }.into_any(),
                })
            }}
        </div>
    }
}

/// The moves by result for the player (alphabetical, so the order gives
/// nothing away), and with `Level::Best` the best move or moves.
fn hint_view(answer: &TablebaseAnswer, level: Level) -> impl IntoView + use<> {
    let groups = [
        (Outcome::Win, "Win"),
        (Outcome::CursedBlessed, "Draw by the 50-move rule"),
        (Outcome::Draw, "Draw"),
        (Outcome::Loss, "Lose"),
        (Outcome::Unknown, "Unknown"),
    ]
    .into_iter()
    .filter_map(|(outcome, words)| {
        let mut sans: Vec<String> = answer
            .moves
            .iter()
            .filter(|m| Outcome::of(m.pos.category.flip()) == outcome)
            .map(|m| m.san.clone())
            .collect();
        sans.sort();
        (!sans.is_empty()).then(|| {
            view! {
                <li class=format!("hint-group {}", outcome.class())>
                    <span class="outcome-icon" aria-hidden="true">{outcome.icon()}</span>
                    " "{words}": "{sans.join(", ")}
                </li>
            }
        })
    })
    .collect_view();
    let best = (level == Level::Best).then(|| {
        let best = best_moves(answer);
        // Beside unknown moves only a known win is surely best: an
        // unknown move may win where the best known one draws.
        let sure = !answer.moves.iter().any(guessed)
            || best.iter().any(|m| m.pos.category.flip().is_win());
        let text = if !sure {
            "Best: not known, the tables cannot judge these moves".to_string()
        } else {
            let sans: Vec<String> = best.iter().map(|m| m.san.clone()).collect();
            format!("Best: {}", sans.join(" or "))
        };
        view! { <p class="hint-best">{text}</p> }
    });
    view! {
        <ul class="hint-groups">{groups}</ul>
        {best}
    }
}
