//! Every legal move with its SAN and DTZ, grouped and coloured by what it
//! leads to for the player making it, in the server's order (best first).
//!
//! Each move is a plain link to the position after it, so the list works
//! with JavaScript off; when hydrated the router turns the links into
//! client-side navigation and hovering a move shows it on the board.

use leptos::{either::Either, prelude::*};
use shakmaty::{Position, Square, uci::UciMove};

use crate::game::Game;
use crate::{
    api::MoveInfo,
    components::{
        board::arrow::HoveredMove,
        move_list::{
            mate::MoveMate,
            outcome::{Label, Outcome},
        },
    },
    hooks::url_position::use_variant,
    move_squares::move_squares,
    position::to_fen,
    source::position_href,
    variant::Variant,
};

/// A move as the list needs it: the API's answer plus where it leads.
#[derive(Clone, Debug, PartialEq)]
pub struct ListedMove {
    pub info: MoveInfo,
    /// The FEN after the move, `None` if the move is not legal here (a stale answer).
    pub fen_after: Option<String>,
    pub squares: Option<(Square, Square)>,
    /// Why the tables give no answer for an unknown move, when the page can tell.
    pub unknown_because: Option<String>,
    /// The reason is said once above the list (a table not installed):
    /// the row leaves it out (its tooltip keeps it).
    pub why_above: bool,
}

/// Pairs each answered move with the position after it, computed locally.
pub fn listed_moves(pos: &Game, moves: &[MoveInfo]) -> Vec<ListedMove> {
    moves
        .iter()
        .map(|info| {
            let m = info
                .uci
                .parse::<UciMove>()
                .ok()
                .and_then(|uci| uci.to_move(pos).ok());
            let fen_after = m.as_ref().map(|m| {
                let mut after = pos.clone();
                after.play_unchecked(*m);
                to_fen(&after)
            });
            let squares = m.as_ref().and_then(move_squares);
            ListedMove {
                info: info.clone(),
                fen_after,
                squares,
                unknown_because: None,
                why_above: false,
            }
        })
        .collect()
}

/// Moves known locally when the tables have no answer: shown as "unknown".
pub fn unknown_moves(pos: &Game) -> Vec<MoveInfo> {
    pos.legal_moves()
        .into_iter()
        .map(|m| MoveInfo::play(pos, m).0)
        .collect()
}

#[component]
pub fn MoveList(
    moves: Vec<ListedMove>,
    /// Called with the move under the mouse or keyboard focus (`None` when it leaves).
    on_hover: Callback<Option<HoveredMove>>,
    /// Called with a move clicked (plainly: a modified click opens the link
    /// as the browser does), which the page then shows.
    on_pick: Callback<(String, (Square, Square))>,
    /// Called with the FEN after a move when the mouse comes over it.
    on_prefetch: Callback<String>,
) -> impl IntoView {
    if moves.is_empty() {
        return Either::Left(view! { <p class="no-moves">"No legal moves."</p> });
    }
    // Consecutive runs of the same result, keeping the server's order. The
    // API gives the category of the position after the move: the opponent's
    // view, flipped here to the mover's.
    let mut groups: Vec<(Label, Vec<ListedMove>)> = Vec::new();
    for m in moves {
        let label = Label::of(m.info.pos.category.flip());
        match groups.last_mut() {
            Some((last, list)) if *last == label => list.push(m),
            _ => groups.push((label, vec![m])),
        }
    }
    let mut index = 0;
    Either::Right(view! {
        // One tab stop for the whole list; ↑/↓ move between its moves.
        <div class="groups" on:keydown=step_focus>
            {groups
                .into_iter()
                .map(|(label, moves)| {
                    let outcome = Outcome::of(moves[0].info.pos.category.flip());
                    view! {
                        <section class=format!("group {}", outcome.class())>
                            <h3 title=label.meaning()>
                                <span class="icon" aria-hidden="true">{outcome.icon()}</span>
                                " "
                                {label.heading()}
                            </h3>
                            <ul>
                                {moves
                                    .into_iter()
                                    .map(|m| {
                                        let first = index == 0;
                                        index += 1;
                                        view! { <MoveRow m first on_hover on_pick on_prefetch/> }
                                    })
                                    .collect_view()}
                            </ul>
                        </section>
                    }
                })
                .collect_view()}
        </div>
    })
}

