//! The tablebase answers the page shows, kept for the tab's lifetime so
//! back/forward, and a move hovered before it is clicked, show their list at
//! once without asking the server again.

use std::collections::HashMap;

use leptos::prelude::*;
use shakmaty::Chess;

use crate::{api::TablebaseAnswer, position::to_fen, source::fetch_answer};

/// How many answers the tab keeps before starting afresh (a few MB at most).
const ANSWER_CACHE: usize = 2000;

/// The URL position's answer and the FEN it answers, or why there is none.
pub type AnswerResource = Resource<Result<(String, TablebaseAnswer), String>>;

/// Answers seen in this tab, by full FEN.
#[derive(Clone, Copy)]
pub struct Answers(StoredValue<HashMap<String, TablebaseAnswer>>);

impl Answers {
    pub fn remember(self, fen: String, answer: TablebaseAnswer) {
        self.0.try_update_value(|map| {
            if map.len() >= ANSWER_CACHE {
                map.clear();
            }
            map.insert(fen, answer);
        });
    }

    /// A position's answer, if this tab has seen it.
    pub fn get(self, fen: &str) -> Option<TablebaseAnswer> {
        self.0.try_with_value(|map| map.get(fen).cloned()).flatten()
    }

    /// Asks for a position's answer ahead of the click (a hovered move);
    /// nothing when it is known already or the page is gone.
    pub fn prefetch(self, fen: String) {
        if self.0.try_with_value(|map| map.contains_key(&fen)) != Some(false) {
            return;
        }
        leptos::task::spawn_local(async move {
            if let Ok(answer) = fetch_answer(fen.clone()).await {
                self.remember(fen, answer);
            }
        });
    }

    /// The answer for a FEN: from this tab if seen, else from the source.
    async fn answer(self, fen: String) -> Result<(String, TablebaseAnswer), String> {
        if let Some(hit) = self.get(&fen) {
            return Ok((fen, hit));
        }
        let answer = sendable(fetch_answer(fen.clone()))
            .await
            .map_err(|err| err.error)?;
        self.remember(fen.clone(), answer.clone());
        Ok((fen, answer))
    }
}

/// The answer cache and the answer for the URL's position, which follows
/// `parsed` (an illegal position's reason stands in for the answer).
pub fn use_answers(parsed: Memo<Result<Chess, String>>) -> (Answers, AnswerResource) {
    let answers = Answers(StoredValue::new(HashMap::new()));
    let resource = Resource::new(
        move || parsed.get().map(|p| to_fen(&p)),
        move |key: Result<String, String>| async move { answers.answer(key?).await },
    );
    (answers, resource)
}

/// Resources need `Send` futures, but the browser's HTTP futures are not
/// (WASM runs on one thread, so wrapping them is sound); on the server the
/// engine's futures are `Send` already and must stay free to move threads.
#[cfg(not(feature = "ssr"))]
fn sendable<F: std::future::Future>(future: F) -> send_wrapper::SendWrapper<F> {
    send_wrapper::SendWrapper::new(future)
}

#[cfg(feature = "ssr")]
fn sendable<F: std::future::Future>(future: F) -> F {
    future
}
