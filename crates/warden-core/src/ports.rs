//! The only ways the core reaches the outside world. The component implements
//! these over the WIT imports; tests implement them with the fakes in
//! `crate::fakes`.

use crate::prelude::*;

/// HTTP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Put,
    Delete,
}

/// One outbound request. The host attaches credentials per destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRequest {
    pub destination: String,
    pub method: Method,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub timeout_ms: u32,
}

/// One response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// Why a request got no response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpError {
    Denied,
    MissingCredential,
    Timeout,
    TooLarge,
    Cancelled,
    Transport(String),
}

impl HttpError {
    /// A stable code for logs and diagnostics.
    pub fn code(&self) -> &'static str {
        match self {
            HttpError::Denied => "denied",
            HttpError::MissingCredential => "missing_credential",
            HttpError::Timeout => "timeout",
            HttpError::TooLarge => "too_large",
            HttpError::Cancelled => "cancelled",
            HttpError::Transport(_) => "transport",
        }
    }
}

/// Outbound HTTP through the host.
pub trait Http {
    fn send(&self, request: &HttpRequest) -> Result<HttpResponse, HttpError>;

    /// Send several requests concurrently; answers come back in request order.
    fn send_all(&self, requests: &[HttpRequest]) -> Vec<Result<HttpResponse, HttpError>>;
}

/// A stored value and its version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub value: Vec<u8>,
    pub version: u64,
}

/// When a write or delete may happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    Any,
    Absent,
    Version(u64),
}

/// Why storage failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageError {
    Unavailable(String),
    Conflict,
    TooLarge,
    Other(String),
}

impl core::fmt::Display for StorageError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            StorageError::Unavailable(m) => write!(f, "storage unavailable: {m}"),
            StorageError::Conflict => f.write_str("storage conflict"),
            StorageError::TooLarge => f.write_str("value too large for storage"),
            StorageError::Other(m) => write!(f, "storage error: {m}"),
        }
    }
}

/// One write of an atomic batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// Set a key if the condition holds.
    Put { namespace: String, key: String, value: Vec<u8>, when: Condition },
    /// Delete a key if the condition holds; an absent key is a conflict only under `Version`.
    Remove { namespace: String, key: String, when: Condition },
}

impl Write {
    pub fn put(namespace: &str, key: &str, value: Vec<u8>, when: Condition) -> Write {
        Write::Put { namespace: namespace.into(), key: key.into(), value, when }
    }

    pub fn remove(namespace: &str, key: &str, when: Condition) -> Write {
        Write::Remove { namespace: namespace.into(), key: key.into(), when }
    }
}

/// Why a batch was not committed; nothing of it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchError {
    /// The condition of the write at this index did not hold.
    Conflict(usize),
    /// The storage failed.
    Failed(StorageError),
}

impl From<StorageError> for BatchError {
    fn from(e: StorageError) -> Self {
        BatchError::Failed(e)
    }
}

impl From<BatchError> for StorageError {
    fn from(e: BatchError) -> Self {
        match e {
            BatchError::Conflict(_) => StorageError::Conflict,
            BatchError::Failed(e) => e,
        }
    }
}

/// Namespaced key-value storage with versions for compare-and-swap.
pub trait Storage {
    fn get(&self, namespace: &str, key: &str) -> Result<Option<Entry>, StorageError>;
    fn set(&self, namespace: &str, key: &str, value: &[u8], when: Condition) -> Result<u64, StorageError>;
    fn delete(&self, namespace: &str, key: &str, when: Condition) -> Result<bool, StorageError>;
    fn list(
        &self,
        namespace: &str,
        prefix: &str,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<(String, Entry)>, StorageError>;
    /// Applies every write in order, or none of them.
    fn commit(&self, writes: &[Write]) -> Result<(), BatchError>;
}

/// Log severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug,
    Info,
    Warn,
    Error,
}

/// Operator logs. Callers never pass message text of users unless `debug` is on.
pub trait Log {
    fn write(&self, level: Level, message: &str);

    /// Whether a line at `level` would be kept; callers skip formatting a
    /// line that would not. By default every level is.
    fn enabled(&self, _level: Level) -> bool {
        true
    }
}

/// The three ports a check may use, borrowed for one call.
#[derive(Clone, Copy)]
pub struct Ports<'a> {
    pub http: &'a dyn Http,
    pub storage: &'a dyn Storage,
    pub log: &'a dyn Log,
}
