//! Reads that refuse to wait for a disk.
//!
//! A probe whose bytes are all in memory takes microseconds, and handing it
//! to a blocking thread costs more than the probe itself (futex wake, two
//! context switches, park: two thirds of the hot CPU, see
//! server/docs/benchmarks.md). So the engine first probes on the async
//! worker inside [`without_waiting`]: there every read must come from memory
//! (the page cache through `RWF_NOWAIT`, or the process's own caches), and
//! one that would have to wait for a disk, or open a file, fails at once
//! with [`WouldWait`]. Only the probes that failed so go to the blocking
//! pool, all together, so a cold request's reads still reach the disks at
//! the same time.
//!
//! The mode is per thread, because the layers that read (the tiered store,
//! the pread files) sit under shakmaty-syzygy, which cannot pass it down.

use std::{cell::Cell, io};

thread_local! {
    static REFUSING: Cell<bool> = const { Cell::new(false) };
}

/// A read that would have had to wait for a disk, refused inside
/// [`without_waiting`]. Never an answer to a client: the probe is made again
/// on the blocking pool.
#[derive(Debug, thiserror::Error)]
#[error("the read would have to wait for the disk")]
pub struct WouldWait;

/// Runs `work` with every read on this thread refusing to wait.
pub fn without_waiting<T>(work: impl FnOnce() -> T) -> T {
    /// Restores the mode even if `work` panics (the engine catches probe
    /// panics and goes on with this thread).
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            REFUSING.with(|r| r.set(self.0));
        }
    }
    let _restore = Restore(REFUSING.with(|r| r.replace(true)));
    work()
}

/// Whether reads on this thread must not wait (inside [`without_waiting`]).
pub fn refusing() -> bool {
    REFUSING.with(Cell::get)
}

/// The error a refused read returns.
pub fn would_wait() -> io::Error {
    io::Error::new(io::ErrorKind::WouldBlock, WouldWait)
}

/// Whether `err` is (or wraps) a refused read.
pub fn is_would_wait(err: &io::Error) -> bool {
    err.get_ref().is_some_and(|inner| inner.is::<WouldWait>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_holds_inside_only_and_survives_a_panic() {
        assert!(!refusing());
        assert!(without_waiting(refusing));
        assert!(!refusing());
        let caught = std::panic::catch_unwind(|| without_waiting(|| panic!("probe failed")));
        assert!(caught.is_err());
        assert!(!refusing(), "a panic must not leave the thread refusing");
    }

    #[test]
    fn a_refused_read_is_told_from_other_errors() {
        assert!(is_would_wait(&would_wait()));
        assert!(!is_would_wait(&io::Error::from(io::ErrorKind::WouldBlock)));
        assert!(!is_would_wait(&io::Error::other("disk on fire")));
    }
}
