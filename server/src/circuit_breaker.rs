//! The circuit breaker, one for everything the server asks over the
//! network: each remote table source (`store::remote`) and each upstream
//! tablebase server (`upstream::politeness`) has one. After several
//! failures in a row the other side is not asked for a cool-down, and
//! whoever needed it is refused at once instead of each waiting out its
//! timeouts; after the cool-down one request goes as a trial, and its
//! outcome closes the breaker or opens it again for twice as long (up to
//! a bound).
//!
//! The users differ only in their numbers ([`Rules`]): a table store that
//! went away is asked again within seconds (a request is waiting for it),
//! an upstream server within minutes (nobody waits for it). Time is passed
//! in (`now`), so the rules are tested without sleeping.

use std::time::{Duration, Instant};

/// When a breaker opens and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Failures in a row that open it.
    pub failures_to_open: u32,
    /// How long it stays open the first time; it doubles each time the
    /// trial fails, up to `max_cooldown`.
    pub cooldown: Duration,
    pub max_cooldown: Duration,
    /// A trial out longer than this counts as lost (its caller may have
    /// gone without saying) and another may go; `None`: the trial's
    /// outcome is always reported, and others wait for it.
    pub trial_patience: Option<Duration>,
}

/// The breaker as `/metrics` shows it.
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

/// Why a request may not go now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    /// When it is worth asking again (while a trial without patience is
    /// out: the current cool-down, a guess).
    pub wait: Duration,
    /// The failures in a row that opened the breaker.
    pub failures: u32,
    /// The breaker is half-open and its trial is out; else it is open.
    pub trial_out: bool,
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
        /// When the one trial request went, if it is out.
        trial: Option<Instant>,
    },
}

/// One breaker.
#[derive(Debug, Clone)]
pub struct Breaker {
    rules: Rules,
    state: State,
    failures_in_a_row: u32,
    /// Times it opened since start.
    opened: u64,
}

impl Breaker {
    pub fn new(rules: Rules) -> Breaker {
        Breaker {
            rules,
            state: State::Closed,
            failures_in_a_row: 0,
            opened: 0,
        }
    }

    /// Whether a request may go now, changing nothing: a caller with
    /// other conditions (a token bucket) asks this first and takes the
    /// trial with [`Breaker::admit`] only once they pass.
    pub fn check(&self, now: Instant) -> Result<(), Refused> {
        self.clone().admit(now)
    }

    /// Lets a request go, or says why not; one let through while
    /// half-open is the trial, and the others are refused until it returns.
    pub fn admit(&mut self, now: Instant) -> Result<(), Refused> {
        let cooldown = match self.state {
            State::Closed => return Ok(()),
            State::Open { until, .. } if now < until => {
                return Err(self.refused(until - now, false));
            }
            State::Open { cooldown, .. } => cooldown,
            State::HalfOpen {
                cooldown,
                trial: Some(sent),
            } => {
                let out = now.saturating_duration_since(sent);
                match self.rules.trial_patience {
                    Some(patience) if out >= patience => cooldown,
                    Some(patience) => return Err(self.refused(patience - out, true)),
                    None => return Err(self.refused(cooldown, true)),
                }
            }
            State::HalfOpen {
                cooldown,
                trial: None,
            } => cooldown,
        };
        self.state = State::HalfOpen {
            cooldown,
            trial: Some(now),
        };
        Ok(())
    }

    fn refused(&self, wait: Duration, trial_out: bool) -> Refused {
        Refused {
            wait: wait.max(Duration::from_millis(1)),
            failures: self.failures_in_a_row,
            trial_out,
        }
    }

    /// A request came back answered: the other side is up.
    pub fn succeeded(&mut self) {
        self.failures_in_a_row = 0;
        self.state = State::Closed;
    }

    /// The other side answered but asked to be left alone for a while (an
    /// upstream's `429`): it is up, so the failures in a row start again
    /// and a trial closes the breaker; one open for earlier failures stays
    /// open.
    pub fn answered_busy(&mut self) {
        self.failures_in_a_row = 0;
        if matches!(self.state, State::HalfOpen { .. }) {
            self.state = State::Closed;
        }
    }

