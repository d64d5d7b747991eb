//! Run results kept for prompt rebuilds.
//!
//! A host may build the prompt of one run more than once (a retry, a model
//! fallback). The first build's answer is stored under the run ID so that
//! every rebuild, on this instance or another, adds the same prompts without
//! asking the classifier again. A stored answer is reused only for the same
//! settings, requester and message (its `binding`), and only while it is
//! young; older ones are pruned a few at a time as new runs are stored.
//!
//! Failure mode: storage that cannot be read or written only costs the reuse;
//! the turn is then checked afresh.

use crate::digest;
use crate::model::{Identity, SafetyOutcome};
use crate::ports::{Condition, Level, Ports};
use crate::prelude::*;
use crate::store;
use serde::{Deserialize, Serialize};

/// Storage namespace of run results, keyed by the SHA-256 of the run ID.
pub const NAMESPACE: &str = "safety.runs";
/// Storage namespace indexing run results by time: `<at_ms, 20 digits>/<key>`.
pub const INDEX_NAMESPACE: &str = "safety.runs.by-time";
/// How long a run result may be reused, in milliseconds (one hour): far
/// longer than any run, short enough that the records stay few.
pub const MAX_AGE_MS: u64 = 60 * 60 * 1000;
/// Most expired run results removed while storing one, so pruning stays bounded.
pub const MAX_PRUNED_PER_STORE: u32 = 8;

/// One run's answer as stored. The prompts are not stored: they are rebuilt
/// from the scenario IDs under the same settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    pub binding: String,
    pub at_ms: u64,
    pub outcome: SafetyOutcome,
    pub reason: String,
    pub scenarios: Vec<String>,
    pub missing_identity: bool,
}

/// What a stored answer is bound to: the settings, who asked, where, and what.
pub fn binding(fingerprint: &str, identity: &Identity, message: &str) -> String {
    let fields = [
        Some(fingerprint),
        identity.provider.as_deref(),
        identity.account_id.as_deref(),
        identity.sender_id.as_deref(),
        identity.channel_id.as_deref(),
        identity.agent_id.as_deref(),
        Some(message),
    ];
    digest::versioned(&fields)
}

fn key(run_id: &str) -> String {
    digest::sha256_hex(run_id.as_bytes())
}

/// The stored answer for `run_id`, if it is bound to `binding` and still young.
pub fn lookup(ports: &Ports<'_>, run_id: &str, binding: &str, now_ms: u64) -> Option<RunRecord> {
    match store::get_json::<RunRecord>(ports.storage, NAMESPACE, &key(run_id)) {
        Ok(Some((record, _))) => (record.binding == binding && young(record.at_ms, now_ms)).then_some(record),
        Ok(None) => None,
        Err(e) => {
            ports.log.write(Level::Warn, &format!("safety: stored run result not readable, checking afresh: {e}"));
            None
        }
    }
}

/// Whether a run answer stored at `at_ms` may still be reused: at most
/// [`MAX_AGE_MS`] old, and not dated further ahead than the skew `crate::time` allows.
fn young(at_ms: u64, now_ms: u64) -> bool {
    crate::time::age(at_ms, now_ms).is_some_and(|age| age <= MAX_AGE_MS)
}

/// Stores a run's answer and prunes a few expired ones.
pub fn remember(ports: &Ports<'_>, run_id: &str, record: &RunRecord) {
    let key = key(run_id);
    let stored = store::put_json(ports.storage, NAMESPACE, &key, record, Condition::Any)
        .and_then(|_| ports.storage.set(INDEX_NAMESPACE, &index_key(record.at_ms, &key), b"", Condition::Any));
    if let Err(e) = stored {
        ports.log.write(Level::Warn, &format!("safety: run result not stored, a rebuild will check again: {e}"));
    }
    prune(ports, record.at_ms);
}

fn index_key(at_ms: u64, key: &str) -> String {
    format!("{at_ms:020}/{key}")
}

