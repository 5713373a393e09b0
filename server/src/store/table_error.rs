//! Errors that name the table file they concern, and telling "no file
//! descriptor left" from other failures. A file of its own because every
//! layer that opens or reads table files makes them (`pread`, `handles`,
//! `quarantine`, the tier) and the engine classifies them.

use std::{
    fmt, io,
    path::{Path, PathBuf},
};

use super::layout::file_name;

/// An I/O error that knows which table file it concerns. It shows the
/// table's name only, as it ends up in answers to clients and in
/// `/metrics`; the full path goes to the log where the error arises.
#[derive(Debug)]
pub struct TableIoError {
    pub path: PathBuf,
    pub detail: String,
    /// The process or system ran out of file descriptors.
    pub out_of_descriptors: bool,
    /// Refused because its bytes were never checked: a choice of the
    /// operator's (`--allow-unchecked` lifts it), not a fault of the table.
    pub never_checked: bool,
}

impl TableIoError {
    /// An error about `path`, logged with the path.
    pub fn logged(path: &Path, kind: io::ErrorKind, detail: String) -> io::Error {
        tracing::warn!(path = %path.display(), "{detail}");
        TableIoError::quiet(path, kind, detail)
    }

    /// An error about `path` that was logged before (a repeated refusal).
    pub fn quiet(path: &Path, kind: io::ErrorKind, detail: String) -> io::Error {
        io::Error::new(
            kind,
            TableIoError {
                path: path.to_path_buf(),
                detail,
                out_of_descriptors: false,
                never_checked: false,
            },
        )
    }

    /// The refusal of a table whose bytes were never checked against a
    /// published digest (no checksums recorded for it).
    pub fn never_checked(path: &Path) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            TableIoError {
                path: path.to_path_buf(),
                detail: NEVER_CHECKED.to_string(),
                out_of_descriptors: false,
                never_checked: true,
            },
        )
    }

    /// A failed open, with advice when no descriptor was left.
    pub fn open(path: &Path, err: io::Error) -> io::Error {
        TableIoError::because(path, "cannot open", err)
    }

    /// `what` failed with `err` for the table at `path`; with advice when
    /// no descriptor was left. An error that names its table already is
    /// passed on as it is.
    pub fn because(path: &Path, what: &str, err: io::Error) -> io::Error {
        if err.get_ref().is_some_and(|e| e.is::<TableIoError>()) {
            return err;
        }
        let out_of_descriptors = is_out_of_descriptors(&err);
        let detail = if out_of_descriptors {
            format!("{what}: too many open files ({err}); raise the open-files limit (ulimit -n)")
        } else {
            format!("{what}: {err}")
        };
        tracing::warn!(path = %path.display(), "{detail}");
        io::Error::new(
            err.kind(),
            TableIoError {
                path: path.to_path_buf(),
                detail,
                out_of_descriptors,
                never_checked: false,
            },
        )
    }

    /// The file name, e.g. `KQvKR.rtbz`.
    pub fn table(&self) -> String {
        file_name(&self.path)
    }
}

impl fmt::Display for TableIoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.table(), self.detail)
    }
}

impl std::error::Error for TableIoError {}

/// What a probe of a table without recorded checksums is told.
const NEVER_CHECKED: &str = "not served: its bytes were never checked against the published digest; check it with `zugzwang verify --init` on its directory (or fetch it with `zugzwang tables fetch`, which checks as it writes), or serve with --allow-unchecked to answer from it anyway";

/// Whether an error is the refusal of a table never checked
/// ([`TableIoError::never_checked`]).
pub fn is_never_checked(err: &io::Error) -> bool {
    err.get_ref()
        .and_then(|e| e.downcast_ref::<TableIoError>())
        .is_some_and(|e| e.never_checked)
}

/// Whether an error means the process or the system had no descriptor left.
pub fn is_out_of_descriptors(err: &io::Error) -> bool {
    let raw = |e: &io::Error| {
        e.raw_os_error().is_some_and(|code| {
            code == rustix::io::Errno::MFILE.raw_os_error()
                || code == rustix::io::Errno::NFILE.raw_os_error()
        })
    };
    raw(err)
        || err
            .get_ref()
            .and_then(|e| e.downcast_ref::<TableIoError>())
            .is_some_and(|e| e.out_of_descriptors)
}
