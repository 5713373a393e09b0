//! Requests on their way, each sent once: whoever asks for the same thing
//! while it is in flight waits for that request instead of sending another
//! (a click on a move whose answer its hover asked for a moment ago).

use std::{
    collections::HashMap,
    future::Future,
    hash::Hash,
    task::{Context, Poll, Waker},
};

use futures_channel::oneshot;
use leptos::prelude::*;

/// The callers waiting for each request in flight, by what was asked.
pub struct InFlight<K, T>(StoredValue<HashMap<K, Vec<oneshot::Sender<T>>>>)
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
        InFlight(StoredValue::new(HashMap::new()))
    }
}

impl<K, T> InFlight<K, T>
where
    K: Eq + Hash + Clone + Send + Sync + 'static,
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
                let callers = waiting.entry(key.clone()).or_default();
                callers.push(sender);
                callers.len() == 1
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
                    .try_update_value(|waiting| waiting.remove(&key))
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
