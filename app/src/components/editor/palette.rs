//! The editor's palettes: a piece of either colour to place, or a tool.

use leptos::{prelude::*, web_sys::PointerEvent};
use shakmaty::{Color, Piece, Role};

use crate::components::board::pieces::{piece_class, piece_code, piece_name};

/// What a click on the board does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tool {
    /// Move pieces by dragging or click-click.
    Hand,
    /// Put this piece down (a tap on the same piece removes it; a drag
    /// still moves the piece dragged).
    Place(Piece),
    /// Remove the piece clicked.
    Erase,
}

/// The pieces of one colour, king first, as on a chess set's box and in
/// table names. A press on one calls `grab` (which selects it and may drag
/// it onto the board); a click, or Enter, selects it.
pub fn pieces(
    tool: RwSignal<Tool>,
    color: Color,
    grab: impl Fn(PointerEvent, Piece) + Copy + Send + Sync + 'static,
) -> impl IntoView {
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
                    aria-pressed=move || (tool.get() == Tool::Place(piece)).to_string()
                    on:pointerdown=move |ev| grab(ev, piece)
                    on:click=move |_| tool.set(Tool::Place(piece))
                >
                    <div class=piece_class(piece)></div>
                </button>
            }
        })
        .collect_view()
}

/// A button that picks a tool other than a piece.
pub fn tool_button(
    tool: RwSignal<Tool>,
    choice: Tool,
    class: &str,
    title: &'static str,
    label: &'static str,
) -> impl IntoView {
    view! {
        <button
            class=format!("palette-tool {class}")
            class:active=move || tool.get() == choice
            title=title
            aria-pressed=move || (tool.get() == choice).to_string()
            on:click=move |_| tool.set(choice)
        >
            {label}
        </button>
    }
}
