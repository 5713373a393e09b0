//! Making room at the connection cap: which open connection is closed so
//! that a new one is served at once.
//!
//! The rule (figures in `server/docs/benchmarks.md`):
//!
//! 1. The connection that has waited longest without sending a whole
//!    request head is closed, as soon as it is [`UNFINISHED_GRACE`] old. A
//!    client that means to ask sends its head with the last packet of the
//!    handshake, so its head is in the socket's buffer when it is accepted
//!    and read on the connection's first poll; one still unfinished after
//!    that is half-sent or silent. Oldest first rather than quietest, so a
//!    sender that trickles a byte now and then cannot stay ahead of the rule.
//! 2. Only when no connection is unfinished: the idle keep-alive connection
//!    quiet longest, once quiet for [`IDLE_GRACE`] (the earlier rule, so
//!    well-behaved clients keep their connections as before, and keep them
//!    first: a flood of half-sent requests closes only its own).
//! 3. A connection with a request in progress is never closed here.
//!
//! Once every connection had to be quiet for 0.5 s before it could be
//! closed. A burst of stalled connections deeper than the cap then
//! went through in rounds of 0.5 s, one round per cap's worth of them ahead
//! of a client in the kernel's backlog: 700 stalled connections against a
//! cap of 224 kept a normal request waiting 1.6 s. A shorter grace only
//! shortens the round; a grace near zero for unfinished connections makes
//! the backlog drain as fast as connections can be accepted. A cap per
//! client address would not help where it matters most: behind nginx every
//! connection comes from the proxy's address, and a flood from the same
//! network as the client looks the same.

use std::{
    collections::{BTreeSet, HashMap},
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use super::activity::{Activity, Evicted};
use crate::sync::lock;

/// An unfinished connection younger than this is not closed to make room:
/// it may have been accepted with its head in the buffer and not yet been
/// polled. Short against the half second a person notices; a burst of
/// stalled connections goes through a cap's worth per grace at worst.
pub const UNFINISHED_GRACE: Duration = Duration::from_millis(20);

/// An idle keep-alive connection quiet for less than this is not closed to
/// make room: its client may be about to send its next request.
const IDLE_GRACE: Duration = Duration::from_millis(500);

/// What [`Registry::make_room`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Room {
    /// A connection was asked to close; its slot frees in a moment.
    Made(Evicted),
    /// The oldest unfinished connection may be closed after this.
    NotYet(Duration),
    /// Every connection is busy, or idle for less than [`IDLE_GRACE`].
    None,
}

/// Every open connection's activity, by the order they were accepted in.
#[derive(Default)]
pub struct Registry {
    next_id: AtomicU64,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    all: HashMap<u64, Arc<Activity>>,
    /// Connections that had not sent a whole head when last looked at,
    /// oldest first (ids grow with the order of `accept`). Ones that have
    /// since begun a request are dropped from here when met.
    unfinished: BTreeSet<u64>,
}

impl Registry {
    pub fn insert(&self, activity: Arc<Activity>) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut inner = lock(&self.inner);
        inner.all.insert(id, activity);
        inner.unfinished.insert(id);
        id
    }

    pub fn remove(&self, id: u64) {
        let mut inner = lock(&self.inner);
        inner.all.remove(&id);
        inner.unfinished.remove(&id);
    }

    /// Asks one connection to close by the rule in the module's notes.
    pub fn make_room(&self, unfinished_grace: Duration) -> Room {
        let mut inner = lock(&self.inner);
        let Inner { all, unfinished } = &mut *inner;
        while let Some(&id) = unfinished.first() {
            match all.get(&id) {
                Some(activity) if !activity.has_begun() && !activity.close.is_cancelled() => {
                    let age = activity.age();
                    if age < unfinished_grace {
                        return Room::NotYet(unfinished_grace - age);
                    }
                    unfinished.remove(&id);
                    activity.evict(Evicted::Unfinished);
                    return Room::Made(Evicted::Unfinished);
                }
                _ => {
                    unfinished.remove(&id);
                }
            }
        }
        let quietest = all
            .values()
            .filter(|activity| !activity.close.is_cancelled())
            .filter(|activity| activity.expired(IDLE_GRACE))
            .max_by_key(|activity| activity.quiet_for());
        match quietest {
            Some(activity) => {
                activity.evict(Evicted::Idle);
                Room::Made(Evicted::Idle)
            }
            None => Room::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::service::activity::{ConnectionStats, Handling};

    fn connection(registry: &Registry, stats: &Arc<ConnectionStats>) -> Arc<Activity> {
        let activity = Activity::new(stats.clone(), CancellationToken::new());
        registry.insert(activity.clone());
        activity
    }

    #[test]
    fn the_oldest_unfinished_connection_goes_first_and_only_once_past_the_grace() {
        let (registry, stats) = (Registry::default(), Arc::new(ConnectionStats::new(3)));
        let oldest = connection(&registry, &stats);
        let newer = connection(&registry, &stats);
        // A byte from the oldest does not save it: unfinished ones go by age.
        oldest.touch();
        assert!(matches!(
            registry.make_room(Duration::from_secs(60)),
            Room::NotYet(_)
        ));
        assert_eq!(
            registry.make_room(Duration::ZERO),
            Room::Made(Evicted::Unfinished)
        );
        assert!(oldest.was_evicted() && !newer.was_evicted());
        assert_eq!(stats.evicted(Evicted::Unfinished), 1);
    }

    #[test]
    fn busy_and_freshly_idle_connections_are_kept() {
        let (registry, stats) = (Registry::default(), Arc::new(ConnectionStats::new(2)));
        let busy = connection(&registry, &stats);
        let _request = Handling::start(busy.clone());
        let idle = connection(&registry, &stats);
        drop(Handling::start(idle.clone()));
        assert_eq!(registry.make_room(Duration::ZERO), Room::None);
        assert!(!busy.was_evicted() && !idle.was_evicted());
    }
}
