//! Zugzwang's server: the probe engine, the table stores and the HTTP API.

pub mod bench;
pub mod cli;
pub mod connections;
pub mod engine;
pub mod http;
pub mod limits;
pub mod listener;
pub mod process_health;
pub mod request_log;
pub mod scrub;
pub mod serve;
pub mod shutdown;
pub mod store;
pub mod tier;
pub mod verify;