/// ↑/↓ move the focus between the list's moves, as in a listbox, so the
/// keyboard reaches the FEN box without tabbing through every move.
/// (Home/End stay the history's: start and end of the line.)
fn step_focus(ev: leptos::ev::KeyboardEvent) {
    use leptos::wasm_bindgen::JsCast;
    let Some(current) = ev
        .target()
        .and_then(|t| t.dyn_into::<leptos::web_sys::Element>().ok())
    else {
        return;
    };
    let Some(list) = current.closest(".groups").ok().flatten() else {
        return;
    };
    let Ok(links) = list.query_selector_all("a.move") else {
        return;
    };
    let links: Vec<leptos::web_sys::HtmlElement> = (0..links.length())
        .filter_map(|i| links.item(i)?.dyn_into().ok())
        .collect();
    let Some(at) = links.iter().position(|l| **l == current) else {
        return;
    };
    let target = match ev.key().as_str() {
        "ArrowDown" => (at + 1).min(links.len() - 1),
        "ArrowUp" => at.saturating_sub(1),
        _ => return,
    };
    ev.prevent_default();
    ev.stop_propagation();
    for (i, link) in links.iter().enumerate() {
        let _ = link.set_attribute("tabindex", if i == target { "0" } else { "-1" });
    }
    let _ = links[target].focus();
}

/// A click the page handles itself; one with a modifier or another button
/// (a new tab, a download) is the browser's, as the router leaves it.
fn plain_click(ev: &leptos::ev::MouseEvent) -> bool {
    ev.button() == 0 && !(ev.ctrl_key() || ev.meta_key() || ev.shift_key() || ev.alt_key())
}

/// The move's kind in a player's words: a capture or promotion changes the
/// ending (what the API calls conversion); a pawn move resets the 50-move
/// counter (zeroing), as a capture does.
fn kind_badges(info: &MoveInfo) -> Vec<(&'static str, &'static str)> {
    let mut badges = Vec::new();
    if info.san.contains('x') {
        badges.push((
            "capture",
            "A capture: the ending changes, and the 50-move counter starts again",
        ));
    }
    if info.san.contains('=') {
        badges.push((
            "promotion",
            "A promotion: the ending changes, and the 50-move counter starts again",
        ));
    }
    if info.zeroing && !info.conversion {
        badges.push(("pawn move", "A pawn move: the 50-move counter starts again"));
    }
    badges
}

/// What the move leads to, as the row shows it: mate, stalemate, or the DTZ.
fn result_text(info: &MoveInfo, variant: Variant) -> String {
    // The flags describe the side to move after the move: the opponent.
    if info.pos.variant_loss {
        return match variant {
            Variant::Atomic => "Explodes the king".to_string(),
            _ => "Last piece gone: wins".to_string(),
        };
    }
    if info.pos.variant_win {
        return match variant {
            Variant::Atomic => "Own king explodes".to_string(),
            _ => "Opponent's last piece gone: loses".to_string(),
        };
    }
    if info.pos.checkmate {
        return "Checkmate".to_string();
    }
    if info.pos.stalemate {
        return "Stalemate".to_string();
    }
    if info.pos.insufficient_material {
        return "Insufficient material".to_string();
    }
    match info.pos.dtz {
        Some(0) | None => String::new(),
        Some(d) => format!("DTZ {}", d.abs()),
    }
}

/// The row's tooltip and accessible name: the move, its result in words,
/// what DTZ means here, and why an unknown move is unknown.
fn description(m: &ListedMove, label: Label) -> String {
    let info = &m.info;
    let mut text = format!("{}: {}", info.san, label.words());
    if let Some(mate) = MoveMate::of_move(info.pos.dtm) {
        text.push_str(&format!(
            ", {} with best play",
            mate.text().to_ascii_lowercase()
        ));
    }
    if let Some(d) = info.pos.dtz.filter(|d| *d != 0) {
        text.push_str(&format!(
            ", DTZ {} ({} plies to the next capture or pawn move with best play)",
            d.abs(),
            d.abs()
        ));
    }
    for (badge, _) in kind_badges(info) {
        text.push_str(&format!(", {badge}"));
    }
    if let Some(why) = &m.unknown_because {
        text.push_str(&format!(". {why}"));
    }
    text
}

