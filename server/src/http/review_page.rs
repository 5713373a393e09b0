//! The `/review` page: paste a PGN (or pick or drop a .pgn file), pick a
//! game of several, or open one from a link (`/review?fen=...&moves=...`,
//! the moves as practice keeps them), and see every move with its mark,
//! the moments the result changed hands, the chart and the counts per
//! side. Written by the server as plain HTML from the same review as the
//! API (`review`), so it costs the explorer's WASM nothing and works
//! without JavaScript: the form posts and the server answers with the
//! review. A few lines of script (with the page's nonce) read a dropped or
//! picked file into the text box and post the form when another game is
//! picked.

use std::{collections::HashMap, fmt::Write, sync::Arc};

use app::{
    components::line::movetext::data_url,
    favicon,
    game_review::{
        GameReview, MAX_BODY_BYTES, REVIEW_CHART_PATH, REVIEW_PATH, ReviewedPly, Verdict,
        annotate::annotated_pgn,
        game_of_link, nag_suffix,
        pgn::{GameTitle, PgnError, PgnGame, read_pgn},
    },
    practice::setup::practice_href,
    source::position_href,
    variant::Variant,
};
use axum::{
    Router,
    extract::{DefaultBodyLimit, Query, Request, State},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};

use super::{
    AppState,
    page_budget::PageBudget,
    review::{self, ReviewError, form_fields, game_index, review},
    security_headers,
};

