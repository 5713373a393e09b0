//! Concurrent misses on the same window of a table read it once.
//!
//! The probes of one request run in parallel and often need the same
//! read-around window at the same moment: with the page cache dropped
//! every second, 61 % of the reads that waited for the disk were waiting
//! for a window another probe of the same request was reading already
//! (server/docs/benchmarks.md, "Tables larger than RAM: where the disk
//! reads go"). Each of them would make a window read of its own and rely
//! on the page cache to merge them, which the kernel mostly does; here the
//! first reader of a window reads it, and those who ask for it meanwhile
//! wait for that read and share its bytes, whatever the kernel does.
//!
//! Nothing is kept once the read is done: this is not a cache. A failed or
//! short read is shared as a failure, and each waiter then makes its own
//! plain read, which reports the error properly.
//!
//! A waiter waits at most until the read has been out for the caller's
//! patience (`--stuck-read-secs`), then gives up ([`Role::GaveUp`]) and the
//! caller answers with an error naming the table rather than reading the
//! window itself: a read that has not returned by then is most likely
//! stuck on a failing or hung disk, and a read of its own would go to the
//! same disk and hold one more probe thread behind it, the very spreading
//! this bounds. Giving up costs the client a retry (503, `Retry-After`); by
//! then the first read has usually landed in the page cache, if it ever
//! does.

use std::{
    collections::HashMap,
    sync::{Arc, Condvar, Mutex},
    time::{Duration, Instant},
};

use crate::sync::{self, lock};

/// A window of one open file: the file's id in the handle pool and the
/// window's first byte.
pub type Key = (u64, u64);

/// The bytes of a window read, or `None` when the read failed.
pub type Window = Option<Arc<Vec<u8>>>;

/// Whether the caller read the window, waited for another's read, or
/// gave up waiting for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Read,
    Joined,
    /// The read waited for was out for the whole patience and still is:
    /// the window is `None`.
    GaveUp,
}

struct Flight {
    started: Instant,
    result: Mutex<Option<Window>>,
    done: Condvar,
}

/// The reads in progress.
#[derive(Default)]
pub struct Flights {
    reading: Mutex<HashMap<Key, Arc<Flight>>>,
}

impl Flights {
    /// The window `key`: read with `read` if nobody is reading it, else
    /// the bytes of the read in progress once it is done, waiting until
    /// that read has been out for `patience` at most.
    pub fn read(
        &self,
        key: Key,
        patience: Duration,
        read: impl FnOnce() -> Window,
    ) -> (Window, Role) {
        let (flight, first) = {
            let mut reading = lock(&self.reading);
            match reading.get(&key) {
                Some(flight) => (Arc::clone(flight), false),
                None => {
                    let flight = Arc::new(Flight {
                        started: Instant::now(),
                        result: Mutex::new(None),
                        done: Condvar::new(),
                    });
                    reading.insert(key, Arc::clone(&flight));
                    (flight, true)
                }
            }
        };
        if !first {
            return match wait(&flight, patience) {
                Some(window) => (window, Role::Joined),
                None => (None, Role::GaveUp),
            };
        }
        // Publishes and retires the flight even if `read` panics, so that
        // no waiter waits forever.
        let mut landing = Landing {
            flights: self,
            key,
            flight: &flight,
            window: None,
        };
        landing.window = read();
        let window = landing.window.clone();
        drop(landing);
        (window, Role::Read)
    }

    /// Windows being read now.
    pub fn in_progress(&self) -> usize {
        lock(&self.reading).len()
    }
}

/// The flight's window once it lands; `None` if it is still out when the
/// flight has been out for `patience`.
fn wait(flight: &Flight, patience: Duration) -> Option<Window> {
    let until = flight.started + patience;
    let mut result = lock(&flight.result);
    loop {
        if let Some(window) = result.as_ref() {
            return Some(window.clone());
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        result = sync::wait_timeout(&flight.done, result, left).0;
    }
}

/// Ends a flight: its result to the waiters, its key out of the map.
struct Landing<'a> {
    flights: &'a Flights,
    key: Key,
    flight: &'a Flight,
    window: Window,
}

