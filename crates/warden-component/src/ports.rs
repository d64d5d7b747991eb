//! The core's ports over the world's imports. Host errors become typed core
//! errors; nothing here traps on a host failure.

use crate::warden::guard::{http, log, storage};
use alloc::string::String;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU8, Ordering};
use warden_core::ports::{
    BatchError, Condition, Entry, Http, HttpError, HttpRequest, HttpResponse, Level, Log, Ports, Storage, StorageError,
    Write,
};

pub struct HostHttp;
pub struct HostStorage;
pub struct HostLog;

/// The least severe level the host keeps, as `level as u8 + 1`; 0 keeps every line.
static KEPT_FROM: AtomicU8 = AtomicU8::new(0);

fn rank(level: Level) -> u8 {
    match level {
        Level::Debug => 1,
        Level::Info => 2,
        Level::Warn => 3,
        Level::Error => 4,
    }
}

/// Takes the log level the host declared; `None` keeps every line.
pub fn keep_from(level: Option<log::Level>) {
    let kept = level.map_or(0, |l| {
        rank(match l {
            log::Level::Debug => Level::Debug,
            log::Level::Info => Level::Info,
            log::Level::Warn => Level::Warn,
            log::Level::Error => Level::Error,
        })
    });
    KEPT_FROM.store(kept, Ordering::Relaxed);
}

/// The ports of this instance.
pub fn host() -> Ports<'static> {
    Ports { http: &HostHttp, storage: &HostStorage, log: &HostLog }
}

fn request(r: &HttpRequest) -> http::Request {
    http::Request {
        destination: r.destination.clone(),
        method: match r.method {
            warden_core::ports::Method::Get => http::Method::Get,
            warden_core::ports::Method::Post => http::Method::Post,
            warden_core::ports::Method::Put => http::Method::Put,
            warden_core::ports::Method::Delete => http::Method::Delete,
        },
        url: r.url.clone(),
        headers: r.headers.clone(),
        body: r.body.clone(),
        timeout_ms: r.timeout_ms,
    }
}

fn answer(r: Result<http::Response, http::HttpError>) -> Result<HttpResponse, HttpError> {
    match r {
        Ok(resp) => Ok(HttpResponse { status: resp.status, headers: resp.headers, body: resp.body }),
        Err(e) => Err(match e {
            http::HttpError::Denied => HttpError::Denied,
            http::HttpError::MissingCredential => HttpError::MissingCredential,
            http::HttpError::Timeout => HttpError::Timeout,
            http::HttpError::TooLarge => HttpError::TooLarge,
            http::HttpError::Cancelled => HttpError::Cancelled,
            http::HttpError::Transport(m) => HttpError::Transport(m),
        }),
    }
}

impl Http for HostHttp {
    fn send(&self, r: &HttpRequest) -> Result<HttpResponse, HttpError> {
        answer(http::send(&request(r)))
    }

    fn send_all(&self, rs: &[HttpRequest]) -> Vec<Result<HttpResponse, HttpError>> {
        let reqs: Vec<http::Request> = rs.iter().map(request).collect();
        http::send_all(&reqs).into_iter().map(answer).collect()
    }
}

fn condition(c: Condition) -> storage::Condition {
    match c {
        Condition::Any => storage::Condition::Any,
        Condition::Absent => storage::Condition::Absent,
        Condition::Version(v) => storage::Condition::Version(v),
    }
}

fn storage_error(e: storage::StorageError) -> StorageError {
    match e {
        storage::StorageError::Unavailable(m) => StorageError::Unavailable(m),
        storage::StorageError::Conflict => StorageError::Conflict,
        storage::StorageError::TooLarge => StorageError::TooLarge,
        storage::StorageError::Other(m) => StorageError::Other(m),
    }
}

fn entry(e: storage::Entry) -> Entry {
    Entry { value: e.value, version: e.version }
}

impl Storage for HostStorage {
    fn get(&self, namespace: &str, key: &str) -> Result<Option<Entry>, StorageError> {
        storage::get(namespace, key).map(|e| e.map(entry)).map_err(storage_error)
    }

    fn set(&self, namespace: &str, key: &str, value: &[u8], when: Condition) -> Result<u64, StorageError> {
        storage::set(namespace, key, value, condition(when)).map_err(storage_error)
    }

    fn delete(&self, namespace: &str, key: &str, when: Condition) -> Result<bool, StorageError> {
        storage::delete(namespace, key, condition(when)).map_err(storage_error)
    }

    fn list(
        &self,
        namespace: &str,
        prefix: &str,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<(String, Entry)>, StorageError> {
        storage::list(namespace, prefix, limit, reverse)
            .map(|entries| entries.into_iter().map(|k| (k.key, entry(k.entry))).collect())
            .map_err(storage_error)
    }

    fn commit(&self, writes: &[Write]) -> Result<(), BatchError> {
        let writes: Vec<storage::Write> = writes
            .iter()
            .map(|w| match w {
                Write::Put { namespace, key, value, when } => storage::Write::Put(storage::PutWrite {
                    namespace: namespace.clone(),
                    key: key.clone(),
                    value: value.clone(),
                    when: condition(*when),
                }),
                Write::Remove { namespace, key, when } => storage::Write::Remove(storage::RemoveWrite {
                    namespace: namespace.clone(),
                    key: key.clone(),
                    when: condition(*when),
                }),
            })
            .collect();
        storage::commit(&writes).map_err(|e| match e {
            storage::BatchError::Conflict(i) => BatchError::Conflict(i as usize),
            storage::BatchError::Failed(e) => BatchError::Failed(storage_error(e)),
        })
    }
}

impl Log for HostLog {
    fn write(&self, level: Level, message: &str) {
        let level = match level {
            Level::Debug => log::Level::Debug,
            Level::Info => log::Level::Info,
            Level::Warn => log::Level::Warn,
            Level::Error => log::Level::Error,
        };
        log::write(level, message);
    }

    fn enabled(&self, level: Level) -> bool {
        rank(level) >= KEPT_FROM.load(Ordering::Relaxed)
    }
}
