//! How long-running library work (building the fast tier, checking whole
//! files against their digests, fetching tables) says how far it is.
//!
//! The library never prints: it reports here, and the command line draws a
//! bar on a terminal (`cli::output::Bar`); `serve`, tests and scripts pass
//! [`Silent`].

/// A listener for progress. Every method has a do-nothing default, so a
/// caller implements only what it shows.
pub trait Progress: Send + Sync {
    /// Work on `items` files totalling `bytes` begins.
    fn start(&self, _bytes: u64, _items: usize) {}
    /// What is being worked on now, e.g. `3/40 KQvK.rtbw`.
    fn message(&self, _text: &str) {}
    /// `bytes` more are done.
    fn advance(&self, _bytes: u64) {}
    /// `bytes` counted as done are to be done again (a download restarted).
    fn retract(&self, _bytes: u64) {}
    /// All work up to `bytes` is done (work skipped counts as done).
    fn set_position(&self, _bytes: u64) {}
    /// A file failed; the work goes on with the next one.
    fn problem(&self, _name: &str, _problem: &str) {}
    /// The work is over.
    fn finish(&self) {}
}

/// Progress nobody watches.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {}