impl Drop for Landing<'_> {
    fn drop(&mut self) {
        lock(&self.flights.reading).remove(&self.key);
        *lock(&self.flight.result) = Some(self.window.take());
        self.flight.done.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::{
        sync::{
            Barrier,
            atomic::{AtomicUsize, Ordering},
        },
        thread,
        time::Duration,
    };

    use super::*;

    /// Far longer than any read of these tests.
    const PATIENCE: Duration = Duration::from_secs(60);

    #[test]
    fn concurrent_readers_of_one_window_share_one_read() {
        let flights = Arc::new(Flights::default());
        let reads = Arc::new(AtomicUsize::new(0));
        let barrier = Arc::new(Barrier::new(8));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (flights, reads, barrier) = (
                    Arc::clone(&flights),
                    Arc::clone(&reads),
                    Arc::clone(&barrier),
                );
                thread::spawn(move || {
                    barrier.wait();
                    flights.read((1, 0), PATIENCE, || {
                        reads.fetch_add(1, Ordering::SeqCst);
                        // Long enough for every thread to arrive meanwhile.
                        thread::sleep(Duration::from_millis(200));
                        Some(Arc::new(vec![7; 16]))
                    })
                })
            })
            .collect();
        let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(reads.load(Ordering::SeqCst), 1);
        assert_eq!(results.iter().filter(|(_, r)| *r == Role::Read).count(), 1);
        for (window, _) in &results {
            assert_eq!(window.as_deref(), Some(&vec![7; 16]));
        }
        assert_eq!(flights.in_progress(), 0);
    }

    #[test]
    fn nothing_is_kept_after_a_read_and_failures_are_shared() {
        let flights = Flights::default();
        let (first, role) = flights.read((1, 0), PATIENCE, || None);
        assert_eq!((first, role), (None, Role::Read));
        let (again, role) = flights.read((1, 0), PATIENCE, || Some(Arc::new(vec![1])));
        assert_eq!(role, Role::Read, "a finished read was reused");
        assert_eq!(again.as_deref(), Some(&vec![1]));
        assert_eq!(flights.in_progress(), 0);
    }

    #[test]
    fn a_reader_that_panics_releases_its_waiters() {
        let flights = Arc::new(Flights::default());
        let started = Arc::new(Barrier::new(2));
        let reader = {
            let (flights, started) = (Arc::clone(&flights), Arc::clone(&started));
            thread::spawn(move || {
                flights.read((2, 0), PATIENCE, || {
                    started.wait();
                    thread::sleep(Duration::from_millis(100));
                    panic!("the read blew up");
                })
            })
        };
        started.wait();
        let (window, role) = flights.read((2, 0), PATIENCE, || Some(Arc::new(vec![3])));
        assert!(reader.join().is_err());
        // Joined the failed flight (None), or came after it and read itself.
        assert!(
            (window.is_none() && role == Role::Joined) || (window.is_some() && role == Role::Read)
        );
        assert_eq!(flights.in_progress(), 0);
    }

    #[test]
    fn a_waiter_gives_up_once_the_read_has_been_out_for_its_patience() {
        let flights = Arc::new(Flights::default());
        let (started, release) = (Arc::new(Barrier::new(2)), Arc::new(Barrier::new(2)));
        let reader = {
            let (flights, started, release) = (
                Arc::clone(&flights),
                Arc::clone(&started),
                Arc::clone(&release),
            );
            thread::spawn(move || {
                flights.read((3, 0), PATIENCE, || {
                    started.wait();
                    // A read that hangs until the test lets it go.
                    release.wait();
                    Some(Arc::new(vec![5]))
                })
            })
        };
        started.wait();
        let asked = Instant::now();
        let (window, role) = flights.read((3, 0), Duration::from_millis(50), || {
            panic!("a waiter must not read the window itself")
        });
        assert_eq!((window, role), (None, Role::GaveUp));
        assert!(asked.elapsed() < Duration::from_secs(5), "gave up in time");
        release.wait();
        assert_eq!(reader.join().unwrap().1, Role::Read);
        assert_eq!(flights.in_progress(), 0);
    }
}
