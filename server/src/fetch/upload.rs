//! `tables fetch --to s3://BUCKET/PREFIX`: the selected tables put into an
//! object store, each checked against its published digest before its
//! upload completes, so the store never holds a damaged table under its
//! name (the replicas of `serve --tables s3://…` then share it).
//!
//! The bytes come from a local table directory (`--from DIR`) or from a
//! mirror (`--from URL`): a mirror's file is first fetched into a staging
//! directory as `tables fetch --to DIR` fetches it (resumable, verified),
//! then uploaded from there and removed, so the staging directory holds
//! at most `--jobs` files at a time. While a file is uploaded its digest
//! is computed from the very bytes sent; only if it is the published one
//! is the upload completed. A small file is one PUT; a larger one a
//! multipart upload of `--part-size-mib` parts, journalled after each part
//! (`upload_journal`), so a cut upload continues with its next part. Each
//! object records the digest it was checked against as metadata
//! (`x-amz-meta-sha256`, `x-amz-meta-md5`): a rerun skips an object with
//! the published size and that digest.
//!
//! Prophet DTM files (`--dtm`) go the same way, checked against the md5
//! their `MD5SUMS` lists; `record_md5s` then writes that list's lines for
//! the files uploaded as an `MD5SUMS` object at the prefix.

use std::{
    fs::{self, File},
    io,
    os::unix::fs::FileExt,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering::Relaxed},
    },
    time::Instant,
};

use futures::StreamExt;
use md5::Md5;
use object_store::{
    Attribute, AttributeValue, Attributes, GetOptions, ObjectStore, PutPayload, aws::AmazonS3,
    multipart::MultipartStore, path::Path as ObjectPath,
};
use reqwest::{Client, Url};
use sha2::{Digest, Sha256};

use super::{
    FetchError, FileOutcome, PlannedFile, Summary, TransferError, checksums, fetch_one,
    upload_journal::{self, Journal},
};
use crate::{
    catalog::{
        digests::merge_md5sums,
        whole_file::{PublishedDigest, hex},
    },
    dtm::format::MD5SUMS,
    progress::{Progress, Silent},
    store::{
        remote::{RemoteError, RemoteOptions, RemoteUrl, Scheme, source::s3_client},
        tier::manifest::{self, manifest_path, sums_path},
    },
};

/// The smallest part S3 accepts (but for the last).
pub const MIN_PART_SIZE: u64 = 5 << 20;

/// Why the store cannot be written to at all.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error(
        "{0}: only an S3 object store (s3://BUCKET/PREFIX) can be uploaded to; for a directory give --to DIR"
    )]
    NotS3(String),
    #[error(
        "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_REGION; Garage's is `garage`) to a key allowed to write the bucket; on EC2 with an instance role, set AWS_METADATA_ENDPOINT=http://169.254.169.254"
    )]
    NoCredentials,
    #[error(
        "no state directory to keep upload journals in (no HOME): give --state-dir DIR (or ZUGZWANG_STATE_DIR)"
    )]
    NoStateDir,
    #[error(transparent)]
    Client(#[from] RemoteError),
    #[error(
        "bucket {bucket} does not exist at {endpoint}: create it (e.g. `garage bucket create {bucket}`, `aws s3 mb s3://{bucket}`) or check the URL and --s3-endpoint ({detail})"
    )]
    BucketMissing {
        bucket: String,
        endpoint: String,
        detail: String,
    },
    #[error(
        "{url}: access denied ({detail}); check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and that the key may read and write the bucket (e.g. `garage bucket allow --read --write BUCKET --key KEY`)"
    )]
    AccessDenied { url: String, detail: String },
    #[error(
        "cannot reach the object store at {endpoint} ({detail}); check --s3-endpoint (or AWS_ENDPOINT_URL) and that the store is running"
    )]
    Unreachable { endpoint: String, detail: String },
}

