//! The practice page: the player plays a position out against the
//! tablebase (`practice` has the rules). The URL holds the game; the page
//! shows the board, whose turn it is with the result of the last move,
//! the moves marked best, slower or mistake, a hint, takeback and
//! resigning, and at the end a summary with the game's PGN.
//!
//! The page is a part of its own (`practice_route`): the explorer's
//! first download carries none of it.

pub mod controls;
pub mod guide;
pub mod hint;
pub mod record;
pub mod side_choice;
pub mod status;
pub mod summary;

use crate::url::{NavigateOptions, use_navigate, use_query_map};
use leptos::prelude::*;
use leptos_meta::Title;
use shakmaty::{Color, Move, Position, Square};

use crate::{
    components::board::{Board, arrow::HoveredMove, flip::FlipButton},
    hooks::answers::Answers,
    material,
    practice::{
        earlier::{EarlierMarks, LeftOut, use_earlier_marks},
        replay::PracticeGame,
        review::{Marked, Review, ReviewResource, review},
        setup::Setup,
    },
    variant::Variant,
};

use controls::Controls;
use guide::PracticeHelp;
use hint::Hint;
use record::Record;
use side_choice::SideChoice;
use status::Status;
use summary::Summary;

/// The game on show: the URL's, with the tablebase's reply once it is
/// known (the URL gets it too, a moment later).
pub type Shown = Memo<Result<PracticeGame, String>>;

/// The marks of the shown game's player moves: the review's, and the older
/// ones the browser judged since (`practice::earlier`).
pub type Marks = Memo<Vec<Marked>>;

#[component]
pub fn Practice() -> impl IntoView {
    let query = use_query_map();
    let setup = Memo::new(move |_| query.with(|q| Setup::read(|name| q.get(name))));
    let variant = Memo::new(move |_| setup.with(|s| s.variant));
    // Components that read FENs or build links take the variant from here.
    provide_context(variant);
    let answers = Answers::new(variant);
    let reviewed: ReviewResource = Resource::new_with_options(
        move || setup.get(),
        move |setup| async move { review(answers, setup).await },
        false,
    );
    let played = Memo::new(move |_| setup.with(PracticeGame::replay));
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    view! {
        // From the URL's game: the review is read inside the Transition
        // only, which the server waits for before it writes the page.
        <Title text=move || played.with(|g| title(variant.get(), g.as_ref().ok()))/>
        <div class="explorer practice" data-hydrated=move || hydrated.get().to_string()>
            <Transition fallback=|| view! { <p class="practice-loading">"Loading the game…"</p> }>
                <PracticeBody played reviewed answers/>
            </Transition>
        </div>
    }
}

/// What the page is doing, which changes far less often than the game:
/// the panel is rebuilt only when it changes, so its live status line
/// stays in place for screen readers to follow.
#[derive(Clone, Debug, PartialEq)]
enum Phase {
    Unplayable(String),
    Choosing,
    Playing,
}

/// The board and the panel, made inside the Transition so that every read
/// of the review is one the server waits for and hydration finds ready.
#[component]
fn PracticeBody(
    played: Memo<Result<PracticeGame, String>>,
    reviewed: ReviewResource,
    answers: Answers,
) -> impl IntoView {
    let shown = shown_game(played, reviewed);
    write_reply_into_url(played, reviewed);
    let earlier = use_earlier_marks(left_out(played, reviewed), answers);
    let marks = marks_of(shown, reviewed, earlier);
    let phase = Memo::new(move |_| {
        shown.with(|game| match game {
            Err(why) => Phase::Unplayable(why.clone()),
            Ok(game) if game.setup.side.is_none() => Phase::Choosing,
            Ok(_) => Phase::Playing,
        })
    });
    view! {
        <PracticeBoard shown answers/>
        <div class="side">
            <section class="practice-panel" data-fen=move || shown.with(|g| g.as_ref().ok().map(|g| g.fen())) data-state=move || state(shown)>
                <h2>"Play it out"</h2>
                {move || match phase.get() {
                    Phase::Unplayable(why) => view! { <p class="status error" role="alert">{why}</p> }.into_any(),
                    Phase::Choosing => view! { <SideChoice shown reviewed/> }.into_any(),
                    Phase::Playing => view! {
                        <Status shown reviewed marks/>
                        <Controls shown/>
                        <Hint shown answers/>
                        <Record shown marks/>
                        <Summary shown marks/>
                    }
                    .into_any(),
                }}
            </section>
            <PracticeHelp/>
        </div>
    }
}

/// The game with the tablebase's reply once the review has it. The game is
/// cloned, not replayed, to add the reply: a long game's page would
/// otherwise replay it twice.
fn shown_game(played: Memo<Result<PracticeGame, String>>, reviewed: ReviewResource) -> Shown {
    Memo::new(move |_| {
        reviewed.with(|review| {
            played.with(|game| {
                let game = game.as_ref().map_err(Clone::clone)?;
                Ok(match reply_of(game, review.as_ref()) {
                    Some(uci) => game.with_reply(&uci),
                    None => game.clone(),
                })
            })
        })
    })
}

