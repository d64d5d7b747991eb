//! The world's imports, implemented on each instance's state. Time spent here
//! is host time and does not count against the guest's CPU deadline.

use crate::bindings::warden::guard::{http, log, storage, types};
use crate::runtime::HostState;
use crate::storage::{BatchError, Condition, StorageError, Write};
use std::time::Instant;

impl HostState {
    fn timed<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let started = Instant::now();
        let result = f(self);
        self.clock.host_time(started.elapsed());
        result
    }
}

impl types::Host for HostState {}

impl http::Host for HostState {
    fn send(&mut self, req: http::Request) -> Result<http::Response, http::HttpError> {
        self.timed(|s| s.http.send(&req))
    }

    fn send_all(&mut self, reqs: Vec<http::Request>) -> Vec<Result<http::Response, http::HttpError>> {
        self.timed(|s| s.http.send_all(&reqs))
    }
}

fn condition(c: storage::Condition) -> Condition {
    match c {
        storage::Condition::Any => Condition::Any,
        storage::Condition::Absent => Condition::Absent,
        storage::Condition::Version(v) => Condition::Version(v),
    }
}

fn error(e: StorageError) -> storage::StorageError {
    match e {
        StorageError::Unavailable(m) => storage::StorageError::Unavailable(m),
        StorageError::Conflict => storage::StorageError::Conflict,
        StorageError::TooLarge => storage::StorageError::TooLarge,
        StorageError::Other(m) => storage::StorageError::Other(m),
    }
}

impl storage::Host for HostState {
    fn get(&mut self, namespace: String, key: String) -> Result<Option<storage::Entry>, storage::StorageError> {
        self.timed(|s| {
            s.storage
                .get(&namespace, &key)
                .map(|r| r.map(|r| storage::Entry { value: r.value, version: r.version }))
                .map_err(error)
        })
    }

    fn set(
        &mut self,
        namespace: String,
        key: String,
        value: Vec<u8>,
        when: storage::Condition,
    ) -> Result<u64, storage::StorageError> {
        self.timed(|s| s.storage.set(&namespace, &key, &value, condition(when)).map_err(error))
    }

    fn delete(
        &mut self,
        namespace: String,
        key: String,
        when: storage::Condition,
    ) -> Result<bool, storage::StorageError> {
        self.timed(|s| s.storage.delete(&namespace, &key, condition(when)).map_err(error))
    }

    fn list(
        &mut self,
        namespace: String,
        prefix: String,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<storage::KeyedEntry>, storage::StorageError> {
        self.timed(|s| {
            s.storage
                .list(&namespace, &prefix, limit, reverse)
                .map(|rows| {
                    rows.into_iter()
                        .map(|(key, r)| storage::KeyedEntry {
                            key,
                            entry: storage::Entry { value: r.value, version: r.version },
                        })
                        .collect()
                })
                .map_err(error)
        })
    }

    fn commit(&mut self, writes: Vec<storage::Write>) -> Result<(), storage::BatchError> {
        let writes: Vec<Write> = writes
            .into_iter()
            .map(|w| match w {
                storage::Write::Put(p) => {
                    Write::Put { namespace: p.namespace, key: p.key, value: p.value, when: condition(p.when) }
                }
                storage::Write::Remove(r) => {
                    Write::Remove { namespace: r.namespace, key: r.key, when: condition(r.when) }
                }
            })
            .collect();
        self.timed(|s| {
            s.storage.commit(&writes).map_err(|e| match e {
                BatchError::Conflict(i) => storage::BatchError::Conflict(i),
                BatchError::Failed(e) => storage::BatchError::Failed(error(e)),
            })
        })
    }
}

impl log::Host for HostState {
    fn write(&mut self, level: log::Level, message: String) {
        (self.log)(level, &message);
    }
}
