//! The moves played in this tab: the panel, which says how to start until
//! there are moves; the moves themselves (`played`) load with the first one.
//!
//! The line itself lives in `hooks::history`; this only shows it.

use leptos::prelude::*;

use crate::{
    components::{
        line::played::PlayedProps,
        part::{Loader, Part},
        split_points,
    },
    hooks::{answers::Answers, history::MoveHistory},
};

#[component]
pub fn History(history: MoveHistory, answers: Answers) -> impl IntoView {
    let empty = Memo::new(move |_| history.with(|l| l.plies.is_empty()));
    let body = move || {
        if empty.get() {
            return view! {
                <p class="history-empty">
                    "Play a move on the board or in the list; the moves appear here."
                </p>
            }
            .into_any();
        }
        // Its code comes with the first move (split_points).
        let load = Loader::new(move || split_points::played(PlayedProps { history, answers }));
        view! {
            <Part
                what="The moves played"
                load
                waiting=|| view! { <p class="history-empty">"…"</p> }
            />
        }
        .into_any()
    };
    view! {
        <section class="history js-only" aria-labelledby="history-title">
            <h2 id="history-title">"Moves"</h2>
            {body}
        </section>
    }
}