/// Removes run results older than [`MAX_AGE_MS`], oldest first, at most
/// [`MAX_PRUNED_PER_STORE`] of them. A record rewritten since its index entry
/// was made is kept: only its stale index entry goes.
fn prune(ports: &Ports<'_>, now_ms: u64) {
    let oldest = match ports.storage.list(INDEX_NAMESPACE, "", MAX_PRUNED_PER_STORE, false) {
        Ok(entries) => entries,
        Err(e) => {
            ports.log.write(Level::Debug, &format!("safety: run results not pruned: {e}"));
            return;
        }
    };
    for (index, _) in oldest {
        let Some((at, key)) = index.split_once('/') else {
            continue;
        };
        let Ok(at_ms) = at.parse::<u64>() else {
            continue;
        };
        if young(at_ms, now_ms) {
            break;
        }
        let expired = match store::get_json::<RunRecord>(ports.storage, NAMESPACE, key) {
            Ok(Some((record, _))) => !young(record.at_ms, now_ms),
            Ok(None) | Err(_) => true,
        };
        let removed = (if expired { ports.storage.delete(NAMESPACE, key, Condition::Any) } else { Ok(false) })
            .and_then(|_| ports.storage.delete(INDEX_NAMESPACE, &index, Condition::Any));
        if let Err(e) = removed {
            ports.log.write(Level::Debug, &format!("safety: run result not pruned: {e}"));
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fakes::{MemoryStorage, ScriptedHttp, VecLog};

    fn record(at_ms: u64, binding: &str) -> RunRecord {
        RunRecord {
            binding: binding.into(),
            at_ms,
            outcome: SafetyOutcome::Flagged,
            reason: "matched".into(),
            scenarios: vec!["pay".into()],
            missing_identity: false,
        }
    }

    #[test]
    fn a_stored_result_is_reused_only_for_its_binding_and_while_young() {
        let storage = MemoryStorage::default();
        let http = ScriptedHttp::unreachable();
        let log = VecLog::default();
        let ports = Ports { http: &http, storage: &storage, log: &log };
        remember(&ports, "run-1", &record(1_000, "b1"));
        let cases: &[(&str, &str, u64, bool)] = &[
            ("run-1", "b1", 1_000, true),
            ("run-1", "b1", 1_000 + MAX_AGE_MS, true),
            ("run-1", "b1", 1_000 + MAX_AGE_MS + 1, false),
            ("run-1", "b2", 1_000, false),
            ("run-2", "b1", 1_000, false),
        ];
        for (run, binding, now, reused) in cases {
            assert_eq!(lookup(&ports, run, binding, *now).is_some(), *reused, "{run} {binding} {now}");
        }
        // The run ID itself is not stored, only its digest.
        assert!(
            storage
                .dump()
                .iter()
                .all(|(_, k, v)| !k.contains("run-1") && !String::from_utf8_lossy(v).contains("run-1"))
        );
    }

    #[test]
    fn storing_a_run_prunes_expired_ones_but_keeps_rewritten_ones() {
        let storage = MemoryStorage::default();
        let http = ScriptedHttp::unreachable();
        let log = VecLog::default();
        let ports = Ports { http: &http, storage: &storage, log: &log };
        remember(&ports, "old", &record(1_000, "b"));
        remember(&ports, "rewritten", &record(2_000, "b"));
        remember(&ports, "rewritten", &record(2_000 + MAX_AGE_MS, "b"));
        let later = 3_000 + MAX_AGE_MS;
        remember(&ports, "new", &record(later, "b"));
        assert!(lookup(&ports, "old", "b", 1_000).is_none());
        assert!(lookup(&ports, "rewritten", "b", later).is_some());
        assert!(lookup(&ports, "new", "b", later).is_some());
        let index: Vec<String> =
            storage.dump().into_iter().filter(|(ns, _, _)| ns == INDEX_NAMESPACE).map(|(_, k, _)| k).collect();
        assert_eq!(index.len(), 2, "{index:?}");
    }

    #[test]
    fn unreadable_storage_costs_only_the_reuse() {
        let storage = MemoryStorage::default();
        let http = ScriptedHttp::unreachable();
        let log = VecLog::default();
        let ports = Ports { http: &http, storage: &storage, log: &log };
        remember(&ports, "run", &record(1, "b"));
        storage.fail_with(crate::ports::StorageError::Unavailable("gone".into()));
        assert_eq!(lookup(&ports, "run", "b", 1), None);
        remember(&ports, "run", &record(1, "b"));
        assert!(log.lines().iter().any(|(l, m)| *l == Level::Warn && m.contains("not stored")));
    }
}
