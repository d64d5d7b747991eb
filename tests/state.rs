//! Atomic, idempotent state through the shipped `warden` binary: four
//! `warden serve` processes on one SQLite file killed with SIGKILL under
//! load, retries under idempotency keys, and the databases the host refuses.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use warden_tests::{TempDb, cache_dir, warden_binary, warden_process};

/// What the clients of one round saw: acknowledged keys with their round, and every key attempted.
type Attempts = (Vec<(String, usize)>, Vec<String>);
const TOKEN: &str = "state-test-token-0123456789";
const ALICE: &str = "+15550100";
/// Servers sharing the database.
const SERVERS: usize = 4;
/// Client threads sending writes.
const CLIENTS: usize = 8;
/// Acknowledged writes per round before every server is killed.
const ACKED_BEFORE_KILL: usize = 80;
/// Rounds of start, load, kill and check.
const ROUNDS: usize = 3;

fn config(dir: &Path) -> String {
    let text = json!({"gate": {"ownerOffset": "+00:00", "start": "00:00", "end": "23:59",
        "templates": ["Your order has shipped."]}});
    let path = dir.join("config.json");
    std::fs::write(&path, text.to_string()).expect("write config");
    path.display().to_string()
}

struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Server {
    /// SIGKILL: no server gets to finish what it was writing (and none outlives a failed test).
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(config: &str, db: &str) -> Server {
    let mut child = Command::new(warden_binary())
        .args(["serve", "--config", config, "--db", db, "--listen", "127.0.0.1:0", "--concurrency", "4"])
        .arg("--cache-dir")
        .arg(cache_dir())
        .env("WARDEN_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("warden serve starts");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let addr = loop {
        let line = lines.next().expect("warden serve says where it listens").expect("stderr line");
        if let Some(rest) = line.strip_prefix("warden: serving on http://") {
            break rest.trim().parse().expect("address");
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Server { child, addr }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into()
}

/// Posts `body` to `path`; the status, or `None` when the connection failed.
fn post(agent: &ureq::Agent, addr: SocketAddr, path: &str, body: &Value) -> Option<u16> {
    agent
        .post(format!("http://{addr}{path}"))
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("content-type", "application/json")
        .send(body.to_string())
        .ok()
        .map(|r| r.status().as_u16())
}

fn sent(key: &str, thread: usize) -> Value {
    json!({"outcome": {"channel": "sms", "recipient": ALICE, "delivery": "sent",
        "thread": format!("t{thread}"), "idempotencyKey": key}})
}

fn check(thread: usize) -> Value {
    json!({"direction": "outbound", "channel": "sms", "recipient": ALICE,
        "body": "Your order has shipped.", "thread": format!("t{thread}")})
}

/// The ledger as stored: each line's event and thread, the totals record, the
/// thread records' send counts and the idempotency records.
struct Ledger {
    lines: Vec<Value>,
    totals: Value,
    thread_sends: Vec<u64>,
    keys: BTreeSet<String>,
}

fn read_ledger(db: &Path) -> Ledger {
    let conn = rusqlite::Connection::open(db).expect("open the database");
    let rows = |prefix: &str| -> Vec<(String, Value)> {
        let mut stmt = conn
            .prepare("SELECT key, value FROM records WHERE namespace = 'gate' AND substr(key, 1, length(?1)) = ?1")
            .expect("query");
        stmt.query_map([prefix], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?)))
            .expect("rows")
            .map(|r| r.expect("row"))
            .map(|(k, v)| (k, serde_json::from_slice(&v).unwrap_or(Value::Null)))
            .collect()
    };
    let lines = rows("line/").into_iter().map(|(_, v)| v).collect();
    let totals = rows("stats").into_iter().next().map(|(_, v)| v).unwrap_or(Value::Null);
    let mut thread_sends: Vec<u64> = rows("thread/").iter().map(|(_, v)| v["sends"].as_u64().unwrap_or(0)).collect();
    thread_sends.sort_unstable();
    let keys = rows("idem/").into_iter().map(|(k, _)| k).collect();
    Ledger { lines, totals, thread_sends, keys }
}

/// The record key of an outcome's idempotency key, as the component stores it.
fn stored_key(key: &str) -> String {
    let digest = Sha256::digest(format!("warden/idempotency/v1\noutcome\n{key}").as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("idem/{hex}")
}

/// Every counter equals what the lines imply, and every thread's sends equal its `sent` lines.
fn assert_consistent(ledger: &Ledger, status: &Value, round: usize) {
    let n = ledger.lines.len() as u64;
    assert_eq!(ledger.totals["entries"].as_u64(), Some(n), "round {round}: totals vs lines");
    assert_eq!(status["entries"].as_u64(), Some(n), "round {round}: gate status vs lines");
    let mut by_decision: BTreeMap<String, u64> = BTreeMap::new();
    let mut sends_by_thread: BTreeMap<String, u64> = BTreeMap::new();
    for line in &ledger.lines {
        if let Some(d) = line["decision"].as_str() {
            *by_decision.entry(d.to_string()).or_default() += 1;
        }
        if line["event"] == "sent" {
            *sends_by_thread.entry(line["thread"].as_str().unwrap_or("").to_string()).or_default() += 1;
        }
    }
    for (decision, count) in status["decisions"].as_object().expect("decisions") {
        let implied = by_decision.get(decision).copied().unwrap_or(0);
        assert_eq!(count.as_u64(), Some(implied), "round {round}: `{decision}` checks");
    }
    let mut implied_sends: Vec<u64> = sends_by_thread.values().copied().collect();
    implied_sends.sort_unstable();
    assert_eq!(ledger.thread_sends, implied_sends, "round {round}: thread sends vs sent lines");
}

fn gate_status(config: &str, db: &str) -> Value {
    let out = warden_process(&["gate", "status", "--json", "--config", config, "--db", db], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).expect("status JSON")
}

#[test]
fn killing_four_servers_under_load_leaves_every_acknowledged_write_once_and_counters_equal_to_the_lines() {
    let started = Instant::now();
    let mut timings = Vec::new();
    let db = TempDb::new();
    let config = config(db.dir.path());
    let db_path = db.path().display().to_string();
    // The database is created by the first command, only because no file exists.
    let first = gate_status(&config, &db_path);
    assert_eq!(first["entries"].as_u64(), Some(0));
    let mut attempted: Vec<(String, usize)> = Vec::new();
    let mut acked: Vec<String> = Vec::new();
    for round in 0..ROUNDS {
        let round_started = Instant::now();
        let servers: Vec<Server> = (0..SERVERS).map(|_| serve(&config, &db_path)).collect();
        timings.push(("servers up", round_started.elapsed()));
        let addrs: Vec<SocketAddr> = servers.iter().map(|s| s.addr).collect();
        let stop = Arc::new(AtomicBool::new(false));
        let ack_count = Arc::new(AtomicUsize::new(0));
        let log: Arc<Mutex<Attempts>> = Arc::default();
        let clients: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (stop, ack_count, log, addrs) = (stop.clone(), ack_count.clone(), log.clone(), addrs.clone());
                std::thread::spawn(move || {
                    let agent = agent();
                    let mut i = 0usize;
                    while !stop.load(Ordering::SeqCst) {
                        let addr = addrs[(c + i) % addrs.len()];
                        if i % 3 == 2 {
                            // A check writes a ledger line and the totals.
                            let _ = post(&agent, addr, "/v1/check/outbound", &check(i % 5));
                        } else {
                            let key = format!("r{round}-c{c}-{i}");
                            log.lock().expect("log").0.push((key.clone(), i % 5));
                            if post(&agent, addr, "/v1/record", &sent(&key, i % 5)) == Some(200) {
                                log.lock().expect("log").1.push(key);
                                ack_count.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                        i += 1;
                    }
                })
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(20);
        while ack_count.load(Ordering::SeqCst) < ACKED_BEFORE_KILL && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        // SIGKILL, mid-load.
        drop(servers);
        stop.store(true, Ordering::SeqCst);
        for c in clients {
            c.join().expect("client");
        }
        timings.push(("killed", round_started.elapsed()));
        let (tried, ok) = std::mem::take(&mut *log.lock().expect("log"));
        assert!(ok.len() >= ACKED_BEFORE_KILL, "round {round}: only {} writes acknowledged", ok.len());
        attempted.extend(tried);
        acked.extend(ok);

        let ledger = read_ledger(&db.path());
        assert_consistent(&ledger, &gate_status(&config, &db_path), round);
        for key in &acked {
            assert!(ledger.keys.contains(&stored_key(key)), "round {round}: acknowledged `{key}` is missing");
        }
        let sent_lines = ledger.lines.iter().filter(|l| l["event"] == "sent").count();
        assert_eq!(sent_lines, ledger.keys.len(), "round {round}: one sent line per stored key");
    }
    // Every write is retried once more, acknowledged or not: each is recorded exactly once.
    let server = serve(&config, &db_path);
    let agent = agent();
    for (key, thread) in &attempted {
        assert_eq!(post(&agent, server.addr, "/v1/record", &sent(key, *thread)), Some(200), "retry of `{key}`");
    }
    drop(server);
    let ledger = read_ledger(&db.path());
    let sent_lines = ledger.lines.iter().filter(|l| l["event"] == "sent").count();
    assert_eq!(sent_lines, attempted.len(), "every attempted write is in the ledger exactly once");
    assert_eq!(ledger.keys.len(), attempted.len());
    assert_consistent(&ledger, &gate_status(&config, &db_path), ROUNDS);
    eprintln!("timings: {timings:?}, total {:?}", started.elapsed());
}

#[test]
fn a_gate_record_retried_with_its_idempotency_key_is_recorded_once() {
    let db = TempDb::new();
    let config = config(db.dir.path());
    let db_path = db.path().display().to_string();
    let record = |key: &str, thread: &str| {
        warden_process(
            &[
                "gate",
                "record",
                "--config",
                &config,
                "--db",
                &db_path,
                "sms",
                ALICE,
                "sent",
                thread,
                "--idempotency-key",
                key,
            ],
            "",
        )
    };
    for _ in 0..3 {
        let out = record("send-1", "t");
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    assert_eq!(gate_status(&config, &db_path)["entries"].as_u64(), Some(1));
    assert_eq!(read_ledger(&db.path()).thread_sends, [1]);
    // The same key for another thread is another request: refused, nothing written.
    let other = record("send-1", "u");
    assert_eq!(other.code, 2, "{}", other.stderr);
    assert!(other.stderr.contains("idempotencyKey: was already used for a different request"), "{}", other.stderr);
    let bad = record("has space", "t");
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("idempotencyKey: `has space` must be 1 to 128 characters"), "{}", bad.stderr);
    // Each admin command takes one too.
    for _ in 0..2 {
        let consent = warden_process(
            &["gate", "consent", "--config", &config, "--db", &db_path, "sms", ALICE, "--idempotency-key", "c-1"],
            "",
        );
        assert_eq!(consent.code, 0, "{}", consent.stderr);
        let optout = warden_process(
            &["gate", "optout", "--config", &config, "--db", &db_path, "+15550111", "--idempotency-key", "o-1"],
            "",
        );
        assert_eq!(optout.code, 0, "{}", optout.stderr);
    }
    let status = gate_status(&config, &db_path);
    assert_eq!(
        (status["entries"].as_u64(), status["consents"].as_u64(), status["optOuts"].as_u64()),
        (Some(3), Some(1), Some(1))
    );
}

#[test]
fn an_approval_retried_with_its_idempotency_key_grants_one_call() {
    let db = TempDb::new();
    let config = config(db.dir.path());
    let db_path = db.path().display().to_string();
    let call =
        json!({"toolName": "Bash", "arguments": {"command": "rm -rf \"$TARGET\""}, "sessionId": "s1"}).to_string();
    let judge = || -> Value {
        let out = warden_process(&["check", "tool", "--config", &config, "--db", &db_path], &call);
        assert_eq!(out.code, 0, "{}", out.stderr);
        serde_json::from_str(&out.stdout).expect("verdict")
    };
    let asked = judge();
    assert_eq!(asked["decision"], "ask", "{asked}");
    let key = asked["approvalKey"].as_str().expect("key").to_string();
    let approve = || {
        warden_process(
            &[
                "approve",
                "--config",
                &config,
                "--db",
                &db_path,
                "--key",
                &key,
                "--scope",
                "once",
                "--session",
                "s1",
                "--idempotency-key",
                "answer-1",
            ],
            "",
        )
    };
    assert_eq!(approve().code, 0);
    assert_eq!(approve().code, 0, "a retry succeeds");
    let first = judge();
    assert_eq!((first["decision"].as_str(), first["rule"].as_str()), (Some("allow"), Some("memory.allow")), "{first}");
    let second = judge();
    assert_eq!(second["decision"], "ask", "the retried approval granted no second call: {second}");
}

fn assert_refused(db: &Path, config: &str, expected: &str) {
    let db_path = db.display().to_string();
    let call = json!({"toolName": "Bash", "arguments": {"command": "ls"}}).to_string();
    for args in [
        vec!["check", "tool", "--config", config, "--db", &db_path],
        vec!["gate", "status", "--config", config, "--db", &db_path],
    ] {
        let out = warden_process(&args, &call);
        assert_eq!(out.code, 1, "{args:?}: {}", out.stderr);
        assert_eq!(out.stdout, "", "no verdict is printed");
        let message = out.stderr.trim_end();
        assert!(message.starts_with(&format!("error: the database `{db_path}`")), "{message}");
        assert!(message.contains(expected), "{message}");
        assert_eq!(message.lines().count(), 1, "{message}");
    }
    // The hook blocks the call, naming the refusal.
    let event = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"},
        "session_id": "s", "cwd": "/tmp"})
    .to_string();
    let hook = warden_process(&["hook", "claude-code", "--config", config, "--db", &db_path], &event);
    assert_eq!(hook.code, 2, "{}", hook.stderr);
    assert!(hook.stderr.contains("blocked") && hook.stderr.contains(expected), "{}", hook.stderr);
    // The service does not start on it.
    let token = db.with_file_name("token");
    std::fs::write(&token, TOKEN).expect("token file");
    let token = token.display().to_string();
    let serve = warden_process(
        &["serve", "--config", config, "--db", &db_path, "--listen", "127.0.0.1:0", "--token-file", &token],
        "",
    );
    assert_eq!(serve.code, 1, "{}", serve.stderr);
    assert!(serve.stderr.contains(expected), "{}", serve.stderr);
}

#[test]
fn an_empty_database_file_is_refused_and_left_empty() {
    let db = TempDb::new();
    let config = config(db.dir.path());
    std::fs::write(db.path(), b"").expect("empty file");
    assert_refused(&db.path(), &config, "is empty (0 bytes)");
    assert_eq!(std::fs::metadata(db.path()).map(|m| m.len()).ok(), Some(0));
}

#[test]
fn a_foreign_sqlite_file_is_refused_and_left_unchanged() {
    let db = TempDb::new();
    let config = config(db.dir.path());
    let conn = rusqlite::Connection::open(db.path()).expect("create");
    conn.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me');").expect("seed");
    drop(conn);
    let digest = |p: &Path| Sha256::digest(std::fs::read(p).expect("read")).to_vec();
    let before = digest(&db.path());
    assert_refused(&db.path(), &config, "is not Warden's (it has no Warden mark, and tables `notes`)");
    assert!(digest(&db.path()) == before, "the foreign file is unchanged");
    // Another program's marked database, even with Warden's table, is refused too.
    let marked = TempDb::new();
    let conn = rusqlite::Connection::open(marked.path()).expect("create");
    conn.execute_batch(
        "PRAGMA application_id = 1234; CREATE TABLE records (namespace TEXT, key TEXT, value BLOB, version INTEGER);",
    )
    .expect("seed");
    drop(conn);
    assert_refused(&marked.path(), &config, "its application id is 0x000004d2");
}

#[test]
fn a_database_of_a_newer_schema_or_not_sqlite_at_all_is_refused() {
    let db = TempDb::new();
    let config = config(db.dir.path());
    let db_path = db.path().display().to_string();
    assert_eq!(gate_status(&config, &db_path)["entries"].as_u64(), Some(0), "created where no file existed");
    let conn = rusqlite::Connection::open(db.path()).expect("open");
    let marks: (i64, i64) = conn
        .query_row("SELECT * FROM pragma_application_id, pragma_user_version", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("marks");
    assert_eq!(marks, (i64::from(warden_host::storage::APPLICATION_ID), 1));
    conn.execute_batch("PRAGMA user_version = 2;").expect("bump");
    drop(conn);
    assert_refused(&db.path(), &config, "was written by a newer Warden (schema 2; this one knows up to 1)");
    let text = TempDb::new();
    std::fs::write(text.path(), "not a database\n".repeat(300)).expect("write");
    assert_refused(&text.path(), &config, "cannot be read as SQLite");
}

#[test]
fn a_write_of_an_exited_process_stays_in_the_log_and_every_later_reader_sees_it() {
    let db = TempDb::new();
    let config = config(db.dir.path());
    let db_path = db.path().display().to_string();
    let consent = warden_process(&["gate", "consent", "--config", &config, "--db", &db_path, "sms", ALICE], "");
    assert_eq!(consent.code, 0, "{}", consent.stderr);
    // The process exited without folding its log into the file: no disk syncs on the way out.
    let log = format!("{db_path}-wal");
    let logged = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
    assert!(logged > 0, "the write-ahead log `{log}` holds the commit after the process exited");
    // Another process and a plain SQLite reader both see the commit.
    assert_eq!(gate_status(&config, &db_path)["consents"].as_u64(), Some(1));
    assert!(db.records().is_some_and(|n| n > 0), "a plain SQLite reader sees the records");
    // Nothing of the log is lost when the next writer runs: both consents are there.
    let second = warden_process(&["gate", "consent", "--config", &config, "--db", &db_path, "sms", "+15550111"], "");
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert_eq!(gate_status(&config, &db_path)["consents"].as_u64(), Some(2));
}
