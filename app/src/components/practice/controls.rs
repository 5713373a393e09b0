//! Takeback, resigning, the way back to the explorer, and the player's
//! moves as plain links: every one of them is a link to the game's next
//! URL, so they work without JavaScript too.

use leptos::prelude::*;

use shakmaty::Position;

use crate::{
    components::practice::Shown, position::to_fen, practice::replay::PracticeGame,
    source::position_href,
};

#[component]
pub fn Controls(shown: Shown) -> impl IntoView {
    move || {
        let (takeback, resign, explorer, moves) = shown.with(|game| {
            let game = game.as_ref().ok()?;
            let playing = game.end().is_none();
            Some((
                game.takeback().map(|s| s.href()),
                playing.then(|| game.setup.resigning().href()),
                position_href(game.setup.variant, &to_fen(game.current())),
                (playing && game.players_turn()).then(|| move_links(game)),
            ))
        })?;
        Some(view! {
            <div class="practice-controls">
                {takeback.map(|href| view! {
                    <a class="takeback button" href=href title="Take back your last move and the reply">"↶ Takeback"</a>
                })}
                {resign.map(|href| view! {
                    <a class="resign button" href=href>"⚑ Resign"</a>
                })}
                <a class="to-explorer button" href=explorer title="This position in the explorer">"Back to the explorer"</a>
            </div>
            {moves.map(|moves| view! {
                <nav class="practice-moves" aria-label="Your moves">
                    <span class="practice-moves-label">"Your moves: "</span>
                    {moves
                        .into_iter()
                        .map(|(san, href)| view! { <a class="practice-move" href=href>{san}</a>" " })
                        .collect_view()}
                </nav>
            })}
        })
    }
}

/// The player's legal moves: each one's SAN and the link that plays it.
fn move_links(game: &PracticeGame) -> Vec<(String, String)> {
    let pos = game.current();
    pos.legal_moves()
        .into_iter()
        .map(|m| {
            let (info, _) = crate::api::MoveInfo::play(pos, m);
            let href = game.with_move(info.uci).href();
            (info.san, href)
        })
        .collect()
}
