//! What the commands print besides their results: progress bars on a
//! terminal and sizes in binary units, both indicatif's.

use indicatif::{HumanBytes, ProgressBar, ProgressStyle};

use crate::progress::Progress;

/// Bytes in binary units (`1.50 MiB`), exact below 1 KiB.
pub fn human(bytes: u64) -> String {
    HumanBytes(bytes).to_string()
}

/// A progress bar on stderr; hidden when stderr is not a terminal
/// (indicatif draws nothing then), so scripts and logs stay clean.
pub struct Bar(ProgressBar);

impl Bar {
    pub fn new() -> Self {
        let bar = ProgressBar::new(0);
        let style = ProgressStyle::with_template(
            "{wide_bar} {bytes}/{total_bytes} ({bytes_per_sec}, {eta}) {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        Bar(bar)
    }
}

impl Default for Bar {
    fn default() -> Self {
        Bar::new()
    }
}

impl Progress for Bar {
    fn start(&self, bytes: u64, items: usize) {
        self.0.set_length(bytes);
        self.0.set_position(0);
        self.0.set_message(format!("0/{items}"));
    }

    fn message(&self, text: &str) {
        self.0.set_message(text.to_string());
    }

    fn advance(&self, bytes: u64) {
        self.0.inc(bytes);
    }

    fn retract(&self, bytes: u64) {
        self.0.dec(bytes);
    }

    fn set_position(&self, bytes: u64) {
        self.0.set_position(bytes);
    }

    /// Printed above the bar, so the bar is not torn by it.
    fn problem(&self, name: &str, problem: &str) {
        self.0.suspend(|| eprintln!("{name}: {problem}"));
    }

    fn finish(&self) {
        self.0.finish_and_clear();
    }
}
