//! Running out of file descriptors is an error answer (503), not a crash, and
//! the server recovers once descriptors are free again. Alone in its test
//! binary because it lowers the whole process's open-files limit.

mod common;

use axum::http::StatusCode;
use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

const KQVK: &str = "/standard?fen=4k3/8/8/8/8/8/8/3QK3_w_-_-_0_1";

/// Highest file descriptor number in use, from /proc.
fn highest_open_fd() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u64>().ok())
        .max()
        .expect("some descriptor is open")
}

#[tokio::test]
async fn out_of_descriptors_is_a_503_naming_the_table_then_recovers() {
    let dir = common::copy_of_embedded_tables();
    let router = common::router(common::engine_with(vec![dir.path().to_path_buf()]));

    let saved = getrlimit(Resource::Nofile);
    let no_room = Rlimit {
        current: Some(highest_open_fd() + 1),
        maximum: saved.maximum,
    };
    setrlimit(Resource::Nofile, no_room).expect("lower the limit");
    // Fill any free numbers below the limit, so no descriptor is left at all.
    let mut fillers = Vec::new();
    while let Ok(file) = std::fs::File::open("/dev/null") {
        fillers.push(file);
    }
    let (status, body) = common::get_json(&router, KQVK).await;
    drop(fillers);
    setrlimit(Resource::Nofile, saved).expect("restore the limit");

    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let message = body["error"].as_str().expect("message");
    assert!(message.contains("too many open files"), "{message}");
    assert!(message.contains("KQvK"), "{message}");

    let (status, body) = common::get_json(&router, KQVK).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["category"], "win");
}
