//! A one-node Garage (S3) on loopback for the tests of tables in an object
//! store: started in a temp dir on free ports, with a bucket and a key
//! allowed to read and write it; killed on drop.

use std::{
    net::SocketAddr,
    path::Path,
    process::{Child, Command, Stdio},
    sync::Arc,
    thread,
    time::{Duration, Instant},
};

use object_store::{
    ObjectStore, ObjectStoreExt, PutPayload, aws::AmazonS3Builder, path::Path as ObjectPath,
};

use super::{free_port, installed};
use crate::{common, process::PATIENCE};

/// Whether `garage` runs here; if not, says so (a `SKIPPED:` line, or a
/// failure under `ZUGZWANG_REQUIRE_SHARED`) naming what was not tested.
pub fn available(not_tested: &str) -> bool {
    if installed("garage", "--version") {
        return true;
    }
    common::missing(&format!(
        "garage not installed (cargo install garage --version 2.5.0 --locked, as .ci/install does); {not_tested} were not tested"
    ));
    false
}

pub const BUCKET: &str = "tables";
pub const PREFIX: &str = "standard";
pub const REGION: &str = "garage";

/// A one-node Garage in its own temp dir; killed on drop.
pub struct Garage {
    child: Option<Child>,
    dir: tempfile::TempDir,
    s3: SocketAddr,
    key_id: String,
    secret: String,
}

impl Garage {
    pub fn start() -> Garage {
        let dir = tempfile::tempdir().expect("temp dir");
        let (rpc, s3) = (free_port(), free_port());
        let config = format!(
            r#"metadata_dir = "{root}/meta"
data_dir = "{root}/data"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "{rpc}"
rpc_public_addr = "{rpc}"
rpc_secret = "{secret}"

[s3_api]
s3_region = "{REGION}"
api_bind_addr = "{s3}"
root_domain = ".s3.garage.localhost"
"#,
            root = dir.path().display(),
            secret = "6c1e0f4e0a1b2c3d4e5f60718293a4b5c6d7e8f9011223344556677889900aab",
        );
        std::fs::write(dir.path().join("garage.toml"), config).expect("garage.toml");
        let mut garage = Garage {
            child: None,
            dir,
            s3,
            key_id: String::new(),
            secret: String::new(),
        };
        garage.run_server();
        garage.wait_for_rpc();
        garage.set_up();
        garage
    }

    fn run_server(&mut self) {
        let log = std::fs::File::options()
            .create(true)
            .append(true)
            .open(self.dir.path().join("garage.log"))
            .expect("garage.log");
        let child = Command::new("garage")
            .arg("-c")
            .arg(self.dir.path().join("garage.toml"))
            .arg("server")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start garage");
        self.child = Some(child);
    }

    /// `garage ARGS` against this node; its output, or a panic with it.
    pub fn cli(&self, args: &[&str]) -> Result<String, String> {
        let output = Command::new("garage")
            .arg("-c")
            .arg(self.dir.path().join("garage.toml"))
            .args(args)
            .output()
            .expect("run garage");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        match output.status.success() {
            true => Ok(text),
            false => Err(text),
        }
    }

    pub fn must(&self, args: &[&str]) -> String {
        self.cli(args)
            .unwrap_or_else(|err| panic!("garage {}: {err}\n{}", args.join(" "), self.log()))
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("garage.log")).unwrap_or_default()
    }

    fn wait_for_rpc(&self) {
        let started = Instant::now();
        while self.cli(&["status"]).is_err() {
            assert!(
                started.elapsed() < PATIENCE,
                "garage did not start:\n{}",
                self.log()
            );
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// The layout, a bucket and a key allowed to read and write it.
    fn set_up(&mut self) {
        let id = self.must(&["node", "id", "-q"]);
        let id = id.trim().split('@').next().expect("a node id").to_string();
        self.must(&["layout", "assign", "-z", "dc1", "-c", "1G", &id]);
        self.must(&["layout", "apply", "--version", "1"]);
        self.must(&["bucket", "create", BUCKET]);
        let key = self.must(&["key", "create", "zugzwang-test"]);
        let value = |label: &str| {
            key.lines()
                .find_map(|line| line.trim().strip_prefix(label))
                .map(|rest| rest.trim().to_string())
                .unwrap_or_else(|| panic!("no {label} in {key}"))
        };
        self.key_id = value("Key ID:");
        self.secret = value("Secret key:");
        self.must(&[
            "bucket",
            "allow",
            "--read",
            "--write",
            "--owner",
            BUCKET,
            "--key",
            "zugzwang-test",
        ]);
    }

    pub fn endpoint(&self) -> String {
        format!("http://{}", self.s3)
    }

    /// The environment and flags a `zugzwang` command reads the bucket with.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID", self.key_id.clone()),
            ("AWS_SECRET_ACCESS_KEY", self.secret.clone()),
            ("AWS_REGION", REGION.to_string()),
        ]
    }

    pub fn store(&self) -> Arc<dyn ObjectStore> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let store = AmazonS3Builder::new()
            .with_endpoint(self.endpoint())
            .with_allow_http(true)
            .with_region(REGION)
            .with_bucket_name(BUCKET)
            .with_access_key_id(&self.key_id)
            .with_secret_access_key(&self.secret)
            .with_unsigned_payload(true)
            .build()
            .expect("an S3 client");
        Arc::new(store)
    }

    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the stopped node again, on its ports, with its data.
    pub fn restart(&mut self) {
        self.run_server();
        let started = Instant::now();
        while std::net::TcpStream::connect(self.s3).is_err() {
            assert!(started.elapsed() < PATIENCE, "garage did not come back");
            thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Garage {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Uploads `files` (name, bytes) under the prefix, a few at a time.
pub fn upload(store: &Arc<dyn ObjectStore>, files: Vec<(String, Vec<u8>)>) {
    upload_under(store, PREFIX, files);
}

/// Uploads `files` (name, bytes) under `prefix`, a few at a time.
pub fn upload_under(store: &Arc<dyn ObjectStore>, prefix: &str, files: Vec<(String, Vec<u8>)>) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        use futures::StreamExt;
        let puts = futures::stream::iter(files).map(|(name, bytes)| {
            let store = Arc::clone(store);
            async move {
                let location = ObjectPath::from(format!("{prefix}/{name}"));
                let started = Instant::now();
                loop {
                    match store.put(&location, PutPayload::from(bytes.clone())).await {
                        Ok(_) => return,
                        // The layout may take a moment to apply.
                        Err(err) if started.elapsed() < PATIENCE => {
                            eprintln!("PUT {name}: {err}; again");
                            tokio::time::sleep(Duration::from_millis(500)).await;
                        }
                        Err(err) => panic!("PUT {name}: {err}"),
                    }
                }
            }
        });
        puts.buffer_unordered(4).collect::<Vec<()>>().await;
    });
}

/// The table files of `dir` (Syzygy and Prophet, and the `MD5SUMS` that
/// vouches for Prophet files), with their bytes, sorted by name.
pub fn table_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .expect("the tables")
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let name = path.file_name()?.to_str()?.to_string();
            let table = server::store::layout::is_table_name(&name)
                || name.ends_with(".egtb.bz")
                || name == "MD5SUMS";
            table.then(|| (name, std::fs::read(&path).expect("read a table")))
        })
        .collect();
    files.sort();
    files
}
