//! Diagnostics counters, persisted through the storage port so that every
//! instance and every restart adds to the same numbers.
//!
//! The counters of checks (`tools.*`, `outbound.*`) are kept in the instance
//! ([`Pending`]) and written in one atomic batch ([`Pending::flush`]) when
//! [`FLUSH_CALLS`] checks are pending, when the request's clock is
//! [`FLUSH_MS`] past the oldest pending one, before `diagnostics` reports,
//! and at the start and end of a turn. Each write of a batch is conditioned
//! on the version the instance last read or wrote, so the deltas of several
//! instances sharing storage add up and never overwrite each other.
//!
//! Failure mode: counting never changes a decision. A batch that cannot be
//! written stays pending and is tried again; an instance that is dropped
//! without a flush (a crash, a trap) loses at most `FLUSH_CALLS - 1` counts.

use crate::model::Counter;
use crate::ports::{BatchError, Condition, Level, Log, Ports, Storage, StorageError, Write};
use crate::prelude::*;
use crate::store;
use core::cell::RefCell;

/// Storage namespace of counters, keyed by dotted counter name.
pub const NAMESPACE: &str = "counters";
/// Most counters diagnostics report.
pub const MAX_REPORTED: u32 = 10_000;
/// Checks counted in an instance before their counters are written: the most
/// counts a crash of the instance can lose is one less than this.
pub const FLUSH_CALLS: u64 = 64;
/// Longest time, by the requests' `nowMs`, a count waits in the instance
/// before it is written, in milliseconds.
pub const FLUSH_MS: u64 = 1_000;
/// Most distinct counters pending in an instance; one more is flushed first.
pub const MAX_PENDING_NAMES: usize = 256;
/// Most counter versions an instance remembers to write without reading first.
pub const MAX_KNOWN_NAMES: usize = 1_024;

/// Adds one to counter `name`, in storage at once.
pub fn bump(ports: &Ports<'_>, name: &str) {
    let result = store::update_json::<u64>(ports.storage, NAMESPACE, name, |n| Some(n.unwrap_or(0).saturating_add(1)));
    if let Err(e) = result {
        ports.log.write(Level::Warn, &format!("counter {name} not updated: {e}"));
    }
}

/// Every counter in storage, in name order.
pub fn all(ports: &Ports<'_>) -> Result<Vec<Counter>, StorageError> {
    let entries = ports.storage.list(NAMESPACE, "", MAX_REPORTED, false)?;
    Ok(entries
        .into_iter()
        .map(|(name, entry)| Counter { name, value: serde_json::from_slice(&entry.value).unwrap_or(0) })
        .collect())
}

/// Longest counter name [`Pending::add_joined`] joins without allocating.
const JOINED_NAME_BYTES: usize = 128;

#[derive(Debug, Default)]
struct State {
    /// Counts not yet written, by counter name.
    deltas: BTreeMap<String, u64>,
    /// Checks counted since the last write.
    calls: u64,
    /// The request time of the oldest pending count.
    since_ms: Option<u64>,
    /// Each counter's value and version as this instance last saw it.
    known: BTreeMap<String, (u64, u64)>,
}

/// Counts of one instance not yet written to storage.
#[derive(Debug, Default)]
pub struct Pending(RefCell<State>);

/// A copy starts with nothing pending, so no count is written twice.
impl Clone for Pending {
    fn clone(&self) -> Self {
        let known = self.0.borrow().known.clone();
        Pending(RefCell::new(State { known, ..State::default() }))
    }
}

impl Pending {
    /// Counts one check under `name` at request time `now_ms`, and writes
    /// the pending counts when a bound is reached.
    pub fn add(&self, ports: &Ports<'_>, name: &str, now_ms: u64) {
        let due = {
            let mut state = self.0.borrow_mut();
            // The names repeat (a few rules decide most checks): counted in place once known.
            if let Some(delta) = state.deltas.get_mut(name) {
                *delta = delta.saturating_add(1);
            } else {
                if state.deltas.len() >= MAX_PENDING_NAMES {
                    drop(state);
                    self.flush(ports.storage, ports.log);
                    state = self.0.borrow_mut();
                }
                state.deltas.insert(name.to_string(), 1);
            }
            state.calls = state.calls.saturating_add(1);
            let since = *state.since_ms.get_or_insert(now_ms);
            state.calls >= FLUSH_CALLS || now_ms.saturating_sub(since) >= FLUSH_MS
        };
        if due {
            self.flush(ports.storage, ports.log);
        }
    }

