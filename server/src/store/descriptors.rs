//! The open-files budget: how one per-process limit is shared between
//! table files (kept here, in the store, which holds them open) and
//! connections (taken by `service::connections`).

use rustix::process::{Resource, getrlimit};

/// The soft open-files limit in force now (`None`: unlimited).
pub fn open_files_limit() -> Option<u64> {
    getrlimit(Resource::Nofile).current
}

/// Descriptors kept for everything that is neither a connection nor a
/// table: stdio, the listener, the runtime's epoll and event fds, logs,
/// manifests and checksum lists read while a table opens.
pub const PROCESS_RESERVE: u64 = 64;

/// Fewest table handles worth running with: a probe of one position opens a
/// handful of tables (its own WDL and DTZ, those its captures lead to).
pub const MIN_TABLE_HANDLES: u64 = 8;

/// Used when the limit is unlimited or unknown: far more than any table set
/// needs, and no more connections than a large server carries.
const UNLIMITED: u64 = 1 << 20;

/// How the open-files limit is divided, so tables and connections cannot
/// starve each other: both come from the same per-process limit, and a
/// server whose table handles used it all could no longer accept a
/// connection (nor answer `/metrics`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DescriptorBudget {
    /// The soft open-files limit the split was made from.
    pub limit: u64,
    /// Kept for the process itself (see [`PROCESS_RESERVE`]).
    pub process: u64,
    /// Connections that may be open at once.
    pub connections: u64,
    /// Table files (tables, prefixes, large checksum lists) open at once;
    /// beyond it the coldest are closed (`store::handles`).
    pub table_handles: u64,
}

impl DescriptorBudget {
    /// Splits `limit`: the process reserve first, then `connections` if
    /// given (else half of what is left), the rest for table handles, which
    /// always get at least [`MIN_TABLE_HANDLES`].
    pub fn split(limit: Option<u64>, connections: Option<u64>) -> DescriptorBudget {
        let limit = limit.unwrap_or(UNLIMITED);
        let process = PROCESS_RESERVE.min(limit / 4);
        let shared = limit - process;
        let most_connections = shared.saturating_sub(MIN_TABLE_HANDLES);
        let connections = connections.unwrap_or(shared / 2).min(most_connections);
        DescriptorBudget {
            limit,
            process,
            connections,
            table_handles: (shared - connections).max(MIN_TABLE_HANDLES),
        }
    }

    /// The split of the limit in force now.
    pub fn current(connections: Option<u64>) -> DescriptorBudget {
        DescriptorBudget::split(open_files_limit(), connections)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_common_limit_is_shared_between_connections_and_tables() {
        let budget = DescriptorBudget::split(Some(1024), None);
        assert_eq!(budget.process, 64);
        assert_eq!(budget.connections, 480);
        assert_eq!(budget.table_handles, 480);
    }

    #[test]
    fn a_connection_cap_leaves_the_rest_to_tables() {
        let budget = DescriptorBudget::split(Some(65_536), Some(10_000));
        assert_eq!(budget.connections, 10_000);
        assert_eq!(budget.table_handles, 65_536 - 64 - 10_000);
    }

    #[test]
    fn tables_keep_their_minimum_under_a_tiny_limit() {
        let budget = DescriptorBudget::split(Some(32), Some(1_000));
        assert_eq!(budget.process, 8);
        assert_eq!(budget.table_handles, MIN_TABLE_HANDLES);
        assert_eq!(budget.connections, 32 - 8 - MIN_TABLE_HANDLES);
    }

    #[test]
    fn no_limit_is_a_large_finite_budget() {
        let budget = DescriptorBudget::split(None, None);
        assert!(budget.table_handles > 100_000);
    }
}
