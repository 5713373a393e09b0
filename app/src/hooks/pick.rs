//! A move picked from the list is shown together with its answer.
//!
//! Moving the board at the click and drawing the list when the answer comes
//! makes the renderer do two rounds of work back to back, and the answer,
//! which comes in a few milliseconds, waits behind the first round's
//! rendering: on a busy machine that wait was most of a click's time
//! (server/docs/benchmarks.md, "One render per click"). So the page waits
//! for the answer, asked at the click or already at the hover, and shows
//! the position and its list at once; after `WAIT` it shows the position
//! anyway, and the list follows as before.

use std::time::Duration;

use leptos::{prelude::*, task::spawn_local};

use crate::hooks::answers::Answers;

/// How long a picked move waits for its answer before the board moves
/// without it: well under what reads as a delay, well over a local answer.
const WAIT: Duration = Duration::from_millis(100);

/// The callback that shows a picked move's position (its FEN). `shown` is
/// the FEN on show: whatever shows another position first (back, a key, a
/// move on the board) drops a pick still waiting.
pub fn use_pick(answers: Answers, go: Callback<String>, shown: Memo<String>) -> Callback<String> {
    // The number of the latest pick; a waiting pick shows its position only
    // while it is still the latest.
    let latest = StoredValue::new(0u64);
    Effect::watch(
        move || shown.get(),
        move |_, _, _| latest.update_value(|n| *n += 1),
        false,
    );
    Callback::new(move |fen: String| {
        latest.update_value(|n| *n += 1);
        if answers.read(&fen, |_| ()).is_some() {
            go.run(fen);
            return;
        }
        // The request leaves now, not after the work this click queues.
        answers.prefetch(fen.clone());
        let ticket = latest.get_value();
        let show = {
            let fen = fen.clone();
            move || {
                if latest.get_value() == ticket {
                    latest.set_value(ticket + 1);
                    go.run(fen.clone());
                }
            }
        };
        set_timeout(show.clone(), WAIT);
        spawn_local(async move {
            answers.wait_for(fen).await;
            show();
        });
    })
}