/// Why one file was not uploaded; each names the file and what to do.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    #[error("{file}: not in {}; nothing uploaded", .dir.display())]
    Missing { file: String, dir: PathBuf },
    #[error(
        "{file}: {got} bytes, published {expected}: damaged or truncated, so it was not uploaded; fetch it again (`zugzwang tables fetch --from URL --to DIR`)"
    )]
    WrongSize {
        file: String,
        got: u64,
        expected: u64,
    },
    #[error(
        "{file}: {algorithm} {got} differs from the published {expected}: the file is damaged, so it was not uploaded (any parts sent were discarded); replace it"
    )]
    Damaged {
        file: String,
        algorithm: &'static str,
        got: String,
        expected: String,
    },
    #[error(
        "{file}: changed while it was uploaded; nothing was completed: run the same command again"
    )]
    Changed { file: String },
    #[error("{file}: cannot read {}: {source}", .path.display())]
    Read {
        file: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "{file}: the store failed ({detail}); run the same command again: it continues from the parts already sent"
    )]
    Store { file: String, detail: String },
    #[error(
        "{file}: cannot write the upload's journal {}: {source}; without it a cut upload starts over: fix the state directory (--state-dir)",
        .path.display()
    )]
    Journal {
        file: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(transparent)]
    Fetch(Box<TransferError>),
    #[error("{file}: {source}")]
    Mirror {
        file: String,
        #[source]
        source: Box<FetchError>,
    },
}

impl UploadError {
    /// Whether the file's bytes are wrong (rather than the way to them).
    pub fn is_damage(&self) -> bool {
        matches!(
            self,
            UploadError::WrongSize { .. } | UploadError::Damaged { .. }
        )
    }
}

/// How one file that ended well ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uploaded {
    /// Sent `bytes` in this run; `continued`: bytes an earlier, cut run
    /// had sent already (a multipart upload continued).
    Sent { bytes: u64, continued: u64 },
    /// The store held it already, with the published size and digest.
    AlreadyComplete,
}

/// One file's outcome.
pub type UploadOutcome = FileOutcome<Uploaded, UploadError>;

/// Every file's outcome (sorted by name) and what the run took.
pub type UploadSummary = Summary<Uploaded, UploadError>;

impl UploadSummary {
    /// Bytes sent to the store in this run, and those continued from earlier runs.
    pub fn sent(&self) -> (u64, u64) {
        self.files
            .iter()
            .filter_map(|f| match f.result {
                Ok(Uploaded::Sent { bytes, continued }) => Some((bytes, continued)),
                _ => None,
            })
            .fold((0, 0), |(a, b), (x, y)| (a + x, b + y))
    }
}

/// Where the bytes come from.
pub enum Source {
    /// A local table directory.
    Directory(PathBuf),
    /// Mirror directories (tried in turn while they answer 404), fetched
    /// through `staging`.
    Mirror {
        client: Client,
        from: Vec<Url>,
        staging: PathBuf,
    },
}

/// The bucket and prefix the tables go to.
pub struct Target {
    store: Arc<AmazonS3>,
    url: RemoteUrl,
    bucket: String,
    endpoint: String,
    part_size: u64,
    state_dir: PathBuf,
}

impl Target {
    /// The client for `url`, tried with one LIST so that missing
    /// credentials, a missing bucket, a store not reached and a key not
    /// allowed are said before anything is read.
    pub async fn connect(
        url: RemoteUrl,
        options: &RemoteOptions,
        part_size: u64,
        state_dir: Option<PathBuf>,
    ) -> Result<Target, TargetError> {
        let Scheme::S3 { bucket, prefix } = url.scheme.clone() else {
            return Err(TargetError::NotS3(url.to_string()));
        };
        if !has_credentials() {
            return Err(TargetError::NoCredentials);
        }
        let state_dir = state_dir.ok_or(TargetError::NoStateDir)?;
        let store = Arc::new(s3_client(&url, &bucket, options)?);
        let endpoint = options
            .s3_endpoint
            .clone()
            .unwrap_or_else(|| "AWS S3".to_string());
        let root = (!prefix.is_empty()).then(|| ObjectPath::from(prefix.as_str()));
        if let Some(Err(err)) = store.list(root.as_ref()).next().await {
            return Err(classify(err, &url, &bucket, &endpoint));
        }
        Ok(Target {
            store,
            url,
            bucket,
            endpoint,
            part_size: part_size.max(MIN_PART_SIZE),
            state_dir,
        })
    }

