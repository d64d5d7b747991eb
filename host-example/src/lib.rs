//! A wasmtime host for the Warden guard component.
//!
//! [`Runtime`] loads the component (embedded in this binary, or from a file),
//! configures it, and calls it from a pool of sandboxed instances. The host
//! provides the world's three imports: [`storage`] (SQLite by default),
//! [`http`] (an allow-listed gateway that owns credentials) and logging.
//! [`json`] maps the WIT records to and from the documented JSON used by the
//! `warden` command.

pub mod bindings;
pub mod cli;
pub mod clock;
pub mod hook;
pub mod host_context;
pub mod http;
mod imports;
pub mod json;
pub mod mcp;
pub mod mcp_tools;
pub mod memory_storage;
pub mod runtime;
pub mod serve;
pub mod storage;
pub mod storage_postgres;

pub use runtime::{CallError, ComponentSource, Limits, LogSink, Runtime, RuntimeOptions, StartError};

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
