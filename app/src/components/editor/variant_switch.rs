//! The choice of rules: standard chess, atomic or antichess, kept in the
//! URL (`&variant=atomic`) like everything else the page shows. Plain links,
//! so it works without JavaScript too.

use leptos::prelude::*;

use crate::{
    source::position_href,
    {game::parse_game_fen, variant::Variant},
};

/// Where a variant starts when the position on show is not legal under its
/// rules: a small ending with something to see.
fn start_fen(variant: Variant) -> &'static str {
    match variant {
        Variant::Standard => crate::hooks::url_position::START_FEN,
        // A queen next to the king's knight: Qxd7 explodes the king.
        Variant::Atomic => "4k3/3n4/8/8/8/8/3Q4/K7 w - - 0 1",
        // The pawn must take the knight: captures are compulsory.
        Variant::Antichess => "8/8/8/8/8/2n5/3P4/8 w - - 0 1",
    }
}

/// The link to a variant: the same position if its rules allow it.
fn variant_href(variant: Variant, fen: &str) -> String {
    let fen = if parse_game_fen(variant, fen).is_ok() {
        fen
    } else {
        start_fen(variant)
    };
    position_href(variant, fen)
}

#[component]
pub fn VariantSwitch(variant: Memo<Variant>, #[prop(into)] fen: Signal<String>) -> impl IntoView {
    view! {
        <nav class="variants" aria-label="Rules">
            {Variant::ALL
                .into_iter()
                .map(|v| {
                    let current = move || variant.get() == v;
                    view! {
                        <a
                            href=move || variant_href(v, &fen.get())
                            class:current=current
                            aria-current=move || current().then_some("page")
                            data-variant=v.as_str()
                        >
                            {v.label()}
                        </a>
                    }
                })
                .collect_view()}
        </nav>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_a_position_the_rules_allow() {
        let krvk = "4k3/8/8/8/8/8/8/4K2R w - - 0 1";
        assert_eq!(
            variant_href(Variant::Atomic, krvk),
            "/?variant=atomic&fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1"
        );
        // Touching kings: legal in atomic, not in standard chess.
        let touching = "8/8/8/8/8/8/3kK3/8 w - - 0 1";
        assert_eq!(
            variant_href(Variant::Standard, touching),
            position_href(Variant::Standard, start_fen(Variant::Standard))
        );
        for v in Variant::ALL {
            assert!(parse_game_fen(v, start_fen(v)).is_ok(), "{v}");
        }
    }
}
