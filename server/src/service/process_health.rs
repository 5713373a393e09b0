//! The process's footing on its machine, read from `/proc`: what runs out
//! first on a tablebase server is memory for the page cache and file
//! descriptors, not CPU.
//!
//! Each figure is read on its own and may be missing (no `/proc`, a kernel
//! without the field, no descriptor left to open the file with); a missing
//! figure is left out of `/metrics` rather than shown as zero.

use std::{fs, io};

use crate::store::descriptors;

const STATUS: &str = "/proc/self/status";
const MEMINFO: &str = "/proc/meminfo";
const FDS: &str = "/proc/self/fd";

#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    #[error("cannot read {file}: {source}")]
    Read {
        file: &'static str,
        source: io::Error,
    },
    #[error("{file} has no {field} line in kB")]
    MissingField {
        file: &'static str,
        field: &'static str,
    },
}

/// One look at the process's health.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessHealth {
    /// Resident memory of this process: a leak shows here first.
    pub resident_bytes: Option<u64>,
    /// The machine's MemAvailable: memory that can be had without swapping,
    /// page cache included. MemFree leaves out the page cache, which on a
    /// tablebase server is most of memory and exactly what should be there.
    pub memory_available_bytes: Option<u64>,
    /// Descriptors open now (connections, table files, the runtime's own).
    pub open_fds: Option<u64>,
    /// The soft open-files limit (`None` also when unlimited).
    pub max_fds: Option<u64>,
}

impl ProcessHealth {
    /// Reads every figure; those that cannot be read are `None` (logged at
    /// debug level: a scrape every few seconds must not flood the log).
    pub fn sample() -> ProcessHealth {
        ProcessHealth {
            resident_bytes: known(resident_bytes()),
            memory_available_bytes: known(memory_available_bytes()),
            open_fds: known(open_fds()),
            max_fds: descriptors::open_files_limit(),
        }
    }
}

fn known(figure: Result<u64, ProcError>) -> Option<u64> {
    figure
        .map_err(|err| tracing::debug!("process health: {err}"))
        .ok()
}

/// VmRSS from `/proc/self/status` (in kB there, so no page size is needed).
pub fn resident_bytes() -> Result<u64, ProcError> {
    kib_field(STATUS, "VmRSS")
}

pub fn memory_available_bytes() -> Result<u64, ProcError> {
    kib_field(MEMINFO, "MemAvailable")
}

/// Entries of `/proc/self/fd`, less the one opened to list them.
pub fn open_fds() -> Result<u64, ProcError> {
    let read = |source| ProcError::Read { file: FDS, source };
    let mut count: u64 = 0;
    for entry in fs::read_dir(FDS).map_err(read)? {
        entry.map_err(read)?;
        count += 1;
    }
    Ok(count.saturating_sub(1))
}

/// A `Field:   1234 kB` line of a `/proc` file, in bytes.
fn kib_field(file: &'static str, field: &'static str) -> Result<u64, ProcError> {
    let text = fs::read_to_string(file).map_err(|source| ProcError::Read { file, source })?;
    parse_kib_field(&text, field)
        .map(|kib| kib.saturating_mul(1024))
        .ok_or(ProcError::MissingField { file, field })
}

fn parse_kib_field(text: &str, field: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.strip_prefix(':')?;
        let mut words = rest.split_whitespace();
        let kib = words.next()?.parse().ok()?;
        (words.next() == Some("kB")).then_some(kib)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_kib_field_and_not_its_prefix_twin() {
        let meminfo =
            "MemTotal:       16000000 kB\nMemFree:          100 kB\nMemAvailable:    8000000 kB\n";
        assert_eq!(parse_kib_field(meminfo, "MemAvailable"), Some(8_000_000));
        assert_eq!(parse_kib_field(meminfo, "MemFree"), Some(100));
        assert_eq!(parse_kib_field(meminfo, "Mem"), None);
        assert_eq!(parse_kib_field("VmRSS: lots\n", "VmRSS"), None);
    }

    #[test]
    fn this_process_has_memory_and_descriptors() {
        let health = ProcessHealth::sample();
        assert!(health.resident_bytes.is_some_and(|rss| rss > 1 << 20));
        assert!(health.memory_available_bytes.is_some_and(|m| m > 0));
        assert!(health.open_fds.is_some_and(|fds| fds >= 3));
    }
}