#[component]
fn MoveRow(
    m: ListedMove,
    /// The list's first move is its one tab stop.
    first: bool,
    on_hover: Callback<Option<HoveredMove>>,
    on_pick: Callback<(String, (Square, Square))>,
    on_prefetch: Callback<String>,
) -> impl IntoView {
    let variant = use_variant().get_untracked();
    let href = m
        .fen_after
        .as_ref()
        .map(|fen| position_href(variant, fen))
        .unwrap_or_default();
    let mover_category = m.info.pos.category.flip();
    let label = Label::of(mover_category);
    let outcome = Outcome::of(mover_category);
    let description = description(&m, label);
    let cells = row_cells(&m, outcome, variant);
    let hovered = m.squares.map(|squares| HoveredMove { squares, outcome });
    let enter = entering(hovered, m.fen_after.clone(), on_hover, on_prefetch);
    let enter_by_focus = enter.clone();
    // A finger has no hover: pressing a move asks for its answer, a moment
    // before the click that plays it.
    let enter_by_press = enter.clone();
    let info = m.info;
    let dtz_attr = info.pos.dtz.map(|d| d.to_string()).unwrap_or_default();
    let dtm_attr = info.pos.dtm.map(|d| d.to_string()).unwrap_or_default();
    let fen_after = m.fen_after;
    let squares = m.squares;
    view! {
        <li>
            <a
                class=format!("move {}", outcome.class())
                href=href
                tabindex=if first { "0" } else { "-1" }
                data-uci=info.uci.clone()
                data-san=info.san.clone()
                data-dtz=dtz_attr
                data-dtm=dtm_attr
                data-category=info.pos.category.as_str()
                data-result=label.words()
                title=description.clone()
                aria-label=description
                on:mouseenter=move |_| enter()
                on:focus=move |_| enter_by_focus()
                on:pointerdown=move |_| enter_by_press()
                on:mouseleave=move |_| on_hover.run(None)
                on:blur=move |_| on_hover.run(None)
                on:click=move |ev| {
                    let (Some(fen), Some(squares)) = (fen_after.clone(), squares) else {
                        return;
                    };
                    if plain_click(&ev) {
                        ev.prevent_default();
                        on_pick.run((fen, squares));
                    }
                }
            >
                {cells}
            </a>
        </li>
    }
}

/// A move under the mouse, the focus or a finger: the board shows it, and
/// its answer is asked for before the click that plays it.
fn entering(
    hovered: Option<HoveredMove>,
    fen_after: Option<String>,
    on_hover: Callback<Option<HoveredMove>>,
    on_prefetch: Callback<String>,
) -> impl Fn() + Clone + Send + Sync + 'static {
    move || {
        on_hover.run(hovered);
        if let Some(fen) = fen_after.clone() {
            on_prefetch.run(fen);
        }
    }
}

/// What a row shows: the result's icon, the move, its badges, the mate,
/// the DTZ, and why the tables cannot say.
fn row_cells(m: &ListedMove, outcome: Outcome, variant: Variant) -> impl IntoView + use<> {
    let info = &m.info;
    let mate = MoveMate::of_move(info.pos.dtm)
        .map(MoveMate::text)
        .unwrap_or_default();
    view! {
        <span class="icon" aria-hidden="true">{outcome.icon()}</span>
        <span class="san">{info.san.clone()}</span>
        <span class="badges">
            {kind_badges(info)
                .into_iter()
                .map(|(badge, why)| view! { <span class="badge" title=why>{badge}</span> })
                .collect_view()}
        </span>
        <span class="dtm">{mate}</span>
        <span class="dtz">{result_text(info, variant)}</span>
        {m.unknown_because
            .clone()
            .filter(|_| !m.why_above)
            .map(|why| view! { <span class="why">{why}</span> })}
    }
}
