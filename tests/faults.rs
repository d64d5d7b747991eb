//! Fault injection through the imports: the real component over a storage
//! wrapper that fails, conflicts or stalls, over a SQLite file that fails in
//! the middle of a batch, with a guest that traps around a batch, and over a
//! classifier that drops connections, truncates bodies or answers 5xx. Each
//! decision follows its check's failure mode (tool calls and outbound
//! messages fail closed, safety fails open), and no part of a failed batch
//! is ever visible. The memory cap and the endless loop are in `sandbox.rs`.

use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use warden_host::bindings::exports::warden::guard::policy::{
    ChannelContext, Delivery, Direction, OutboundMessage, OutcomeReport, SafetyOutcome, Trigger, Turn,
};
use warden_host::bindings::warden::guard::types::Identity;
use warden_host::storage::{BatchError, Condition, Record, SqliteStorage, Storage, StorageError, Write};
use warden_host::{ComponentSource, Limits, Runtime, RuntimeOptions};
use warden_tests::mock_http::{MockServer, Reply};
use warden_tests::{CapturedLog, T0, TempDb, decided, hostile_component, nobody, runtime, tool_call};

const ALICE: &str = "+15550100";
const BODY: &str = "Your order has shipped.";

fn gate_config() -> String {
    json!({"gate": {"ownerOffset": "+00:00", "start": "00:00", "end": "23:59", "templates": [BODY]}}).to_string()
}

/// How the wrapper misbehaves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    /// Every batch fails as an unreachable store would; reads work.
    CommitsUnavailable,
    /// Every batch loses a race.
    ConflictStorm,
    /// Every call takes this long.
    Slow(Duration),
}

/// SQLite storage with an injected fault.
struct Faulty {
    inner: SqliteStorage,
    fault: std::sync::Mutex<Fault>,
    commits: AtomicUsize,
}

impl Faulty {
    fn new(db: &TempDb) -> Arc<Faulty> {
        Arc::new(Faulty {
            inner: SqliteStorage::open(db.path()).expect("open"),
            fault: std::sync::Mutex::new(Fault::None),
            commits: AtomicUsize::new(0),
        })
    }

    fn set(&self, fault: Fault) {
        *self.fault.lock().expect("fault") = fault;
    }

    fn fault(&self) -> Fault {
        let fault = *self.fault.lock().expect("fault");
        if let Fault::Slow(d) = fault {
            std::thread::sleep(d);
        }
        fault
    }
}

