//! The audit trail through the `warden` binary and its SQLite database:
//! every check appends exactly one entry; editing, deleting or reordering an
//! entry in the file is found by `warden audit verify`, which names the
//! first broken link; replay under a changed policy lists exactly the
//! changed decisions; retention keeps the bounds.

use serde_json::{Value, json};
use std::path::Path;
use warden_tests::{CliOutput, TempDb, warden_process};

const DAY_MS: u64 = 24 * 60 * 60 * 1000;
const T0: u64 = 1_700_000_000_000;

struct Trail {
    db: TempDb,
    config: std::path::PathBuf,
}

impl Trail {
    fn new(config: &Value) -> Trail {
        let db = TempDb::new();
        let path = db.dir.path().join("config.json");
        std::fs::write(&path, config.to_string()).expect("write config");
        Trail { db, config: path }
    }

    fn with_config(&self, name: &str, config: &Value) -> std::path::PathBuf {
        let path = self.db.dir.path().join(name);
        std::fs::write(&path, config.to_string()).expect("write config");
        path
    }

    fn run(&self, args: &[&str], stdin: &str) -> CliOutput {
        self.run_with(&self.config, args, stdin)
    }

    fn run_with(&self, config: &Path, args: &[&str], stdin: &str) -> CliOutput {
        let db = self.db.path();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--config", config.to_str().expect("utf-8 path"), "--db", db.to_str().expect("utf-8 path")]);
        warden_process(&all, stdin)
    }

    fn tool(&self, tool: &str, args: Value, now_ms: Option<u64>) -> Value {
        let mut call = json!({"toolName": tool, "arguments": args.to_string(), "sessionId": "s-1"});
        let mut argv = vec!["check", "tool"];
        if let Some(now) = now_ms {
            call["nowMs"] = json!(now);
            argv.insert(0, "--replay");
        }
        let out = self.run(&argv, &call.to_string());
        assert_eq!(out.code, 0, "check tool: {}", out.stderr);
        serde_json::from_str(&out.stdout).expect("a verdict")
    }

    fn verify(&self) -> (i32, Value, String) {
        let out = self.run(&["audit", "verify"], "");
        let report = serde_json::from_str(&out.stdout).unwrap_or(Value::Null);
        (out.code, report, out.stderr)
    }

    fn export(&self) -> Vec<Value> {
        let out = self.run(&["audit", "export"], "");
        assert_eq!(out.code, 0, "export: {}", out.stderr);
        out.stdout.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
    }

    fn sql(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.db.path()).expect("open the database")
    }

    fn entry_keys(&self) -> Vec<String> {
        let conn = self.sql();
        let mut stmt = conn
            .prepare("SELECT key FROM records WHERE namespace = 'audit' AND key LIKE 'e/%' ORDER BY key")
            .expect("sql");
        stmt.query_map([], |r| r.get(0)).expect("query").map(|r| r.expect("row")).collect()
    }

    fn value(&self, key: &str) -> Vec<u8> {
        self.sql()
            .query_row("SELECT value FROM records WHERE namespace = 'audit' AND key = ?1", [key], |r| r.get(0))
            .expect("the record exists")
    }

    fn set_value(&self, key: &str, value: &[u8]) {
        let n = self
            .sql()
            .execute(
                "UPDATE records SET value = ?1 WHERE namespace = 'audit' AND key = ?2",
                rusqlite::params![value, key],
            )
            .expect("update");
        assert_eq!(n, 1, "{key} exists");
    }

    fn delete(&self, key: &str) {
        let n =
            self.sql().execute("DELETE FROM records WHERE namespace = 'audit' AND key = ?1", [key]).expect("delete");
        assert_eq!(n, 1, "{key} exists");
    }
}

fn key(seq: u64) -> String {
    format!("e/{seq:020}")
}

fn audited() -> Value {
    json!({"tools": {}, "audit": {"keepInputs": true}})
}

/// Five tool calls: a recursive delete (denied), then four reads (allowed).
fn five_entries() -> Trail {
    let t = Trail::new(&audited());
    let v = t.tool("exec", json!({"command": "rm -rf /"}), None);
    assert_eq!((v["decision"].as_str(), v["rule"].as_str()), (Some("deny"), Some("exec.recursive-delete")));
    for i in 0..4 {
        let v = t.tool("read", json!({"path": format!("/tmp/file-{i}")}), None);
        assert_eq!((v["decision"].as_str(), v["rule"].as_str()), (Some("allow"), Some("tools.allow")));
    }
    let (code, report, _) = t.verify();
    assert_eq!(code, 0);
    assert_eq!(
        (report["ok"].as_bool(), report["checked"].as_u64(), report["headSeq"].as_u64()),
        (Some(true), Some(5), Some(5))
    );
    t
}

