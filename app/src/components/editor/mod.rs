//! Choosing the position to explore: the editor, the FEN box, the rules.
//!
//! The position editor: place pieces from a palette of both colours (a tap
//! on the board, or a drag from the palette), move them by dragging or
//! click-click, remove them by clicking or by dragging off the board (or
//! from the keyboard: arrows and Enter); clear, side to move, castling
//! rights, en passant, the clocks, mirror and swap colours.
//!
//! The page analyses the position as it is set up (`live`); leaving the
//! editor checks it first (`check`), so the player learns why a position
//! cannot be explored before leaving. Esc cancels.

mod check;
pub mod fen_box;
mod palette;
mod rights;
pub mod variant_switch;

use leptos::{ev, html, prelude::*, task::spawn_local, web_sys::PointerEvent};
use shakmaty::{Color, Piece, Square, fen::Fen};

use crate::components::board::{
    drag::{BoardPoint, Drag, capture_pointer, drop_piece, follow_pointer, ghost, pressed_square},
    geometry::display_square,
    keys::{board_label, focus_square, on_board_keydown},
    square::{square_shade, square_view},
};
use check::{check_rules, check_tables};
use palette::{Tool, tool_button};
use rights::Rights;

use crate::{
    hooks::{mode::Mode, url_position::use_variant},
    variant::Variant,
};

/// What Enter does on the editor's board, for its name to screen readers.
const EDITOR_ENTER: &str = "Enter places the selected piece (a second Enter on it removes it), \
    or with Move picks a piece up and puts it down, or with Remove removes it";

/// The position being set up, and what the pointer is doing to it.
#[derive(Clone, Copy)]
struct Setup {
    board: RwSignal<shakmaty::Board>,
    turn: RwSignal<Color>,
    /// Castling rights, en passant and the clocks.
    rights: Rights,
    tool: RwSignal<Tool>,
    /// The square with the keyboard cursor, and the piece the keyboard
    /// picked up to move (the hand tool's click-click).
    cursor: RwSignal<Square>,
    lifted: RwSignal<Option<Square>>,
    drag: RwSignal<Option<Drag>>,
    /// Whether the drag on brings a new piece from the tray.
    tray: RwSignal<bool>,
    orientation: RwSignal<Color>,
    node: NodeRef<html::Div>,
    /// The rules the position is checked under.
    variant: Variant,
    /// Why the position cannot be explored, until the next change.
    message: RwSignal<Option<String>>,
}

#[component]
pub fn Editor(
    /// The FEN to start from (the position on show; all its fields are kept).
    start_fen: String,
    /// Set to the FEN as it is set up, for the live analysis.
    live: RwSignal<Option<String>>,
    orientation: RwSignal<Color>,
    /// Called with the FEN of a valid position that the tables cover.
    on_done: Callback<String>,
    on_cancel: Callback<()>,
    /// The page's mode: `Leaving` asks the editor to leave as Done does.
    mode: RwSignal<Mode>,
) -> impl IntoView {
    let start = Fen::from_ascii(start_fen.replace('_', " ").trim().as_bytes())
        .map(Fen::into_setup)
        // A URL that is no FEN at all: start from an empty board.
        .unwrap_or_else(|_| shakmaty::Setup::empty());
    let setup = Setup {
        board: RwSignal::new(start.board.clone()),
        turn: RwSignal::new(start.turn),
        rights: Rights::new(&start),
        tool: RwSignal::new(Tool::Hand),
        cursor: RwSignal::new(Square::A1),
        lifted: RwSignal::new(None),
        drag: RwSignal::new(None),
        tray: RwSignal::new(false),
        orientation,
        node: NodeRef::new(),
        message: RwSignal::new(None),
        variant: use_variant().get_untracked(),
    };
    let checking = RwSignal::new(false);
    let message = setup.message;

    let done = leave(setup, checking, mode, on_done);
    Effect::new(move |_| live.set(Some(setup.fen())));
    cancel_on_escape(on_cancel);
    // Another tool drops the piece the hand had lifted (click-click).
    Effect::watch(
        move || setup.tool.get(),
        move |_, _, _| setup.lifted.set(None),
        false,
    );
    // Opened by "e" or the toolbar button, the focus moves into the editor,
    // on the board's cursor square (its one tab stop).
    Effect::new(move |_| {
        if setup.node.get().is_some() {
            focus_square(setup.node, setup.cursor.get_untracked());
        }
    });
    Effect::watch(
        move || mode.get(),
        move |mode, _, _| {
            if *mode == Mode::Leaving {
                done();
            }
        },
        false,
    );

    view! {
        <div class="editor-wrap">
        {setup.workbench()}
        <div class="editor-controls">
            {setup.turn_choice()}
            {setup.rights.controls(setup.board, setup.turn)}
            {setup.board_buttons()}
            <p class="editor-fen">{move || setup.fen()}</p>
            {move || message.get().map(|m| view! { <p class="editor-error" role="alert">{m}</p> })}
            <div class="buttons">
                <button class="done primary" on:click=move |_| done() disabled=move || checking.get()>
                    {move || if checking.get() { "Checking…" } else { "Done" }}
                </button>
                <button class="cancel" title="Leave the editor without changes (Esc)" on:click=move |_| on_cancel.run(())>
                    "Cancel"
                </button>
            </div>
        </div>
        </div>
    }
}

