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

use std::{
    collections::HashMap,
    sync::{Arc, Condvar, Mutex},
};

use crate::sync::{self, lock};

/// A window of one open file: the file's id in the handle pool and the
/// window's first byte.
pub type Key = (u64, u64);

/// The bytes of a window read, or `None` when the read failed.
pub type Window = Option<Arc<Vec<u8>>>;

/// Whether the caller read the window or waited for another's read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Read,
    Joined,
}

#[derive(Default)]
struct Flight {
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
    /// the bytes of the read in progress once it is done.
    pub fn read(&self, key: Key, read: impl FnOnce() -> Window) -> (Window, Role) {
        let (flight, first) = {
            let mut reading = lock(&self.reading);
            match reading.get(&key) {
                Some(flight) => (Arc::clone(flight), false),
                None => {
                    let flight = Arc::new(Flight::default());
                    reading.insert(key, Arc::clone(&flight));
                    (flight, true)
                }
            }
        };
        if !first {
            return (wait(&flight), Role::Joined);
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

fn wait(flight: &Flight) -> Window {
    let mut result = lock(&flight.result);
    loop {
        if let Some(window) = result.as_ref() {
            return window.clone();
        }
        result = sync::wait(&flight.done, result);
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
                    flights.read((1, 0), || {
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
        let (first, role) = flights.read((1, 0), || None);
        assert_eq!((first, role), (None, Role::Read));
        let (again, role) = flights.read((1, 0), || Some(Arc::new(vec![1])));
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
                flights.read((2, 0), || {
                    started.wait();
                    thread::sleep(Duration::from_millis(100));
                    panic!("the read blew up");
                })
            })
        };
        started.wait();
        let (window, role) = flights.read((2, 0), || Some(Arc::new(vec![3])));
        assert!(reader.join().is_err());
        // Joined the failed flight (None), or came after it and read itself.
        assert!(
            (window.is_none() && role == Role::Joined) || (window.is_some() && role == Role::Read)
        );
        assert_eq!(flights.in_progress(), 0);
    }
}
