//! Typed JSON records over the storage port, with compare-and-swap updates.

use crate::ports::{Condition, Storage, StorageError, Write};
use crate::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// How often an update is retried after another writer won the race.
pub const MAX_CAS_ATTEMPTS: usize = 16;

/// Reads a JSON record and its version. A record that no longer parses is
/// reported as an error rather than silently treated as absent.
pub fn get_json<T: DeserializeOwned>(
    storage: &dyn Storage,
    namespace: &str,
    key: &str,
) -> Result<Option<(T, u64)>, StorageError> {
    let Some(entry) = storage.get(namespace, key)? else {
        return Ok(None);
    };
    let value = serde_json::from_slice(&entry.value)
        .map_err(|e| StorageError::Other(format!("record {namespace}/{key} is not readable: {e}")))?;
    Ok(Some((value, entry.version)))
}

/// Writes a JSON record if `when` holds.
pub fn put_json<T: Serialize>(
    storage: &dyn Storage,
    namespace: &str,
    key: &str,
    value: &T,
    when: Condition,
) -> Result<u64, StorageError> {
    let bytes = serde_json::to_vec(value)
        .map_err(|e| StorageError::Other(format!("record {namespace}/{key} cannot be encoded: {e}")))?;
    storage.set(namespace, key, &bytes, when)
}

/// A batch write of a JSON record if `when` holds.
pub fn json_write<T: Serialize>(namespace: &str, key: &str, value: &T, when: Condition) -> Result<Write, StorageError> {
    let bytes = serde_json::to_vec(value)
        .map_err(|e| StorageError::Other(format!("record {namespace}/{key} cannot be encoded: {e}")))?;
    Ok(Write::put(namespace, key, bytes, when))
}

/// The condition that a record is still as it was read: its version, or absent.
pub fn unchanged<T>(read: &Option<(T, u64)>) -> Condition {
    match read {
        Some((_, version)) => Condition::Version(*version),
        None => Condition::Absent,
    }
}

/// Reads, changes and writes back one record, retrying when another writer
/// changed it in between. `change` gets the current record (or `None`) and
/// returns the new one; returning `None` leaves storage as it is.
pub fn update_json<T: Serialize + DeserializeOwned>(
    storage: &dyn Storage,
    namespace: &str,
    key: &str,
    mut change: impl FnMut(Option<T>) -> Option<T>,
) -> Result<Option<T>, StorageError> {
    for _ in 0..MAX_CAS_ATTEMPTS {
        let current = get_json::<T>(storage, namespace, key)?;
        let (value, when) = match current {
            Some((value, version)) => (Some(value), Condition::Version(version)),
            None => (None, Condition::Absent),
        };
        let Some(next) = change(value) else {
            return Ok(None);
        };
        match put_json(storage, namespace, key, &next, when) {
            Ok(_) => return Ok(Some(next)),
            Err(StorageError::Conflict) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(StorageError::Conflict)
}
