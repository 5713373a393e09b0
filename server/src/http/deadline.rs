//! The per-request deadline: a request stuck behind a failing disk gets an
//! error answer in bounded time instead of holding its client (and a
//! connection slot) for as long as the disk takes.

use std::time::Duration;

use axum::{
    Router,
    extract::{Request, State},
    middleware::{self, Next},
    response::{IntoResponse, Response},
};

use super::error::HttpError;

/// Wraps every route of `router` in the deadline. It covers the work up to
/// the response head; streaming a body to a slow reader is the connection's
/// idle timeout's business.
pub fn layer(router: Router, deadline: Duration) -> Router {
    router.layer(middleware::from_fn_with_state(deadline, enforce))
}

async fn enforce(State(deadline): State<Duration>, request: Request, next: Next) -> Response {
    match tokio::time::timeout(deadline, next.run(request)).await {
        Ok(response) => response,
        Err(_) => HttpError::Deadline(deadline).into_response(),
    }
}
