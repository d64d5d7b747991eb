//! A fleet: four `warden serve` processes on loopback sharing one PostgreSQL
//! database (`--storage postgres://…`), driven by concurrent clients, then
//! the database stopped, its connections killed and its server paused.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use warden_tests::postgres::Postgres;
use warden_tests::{cache_dir, warden_binary, warden_process};

const TOKEN: &str = "fleet-test-token-0123456789";
const SERVERS: usize = 4;
const CLIENTS: usize = 8;
/// Checks, each followed by a record, across the fleet.
const OPERATIONS: usize = 2000;
const RECIPIENTS: [&str; 4] = ["+15550100", "+15550101", "+15550102", "+15550103"];
const THREADS_PER_RECIPIENT: usize = 2;
/// How long a check may take to answer while the database is down: the
/// storage's own deadline and a margin.
const OUTAGE_ANSWER_WITHIN: Duration = Duration::from_secs(12);

fn config(dir: &Path) -> String {
    let text = json!({
        "gate": {"ownerOffset": "+00:00", "start": "00:00", "end": "24:00", "requireConsent": false,
            "minGapSeconds": 1, "templates": ["Your order has shipped."],
            "ledgerSecret": "fleet-ledger-secret-0123456789-0123456789"},
        "audit": {},
        "context": {}
    });
    let path = dir.join("config.json");
    std::fs::write(&path, text.to_string()).expect("write config");
    path.display().to_string()
}

struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(config: &str, url: &str) -> Server {
    let mut child = Command::new(warden_binary())
        .args(["serve", "--config", config, "--storage", url, "--listen", "127.0.0.1:0", "--concurrency", "4"])
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
    std::thread::spawn(move || for _ in lines {});
    Server { child, addr }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// Posts `body`; the status and the answer, or `None` when the connection failed.
fn post(agent: &ureq::Agent, addr: SocketAddr, path: &str, body: &Value) -> Option<(u16, Value)> {
    let mut response = agent
        .post(format!("http://{addr}{path}"))
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("content-type", "application/json")
        .send(body.to_string())
        .ok()?;
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap_or_default();
    Some((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
}

fn message(recipient: &str, thread: &str) -> Value {
    json!({"direction": "outbound", "channel": "sms", "recipient": recipient,
        "body": "Your order has shipped.", "thread": thread})
}

fn outcome(recipient: &str, thread: &str, delivery: &str, key: &str) -> Value {
    json!({"outcome": {"channel": "sms", "recipient": recipient, "delivery": delivery,
        "thread": thread, "idempotencyKey": key}})
}

fn decided(answer: &Value) -> (String, String) {
    (answer["decision"].as_str().unwrap_or("").to_string(), answer["rule"].as_str().unwrap_or("").to_string())
}

/// Ledger lines of `event` in the shared database.
fn ledger_lines(pg: &Postgres, database: &str, event: &str) -> usize {
    let sql = format!(
        "SELECT count(*) FROM warden_records WHERE namespace = 'gate'::bytea \
         AND substring(key from 1 for 5) = 'line/'::bytea \
         AND convert_from(value, 'UTF8')::jsonb->>'event' = '{event}'"
    );
    pg.sql(database, &sql).trim().parse().expect("a count")
}

/// Passed checks that followed the previous pass of their thread by less than `gap_ms`.
fn close_passes(pg: &Postgres, database: &str, gap_ms: u64) -> usize {
    let sql = format!(
        "SELECT count(*) FROM (SELECT (v->>'atMs')::bigint - lag((v->>'atMs')::bigint) OVER \
         (PARTITION BY v->>'recipientHash', v->>'thread' ORDER BY (v->>'atMs')::bigint) AS d \
         FROM (SELECT convert_from(value, 'UTF8')::jsonb AS v FROM warden_records WHERE namespace = 'gate'::bytea \
         AND substring(key from 1 for 5) = 'line/'::bytea) lines \
         WHERE v->>'event' = 'check' AND v->>'decision' = 'pass') gaps WHERE d < {gap_ms}"
    );
    pg.sql(database, &sql).trim().parse().expect("a count")
}

/// Sum of the thread records' send counters.
fn thread_sends(pg: &Postgres, database: &str) -> usize {
    let sql = "SELECT coalesce(sum((convert_from(value, 'UTF8')::jsonb->>'sends')::bigint), 0) FROM warden_records \
               WHERE namespace = 'gate'::bytea AND substring(key from 1 for 7) = 'thread/'::bytea";
    pg.sql(database, sql).trim().parse().expect("a sum")
}

#[test]
fn four_gateways_on_one_postgres_record_every_acknowledged_send_once_see_an_opt_out_at_once_and_use_an_approval_once() {
    let started = Instant::now();
    let pg = Postgres::shared();
    let database = "fleet";
    let url = pg.database(database);
    let dir = tempfile::tempdir().expect("temp dir");
    let config = config(dir.path());
    let servers: Vec<Server> = (0..SERVERS).map(|_| serve(&config, &url)).collect();
    let addrs: Vec<SocketAddr> = servers.iter().map(|s| s.addr).collect();

    // Load: each operation checks a message on one server and records what
    // happened on another (a send when it passed, else the reply that clears
    // the thread), retrying a failed record under its idempotency key.
    let next = AtomicUsize::new(0);
    let acked_sends = AtomicUsize::new(0);
    let acked_replies = AtomicUsize::new(0);
    let retried = AtomicUsize::new(0);
    let decisions: std::sync::Mutex<BTreeMap<(String, String), usize>> = Default::default();
    std::thread::scope(|scope| {
        for _ in 0..CLIENTS {
            scope.spawn(|| {
                let agent = agent();
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= OPERATIONS {
                        break;
                    }
                    let recipient = RECIPIENTS[i % RECIPIENTS.len()];
                    let thread = format!("t{}", (i / RECIPIENTS.len()) % THREADS_PER_RECIPIENT);
                    let (status, answer) =
                        post(&agent, addrs[i % SERVERS], "/v1/check/outbound", &message(recipient, &thread))
                            .expect("the check answers");
                    assert_eq!(status, 200, "{answer}");
                    let (decision, rule) = decided(&answer);
                    *decisions.lock().expect("lock").entry((decision.clone(), rule)).or_default() += 1;
                    let delivery = if decision == "allow" { "sent" } else { "reply" };
                    let record = outcome(recipient, &thread, delivery, &format!("op-{i}"));
                    // Twice on different servers: the second is a retry of the
                    // first. A 503 (the core's conflict retries ran out while
                    // every line updates one totals record) is retried too,
                    // under the same idempotency key, as a client does.
                    for attempt in 0..2 {
                        let mut tries = 0;
                        loop {
                            let (status, answer) =
                                post(&agent, addrs[(i + 1 + attempt + tries) % SERVERS], "/v1/record", &record)
                                    .expect("the record answers");
                            if status == 503 && tries < 20 {
                                retried.fetch_add(1, Ordering::SeqCst);
                                tries += 1;
                                std::thread::sleep(Duration::from_millis(5 * tries as u64));
                                continue;
                            }
                            assert_eq!(status, 200, "{answer}");
                            break;
                        }
                    }
                    if decision == "allow" {
                        acked_sends.fetch_add(1, Ordering::SeqCst);
                    } else {
                        acked_replies.fetch_add(1, Ordering::SeqCst);
                    }
                }
            });
        }
    });
    let load = started.elapsed();
    let acked_sends = acked_sends.into_inner();
    let sent_lines = ledger_lines(pg, database, "sent");
    let reply_lines = ledger_lines(pg, database, "reply");
    let counted = thread_sends(pg, database);
    // Passed checks of one thread closer than minGapSeconds, by the times the
    // gateways decided them: a pass reserves its thread in the batch that
    // records it, so none may be.
    let close_passes = close_passes(pg, database, 1000);
    eprintln!(
        "fleet: {OPERATIONS} checks and {} records (each sent twice) through {SERVERS} servers in {load:?}; \
         decisions {:?}; acknowledged sends {acked_sends}, `sent` lines {sent_lines}, thread send counters \
         {counted}; acknowledged replies {}, `reply` lines {reply_lines}; passes of one thread within minGapSeconds \
         of each other {close_passes}; records answered 503 and retried {}",
        OPERATIONS,
        decisions.lock().expect("lock"),
        acked_replies.load(Ordering::SeqCst),
        retried.load(Ordering::SeqCst),
    );
    assert!(acked_sends > 0, "some sends passed");
    assert_eq!(close_passes, 0, "no two checks of one thread passed inside minGapSeconds");
    assert_eq!(sent_lines, acked_sends, "every acknowledged send is in the ledger exactly once");
    assert_eq!(counted, acked_sends, "the thread records count every send once");
    assert_eq!(reply_lines, acked_replies.into_inner(), "every acknowledged reply is in the ledger exactly once");

    // An opt-out recorded through one process blocks the very next check on every other.
    let optout = warden_process(&["gate", "optout", "--config", &config, "--storage", &url, RECIPIENTS[0]], "");
    assert_eq!(optout.code, 0, "{}", optout.stderr);
    let agent = agent();
    for addr in &addrs {
        let (status, answer) =
            post(&agent, *addr, "/v1/check/outbound", &message(RECIPIENTS[0], "t0")).expect("the check answers");
        assert_eq!(status, 200);
        assert_eq!(decided(&answer), ("deny".into(), "gate.opted-out".into()), "server {addr}: {answer}");
    }

    // A `once` approval given through one process is used exactly once across the fleet.
    let call = json!({"toolName": "Bash", "arguments": {"command": "rm -rf \"$TARGET\""}, "sessionId": "s1"});
    let (_, asked) = post(&agent, addrs[0], "/v1/check/tool", &call).expect("the check answers");
    assert_eq!(asked["decision"], "ask", "{asked}");
    let key = asked["approvalKey"].as_str().expect("an approval key").to_string();
    let approve = warden_process(
        &["approve", "--config", &config, "--storage", &url, "--key", &key, "--scope", "once", "--session", "s1"],
        "",
    );
    assert_eq!(approve.code, 0, "{}", approve.stderr);
    let verdicts: Vec<(String, String)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..SERVERS * 3)
            .map(|i| {
                let (call, addr, agent) = (&call, addrs[i % SERVERS], &agent);
                scope.spawn(move || decided(&post(agent, addr, "/v1/check/tool", call).expect("answers").1))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("client")).collect()
    });
    let allowed = verdicts.iter().filter(|v| v.0 == "allow").count();
    eprintln!("fleet: {} concurrent calls after one `once` approval: {allowed} allowed, {verdicts:?}", verdicts.len());
    assert_eq!(allowed, 1, "{verdicts:?}");
    assert!(verdicts.iter().any(|v| *v == ("allow".to_string(), "memory.allow".to_string())), "{verdicts:?}");

    // One audit chain across the fleet.
    drop(servers);
    let verify = warden_process(&["audit", "verify", "--config", &config, "--storage", &url], "");
    eprintln!("fleet: audit verify: {}", verify.stdout.trim());
    assert_eq!(verify.code, 0, "{}\n{}", verify.stdout, verify.stderr);
    eprintln!("fleet: done in {:?}", started.elapsed());
}

