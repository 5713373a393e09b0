//! "Show line": the DTZ-optimal line from the current position, stepped
//! through on the board and downloadable as PGN with the start FEN.
//!
//! The line comes from `/standard/mainline` once; stepping only changes the
//! URL (each step is a shareable position), and the line stays on show while
//! the board is on one of its positions.

use leptos::{prelude::*, task::spawn_local};
use shakmaty::{Chess, Color, Position, Square, uci::UciMove};

use crate::{
    components::board::move_squares,
    position::{parse_fen, to_fen},
    source::{fetch_mainline, position_href},
};

/// One fetched line: the start and the positions after each step.
#[derive(Clone, Debug, PartialEq)]
struct Line {
    start: String,
    steps: Vec<Step>,
    winner: Option<String>,
}

/// One move of the line and the position after it.
#[derive(Clone, Debug, PartialEq)]
struct Step {
    san: String,
    fen: String,
    /// The move's squares, to highlight it as the last move.
    squares: Option<(Square, Square)>,
}

impl Line {
    /// Where the board is in the line: 0 = start, i = after step i.
    fn index_of(&self, fen: &str) -> Option<usize> {
        if self.start == fen {
            return Some(0);
        }
        self.steps.iter().position(|s| s.fen == fen).map(|i| i + 1)
    }

    /// The position at an index, and the move that led there (for highlighting).
    fn at(&self, index: usize) -> (String, Option<(Square, Square)>) {
        match index.checked_sub(1).and_then(|i| self.steps.get(i)) {
            Some(step) => (step.fen.clone(), step.squares),
            None => (self.start.clone(), None),
        }
    }

    /// The line as PGN, starting from its FEN.
    fn pgn(&self) -> String {
        let result = match self.winner.as_deref() {
            Some("w") => "1-0",
            Some("b") => "0-1",
            _ => "1/2-1/2",
        };
        let start = parse_fen(&self.start).ok();
        let (mut number, mut turn) = start
            .as_ref()
            .map(|p| (p.fullmoves().get(), p.turn()))
            .unwrap_or((1, Color::White));
        let mut moves = String::new();
        for (i, Step { san, .. }) in self.steps.iter().enumerate() {
            if turn == Color::White {
                moves.push_str(&format!("{number}. "));
            } else if i == 0 {
                moves.push_str(&format!("{number}... "));
            }
            moves.push_str(san);
            moves.push(' ');
            if turn == Color::Black {
                number += 1;
            }
            turn = turn.other();
        }
        format!(
            "[Event \"Zugzwang DTZ mainline\"]\n[Site \"Zugzwang\"]\n[Result \"{result}\"]\n[SetUp \"1\"]\n[FEN \"{}\"]\n\n{moves}{result}\n",
            self.start
        )
    }
}

/// Builds the line's positions from the API's UCI moves.
fn build_line(start: &Chess, answer: crate::api::MainlineAnswer) -> Line {
    let mut pos = start.clone();
    let mut steps = Vec::new();
    for step in answer.mainline {
        let Some(m) = step
            .uci
            .parse::<UciMove>()
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
        else {
            break;
        };
        let squares = move_squares(&m);
        pos.play_unchecked(m);
        steps.push(Step {
            san: step.san,
            fen: to_fen(&pos),
            squares,
        });
    }
    Line {
        start: to_fen(start),
        steps,
        winner: answer.winner,
    }
}

