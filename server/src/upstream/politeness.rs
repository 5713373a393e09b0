//! How often one upstream server is asked: a token bucket (lichess asks its
//! API's clients for about one request a second), a pause after `429 Too
//! Many Requests` as long as its `Retry-After` says (a minute, doubling,
//! where it says nothing), and a circuit breaker (`crate::circuit_breaker`,
//! the one a remote table source has too) that stops asking a server that
//! failed several times in a row, trying it again with one request after a
//! cool-down.
//!
//! Nothing here waits: a request the budget does not allow is refused at
//! once with how long until it would be, and the caller answers from the
//! local tables instead. Time is passed in (`now`), so the rules are tested
//! without sleeping.

use std::time::{Duration, Instant};

use crate::circuit_breaker::{Breaker, BreakerState, Rules};

/// The rules for one upstream server (`serve --upstream-rate`, `--upstream-burst`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Requests a second, on average.
    pub rate: f64,
    /// Requests that may go at once after a quiet spell.
    pub burst: u32,
    /// Failures in a row (no answer, 5xx, an answer refused) that open the breaker.
    pub failures_to_open: u32,
    /// How long the breaker stays open the first time; it doubles each
    /// time the trial request fails, up to [`Limits::max_cooldown`].
    pub cooldown: Duration,
    pub max_cooldown: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            rate: 1.0,
            burst: 3,
            failures_to_open: 5,
            cooldown: Duration::from_secs(30),
            max_cooldown: Duration::from_secs(600),
        }
    }
}

/// The pause after a `429` without `Retry-After`: lichess asks for a full
/// minute; it doubles with each `429` in a row, up to [`MAX_PAUSE`].
pub const FIRST_PAUSE: Duration = Duration::from_secs(60);

/// The longest pause after a `429`, whatever its `Retry-After` says: a
/// server that asks for a day is asked again after this.
pub const MAX_PAUSE: Duration = Duration::from_secs(3600);

/// Why a request to the server may not go now, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The bucket is empty: a token comes in `wait`.
    Budget { wait: Duration },
    /// The server answered `429` (or `503` with `Retry-After`): asked again after `wait`.
    Paused { wait: Duration },
    /// The breaker is open after failures in a row: tried again after `wait`.
    BreakerOpen { wait: Duration },
    /// The breaker's trial request is out; others wait for its outcome.
    TrialOut,
}

/// What has been asked of one server, and what it said.
#[derive(Debug, Clone)]
pub struct Politeness {
    limits: Limits,
    tokens: f64,
    refilled: Instant,
    /// Not asked before this (`Retry-After`, or the pause after a `429`).
    not_before: Option<Instant>,
    rate_limited_in_a_row: u32,
    breaker: Breaker,
}

impl Politeness {
    /// A full bucket, a closed breaker.
    pub fn new(limits: Limits, now: Instant) -> Politeness {
        Politeness {
            limits,
            tokens: f64::from(limits.burst.max(1)),
            refilled: now,
            not_before: None,
            rate_limited_in_a_row: 0,
            breaker: Breaker::new(Rules {
                failures_to_open: limits.failures_to_open,
                cooldown: limits.cooldown,
                max_cooldown: limits.max_cooldown,
                // The trial's outcome is always reported (`upstream`
                // answers every request it let go).
                trial_patience: None,
            }),
        }
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Takes a token for one request, or says why none may go now; the
    /// breaker's trial is taken only with a token.
    pub fn admit(&mut self, now: Instant) -> Result<(), Refusal> {
        if let Some(until) = self.not_before {
            if now < until {
                return Err(Refusal::Paused { wait: until - now });
            }
            self.not_before = None;
        }
        self.breaker
            .check(now)
            .map_err(|refused| match refused.trial_out {
                true => Refusal::TrialOut,
                false => Refusal::BreakerOpen { wait: refused.wait },
            })?;
        self.refill(now);
        if self.tokens < 1.0 {
            let wait = Duration::from_secs_f64((1.0 - self.tokens) / self.limits.rate.max(1e-9));
            return Err(Refusal::Budget { wait });
        }
        self.tokens -= 1.0;
        // Checked above: the trial (when half-open) is this request's.
        let _ = self.breaker.admit(now);
        Ok(())
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.refilled).as_secs_f64();
        self.tokens =
            (self.tokens + elapsed * self.limits.rate).min(f64::from(self.limits.burst.max(1)));
        self.refilled = now;
    }

