//! The explorer page: the position from the URL, the board, the verdict,
//! every move with its DTZ, the FEN box, the editor, the mainline and the
//! endgame statistics.
//!
//! The URL is the single source of the position (`hooks::url_position`).
//! The board follows it at once (legality and the next FEN come from
//! shakmaty in WASM); the move list waits for the API (`move_list`).

use crate::url::use_navigate;
use leptos::prelude::*;
use leptos_meta::Title;
use shakmaty::{Color, Move, Position, Square};

use crate::game::Game;
use crate::{
    components::{
        about::help::Help,
        about::installed::InstalledTables,
        about::stats::{Stats, StatsProps},
        board::arrow::HoveredMove,
        board::clock::{Clock, ClockProps},
        board::flip::FlipButton,
        board::pieces::color_name,
        editor::fen_box::{FenBox, FenBoxProps},
        editor::variant_switch::{VariantSwitch, VariantSwitchProps},
        line::history::History,
        line::mainline::{Mainline, MainlineProps},
        move_list::verdict::turn_text,
        move_list::{MoveEvents, Results},
        part::{Loader, ServerPart, server_html},
        play_area::PlayArea,
        practice_route, split_points,
    },
    hooks::{
        answers::{use_answers, use_installed_tables},
        history::use_history,
        last_moves::use_last_moves,
        mode::Mode,
        orientation::use_orientation,
        pick::use_pick,
        shortcuts::use_shortcuts,
        url_position::{use_shown_position, use_url_position},
    },
    material,
    move_squares::move_squares,
    position::to_fen,
    practice::setup::practice_href,
    source::position_href,
    variant::Variant,
};

#[component]
pub fn Explorer() -> impl IntoView {
    let url = use_url_position();
    let navigate = use_navigate();
    let pos = url.pos();
    let mode = RwSignal::new(Mode::Playing);
    let editing = Memo::new(move |_| mode.get() != Mode::Playing);
    // The editor's position while it is open: the analysis follows it live.
    let editor_fen = RwSignal::new(None::<String>);
    Effect::watch(
        move || editing.get(),
        move |editing, _, _| {
            if !editing {
                editor_fen.set(None);
            }
        },
        false,
    );
    // A position reached while editing (a move in the list, back/forward)
    // ends the editing.
    Effect::watch(
        move || url.fen.get(),
        move |_, _, _| mode.set(Mode::Playing),
        false,
    );
    let shown = use_shown_position(url, editor_fen.into());
    let orientation = use_orientation();
    let hover = RwSignal::new(None::<HoveredMove>);
    let last_moves = use_last_moves();
    // Components that read FENs or build links take the variant from here.
    provide_context(url.variant);
    let history = use_history(url.variant, url.current_fen, last_moves);
    let (answers, answer) = use_answers(url.variant, shown.parsed);
    let tables = use_installed_tables(url.variant);
    use_shortcuts(orientation, mode, history);

    let go = Callback::new(move |fen: String| {
        hover.set(None);
        navigate(
            &position_href(url.variant.get_untracked(), &fen),
            Default::default(),
        );
    });
    // Shows a position and remembers the move that led there, if any.
    let on_line = Callback::new(move |(fen, squares): (String, Option<(Square, Square)>)| {
        answers.prefetch(fen.clone());
        if let Some(squares) = squares {
            last_moves.record(fen.clone(), squares);
        }
        go.run(fen);
    });
    let pick = use_pick(answers, go, url.fen);
    let on_move = Callback::new(move |m: Move| {
        let Some(mut after) = pos.get_untracked() else {
            return;
        };
        let squares = move_squares(&m);
        after.play_unchecked(m);
        on_line.run((to_fen(&after), squares));
    });
    let events = MoveEvents {
        on_hover: Callback::new(move |squares| hover.set(squares)),
        on_pick: Callback::new(move |(fen, squares): (String, _)| {
            last_moves.record(fen.clone(), squares);
            pick.run(fen);
        }),
        on_prefetch: Callback::new(move |fen| answers.prefetch(fen)),
    };

    // Effects run only in the browser: this marks the page as interactive,
    // so tests (and curious people) can tell SSR from hydrated; then the
    // parts not yet used load while the browser is idle.
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| {
        hydrated.set(true);
        split_points::prefetch(async {
            practice_route::preload().await;
        });
    });

    let fen_shown = Signal::derive(move || url.current_fen.get().unwrap_or_else(|| url.fen.get()));
    let left_first = left_first(url.variant, fen_shown, editing);
    let fen_box = move || FenBoxProps {
        fen: fen_shown,
        on_fen: go,
    };
    let variant_switch = move || VariantSwitchProps {
        variant: url.variant,
        fen: fen_shown,
    };
    view! {
        <Title text=title(url.variant, shown.placement, shown.parsed)/>
        <div
            class="explorer"
            class:editing=move || editing.get()
            data-hydrated=move || hydrated.get().to_string()
        >
            <div class="play">
                <ServerPart
                    what="The rules switch"
                    html=server_html(move || VariantSwitch(variant_switch()).into_any())
                    load=Loader::new(move || split_points::variant_switch(variant_switch()))
                    load_when=left_first
                />
                <PlayArea
                    url
                    mode
                    editing
                    orientation
                    last_move=last_moves.leading_to(url.current_fen)
                    hover
                    on_move
                    go
                    editor_fen
                    answers
                />
                <BoardTools orientation mode editing pos=shown.pos() variant=url.variant fen=fen_shown left_first/>
            </div>
            <div class="side">
                <Help/>
                <Results parsed=shown.parsed answers answer tables events/>
                <History history answers/>
                <ServerPart
                    what="The mainline"
                    html=server_html(move || Mainline(MainlineProps { pos, history }).into_any())
                    load=Loader::new(move || split_points::mainline(MainlineProps { pos, history }))
                />
                <ServerPart
                    what="The FEN box"
                    html=server_html(move || FenBox(fen_box()).into_any())
                    load=Loader::new(move || split_points::fen_box(fen_box()))
                    load_when=left_first
                />
                // The statistics are the standard tables'.
                <Show when=move || url.variant.get() == Variant::Standard>
                    <ServerPart
                        what="The statistics"
                        html=server_html(move || Stats(StatsProps { placement: shown.placement.into() }).into_any())
                        load=Loader::new(move || split_points::stats(StatsProps { placement: shown.placement.into() }))
                        load_when=moved_from(shown.placement)
                    />
                </Show>
                <InstalledTables tables/>
            </div>
        </div>
    }
}

