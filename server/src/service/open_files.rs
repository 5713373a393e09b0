//! Process limits the server needs: a full table set is hundreds of files.
//! How the open-files limit is shared out is `store::descriptors`, below the
//! store that keeps table files within it.

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// Raises the soft open-files limit to the hard limit and returns the new
/// soft limit (or the old one if raising failed).
pub fn raise_open_files_limit() -> Option<u64> {
    let current = getrlimit(Resource::Nofile);
    let raised = Rlimit {
        current: current.maximum,
        maximum: current.maximum,
    };
    match setrlimit(Resource::Nofile, raised) {
        Ok(()) => current.maximum,
        Err(err) => {
            tracing::warn!("cannot raise the open-files limit: {err}");
            current.current
        }
    }
}