    /// The journal of the upload of `file`.
    fn journal_path(&self, file: &str) -> PathBuf {
        let location = self.url.location(file);
        upload_journal::path(&self.state_dir, &self.bucket, location.as_ref())
    }

    /// Where an upload's journal is kept: the state directory's `uploads/`.
    pub fn journal_dir(&self) -> PathBuf {
        self.state_dir.join(upload_journal::UPLOADS_SUBDIR)
    }

    pub fn url(&self) -> &RemoteUrl {
        &self.url
    }

    /// Whether the store holds `planned` already: the published size
    /// (where one is) and the published digest recorded by the upload
    /// that checked it.
    async fn holds(&self, planned: &PlannedFile) -> Result<bool, UploadError> {
        let options = GetOptions {
            head: true,
            ..GetOptions::default()
        };
        let location = self.url.location(&planned.file);
        let found = match self.store.get_opts(&location, options).await {
            Ok(found) => found,
            Err(object_store::Error::NotFound { .. }) => return Ok(false),
            Err(err) => return Err(self.store_error(&planned.file, err)),
        };
        let digest = &planned.expected.digest;
        let recorded = found
            .attributes
            .get(&Attribute::Metadata(digest.algorithm().into()))
            .map(|value| value.to_string());
        let size_right = planned.expected.size.is_none_or(|s| s == found.meta.size);
        Ok(size_right && recorded.as_deref() == Some(digest.hex()))
    }

    fn store_error(&self, file: &str, err: object_store::Error) -> UploadError {
        UploadError::Store {
            file: file.to_string(),
            detail: err.to_string(),
        }
    }

    /// The object's metadata: the digest it was checked against.
    fn attributes(planned: &PlannedFile) -> Attributes {
        let digest = &planned.expected.digest;
        let mut attributes = Attributes::new();
        attributes.insert(
            Attribute::Metadata(digest.algorithm().into()),
            AttributeValue::from(digest.hex().to_string()),
        );
        attributes
    }

    /// Uploads the local file `path` as `planned`, unless its size or
    /// digest is not the published one.
    async fn upload_file(
        &self,
        path: &Path,
        planned: &PlannedFile,
        progress: &dyn Progress,
    ) -> Result<Uploaded, UploadError> {
        let file = planned.file.clone();
        let read_err = |source| UploadError::Read {
            file: file.clone(),
            path: path.to_path_buf(),
            source,
        };
        let opened = File::open(path).map_err(|err| match err.kind() {
            io::ErrorKind::NotFound => UploadError::Missing {
                file: file.clone(),
                dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
            },
            _ => read_err(err),
        })?;
        let meta = opened.metadata().map_err(read_err)?;
        if let Some(expected) = planned.expected.size.filter(|&s| s != meta.len()) {
            return Err(UploadError::WrongSize {
                file,
                got: meta.len(),
                expected,
            });
        }
        let source = SourceFile {
            file: Arc::new(opened),
            path: path.to_path_buf(),
            size: meta.len(),
            mtime_ns: manifest::mtime_ns(&meta),
        };
        if source.size <= self.part_size {
            return self.put_whole(&source, planned, progress).await;
        }
        match self.put_parts(&source, planned, progress).await {
            // The store no longer knows the upload a journal named (aborted,
            // expired): once more from the first part.
            Err(PartsError::Gone) => match self.put_parts(&source, planned, progress).await {
                Err(PartsError::Gone) => Err(UploadError::Store {
                    file,
                    detail: "the store lost the upload just begun".to_string(),
                }),
                Err(PartsError::Failed(err)) => Err(err),
                Ok(done) => Ok(done),
            },
            Err(PartsError::Failed(err)) => Err(err),
            Ok(done) => Ok(done),
        }
    }

    /// A file of at most one part: read, checked, one PUT.
    async fn put_whole(
        &self,
        source: &SourceFile,
        planned: &PlannedFile,
        progress: &dyn Progress,
    ) -> Result<Uploaded, UploadError> {
        let digest = Digester::new(&planned.expected.digest);
        let (digest, bytes) = source.read(0, source.size, digest, &planned.file).await?;
        check_digest(digest, planned)?;
        let options = object_store::PutOptions::from(Target::attributes(planned));
        let location = self.url.location(&planned.file);
        self.store
            .put_opts(&location, PutPayload::from(bytes), options)
            .await
            .map_err(|err| self.store_error(&planned.file, err))?;
        progress.advance(source.size);
        Ok(Uploaded::Sent {
            bytes: source.size,
            continued: 0,
        })
    }

