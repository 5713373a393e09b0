//! The chess board: 8×8 squares with coordinates, our own piece images, and
//! moving by click-click or drag-and-drop with a promotion choice.
//!
//! Legality comes from shakmaty in the browser, so a move shows on the board
//! at once; the tablebase answer follows from the API. All pointer handling
//! sits on the board element and maps coordinates to squares, so re-rendering
//! a square never loses a drag, and the same code serves mouse, pen and touch.

use leptos::{html, prelude::*, web_sys::PointerEvent};
use shakmaty::{CastlingSide, Chess, Color, File, Move, Piece, Position, Rank, Role, Square};

use crate::components::{
    drag::{BoardPoint, Drag, capture_pointer, drop_piece, follow_pointer, ghost},
    pieces::{piece_class, piece_name, role_name},
};

/// A pawn move waiting for the player to pick the new piece.
#[derive(Clone, Debug, PartialEq)]
struct PendingPromotion {
    to: Square,
    color: Color,
    moves: Vec<Move>,
}

#[component]
pub fn Board(
    /// The position to play from; `None` when the URL's position is illegal
    /// (the board then shows `placement` and takes no moves).
    #[prop(into)]
    pos: Signal<Option<Chess>>,
    /// What the squares show.
    #[prop(into)]
    placement: Signal<shakmaty::Board>,
    #[prop(into)] orientation: Signal<Color>,
    /// The move that led here, highlighted.
    #[prop(into)]
    last_move: Signal<Option<(Square, Square)>>,
    /// A move from the list under the mouse, shown on the board.
    #[prop(into)]
    hover: Signal<Option<(Square, Square)>>,
    /// Called with a legal move the player made on the board.
    on_move: Callback<Move>,
) -> impl IntoView {
    let board_ref = NodeRef::<html::Div>::new();
    let selected = RwSignal::new(None::<Square>);
    let drag = RwSignal::new(None::<Drag>);
    let promotion = RwSignal::new(None::<PendingPromotion>);

    // A new position clears any half-made move.
    Effect::watch(
        move || pos.track(),
        move |_, _, _| {
            selected.set(None);
            drag.set(None);
            promotion.set(None);
        },
        false,
    );

    let targets = Memo::new(move |_| {
        let (Some(pos), Some(from)) = (pos.get(), selected.get()) else {
            return Vec::new();
        };
        pos.legal_moves()
            .iter()
            .filter(|m| m.from() == Some(from))
            .flat_map(ui_targets)
            .collect::<Vec<Square>>()
    });
    let check_square = Memo::new(move |_| {
        pos.get()
            .filter(|p| p.is_check())
            .and_then(|p| p.board().king_of(p.turn()))
    });

    // Plays from→to if legal; asks for the piece first when it promotes.
    let try_move = move |from: Square, to: Square| -> bool {
        let Some(pos) = pos.get_untracked() else {
            return false;
        };
        let moves: Vec<Move> = pos
            .legal_moves()
            .into_iter()
            .filter(|m| m.from() == Some(from) && ui_targets(m).contains(&to))
            .collect();
        match moves.first() {
            None => false,
            Some(m) if m.is_promotion() => {
                promotion.set(Some(PendingPromotion {
                    to,
                    color: pos.turn(),
                    moves,
                }));
                selected.set(None);
                true
            }
            Some(m) => {
                selected.set(None);
                on_move.run(*m);
                true
            }
        }
    };

    let on_down = move |ev: PointerEvent| {
        if ev.button() != 0 || promotion.get_untracked().is_some() {
            return;
        }
        let (Some(pos), Some(at)) = (pos.get_untracked(), BoardPoint::of(board_ref, &ev)) else {
            return;
        };
        let Some(sq) = at.square(orientation.get_untracked()) else {
            return;
        };
        ev.prevent_default();
        if let Some(from) = selected.get_untracked()
            && from != sq
            && try_move(from, sq)
        {
            return;
        }
        match pos.board().piece_at(sq) {
            Some(piece) if piece.color == pos.turn() => {
                selected.set(Some(sq));
                drag.set(Some(Drag::new(sq, piece, at)));
                capture_pointer(board_ref, &ev);
            }
            _ => selected.set(None),
        }
    };
    let on_up = move |ev: PointerEvent| {
        if let Some((d, Some(to))) = drop_piece(drag, board_ref, &ev, orientation.get_untracked())
            && to != d.from
        {
            try_move(d.from, to);
        }
    };
    let on_cancel = move |_: PointerEvent| drag.set(None);

    let choose = move |role: Role| {
        if let Some(p) = promotion.get_untracked() {
            promotion.set(None);
            if let Some(m) = p.moves.into_iter().find(|m| m.promotion() == Some(role)) {
                on_move.run(m);
            }
        }
    };

    let squares = move || {
        let orientation = orientation.get();
        (0..64u32)
            .map(|i| {
                let sq = display_square(orientation, i % 8, i / 8);
                let class = Signal::derive(move || {
                    let mut class = String::from(if sq.is_light() {
                        "square light"
                    } else {
                        "square dark"
                    });
                    if selected.get() == Some(sq) {
                        class.push_str(" selected");
                    }
                    if targets.with(|t| t.contains(&sq)) {
                        class.push_str(if placement.with(|b| b.piece_at(sq).is_some()) {
                            " target capture"
                        } else {
                            " target"
                        });
                    }
                    if last_move.get().is_some_and(|(a, b)| a == sq || b == sq) {
                        class.push_str(" last");
                    }
                    if hover.get().is_some_and(|(a, b)| a == sq || b == sq) {
                        class.push_str(" hover");
                    }
                    if check_square.get() == Some(sq) {
                        class.push_str(" check");
                    }
                    class
                });
                square_view(i, sq, class, placement, drag.into())
            })
            .collect_view()
    };

    // The hovered move from the list as an arrow, so it reads at a glance.
    let arrow = move || {
        hover.get().map(|(from, to)| {
            let o = orientation.get();
            let (x1, y1) = square_center(o, from);
            let (x2, y2) = square_center(o, to);
            let (dx, dy) = (x2 - x1, y2 - y1);
            let len = (dx * dx + dy * dy).sqrt().max(0.01);
            let (ux, uy) = (dx / len, dy / len);
            // Stop the shaft short of the head; the head is a triangle at the target.
            let (bx, by) = (x2 - ux * 0.4, y2 - uy * 0.4);
            let head = format!(
                "{:.3},{:.3} {:.3},{:.3} {:.3},{:.3}",
                x2 - ux * 0.1,
                y2 - uy * 0.1,
                bx - uy * 0.25,
                by + ux * 0.25,
                bx + uy * 0.25,
                by - ux * 0.25
            );
            view! {
                <svg class="arrow" viewBox="0 0 8 8" aria-hidden="true">
                    <line
                        x1=format!("{x1:.3}")
                        y1=format!("{y1:.3}")
                        x2=format!("{bx:.3}")
                        y2=format!("{by:.3}")
                        stroke-width="0.18"
                        stroke-linecap="round"
                    ></line>
                    <polygon points=head></polygon>
                </svg>
            }
        })
    };

    let dialog = move || {
        promotion.get().map(|p| {
            let roles = [Role::Queen, Role::Rook, Role::Bishop, Role::Knight];
            view! {
                <div class="promotion" role="dialog" aria-label="Promote to">
                    <p>"Promote to"</p>
                    <div class="choices">
                        {roles
                            .into_iter()
                            .map(|role| {
                                let piece = Piece { color: p.color, role };
                                view! {
                                    <button
                                        class="choice"
                                        data-role=role.char().to_string()
                                        aria-label=format!("Promote to {}", role_name(role))
                                        title=role_name(role)
                                        on:click=move |_| choose(role)
                                    >
                                        <div class=piece_class(piece)></div>
                                    </button>
                                }
                            })
                            .collect_view()}
                    </div>
                    <button class="cancel" on:click=move |_| promotion.set(None)>
                        "Cancel"
                    </button>
                    <span class="to" hidden>{p.to.to_string()}</span>
                </div>
            }
        })
    };

    view! {
        <div class="board-wrap">
            <div
                class="board"
                class:flipped=move || orientation.get() == Color::Black
                node_ref=board_ref
                on:pointerdown=on_down
                on:pointermove=move |ev| follow_pointer(drag, board_ref, &ev)
                on:pointerup=on_up
                on:pointercancel=on_cancel
            >
                {squares}
                {arrow}
                {ghost(drag.into())}
            </div>
            {dialog}
        </div>
    }
}

