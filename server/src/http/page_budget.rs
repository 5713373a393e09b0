//! Practice pages rendered a few at a time. A long game's page is some
//! milliseconds of CPU on the server (the game replayed, its record
//! written), where an API answer from memory is a fraction of one; rendered
//! all at once, a few clients reloading long games would take every core
//! from the API. So at most half the cores render practice pages, the
//! others wait for a turn (waiting costs nothing), and past a queue of
//! [`MAX_WAITING`] a page is refused with 503 and `Retry-After`, as the
//! engine refuses answers past `--max-pending`.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering::Relaxed},
};

use axum::{
    extract::{Request, State},
    http::{HeaderValue, StatusCode, header::RETRY_AFTER},
    middleware::Next,
    response::{IntoResponse, Response},
};
use tokio::sync::Semaphore;

/// Pages that may wait for a turn before more are refused.
pub const MAX_WAITING: usize = 64;

/// The turns to render, and the pages rendering or waiting for one.
#[derive(Debug)]
pub struct PageBudget {
    turns: Semaphore,
    inside: AtomicUsize,
    /// Pages rendering and waiting together, at most.
    capacity: usize,
}

impl PageBudget {
    /// `renders` pages at once (at least one), `max_waiting` more waiting.
    pub fn new(renders: usize, max_waiting: usize) -> PageBudget {
        PageBudget {
            turns: Semaphore::new(renders.max(1)),
            inside: AtomicUsize::new(0),
            capacity: renders.max(1) + max_waiting,
        }
    }

    /// Half this machine's cores render, the others stay free for the API.
    pub fn for_this_machine() -> PageBudget {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        PageBudget::new(cores / 2, MAX_WAITING)
    }
}

/// Renders the page when its turn comes, or refuses it when too many wait.
pub async fn layer(
    State(budget): State<Arc<PageBudget>>,
    request: Request,
    next: Next,
) -> Response {
    // Counted before waiting, so a burst cannot all slip past the bound.
    if budget.inside.fetch_add(1, Relaxed) >= budget.capacity {
        budget.inside.fetch_sub(1, Relaxed);
        return refused();
    }
    // Left however the request ends, the client gone included.
    let _inside = Inside(&budget);
    let Ok(_turn) = budget.turns.acquire().await else {
        return refused();
    };
    next.run(request).await
}

/// A page counted among those rendering or waiting, until dropped.
struct Inside<'a>(&'a PageBudget);

impl Drop for Inside<'_> {
    fn drop(&mut self) {
        self.0.inside.fetch_sub(1, Relaxed);
    }
}

fn refused() -> Response {
    let mut response = (
        StatusCode::SERVICE_UNAVAILABLE,
        "Too many practice pages are being prepared right now; try again in a moment.",
    )
        .into_response();
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::{Router, body::Body, routing::get};
    use tower::ServiceExt;

    use super::*;

    #[tokio::test]
    async fn pages_past_the_queue_are_refused_and_the_rest_wait_their_turn() {
        let budget = Arc::new(PageBudget::new(1, 1));
        let router = Router::new().route(
            "/practice",
            get(|| async {
                tokio::time::sleep(Duration::from_millis(200)).await;
                "page"
            })
            .layer(axum::middleware::from_fn_with_state(budget, layer)),
        );
        let get = || {
            let router = router.clone();
            tokio::spawn(async move {
                let request = Request::get("/practice")
                    .body(Body::empty())
                    .expect("request");
                router.oneshot(request).await.expect("answer")
            })
        };
        // One renders, one waits, the third is refused at once.
        let (first, second) = (get(), get());
        tokio::time::sleep(Duration::from_millis(50)).await;
        let third = get().await.expect("task");
        assert_eq!(third.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(third.headers()[RETRY_AFTER], "1");
        assert_eq!(first.await.expect("task").status(), StatusCode::OK);
        assert_eq!(second.await.expect("task").status(), StatusCode::OK);
        // Once they are done, a page renders again.
        assert_eq!(get().await.expect("task").status(), StatusCode::OK);
    }
}
