//! The circuit breaker of one remote source: after GETs failed several
//! times in a row (each after its own retries), the source is not asked
//! for a cool-down, and reads that need it fail at once (a 503 naming the
//! table) instead of each waiting out its timeouts and retries; after the
//! cool-down one GET goes as a trial, and its outcome closes the breaker or
//! opens it again for twice as long (up to a bound).
//!
//! Time is passed in (`now`), so the rules are tested without sleeping.

use std::time::{Duration, Instant};

/// Failures in a row that open the breaker: a request's parallel probes
/// fail together when the store goes away, so a few failures already say
/// so; one slow object does not.
pub const FAILURES_TO_OPEN: u32 = 5;

/// How long the breaker stays open the first time.
pub const FIRST_COOLDOWN: Duration = Duration::from_secs(1);

/// The longest cool-down: a store that comes back is asked again within this.
pub const MAX_COOLDOWN: Duration = Duration::from_secs(8);

/// The breaker as `/metrics` shows it (an upstream server's breaker too,
/// `upstream::politeness`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerState {
    Closed,
    Open,
    /// The cool-down is over: one trial request may go (or is out).
    HalfOpen,
}

impl BreakerState {
    /// The gauge's value: 0 closed, 1 open, 2 half-open.
    pub fn gauge(self) -> u64 {
        match self {
            BreakerState::Closed => 0,
            BreakerState::Open => 1,
            BreakerState::HalfOpen => 2,
        }
    }
}

/// Why a GET may not go now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    /// When it is worth asking again.
    pub wait: Duration,
    /// The failures in a row that opened the breaker.
    pub failures: u32,
}

#[derive(Debug, Clone, Copy)]
enum State {
    Closed,
    Open {
        until: Instant,
        cooldown: Duration,
    },
    HalfOpen {
        cooldown: Duration,
        /// When the one trial GET went, if it is out.
        trial: Option<Instant>,
    },
}

/// One source's breaker.
#[derive(Debug, Clone)]
pub struct Breaker {
    state: State,
    failures_in_a_row: u32,
    /// A trial out longer than this counts as failed (its caller may have
    /// gone without saying): the GET timeout with its retries.
    trial_patience: Duration,
    /// Times it opened since start.
    opened: u64,
}

impl Breaker {
    pub fn new(trial_patience: Duration) -> Breaker {
        Breaker {
            state: State::Closed,
            failures_in_a_row: 0,
            trial_patience,
            opened: 0,
        }
    }

    /// Whether a GET may go now; a GET let through while half-open is the
    /// trial, and the others are refused until it returns.
    pub fn admit(&mut self, now: Instant) -> Result<(), Refused> {
        match self.state {
            State::Closed => Ok(()),
            State::Open { until, cooldown } => {
                if now < until {
                    return Err(self.refused(until - now));
                }
                self.state = State::HalfOpen {
                    cooldown,
                    trial: Some(now),
                };
                Ok(())
            }
            State::HalfOpen { cooldown, trial } => match trial {
                Some(sent) if now.saturating_duration_since(sent) < self.trial_patience => {
                    Err(self.refused(self.trial_patience - now.saturating_duration_since(sent)))
                }
                _ => {
                    self.state = State::HalfOpen {
                        cooldown,
                        trial: Some(now),
                    };
                    Ok(())
                }
            },
        }
    }

    fn refused(&self, wait: Duration) -> Refused {
        Refused {
            wait: wait.max(Duration::from_millis(1)),
            failures: self.failures_in_a_row,
        }
    }

    /// A GET came back: the source answers.
    pub fn succeeded(&mut self) {
        self.failures_in_a_row = 0;
        self.state = State::Closed;
    }

    /// A GET failed (after its retries) because of the source, not the
    /// object: counted, and the breaker opened after enough in a row or
    /// when the trial failed.
    pub fn failed(&mut self, now: Instant) {
        self.failures_in_a_row = self.failures_in_a_row.saturating_add(1);
        match self.state {
            State::Closed if self.failures_in_a_row >= FAILURES_TO_OPEN => {
                self.open(now, FIRST_COOLDOWN);
            }
            State::Closed | State::Open { .. } => {}
            State::HalfOpen { cooldown, .. } => {
                self.open(now, (cooldown * 2).min(MAX_COOLDOWN));
            }
        }
    }

    fn open(&mut self, now: Instant, cooldown: Duration) {
        self.opened += 1;
        self.state = State::Open {
            until: now + cooldown,
            cooldown,
        };
    }

    pub fn state(&self, now: Instant) -> BreakerState {
        match self.state {
            State::Closed => BreakerState::Closed,
            State::Open { until, .. } if now < until => BreakerState::Open,
            State::Open { .. } | State::HalfOpen { .. } => BreakerState::HalfOpen,
        }
    }

    /// Times the breaker opened since start.
    pub fn opened(&self) -> u64 {
        self.opened
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_failures_in_a_row_and_closes_after_a_good_trial() {
        let start = Instant::now();
        let mut breaker = Breaker::new(Duration::from_secs(5));
        for _ in 0..FAILURES_TO_OPEN - 1 {
            assert!(breaker.admit(start).is_ok());
            breaker.failed(start);
        }
        breaker.succeeded();
        for _ in 0..FAILURES_TO_OPEN {
            breaker.failed(start);
        }
        assert_eq!(breaker.state(start), BreakerState::Open);
        let refused = breaker.admit(start).unwrap_err();
        assert_eq!(refused.wait, FIRST_COOLDOWN);
        assert_eq!(refused.failures, FAILURES_TO_OPEN);
        let later = start + FIRST_COOLDOWN;
        assert!(breaker.admit(later).is_ok(), "the trial goes");
        assert!(breaker.admit(later).is_err(), "one trial at a time");
        breaker.succeeded();
        assert_eq!(breaker.state(later), BreakerState::Closed);
        assert!(breaker.admit(later).is_ok());
        assert_eq!(breaker.opened(), 1);
    }

    #[test]
    fn a_failed_trial_doubles_the_cooldown_up_to_the_bound() {
        let mut now = Instant::now();
        let mut breaker = Breaker::new(Duration::from_secs(5));
        for _ in 0..FAILURES_TO_OPEN {
            breaker.failed(now);
        }
        let mut cooldown = FIRST_COOLDOWN;
        for _ in 0..6 {
            now += cooldown;
            assert!(breaker.admit(now).is_ok());
            breaker.failed(now);
            cooldown = (cooldown * 2).min(MAX_COOLDOWN);
            assert_eq!(breaker.admit(now).unwrap_err().wait, cooldown);
        }
        assert_eq!(cooldown, MAX_COOLDOWN);
    }

    #[test]
    fn a_trial_that_never_reports_is_replaced_after_its_patience() {
        let now = Instant::now();
        let mut breaker = Breaker::new(Duration::from_secs(5));
        for _ in 0..FAILURES_TO_OPEN {
            breaker.failed(now);
        }
        let trial = now + FIRST_COOLDOWN;
        assert!(breaker.admit(trial).is_ok());
        assert!(breaker.admit(trial + Duration::from_secs(4)).is_err());
        assert!(breaker.admit(trial + Duration::from_secs(5)).is_ok());
    }
}
