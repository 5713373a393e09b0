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
    /// Where the bytes read end (the key holds where they start).
    end: u64,
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
                    let flight = Flight::new(key.1);
                    reading.insert(key, Arc::clone(&flight));
                    (flight, true)
                }
            }
        };
        self.land(key, flight, first, patience, read)
    }

    /// The bytes `range` of file `file`: from a read in progress whose
    /// bytes cover them (waited for as in [`Flights::read`]), else read with
    /// `read` (the bytes of `range`) and shared with later reads they
    /// cover. Returns where the window starts: `range.start` or before.
    /// For reads of exact ranges (a remote source's GETs), where two
    /// probes of a request often want the same block, or one a part of
    /// another's.
    pub fn read_covering(
        &self,
        file: u64,
        range: std::ops::Range<u64>,
        patience: Duration,
        read: impl FnOnce() -> Window,
    ) -> (Window, u64, Role) {
        let joined = {
            let mut reading = lock(&self.reading);
            let covering = reading.iter().find(|((f, start), flight)| {
                *f == file && *start <= range.start && range.end <= flight.end
            });
            match covering {
                Some((key, flight)) => Some((*key, Arc::clone(flight), false)),
                // A shorter read at the same start is out: this one reads
                // on its own, unshared.
                None if reading.contains_key(&(file, range.start)) => None,
                None => {
                    let key = (file, range.start);
                    let flight = Flight::new(range.end);
                    reading.insert(key, Arc::clone(&flight));
                    Some((key, flight, true))
                }
            }
        };
        let Some((key, flight, first)) = joined else {
            return (read(), range.start, Role::Read);
        };
        let (window, role) = self.land(key, flight, first, patience, read);
        (window, key.1, role)
    }

    /// Waits for the flight (`first`: reads it with `read` and publishes).
    fn land(
        &self,
        key: Key,
        flight: Arc<Flight>,
        first: bool,
        patience: Duration,
        read: impl FnOnce() -> Window,
    ) -> (Window, Role) {
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

impl Flight {
    fn new(end: u64) -> Arc<Flight> {
        Arc::new(Flight {
            started: Instant::now(),
            end,
            result: Mutex::new(None),
            done: Condvar::new(),
        })
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
    fn a_read_covered_by_one_in_flight_shares_its_bytes() {
        let flights = Flights::default();
        let started = Barrier::new(2);
        let release = Barrier::new(2);
        let reads = AtomicUsize::new(0);
        thread::scope(|s| {
            let wide = s.spawn(|| {
                flights.read_covering(7, 100..200, PATIENCE, || {
                    reads.fetch_add(1, Ordering::Relaxed);
                    started.wait();
                    release.wait();
                    Some(Arc::new((100..200).map(|i| i as u8).collect()))
                })
            });
            started.wait();
            let inside = s.spawn(|| {
                flights.read_covering(7, 150..160, PATIENCE, || {
                    reads.fetch_add(1, Ordering::Relaxed);
                    Some(Arc::new(vec![0; 10]))
                })
            });
            // Not covered (another file, a range past its end): read apart.
            let (_, start, role) =
                flights.read_covering(8, 150..160, PATIENCE, || Some(Arc::new(vec![0; 10])));
            assert_eq!((start, role), (150, Role::Read));
            let (_, start, role) =
                flights.read_covering(7, 190..201, PATIENCE, || Some(Arc::new(vec![0; 11])));
            assert_eq!((start, role), (190, Role::Read));
            while flights.in_progress() > 1 {
                thread::yield_now();
            }
            thread::sleep(Duration::from_millis(20));
            release.wait();
            let (window, start, role) = inside.join().expect("inside");
            assert_eq!((start, role), (100, Role::Joined));
            assert_eq!(window.expect("bytes")[50], 150);
            assert_eq!(wide.join().expect("wide").2, Role::Read);
        });
        assert_eq!(reads.load(Ordering::Relaxed), 1, "one read for both");
    }

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
