//! The position editor: place pieces from a palette of both colours, move
//! them by dragging, remove them by clicking or by dragging off the board;
//! clear, side to move, flip, mirror and swap colours.
//!
//! Leaving the editor checks the position with the same rules as the server
//! (`position::parse_fen`) and then asks the tables, so the player learns why
//! a position cannot be explored (two kings, side not to move in check, pawn
//! on the back rank, more pieces than the tables hold) before leaving.

use leptos::{html, prelude::*, task::spawn_local, web_sys::PointerEvent};
use shakmaty::{Color, Piece, Role, Square};

use crate::{
    api::Category,
    components::{
        board::display_square,
        pieces::{piece_class, piece_code, piece_name},
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

/// A piece being dragged: where from, and where the pointer is on the board.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Drag {
    from: Square,
    piece: Piece,
    x: f64,
    y: f64,
    size: f64,
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

    let locate = move |ev: &PointerEvent| -> Option<(f64, f64, f64)> {
        let rect = board_ref.get_untracked()?.get_bounding_client_rect();
        Some((
            f64::from(ev.client_x()) - rect.left(),
            f64::from(ev.client_y()) - rect.top(),
            rect.width() / 8.0,
        ))
    };
    let square_at = move |x: f64, y: f64, size: f64| -> Option<Square> {
        if size <= 0.0 || x < 0.0 || y < 0.0 || x >= size * 8.0 || y >= size * 8.0 {
            return None;
        }
        Some(display_square(
            orientation.get_untracked(),
            (x / size) as u32,
            (y / size) as u32,
        ))
    };

    let on_down = move |ev: PointerEvent| {
        if ev.button() != 0 {
            return;
        }
        let Some((x, y, size)) = locate(&ev) else {
            return;
        };
        let Some(sq) = square_at(x, y, size) else {
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
                    drag.set(Some(Drag {
                        from: sq,
                        piece,
                        x,
                        y,
                        size,
                    }));
                    if let Some(el) = board_ref.get_untracked() {
                        let _ = el.set_pointer_capture(ev.pointer_id());
                    }
                }
            }
        }
    };
    let on_move = move |ev: PointerEvent| {
        if let (Some(mut d), Some((x, y, _))) = (drag.get_untracked(), locate(&ev)) {
            d.x = x;
            d.y = y;
            drag.set(Some(d));
        }
    };
    let on_up = move |ev: PointerEvent| {
        let Some(d) = drag.get_untracked() else {
            return;
        };
        drag.set(None);
        let target = locate(&ev).and_then(|(x, y, size)| square_at(x, y, size));
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
                let piece = move || {
                    board.with(|b| b.piece_at(sq)).map(|p| {
                        let dragged = drag.with(|d| d.is_some_and(|d| d.from == sq));
                        let class = if dragged {
                            format!("{} dragged", piece_class(p))
                        } else {
                            piece_class(p)
                        };
                        view! { <div class=class title=piece_name(p)></div> }
                    })
                };
                let file = (i / 8 == 7).then(|| sq.file().char().to_string());
                let rank = (i % 8 == 0).then(|| sq.rank().char().to_string());
                view! {
                    <div class=class data-square=sq.to_string()>
                        {piece}
                        {file.map(|f| view! { <span class="coord file">{f}</span> })}
                        {rank.map(|r| view! { <span class="coord rank">{r}</span> })}
                    </div>
                }
            })
            .collect_view()
    };
    let ghost = move || {
        drag.get().map(|d| {
            let style = format!(
                "width:{s}px;height:{s}px;transform:translate({x}px,{y}px)",
                s = d.size,
                x = d.x - d.size / 2.0,
                y = d.y - d.size / 2.0
            );
            view! { <div class=format!("{} ghost", piece_class(d.piece)) style=style></div> }
        })
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
                    on:pointermove=on_move
                    on:pointerup=on_up
                    on:pointercancel=move |_| drag.set(None)
                >
                    {squares}
                    {ghost}
                </div>
            </div>
            <div class="palette">
                {palette(Color::Black)}
                <button
                    class="palette-tool hand"
                    class:active=move || tool.get() == Tool::Hand
                    title="Move pieces (drag off the board to remove)"
                    on:click=move |_| tool.set(Tool::Hand)
                >
                    "Move"
                </button>
                <button
                    class="palette-tool erase"
                    class:active=move || tool.get() == Tool::Erase
                    title="Remove pieces"
                    on:click=move |_| tool.set(Tool::Erase)
                >
                    "Remove"
                </button>
            </div>
        </div>
        <div class="editor-controls">
            <fieldset class="turn">
                <legend>"Side to move"</legend>
                <label>
                    <input
                        type="radio"
                        name="turn"
                        value="w"
                        prop:checked=move || turn.get() == Color::White
                        on:change=move |_| turn.set(Color::White)
                    />
                    "White"
                </label>
                <label>
                    <input
                        type="radio"
                        name="turn"
                        value="b"
                        prop:checked=move || turn.get() == Color::Black
                        on:change=move |_| turn.set(Color::Black)
                    />
                    "Black"
                </label>
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