fn assert_broken(t: &Trail, seq: u64, problem: &str) {
    let (code, report, stderr) = t.verify();
    assert_eq!(code, 4, "verify exits 4 on a broken chain: {report} {stderr}");
    assert_eq!(report["ok"], json!(false));
    assert_eq!(report["brokenSeq"], json!(seq), "{report}");
    let said = report["problem"].as_str().unwrap_or_default();
    assert!(said.contains(problem), "problem `{said}` names `{problem}`");
    assert!(stderr.contains(&format!("broken at entry {seq}")), "stderr names the link: {stderr}");
}

#[test]
fn every_check_appends_exactly_one_entry() {
    let t = Trail::new(&json!({"tools": {}, "flow": {}, "audit": {}}));
    t.tool("exec", json!({"command": "rm -rf /"}), None);
    assert_eq!(t.entry_keys().len(), 1);
    let turn = json!({"message": "please send the report to bob@example.com", "sessionId": "s-1", "trigger": "user"});
    let out = t.run(&["check", "turn"], &turn.to_string());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(t.entry_keys().len(), 2);
    let message = json!({"direction": "outbound", "channel": "email", "recipient": "carol@example.org",
                         "body": "the quarterly numbers", "sessionId": "s-1"});
    let out = t.run(&["check", "outbound"], &message.to_string());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let outbound: Value = serde_json::from_str(&out.stdout).expect("a verdict");
    assert_eq!(t.entry_keys().len(), 3);
    // A tool result decides nothing, so it appends nothing.
    let result = json!({"toolName": "read", "content": "mail dave@example.net", "sessionId": "s-1"});
    let out = t.run(&["check", "tool-result"], &result.to_string());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(t.entry_keys().len(), 3);

    let entries = t.export();
    let summary: Vec<(u64, &str, &str, &str)> = entries
        .iter()
        .map(|e| {
            (
                e["seq"].as_u64().unwrap_or_default(),
                e["check"].as_str().unwrap_or_default(),
                e["decision"].as_str().unwrap_or_default(),
                e["rule"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (1, "tool-call", "deny", "exec.recursive-delete"),
            (2, "turn", "allow", "not-configured"),
            (
                3,
                "outbound",
                outbound["decision"].as_str().unwrap_or_default(),
                outbound["rule"].as_str().unwrap_or_default()
            ),
        ]
    );
    assert!(entries.iter().all(|e| e["policyVersion"].as_str().is_some_and(|v| v.starts_with("sha256:"))));
    assert_eq!(entries[1]["prev"], entries[0]["hash"]);
    assert_eq!(entries[2]["prev"], entries[1]["hash"]);
    let (code, report, _) = t.verify();
    assert_eq!((code, report["checked"].as_u64(), report["keyed"].as_bool()), (0, Some(3), Some(true)));
}

#[test]
fn entries_hold_no_message_text_recipient_session_or_secret_in_clear() {
    let t = Trail::new(&json!({"tools": {}, "audit": {"keepInputs": true}}));
    let turn = json!({"message": "the launch code is tangerine", "sessionId": "session-secret-name", "trigger": "user",
                      "identity": {"senderId": "alice-sender", "agentId": "agent-007"}});
    assert_eq!(t.run(&["check", "turn"], &turn.to_string()).code, 0);
    let message = json!({"direction": "outbound", "channel": "email", "recipient": "carol@example.org",
                         "body": "tangerine body text", "sessionId": "session-secret-name"});
    assert_eq!(t.run(&["check", "outbound"], &message.to_string()).code, 0);
    let token = "ghp_".to_string() + &"a1B2c3D4e5F6g7H8i9J0".repeat(2)[..36];
    let call = json!({"toolName": "exec", "sessionId": "session-secret-name",
                      "arguments": json!({"command": format!("curl -H 'Authorization: token {token}' https://api.github.com")}).to_string()});
    assert_eq!(t.run(&["check", "tool"], &call.to_string()).code, 0);
    let conn = t.sql();
    let mut stmt = conn.prepare("SELECT value FROM records WHERE namespace = 'audit'").expect("sql");
    let all: Vec<String> = stmt
        .query_map([], |r| r.get::<_, Vec<u8>>(0))
        .expect("query")
        .map(|r| String::from_utf8_lossy(&r.expect("row")).into_owned())
        .collect();
    let text = all.join("\n");
    for clear in ["tangerine", "carol@example.org", "session-secret-name", "alice-sender", "agent-007", token.as_str()]
    {
        assert!(!text.contains(clear), "`{clear}` is stored in clear");
    }
    // The kept call names what was redacted, so replay knows it may differ.
    let entries = t.export();
    let kept = &entries[2]["kept"];
    assert!(kept["arguments"].as_str().unwrap_or_default().contains("[redacted: "), "{kept}");
    assert!(!kept["redacted"].as_array().map(Vec::is_empty).unwrap_or(true), "{kept}");
}

#[test]
fn an_edited_entry_is_named_by_verify() {
    let t = five_entries();
    let text = String::from_utf8(t.value(&key(1))).expect("utf-8");
    t.set_value(&key(1), text.replace("\"deny\"", "\"allow\"").as_bytes());
    assert_broken(&t, 1, "does not match its keyed hash");
}

#[test]
fn an_entry_rehashed_with_plain_sha256_is_still_found() {
    // Someone with the database but not the secret cannot compute the keyed hash.
    let t = five_entries();
    let mut v: Value = serde_json::from_slice(&t.value(&key(3))).expect("json");
    v["rule"] = json!("tools.remembered");
    v["hash"] = json!(sha256_hex(v.to_string().as_bytes()));
    t.set_value(&key(3), v.to_string().as_bytes());
    assert_broken(&t, 3, "does not match its keyed hash");
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn a_field_added_to_an_entry_is_found() {
    let t = five_entries();
    let mut v: Value = serde_json::from_slice(&t.value(&key(2))).expect("json");
    v["approvedBy"] = json!("someone");
    t.set_value(&key(2), v.to_string().as_bytes());
    assert_broken(&t, 2, "does not match its keyed hash");
}

#[test]
fn deleting_the_newest_entry_is_found() {
    let t = five_entries();
    t.delete(&key(5));
    assert_broken(&t, 5, "entry 5 is missing");
}

#[test]
fn deleting_the_oldest_entry_is_found() {
    let t = five_entries();
    t.delete(&key(1));
    assert_broken(&t, 1, "entry 1 is missing");
}

#[test]
fn deleting_a_middle_entry_is_found() {
    let t = five_entries();
    t.delete(&key(3));
    assert_broken(&t, 3, "entry 3 is missing");
}

#[test]
fn swapping_two_entries_is_found() {
    let t = five_entries();
    let (two, three) = (t.value(&key(2)), t.value(&key(3)));
    t.set_value(&key(2), &three);
    t.set_value(&key(3), &two);
    assert_broken(&t, 2, "entries were moved");
}

#[test]
fn moving_the_newest_entries_down_is_found() {
    // Entry 3 deleted and 4, 5 renumbered under 3, 4: the keys are contiguous again.
    let t = five_entries();
    let (four, five) = (t.value(&key(4)), t.value(&key(5)));
    t.set_value(&key(3), &four);
    t.set_value(&key(4), &five);
    t.delete(&key(5));
    assert_broken(&t, 3, "entries were moved");
}

#[test]
fn deleting_the_newest_entry_and_editing_the_head_is_found() {
    let t = five_entries();
    let four: Value = serde_json::from_slice(&t.value(&key(4))).expect("json");
    let mut head: Value = serde_json::from_slice(&t.value("head")).expect("json");
    head["seq"] = json!(4);
    head["hash"] = four["hash"].clone();
    t.set_value("head", head.to_string().as_bytes());
    t.delete(&key(5));
    assert_broken(&t, 4, "the head record does not match its keyed hash");
}

#[test]
fn deleting_the_head_is_found() {
    let t = five_entries();
    t.delete("head");
    assert_broken(&t, 1, "the head record is missing");
}

#[test]
fn an_entry_put_back_past_a_rolled_back_head_is_found() {
    // An older head restored over a newer one: the newer entries lie past it.
    let t = Trail::new(&audited());
    for i in 0..3 {
        t.tool("read", json!({"path": format!("/tmp/{i}")}), None);
    }
    let old_head = t.value("head");
    t.tool("read", json!({"path": "/tmp/3"}), None);
    t.set_value("head", &old_head);
    assert_broken(&t, 4, "lies past the head");
}

#[test]
fn replay_under_a_changed_policy_lists_exactly_the_changed_decisions() {
    let t = five_entries();
    // A turn is recorded but not replayable (no message text is kept).
    let turn = json!({"message": "hello", "sessionId": "s-1", "trigger": "user"});
    assert_eq!(t.run(&["check", "turn"], &turn.to_string()).code, 0);
    let same = t.run(&["audit", "replay"], "");
    assert_eq!(same.code, 0, "{}", same.stderr);
    let same: Value = serde_json::from_str(&same.stdout).expect("json");
    assert_eq!(same["changed"], json!([]), "the same policy changes nothing");
    assert_eq!((same["replayed"].as_u64(), same["skipped"]["notToolCalls"].as_u64()), (Some(5), Some(1)));

    let changed = t.with_config(
        "changed.json",
        &json!({"tools": {"rules": {"exec.recursive-delete": {"decision": "ask"}}}, "audit": {"keepInputs": true}}),
    );
    let out = t.run_with(&changed, &["audit", "replay"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(
        report["changed"],
        json!([{"seq": 1, "tool": "exec", "stateful": false,
                "was": {"decision": "deny", "rule": "exec.recursive-delete"},
                "now": {"decision": "ask", "rule": "exec.recursive-delete"}}])
    );
}

#[test]
fn replay_skips_calls_kept_without_inputs() {
    let t = Trail::new(&json!({"tools": {}, "audit": {}}));
    t.tool("exec", json!({"command": "rm -rf /"}), None);
    let changed =
        t.with_config("changed.json", &json!({"tools": {"rules": {"exec.recursive-delete": {"decision": "ask"}}}}));
    let out = t.run_with(&changed, &["audit", "replay"], "");
    let report: Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!((report["replayed"].as_u64(), report["skipped"]["notKept"].as_u64()), (Some(0), Some(1)));
    assert_eq!(report["changed"], json!([]));
}

#[test]
fn retention_keeps_max_entries_exactly_and_prunes_the_oldest_past_it() {
    let t = Trail::new(&json!({"tools": {}, "audit": {"maxEntries": 16}}));
    for i in 0..16 {
        t.tool("read", json!({"path": format!("/tmp/{i}")}), None);
    }
    assert_eq!(t.entry_keys().len(), 16);
    let (code, report, _) = t.verify();
    assert_eq!((code, report["floorSeq"].as_u64(), report["checked"].as_u64()), (0, Some(1), Some(16)));
    t.tool("read", json!({"path": "/tmp/16"}), None);
    assert_eq!(t.entry_keys().len(), 16);
    assert_eq!(t.entry_keys().first().cloned(), Some(key(2)));
    let (code, report, _) = t.verify();
    assert_eq!((code, report["floorSeq"].as_u64(), report["headSeq"].as_u64()), (0, Some(2), Some(17)), "{report}");

    // After a prune, the floor shows a removed oldest entry, and a removed floor.
    t.delete(&key(2));
    assert_broken(&t, 2, "entry 2 is missing");
}

#[test]
fn a_removed_floor_record_is_found() {
    let t = Trail::new(&json!({"tools": {}, "audit": {"maxEntries": 16}}));
    for i in 0..17 {
        t.tool("read", json!({"path": format!("/tmp/{i}")}), None);
    }
    t.delete("floor");
    assert_broken(&t, 2, "the floor record is missing");
}

#[test]
fn retention_keeps_entries_exactly_max_age_days_old_and_prunes_older() {
    let t = Trail::new(&json!({"tools": {}, "audit": {"maxAgeDays": 1}}));
    t.tool("read", json!({"path": "/tmp/a"}), Some(T0));
    t.tool("read", json!({"path": "/tmp/b"}), Some(T0 + DAY_MS));
    assert_eq!(t.entry_keys(), vec![key(1), key(2)], "an entry exactly the bound old is kept");
    t.tool("read", json!({"path": "/tmp/c"}), Some(T0 + DAY_MS + 1));
    assert_eq!(t.entry_keys(), vec![key(2), key(3)], "one past the bound is pruned");
    let (code, report, _) = t.verify();
    assert_eq!((code, report["floorSeq"].as_u64(), report["checked"].as_u64()), (0, Some(2), Some(2)));
}

#[test]
fn audit_bounds_are_checked_at_and_past_their_limits() {
    let t = Trail::new(&json!({}));
    for (field, ok, bad) in [
        ("maxEntries", 16u64, 15u64),
        ("maxEntries", 1_000_000, 1_000_001),
        ("maxAgeDays", 1, 0),
        ("maxAgeDays", 3650, 3651),
    ] {
        let good = t.with_config("good.json", &json!({"audit": {field: ok}}));
        let out = warden_process(&["validate", "--config", good.to_str().unwrap_or_default()], "");
        assert_eq!(out.code, 0, "{field} {ok}: {}", out.stderr);
        let wrong = t.with_config("bad.json", &json!({"audit": {field: bad}}));
        let out = warden_process(&["validate", "--config", wrong.to_str().unwrap_or_default()], "");
        assert_eq!(out.code, 2, "{field} {bad}");
        assert!(
            out.stderr.contains(&format!("audit.{field}")) && out.stderr.contains(&format!("`{bad}`")),
            "{}",
            out.stderr
        );
    }
    let wrong = t.with_config("bad.json", &json!({"audit": {"keepInput": true}}));
    let out = warden_process(&["validate", "--config", wrong.to_str().unwrap_or_default()], "");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("audit.keepInput"), "{}", out.stderr);
}

#[test]
fn two_processes_on_one_database_keep_one_linear_chain() {
    let t = std::sync::Arc::new(Trail::new(&audited()));
    let workers: Vec<_> = (0..2)
        .map(|w| {
            let t = t.clone();
            std::thread::spawn(move || {
                for i in 0..8 {
                    t.tool("read", json!({"path": format!("/tmp/{w}-{i}")}), None);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    let (code, report, stderr) = t.verify();
    assert_eq!(code, 0, "{report} {stderr}");
    assert_eq!((report["headSeq"].as_u64(), report["checked"].as_u64()), (Some(16), Some(16)));
    assert_eq!(t.entry_keys().len(), 16);
}

#[test]
fn an_unwritable_trail_leaves_the_decision_standing_and_is_counted() {
    let t = five_entries();
    t.set_value("head", b"not json");
    let v = t.tool("exec", json!({"command": "rm -rf /"}), None);
    assert_eq!((v["decision"].as_str(), v["rule"].as_str()), (Some("deny"), Some("exec.recursive-delete")));
    let v = t.tool("read", json!({"path": "/tmp/x"}), None);
    assert_eq!((v["decision"].as_str(), v["rule"].as_str()), (Some("allow"), Some("tools.allow")));
    assert_eq!(t.entry_keys().len(), 5, "nothing was appended");
    let out = t.run(&["diagnostics"], "");
    let report: Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(report["counters"]["audit.unrecorded"], json!(2), "{report}");
}

#[test]
fn an_unwritable_trail_refuses_tool_calls_when_required() {
    let t = five_entries();
    let required = t.with_config("required.json", &json!({"tools": {}, "audit": {"required": true}}));
    t.set_value("head", b"not json");
    let call = json!({"toolName": "read", "arguments": json!({"path": "/tmp/x"}).to_string(), "sessionId": "s-1"});
    let out = t.run_with(&required, &["check", "tool"], &call.to_string());
    let v: Value = serde_json::from_str(&out.stdout).expect("a verdict");
    assert_eq!((v["decision"].as_str(), v["rule"].as_str()), (Some("deny"), Some("audit.unrecorded")), "{v}");
    // A turn still proceeds: inbound checks fail open.
    let turn = json!({"message": "hello", "sessionId": "s-1", "trigger": "user"});
    let out = t.run_with(&required, &["check", "turn"], &turn.to_string());
    let o: Value = serde_json::from_str(&out.stdout).expect("an outcome");
    assert_eq!(o["proceed"], json!(true));
}

#[test]
fn without_an_audit_section_nothing_is_stored_in_its_namespace() {
    let t = Trail::new(&json!({"tools": {}}));
    t.tool("exec", json!({"command": "rm -rf /"}), None);
    assert_eq!(t.db.records_in("audit"), 0);
    let (code, report, _) = t.verify();
    assert_eq!((code, report["checked"].as_u64(), report["headSeq"].as_u64()), (0, Some(0), Some(0)));
}

#[test]
fn replay_marks_a_decision_made_by_a_remembered_answer_as_stateful() {
    // The scratch instance has no remembered answers: a call a person approved for
    // the session asks again, and replay says the change comes from state.
    let config = json!({"tools": {"askTools": ["deploy"]}, "audit": {"keepInputs": true}});
    let t = Trail::new(&config);
    let v = t.tool("deploy", json!({"target": "staging"}), None);
    assert_eq!((v["decision"].as_str(), v["rule"].as_str()), (Some("ask"), Some("tools.ask-tool")));
    let call = json!({"toolName": "deploy", "arguments": json!({"target": "staging"}).to_string(), "sessionId": "s-1"});
    let out = t.run(&["approve", "--scope", "session", "--session", "s-1"], &call.to_string());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v = t.tool("deploy", json!({"target": "staging"}), None);
    assert_eq!((v["decision"].as_str(), v["rule"].as_str()), (Some("allow"), Some("memory.allow")));
    let out = t.run(&["audit", "replay"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(
        report["changed"],
        json!([{"seq": 3, "tool": "deploy", "stateful": true,
                "was": {"decision": "allow", "rule": "memory.allow"},
                "now": {"decision": "ask", "rule": "tools.ask-tool"}}]),
        "{report}"
    );
}

/// Copies `tests/fixtures/earlier-records` into a fresh folder: a database an
/// earlier `warden` wrote, its key file (mode 0600, as `warden` requires) and
/// the configuration it ran with.
fn earlier_records() -> Trail {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/earlier-records");
    let config: Value =
        serde_json::from_slice(&std::fs::read(fixture.join("config.json")).expect("the fixture's configuration"))
            .expect("JSON");
    let t = Trail::new(&config);
    let db = t.db.path();
    let key = db.with_extension("db.key");
    for (from, to) in [("warden.db", &db), ("warden.db.key", &key)] {
        std::fs::copy(fixture.join(from), to).expect("copy the fixture");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o600)).expect("chmod 0600");
        }
    }
    t
}

/// The earlier `warden` (commit 52b7ca8) wrote the fixture with its
/// configuration: three `git status` tool calls at 1700043200001..3, an opt-out
/// of +15550100 and an SMS consent of +15550111 (`warden gate`), and three
/// outbound checks (opted out, routine, no consent). Each of these records is
/// found by a keyed hash of the host's secret, so a change to how a key or a
/// MAC is computed would lose them: the opt-out would no longer stop a message.
#[test]
fn records_an_earlier_warden_wrote_keep_their_meaning_the_chain_the_opt_out_the_consent_and_the_profile() {
    const T: u64 = 1_700_043_200_000;
    let t = earlier_records();
    let (code, report, stderr) = t.verify();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        (report["ok"].as_bool(), report["checked"].as_u64(), report["keyed"].as_bool()),
        (Some(true), Some(6), Some(true))
    );

    let outbound = |to: &str| {
        let request = json!({"channel": "sms", "recipient": to, "body": "Reminder: your appointment is tomorrow.", "nowMs": T + 20});
        let out = t.run(&["--replay", "check", "outbound"], &request.to_string());
        assert_eq!(out.code, 0, "check outbound: {}", out.stderr);
        let verdict: Value = serde_json::from_str(&out.stdout).expect("a verdict");
        (
            verdict["decision"].as_str().unwrap_or_default().to_string(),
            verdict["rule"].as_str().unwrap_or_default().to_string(),
        )
    };
    assert_eq!(outbound("+15550100"), ("deny".to_string(), "gate.opted-out".to_string()), "the opt-out holds");
    assert_eq!(outbound("+15550111"), ("allow".to_string(), "gate.routine".to_string()), "the consent holds");
    let verdict = t.tool("exec", json!({"command": "git status"}), Some(T + 21));
    assert_eq!((verdict["decision"].as_str(), verdict["rule"].as_str()), (Some("allow"), Some("tools.allow")));

    // The new entries continue the earlier chain, and the profile keeps counting.
    let (code, report, stderr) = t.verify();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        (report["ok"].as_bool(), report["checked"].as_u64(), report["headSeq"].as_u64()),
        (Some(true), Some(9), Some(9))
    );
    let out = t.run(&["profile", "show"], "");
    assert_eq!(out.code, 0, "profile show: {}", out.stderr);
    let profiles: Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(profiles["profiles"][0]["agent"], "default");
    assert_eq!(profiles["profiles"][0]["calls"], 4, "three earlier calls and this one: {profiles}");
}