    /// A request failed because of the other side: counted, and the
    /// breaker opened after enough in a row, or when the trial failed.
    pub fn failed(&mut self, now: Instant) {
        self.failures_in_a_row = self.failures_in_a_row.saturating_add(1);
        match self.state {
            State::Closed if self.failures_in_a_row >= self.rules.failures_to_open.max(1) => {
                self.open(now, self.rules.cooldown);
            }
            State::Closed | State::Open { .. } => {}
            State::HalfOpen { cooldown, .. } => {
                self.open(now, cooldown.saturating_mul(2).min(self.rules.max_cooldown));
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

    /// Failures in a row so far.
    pub fn failures_in_a_row(&self) -> u32 {
        self.failures_in_a_row
    }

    /// Times the breaker opened since start.
    pub fn opened(&self) -> u64 {
        self.opened
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: Rules = Rules {
        failures_to_open: 5,
        cooldown: Duration::from_secs(1),
        max_cooldown: Duration::from_secs(8),
        trial_patience: Some(Duration::from_secs(5)),
    };

    /// A breaker under `rules` that `now` saw fail enough times to open.
    fn tripped(rules: Rules, now: Instant) -> Breaker {
        let mut breaker = Breaker::new(rules);
        for _ in 0..rules.failures_to_open {
            breaker.failed(now);
        }
        breaker
    }

    #[test]
    fn opens_after_failures_in_a_row_and_closes_after_a_good_trial() {
        let start = Instant::now();
        let mut breaker = Breaker::new(RULES);
        for _ in 0..RULES.failures_to_open - 1 {
            assert!(breaker.admit(start).is_ok());
            breaker.failed(start);
        }
        breaker.succeeded();
        for _ in 0..RULES.failures_to_open {
            breaker.failed(start);
        }
        assert_eq!(breaker.state(start), BreakerState::Open);
        let refused = breaker.admit(start).unwrap_err();
        assert_eq!(refused.wait, RULES.cooldown);
        assert_eq!(refused.failures, RULES.failures_to_open);
        assert!(!refused.trial_out);
        let later = start + RULES.cooldown;
        assert!(breaker.check(later).is_ok(), "the trial may go");
        assert!(breaker.check(later).is_ok(), "checking takes nothing");
        assert!(breaker.admit(later).is_ok(), "the trial goes");
        let second = breaker.admit(later).unwrap_err();
        assert!(second.trial_out, "one trial at a time");
        breaker.succeeded();
        assert_eq!(breaker.state(later), BreakerState::Closed);
        assert!(breaker.admit(later).is_ok());
        assert_eq!(breaker.opened(), 1);
    }

    #[test]
    fn a_failed_trial_doubles_the_cooldown_up_to_the_bound() {
        let mut now = Instant::now();
        let mut breaker = tripped(RULES, now);
        let mut cooldown = RULES.cooldown;
        for _ in 0..6 {
            now += cooldown;
            assert!(breaker.admit(now).is_ok());
            breaker.failed(now);
            cooldown = (cooldown * 2).min(RULES.max_cooldown);
            assert_eq!(breaker.admit(now).unwrap_err().wait, cooldown);
        }
        assert_eq!(cooldown, RULES.max_cooldown);
    }

    #[test]
    fn a_trial_that_never_reports_is_replaced_after_its_patience() {
        let now = Instant::now();
        let mut breaker = tripped(RULES, now);
        let trial = now + RULES.cooldown;
        assert!(breaker.admit(trial).is_ok());
        assert!(breaker.admit(trial + Duration::from_secs(4)).is_err());
        assert!(breaker.admit(trial + Duration::from_secs(5)).is_ok());
    }

    #[test]
    fn without_patience_a_trial_holds_the_others_until_it_reports() {
        let now = Instant::now();
        let patient = Rules {
            trial_patience: None,
            ..RULES
        };
        let mut breaker = tripped(patient, now);
        let trial = now + RULES.cooldown;
        assert!(breaker.admit(trial).is_ok());
        let much_later = trial + Duration::from_secs(3600);
        assert!(breaker.admit(much_later).unwrap_err().trial_out);
        // A busy answer to the trial closes the breaker too.
        breaker.answered_busy();
        assert_eq!(breaker.state(much_later), BreakerState::Closed);
    }

    #[test]
    fn a_busy_answer_leaves_an_open_breaker_open() {
        let now = Instant::now();
        let mut breaker = tripped(RULES, now);
        breaker.answered_busy();
        assert_eq!(breaker.state(now), BreakerState::Open);
        assert_eq!(breaker.failures_in_a_row(), 0);
    }
}
