//! The board the player moves on, and all that is drawn on and beside it.
//!
//! The chess board: 8×8 squares with coordinates, our own piece images, and
//! moving by click-click or drag-and-drop with a promotion choice.
//!
//! Legality comes from shakmaty in the browser, so a move shows on the board
//! at once; the tablebase answer follows from the API. All pointer handling
//! sits on the board element and maps coordinates to squares, so re-rendering
//! a square never loses a drag, and the same code serves mouse, pen and touch.

pub mod arrow;
pub mod clock;
pub mod drag;
pub mod flip;
pub mod geometry;
pub mod keys;
pub mod pieces;
pub mod promotion;
pub mod square;

use leptos::{html, prelude::*, web_sys::PointerEvent};
use shakmaty::{Color, Move, Piece, Position, Role, Square};

use arrow::{HoveredMove, arrow};
use drag::{Drag, capture_pointer, drop_piece, follow_pointer, ghost, pressed_square};
use geometry::display_square;
use keys::{board_label, on_board_keydown};
use promotion::PendingPromotion;
use square::{square_shade, square_view};

use crate::game::Game;
use crate::{
    components::{
        part::{Loader, Part},
        split_points,
    },
    hooks::answers::Answers,
    move_squares::ui_targets,
    position::to_fen,
};

#[component]
pub fn Board(
    /// The position to play from; `None` when the URL's position is illegal
    /// (the board then shows `placement` and takes no moves).
    #[prop(into)]
    pos: Signal<Option<Game>>,
    /// What the squares show.
    #[prop(into)]
    placement: Signal<shakmaty::Board>,
    #[prop(into)] orientation: Signal<Color>,
    /// The move that led here, highlighted.
    #[prop(into)]
    last_move: Signal<Option<(Square, Square)>>,
    /// A move from the list under the mouse, shown on the board.
    #[prop(into)]
    hover: Signal<Option<HoveredMove>>,
    /// Called with a legal move the player made on the board.
    on_move: Callback<Move>,
    /// The answers seen so far, to show each promotion choice's result.
    answers: Answers,
) -> impl IntoView {
    let start_cursor = pos
        .with_untracked(|p| p.as_ref().and_then(|p| p.board().king_of(p.turn())))
        .unwrap_or(Square::A1);
    let cursor = RwSignal::new(start_cursor);
    let play = Play {
        pos,
        orientation,
        node: NodeRef::new(),
        selected: RwSignal::new(None),
        drag: RwSignal::new(None),
        promotion: RwSignal::new(None),
        on_move,
    };
    // A new position clears any half-made move.
    Effect::watch(move || pos.track(), move |_, _, _| play.clear(), false);
    let marks = Marks::new(play, placement, last_move, hover);
    view! {
        <div class="board-wrap">
            <div
                class="board"
                class:flipped=move || orientation.get() == Color::Black
                role="group"
                aria-label=move || board_label(orientation.get(), "Enter picks a piece and plays it")
                on:keydown=move |ev| {
                    if play.promotion.get_untracked().is_none() {
                        on_board_keydown(&ev, cursor, orientation.get_untracked(), play.node, |sq| { play.activate(sq); });
                    }
                }
                node_ref=play.node
                on:pointerdown=move |ev| play.press(ev)
                on:pointermove=move |ev| follow_pointer(play.drag, play.node, &ev)
                on:pointerup=move |ev| play.release(ev)
                on:pointercancel=move |_: PointerEvent| play.drag.set(None)
            >
                {play.squares(marks, placement, cursor)}
                {arrow(orientation, hover)}
                {ghost(play.drag.into())}
            </div>
            {play.promotion_choice(answers)}
        </div>
    }
}

/// A move in the making on the board, and where it goes when made.
#[derive(Clone, Copy)]
struct Play {
    pos: Signal<Option<Game>>,
    orientation: Signal<Color>,
    node: NodeRef<html::Div>,
    /// The square whose piece moves next (a click on a target plays it).
    selected: RwSignal<Option<Square>>,
    drag: RwSignal<Option<Drag>>,
    promotion: RwSignal<Option<PendingPromotion>>,
    on_move: Callback<Move>,
}

impl Play {
    /// The 64 squares in the orientation's order.
    fn squares(
        self,
        marks: Marks,
        placement: Signal<shakmaty::Board>,
        cursor: RwSignal<Square>,
    ) -> impl IntoView {
        move || {
            let orientation = self.orientation.get();
            (0..64u32)
                .map(|i| {
                    let sq = display_square(orientation, i % 8, i / 8);
                    // A memo: a move changes the marks of a few squares, and
                    // only their class and label are written again.
                    let class = Memo::new(move |_| marks.class(sq));
                    square_view(i, sq, class.into(), placement, self.drag.into(), cursor)
                })
                .collect_view()
        }
    }

