//! The page's one help text: what to do here, what DTZ and DTM are, and
//! why the moves come in the order they do. Short, and folded away once read.

use leptos::prelude::*;

use crate::components::part::server_html;

/// The help as the server writes it. It has no behaviour but the fold the
/// browser gives `<details>`, so the browser keeps the server's markup and
/// its WASM carries none of the text.
#[component]
pub fn Help() -> impl IntoView {
    view! { <section class="help" inner_html=server_html(|| text().into_any())></section> }
}

fn text() -> impl IntoView {
    view! {
            // The board, the editor and the keys need the page's script;
            // without it the moves are links and the FEN box is a form.
            <p class="intro js-only">
                "Every legal move of an endgame with its result. Play a move on the board or pick one from the list; set up any position with the editor (e) or paste a FEN below."
            </p>
            <noscript>
                <p class="intro">
                    "Every legal move of an endgame with its result. Each move in the list is a link to the position after it; paste a FEN below to open any position, or play the position out against the tablebase (\"Play this out\" under the board). The board, the editor and the keys need JavaScript."
                </p>
            </noscript>
            <details>
                <summary>"How to read the moves"</summary>
                <dl>
                    <dt>"Results"</dt>
                    <dd>
                        "Each move shows what it leads to for the player making it, with best play by both sides: "
                        <span class="win">"▲ win"</span>", "
                        <span class="cursed">"◆ a win or loss the 50-move rule turns into a draw"</span>", "
                        <span class="draw">"● draw"</span>", "
                        <span class="loss">"▼ loss"</span>"."
                    </dd>
                    <dt>"DTZ"</dt>
                    <dd>
                        "Distance to zeroing: how many plies (half-moves) until the next capture or pawn move, with best play. That is what the 50-move rule counts: after 100 plies without a capture or pawn move, either side may claim a draw. A win whose DTZ plus the plies already played (the halfmove clock under the board) passes 100 is a "
                        <em>"cursed win"</em>
                        "; the loss on the other side is a "
                        <em>"blessed loss"</em>"."
                    </dd>
                    <dt>"Mate in N"</dt>
                    <dd>
                        "Depth to mate (DTM): how many moves until checkmate with best play, the winner mating as fast as possible and the loser holding out as long as possible. \"Mate in 33\" counts the winner's moves. DTZ and DTM answer different questions: DTZ says how soon the next capture or pawn move comes, which is what the 50-move rule needs; DTM says how soon the game ends. Playing by DTZ wins, but often by a roundabout way (it rushes to the next capture); playing by DTM gives the shortest mate, which may take longer than the 50-move rule allows, so a \"mate in N\" can stand beside a cursed win. Shown where depth-to-mate tables are installed (up to 4 pieces here unless more were added)."
                    </dd>
                    <dt class="js-only">"Keys"</dt>
                    <dd class="js-only keys">
                        <kbd>"Space"</kbd>" plays the best move (the first of the list); "
                        <kbd>"←"</kbd>" and "<kbd>"→"</kbd>" step back and forward through the line on show (Show line, Fastest mate) or the moves played; "
                        <kbd>"↑"</kbd>" or "<kbd>"Home"</kbd>" go to its start, "
                        <kbd>"↓"</kbd>" or "<kbd>"End"</kbd>" to its end; "
                        <kbd>"f"</kbd>" flips the board; "
                        <kbd>"e"</kbd>" opens or closes the editor. On the board, the arrow keys move between squares and "
                        <kbd>"Enter"</kbd>" picks a piece and plays it; "
                        <kbd>"Esc"</kbd>" cancels a promotion or leaves the editor."
                    </dd>
                    <dt>"Play this out"</dt>
                    <dd>
                        "Under the board: play the position against the tablebase from either side. It defends as well as it can, and every move of yours is marked best, slower or mistake, with the result before and after. The game is in the link, so it can be reloaded or shared."
                    </dd>
                    <dt>"Review a game"</dt>
                    <dd>
                        "On the "<a href="/review">"review page"</a>", paste or drop a game's PGN: from the first position the tables cover, every move of both sides is marked best, slower or mistake, with the moments the result changed hands, a chart and the annotated PGN to download."
                    </dd>
                    <dt>"maybe"</dt>
                    <dd>
                        "The tables store some distances rounded by one ply to save space. When that rounding decides whether a win comes in time for the 50-move rule, the result reads \"maybe\"."
                    </dd>
                    <dt>"capture, promotion, pawn move"</dt>
                    <dd>
                        "A capture or promotion changes the ending (the tables call it a conversion); a capture or pawn move starts the 50-move count again (zeroing). After such a move the DTZ counts in the new ending."
                    </dd>
                    <dt>"Why this order"</dt>
                    <dd>
                        "Best first: checkmates first; then, where depth to mate is known, the fastest mate (or, losing, the longest resistance); among moves still equal, captures and promotions that keep the win come first, as they reach a smaller ending at once; then pawn moves; then the shortest DTZ. Without depth to mate, in KQ against KR, Kxb2 with DTZ 16 ranks above Qe1+ with DTZ 2: Qe1+ only reaches the next capture sooner, while Kxb2 is that capture and leaves a queen against a lone king. With it, the move that mates soonest leads, even when another reaches a capture sooner: so the first move is the fastest mate, and the DTZ mainline (which follows DTZ) can differ from it. Among losing moves, the longest resistance comes first. This is lichess's order."
                    </dd>
                </dl>
            </details>
    }
}
