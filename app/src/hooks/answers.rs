//! The tablebase answers the page shows, kept for the tab's lifetime so
//! back/forward, and a move hovered before it is clicked, show their list at
//! once without asking the server again.

use std::collections::HashMap;

use crate::game::Game;
use leptos::prelude::*;

#[cfg(not(feature = "ssr"))]
use crate::hooks::shared_requests::InFlight;
use crate::{
    api::{InstalledTables, TablebaseAnswer},
    json::PageCodec,
    position::to_fen,
    source::{fetch_answer, fetch_tables},
    variant::Variant,
};

/// How many answers the tab keeps before starting afresh (a few MB at most).
const ANSWER_CACHE: usize = 2000;

/// The URL position's answer and the FEN it answers, or why there is none.
///
/// Both resources travel in the page read by `crate::json`, not serde:
/// serde's reading code was about a tenth of the first download.
pub type AnswerResource = Resource<Result<(String, TablebaseAnswer), String>, PageCodec>;

/// The installed tables of the variant on show (`None`: the server did not say).
pub type TablesResource = Resource<Option<InstalledTables>, PageCodec>;

/// Answers seen in this tab, by variant and full FEN, and those asked for
/// and not yet come; the variant on show is the one asked about.
#[derive(Clone, Copy)]
pub struct Answers {
    seen: StoredValue<HashMap<(Variant, String), TablebaseAnswer>>,
    variant: Memo<Variant>,
    /// The browser's requests in flight (the server renders one position a page).
    #[cfg(not(feature = "ssr"))]
    asked: InFlight<(Variant, String), Result<TablebaseAnswer, String>>,
}

impl Answers {
    /// An empty cache for the variant on show.
    pub fn new(variant: Memo<Variant>) -> Answers {
        Answers {
            seen: StoredValue::new(HashMap::new()),
            variant,
            #[cfg(not(feature = "ssr"))]
            asked: InFlight::default(),
        }
    }

    fn key(self, fen: String) -> (Variant, String) {
        (self.variant.get_untracked(), fen)
    }

    /// Keeps an answer for the tab, unless it is to be asked again (the
    /// local tables' while an upstream server could not be asked).
    pub fn remember(self, fen: String, answer: TablebaseAnswer) {
        if answer.ask_again {
            return;
        }
        let key = self.key(fen);
        self.seen.try_update_value(|map| {
            if map.len() >= ANSWER_CACHE {
                map.clear();
            }
            map.insert(key, answer);
        });
    }

    /// The answer for a FEN if this tab has seen it.
    pub fn get(self, fen: &str) -> Option<TablebaseAnswer> {
        self.read(fen, TablebaseAnswer::clone)
    }

    /// Reads the answer for a FEN in place, if this tab has seen it: an
    /// answer holds every move, too much to clone for one field.
    pub fn read<T>(self, fen: &str, read: impl FnOnce(&TablebaseAnswer) -> T) -> Option<T> {
        let key = self.key(fen.to_string());
        self.seen
            .try_with_value(|map| map.get(&key).map(read))
            .flatten()
    }

    /// Asks for a position's answer before the page shows it (a move
    /// hovered, or clicked: the request leaves before the navigation's
    /// work); nothing when it is known or asked for already, or the page is gone.
    pub fn prefetch(self, fen: String) {
        let key = self.key(fen.clone());
        if self.seen.try_with_value(|map| map.contains_key(&key)) != Some(false) {
            return;
        }
        // Nobody waits here: the answer is remembered when it comes.
        drop(self.ask(fen));
    }

    /// Resolves when a FEN's answer (or the error that stands for it) has
    /// come: at once if this tab has it, else when the request in flight
    /// for it ends, or a new one.
    pub async fn wait_for(self, fen: String) {
        let _ = self.answer(fen).await;
    }

    /// The answer for a FEN: from this tab if seen, else from the source.
    pub async fn answer(self, fen: String) -> Result<(String, TablebaseAnswer), String> {
        if let Some(hit) = self.get(&fen) {
            return Ok((fen, hit));
        }
        let answer = self.ask(fen.clone()).await?;
        Ok((fen, answer))
    }

    /// In the browser: the answer of the request in flight for this FEN,
    /// or of a new one.
    #[cfg(not(feature = "ssr"))]
    fn ask(
        self,
        fen: String,
    ) -> impl std::future::Future<Output = Result<TablebaseAnswer, String>> + Send {
        let joined = self
            .asked
            .join(self.key(fen.clone()), move || self.fetch(fen));
        async move {
            joined
                .await
                .unwrap_or_else(|| Err("the page closed before the answer came".to_string()))
        }
    }

    /// On the server: the engine's answer (each page renders one position,
    /// so nothing is in flight twice).
    #[cfg(feature = "ssr")]
    async fn ask(self, fen: String) -> Result<TablebaseAnswer, String> {
        self.fetch(fen).await
    }

    /// Asks the source for a FEN's answer under the variant on show, and
    /// remembers it.
    async fn fetch(self, fen: String) -> Result<TablebaseAnswer, String> {
        let variant = self.variant.get_untracked();
        let answer = fetch_answer(variant, fen.clone())
            .await
            .map_err(|err| err.error)?;
        self.remember(fen, answer.clone());
        Ok(answer)
    }
}

/// The answer cache and the answer for the URL's position, which follows
/// `parsed` (an illegal position's reason stands in for the answer).
pub fn use_answers(
    variant: Memo<Variant>,
    parsed: Memo<Result<Game, String>>,
) -> (Answers, AnswerResource) {
    let answers = Answers::new(variant);
    let resource = Resource::new_with_options(
        // The variant is part of the key: the same FEN has other answers
        // under other rules.
        move || parsed.get().map(|p| (variant.get(), to_fen(&p))),
        move |key: Result<(Variant, String), String>| async move { answers.answer(key?.1).await },
        false,
    );
    (answers, resource)
}

/// Resources need `Send` futures, but the browser's HTTP futures are not
/// (WASM runs on one thread, so wrapping them is sound); on the server the
/// engine's futures are `Send` already and must stay free to move threads.
#[cfg(not(feature = "ssr"))]
pub(crate) fn sendable<F: std::future::Future>(future: F) -> send_wrapper::SendWrapper<F> {
    send_wrapper::SendWrapper::new(future)
}

#[cfg(feature = "ssr")]
pub(crate) fn sendable<F: std::future::Future>(future: F) -> F {
    future
}

/// The installed tables of the variant on show, asked once per page and
/// variant (`None` if the server does not say: the page then names no
/// tables, and works otherwise).
pub fn use_installed_tables(variant: Memo<Variant>) -> TablesResource {
    Resource::new_with_options(
        move || variant.get(),
        |variant| async move { sendable(fetch_tables(variant)).await.ok() },
        false,
    )
}