impl Storage for Faulty {
    fn get(&self, namespace: &str, key: &str) -> Result<Option<Record>, StorageError> {
        self.fault();
        self.inner.get(namespace, key)
    }
    fn set(&self, namespace: &str, key: &str, value: &[u8], when: Condition) -> Result<u64, StorageError> {
        self.fault();
        self.inner.set(namespace, key, value, when)
    }
    fn delete(&self, namespace: &str, key: &str, when: Condition) -> Result<bool, StorageError> {
        self.fault();
        self.inner.delete(namespace, key, when)
    }
    fn list(
        &self,
        namespace: &str,
        prefix: &str,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<(String, Record)>, StorageError> {
        self.fault();
        self.inner.list(namespace, prefix, limit, reverse)
    }
    fn commit(&self, writes: &[Write]) -> Result<(), BatchError> {
        self.commits.fetch_add(1, Ordering::SeqCst);
        match self.fault() {
            Fault::CommitsUnavailable => Err(BatchError::Failed(StorageError::Unavailable("disk gone".into()))),
            Fault::ConflictStorm => Err(BatchError::Conflict(0)),
            _ => self.inner.commit(writes),
        }
    }
}

fn sms(now_ms: u64) -> OutboundMessage {
    OutboundMessage {
        direction: Direction::Outbound,
        channel: "sms".into(),
        recipient: ALICE.into(),
        sender: None,
        body: BODY.as_bytes().to_vec(),
        thread: Some("t".into()),
        message_id: None,
        session_id: None,
        now_ms,
        identity: nobody(),
    }
}

fn sent(key: Option<&str>) -> OutcomeReport {
    OutcomeReport {
        channel: "sms".into(),
        recipient: ALICE.into(),
        delivery: Delivery::Sent,
        thread: Some("t".into()),
        now_ms: T0,
        idempotency_key: key.map(Into::into),
    }
}

/// Every record of the database but the diagnostics counters (a refused
/// decision is still counted), to compare before and after.
fn snapshot(db: &TempDb) -> Vec<(String, String, Vec<u8>, i64)> {
    let conn = rusqlite::Connection::open(db.path()).expect("open");
    let mut stmt = conn
        .prepare("SELECT namespace, key, value, version FROM records WHERE namespace <> 'counters' ORDER BY 1, 2")
        .expect("query");
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect()
}

fn consented(db: &TempDb, storage: Arc<Faulty>) -> Runtime {
    let rt = runtime(&gate_config(), storage);
    rt.gate(|g, s| g.call_consent(s, "sms", ALICE, None, None, T0, None)).expect("consent");
    assert!(db.records_in("gate") > 0);
    rt
}

#[test]
fn storage_that_cannot_commit_holds_messages_back_and_leaves_no_partial_write() {
    let db = TempDb::new();
    let storage = Faulty::new(&db);
    let rt = consented(&db, storage.clone());
    let before = snapshot(&db);
    storage.set(Fault::CommitsUnavailable);
    let v = rt.check_outbound(&sms(T0 + 1));
    assert_eq!(decided(&v), ("deny", "gate.storage-unavailable"));
    assert!(v.reason.contains("disk gone"), "{}", v.reason);
    let e = rt.record_outcome(&sent(Some("k-1"))).expect_err("nothing can be recorded");
    assert!(e.to_string().contains("disk gone"), "{e}");
    assert_eq!(snapshot(&db), before, "no line, no totals, no thread, no key");
    // Healed, the retry under the same key records once.
    storage.set(Fault::None);
    rt.record_outcome(&sent(Some("k-1"))).expect("retry");
    rt.record_outcome(&sent(Some("k-1"))).expect("retry again");
    let status = rt.gate(|g, s| g.call_status(s)).expect("status");
    assert_eq!((status.entries, status.open_threads), (2, 1));
}

#[test]
fn a_conflict_storm_fails_closed_after_the_bounded_retries_and_writes_nothing() {
    let db = TempDb::new();
    let storage = Faulty::new(&db);
    let rt = consented(&db, storage.clone());
    let before = snapshot(&db);
    storage.set(Fault::ConflictStorm);
    let commits = storage.commits.load(Ordering::SeqCst);
    let v = rt.check_outbound(&sms(T0 + 1));
    assert_eq!(decided(&v), ("deny", "gate.storage-unavailable"));
    let tried = storage.commits.load(Ordering::SeqCst) - commits;
    assert_eq!(tried, warden_core::gate::ledger::MAX_APPEND_ATTEMPTS, "bounded retries");
    assert!(rt.record_outcome(&sent(None)).is_err());
    assert_eq!(snapshot(&db), before);
}

#[test]
fn slow_storage_is_host_time_and_the_decision_is_still_made() {
    let db = TempDb::new();
    let storage = Faulty::new(&db);
    let rt = Runtime::new(
        RuntimeOptions {
            component: ComponentSource::Embedded,
            cache_dir: Some(warden_tests::cache_dir()),
            limits: Limits { memory_bytes: 64 * 1024 * 1024, cpu: Duration::from_millis(100), pool: 2 },
            storage: storage.clone(),
            log: CapturedLog::default().sink(),
            host: Some(warden_tests::host_context()),
        },
        &gate_config(),
    )
    .expect("starts");
    rt.gate(|g, s| g.call_consent(s, "sms", ALICE, None, None, T0, None)).expect("consent");
    // Each storage call takes 20 ms: a check makes several, well past the 100 ms CPU deadline in wall time.
    storage.set(Fault::Slow(Duration::from_millis(20)));
    let started = std::time::Instant::now();
    let v = rt.check_outbound(&sms(T0 + 1));
    assert!(started.elapsed() > Duration::from_millis(100), "{:?}", started.elapsed());
    assert_eq!(decided(&v), ("allow", "gate.routine"));
}

#[test]
fn a_storage_failure_in_the_middle_of_a_batch_rolls_the_whole_batch_back() {
    let db = TempDb::new();
    let storage = Faulty::new(&db);
    let rt = consented(&db, storage.clone());
    rt.record_outcome(&sent(None)).expect("a first send opens the thread");
    let before = snapshot(&db);
    // The thread record is written first in the batch; the ledger line after it fails inside SQLite.
    let conn = rusqlite::Connection::open(db.path()).expect("open");
    conn.execute_batch(
        "CREATE TRIGGER fail_lines BEFORE INSERT ON records WHEN NEW.key LIKE 'line/%'
         BEGIN SELECT RAISE(ABORT, 'injected i/o failure'); END;",
    )
    .expect("trigger");
    let e = rt.record_outcome(&sent(Some("k-2"))).expect_err("the line cannot be written");
    assert!(e.to_string().contains("injected i/o failure"), "{e}");
    let v = rt.check_outbound(&sms(T0 + 60_000));
    assert_eq!(decided(&v), ("deny", "gate.storage-unavailable"));
    assert_eq!(snapshot(&db), before, "the thread update before the failing write was rolled back");
    conn.execute_batch("DROP TRIGGER fail_lines;").expect("drop");
    rt.record_outcome(&sent(Some("k-2"))).expect("recorded once healed");
    let thread_sends: Vec<i64> = snapshot(&db)
        .iter()
        .filter(|(ns, k, _, _)| ns == "gate" && k.starts_with("thread/"))
        .map(|(_, _, v, _)| serde_json::from_slice::<Value>(v).expect("thread")["sends"].as_i64().unwrap_or(0))
        .collect();
    assert_eq!(thread_sends, [2]);
}

fn hostile() -> (Runtime, TempDb) {
    let db = TempDb::new();
    let rt = Runtime::new(
        RuntimeOptions {
            component: ComponentSource::Bytes(hostile_component()),
            cache_dir: Some(warden_tests::cache_dir()),
            limits: Limits { memory_bytes: 32 * 1024 * 1024, cpu: Duration::from_millis(1000), pool: 2 },
            storage: db.open(),
            log: CapturedLog::default().sink(),
            host: None,
        },
        "{}",
    )
    .expect("hostile guest starts");
    (rt, db)
}

#[test]
fn a_guest_that_traps_after_a_refused_batch_leaves_nothing_and_fails_closed() {
    let (rt, db) = hostile();
    let v = rt.check_tool_call(&tool_call("torn-batch", json!({}), "s", T0));
    assert_eq!(decided(&v), ("deny", "host.guest-failure"));
    assert_eq!(db.records_in("hostile"), 0, "no write of the refused batch is visible");
}

#[test]
fn a_guest_that_traps_after_a_committed_batch_leaves_all_of_it() {
    let (rt, db) = hostile();
    let v = rt.check_tool_call(&tool_call("batch-then-crash", json!({}), "s", T0));
    assert_eq!(decided(&v), ("deny", "host.guest-failure"));
    assert_eq!(db.records_in("hostile"), 2, "a committed batch is whole even when its caller dies");
}

/// A classifier that answers every request with `reply`.
fn failing_classifier(reply: Reply) -> MockServer {
    MockServer::start(move |_| reply.clone())
}

fn key_file() -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().expect("key file");
    std::fs::write(file.path(), "fault-test-key").expect("write key");
    file
}

