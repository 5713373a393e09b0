//! Every legal move with its SAN and DTZ, grouped and coloured by what it
//! leads to for the player making it, in the server's order (best first).
//!
//! Each move is a plain link to the position after it, so the list works
//! with JavaScript off; when hydrated the router turns the links into
//! client-side navigation and hovering a move shows it on the board.

use leptos::prelude::*;
use shakmaty::{Chess, Position, Square, uci::UciMove};

use crate::{
    api::MoveInfo,
    components::{board::move_squares, outcome::Outcome},
    position::to_fen,
    source::position_href,
};

/// A move as the list needs it: the API's answer plus where it leads.
#[derive(Clone, Debug, PartialEq)]
pub struct ListedMove {
    pub info: MoveInfo,
    /// The FEN after the move, `None` if the move is not legal here (a stale answer).
    pub fen_after: Option<String>,
    pub squares: Option<(Square, Square)>,
}

/// Pairs each answered move with the position after it, computed locally.
pub fn listed_moves(pos: &Chess, moves: &[MoveInfo]) -> Vec<ListedMove> {
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
            }
        })
        .collect()
}

/// Moves known locally when the tables have no answer: shown as "unknown".
pub fn unknown_moves(pos: &Chess) -> Vec<MoveInfo> {
    pos.legal_moves()
        .into_iter()
        .map(|m| MoveInfo::play(pos, m).0)
        .collect()
}

#[component]
pub fn MoveList(
    moves: Vec<ListedMove>,
    /// Called with a move's squares while the mouse is over it (`None` when it leaves).
    on_hover: Callback<Option<(Square, Square)>>,
    /// Called before the link navigates, to remember the move as the last move.
    on_pick: Callback<(String, (Square, Square))>,
    /// Called with the FEN after a move when the mouse comes over it.
    on_prefetch: Callback<String>,
) -> impl IntoView {
    if moves.is_empty() {
        return view! { <p class="no-moves">"No legal moves."</p> }.into_any();
    }
    // Consecutive runs of the same group, keeping the server's order.
    let mut groups: Vec<(Outcome, Vec<ListedMove>)> = Vec::new();
    for m in moves {
        // The API gives the category of the position after the move: the
        // opponent's view.
        let group = Outcome::of(m.info.pos.category.flip());
        match groups.last_mut() {
            Some((last, list)) if *last == group => list.push(m),
            _ => groups.push((group, vec![m])),
        }
    }
    view! {
        <div class="groups">
            {groups
                .into_iter()
                .map(|(group, moves)| {
                    view! {
                        <section class=format!("group {}", group.class())>
                            <h3>
                                <span class="icon" aria-hidden="true">{group.icon()}</span>
                                " "
                                {group.title()}
                            </h3>
                            <ul>
                                {moves
                                    .into_iter()
                                    .map(|m| view! { <MoveRow m group on_hover on_pick on_prefetch/> })
                                    .collect_view()}
                            </ul>
                        </section>
                    }
                })
                .collect_view()}
        </div>
    }
    .into_any()
}

#[component]
fn MoveRow(
    m: ListedMove,
    group: Outcome,
    on_hover: Callback<Option<(Square, Square)>>,
    on_pick: Callback<(String, (Square, Square))>,
    on_prefetch: Callback<String>,
) -> impl IntoView {
    let info = m.info;
    let href = m
        .fen_after
        .as_ref()
        .map(|fen| position_href(fen))
        .unwrap_or_default();
    let dtz_attr = info.pos.dtz.map(|d| d.to_string()).unwrap_or_default();
    let result = if info.pos.checkmate {
        "Checkmate".to_string()
    } else if info.pos.stalemate {
        "Stalemate".to_string()
    } else if info.pos.insufficient_material {
        "Insufficient material".to_string()
    } else {
        match info.pos.dtz {
            Some(0) | None => String::new(),
            Some(d) => format!("DTZ {}", d.abs()),
        }
    };
    let badge = if info.conversion {
        Some("conversion")
    } else if info.zeroing {
        Some("zeroing")
    } else {
        None
    };
    let squares = m.squares;
    let fen_after = m.fen_after.clone();
    let mover_category = info.pos.category.flip();
    view! {
        <li>
            <a
                class=format!("move {}", Outcome::of(mover_category).class())
                href=href
                data-uci=info.uci.clone()
                data-san=info.san.clone()
                data-dtz=dtz_attr
                data-category=info.pos.category.as_str()
                title=mover_category.as_str()
                on:mouseenter={
                    let fen_after = m.fen_after.clone();
                    move |_| {
                        on_hover.run(squares);
                        if let Some(fen) = fen_after.clone() {
                            on_prefetch.run(fen);
                        }
                    }
                }
                on:mouseleave=move |_| on_hover.run(None)
                on:click=move |_| {
                    on_hover.run(None);
                    if let (Some(fen), Some(squares)) = (fen_after.clone(), squares) {
                        on_pick.run((fen, squares));
                    }
                }
            >
                <span class="icon" aria-hidden="true">{group.icon()}</span>
                <span class="san">{info.san.clone()}</span>
                {badge.map(|b| view! { <span class="badge">{b}</span> })}
                <span class="dtz">{result}</span>
            </a>
        </li>
    }
}
