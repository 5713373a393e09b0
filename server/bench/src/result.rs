//! The per-request result file that `zugzwang-bench replay` writes and `plot`
//! reads: tab-separated, one request per line, warm-up rows marked so every
//! reader excludes the same ones.

use std::{
    fs,
    path::{Path, PathBuf},
};

use super::BenchError;

/// The first line of every result file.
pub const HEADER: &str = "fen\tms\tstatus\tphase";

/// Status recorded when no HTTP answer came back (refused, reset, timed out).
pub const NO_RESPONSE: u16 = 0;

/// One replayed request.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub fen: String,
    /// Wall-clock time from sending the request to the end of the body.
    pub ms: f64,
    /// HTTP status, or [`NO_RESPONSE`].
    pub status: u16,
    /// Sent while tables opened and caches filled; not part of any figure.
    pub warmup: bool,
}

impl Record {
    pub fn is_error(&self) -> bool {
        self.status != 200
    }

    pub fn to_line(&self) -> String {
        let phase = if self.warmup { "warmup" } else { "measured" };
        format!("{}\t{:.3}\t{}\t{phase}", self.fen, self.ms, self.status)
    }

    pub fn parse(line: &str) -> Result<Record, String> {
        let fields: Vec<&str> = line.split('\t').collect();
        let [fen, ms, status, phase] = fields[..] else {
            return Err(format!(
                "expected 4 tab-separated fields, found {}",
                fields.len()
            ));
        };
        let ms: f64 = ms
            .parse()
            .map_err(|_| format!("milliseconds {ms:?} is not a number"))?;
        if !ms.is_finite() || ms < 0.0 {
            return Err(format!("milliseconds {ms} is not a duration"));
        }
        let status = status
            .parse()
            .map_err(|_| format!("status {status:?} is not an HTTP status"))?;
        let warmup = match phase {
            "warmup" => true,
            "measured" => false,
            other => return Err(format!("phase {other:?} is neither warmup nor measured")),
        };
        Ok(Record {
            fen: fen.to_string(),
            ms,
            status,
            warmup,
        })
    }
}

/// Reads a whole result file, warm-up rows included.
pub fn read(path: &Path) -> Result<Vec<Record>, BenchError> {
    let text = fs::read_to_string(path).map_err(|source| BenchError::ReadResult {
        path: path.to_path_buf(),
        source,
    })?;
    let bad = |line: usize, reason: String| BenchError::BadResultLine {
        path: PathBuf::from(path),
        line,
        reason,
    };
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, HEADER)) => {}
        _ => return Err(bad(1, format!("the header must be {HEADER:?}"))),
    }
    lines
        .filter(|(_, line)| !line.is_empty())
        .map(|(i, line)| Record::parse(line).map_err(|reason| bad(i + 1, reason)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip() {
        let record = Record {
            fen: "8/8/8/8/8/8/8/K1k5 w - - 0 1".into(),
            ms: 12.5,
            status: 200,
            warmup: true,
        };
        assert_eq!(Record::parse(&record.to_line()), Ok(record));
    }

    #[test]
    fn files_need_the_header_and_sane_fields() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.tsv");
        fs::write(&path, "a\tb\n").unwrap();
        assert!(matches!(
            read(&path),
            Err(BenchError::BadResultLine { line: 1, .. })
        ));
        fs::write(&path, format!("{HEADER}\nfen\t-3\t200\tmeasured\n")).unwrap();
        assert!(matches!(
            read(&path),
            Err(BenchError::BadResultLine { line: 2, .. })
        ));
        fs::write(&path, format!("{HEADER}\nfen\t3\t503\twarmup\n\n")).unwrap();
        let records = read(&path).unwrap();
        assert_eq!(records.len(), 1);
        assert!(records[0].warmup && records[0].is_error());
    }
}