/// The reply goes into the URL, in place of the address without it: back
/// then goes to before the player's move, as a takeback does.
fn write_reply_into_url(played: Memo<Result<PracticeGame, String>>, reviewed: ReviewResource) {
    let navigate = use_navigate();
    Effect::new(move |_| {
        let Some(uci) = reviewed.with(|review| {
            played.with(|g| g.as_ref().ok().and_then(|g| reply_of(g, review.as_ref())))
        }) else {
            return;
        };
        let Some(href) =
            played.with_untracked(|g| g.as_ref().ok().map(|g| g.with_move(uci).href()))
        else {
            return;
        };
        navigate(
            &href,
            NavigateOptions {
                replace: true,
                ..Default::default()
            },
        );
    });
}

/// The player's older moves, which the review leaves out, with the game.
fn left_out(played: Memo<Result<PracticeGame, String>>, reviewed: ReviewResource) -> LeftOut {
    Memo::new(move |_| {
        reviewed.with(|review| {
            let Some(Ok(review)) = review else {
                return None;
            };
            played.with(|game| {
                let game = game.as_ref().ok()?;
                Some((game.clone(), review.left_out(game)))
            })
        })
    })
}

/// Every mark of the player's moves: the review's, and the older ones as
/// they are judged.
fn marks_of(shown: Shown, reviewed: ReviewResource, earlier: ReadSignal<EarlierMarks>) -> Marks {
    Memo::new(move |_| {
        reviewed.with(|review| {
            let Some(Ok(review)) = review else {
                return Vec::new();
            };
            shown.with(|game| match game {
                Ok(game) => earlier.with(|earlier| review.marks_for(game, earlier)),
                Err(_) => Vec::new(),
            })
        })
    })
}

/// Whose turn it is, for tests and styles: "choosing", "player",
/// "tablebase" or "over".
fn state(shown: Shown) -> &'static str {
    shown.with(|g| match g {
        Err(_) => "over",
        Ok(g) if g.end().is_some() => "over",
        Ok(g) if g.setup.side.is_none() => "choosing",
        Ok(g) if g.players_turn() => "player",
        Ok(_) => "tablebase",
    })
}

/// The reply of a review, if it belongs to this game.
fn reply_of(game: &PracticeGame, review: Option<&Result<Review, String>>) -> Option<String> {
    match review {
        Some(Ok(review)) if review.moves == game.setup.moves => review.reply.clone(),
        _ => None,
    }
}

/// The board: it takes the player's moves on the player's turn only.
#[component]
fn PracticeBoard(shown: Shown, answers: Answers) -> impl IntoView {
    let navigate = use_navigate();
    let side = Memo::new(move |_| {
        shown.with(|g| {
            g.as_ref()
                .ok()
                .map(|g| g.setup.side.unwrap_or(g.current().turn()))
                .unwrap_or(Color::White)
        })
    });
    let orientation = RwSignal::new(side.get_untracked());
    Effect::watch(
        move || side.get(),
        move |side, _, _| orientation.set(*side),
        false,
    );
    let playable = Signal::derive(move || {
        shown.with(|g| {
            g.as_ref()
                .ok()
                .filter(|g| g.players_turn() && g.end().is_none())
                .map(|g| g.current().clone())
        })
    });
    let placement = Signal::derive(move || {
        shown.with(|g| {
            g.as_ref()
                .map(|g| g.current().board().clone())
                .unwrap_or_default()
        })
    });
    let last_move: Signal<Option<(Square, Square)>> = Signal::derive(move || {
        shown.with(|g| {
            g.as_ref()
                .ok()
                .and_then(|g| g.plies.last().and_then(|p| p.squares))
        })
    });
    let on_move = Callback::new(move |m: Move| {
        let Some(href) = shown.with_untracked(|g| {
            let g = g.as_ref().ok()?;
            let uci = m.to_uci(shakmaty::CastlingMode::Standard).to_string();
            Some(g.with_move(uci).href())
        }) else {
            return;
        };
        navigate(&href, Default::default());
    });
    let hover = RwSignal::new(None::<HoveredMove>);
    view! {
        <div class="play">
            <Board pos=playable placement orientation last_move hover on_move answers/>
            <div class="board-tools">
                <FlipButton orientation title="Flip the board"/>
            </div>
        </div>
    }
}

/// The tab's title: "Practice: KRvK — Zugzwang".
fn title(variant: Variant, game: Option<&PracticeGame>) -> String {
    match game {
        Some(g) => format!(
            "Practice: {} — Zugzwang",
            material::titled(variant, g.current().board())
        ),
        None => "Practice — Zugzwang".to_string(),
    }
}
