//! Error answers: a status and a JSON body `{"error": "..."}` naming the problem.

use app::{api::ApiError, position::FenError, variant::UnknownVariant};
use axum::{
    Json,
    http::StatusCode,
    response::{IntoResponse, Response},
};

use crate::engine::EngineError;

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(transparent)]
    Fen(#[from] FenError),
    /// A `variant` parameter naming none of the three.
    #[error(transparent)]
    Variant(#[from] UnknownVariant),
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// Past the request deadline: most likely a table disk is slow or failing.
    #[error(
        "no answer within the request deadline of {:.1} s (a table disk may be slow or failing)",
        .0.as_secs_f64()
    )]
    Deadline(std::time::Duration),
}

impl HttpError {
    pub fn status(&self) -> StatusCode {
        match self {
            HttpError::Fen(_) | HttpError::Variant(_) => StatusCode::BAD_REQUEST,
            HttpError::Engine(EngineError::NotInTables(_)) => StatusCode::NOT_FOUND,
            HttpError::Engine(
                EngineError::Overloaded(_) | EngineError::TooManyOpenFiles { .. },
            ) => StatusCode::SERVICE_UNAVAILABLE,
            HttpError::Engine(
                EngineError::Table { .. }
                | EngineError::ProbePanicked { .. }
                | EngineError::Internal(_),
            ) => StatusCode::INTERNAL_SERVER_ERROR,
            HttpError::Deadline(_) => StatusCode::GATEWAY_TIMEOUT,
        }
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let status = self.status();
        // Overload is counted and reported once a second by the engine.
        let shed = matches!(self, HttpError::Engine(EngineError::Overloaded(_)));
        if status.is_server_error() && !shed {
            tracing::error!(%status, "{self}");
        }
        let body = ApiError {
            error: self.to_string(),
        };
        let mut response = (status, Json(body)).into_response();
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from_static("1"),
            );
        }
        response
    }
}