    /// A multipart upload, continued from its journal where one matches.
    async fn put_parts(
        &self,
        source: &SourceFile,
        planned: &PlannedFile,
        progress: &dyn Progress,
    ) -> Result<Uploaded, PartsError> {
        let file = planned.file.as_str();
        let location = self.url.location(file);
        let journal_path = self.journal_path(file);
        let mut journal = self.journal_for(source, planned, &journal_path).await?;
        let continued = journal.bytes_sent();
        // The digest covers every byte: those sent by an earlier run are
        // read again (locally), not sent again.
        let digest = Digester::new(&planned.expected.digest);
        let (mut digest, _) = source.read(0, continued, digest, file).await?;
        progress.advance(continued);
        let parts = source.size.div_ceil(self.part_size) as usize;
        for index in journal.parts.len()..parts {
            let start = index as u64 * self.part_size;
            let len = self.part_size.min(source.size - start);
            let (next, bytes) = source.read(start, len, digest, file).await?;
            digest = next;
            let id = journal.upload_id.clone();
            let sent = self
                .store
                .put_part(&location, &id, index, PutPayload::from(bytes))
                .await;
            match sent {
                Ok(part) => journal.parts.push(part.content_id),
                Err(object_store::Error::NotFound { .. }) => {
                    return Err(self.forget(&journal_path, file));
                }
                Err(err) => return Err(self.store_error(file, err).into()),
            }
            upload_journal::save(&journal_path, &journal)
                .map_err(|source| journal_error(file, &journal_path, source))?;
            progress.advance(len);
        }
        if !source.unchanged() {
            self.abort(&journal, &journal_path).await;
            return Err(UploadError::Changed { file: file.into() }.into());
        }
        if let Err(err) = check_digest(digest, planned) {
            self.abort(&journal, &journal_path).await;
            return Err(err.into());
        }
        let parts = journal
            .parts
            .iter()
            .map(|id| object_store::multipart::PartId {
                content_id: id.clone(),
            })
            .collect();
        match self
            .store
            .complete_multipart(&location, &journal.upload_id, parts)
            .await
        {
            Ok(_) => {}
            Err(object_store::Error::NotFound { .. }) => {
                return Err(self.forget(&journal_path, file));
            }
            Err(err) => return Err(self.store_error(file, err).into()),
        }
        let _ = upload_journal::remove(&journal_path);
        Ok(Uploaded::Sent {
            bytes: source.size - continued,
            continued,
        })
    }

    /// The journal of an upload of `source` to continue, or of a new one
    /// (begun now; an earlier upload of another source aborted).
    async fn journal_for(
        &self,
        source: &SourceFile,
        planned: &PlannedFile,
        journal_path: &Path,
    ) -> Result<Journal, PartsError> {
        let file = planned.file.as_str();
        let location = self.url.location(file);
        let mut fresh = Journal {
            endpoint: self.endpoint.clone(),
            object: self.url.path_of(file).display().to_string(),
            upload_id: String::new(),
            part_size: self.part_size,
            source_size: source.size,
            source_mtime_ns: source.mtime_ns,
            parts: Vec::new(),
        };
        match upload_journal::load(journal_path) {
            Some(old) if old.continues(&fresh) => {
                tracing::info!(
                    "{file}: continuing its upload after part {} of {}",
                    old.parts.len(),
                    source.size.div_ceil(self.part_size)
                );
                return Ok(old);
            }
            Some(old) => self.abort(&old, journal_path).await,
            None => {}
        }
        let options = object_store::PutMultipartOptions::from(Target::attributes(planned));
        fresh.upload_id = self
            .store
            .create_multipart_opts(&location, options)
            .await
            .map_err(|err| self.store_error(file, err))?;
        upload_journal::save(journal_path, &fresh)
            .map_err(|source| journal_error(file, journal_path, source))?;
        Ok(fresh)
    }

