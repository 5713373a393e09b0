//! The FEN box: shows the current position's FEN and loads a pasted one,
//! and links the position on lichess's analysis board.
//!
//! Without JavaScript it is a plain GET form to `/?fen=` (with the rules on
//! show, as the move links carry them); hydrated, it checks
//! the FEN in the browser first, and an invalid one gets an inline message
//! while the board keeps what it had.

use leptos::{ev::SubmitEvent, html, prelude::*};

use crate::{
    game::parse_game_fen, hooks::url_position::use_variant, position::to_fen, variant::Variant,
};

/// The position on lichess's analysis board: the rules' name in the path
/// (none for standard chess), the FEN with underscores for spaces.
pub fn lichess_analysis(variant: Variant, fen: &str) -> String {
    let fen = fen.trim().replace(' ', "_");
    match variant {
        Variant::Standard => format!("https://lichess.org/analysis/{fen}"),
        other => format!("https://lichess.org/analysis/{}/{fen}", other.as_str()),
    }
}

#[component]
pub fn FenBox(
    /// The FEN of the position on the board.
    #[prop(into)]
    fen: Signal<String>,
    /// Called with a valid FEN (normalised) to show it.
    on_fen: Callback<String>,
) -> impl IntoView {
    let message = RwSignal::new(None::<String>);
    let variant = use_variant();
    let input = NodeRef::<html::Input>::new();
    // A new position makes an old complaint stale.
    Effect::watch(move || fen.track(), move |_, _, _| message.set(None), false);

    let on_submit = move |ev: SubmitEvent| {
        ev.prevent_default();
        let Some(el) = input.get_untracked() else {
            return;
        };
        match parse_game_fen(variant.get_untracked(), &el.value()) {
            Ok(pos) => {
                message.set(None);
                on_fen.run(to_fen(&pos));
            }
            Err(err) => message.set(Some(err.to_string())),
        }
    };

    view! {
        <form class="fen-box" method="get" action="/" on:submit=on_submit>
            // Without it a FEN loaded on an atomic page would open the
            // standard one (`source::position_href` names the rules alike).
            {move || {
                let variant = variant.get();
                (variant != Variant::Standard)
                    .then(|| view! { <input type="hidden" name="variant" value=variant.as_str()/> })
            }}
            <label for="fen-input">"FEN"</label>
            <div class="fen-row">
                <input
                    id="fen-input"
                    name="fen"
                    type="text"
                    spellcheck="false"
                    autocomplete="off"
                    value=fen.get_untracked()
                    prop:value=move || fen.get()
                    node_ref=input
                    aria-invalid=move || message.with(|m| m.is_some()).to_string()
                    on:input=move |_| message.set(None)
                />
                <button type="submit">"Load"</button>
            </div>
            {move || {
                message.get().map(|m| view! { <p class="fen-error" role="alert">{m}</p> })
            }}
            <a
                class="lichess"
                href=move || lichess_analysis(variant.get(), &fen.get())
                target="_blank"
                rel="noopener noreferrer"
            >
                "Open in lichess's analysis board"
            </a>
        </form>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lichess_links_name_the_rules_and_keep_the_fen() {
        assert_eq!(
            lichess_analysis(Variant::Standard, "4k3/8/8/8/8/8/8/4K2R w - - 0 1"),
            "https://lichess.org/analysis/4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1"
        );
        assert_eq!(
            lichess_analysis(Variant::Atomic, "4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1"),
            "https://lichess.org/analysis/atomic/4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1"
        );
    }
}
