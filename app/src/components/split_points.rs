//! The page's split points: each function below is the only way the
//! browser's code reaches one lazily loaded part, so `cargo leptos --split`
//! moves the part (and whatever only it uses) into its own WASM file,
//! fetched on first use or when the browser is idle (`prefetch`). The first
//! download keeps the board, the move list, the verdict and hydration.
//!
//! Each point is `fallible`: a file that does not arrive is a
//! `PartNotLoaded` for `part::Part` or `part::ServerPart` to show with a
//! retry, never a panic (which would stop the whole page). On the server
//! the functions are plain calls.
//!
//! Call the components named here only through these functions in code the
//! browser runs, or their code is pulled back into the first download.

use leptos::prelude::*;
use shakmaty::{Color, Role};
use wasm_split_helpers::wasm_split;

use crate::{
    api::MoveInfo,
    components::{
        about::installed::{InstalledTables, InstalledTablesProps},
        about::stats::{Stats, StatsProps},
        board::clock::{Clock, ClockProps},
        board::promotion::{PendingPromotion, promotion_dialog},
        editor::{
            Editor, EditorProps,
            fen_box::{FenBox, FenBoxProps},
            variant_switch::{VariantSwitch, VariantSwitchProps},
        },
        line::{
            mainline::{Mainline, MainlineProps},
            played::{Played, PlayedProps},
        },
        part::{Loaded, PartNotLoaded},
    },
};

/// The position editor, in place of the board.
#[wasm_split(editor, fallible, preload(preload_editor))]
pub fn editor(props: EditorProps) -> Loaded {
    Ok(Editor(props).into_any())
}

/// The choice of piece when a pawn promotes.
#[wasm_split(promotion, fallible, preload(preload_promotion))]
pub fn promotion(
    promotion: RwSignal<Option<PendingPromotion>>,
    orientation: Signal<Color>,
    answered: Signal<Vec<MoveInfo>>,
    choose: Callback<Role>,
) -> Loaded {
    Ok(
        promotion_dialog(promotion, orientation, answered, move |role| {
            choose.run(role)
        })
        .into_any(),
    )
}

/// The moves played in this tab, once there are some.
#[wasm_split(played, fallible, preload(preload_played))]
pub fn played(props: PlayedProps) -> Loaded {
    Ok(Played(props).into_any())
}

/// The DTZ mainline.
#[wasm_split(mainline, fallible, preload(preload_mainline))]
pub fn mainline(props: MainlineProps) -> Loaded {
    Ok(Mainline(props).into_any())
}

/// The endgame statistics.
#[wasm_split(stats, fallible, preload(preload_stats))]
pub fn stats(props: StatsProps) -> Loaded {
    Ok(Stats(props).into_any())
}

/// The list of installed tables, live: it follows the rules on show.
#[wasm_split(installed, fallible, preload(preload_installed))]
pub fn installed(props: InstalledTablesProps) -> Loaded {
    Ok(InstalledTables(props).into_any())
}

/// The FEN box, live: a FEN checked before it is loaded.
#[wasm_split(fen_box, fallible, preload(preload_fen_box))]
pub fn fen_box(props: FenBoxProps) -> Loaded {
    Ok(FenBox(props).into_any())
}

/// The rules switch, live: its links follow the position on show.
#[wasm_split(variant_switch, fallible, preload(preload_variant_switch))]
pub fn variant_switch(props: VariantSwitchProps) -> Loaded {
    Ok(VariantSwitch(props).into_any())
}

/// The halfmove clock, live: it follows the position on show.
#[wasm_split(clock, fallible, preload(preload_clock))]
pub fn clock(props: ClockProps) -> Loaded {
    Ok(Clock(props).into_any())
}

/// Starts the page's work for an idle browser: Space and the keys of a line
/// on show (`hooks::click_keys`), then the parts not yet used, then `last`
/// (the practice page's, which lives in `practice_route`: that part's code
/// uses the board, whose promotion choice is one of the points here, so
/// this module does not name it). Both are a part of their own, so the
/// first download holds neither; a failure here is left for the use
/// itself to show.
pub fn prefetch(last: fn()) {
    leptos::task::spawn_local(async move {
        idle().await;
        let _: Result<(), _> = after_hydration(last).await;
    });
}

/// The keys act through the page's buttons, so they can wait for the
/// browser to be idle; the parts follow.
#[wasm_split(after_hydration, fallible)]
pub fn after_hydration(last: fn()) -> Result<(), PartNotLoaded> {
    crate::hooks::click_keys::listen();
    leptos::task::spawn_local(preload_the_rest(last));
    Ok(())
}

/// Fetches the parts not yet used, one after the other, each when the
/// browser is next idle, so a first use does not wait for the network and
/// the clicks of a visit that has just begun do not wait for the parts
/// (each part's instantiation is then a short task of its own). The order
/// is that of a first visit: a move (the played moves), then the editor,
/// the mainline, the statistics, a promotion, then `last`.
async fn preload_the_rest(last: fn()) {
    let _: Result<(), _> = preload_played().await;
    idle().await;
    let _: Result<(), _> = preload_editor().await;
    idle().await;
    let _: Result<(), _> = preload_mainline().await;
    idle().await;
    let _: Result<(), _> = preload_stats().await;
    idle().await;
    let _: Result<(), _> = preload_promotion().await;
    idle().await;
    last();
}

/// Resolves when the browser is next idle (`requestIdleCallback`).
async fn idle() {
    let (sender, idle) = futures_channel::oneshot::channel::<()>();
    let sender = std::sync::Mutex::new(Some(sender));
    request_idle_callback(move || {
        if let Some(sender) = sender.lock().ok().and_then(|mut s| s.take()) {
            let _ = sender.send(());
        }
    });
    let _ = idle.await;
}
