//! "Show line": the DTZ-optimal line from the current position; "Fastest
//! mate": the DTM-optimal one, where depth to mate is known. Either is
//! stepped through on the board and downloadable as PGN with the start FEN.
//!
//! The line comes from `/standard/mainline` (or `/standard/fastest-mate`)
//! once; stepping only changes the URL (each step is a shareable position)
//! and walks the move history along (`hooks::history`), and the line stays
//! on show while the board is on one of its positions.

pub mod line;

use leptos::{prelude::*, task::spawn_local};

use line::{Fetched, Kind, Line, build_line};

use crate::game::Game;
use crate::{
    components::{
        line::movetext::{Movetext, ShownMove, data_url},
        line::step_buttons::StepButtons,
    },
    hooks::{
        answers::{AnswerResource, TablesResource},
        history::{MoveHistory, Step as StepButton},
        url_position::use_variant,
    },
    needed_table::unknown_reason,
    position::to_fen,
    source::{fetch_mainline, fetch_mate_line, position_href},
    variant::Variant,
};

#[component]
pub fn Mainline(
    #[prop(into)] pos: Signal<Option<Game>>,
    /// The tab's move history, walked along as the line is stepped through.
    history: MoveHistory,
    /// The installed tables: without those the position needs, no line...
    tables: TablesResource,
    /// ...unless an upstream server answered the position (`serve
    /// --upstream`): the server asks it for the line too.
    answer: AnswerResource,
) -> impl IntoView {
    let panel = Panel::new(pos, history, tables, answer);
    view! {
        <section class="mainline js-only">
            <h2>
                {move || match panel.line.with(|l| l.as_ref().map(|l| l.kind)) {
                    Some(Kind::Mate) => "Fastest mate",
                    _ => "DTZ mainline",
                }}
            </h2>
            {move || panel.body()}
            {move || panel.error.get().map(|e| view! { <p class="line-error" role="alert">{e}</p> })}
        </section>
    }
}

/// The panel's state, one `Copy` handle for its buttons and views, which
/// all fetch, step or close the same line.
#[derive(Clone, Copy)]
struct Panel {
    pos: Signal<Option<Game>>,
    history: MoveHistory,
    variant: Memo<Variant>,
    /// The line fetched last, until it is closed.
    line: RwSignal<Option<Line>>,
    loading: RwSignal<bool>,
    /// Why the last line asked for did not come, until the board moves.
    error: RwSignal<Option<String>>,
    /// Where the board is in the line: off it (`None`), the line is not shown.
    index: Memo<Option<usize>>,
    /// Why no line can be fetched for the position: a table it needs is
    /// not installed ("KRPvKR not installed") and no upstream server
    /// answered the position.
    no_line: Memo<Option<String>>,
}

impl Panel {
    fn new(
        pos: Signal<Option<Game>>,
        history: MoveHistory,
        tables: TablesResource,
        answer: AnswerResource,
    ) -> Panel {
        let line = RwSignal::new(None::<Line>);
        let error = RwSignal::new(None::<String>);
        let current = Memo::new(move |_| pos.get().map(|p| to_fen(&p)));
        let index = Memo::new(move |_| {
            let fen = current.get()?;
            line.with(|l| l.as_ref().and_then(|l| l.index_of(&fen)))
        });
        Effect::watch(
            move || current.track(),
            move |_, _, _| error.set(None),
            false,
        );
        let no_line = Memo::new(move |_| {
            let pos = pos.get()?;
            // Where the local tables end, the server asks the upstream
            // server that answered the position for its line as well (each
            // request within that server's budget).
            let fen = current.get();
            let upstream = answer.with(|shown| {
                matches!(shown, Some(Ok((shown, a))) if a.source.is_some() && Some(shown) == fen.as_ref())
            });
            if upstream {
                return None;
            }
            let reason = tables.with(|t| unknown_reason(&pos, t.as_ref()?.as_ref()?))?;
            Some(format!(
                "No line: {reason}, so the tables cannot tell how this position goes on"
            ))
        });
        Panel {
            no_line,
            pos,
            history,
            variant: use_variant(),
            line,
            loading: RwSignal::new(false),
            error,
            index,
        }
    }

    /// Fetches a line from the position on the board.
    fn show(self, kind: Kind) {
        let Some(start) = self.pos.get_untracked() else {
            return;
        };
        self.loading.set(true);
        self.error.set(None);
        spawn_local(async move {
            let fen = to_fen(&start);
            let fetched = match kind {
                Kind::Dtz => fetch_mainline(self.variant.get_untracked(), fen)
                    .await
                    .map(Fetched::from),
                Kind::Mate => fetch_mate_line(fen).await.map(Fetched::from),
            };
            match fetched {
                Ok(fetched) => {
                    self.line.set(Some(build_line(&start, fetched)));
                    request_animation_frame(reveal_buttons);
                }
                Err(err) => self.error.set(Some(err.error)),
            }
            self.loading.set(false);
        });
    }

