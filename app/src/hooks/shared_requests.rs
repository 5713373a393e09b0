//! Requests on their way, each sent once: whoever asks for the same thing
//! while it is in flight waits for that request instead of sending another
//! (a click on a move whose answer its hover asked for a moment ago).

use std::{
    future::Future,
    task::{Context, Poll, Waker},
};

use futures_channel::oneshot;
use leptos::prelude::*;

/// What each request in flight asked for, and the callers waiting for it
/// (a list: a page has a request or two in flight, and a map of its own
/// was about 1 KB of the WASM).
pub struct InFlight<K, T>(StoredValue<Vec<(K, Vec<oneshot::Sender<T>>)>>)
where
    K: Send + Sync + 'static,
    T: Send + Sync + 'static;

// By hand: derived impls would ask `K` and `T` to be `Copy` too.
impl<K, T> Clone for InFlight<K, T>
where
    K: Send + Sync + 'static,
    T: Send + Sync + 'static,
{
    fn clone(&self) -> Self {
        *self
    }
}

impl<K, T> Copy for InFlight<K, T>
where
    K: Send + Sync + 'static,
    T: Send + Sync + 'static,
{
}

impl<K, T> Default for InFlight<K, T>
where
    K: Send + Sync + 'static,
    T: Send + Sync + 'static,
{
    fn default() -> Self {
        InFlight(StoredValue::new(Vec::new()))
    }
}

impl<K, T> InFlight<K, T>
where
    K: PartialEq + Clone + Send + Sync + 'static,
    T: Clone + Send + Sync + 'static,
{
    /// Waits for the result of `key`'s request, sending it (`request`, run
    /// to the end even if every caller stops waiting) unless it is in
    /// flight already. `None` if the page went away before it came.
    pub fn join<F>(self, key: K, request: impl FnOnce() -> F) -> impl Future<Output = Option<T>>
    where
        F: Future<Output = T> + 'static,
    {
        let (sender, receiver) = oneshot::channel();
        let first = self
            .0
            .try_update_value(|waiting| {
                if let Some((_, callers)) = waiting.iter_mut().find(|(k, _)| *k == key) {
                    callers.push(sender);
                    return false;
                }
                waiting.push((key.clone(), vec![sender]));
                true
            })
            .unwrap_or(false);
        if first {
            let mut request = Box::pin(request());
            // Polled once here, so a request asked for in an event handler
            // leaves now, not after the work that event queued before the
            // spawned task's first turn (a navigation's re-rendering).
            let now = request
                .as_mut()
                .poll(&mut Context::from_waker(Waker::noop()));
            leptos::task::spawn_local(async move {
                let result = match now {
                    Poll::Ready(result) => result,
                    Poll::Pending => request.await,
                };
                let callers = self
                    .0
                    .try_update_value(|waiting| {
                        let at = waiting.iter().position(|(k, _)| *k == key)?;
                        Some(waiting.swap_remove(at).1)
                    })
                    .flatten()
                    .unwrap_or_default();
                for caller in callers {
                    // A caller that stopped waiting has dropped its receiver.
                    let _ = caller.send(result.clone());
                }
            });
        }
        async move { receiver.await.ok() }
    }
}
