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
                EngineError::Overloaded(_)
                | EngineError::TooManyOpenFiles { .. }
                | EngineError::Stuck { .. }
                | EngineError::Unavailable { .. },
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
        // Overload is counted and reported once a second by the engine; a
        // suspect table is logged by the store when marked and when lifted,
        // and its refusals counted (`zugzwang_stuck_read_refusals_total`);
        // a remote source's failures are logged by the store with its URL
        // and counted (`zugzwang_remote_get_failures_total`).
        let quiet = matches!(
            self,
            HttpError::Engine(
                EngineError::Overloaded(_)
                    | EngineError::Stuck { .. }
                    | EngineError::Unavailable { .. }
            )
        );
        if status.is_server_error() && !quiet {
            tracing::error!(%status, "{self}");
        }
        let retry_after = match &self {
            HttpError::Engine(
                EngineError::Stuck {
                    retry_after_secs, ..
                }
                | EngineError::Unavailable {
                    retry_after_secs, ..
                },
            ) => *retry_after_secs,
            _ => 1,
        };
        let body = ApiError {
            error: self.to_string(),
        };
        let mut response = (status, Json(body)).into_response();
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(retry_after),
            );
        }
        response
    }
}
