//! The explorer page: the position from the URL, its result and its moves.

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use crate::{
    api::TablebaseAnswer,
    components::move_list::{MoveList, status_text},
    position::{parse_fen, to_fen},
    source::fetch_answer,
};

/// Where a visitor without a `?fen=` starts: a classic won rook ending.
pub const START_FEN: &str = "4k3/8/8/8/8/8/8/4K2R w - - 0 1";

#[component]
pub fn Explorer() -> impl IntoView {
    let query = use_query_map();
    let fen = Memo::new(move |_| {
        query
            .read()
            .get("fen")
            .unwrap_or_else(|| START_FEN.to_string())
    });
    let answer = Resource::new(move || fen.get(), |fen| async move {
        let pos = parse_fen(&fen).map_err(|err| err.to_string())?;
        fetch_answer(to_fen(&pos)).await.map_err(|err| err.error)
    });

    view! {
        <section class="explorer">
            <h1>"Zugzwang"</h1>
            <p class="fen">{move || fen.get()}</p>
            <Suspense fallback=|| view! { <p class="status">"Probing…"</p> }>
                {move || Suspend::new(async move {
                    match answer.await {
                        Ok(answer) => view! { <Answer answer fen=fen.get_untracked()/> }.into_any(),
                        Err(message) => view! { <p class="status error">{message}</p> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
}

#[component]
fn Answer(answer: TablebaseAnswer, fen: String) -> impl IntoView {
    let status = status_text(&answer);
    view! {
        <p class="status">{status}</p>
        <MoveList moves=answer.moves fen/>
    }
}
