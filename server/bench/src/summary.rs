//! The summary row of a replay: counts, throughput and latency percentiles
//! of the measured (post-warm-up) requests.

use std::{fmt, time::Duration};

use super::result::Record;

/// Figures for one run. Latencies include failed requests: a player waited for them too.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub requests: usize,
    pub errors: usize,
    /// Measured requests per second of the measured window.
    pub throughput: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

/// The nearest-rank percentile (the smallest value with at least `p` percent
/// of the values at or below it), so every reported figure is one a request
/// really took. `sorted` must be ascending and not empty.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    // p·n/100 in that order, less a hair, so 99.9 % of 1000 is rank 999, not 1000.
    let rank = (p * n as f64 / 100.0 - 1e-9).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

impl Summary {
    /// Summarises the measured records; `None` when every request was warm-up.
    pub fn of(records: &[Record], window: Duration) -> Option<Summary> {
        let mut ms: Vec<f64> = records.iter().filter(|r| !r.warmup).map(|r| r.ms).collect();
        if ms.is_empty() {
            return None;
        }
        ms.sort_by(f64::total_cmp);
        let errors = records.iter().filter(|r| !r.warmup && r.is_error()).count();
        let secs = window.as_secs_f64();
        Some(Summary {
            requests: ms.len(),
            errors,
            throughput: if secs > 0.0 {
                ms.len() as f64 / secs
            } else {
                0.0
            },
            mean: ms.iter().sum::<f64>() / ms.len() as f64,
            p50: percentile(&ms, 50.0),
            p90: percentile(&ms, 90.0),
            p99: percentile(&ms, 99.0),
            p999: percentile(&ms, 99.9),
            max: ms[ms.len() - 1],
        })
    }

    /// Header of the Markdown table [`Summary::row`] fills.
    pub fn header() -> &'static str {
        "| run | requests | errors | req/s | mean ms | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    }

    /// One Markdown table row, ready for docs/benchmarks.md.
    pub fn row(&self, label: &str) -> String {
        format!(
            "| {label} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
            self.requests,
            self.errors,
            self.throughput,
            self.mean,
            self.p50,
            self.p90,
            self.p99,
            self.p999,
            self.max
        )
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "requests    {}", self.requests)?;
        writeln!(f, "errors      {}", self.errors)?;
        writeln!(f, "throughput  {:.1} req/s", self.throughput)?;
        writeln!(f, "mean        {:.2} ms", self.mean)?;
        writeln!(f, "p50         {:.2} ms", self.p50)?;
        writeln!(f, "p90         {:.2} ms", self.p90)?;
        writeln!(f, "p99         {:.2} ms", self.p99)?;
        writeln!(f, "p99.9       {:.2} ms", self.p999)?;
        write!(f, "max         {:.2} ms", self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(ms: f64, warmup: bool, status: u16) -> Record {
        Record {
            fen: String::new(),
            ms,
            status,
            warmup,
        }
    }

    #[test]
    fn percentiles_of_a_uniform_distribution() {
        // 1, 2, ..., 1000 ms, shuffled: the p-th percentile is 10·p ms.
        let mut records: Vec<Record> = (1..=1000)
            .map(|i| record(((i * 7919) % 1000 + 1) as f64, false, 200))
            .collect();
        records[0].status = 503;
        let s = Summary::of(&records, Duration::from_secs(10)).unwrap();
        assert_eq!(s.requests, 1000);
        assert_eq!(s.errors, 1);
        assert_eq!(s.throughput, 100.0);
        assert_eq!(s.mean, 500.5);
        assert_eq!(
            (s.p50, s.p90, s.p99, s.p999, s.max),
            (500.0, 900.0, 990.0, 999.0, 1000.0)
        );
    }

    #[test]
    fn percentiles_of_tiny_samples_are_real_values() {
        assert_eq!(percentile(&[4.0], 99.9), 4.0);
        assert_eq!(percentile(&[1.0, 2.0], 50.0), 1.0);
        assert_eq!(percentile(&[1.0, 2.0], 50.1), 2.0);
        assert_eq!(percentile(&[1.0, 2.0], 0.0), 1.0);
    }

    #[test]
    fn warmup_is_excluded() {
        let mut records = vec![record(5000.0, true, 503); 10];
        records.extend((1..=10).map(|i| record(i as f64, false, 200)));
        let s = Summary::of(&records, Duration::from_secs(1)).unwrap();
        assert_eq!((s.requests, s.errors, s.max, s.p50), (10, 0, 10.0, 5.0));
        assert_eq!(Summary::of(&records[..10], Duration::from_secs(1)), None);
    }
}