    /// The choice of piece while a pawn waits to promote, each piece with
    /// its result from the answers seen. Its code comes on first use
    /// (split_points): most visits never promote.
    fn promotion_choice(self, answers: Answers) -> impl IntoView {
        let promoting = Memo::new(move |_| self.promotion.with(Option::is_some));
        move || {
            promoting.get().then(|| {
                let pos = self.pos;
                let answered = Signal::derive(move || {
                    pos.with(|p| p.as_ref().and_then(|p| answers.get(&to_fen(p))))
                        .map(|a| a.moves)
                        .unwrap_or_default()
                });
                let choose = Callback::new(move |role| self.choose(role));
                let load = Loader::new(move || {
                    split_points::promotion(self.promotion, self.orientation, answered, choose)
                });
                view! { <Part what="The promotion choice" load/> }
            })
        }
    }

    fn clear(self) {
        self.selected.set(None);
        self.drag.set(None);
        self.promotion.set(None);
    }

    /// Plays from→to if legal; asks for the piece first when it promotes.
    fn try_move(self, from: Square, to: Square) -> bool {
        let Some(pos) = self.pos.get_untracked() else {
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
                self.promotion.set(Some(PendingPromotion {
                    to,
                    color: pos.turn(),
                    moves,
                }));
                self.selected.set(None);
                true
            }
            Some(m) => {
                self.selected.set(None);
                self.on_move.run(*m);
                true
            }
        }
    }

    /// A click or Enter on a square: the second half of a click-click
    /// move, or a piece of the side to move selected (returned, so a press
    /// can pick it up to drag).
    fn activate(self, sq: Square) -> Option<Piece> {
        let pos = self.pos.get_untracked()?;
        if let Some(from) = self.selected.get_untracked()
            && from != sq
            && self.try_move(from, sq)
        {
            return None;
        }
        match pos.board().piece_at(sq) {
            Some(piece) if piece.color == pos.turn() => {
                self.selected.set(Some(sq));
                Some(piece)
            }
            _ => {
                self.selected.set(None);
                None
            }
        }
    }

    /// A press: as a click (`activate`), and a piece selected is picked up
    /// to drag if the pointer moves.
    fn press(self, ev: PointerEvent) {
        if self.promotion.get_untracked().is_some() {
            return;
        }
        let Some((at, sq)) = pressed_square(self.node, &ev, self.orientation.get_untracked())
        else {
            return;
        };
        ev.prevent_default();
        if let Some(piece) = self.activate(sq) {
            self.drag.set(Some(Drag::new(sq, piece, at)));
            capture_pointer(self.node, &ev);
        }
    }

    /// A release: a dragged piece dropped on another square moves there.
    fn release(self, ev: PointerEvent) {
        let orientation = self.orientation.get_untracked();
        if let Some((d, Some(to))) = drop_piece(self.drag, self.node, &ev, orientation)
            && to != d.from
        {
            self.try_move(d.from, to);
        }
    }

    /// The piece picked in the promotion dialog.
    fn choose(self, role: Role) {
        if let Some(p) = self.promotion.get_untracked() {
            self.promotion.set(None);
            if let Some(m) = p.moves.into_iter().find(|m| m.promotion() == Some(role)) {
                self.on_move.run(m);
            }
        }
    }
}

/// What the squares are marked with besides their shade.
#[derive(Clone, Copy)]
struct Marks {
    selected: RwSignal<Option<Square>>,
    /// Where the selected piece may go.
    targets: Memo<Vec<Square>>,
    placement: Signal<shakmaty::Board>,
    last_move: Signal<Option<(Square, Square)>>,
    hover: Signal<Option<HoveredMove>>,
    /// The king in check.
    check: Memo<Option<Square>>,
}

impl Marks {
    fn new(
        play: Play,
        placement: Signal<shakmaty::Board>,
        last_move: Signal<Option<(Square, Square)>>,
        hover: Signal<Option<HoveredMove>>,
    ) -> Self {
        let Play { pos, selected, .. } = play;
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
        let check = Memo::new(move |_| {
            pos.get()
                .filter(|p| p.is_check())
                .and_then(|p| p.board().king_of(p.turn()))
        });
        Marks {
            selected,
            targets,
            placement,
            last_move,
            hover,
            check,
        }
    }

    /// The square's classes, e.g. `"square dark target capture last"`.
    fn class(self, sq: Square) -> String {
        let on =
            |squares: Option<(Square, Square)>| squares.is_some_and(|(a, b)| a == sq || b == sq);
        let mut class = String::from(square_shade(sq));
        if self.selected.get() == Some(sq) {
            class.push_str(" selected");
        }
        if self.targets.with(|t| t.contains(&sq)) {
            class.push_str(if self.placement.with(|b| b.piece_at(sq).is_some()) {
                " target capture"
            } else {
                " target"
            });
        }
        if on(self.last_move.get()) {
            class.push_str(" last");
        }
        if on(self.hover.get().map(|h| h.squares)) {
            class.push_str(" hover");
        }
        if self.check.get() == Some(sq) {
            class.push_str(" check");
        }
        class
    }
}