    /// Discards an upload and its journal (the store may have lost it
    /// already: its answer does not matter).
    async fn abort(&self, journal: &Journal, journal_path: &Path) {
        let location = match self.url.relative(&journal.object) {
            Some(relative) => self.url.location(relative),
            None => return,
        };
        if let Err(err) = self
            .store
            .abort_multipart(&location, &journal.upload_id)
            .await
        {
            tracing::debug!("{}: aborting the upload: {err}", journal.object);
        }
        let _ = upload_journal::remove(journal_path);
    }

    /// The store does not know the journal's upload: forget it.
    fn forget(&self, journal_path: &Path, file: &str) -> PartsError {
        tracing::warn!("{file}: the store no longer knows its upload; starting it again");
        let _ = upload_journal::remove(journal_path);
        PartsError::Gone
    }
}

/// A multipart upload's failure: the upload gone from the store (begin
/// again), or a file's failure.
enum PartsError {
    Gone,
    Failed(UploadError),
}

impl From<UploadError> for PartsError {
    fn from(err: UploadError) -> Self {
        PartsError::Failed(err)
    }
}

fn journal_error(file: &str, path: &Path, source: io::Error) -> PartsError {
    PartsError::Failed(UploadError::Journal {
        file: file.to_string(),
        path: path.to_path_buf(),
        source,
    })
}

/// The local file an upload reads, as it was when opened.
struct SourceFile {
    file: Arc<File>,
    path: PathBuf,
    size: u64,
    mtime_ns: i128,
}

impl SourceFile {
    /// `len` bytes from `start`, fed to `digest` too (on a blocking thread).
    async fn read(
        &self,
        start: u64,
        len: u64,
        mut digest: Digester,
        name: &str,
    ) -> Result<(Digester, Vec<u8>), UploadError> {
        let file = Arc::clone(&self.file);
        let read = tokio::task::spawn_blocking(move || {
            let mut bytes = vec![0u8; usize::try_from(len).map_err(io::Error::other)?];
            file.read_exact_at(&mut bytes, start)?;
            digest.update(&bytes);
            Ok::<_, io::Error>((digest, bytes))
        })
        .await
        .unwrap_or_else(|join| Err(io::Error::other(join)));
        read.map_err(|source| UploadError::Read {
            file: name.to_string(),
            path: self.path.clone(),
            source,
        })
    }

    /// Whether the file still has the size and time it had when opened.
    fn unchanged(&self) -> bool {
        fs::metadata(&self.path)
            .is_ok_and(|m| m.len() == self.size && manifest::mtime_ns(&m) == self.mtime_ns)
    }
}

/// The published digest's algorithm over a stream of bytes.
enum Digester {
    Sha256(Box<Sha256>),
    Md5(Box<Md5>),
}

impl Digester {
    fn new<Hex>(digest: &PublishedDigest<Hex>) -> Digester {
        match digest {
            PublishedDigest::Sha256(_) => Digester::Sha256(Box::default()),
            PublishedDigest::Md5(_) => Digester::Md5(Box::default()),
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            Digester::Sha256(sha) => sha.update(bytes),
            Digester::Md5(md5) => md5::Digest::update(md5.as_mut(), bytes),
        }
    }

    fn finish(self) -> String {
        match self {
            Digester::Sha256(sha) => hex(&sha.finalize()),
            Digester::Md5(md5) => hex(&md5::Digest::finalize(*md5)),
        }
    }
}

/// The file's digest against the published one.
fn check_digest(digest: Digester, planned: &PlannedFile) -> Result<(), UploadError> {
    let expected = &planned.expected.digest;
    let got = digest.finish();
    if got == expected.hex() {
        return Ok(());
    }
    Err(UploadError::Damaged {
        file: planned.file.clone(),
        algorithm: expected.algorithm(),
        got,
        expected: expected.hex().to_string(),
    })
}