/// A check through `addr`: its status, decision and rule, and how long it took.
fn timed_check(agent: &ureq::Agent, addr: SocketAddr, path: &str, body: &Value) -> (u16, Value, Duration) {
    let started = Instant::now();
    let (status, answer) = post(agent, addr, path, body).expect("the service answers");
    (status, answer, started.elapsed())
}

fn turn() -> Value {
    json!({"message": "hello", "sessionId": "s-turn"})
}

fn assert_fails_by_mode(agent: &ureq::Agent, addr: SocketAddr, what: &str) {
    let (status, answer, took) = timed_check(agent, addr, "/v1/check/outbound", &message(RECIPIENTS[1], "t9"));
    eprintln!("faults ({what}): outbound answered {status} {answer} in {took:?}");
    assert!(took < OUTAGE_ANSWER_WITHIN, "{what}: took {took:?}");
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["decision"], "deny", "{what}: gate checks fail closed: {answer}");
    let (status, answer, took) = timed_check(
        agent,
        addr,
        "/v1/check/tool",
        &json!({"toolName": "Read",
        "arguments": {"file_path": "/tmp/x"}, "sessionId": "s-fault"}),
    );
    eprintln!("faults ({what}): tool answered {status} {answer} in {took:?}");
    assert!(took < OUTAGE_ANSWER_WITHIN, "{what}: took {took:?}");
    assert!(status != 200 || answer["decision"] == "deny", "{what}: tool calls fail closed: {answer}");
    let (status, answer, took) = timed_check(agent, addr, "/v1/check/turn", &turn());
    eprintln!("faults ({what}): turn answered {status} {answer} in {took:?}");
    assert!(took < OUTAGE_ANSWER_WITHIN, "{what}: took {took:?}");
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["proceed"], true, "{what}: inbound checks fail open: {answer}");
    assert!(
        answer.to_string().contains("storage-unavailable"),
        "{what}: the turn says what it could not read: {answer}"
    );
}