/// One square as both boards draw it: its piece (faded while lifted by a
/// drag) and, on the bottom row and left column, its coordinate.
pub fn square_view(
    index: u32,
    sq: Square,
    class: Signal<String>,
    placement: Signal<shakmaty::Board>,
    drag: Signal<Option<Drag>>,
) -> impl IntoView {
    let file = (index / 8 == 7).then(|| sq.file().char().to_string());
    let rank = index
        .is_multiple_of(8)
        .then(|| sq.rank().char().to_string());
    let piece = move || {
        placement.with(|b| b.piece_at(sq)).map(|piece| {
            let class = if Drag::lifts(drag.get(), sq) {
                format!("{} dragged", piece_class(piece))
            } else {
                piece_class(piece)
            };
            view! { <div class=class title=piece_name(piece)></div> }
        })
    };
    view! {
        <div class=class data-square=sq.to_string()>
            {piece}
            {file.map(|f| view! { <span class="coord file">{f}</span> })}
            {rank.map(|r| view! { <span class="coord rank">{r}</span> })}
        </div>
    }
}

/// The square at a display column and row (0,0 = top left) for an orientation.
pub fn display_square(orientation: Color, col: u32, row: u32) -> Square {
    let (file, rank) = match orientation {
        Color::White => (col, 7 - row),
        Color::Black => (7 - col, row),
    };
    Square::from_coords(File::new(file.min(7)), Rank::new(rank.min(7)))
}

/// The centre of a square in board units (0..8 from the top left) for an orientation.
fn square_center(orientation: Color, sq: Square) -> (f64, f64) {
    let (file, rank) = (
        f64::from(u32::from(sq.file())),
        f64::from(u32::from(sq.rank())),
    );
    match orientation {
        Color::White => (file + 0.5, 7.5 - rank),
        Color::Black => (7.5 - file, rank + 0.5),
    }
}

/// The squares a player may drop on for a move: for castling both the
/// king's destination and the rook's square, as most boards allow.
fn ui_targets(m: &Move) -> Vec<Square> {
    match *m {
        Move::Castle { king, rook } => {
            let side = CastlingSide::from_queen_side(rook < king);
            vec![Square::from_coords(side.king_to_file(), king.rank()), rook]
        }
        _ => vec![m.to()],
    }
}

/// The squares of a move as the board highlights them (king's real destination when castling).
pub fn move_squares(m: &Move) -> Option<(Square, Square)> {
    let from = m.from()?;
    let to = ui_targets(m).first().copied().unwrap_or(m.to());
    Some((from, to))
}
