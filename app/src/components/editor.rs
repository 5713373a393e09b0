//! The position editor: place pieces from a palette of both colours, move
//! them by dragging, remove them by clicking or by dragging off the board;
//! clear, side to move, flip, mirror and swap colours.
//!
//! Leaving the editor checks the position with the same rules as the server
//! (`position::parse_fen`) and then asks the tables, so the player learns why
//! a position cannot be explored (two kings, side not to move in check, pawn
//! on the back rank, more pieces than the tables hold) before leaving.

use leptos::{html, prelude::*, task::spawn_local, web_sys::PointerEvent};
use shakmaty::{Color, Piece, Role};

use crate::{
    api::Category,
    components::{
        drag::{BoardPoint, Drag, capture_pointer, drop_piece, follow_pointer, ghost},
        pieces::{piece_class, piece_code, piece_name},
        square::{display_square, square_view},
    },
    position::{parse_fen, piece_count, to_fen},
    source::fetch_answer,
};

/// What a click on the board does.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Tool {
    /// Move pieces by dragging; a click does nothing.
    Hand,
    /// Put this piece down (a click on the same piece removes it).
    Place(Piece),
    /// Remove the piece clicked.
    Erase,
}

#[component]
pub fn Editor(
    /// The board to start from.
    start: shakmaty::Board,
    start_turn: Color,
    orientation: RwSignal<Color>,
    /// Called with the FEN of a valid position that the tables cover.
    on_done: Callback<String>,
    on_cancel: Callback<()>,
    /// Bumped by the page when the player leaves the editor another way
    /// (toolbar button, "e"): treated like Done.
    #[prop(into)]
    leave: Signal<u32>,
) -> impl IntoView {
    let board = RwSignal::new(start);
    let turn = RwSignal::new(start_turn);
    let tool = RwSignal::new(Tool::Hand);
    let drag = RwSignal::new(None::<Drag>);
    let message = RwSignal::new(None::<String>);
    let checking = RwSignal::new(false);
    let board_ref = NodeRef::<html::Div>::new();

    let on_down = move |ev: PointerEvent| {
        if ev.button() != 0 {
            return;
        }
        let Some(at) = BoardPoint::of(board_ref, &ev) else {
            return;
        };
        let Some(sq) = at.square(orientation.get_untracked()) else {
            return;
        };
        ev.prevent_default();
        message.set(None);
        match tool.get_untracked() {
            Tool::Place(piece) => board.update(|b| {
                if b.piece_at(sq) == Some(piece) {
                    b.discard_piece_at(sq);
                } else {
                    b.set_piece_at(sq, piece);
                }
            }),
            Tool::Erase => board.update(|b| b.discard_piece_at(sq)),
            Tool::Hand => {
                if let Some(piece) = board.with_untracked(|b| b.piece_at(sq)) {
                    drag.set(Some(Drag::new(sq, piece, at)));
                    capture_pointer(board_ref, &ev);
                }
            }
        }
    };
    let on_up = move |ev: PointerEvent| {
        let Some((d, target)) = drop_piece(drag, board_ref, &ev, orientation.get_untracked())
        else {
            return;
        };
        board.update(|b| match target {
            Some(to) if to == d.from => {}
            Some(to) => {
                b.discard_piece_at(d.from);
                b.set_piece_at(to, d.piece);
            }
            // Dropped off the board: the piece is removed.
            None => b.discard_piece_at(d.from),
        });
    };

    let fen = move || {
        let turn = match turn.get() {
            Color::White => 'w',
            Color::Black => 'b',
        };
        format!(
            "{} {turn} - - 0 1",
            board.with(|b| b.board_fen().to_string())
        )
    };

    // Leaving the editor (Done, the toolbar button or "e") checks the position.
    let done = move || {
        let text = fen();
        let pos = match parse_fen(&text) {
            Ok(pos) => pos,
            Err(err) => {
                message.set(Some(err.to_string()));
                return;
            }
        };
        let pieces = piece_count(&pos);
        if pieces > 7 {
            message.set(Some(format!(
                "{pieces} pieces: more pieces than the tables hold (at most 7)"
            )));
            return;
        }
        let fen = to_fen(&pos);
        checking.set(true);
        spawn_local(async move {
            let verdict = match fetch_answer(fen.clone()).await {
                Ok(answer)
                    if answer.pos.category == Category::Unknown
                        && !answer.pos.checkmate
                        && !answer.pos.stalemate =>
                {
                    Err(format!(
                        "{pieces} pieces: more pieces than the loaded tables hold"
                    ))
                }
                Ok(_) => Ok(()),
                Err(err) => Err(format!("{pieces} pieces: {}", err.error)),
            };
            checking.set(false);
            match verdict {
                Ok(()) => on_done.run(fen),
                Err(reason) => message.set(Some(reason)),
            }
        });
    };

    Effect::watch(move || leave.get(), move |_, _, _| done(), false);

    let squares = move || {
        let o = orientation.get();
        (0..64u32)
            .map(|i| {
                let sq = display_square(o, i % 8, i / 8);
                let class = if sq.is_light() {
                    "square light"
                } else {
                    "square dark"
                };
                square_view(
                    i,
                    sq,
                    Signal::stored(class.to_string()),
                    board.into(),
                    drag.into(),
                )
            })
            .collect_view()
    };

    let tool_button = move |choice: Tool, class: &str, title: &'static str, label: &'static str| {
        view! {
            <button
                class=format!("palette-tool {class}")
                class:active=move || tool.get() == choice
                title=title
                on:click=move |_| tool.set(choice)
            >
                {label}
            </button>
        }
    };

    let turn_choice = move |color: Color| {
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

    let palette = move |color: Color| {
        // King first, as on a chess set's box and in table names.
        Role::ALL
            .into_iter()
            .rev()
            .map(|role| {
                let piece = Piece { color, role };
                view! {
                    <button
                        class="palette-piece"
                        class:active=move || tool.get() == Tool::Place(piece)
                        data-piece=piece_code(piece)
                        title=piece_name(piece)
                        aria-label=piece_name(piece)
                        on:click=move |_| tool.set(Tool::Place(piece))
                    >
                        <div class=piece_class(piece)></div>
                    </button>
                }
            })
            .collect_view()
    };

    view! {
        <div class="editor-wrap">
        <div class="editor">
            <div class="palette">
                {palette(Color::White)}
            </div>
            <div class="board-wrap">
                <div
                    class="board editing"
                    node_ref=board_ref
                    on:pointerdown=on_down
                    on:pointermove=move |ev| follow_pointer(drag, board_ref, &ev)
                    on:pointerup=on_up
                    on:pointercancel=move |_| drag.set(None)
                >
                    {squares}
                    {ghost(drag.into())}
                </div>
            </div>
            <div class="palette">
                {palette(Color::Black)}
                {tool_button(Tool::Hand, "hand", "Move pieces (drag off the board to remove)", "Move")}
                {tool_button(Tool::Erase, "erase", "Remove pieces", "Remove")}
            </div>
        </div>
        <div class="editor-controls">
            <fieldset class="turn">
                <legend>"Side to move"</legend>
                {turn_choice(Color::White)}
                {turn_choice(Color::Black)}
            </fieldset>
            <div class="buttons">
                <button class="clear" on:click=move |_| board.set(shakmaty::Board::empty())>
                    "Clear board"
                </button>
                <button class="flip" on:click=move |_| orientation.update(|o| *o = o.other())>
                    "Flip"
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
            <p class="editor-fen">{fen}</p>
            {move || message.get().map(|m| view! { <p class="editor-error" role="alert">{m}</p> })}
            <div class="buttons">
                <button class="done primary" on:click=move |_| done() disabled=move || checking.get()>
                    {move || if checking.get() { "Checking…" } else { "Done" }}
                </button>
                <button class="cancel" on:click=move |_| on_cancel.run(())>
                    "Cancel"
                </button>
            </div>
        </div>
        </div>
    }
}