fn assert_recovered(agent: &ureq::Agent, addr: SocketAddr, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, answer, _) = timed_check(agent, addr, "/v1/check/outbound", &message(RECIPIENTS[2], "t-recover"));
        if status == 200 && answer["decision"] != "deny" {
            eprintln!("faults ({what}): recovered: {answer}");
            return;
        }
        assert!(Instant::now() < deadline, "{what}: the service did not recover: {status} {answer}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn a_stopped_killed_or_paused_database_gets_each_check_s_failure_mode_in_time_and_the_fleet_recovers() {
    // A cluster of its own: this test stops and pauses it.
    let pg = Postgres::start();
    let url = pg.database("faults");
    let dir = tempfile::tempdir().expect("temp dir");
    let config = config(dir.path());
    let servers: Vec<Server> = (0..2).map(|_| serve(&config, &url)).collect();
    let agent = agent();
    assert_recovered(&agent, servers[0].addr, "start");

    // Stopped: checks answer by their failure mode within the deadline.
    pg.stop_server();
    assert_fails_by_mode(&agent, servers[0].addr, "stopped");
    pg.resume_server();
    pg.wait_ready();
    assert_recovered(&agent, servers[0].addr, "stopped");
    assert_recovered(&agent, servers[1].addr, "stopped");

    // Killed connections: every backend of the fleet is terminated while
    // records run; afterwards each acknowledged record is there once.
    let acked = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for c in 0..4 {
            let (agent, servers, acked) = (&agent, &servers, &acked);
            scope.spawn(move || {
                for i in 0..40 {
                    let record = outcome(RECIPIENTS[3], &format!("k{c}"), "sent", &format!("kill-{c}-{i}"));
                    if let Some((200, _)) = post(agent, servers[i % 2].addr, "/v1/record", &record) {
                        acked.fetch_add(1, Ordering::SeqCst);
                    }
                }
            });
        }
        scope.spawn(|| {
            for _ in 0..5 {
                std::thread::sleep(Duration::from_millis(150));
                pg.sql(
                    "postgres",
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'warden'",
                );
            }
        });
    });
    let lines = ledger_lines(&pg, "faults", "sent");
    eprintln!(
        "faults (killed connections): {} of 160 records acknowledged, {lines} `sent` lines",
        acked.load(Ordering::SeqCst)
    );
    assert!(lines >= acked.load(Ordering::SeqCst), "every acknowledged record is in the ledger");
    assert!(lines <= 160, "no record is written twice");
    assert_eq!(thread_sends(&pg, "faults"), lines, "no batch is half written: each line has its thread count");
    assert_recovered(&agent, servers[1].addr, "killed connections");

    // Paused (a partition): the server's processes are stopped with SIGSTOP.
    pg.signal("STOP");
    assert_fails_by_mode(&agent, servers[1].addr, "paused");
    pg.signal("CONT");
    assert_recovered(&agent, servers[0].addr, "paused");
    assert_recovered(&agent, servers[1].addr, "paused");
    drop(servers);
    let verify = warden_process(&["audit", "verify", "--config", &config, "--storage", &url], "");
    assert_eq!(verify.code, 0, "{}\n{}", verify.stdout, verify.stderr);
}

#[test]
fn a_database_migrated_by_a_newer_warden_is_refused_at_start_naming_both_schemas_and_left_unchanged() {
    let pg = Postgres::shared();
    let url = pg.database("newer");
    let dir = tempfile::tempdir().expect("temp dir");
    let config = config(dir.path());
    let first = warden_process(&["gate", "status", "--json", "--config", &config, "--storage", &url], "");
    assert_eq!(first.code, 0, "the first start creates the tables: {}", first.stderr);
    assert_eq!(pg.sql("newer", "SELECT max(version) FROM warden_migrations").trim(), "1");
    pg.sql("newer", "INSERT INTO warden_migrations (version) VALUES (99)");
    let refused = warden_process(&["gate", "status", "--json", "--config", &config, "--storage", &url], "");
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(refused.stderr.contains("schema 99") && refused.stderr.contains("up to 1"), "{}", refused.stderr);
    assert_eq!(pg.sql("newer", "SELECT count(*) FROM warden_migrations").trim(), "2", "nothing was migrated");
}

#[test]
fn an_unreachable_database_at_start_fails_a_tool_check_closed_and_lets_a_turn_proceed_within_the_deadline() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = config(dir.path());
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a port").port();
    let url = format!("postgres://warden@127.0.0.1:{port}/nothing");
    let started = Instant::now();
    let call = json!({"toolName": "Read", "arguments": {"file_path": "/tmp/x"}}).to_string();
    let tool = warden_process(&["check", "tool", "--config", &config, "--storage", &url], &call);
    assert_eq!(tool.code, 1, "a tool call is not allowed when storage cannot open: {}", tool.stdout);
    assert!(tool.stderr.contains("PostgreSQL"), "{}", tool.stderr);
    let turn = warden_process(&["check", "turn", "--config", &config, "--storage", &url], r#"{"message": "hello"}"#);
    assert_eq!(turn.code, 0, "{}", turn.stderr);
    let answer: Value = serde_json::from_str(&turn.stdout).expect("a turn outcome");
    assert_eq!(answer["proceed"], true, "inbound checks fail open: {answer}");
    assert!(started.elapsed() < OUTAGE_ANSWER_WITHIN * 2, "took {:?}", started.elapsed());
}