    /// The server answered (an answer, or a 4xx other than 429 that says it
    /// does not know): it is up and within its limits.
    pub fn answered(&mut self) {
        self.rate_limited_in_a_row = 0;
        self.breaker.succeeded();
    }

    /// The server answered `429`: no request before its `Retry-After` (at
    /// most [`MAX_PAUSE`]), or without one, a minute doubling with each
    /// `429` in a row; the bucket starts empty after the pause.
    pub fn rate_limited(&mut self, now: Instant, retry_after: Option<Duration>) {
        self.rate_limited_in_a_row = self.rate_limited_in_a_row.saturating_add(1);
        let pause = retry_after.unwrap_or_else(|| {
            let doublings = self.rate_limited_in_a_row.saturating_sub(1).min(16);
            FIRST_PAUSE.saturating_mul(1 << doublings)
        });
        self.pause(now, pause.min(MAX_PAUSE));
        self.tokens = 0.0;
        self.refilled = now + pause.min(MAX_PAUSE);
        // A server that answers is up, whatever it says.
        self.breaker.answered_busy();
    }

    /// No answer (refused connection, time limit, 5xx), or one that was
    /// refused (malformed, too large, redirected away): counts towards
    /// opening the breaker; a failed trial opens it again for twice as
    /// long. A `503` may say when to come back (`retry_after`).
    pub fn failed(&mut self, now: Instant, retry_after: Option<Duration>) {
        if let Some(wait) = retry_after {
            self.pause(now, wait.min(MAX_PAUSE));
        }
        self.breaker.failed(now);
    }

    fn pause(&mut self, now: Instant, wait: Duration) {
        let until = now + wait;
        self.not_before = Some(self.not_before.map_or(until, |t| t.max(until)));
    }

    /// How long no request may go because the server asked to wait.
    pub fn paused_for(&self, now: Instant) -> Option<Duration> {
        self.not_before
            .filter(|&until| until > now)
            .map(|until| until - now)
    }

    /// Failures in a row so far.
    pub fn failures_in_a_row(&self) -> u32 {
        self.breaker.failures_in_a_row()
    }

    pub fn breaker(&self, now: Instant) -> BreakerState {
        self.breaker.state(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            rate: 1.0,
            burst: 3,
            failures_to_open: 3,
            cooldown: Duration::from_secs(30),
            max_cooldown: Duration::from_secs(100),
        }
    }

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn the_bucket_allows_its_burst_then_one_a_second() {
        let t0 = Instant::now();
        let mut p = Politeness::new(limits(), t0);
        for _ in 0..3 {
            assert_eq!(p.admit(t0), Ok(()));
        }
        assert!(matches!(p.admit(t0), Err(Refusal::Budget { wait }) if wait == S));
        assert_eq!(p.admit(t0 + S), Ok(()));
        assert!(matches!(p.admit(t0 + S), Err(Refusal::Budget { .. })));
        // A long quiet spell refills the burst, no more.
        let later = t0 + 100 * S;
        for _ in 0..3 {
            assert_eq!(p.admit(later), Ok(()));
        }
        assert!(p.admit(later).is_err());
        // Over any span, at most burst + rate × span requests go.
        let mut p = Politeness::new(limits(), t0);
        let mut sent = 0;
        for ms in 0..10_000 {
            if p.admit(t0 + Duration::from_millis(ms)).is_ok() {
                sent += 1;
            }
        }
        assert!(sent <= 3 + 10, "{sent}");
        assert!(sent >= 3 + 9, "{sent}");
    }