    /// Walks the history along the line to `target`; `navigate` also shows it
    /// (a link navigates by itself).
    fn walk(self, target: usize, navigate: bool) {
        let Some(from) = self.index.get_untracked() else {
            return;
        };
        let path = self
            .line
            .with_untracked(|l| l.as_ref().map(|l| l.path(from, target)));
        let Some(path) = path else {
            return;
        };
        self.history.follow(&path);
        if !navigate {
            return;
        }
        if let Some(fen) = path.last() {
            self.history.show(fen.clone());
        }
    }

    /// The line while the board is on it, else the buttons that fetch one.
    fn body(self) -> AnyView {
        let Some(i) = self.index.get() else {
            return self.offer();
        };
        match self.line.get() {
            Some(l) => self.line_view(&l, i),
            None => ().into_any(),
        }
    }

    /// "Show line", and "Fastest mate" where depth to mate is known (for
    /// standard chess only); both disabled, saying why in their title,
    /// where the position needs a table that is not installed and no
    /// upstream server answered it.
    fn offer(self) -> AnyView {
        let idle = move || {
            !self.loading.get()
                && self.pos.with(|p| p.is_some())
                && self.no_line.with(Option::is_none)
        };
        let title =
            move |usual: &'static str| self.no_line.get().unwrap_or_else(|| usual.to_string());
        let mate = (self.variant.get() == Variant::Standard).then(|| {
            view! {
                <button
                    class="show-mate"
                    on:click=move |_| self.show(Kind::Mate)
                    disabled=move || !idle()
                    title=move || title("The shortest mate, as depth-to-mate tables give it")
                >
                    "Fastest mate"
                </button>
            }
        });
        view! {
            <button
                class="show-line"
                on:click=move |_| self.show(Kind::Dtz)
                disabled=move || !idle()
                title=move || title("The line of best moves by DTZ, to step through on the board")
            >
                {move || if self.loading.get() { "Loading line…" } else { "Show line" }}
            </button>
            {mate}
        }
        .into_any()
    }

    /// The line on show with the board at step `i`: the buttons to step
    /// through it, the PGN, its numbered moves and how it ends; a drawn
    /// position has no line, only a sentence saying so.
    fn line_view(self, l: &Line, i: usize) -> AnyView {
        if l.steps.is_empty() {
            return view! {
                <div class="line">
                    <p class="line-outcome">"Drawn: there is no winning line to follow."</p>
                    {self.close_button()}
                </div>
            }
            .into_any();
        }
        let moves = l
            .steps
            .iter()
            .enumerate()
            .map(|(k, s)| ShownMove {
                san: s.san.clone(),
                href: position_href(l.variant, &s.fen),
                current: k + 1 == i,
            })
            .collect::<Vec<_>>();
        let on_pick = Callback::new(move |k: usize| self.walk(k + 1, false));
        view! {
            <div class="line">
                {self.line_nav(l, i)}
                <div class="line-moves">
                    <Movetext start_fen=l.start.clone() moves on_pick/>
                </div>
                <p class="line-outcome">{l.ending.clone()}</p>
            </div>
        }
        .into_any()
    }

    /// Start, back, where the board is, next, end, the PGN and closing.
    fn line_nav(self, l: &Line, i: usize) -> impl IntoView {
        let n = l.steps.len();
        let pgn = l.pgn();
        let href = data_url("application/x-chess-pgn", &pgn);
        let on_step = Callback::new(move |step: StepButton| self.walk(step.target(i, n), true));
        view! {
            <div class="line-nav">
                <StepButtons at_start={i == 0} at_end={i >= n} on_step>
                    <span class="line-pos">{format!("{i} / {n}")}</span>
                </StepButtons>
                <a class="pgn" href=href download="zugzwang-line.pgn" data-pgn=pgn>
                    "Download PGN"
                </a>
                {self.close_button()}
            </div>
        }
    }

    fn close_button(self) -> impl IntoView {
        let line = self.line;
        view! {
            <button
                type="button"
                class="line-close"
                on:click=move |_| line.set(None)
                title="Hide the line"
                aria-label="Hide the line"
            >
                "✕"
            </button>
        }
    }
}

/// On a phone, where the board stands above the line (one column), puts
/// the line's buttons right under the board as the line opens: the board
/// sticks at the top of the screen while a line is on show, and the moves
/// fit in the rest (the page's `scroll-padding-top` leaves the board's
/// height). Beside the board (a desktop) nothing moves.
fn reveal_buttons() {
    let find = |selector: &str| document().query_selector(selector).ok().flatten();
    let (Some(nav), Some(board)) = (find(".mainline .line-nav"), find(".board-wrap")) else {
        return;
    };
    let (a, b) = (
        nav.get_bounding_client_rect(),
        board.get_bounding_client_rect(),
    );
    let under_the_board = a.left() < b.right() && b.left() < a.right();
    if under_the_board {
        nav.scroll_into_view_with_bool(true);
    }
}
