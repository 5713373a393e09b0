//! The per-request deadline: a request stuck behind a failing disk gets an
//! error answer in bounded time instead of holding its client (and a
//! connection slot) for as long as the disk takes.

use std::{sync::Arc, time::Duration};

use axum::{
    Router,
    extract::{Request, State},
    middleware::{self, Next},
    response::{IntoResponse, Response},
};

use super::{
    error::HttpError,
    request_metrics::{self, RequestMetrics},
    security_headers,
};

#[derive(Clone)]
struct Deadline {
    after: Duration,
    metrics: Arc<RequestMetrics>,
}

/// Wraps every route of `router` in the deadline. It covers the work up to
/// the response head; streaming a body to a slow reader is the connection's
/// idle timeout's business. The 504s it answers are recorded in `metrics`
/// here: the request metrics layer inside is dropped with the late request
/// and never sees them.
pub fn layer(router: Router, deadline: Duration, metrics: Arc<RequestMetrics>) -> Router {
    let deadline = Deadline {
        after: deadline,
        metrics,
    };
    router.layer(middleware::from_fn_with_state(deadline, enforce))
}

async fn enforce(State(deadline): State<Deadline>, request: Request, next: Next) -> Response {
    let route = request_metrics::route_of(&request);
    match tokio::time::timeout(deadline.after, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            deadline
                .metrics
                .record_past_deadline(&route, deadline.after);
            // Made outside the router, whose layers add these to the rest.
            let mut response = HttpError::Deadline(deadline.after).into_response();
            security_headers::stamp(response.headers_mut());
            response
        }
    }
}
