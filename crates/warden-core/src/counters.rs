//! Diagnostics counters, persisted through the storage port so that every
//! instance and every restart adds to the same numbers.
//!
//! Failure mode: counting never changes a decision. A counter that cannot be
//! written is logged and dropped.

use crate::model::Counter;
use crate::ports::{Level, Ports, StorageError};
use crate::prelude::*;
use crate::store;

/// Storage namespace of counters, keyed by dotted counter name.
pub const NAMESPACE: &str = "counters";
/// Most counters diagnostics report.
pub const MAX_REPORTED: u32 = 10_000;

/// Adds one to counter `name`.
pub fn bump(ports: &Ports<'_>, name: &str) {
    let result = store::update_json::<u64>(ports.storage, NAMESPACE, name, |n| Some(n.unwrap_or(0).saturating_add(1)));
    if let Err(e) = result {
        ports.log.write(Level::Warn, &format!("counter {name} not updated: {e}"));
    }
}

/// Every counter, in name order.
pub fn all(ports: &Ports<'_>) -> Result<Vec<Counter>, StorageError> {
    let entries = ports.storage.list(NAMESPACE, "", MAX_REPORTED, false)?;
    Ok(entries
        .into_iter()
        .map(|(name, entry)| Counter { name, value: serde_json::from_slice(&entry.value).unwrap_or(0) })
        .collect())
}