    #[test]
    fn a_429_pauses_for_its_retry_after_or_a_minute_doubling() {
        let t0 = Instant::now();
        let mut p = Politeness::new(limits(), t0);
        p.admit(t0).unwrap();
        p.rate_limited(t0, Some(7 * S));
        assert!(matches!(p.admit(t0 + 6 * S), Err(Refusal::Paused { wait }) if wait == S));
        // After the pause the bucket starts empty and refills.
        assert_eq!(p.admit(t0 + 8 * S), Ok(()));
        // A second 429 in a row, without Retry-After: two minutes.
        p.rate_limited(t0 + 8 * S, None);
        assert!(matches!(p.admit(t0 + 127 * S), Err(Refusal::Paused { .. })));
        assert_eq!(p.admit(t0 + 129 * S), Ok(()));
        // After an answer, a 429 without Retry-After pauses a minute.
        p.answered();
        p.rate_limited(t0 + 129 * S, None);
        assert!(matches!(p.admit(t0 + 188 * S), Err(Refusal::Paused { .. })));
        assert_eq!(p.admit(t0 + 190 * S), Ok(()));
        // A day's Retry-After is cut to the longest pause.
        p.rate_limited(t0 + 190 * S, Some(86_400 * S));
        assert!(matches!(
            p.admit(t0 + 189 * S + MAX_PAUSE),
            Err(Refusal::Paused { .. })
        ));
        assert_eq!(p.admit(t0 + 191 * S + MAX_PAUSE), Ok(()));
        assert_eq!(p.breaker(t0), BreakerState::Closed);
    }

    #[test]
    fn failures_in_a_row_open_the_breaker_and_one_trial_closes_it() {
        let t0 = Instant::now();
        let mut p = Politeness::new(
            Limits {
                burst: 100,
                rate: 100.0,
                ..limits()
            },
            t0,
        );
        for _ in 0..2 {
            p.admit(t0).unwrap();
            p.failed(t0, None);
        }
        assert_eq!(p.breaker(t0), BreakerState::Closed);
        // An answer in between resets the count.
        p.answered();
        for _ in 0..3 {
            p.admit(t0).unwrap();
            p.failed(t0, None);
        }
        assert_eq!(p.breaker(t0), BreakerState::Open);
        assert!(matches!(p.admit(t0 + 29 * S), Err(Refusal::BreakerOpen { wait }) if wait == S));
        // After the cool-down one trial goes, and no other while it is out.
        let t1 = t0 + 30 * S;
        assert_eq!(p.admit(t1), Ok(()));
        assert_eq!(p.breaker(t1), BreakerState::HalfOpen);
        assert_eq!(p.admit(t1), Err(Refusal::TrialOut));
        // It fails: open again, twice as long.
        p.failed(t1, None);
        assert!(matches!(p.admit(t1 + 59 * S), Err(Refusal::BreakerOpen { wait }) if wait == S));
        let t2 = t1 + 60 * S;
        assert_eq!(p.admit(t2), Ok(()));
        p.failed(t2, None);
        // Doubling stops at the longest cool-down.
        assert!(matches!(
            p.admit(t2 + 99 * S),
            Err(Refusal::BreakerOpen { .. })
        ));
        let t3 = t2 + 100 * S;
        assert_eq!(p.admit(t3), Ok(()));
        p.answered();
        assert_eq!(p.breaker(t3), BreakerState::Closed);
        assert_eq!(p.admit(t3), Ok(()));
    }

    #[test]
    fn a_503_with_retry_after_pauses_and_counts_as_a_failure() {
        let t0 = Instant::now();
        let mut p = Politeness::new(limits(), t0);
        p.admit(t0).unwrap();
        p.failed(t0, Some(2 * S));
        assert_eq!(p.failures_in_a_row(), 1);
        assert!(matches!(p.admit(t0 + S), Err(Refusal::Paused { .. })));
        assert_eq!(p.admit(t0 + 2 * S), Ok(()));
    }
}