/// `/review` (the page on GET and on a form's POST, the API on a PGN's
/// POST) and the chart, with the body capped and reviews run a few at a
/// time (half the cores, as practice pages render; `page_budget`).
pub fn routes(style: Option<Arc<str>>) -> Router<AppState> {
    let budget = Arc::new(PageBudget::for_this_machine());
    let page_style = style.clone();
    Router::new()
        .route(
            REVIEW_PATH,
            get(move |state, query, request| page(state, query, request, style.clone()))
                .post(move |state, query, request| post(state, query, request, page_style.clone()))
                .layer(axum::middleware::from_fn_with_state(
                    budget,
                    super::page_budget::layer,
                )),
        )
        .route(REVIEW_CHART_PATH, get(super::review_chart::chart))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

/// A browser's form is the page's: multipart (the page's own form), or
/// URL-encoded from a client asking for HTML. Any other body is a PGN for
/// the API, URL-encoded included: `curl --data-binary @game.pgn` sends
/// that type by default.
async fn post(
    state: State<AppState>,
    query: Query<HashMap<String, String>>,
    request: Request,
    style: Option<Arc<str>>,
) -> Response {
    let content_type = header_text(&request, header::CONTENT_TYPE);
    let wants_html = header_text(&request, header::ACCEPT).contains("text/html");
    if content_type.starts_with("multipart/form-data")
        || (content_type.starts_with("application/x-www-form-urlencoded") && wants_html)
    {
        return form_post(state, request, style).await;
    }
    match review::api(state, query, request, &content_type).await {
        Ok(response) => response,
        Err(err) => err.into_response(),
    }
}

/// A request header's value, lowercase; empty when absent.
fn header_text(request: &Request, name: header::HeaderName) -> String {
    request
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// `GET /review`: the form, or the review of the game in the URL (`moves`,
/// with `fen` and `variant`; or a whole `pgn`).
async fn page(
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
    request: Request,
    style: Option<Arc<str>>,
) -> Response {
    let nonce = nonce(&request);
    let page = match (query.get("moves"), query.get("pgn")) {
        (Some(moves), _) => {
            let variant = query
                .get("variant")
                .and_then(|v| v.parse().ok())
                .unwrap_or_default();
            match game_of_link(variant, query.get("fen").map(String::as_str), moves) {
                Ok(game) => {
                    let titles = [GameTitle {
                        index: 1,
                        title: "The game in the link".to_string(),
                    }];
                    reviewed(&state, None, &titles, 1, game).await
                }
                Err(err) => Page::failed(String::new(), StatusCode::BAD_REQUEST, err),
            }
        }
        (None, Some(pgn)) => {
            let game = query.get("game").map(String::as_str);
            from_pgn(&state, pgn.clone(), game).await
        }
        (None, None) => Page::empty(),
    };
    page.render(&nonce, style.as_deref())
}

/// `POST /review` from the page's form.
async fn form_post(
    State(state): State<AppState>,
    request: Request,
    style: Option<Arc<str>>,
) -> Response {
    let nonce = nonce(&request);
    let page = match form_fields(request).await {
        Ok((pgn, game)) => from_pgn(&state, pgn, game.as_deref()).await,
        Err(ReviewError(status, error)) => Page::failed(String::new(), status, error),
    };
    page.render(&nonce, style.as_deref())
}

fn nonce(request: &Request) -> String {
    security_headers::nonce_of(request.extensions())
        .map(|n| n.to_string())
        .unwrap_or_default()
}

async fn from_pgn(state: &AppState, pgn: String, game: Option<&str>) -> Page {
    let wanted = match game_index(game) {
        Ok(n) => n,
        Err(ReviewError(status, error)) => return Page::failed(pgn, status, error),
    };
    match read_pgn(&pgn, wanted) {
        Ok((titles, game)) => reviewed(state, Some(pgn), &titles, wanted, game).await,
        Err(err) => {
            let status = ReviewError::from(err.clone()).0;
            Page::failed(pgn, status, pgn_words(&err))
        }
    }
}

fn pgn_words(err: &PgnError) -> String {
    let text = err.to_string();
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

async fn reviewed(
    state: &AppState,
    pgn: Option<String>,
    titles: &[GameTitle],
    index: usize,
    game: PgnGame,
) -> Page {
    match review(state, titles, index, &game).await {
        Ok(review) => Page {
            // A link's game is shown as its PGN, to edit and post again.
            pgn: pgn.unwrap_or_else(|| annotated_pgn(&review)),
            status: StatusCode::OK,
            error: None,
            review: Some(review),
        },
        Err(err) => Page::failed(pgn.unwrap_or_default(), err.status(), err.to_string()),
    }
}

struct Page {
    pgn: String,
    status: StatusCode,
    error: Option<String>,
    review: Option<GameReview>,
}

impl Page {
    fn empty() -> Page {
        Page {
            pgn: String::new(),
            status: StatusCode::OK,
            error: None,
            review: None,
        }
    }

    fn failed(pgn: String, status: StatusCode, error: String) -> Page {
        Page {
            pgn,
            status,
            error: Some(error),
            review: None,
        }
    }

    fn render(&self, nonce: &str, site_style: Option<&str>) -> Response {
        let mut html = String::with_capacity(16 * 1024);
        let _ = write!(
            html,
            concat!(
                "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
                "<meta name=\"color-scheme\" content=\"light dark\">",
                "<title>Review a game — Zugzwang</title>",
                "<meta name=\"description\" content=\"Every endgame move of a game judged by the Syzygy tablebase.\">",
                "<link rel=\"icon\" type=\"image/png\" href=\"{icon}\">",
                "<style nonce=\"{nonce}\">{site}{own}</style></head><body>",
                "<header class=\"top\"><h1><a href=\"/\">Zugzwang</a></h1><p>Syzygy endgame explorer</p></header>",
                "<main class=\"review-page\"><h2>Review a game</h2>",
            ),
            icon = favicon::data_url(),
            nonce = esc(nonce),
            site = site_style.unwrap_or(""),
            own = STYLE,
        );
        self.form(&mut html);
        if let Some(error) = &self.error {
            let _ = write!(
                html,
                "<p class=\"review-error\" role=\"alert\">{}</p>",
                esc(error)
            );
        }
        if let Some(review) = &self.review {
            review_html(&mut html, review);
        }
        let _ = write!(
            html,
            "</main><script nonce=\"{}\">{SCRIPT}</script></body></html>",
            esc(nonce)
        );
        let mut response = (self.status, html).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        response
    }

    fn form(&self, html: &mut String) {
        let _ = write!(
            html,
            concat!(
                "<form class=\"review-form\" method=\"post\" action=\"{path}\" enctype=\"multipart/form-data\">",
                "<label for=\"review-pgn\">Paste a game's PGN, or drop a .pgn file on the box</label>",
                "<textarea id=\"review-pgn\" name=\"pgn\" rows=\"8\" spellcheck=\"false\" ",
                "placeholder=\"[FEN &quot;8/8/8/4k3/8/8/8/4K2R w - - 0 1&quot;]&#10;&#10;1. Rh7 Kd5 ...\">{pgn}</textarea>",
                "<div class=\"review-form-row\"><label>Or pick a file <input id=\"review-file\" type=\"file\" name=\"file\" accept=\".pgn,application/x-chess-pgn,text/plain\"></label>",
            ),
            path = REVIEW_PATH,
            pgn = esc(&self.pgn),
        );
        if let Some(review) = self.review.as_ref().filter(|r| r.games > 1) {
            let _ = write!(
                html,
                "<label>Game <select id=\"review-game\" name=\"game\">"
            );
            for (i, title) in review.titles.iter().enumerate() {
                let n = i + 1;
                let selected = if n == review.game { " selected" } else { "" };
                let _ = write!(
                    html,
                    "<option value=\"{n}\"{selected}>{n}. {}</option>",
                    esc(title)
                );
            }
            html.push_str("</select></label>");
        }
        html.push_str("<button class=\"primary\" type=\"submit\">Review</button></div></form>");
    }
}

/// The review itself: the story, the chart, the counts, then every move.
fn review_html(html: &mut String, review: &GameReview) {
    let title = review
        .titles
        .get(review.game - 1)
        .cloned()
        .unwrap_or_default();
    let _ = write!(
        html,
        "<section class=\"review-summary\"><h3>{}</h3>",
        esc(&title)
    );
    if let Some(error) = &review.error {
        let _ = write!(
            html,
            "<p class=\"review-error\" role=\"alert\">Read up to an error: {}</p>",
            esc(error)
        );
    }
    if let Some(note) = &review.not_judged {
        let _ = write!(html, "<p class=\"review-note\">{}</p>", esc(note));
    }
    moments_html(html, review);
    if let Some(chart) = &review.chart {
        let _ = write!(
            html,
            "<img class=\"review-chart\" src=\"{}\" width=\"600\" height=\"160\" alt=\"The result over the judged moves: above the line White wins, below Black wins, the height the moves to mate (DTZ where mate is not known); red lines mark where the result changed hands\">",
            esc(chart)
        );
    }
    counts_html(html, review);
    let _ = write!(
        html,
        concat!(
            "<p class=\"review-links\"><a id=\"review-download\" class=\"button\" download=\"review.pgn\" ",
            "href=\"{pgn}\">Download the annotated PGN</a> ",
            "<a id=\"review-link\" href=\"{link}\">Link to this review</a></p></section>",
        ),
        pgn = data_url("application/x-chess-pgn", &annotated_pgn(review)),
        link = esc(&review.link),
    );
    html.push_str("<ol class=\"review-moves\">");
    for ply in &review.plies {
        ply_html(html, review.variant, ply);
    }
    html.push_str("</ol>");
}

/// The moments the result changed hands, each a link to its move.
fn moments_html(html: &mut String, review: &GameReview) {
    if review.judged_from.is_none() {
        return;
    }
    html.push_str("<h4>Where the result changed hands</h4>");
    if review.moments.is_empty() {
        html.push_str(
            "<p class=\"review-moments-none\">Never: every judged move kept the result.</p>",
        );
        return;
    }
    html.push_str("<ul class=\"review-moments\">");
    for moment in &review.moments {
        let _ = write!(
            html,
            "<li><a href=\"#ply-{}\">{}</a></li>",
            moment.ply,
            esc(&moment.words)
        );
    }
    html.push_str("</ul>");
}

/// One move: a link to the position before it, its mark and words, and
/// "Play it out from here" where the tables reach.
fn ply_html(html: &mut String, variant: Variant, ply: &ReviewedPly) {
    let mark = ply.judgement.as_ref().map(|j| j.mark);
    let class = match (ply.verdict, mark) {
        (Verdict::BeforeTables, _) => "before",
        (_, Some(mark)) => mark.label(),
        (_, None) => "unjudged",
    };
    let _ = write!(
        html,
        concat!(
            "<li id=\"ply-{ply}\" class=\"review-ply {class}\" data-mark=\"{class}\">",
            "<a class=\"review-move\" href=\"{explore}\" title=\"The position before {label}, with every move\">{label}{nag}</a> ",
        ),
        ply = ply.ply,
        class = class,
        explore = esc(&position_href(variant, &ply.fen)),
        label = esc(&ply.label),
        nag = nag_suffix(ply.nag),
    );
    if ply.verdict == Verdict::BeforeTables {
        html.push_str("<span class=\"review-words\">before the tables' reach</span></li>");
        return;
    }
    let words = ply.words.as_deref().unwrap_or("");
    if let Some(mark) = mark {
        let _ = write!(
            html,
            "<span class=\"mark {0}\">{1} {0}</span> ",
            mark.label(),
            mark.icon(),
        );
    }
    // The mark says its word already ("slower"): the words go on from there.
    let words = mark
        .and_then(|m| words.strip_prefix(&format!("{}: ", m.label())))
        .unwrap_or(words);
    let _ = write!(
        html,
        "<span class=\"review-words\">{}</span> <a class=\"review-practice\" href=\"{}\">Play it out from here</a></li>",
        esc(words),
        esc(&practice_href(variant, &ply.fen)),
    );
}

fn counts_html(html: &mut String, review: &GameReview) {
    if review.judged_from.is_none() {
        return;
    }
    html.push_str(concat!(
        "<table class=\"review-counts\"><caption>Judged moves per side</caption>",
        "<tr><th scope=\"col\"></th><th scope=\"col\" class=\"mark best\">✓ best</th>",
        "<th scope=\"col\" class=\"mark slower\">≈ slower</th><th scope=\"col\" class=\"mark mistake\">✗ mistake</th>",
        "<th scope=\"col\">not judged</th></tr>",
    ));
    for (side, c) in [
        ("White", review.counts.white),
        ("Black", review.counts.black),
    ] {
        let _ = write!(
            html,
            "<tr><th scope=\"row\">{side}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            c.best, c.slower, c.mistake, c.not_judged
        );
    }
    html.push_str("</table>");
}

/// Escapes text for HTML (content and quoted attributes).
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = concat!(
    ".review-page{max-width:52rem}",
    ".review-form{display:flex;flex-direction:column;gap:.4rem}",
    ".review-form textarea{width:100%;box-sizing:border-box;font:0.9rem ui-monospace,monospace;padding:.4rem;",
    "background:var(--panel);color:var(--fg);border:1px solid var(--border);border-radius:4px}",
    ".review-form textarea.dragging{border-color:var(--accent);box-shadow:0 0 0 2px var(--accent)}",
    ".review-form-row{display:flex;flex-wrap:wrap;gap:.6rem;align-items:center}",
    ".review-error{color:var(--loss);background:var(--loss-bg);padding:.4rem .6rem;border-radius:4px}",
    ".review-note{color:var(--muted)}",
    ".review-moments{padding-left:1.2rem}.review-moments a{color:var(--loss)}",
    ".review-chart{display:block;max-width:100%;height:auto;margin:.6rem 0;background:var(--panel);border:1px solid var(--border);border-radius:4px}",
    ".review-counts{border-collapse:collapse;margin:.6rem 0}.review-counts caption{text-align:left;color:var(--muted)}",
    ".review-counts th,.review-counts td{padding:.2rem .6rem;border-bottom:1px solid var(--border);text-align:center}",
    ".review-links{display:flex;flex-wrap:wrap;gap:.8rem;align-items:center}",
    ".review-moves{list-style:none;padding:0;margin:.6rem 0}",
    ".review-ply{padding:.3rem 0;border-bottom:1px solid var(--border);display:flex;flex-wrap:wrap;gap:.2rem .5rem;align-items:baseline}",
    ".review-ply:target{background:var(--hover)}",
    ".review-ply.before{color:var(--muted)}",
    ".review-move{font-weight:600;min-width:5.5rem}",
    ".review-words{flex:1 1 16rem}",
    ".review-practice{font-size:.85rem}",
    "@media (max-width:40rem){.review-move{min-height:2.75rem;display:inline-flex;align-items:center}",
    ".review-counts th,.review-counts td{padding:.2rem .25rem;font-size:.85rem}",
    ".review-practice{min-height:2.75rem;display:inline-flex;align-items:center}}",
);

/// A dropped or picked file goes into the text box (the form posts it
/// either way); picking another game posts the form.
const SCRIPT: &str = concat!(
    "(function(){var t=document.getElementById('review-pgn'),f=document.getElementById('review-file'),",
    "g=document.getElementById('review-game');",
    "function read(file){file.text().then(function(s){t.value=s;f.value='';});}",
    "f.addEventListener('change',function(){if(f.files[0])read(f.files[0]);});",
    "t.addEventListener('dragover',function(e){e.preventDefault();t.classList.add('dragging');});",
    "t.addEventListener('dragleave',function(){t.classList.remove('dragging');});",
    "t.addEventListener('drop',function(e){e.preventDefault();t.classList.remove('dragging');",
    "var file=e.dataTransfer.files[0];if(file)read(file);});",
    "if(g)g.addEventListener('change',function(){f.value='';g.form.submit();});",
    "})();"
);