/// Percent-encodes text for a `data:` URL.
fn data_url(mime: &str, text: &str) -> String {
    let mut out = format!("data:{mime};charset=utf-8,");
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[component]
pub fn Mainline(
    #[prop(into)] pos: Signal<Option<Chess>>,
    /// Shows a position of the line: its FEN and the move that led there.
    on_go: Callback<(String, Option<(Square, Square)>)>,
) -> impl IntoView {
    let line = RwSignal::new(None::<Line>);
    let loading = RwSignal::new(false);
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

    let show = move |_| {
        let Some(start) = pos.get_untracked() else {
            return;
        };
        loading.set(true);
        error.set(None);
        spawn_local(async move {
            match fetch_mainline(to_fen(&start)).await {
                Ok(answer) => line.set(Some(build_line(&start, answer))),
                Err(err) => error.set(Some(err.error)),
            }
            loading.set(false);
        });
    };
    let body = move || {
        let Some(i) = index.get() else {
            return view! {
                <button
                    class="show-line"
                    on:click=show
                    disabled=move || loading.get() || pos.with(|p| p.is_none())
                >
                    {move || if loading.get() { "Loading line…" } else { "Show line" }}
                </button>
            }
            .into_any();
        };
        match line.get() {
            Some(l) => line_view(&l, i, line, on_go),
            None => ().into_any(),
        }
    };

    view! {
        <section class="mainline js-only">
            <h2>"DTZ mainline"</h2>
            {body}
            {move || error.get().map(|e| view! { <p class="line-error" role="alert">{e}</p> })}
        </section>
    }
}

/// The line on show with the board at step `i`: its moves, the buttons to
/// step through it, the PGN and the outcome.
fn line_view(
    l: &Line,
    i: usize,
    line: RwSignal<Option<Line>>,
    on_go: Callback<(String, Option<(Square, Square)>)>,
) -> AnyView {
    let n = l.steps.len();
    let outcome = match l.winner.as_deref() {
        Some("w") => "White wins",
        Some("b") => "Black wins",
        _ => "Draw",
    };
    let steps = l
        .steps
        .iter()
        .enumerate()
        .map(|(k, Step { san, fen, .. })| {
            let class = if k + 1 == i { "step current" } else { "step" };
            view! {
                <li>
                    <a class=class href=position_href(fen)>
                        {san.clone()}
                    </a>
                </li>
            }
        })
        .collect_view();
    view! {
        <div class="line">
            {line_nav(l, i, line, on_go)}
            <ol class="line-moves">{steps}</ol>
            <p class="line-outcome">{format!("{outcome} after {n} plies")}</p>
        </div>
    }
    .into_any()
}

/// Start, back, where the board is, next, end, the PGN and closing.
fn line_nav(
    l: &Line,
    i: usize,
    line: RwSignal<Option<Line>>,
    on_go: Callback<(String, Option<(Square, Square)>)>,
) -> impl IntoView {
    let n = l.steps.len();
    let pgn = data_url("application/x-chess-pgn", &l.pgn());
    let go = move |target: usize| {
        if let Some(step) = line.with_untracked(|l| l.as_ref().map(|l| l.at(target))) {
            on_go.run(step);
        }
    };
    let last = move || line.with_untracked(|l| l.as_ref().map(|l| l.steps.len()).unwrap_or(0));
    view! {
        <div class="line-nav">
            <button class="line-start" on:click=move |_| go(0) disabled={i == 0} title="Start">
                "⏮"
            </button>
            <button class="line-prev" on:click=move |_| go(i.saturating_sub(1)) disabled={i == 0} title="Back">
                "◀"
            </button>
            <span class="line-pos">{format!("{i} / {n}")}</span>
            <button class="line-next" on:click=move |_| go((i + 1).min(last())) disabled={i >= n} title="Next">
                "▶"
            </button>
            <button class="line-end" on:click=move |_| go(last()) disabled={i >= n} title="End">
                "⏭"
            </button>
            <a class="pgn" href=pgn download="zugzwang-line.pgn">
                "Download PGN"
            </a>
            <button class="line-close" on:click=move |_| line.set(None) title="Hide the line">
                "✕"
            </button>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgn_numbers_moves_from_black() {
        let line = Line {
            start: "8/8/8/8/8/2k5/8/K1Q5 b - - 0 7".to_string(),
            steps: vec![
                Step {
                    san: "Kb3".into(),
                    fen: String::new(),
                    squares: None,
                },
                Step {
                    san: "Qc2+".into(),
                    fen: String::new(),
                    squares: None,
                },
            ],
            winner: Some("w".into()),
        };
        let pgn = line.pgn();
        assert!(
            pgn.contains("[FEN \"8/8/8/8/8/2k5/8/K1Q5 b - - 0 7\"]"),
            "{pgn}"
        );
        assert!(pgn.contains("7... Kb3 8. Qc2+ 1-0"), "{pgn}");
    }
}
