//! Writing the Prometheus text exposition format (version 0.0.4): the one
//! writer every layer renders its own figures through for `/metrics`.
//!
//! Hand-written rather than through a metrics crate: the metric names and
//! help texts of `/metrics` are a contract with operators' dashboards, and
//! the crates that are kept up write OpenMetrics instead (a closing
//! `# EOF`, their own `_total` handling).

use std::fmt::{Display, Write as _};

/// What a metric family is, for its `# TYPE` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// A `/metrics` answer being written.
#[derive(Debug, Default)]
pub struct Exposition {
    out: String,
}

impl Exposition {
    /// Starts a family: its HELP and TYPE lines, which must come before its samples.
    pub fn family(&mut self, name: &str, help: &str, kind: Kind) {
        let _ = writeln!(self.out, "# HELP {name} {help}");
        let _ = writeln!(self.out, "# TYPE {name} {}", kind.as_str());
    }

    /// One sample line; label values are escaped here.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl Display) {
        self.out.push_str(name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (label, value)) in labels.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                let _ = write!(self.out, "{label}=\"{}\"", escape(value));
            }
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {value}");
    }

    /// A family with one unlabelled counter.
    pub fn counter(&mut self, name: &str, help: &str, value: u64) {
        self.family(name, help, Kind::Counter);
        self.sample(name, &[], value);
    }

    /// A family with one unlabelled gauge.
    pub fn gauge(&mut self, name: &str, help: &str, value: u64) {
        self.family(name, help, Kind::Gauge);
        self.sample(name, &[], value);
    }

    /// A gauge whose value may be unknown: an unknown one is left out
    /// rather than shown as a misleading zero.
    pub fn gauge_if_known(&mut self, name: &str, help: &str, value: Option<u64>) {
        if let Some(value) = value {
            self.gauge(name, help, value);
        }
    }

    pub fn into_string(self) -> String {
        self.out
    }
}

/// Escapes a label value (backslash, quote, newline).
pub fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_escape_label_values() {
        let mut out = Exposition::default();
        out.family("x_total", "Things.", Kind::Counter);
        out.sample("x_total", &[("route", "a\"b"), ("status", "200")], 3);
        assert_eq!(
            out.into_string(),
            "# HELP x_total Things.\n# TYPE x_total counter\nx_total{route=\"a\\\"b\",status=\"200\"} 3\n"
        );
    }

    #[test]
    fn unknown_gauges_are_left_out() {
        let mut out = Exposition::default();
        out.gauge_if_known("y", "Y.", None);
        assert_eq!(out.into_string(), "");
    }
}
