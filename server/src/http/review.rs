//! `POST /review`: a game's PGN reviewed by the tablebase, every move of
//! both sides from the first position the tables cover judged as practice
//! judges the player's (`app::game_review`). JSON by default, CBOR as the
//! rest of the API, the annotated PGN with `Accept: application/x-chess-pgn`.
//! The `/review` page (`review_page`) shows the same review.
//!
//! Bounded as the other routes are: the body (`MAX_BODY_BYTES`), the games
//! in it (`MAX_GAMES`) and the plies of the game (`MAX_PLIES`) are capped,
//! the positions are probed a few at a time through the engine's admission
//! (`--max-pending`), reviews run a few at a time as practice pages
//! render (`page_budget`, in `review_page::routes`), and probing stops
//! after [`PROBE_BUDGET`]: the plies left are "not judged", said in the
//! answer, well within the request deadline.

use std::{collections::HashMap, time::Duration};

use app::{
    api::{ApiError, TablebaseAnswer},
    game_review::{
        self, GameReview, MAX_BODY_BYTES, PGN_MEDIA_TYPE, REVIEW_PATH,
        annotate::annotated_pgn,
        pgn::{GameTitle, PgnError, PgnGame, read_pgn},
    },
    variant::{Variant, parse_variant_fen},
};
use axum::{
    Json,
    extract::{FromRequest, Multipart, Query, Request, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use futures::{StreamExt, stream};

use super::{AppState, error::HttpError, metrics};
use crate::engine::EngineError;

/// Probing a review's positions stops after this long; the plies left are
/// answered "not judged" (the request deadline, 10 s by default, is
/// further away).
pub const PROBE_BUDGET: Duration = Duration::from_secs(5);

/// Positions probed at once for one review.
const AT_ONCE: usize = 4;

const CBOR: &str = "application/cbor";

/// What went wrong with a review request: a status and words.
pub struct ReviewError(pub StatusCode, pub String);

impl IntoResponse for ReviewError {
    fn into_response(self) -> Response {
        (self.0, Json(ApiError { error: self.1 })).into_response()
    }
}

impl From<PgnError> for ReviewError {
    fn from(err: PgnError) -> Self {
        let status = match err {
            PgnError::TooManyGames | PgnError::TooLong { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            _ => StatusCode::BAD_REQUEST,
        };
        ReviewError(status, err.to_string())
    }
}

impl From<HttpError> for ReviewError {
    fn from(err: HttpError) -> Self {
        ReviewError(err.status(), err.to_string())
    }
}

/// The API's answer to a PGN body.
pub async fn api(
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
    request: Request,
    content_type: &str,
) -> Result<Response, ReviewError> {
    let media = content_type.split(';').next().unwrap_or("").trim();
    let pgn_types = [
        "",
        PGN_MEDIA_TYPE,
        "text/plain",
        "application/vnd.chess-pgn",
        // curl's default for --data-binary: the body as it is, not a form.
        "application/x-www-form-urlencoded",
    ];
    if !pgn_types.contains(&media) {
        return Err(ReviewError(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("send the PGN as {PGN_MEDIA_TYPE} or text/plain, not {media}"),
        ));
    }
    let headers = request.headers().clone();
    let text = String::from_request(request, &())
        .await
        .map_err(|err| body_error(err.status(), &err.body_text()))?;
    let wanted = game_index(query.get("game").map(String::as_str))?;
    let (titles, game) = read_pgn(&text, wanted)?;
    if let Some(error) = &game.error {
        return Err(ReviewError(StatusCode::BAD_REQUEST, error.clone()));
    }
    let (review, reads) = metrics::counting_reads(
        &state.requests,
        REVIEW_PATH,
        review(&state, &titles, wanted, &game),
    )
    .await;
    let review = review?;
    let mut response = encode(&headers, &review);
    response.headers_mut().insert(metrics::PROBE_READS, reads);
    Ok(response)
}

/// A body too large or not text, in the API's words.
pub fn body_error(status: StatusCode, detail: &str) -> ReviewError {
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        ReviewError(
            status,
            format!("the PGN is larger than {} KiB", MAX_BODY_BYTES / 1024),
        )
    } else {
        ReviewError(status, format!("the PGN cannot be read: {detail}"))
    }
}

/// The `game` parameter: 1 for the first (the default).
pub fn game_index(param: Option<&str>) -> Result<usize, ReviewError> {
    match param.map(str::trim).filter(|p| !p.is_empty()) {
        None => Ok(1),
        Some(p) => p.parse().ok().filter(|&n| n >= 1).ok_or_else(|| {
            ReviewError(
                StatusCode::BAD_REQUEST,
                format!("game={p}: give the game's number in the PGN, 1 for the first"),
            )
        }),
    }
}

/// The review of one game: its positions from the first the tables cover
/// probed, a few at a time, until [`PROBE_BUDGET`] runs out. Overload is
/// the request's (503), a failing table only its plies'.
pub async fn review(
    state: &AppState,
    titles: &[GameTitle],
    index: usize,
    game: &PgnGame,
) -> Result<GameReview, HttpError> {
    let max_pieces = state.engine.max_pieces_of(game.variant);
    let from = game_review::first_covered(game, max_pieces);
    let fens = game_review::positions_to_judge(game, from);
    let answers = probe_all(state, game.variant, fens).await?;
    let installed = state.engine.installed_tables(game.variant);
    Ok(game_review::assemble(
        titles,
        index,
        game,
        (max_pieces, &installed),
        &answers,
    ))
}

async fn probe_all(
    state: &AppState,
    variant: Variant,
    fens: Vec<String>,
) -> Result<Vec<Result<TablebaseAnswer, String>>, HttpError> {
    let engine = &state.engine;
    let deadline = tokio::time::Instant::now() + PROBE_BUDGET;
    let mut answers = stream::iter(fens)
        .map(|fen| async move {
            let pos = parse_variant_fen(variant, &fen)?;
            Ok::<_, HttpError>(engine.probe(pos).await)
        })
        .buffered(AT_ONCE);
    let mut out = Vec::new();
    while let Ok(Some(answer)) = tokio::time::timeout_at(deadline, answers.next()).await {
        match answer? {
            Ok(answer) => out.push(Ok(answer.as_ref().clone())),
            Err(
                err @ (EngineError::Overloaded(_)
                | EngineError::Stuck { .. }
                | EngineError::Unavailable { .. }),
            ) => {
                return Err(err.into());
            }
            Err(err) => out.push(Err(err.to_string())),
        }
    }
    Ok(out)
}

/// What the client asked for: the annotated PGN, CBOR, or JSON.
fn encode(headers: &HeaderMap, review: &GameReview) -> Response {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if accept.contains(PGN_MEDIA_TYPE) {
        return (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/x-chess-pgn; charset=utf-8"),
            )],
            annotated_pgn(review),
        )
            .into_response();
    }
    if !accept.contains(CBOR) {
        return Json(review).into_response();
    }
    let mut bytes = Vec::new();
    if let Err(err) = ciborium::into_writer(review, &mut bytes) {
        return HttpError::Engine(EngineError::Internal(format!("cannot encode CBOR: {err}")))
            .into_response();
    }
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(CBOR))],
        bytes,
    )
        .into_response()
}

/// The PGN and game number of the page's form (a file picked wins over
/// the text box).
pub async fn form_fields(request: Request) -> Result<(String, Option<String>), ReviewError> {
    let is_multipart = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("multipart/"));
    let mut fields: HashMap<String, String> = HashMap::new();
    if is_multipart {
        let mut multipart = Multipart::from_request(request, &())
            .await
            .map_err(|err| body_error(err.status(), &err.body_text()))?;
        while let Some(field) = multipart
            .next_field()
            .await
            .map_err(|err| body_error(err.status(), &err.body_text()))?
        {
            let name = field.name().unwrap_or("").to_string();
            let text = field
                .text()
                .await
                .map_err(|err| body_error(err.status(), &err.body_text()))?;
            fields.insert(name, text);
        }
    } else {
        let axum::Form(form) = axum::Form::<HashMap<String, String>>::from_request(request, &())
            .await
            .map_err(|err| body_error(err.status(), &err.body_text()))?;
        fields = form;
    }
    let file = fields.remove("file").filter(|f| !f.trim().is_empty());
    let pgn = file.or_else(|| fields.remove("pgn")).unwrap_or_default();
    Ok((pgn, fields.remove("game")))
}