fn broken_replies() -> Vec<(&'static str, Reply)> {
    let whole = json!({"id": "c", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "x".repeat(200)}, "finish_reason": "stop"}]});
    vec![
        ("a dropped connection", Reply::dropped()),
        ("a truncated body", Reply::json(200, &whole).truncated(40)),
        ("status 502", Reply::text(502, "bad gateway")),
        ("status 503", Reply::text(503, "unavailable")),
    ]
}

#[test]
fn a_failing_dlp_classifier_fails_outbound_messages_closed() {
    for (name, reply) in broken_replies() {
        let server = failing_classifier(reply);
        let key = key_file();
        let config = json!({
            "destinations": [{"name": "classifier", "baseUrl": server.url("/v1"), "credential": {"file": key.path()}}],
            "dlp": {"classifier": {"destination": "classifier", "model": "gpt-4o-mini-2024-07-18", "timeoutMs": 2000}},
        });
        let db = TempDb::new();
        let rt = runtime(&config.to_string(), db.open());
        let message = OutboundMessage { channel: "slack".into(), recipient: "U-ADA".into(), thread: None, ..sms(T0) };
        let v = rt.check_outbound(&message);
        assert_eq!(decided(&v), ("deny", "dlp.guard-failure"), "{name}: {}", v.reason);
        assert!(server.connections() >= 1, "{name}: the classifier was asked");
    }
}

#[test]
fn a_failing_safety_classifier_lets_the_turn_proceed_unchecked() {
    for (name, reply) in broken_replies() {
        let server = failing_classifier(reply);
        let key = key_file();
        let config = json!({
            "destinations": [{"name": "classifier", "baseUrl": server.url("/v1"), "credential": {"file": key.path()}}],
            "safety": {
                "enabled": true,
                "timeoutMs": 2000,
                "classifier": {"enabled": true, "destination": "classifier", "model": "small-model"},
                "scenarios": [{"id": "salaries", "instructions": "Requests about a specific employee's salary.",
                               "flaggedPrompt": "Do not share salaries."}]
            }
        });
        let db = TempDb::new();
        let rt = runtime(&config.to_string(), db.open());
        let outcome = rt.check_turn(&Turn {
            run_id: Some("r".into()),
            session_id: Some("s".into()),
            now_ms: T0,
            identity: Identity { provider: Some("slack".into()), sender_id: Some("U1".into()), ..nobody() },
            trigger: Trigger::User,
            message: "How much does Bob make?".into(),
            context: ChannelContext { thread_starter: None, replied_to: None, since_last_reply: Vec::new() },
            history: Vec::new(),
            queue_mode: None,
            hook_timeout_ms: None,
        });
        assert!(outcome.proceed, "{name}");
        assert_eq!(
            (outcome.outcome, outcome.rule.as_str()),
            (SafetyOutcome::Failed, "safety.failed"),
            "{name}: {}",
            outcome.reason
        );
        assert_eq!(outcome.append_context, None, "{name}");
    }
}