/// Flip, the editor's toggle, "Play this out", whose turn it is and the
/// halfmove clock, under the board. While editing, the editor's own Done
/// and Cancel are the ways out, so the toggle steps aside.
#[component]
fn BoardTools(
    orientation: RwSignal<Color>,
    mode: RwSignal<Mode>,
    editing: Memo<bool>,
    pos: Signal<Option<Game>>,
    variant: Memo<Variant>,
    /// The position on show, for the practice link.
    fen: Signal<String>,
    /// True once the page shows another position than the first: the clock
    /// is needed live.
    left_first: Signal<bool>,
) -> impl IntoView {
    // A link, so it works without JavaScript; an illegal position has none.
    let play_out = move || {
        (pos.with(Option::is_some) && !editing.get()).then(|| {
            view! {
                <a class="play-out button" href=practice_href(variant.get(), &fen.get()) title="Play this position out against the tablebase">
                    "▶ Play this out"
                </a>
            }
        })
    };
    view! {
        <div class="board-tools">
            <FlipButton orientation title="Flip the board (f)"/>
            <button class="edit js-only" title="Set up a position (e)" hidden=move || editing.get() on:click=move |_| mode.update(Mode::toggle_editor)>
                "✎ Editor"
            </button>
            {play_out}
            <span class="turn">{move || pos.get().map(|p| turn_text(p.turn()))}</span>
        </div>
        <ServerPart
            what="The halfmove clock"
            html=server_html(move || Clock(ClockProps { pos }).into_any())
            load=Loader::new(move || split_points::clock(ClockProps { pos }))
            load_when=left_first
        />
    }
}

/// True once the page shows another position or rules than the first, or
/// the editor is open: the parts the server rendered for the first position
/// are needed live from then on.
fn left_first(variant: Memo<Variant>, fen: Signal<String>, editing: Memo<bool>) -> Signal<bool> {
    let first_variant = variant.get_untracked();
    let first_fen = fen.get_untracked();
    Signal::derive(move || {
        editing.get() || variant.get() != first_variant || fen.with(|f| *f != first_fen)
    })
}

/// True once the board's material or placement differs from the first: a
/// part that follows the board is needed live from then on.
fn moved_from(placement: Memo<shakmaty::Board>) -> Signal<bool> {
    let first = placement.get_untracked();
    Signal::derive(move || placement.with(|p| *p != first))
}

/// The tab names the material and the side to move: "KRvK, white to move".
/// The server renders <title> after the page's reactive values may already
/// be disposed, so this falls back to the title of the position the page
/// was rendered for instead of panicking.
fn title(
    variant: Memo<Variant>,
    placement: Memo<shakmaty::Board>,
    parsed: Memo<Result<Game, String>>,
) -> impl Fn() -> String + Send + Sync + 'static {
    let first_title = page_title(
        variant.get_untracked(),
        &placement.get_untracked(),
        parsed.get_untracked().ok(),
    );
    move || match (variant.try_get(), placement.try_get(), parsed.try_get()) {
        (Some(v), Some(board), Some(pos)) => page_title(v, &board, pos.ok()),
        _ => first_title.clone(),
    }
}

/// The tab's title: the material and the side to move, "KRvK, white to move".
fn page_title(variant: Variant, board: &shakmaty::Board, pos: Option<Game>) -> String {
    let material = material::titled(variant, board);
    match pos {
        Some(p) => format!("{material}, {} to move — Zugzwang", color_name(p.turn())),
        None => "Illegal position — Zugzwang".to_string(),
    }
}