/// Esc cancels wherever the focus is, for as long as the editor is open.
fn cancel_on_escape(on_cancel: Callback<()>) {
    let esc = window_event_listener(ev::keydown, move |ev| {
        if ev.key() == "Escape" {
            ev.prevent_default();
            on_cancel.run(());
        }
    });
    on_cleanup(move || esc.remove());
}

/// Leaving the editor (Done, the toolbar button or "e"): checks the
/// position, then hands its FEN to `on_done` or shows why it cannot be
/// explored.
fn leave(
    setup: Setup,
    checking: RwSignal<bool>,
    mode: RwSignal<Mode>,
    on_done: Callback<String>,
) -> impl Fn() + Copy + Send + Sync + 'static {
    // A refusal keeps the editor open, ready to be asked to leave again.
    let refuse = move |reason: String| {
        setup.message.set(Some(reason));
        if mode.get_untracked() == Mode::Leaving {
            mode.set(Mode::Editing);
        }
    };
    move || {
        let candidate = match check_rules(setup.variant, &setup.fen()) {
            Ok(candidate) => candidate,
            Err(reason) => return refuse(reason),
        };
        checking.set(true);
        spawn_local(async move {
            let verdict = check_tables(setup.variant, &candidate).await;
            checking.set(false);
            match verdict {
                Ok(()) => on_done.run(candidate.fen),
                Err(reason) => refuse(reason),
            }
        });
    }
}

impl Setup {
    /// The FEN of the position as set up. Castling rights and an en
    /// passant square the board no longer allows are left out.
    fn fen(self) -> String {
        let turn = self.turn.get();
        let turn_char = match turn {
            Color::White => 'w',
            Color::Black => 'b',
        };
        self.board.with(|b| {
            format!(
                "{} {turn_char} {}",
                b.board_fen(),
                self.rights.fen_fields(b, turn)
            )
        })
    }

    /// A tap or Enter on a square: the tool acts on it. With the hand, a
    /// first one lifts the piece and a second one puts it down (click-click).
    fn act(self, sq: Square) {
        self.message.set(None);
        match self.tool.get_untracked() {
            Tool::Place(piece) => self.board.update(|b| {
                if b.piece_at(sq) == Some(piece) {
                    b.discard_piece_at(sq);
                } else {
                    b.set_piece_at(sq, piece);
                }
            }),
            Tool::Erase => self.board.update(|b| b.discard_piece_at(sq)),
            Tool::Hand => match self.lifted.get_untracked() {
                Some(from) => {
                    self.lifted.set(None);
                    self.board.update(|b| {
                        if let Some(piece) = b.remove_piece_at(from) {
                            b.set_piece_at(sq, piece);
                        }
                    });
                }
                None => {
                    if self.board.with_untracked(|b| b.piece_at(sq).is_some()) {
                        self.lifted.set(Some(sq));
                    }
                }
            },
        }
    }

    /// A press on the board. A press on a piece may start a drag, whatever
    /// the tool (a drag moves the piece pressed; a tap is the tool's, see
    /// `release`); a press on an empty square places the selected piece, and
    /// with a piece lifted (click-click) it puts that piece down.
    fn press(self, ev: PointerEvent) {
        let Some((at, sq)) = pressed_square(self.node, &ev, self.orientation.get_untracked())
        else {
            return;
        };
        ev.prevent_default();
        self.cursor.set(sq);
        let tool = self.tool.get_untracked();
        let piece = self.board.with_untracked(|b| b.piece_at(sq));
        let lifted = self.lifted.get_untracked().is_some();
        match (tool, piece) {
            (Tool::Erase, _) | (Tool::Place(_), None) => self.act(sq),
            (Tool::Hand, _) if lifted => self.act(sq),
            (_, Some(piece)) => {
                self.message.set(None);
                self.tray.set(false);
                self.drag.set(Some(Drag::new(sq, piece, at)));
                capture_pointer(self.node, &ev);
            }
            (Tool::Hand, None) => {}
        }
    }

    /// A press on a tray piece: selects it, and starts a drag that places
    /// it where it is dropped on the board. The board captures the pointer,
    /// so the drag's moves and its release reach the board's handlers.
    fn grab(self, ev: PointerEvent, piece: Piece) {
        if ev.button() != 0 {
            return;
        }
        self.tool.set(Tool::Place(piece));
        self.lifted.set(None);
        let Some(at) = BoardPoint::of(self.node, &ev) else {
            return;
        };
        ev.prevent_default();
        self.tray.set(true);
        // The square is unused: `tray` says the piece is new.
        self.drag.set(Some(Drag::new(Square::A1, piece, at)));
        capture_pointer(self.node, &ev);
    }

