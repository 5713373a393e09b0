//! The moves played in this tab: the panel, which says how to start until
//! there are moves; the moves themselves (`played`) load with the first one.
//!
//! The line itself lives in `hooks::history`; this only shows it.

use leptos::{either::Either, prelude::*};

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
    // Moves the URL brings load the moves' code at once (it reads them).
    let empty = Memo::new(move |_| history.with(|l| l.plies.is_empty()) && !history.from_url.get());
    let body = move || {
        if empty.get() {
            return Either::Left(view! {
                <p class="history-empty">
                    "Play a move on the board or in the list; the moves appear here."
                </p>
            });
        }
        // Its code comes with the first move (split_points).
        let load = Loader::new(move || split_points::played(PlayedProps { history, answers }));
        Either::Right(view! {
            <Part
                what="The moves played"
                load
                waiting=|| view! { <p class="history-empty">"…"</p> }
            />
        })
    };
    view! {
        <section class="history js-only" aria-labelledby="history-title">
            <h2 id="history-title">"Moves"</h2>
            {body}
        </section>
    }
}
