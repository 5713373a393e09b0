//! Process-level services that `serve` starts around the HTTP router: the
//! open-files limit (`open_files`), the listening socket (`listener`), the
//! accept loop and its timeouts (`connections`), what each connection is
//! doing (`activity`) and which one is closed to make room at the cap
//! (`eviction`), draining on SIGTERM (`shutdown`), the log of served
//! positions (`request_log`), the memory and descriptor figures for
//! /metrics (`process_health`) and how much memory the caches get by
//! default (`memory_limit`).

pub mod activity;
pub mod connections;
pub mod eviction;
pub mod listener;
pub mod memory_limit;
pub mod open_files;
pub mod process_health;
pub mod request_log;
pub mod shutdown;
