//! How the tablebase plays in practice, and what the marks mean.

use leptos::prelude::*;

#[component]
pub fn PracticeHelp() -> impl IntoView {
    view! {
        <details class="help practice-help">
            <summary>"How the tablebase plays"</summary>
            <ul>
                <li>
                    "When it wins, it mates as fast as it can: the shortest depth to mate (DTM). \
                     Where depth to mate is not known (more pieces than the DTM tables, or a variant), \
                     it plays the DTZ mainline's move: a capture or pawn move that keeps the win, else the shortest DTZ."
                </li>
                <li>
                    "When it loses, it resists as long as it can: the longest DTM (else the longest DTZ). \
                     Among equally long defences it avoids captures that simplify the position."
                </li>
                <li>
                    "When it draws, it keeps the draw. Where several moves draw, it looks one move further \
                     and plays one that leaves you the most moves that lose."
                </li>
                <li>
                    "Moves that are still equal are chosen by the game's seed (in its link), \
                     so the same link replays the same game."
                </li>
                <li>
                    "The 50-move rule counts: a hundred plies without a capture or pawn move draw the game, \
                     and so do stalemate, threefold repetition and insufficient material."
                </li>
            </ul>
            <p>"Your moves are marked:"</p>
            <ul>
                <li>"✓ best: no move gets a better result sooner (or, when you lose, later)."</li>
                <li>"≈ slower: the same result, further away: a longer mate, or a quicker loss."</li>
                <li>"✗ mistake: a worse result, e.g. a win thrown away, or a win the 50-move rule now takes."</li>
            </ul>
            <p>
                "Hint shows which moves win, draw or lose; asked again it names the best move. \
                 Takeback undoes your last move and the reply. The link in the address bar holds the game: \
                 reload it or share it to go on. Without JavaScript the moves are links under the board."
            </p>
        </details>
    }
}