    /// A release: a dragged piece lands (a tray piece is placed, a board
    /// piece moves, or leaves the board if dropped off it); a press that did
    /// not move is a tap, which the tool acts on.
    fn release(self, ev: PointerEvent) {
        let Some((d, target)) =
            drop_piece(self.drag, self.node, &ev, self.orientation.get_untracked())
        else {
            return;
        };
        let from_tray = self.tray.get_untracked();
        self.tray.set(false);
        if !d.moved() {
            if !from_tray {
                self.act(d.from);
            }
            return;
        }
        self.message.set(None);
        self.board.update(|b| match target {
            Some(to) if !from_tray && to == d.from => {}
            Some(to) => {
                if !from_tray {
                    b.discard_piece_at(d.from);
                }
                b.set_piece_at(to, d.piece);
            }
            None if from_tray => {}
            None => b.discard_piece_at(d.from),
        });
    }

    /// The drag as the squares see it: a piece from the tray lifts none of them.
    fn board_drag(self) -> Signal<Option<Drag>> {
        Signal::derive(move || self.drag.get().filter(|_| !self.tray.get()))
    }

    fn board_view(self) -> impl IntoView {
        let squares = move || {
            let o = self.orientation.get();
            (0..64u32)
                .map(|i| {
                    let sq = display_square(o, i % 8, i / 8);
                    let lifted = self.lifted;
                    let class = Signal::derive(move || {
                        if lifted.get() == Some(sq) {
                            format!("{} selected", square_shade(sq))
                        } else {
                            square_shade(sq).to_string()
                        }
                    });
                    square_view(
                        i,
                        sq,
                        class,
                        self.board.into(),
                        self.board_drag(),
                        self.cursor,
                    )
                })
                .collect_view()
        };
        view! {
            <div class="board-wrap">
                <div
                    class="board editing"
                    role="group"
                    aria-label=move || board_label(self.orientation.get(), EDITOR_ENTER)
                    on:keydown=move |ev| on_board_keydown(&ev, self.cursor, self.orientation.get_untracked(), self.node, |sq| self.act(sq))
                    node_ref=self.node
                    on:pointerdown=move |ev| self.press(ev)
                    on:pointermove=move |ev| follow_pointer(self.drag, self.node, &ev)
                    on:pointerup=move |ev| self.release(ev)
                    on:pointercancel=move |_| {
                        self.drag.set(None);
                        self.tray.set(false);
                    }
                >
                    {squares}
                    {ghost(self.drag.into())}
                </div>
            </div>
        }
    }

    /// The board between the two palettes, White's pieces on one side and
    /// Black's with the tools on the other, as a player reaches for them.
    fn workbench(self) -> impl IntoView {
        view! {
            <div class="editor">
                <div class="palette">
                    {palette::pieces(self.tool, Color::White, move |ev, piece| self.grab(ev, piece))}
                </div>
                {self.board_view()}
                <div class="palette">
                    {palette::pieces(self.tool, Color::Black, move |ev, piece| self.grab(ev, piece))}
                    {tool_button(self.tool, Tool::Hand, "hand", "Move pieces (drag off the board to remove)", "Move")}
                    {tool_button(self.tool, Tool::Erase, "erase", "Remove pieces", "Remove")}
                </div>
            </div>
        }
    }

    fn turn_choice(self) -> impl IntoView {
        let turn = self.turn;
        let choice = move |color: Color| {
            let (value, label) = match color {
                Color::White => ("w", "White"),
                Color::Black => ("b", "Black"),
            };
            view! {
                <label>
                    <input
                        type="radio"
                        name="turn"
                        value=value
                        prop:checked=move || turn.get() == color
                        on:change=move |_| turn.set(color)
                    />
                    {label}
                </label>
            }
        };
        view! {
            <fieldset class="turn">
                <legend>"Side to move"</legend>
                {choice(Color::White)}
                {choice(Color::Black)}
            </fieldset>
        }
    }

    /// Clear, flip, mirror and swap colours.
    fn board_buttons(self) -> impl IntoView {
        let Setup { board, turn, .. } = self;
        view! {
            <div class="buttons">
                <button class="clear" on:click=move |_| board.set(shakmaty::Board::empty())>
                    "Clear board"
                </button>
                <button class="mirror" title="Mirror left to right" on:click=move |_| board.update(|b| b.flip_horizontal())>
                    "Mirror"
                </button>
                <button
                    class="swap"
                    title="Swap colours: the same position with the other side"
                    on:click=move |_| {
                        board.update(|b| {
                            b.flip_vertical();
                            b.swap_colors();
                        });
                        turn.update(|t| *t = t.other());
                    }
                >
                    "Swap colours"
                </button>
            </div>
        }
    }
}
