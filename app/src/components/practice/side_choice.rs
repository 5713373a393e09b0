//! The start of a practice game: what the position is worth for each side,
//! and the choice of side (each a link).

use leptos::prelude::*;
use shakmaty::{Color, Position};

use crate::{
    components::{
        board::pieces::color_name,
        practice::{Shown, status::Source},
    },
    position::to_fen,
    practice::{judge::Standing, review::ReviewResource},
    source::position_href,
    text::capitalized,
};

#[component]
pub fn SideChoice(shown: Shown, reviewed: ReviewResource) -> impl IntoView {
    // The start does not change while the side is chosen.
    let game = shown.get_untracked().ok()?;
    let turn = game.current().turn();
    let explorer = position_href(game.setup.variant, &to_fen(game.current()));
    let standing = move |side: Color| {
        let start = reviewed.with(|r| match r {
            Some(Ok(review)) => review.start.as_ref().map(Standing::before),
            _ => None,
        })?;
        Some(if side == turn {
            start
        } else {
            start.other_side()
        })
    };
    // Before a side is taken: what the tables cannot tell about the start.
    let outside = move || {
        reviewed.with(|r| match r {
            Some(Ok(review)) => review.outside.clone(),
            _ => None,
        })
    };
    let choice = move |side: Color| {
        let href = game.setup.playing(side).href();
        let name = capitalized(color_name(side));
        let moves = if side == turn { " (to move)" } else { "" };
        let label = format!("Play {name}{moves}");
        view! {
            <li>
                <a class=format!("play-side {}", color_name(side)) href=href>{label}</a>
                {move || standing(side).map(|s| format!(": {}", s.text()))}
            </li>
        }
    };
    Some(view! {
        <p class="practice-intro">
            "Take a side; the tablebase plays the other, as well as it can: \
             it mates fastest when it wins, resists longest when it loses, \
             and keeps the draw with the most traps."
        </p>
        {move || outside().map(|words| view! { <p class="practice-outside status unknown">{words}</p> })}
        <Source reviewed/>
        <ul class="practice-sides">{choice(Color::White)}{choice(Color::Black)}</ul>
        <a class="to-explorer button" href=explorer>"Back to the explorer"</a>
    })
}