/// Whether the environment gives credentials `object_store` takes: a key,
/// a web identity or container role, or (named, so that a machine without
/// any is told so at once instead of after the metadata service's
/// timeout) an instance role.
fn has_credentials() -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    (set("AWS_ACCESS_KEY_ID") && set("AWS_SECRET_ACCESS_KEY"))
        || set("AWS_METADATA_ENDPOINT")
        || set("AWS_WEB_IDENTITY_TOKEN_FILE")
        || set("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
        || set("AWS_CONTAINER_CREDENTIALS_FULL_URI")
}

/// A failed first LIST, sorted into what the operator must fix.
fn classify(
    err: object_store::Error,
    url: &RemoteUrl,
    bucket: &str,
    endpoint: &str,
) -> TargetError {
    let detail = err.to_string();
    let denied = [
        "AccessDenied",
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "Forbidden",
    ];
    match err {
        object_store::Error::NotFound { .. } => TargetError::BucketMissing {
            bucket: bucket.to_string(),
            endpoint: endpoint.to_string(),
            detail,
        },
        object_store::Error::PermissionDenied { .. }
        | object_store::Error::Unauthenticated { .. } => TargetError::AccessDenied {
            url: url.to_string(),
            detail,
        },
        _ if detail.contains("NoSuchBucket") => TargetError::BucketMissing {
            bucket: bucket.to_string(),
            endpoint: endpoint.to_string(),
            detail,
        },
        _ if denied.iter().any(|word| detail.contains(word)) => TargetError::AccessDenied {
            url: url.to_string(),
            detail,
        },
        _ => TargetError::Unreachable {
            endpoint: endpoint.to_string(),
            detail,
        },
    }
}

/// Uploads every planned file, `jobs` at a time; a file that fails is
/// reported in the summary, the others go on.
pub async fn upload_all(
    target: &Target,
    source: &Source,
    files: Vec<PlannedFile>,
    jobs: usize,
    progress: &dyn Progress,
) -> UploadSummary {
    let started = Instant::now();
    let total = files.len();
    progress.start(files.iter().filter_map(|f| f.size).sum(), total);
    let finished = AtomicUsize::new(0);
    let mut outcomes: Vec<UploadOutcome> = futures::stream::iter(files)
        .map(|planned| {
            let finished = &finished;
            async move {
                let result = upload_one(target, source, &planned, progress).await;
                let done = finished.fetch_add(1, Relaxed) + 1;
                progress.message(&format!("{done}/{total} files"));
                UploadOutcome {
                    file: planned.file,
                    pieces: planned.pieces,
                    result,
                }
            }
        })
        .buffer_unordered(jobs.max(1))
        .collect()
        .await;
    progress.finish();
    outcomes.sort_by(|a, b| a.file.cmp(&b.file));
    UploadSummary {
        files: outcomes,
        elapsed: started.elapsed(),
    }
}

/// One file: skipped if the store holds it, else uploaded from the
/// directory, or fetched from the mirror into staging and uploaded.
async fn upload_one(
    target: &Target,
    source: &Source,
    planned: &PlannedFile,
    progress: &dyn Progress,
) -> Result<Uploaded, UploadError> {
    if target.holds(planned).await? {
        // A run stopped between completing an upload and removing its
        // journal leaves one behind.
        let _ = upload_journal::remove(&target.journal_path(&planned.file));
        progress.advance(planned.size.unwrap_or(0));
        return Ok(Uploaded::AlreadyComplete);
    }
    match source {
        Source::Directory(dir) => {
            target
                .upload_file(&dir.join(&planned.file), planned, progress)
                .await
        }
        Source::Mirror {
            client,
            from,
            staging,
        } => {
            // The bar counts bytes uploaded; the download is quiet.
            fetch_one(client, from, staging, planned, &Silent)
                .await
                .map_err(|source| UploadError::Mirror {
                    file: planned.file.clone(),
                    source: Box::new(source),
                })?
                .map_err(|err| UploadError::Fetch(Box::new(err)))?;
            let staged = staging.join(&planned.file);
            let result = target.upload_file(&staged, planned, progress).await;
            if result.is_ok() {
                remove_staged(&staged);
            }
            result
        }
    }
}