    /// [`Pending::add`] of the name `parts` joined with dots (`tools.allow.tools.allow`),
    /// joined on the stack: a check's counter name costs no allocation.
    pub fn add_joined(&self, ports: &Ports<'_>, parts: &[&str], now_ms: u64) {
        let mut buf = [0u8; JOINED_NAME_BYTES];
        let mut len = 0;
        for (i, part) in parts.iter().enumerate() {
            let dot: &[u8] = if i == 0 { b"" } else { b"." };
            for piece in [dot, part.as_bytes()] {
                let Some(slot) = buf.get_mut(len..len + piece.len()) else {
                    // Longer than the buffer: joined on the heap.
                    return self.add(ports, &parts.join("."), now_ms);
                };
                slot.copy_from_slice(piece);
                len += piece.len();
            }
        }
        // Whole `str`s and ASCII dots joined at their boundaries are UTF-8.
        match core::str::from_utf8(buf.get(..len).unwrap_or_default()) {
            Ok(name) => self.add(ports, name, now_ms),
            Err(_) => self.add(ports, &parts.join("."), now_ms),
        }
    }

    /// Counts not yet written, by name.
    pub fn unwritten(&self) -> BTreeMap<String, u64> {
        self.0.borrow().deltas.clone()
    }

    /// Writes every pending count in one batch whose writes each hold only
    /// if the counter is still at the version last seen, re-reading and
    /// retrying after another writer won ([`store::MAX_CAS_ATTEMPTS`]
    /// attempts). Counts that could not be written stay pending.
    pub fn flush(&self, storage: &dyn Storage, log: &dyn Log) {
        let mut state = self.0.borrow_mut();
        if state.deltas.is_empty() {
            return;
        }
        let deltas = core::mem::take(&mut state.deltas);
        let mut failure = None;
        for _ in 0..store::MAX_CAS_ATTEMPTS {
            let mut writes = Vec::with_capacity(deltas.len());
            let mut next = Vec::with_capacity(deltas.len());
            for (name, delta) in &deltas {
                let (value, version, when) = match state.known.get(name) {
                    Some(&(value, version)) => (value, version, Condition::Version(version)),
                    None => (0, 0, Condition::Absent),
                };
                let value = value.saturating_add(*delta);
                writes.push(Write::put(NAMESPACE, name, value.to_string().into_bytes(), when));
                next.push((name.clone(), (value, version.saturating_add(1))));
            }
            match storage.commit(&writes) {
                Ok(()) => {
                    if state.known.len().saturating_add(next.len()) > MAX_KNOWN_NAMES {
                        state.known.clear();
                    }
                    state.known.extend(next);
                    state.calls = 0;
                    state.since_ms = None;
                    return;
                }
                Err(BatchError::Conflict(_)) => {
                    if let Err(e) = read_known(storage, &mut state.known, deltas.keys()) {
                        failure = Some(e);
                        break;
                    }
                }
                Err(BatchError::Failed(e)) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        for (name, delta) in deltas {
            let pending = state.deltas.entry(name).or_insert(0);
            *pending = pending.saturating_add(delta);
        }
        drop(state);
        let why = failure.map_or_else(|| "other writers kept winning".to_string(), |e| e.to_string());
        log.write(Level::Warn, &format!("counters not written, kept for the next try: {why}"));
    }
}

/// Reads the current value and version of each named counter.
fn read_known<'n>(
    storage: &dyn Storage,
    known: &mut BTreeMap<String, (u64, u64)>,
    names: impl Iterator<Item = &'n String>,
) -> Result<(), StorageError> {
    for name in names {
        match store::get_json::<u64>(storage, NAMESPACE, name)? {
            Some((value, version)) => {
                known.insert(name.clone(), (value, version));
            }
            None => {
                known.remove(name);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fakes::{MemoryStorage, ScriptedHttp, VecLog};
    use crate::ports::HttpError;

    fn world() -> (MemoryStorage, VecLog, ScriptedHttp) {
        (MemoryStorage::default(), VecLog::default(), ScriptedHttp::new(|_| Err(HttpError::Denied)))
    }

    fn value(storage: &MemoryStorage, name: &str) -> Option<u64> {
        store::get_json::<u64>(storage, NAMESPACE, name).ok().flatten().map(|(v, _)| v)
    }

    #[test]
    fn counts_wait_in_the_instance_until_the_call_bound_then_are_written_at_once() {
        let (storage, log, http) = world();
        let ports = Ports { http: &http, storage: &storage, log: &log };
        let pending = Pending::default();
        for _ in 0..FLUSH_CALLS - 1 {
            pending.add(&ports, "tools.allow.x", 0);
        }
        assert_eq!(value(&storage, "tools.allow.x"), None);
        assert_eq!(storage.writes(), 0);
        pending.add(&ports, "tools.allow.x", 0);
        assert_eq!(value(&storage, "tools.allow.x"), Some(FLUSH_CALLS));
        assert!(pending.unwritten().is_empty());
    }

    #[test]
    fn a_joined_name_counts_as_the_dotted_name_at_the_buffer_bound_and_past_it() {
        let (storage, log, http) = world();
        let ports = Ports { http: &http, storage: &storage, log: &log };
        let pending = Pending::default();
        pending.add_joined(&ports, &["tools", "deny", "exec.recursive-delete"], 0);
        pending.add(&ports, "tools.deny.exec.recursive-delete", 0);
        // `tools.é.` takes 9 bytes: a rule of 119 fills the buffer exactly, one of 120 is past it.
        for len in [JOINED_NAME_BYTES - 9, JOINED_NAME_BYTES - 8] {
            let rule = "r".repeat(len);
            pending.add_joined(&ports, &["tools", "é", &rule], 0);
            assert_eq!(pending.unwritten().get(&format!("tools.é.{rule}")), Some(&1), "{len}");
        }
        assert_eq!(pending.unwritten().get("tools.deny.exec.recursive-delete"), Some(&2));
        assert_eq!(pending.unwritten().len(), 3);
    }

    #[test]
    fn counts_are_written_when_the_request_clock_passes_the_time_bound() {
        let (storage, log, http) = world();
        let ports = Ports { http: &http, storage: &storage, log: &log };
        let pending = Pending::default();
        pending.add(&ports, "a", 5_000);
        pending.add(&ports, "a", 5_000 + FLUSH_MS - 1);
        assert_eq!(value(&storage, "a"), None, "just before the bound nothing is written");
        pending.add(&ports, "a", 5_000 + FLUSH_MS);
        assert_eq!(value(&storage, "a"), Some(3), "at the bound the counts are written");
    }

    #[test]
    fn a_request_clock_that_jumps_back_still_flushes_at_the_call_bound() {
        let (storage, log, http) = world();
        let ports = Ports { http: &http, storage: &storage, log: &log };
        let pending = Pending::default();
        pending.add(&ports, "a", 10 * FLUSH_MS);
        for _ in 1..FLUSH_CALLS - 1 {
            pending.add(&ports, "a", 0);
        }
        assert_eq!(value(&storage, "a"), None, "a clock behind the oldest count writes nothing early");
        pending.add(&ports, "a", 0);
        assert_eq!(value(&storage, "a"), Some(FLUSH_CALLS), "the call bound holds whatever the clock does");
    }

    #[test]
    fn deltas_of_two_instances_on_one_storage_add_up() {
        let (storage, log, http) = world();
        let ports = Ports { http: &http, storage: &storage, log: &log };
        let (a, b) = (Pending::default(), Pending::default());
        for round in 0..3 {
            a.add(&ports, "n", round);
            b.add(&ports, "n", round);
            b.add(&ports, "n", round);
            a.flush(&storage, &log);
            b.flush(&storage, &log);
        }
        bump(&ports, "n");
        a.add(&ports, "n", 9);
        a.flush(&storage, &log);
        assert_eq!(value(&storage, "n"), Some(3 + 6 + 1 + 1));
    }

    #[test]
    fn counts_that_cannot_be_written_stay_pending_and_are_written_later() {
        let (storage, log, http) = world();
        let ports = Ports { http: &http, storage: &storage, log: &log };
        let pending = Pending::default();
        pending.add(&ports, "n", 0);
        storage.fail_commits_with(StorageError::Unavailable("down".into()));
        pending.flush(&storage, &log);
        assert_eq!(pending.unwritten().get("n"), Some(&1));
        pending.add(&ports, "n", 0);
        storage.heal();
        pending.flush(&storage, &log);
        assert_eq!(value(&storage, "n"), Some(2));
        assert!(pending.unwritten().is_empty());
    }

    #[test]
    fn a_lost_race_is_read_again_and_retried() {
        let (storage, log, http) = world();
        let ports = Ports { http: &http, storage: &storage, log: &log };
        let pending = Pending::default();
        pending.add(&ports, "n", 0);
        pending.flush(&storage, &log);
        bump(&ports, "n");
        pending.add(&ports, "n", 0);
        storage.lose_commits(2);
        pending.flush(&storage, &log);
        assert_eq!(value(&storage, "n"), Some(3));
    }
}
