//! Two hosts over one SQLite file record sends to one thread at the same time,
//! in the same milliseconds: compare-and-swap loses none of them.

use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;
use warden_host::Runtime;
use warden_host::bindings::exports::warden::guard::policy::{Delivery, OutcomeReport};
use warden_host::storage::{BatchError, Condition, Record, Storage, StorageError, Write};
use warden_tests::{T0, TempDb, runtime};

const SENDS_PER_HOST: u64 = 40;

/// Holds a host's read of a thread record until the other host has read it
/// too (or 100 ms passed), so that both write from the same version and one of
/// them must take the compare-and-swap's retry path.
#[derive(Default)]
struct Rendezvous {
    /// The meeting number, and how many hosts wait at it.
    state: Mutex<(u64, usize)>,
    met: Condvar,
}

impl Rendezvous {
    fn meet(&self) {
        let Ok(mut state) = self.state.lock() else { return };
        let meeting = state.0;
        state.1 += 1;
        if state.1 == 2 {
            *state = (meeting + 1, 0);
            self.met.notify_all();
            return;
        }
        let Ok((mut state, wait)) = self.met.wait_timeout_while(state, Duration::from_millis(100), |s| s.0 == meeting)
        else {
            return;
        };
        if wait.timed_out() && state.0 == meeting {
            // The other host is done: go on alone.
            state.1 -= 1;
        }
    }
}

/// The real SQLite storage of one host, meeting the other host at the first
/// read of the thread record in each call (a retry goes on without meeting),
/// and counting the write conflicts that causes.
struct Contended {
    inner: Arc<dyn Storage>,
    rendezvous: Arc<Rendezvous>,
    /// Set before each call; the first read of the thread record clears it.
    fresh: Arc<AtomicBool>,
    conflicts: Arc<AtomicUsize>,
}

impl Contended {
    fn counted<T>(&self, result: Result<T, StorageError>) -> Result<T, StorageError> {
        if matches!(result, Err(StorageError::Conflict)) {
            self.conflicts.fetch_add(1, Ordering::SeqCst);
        }
        result
    }
}

impl Storage for Contended {
    fn get(&self, namespace: &str, key: &str) -> Result<Option<Record>, StorageError> {
        let read = self.inner.get(namespace, key);
        if key.starts_with("thread/") && self.fresh.swap(false, Ordering::SeqCst) {
            self.rendezvous.meet();
        }
        read
    }

    fn set(&self, namespace: &str, key: &str, value: &[u8], when: Condition) -> Result<u64, StorageError> {
        self.counted(self.inner.set(namespace, key, value, when))
    }

    fn delete(&self, namespace: &str, key: &str, when: Condition) -> Result<bool, StorageError> {
        self.counted(self.inner.delete(namespace, key, when))
    }

    fn list(
        &self,
        namespace: &str,
        prefix: &str,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<(String, Record)>, StorageError> {
        self.inner.list(namespace, prefix, limit, reverse)
    }

    fn commit(&self, writes: &[Write]) -> Result<(), BatchError> {
        let result = self.inner.commit(writes);
        if matches!(result, Err(BatchError::Conflict(_))) {
            self.conflicts.fetch_add(1, Ordering::SeqCst);
        }
        result
    }
}

#[test]
fn two_hosts_recording_sends_to_one_thread_lose_no_record() {
    let db = TempDb::new();
    let config = json!({"gate": {"ownerOffset": "+00:00"}}).to_string();
    // Two runtimes, each with its own connections to the same file.
    let conflicts = Arc::new(AtomicUsize::new(0));
    let rendezvous = Arc::new(Rendezvous::default());
    let host = || {
        let fresh = Arc::new(AtomicBool::new(false));
        let storage = Contended {
            inner: db.open(),
            rendezvous: rendezvous.clone(),
            fresh: fresh.clone(),
            conflicts: conflicts.clone(),
        };
        (runtime(&config, Arc::new(storage)), fresh)
    };
    let hosts: [(Runtime, Arc<AtomicBool>); 2] = [host(), host()];
    hosts[0].0.gate(|g, s| g.call_consent(s, "sms", "+15550100", None, None, T0, None)).expect("consent");
    let started = std::time::Instant::now();
    let start = std::sync::Barrier::new(hosts.len());
    let failures: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = hosts
            .iter()
            .map(|(host, fresh)| {
                let start = &start;
                scope.spawn(move || {
                    start.wait();
                    (0..SENDS_PER_HOST)
                        .filter_map(|i| {
                            let report = OutcomeReport {
                                channel: "sms".into(),
                                recipient: "+15550100".into(),
                                delivery: Delivery::Sent,
                                thread: Some("t-1".into()),
                                // Both hosts write every line in the same millisecond.
                                now_ms: T0 + 1 + i,
                                idempotency_key: None,
                            };
                            fresh.store(true, Ordering::SeqCst);
                            host.record_outcome(&report).err().map(|e| e.to_string())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("worker")).collect()
    });
    let took = started.elapsed();
    assert!(failures.is_empty(), "{failures:?}");

    let storage = db.open();
    let threads = storage.list("gate", "thread/sms/", 10, false).expect("list threads");
    assert_eq!(threads.len(), 1, "one thread");
    let thread: serde_json::Value = serde_json::from_slice(&threads[0].1.value).expect("thread record");
    assert_eq!((thread["sends"].as_u64(), thread["awaitingReply"].as_bool()), (Some(2 * SENDS_PER_HOST), Some(true)));
    let lines = storage.list("gate", "line/", 10_000, false).expect("list ledger lines");
    assert_eq!(lines.len() as u64, 1 + 2 * SENDS_PER_HOST, "every send has its own ledger line");
    let status = hosts[1].0.gate(|g, s| g.call_status(s)).expect("status");
    assert_eq!((status.entries, status.open_threads), (1 + 2 * SENDS_PER_HOST, 1));
    let conflicts = conflicts.load(Ordering::SeqCst);
    assert!(conflicts > 0, "the hosts wrote from the same version and retried");
    println!(
        "two hosts: {} sends to one thread recorded in {took:.1?} through {conflicts} write conflicts, none lost",
        2 * SENDS_PER_HOST
    );
}
