//! The button that turns the board round, under the explorer's board and
//! the practice board alike.

use leptos::prelude::*;
use shakmaty::Color;

#[component]
pub fn FlipButton(
    orientation: RwSignal<Color>,
    /// The tooltip, naming the page's shortcut where it has one.
    title: &'static str,
) -> impl IntoView {
    view! {
        <button
            class="flip js-only"
            title=title
            aria-pressed=move || (orientation.get() == Color::Black).to_string()
            on:click=move |_| orientation.update(|o| *o = o.other())
        >
            "⇅ Flip"
        </button>
    }
}