/// Removes a staged file and the block checksums `fetch` recorded for it.
fn remove_staged(staged: &Path) {
    let dir = checksums::integrity_dir(staged);
    let table = crate::store::layout::file_name(staged);
    for path in [
        staged.to_path_buf(),
        manifest_path(&dir, &table),
        sums_path(&dir, &table),
    ] {
        if let Err(err) = fs::remove_file(&path)
            && err.kind() != io::ErrorKind::NotFound
        {
            tracing::warn!("cannot remove the staged {}: {err}", path.display());
        }
    }
}

/// The files of published tables in `dir`, by table (both files of each
/// table are then planned, so one missing is named).
pub fn tables_in(
    catalog: &crate::catalog::Catalog,
    dir: &Path,
) -> io::Result<std::collections::BTreeSet<&'static str>> {
    let mut tables = std::collections::BTreeSet::new();
    for entry in fs::read_dir(dir)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if catalog.published(&name).is_none() {
            continue;
        }
        let material = name.split('.').next().unwrap_or_default();
        if let Some(material) = catalog.canonical(material) {
            tables.insert(material);
        }
    }
    Ok(tables)
}

/// What the staging directory of a mirror's files is, for a bucket:
/// `STATE_DIR/uploads/BUCKET/staging`.
pub fn staging_dir(target: &Target) -> PathBuf {
    target.journal_dir().join(&target.bucket).join(".staging")
}

/// The object `serve --dtm s3://…` and `tier build --from s3://…` check
/// Prophet files against: `MD5SUMS` at the prefix.
pub async fn record_md5s(
    target: &Target,
    uploaded: &[(&str, &str)],
) -> Result<String, UploadError> {
    let location = target.url.location(MD5SUMS);
    let existing = match target
        .store
        .get_opts(&location, GetOptions::default())
        .await
    {
        Ok(found) => found
            .bytes()
            .await
            .map_err(|err| target.store_error(MD5SUMS, err))?,
        Err(object_store::Error::NotFound { .. }) => Default::default(),
        Err(err) => return Err(target.store_error(MD5SUMS, err)),
    };
    let text = merge_md5sums(
        &String::from_utf8_lossy(&existing),
        uploaded.iter().copied(),
    );
    target
        .store
        .put_opts(
            &location,
            PutPayload::from(text.into_bytes()),
            object_store::PutOptions::default(),
        )
        .await
        .map_err(|err| target.store_error(MD5SUMS, err))?;
    Ok(format!("{}/{MD5SUMS}", target.url))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generic(text: &str) -> object_store::Error {
        object_store::Error::Generic {
            store: "S3",
            source: text.into(),
        }
    }

    #[test]
    fn sorts_a_failed_first_list_into_what_to_fix() {
        let url = match RemoteUrl::parse("s3://tables/standard") {
            Some(Ok(url)) => url,
            other => panic!("{other:?}"),
        };
        let sort = |err| classify(err, &url, "tables", "http://10.0.0.5:3900");
        let missing = object_store::Error::NotFound {
            path: "tables".into(),
            source: "404".into(),
        };
        assert!(matches!(sort(missing), TargetError::BucketMissing { .. }));
        let body = "404 Not Found: <Error><Code>NoSuchBucket</Code></Error>";
        assert!(matches!(
            sort(generic(body)),
            TargetError::BucketMissing { .. }
        ));
        let denied = object_store::Error::PermissionDenied {
            path: "tables".into(),
            source: "403".into(),
        };
        assert!(matches!(sort(denied), TargetError::AccessDenied { .. }));
        let body = "403 Forbidden: <Error><Code>AccessDenied</Code></Error>";
        assert!(matches!(
            sort(generic(body)),
            TargetError::AccessDenied { .. }
        ));
        let refused = sort(generic("HTTP error: error sending request"));
        assert!(matches!(refused, TargetError::Unreachable { .. }));
        assert!(
            refused.to_string().contains("http://10.0.0.5:3900"),
            "{refused}"
        );
    }

    #[test]
    fn digests_by_the_published_algorithm() {
        let mut sha = Digester::new(&PublishedDigest::Sha256(""));
        sha.update(b"abc");
        assert_eq!(
            sha.finish(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let mut md5 = Digester::new(&PublishedDigest::Md5(""));
        md5.update(b"abc");
        assert_eq!(md5.finish(), "900150983cd24fb0d6963f7d28e17f72");
    }
}
