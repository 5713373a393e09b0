//! How much memory the server's caches get when `--memory-mb` does not
//! say: a share of what the machine (or the container) can give, decided
//! once at start. How that budget is split among the caches is
//! `engine::memory_budget`'s.
//!
//! Everything the caches do not hold is left to the page cache, which
//! holds the tables' data blocks, so the share is small: a sixteenth of
//! MemAvailable or of the cgroup's memory limit, whichever is smaller (a
//! container's limit is what it will be killed at, whatever the host has),
//! at least [`FLOOR`] so that the answers and indexes of an explorer's walk
//! stay, at most [`CEILING`]: past it a cache buys little for the 3-4-5
//! piece sets most servers hold (their whole index is 2.9 MiB; 80 MiB
//! saved a tenth of the CPU per request at most, for 50 MiB more peak RSS;
//! at 40 MiB the server still peaked a few MiB above lila-tablebase's;
//! server/docs/benchmarks.md, "One memory budget"), and a larger set's
//! operator sizes it with `--memory-mb`.

use std::fs;

use crate::engine::memory_budget::DEFAULT_TOTAL;

use super::process_health;

/// The budget's share of the memory to be had.
const SHARE: u64 = 16;
/// The least budget by default.
pub const FLOOR: u64 = 24 << 20;
/// The most budget by default.
pub const CEILING: u64 = 32 << 20;

/// Where the memory limit of the cgroup the process runs in is read:
/// cgroup v2 first, then v1 (a container sees its own cgroup at the root).
const CGROUP_LIMITS: [&str; 2] = [
    "/sys/fs/cgroup/memory.max",
    "/sys/fs/cgroup/memory/memory.limit_in_bytes",
];

/// The caches' budget in bytes: `mb` megabytes when given, else the share
/// above (the engine's default when neither the machine's memory nor a
/// cgroup limit can be read).
pub fn budget_bytes(mb: Option<u64>) -> u64 {
    if let Some(mb) = mb {
        return mb.saturating_mul(1 << 20);
    }
    let available = process_health::memory_available_bytes()
        .map_err(|err| tracing::warn!("sizing the memory budget: {err}"))
        .ok();
    default_budget(available, cgroup_limit())
}

/// A sixteenth of the smaller of the two, within the floor and ceiling.
fn default_budget(available: Option<u64>, cgroup: Option<u64>) -> u64 {
    let memory = match (available, cgroup) {
        (Some(a), Some(c)) => a.min(c),
        (Some(m), None) | (None, Some(m)) => m,
        (None, None) => return DEFAULT_TOTAL,
    };
    (memory / SHARE).clamp(FLOOR, CEILING)
}

/// The cgroup's memory limit, if the process has one.
fn cgroup_limit() -> Option<u64> {
    CGROUP_LIMITS
        .iter()
        .find_map(|path| parse_limit(&fs::read_to_string(path).ok()?))
}

/// A limit file's value; "max" (v2) and v1's page-rounded `i64::MAX` mean
/// no limit.
fn parse_limit(text: &str) -> Option<u64> {
    let bytes: u64 = text.trim().parse().ok()?;
    (bytes < 1 << 60).then_some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sixteenth_of_the_smaller_within_floor_and_ceiling() {
        const GIB: u64 = 1 << 30;
        assert_eq!(default_budget(Some(24 * GIB), None), CEILING);
        assert_eq!(default_budget(Some(24 * GIB), Some(GIB)), CEILING);
        assert_eq!(default_budget(None, Some(448 << 20)), 28 << 20);
        assert_eq!(default_budget(Some(256 << 20), None), FLOOR);
        assert_eq!(default_budget(None, None), DEFAULT_TOTAL);
        assert_eq!(budget_bytes(Some(64)), 64 << 20);
        assert_eq!(budget_bytes(Some(0)), 0);
    }

    #[test]
    fn no_limit_reads_as_none() {
        assert_eq!(parse_limit("max\n"), None);
        assert_eq!(parse_limit("9223372036854771712\n"), None);
        assert_eq!(parse_limit("536870912\n"), Some(512 << 20));
        assert_eq!(parse_limit(""), None);
    }
}
