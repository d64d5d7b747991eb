//! Golden decisions: every verdict Warden gives on its decision tables,
//! through the real component, compared field by field (decision, rule,
//! reason, risk, scope, approval key, observed decision, signals) with
//! `fixtures/golden/decisions.json`. A change that should decide nothing
//! differently (a faster parser, a cache, an allocator) must leave this
//! test green.
//!
//! A change that decides differently on purpose regenerates the file, and
//! the diff of the file is the review of what changed:
//!
//! ```text
//! WARDEN_BLESS=1 cargo test --release -p warden-tests --test golden
//! ```
//!
//! Tables: the core's shared tool-call table (each case on fresh storage and
//! a fresh instance), the cross-adapter fixture, the benchmark corpus's file
//! paths, the DLP string table, and sequences through decision memory (ask,
//! answer, ask again) whose approval keys and remembered answers are recorded.

use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use warden_host::bindings::exports::warden::guard::policy::{Approval, Direction, OutboundMessage, ToolCall};
use warden_host::bindings::warden::guard::types::{ApprovalScope, Identity, Verdict};
use warden_host::json::VerdictJson;
use warden_host::memory_storage::MemoryStorage;
use warden_host::storage::{BatchError, Condition, Record, Storage, StorageError, Write};
use warden_host::{Limits, Runtime};
use warden_tests::{CapturedLog, T0, corpus, options, tool_call};

/// The environment variable that rewrites the golden file instead of comparing.
const BLESS: &str = "WARDEN_BLESS";
/// Mismatches printed in full; the rest are counted.
const SHOWN: usize = 20;

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/golden/decisions.json")
}

fn read_json(relative: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Storage whose contents can be replaced by an empty store between cases.
#[derive(Default)]
struct Fresh(Mutex<Arc<MemoryStorage>>);

impl Fresh {
    fn reset(&self) {
        *self.0.lock().expect("lock") = Arc::new(MemoryStorage::default());
    }

    fn now(&self) -> Arc<MemoryStorage> {
        self.0.lock().expect("lock").clone()
    }
}

impl Storage for Fresh {
    fn get(&self, n: &str, k: &str) -> Result<Option<Record>, StorageError> {
        self.now().get(n, k)
    }
    fn set(&self, n: &str, k: &str, v: &[u8], w: Condition) -> Result<u64, StorageError> {
        self.now().set(n, k, v, w)
    }
    fn delete(&self, n: &str, k: &str, w: Condition) -> Result<bool, StorageError> {
        self.now().delete(n, k, w)
    }
    fn list(&self, n: &str, p: &str, l: u32, r: bool) -> Result<Vec<(String, Record)>, StorageError> {
        self.now().list(n, p, l, r)
    }
    fn commit(&self, writes: &[Write]) -> Result<(), BatchError> {
        self.now().commit(writes)
    }
}

/// A runtime whose every call runs on a new instance (no pool), so with
/// [`Fresh::reset`] between cases each case sees what a new host on a new
/// database would.
fn isolated(config: &str) -> (Runtime, Arc<Fresh>) {
    let storage = Arc::new(Fresh::default());
    let log = CapturedLog::default();
    let mut opts = options(storage.clone(), &log);
    opts.limits = Limits { pool: 0, ..Limits::default() };
    let rt = Runtime::new(opts, config).unwrap_or_else(|e| panic!("runtime did not start: {e}"));
    (rt, storage)
}

/// A runtime as hosts run it (pooled instances) on its own empty storage.
fn pooled(config: &str) -> Runtime {
    let log = CapturedLog::default();
    Runtime::new(options(Arc::new(MemoryStorage::default()), &log), config)
        .unwrap_or_else(|e| panic!("runtime did not start: {e}"))
}

fn answer(v: &Verdict) -> Value {
    serde_json::to_value(VerdictJson::from(v)).expect("a verdict serializes")
}

fn call_input(c: &ToolCall) -> Value {
    let mut input =
        json!({"tool": c.tool_name, "args": serde_json::from_str::<Value>(&c.arguments).unwrap_or(Value::Null)});
    for (name, value) in [("cwd", c.cwd.clone()), ("session", c.session_id.clone()), ("callId", c.call_id.clone())] {
        if let Some(value) = value {
            input[name] = json!(value);
        }
    }
    if !c.derived_paths.is_empty() {
        input["derivedPaths"] = json!(c.derived_paths);
    }
    input
}

fn table_call(case: &Value, default_cwd: Option<&str>) -> ToolCall {
    let mut c = tool_call(case["tool"].as_str().expect("tool"), case["args"].clone(), "s1", T0);
    c.cwd = case["cwd"].as_str().or(default_cwd).map(str::to_string);
    c.derived_paths = case["derivedPaths"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    c
}

/// Each case of a table of tool calls, alone on fresh storage.
fn tool_table(config: &str, calls: Vec<ToolCall>) -> Vec<Value> {
    let (rt, storage) = isolated(config);
    calls
        .into_iter()
        .map(|c| {
            storage.reset();
            json!({"input": call_input(&c), "verdict": answer(&rt.check_tool_call(&c))})
        })
        .collect()
}

fn shared_table() -> Vec<Value> {
    let doc: Value = serde_json::from_str(corpus::TOOL_CALL_TABLE).expect("the table is JSON");
    let calls = doc["cases"].as_array().expect("cases").iter().map(|c| table_call(c, doc["cwd"].as_str())).collect();
    tool_table(&doc["config"].to_string(), calls)
}

fn cross_adapter() -> Vec<Value> {
    let doc = read_json("fixtures/cross-adapter/cases.json");
    let config = read_json("fixtures/cross-adapter/config.json").to_string();
    let calls = doc["cases"].as_array().expect("cases").iter().map(|c| table_call(c, doc["cwd"].as_str())).collect();
    tool_table(&config, calls)
}

fn corpus_paths() -> Vec<Value> {
    let calls = corpus::paths()
        .into_iter()
        .map(|input| {
            let mut c = tool_call(input.tool, input.args, "s1", T0);
            c.cwd = Some(corpus::CWD.into());
            c
        })
        .collect();
    tool_table(corpus::CONFIG, calls)
}

fn dlp_strings() -> Vec<Value> {
    let doc = read_json("../crates/warden-core/testdata/dlp-strings.json");
    let (rt, storage) = isolated("{}");
    doc["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|case| {
            storage.reset();
            let body = warden_core::fakes::body_from_parts(&case["parts"]).expect("a body");
            let direction = if case["direction"] == "inbound" { Direction::Inbound } else { Direction::Outbound };
            let m = OutboundMessage {
                direction,
                channel: "slack".into(),
                recipient: "U0123".into(),
                sender: None,
                body,
                thread: None,
                message_id: None,
                session_id: None,
                now_ms: T0,
                identity: Identity {
                    provider: None,
                    account_id: None,
                    sender_id: None,
                    channel_id: None,
                    thread_id: None,
                    agent_id: None,
                },
            };
            json!({"input": {"name": case["name"], "direction": case["direction"]}, "verdict": answer(&rt.check_outbound(&m))})
        })
        .collect()
}

/// One step of a sequence through decision memory.
enum Step {
    Check(Box<ToolCall>),
    /// Answer the last `ask` with this decision and scope, optionally for one call ID.
    Answer(bool, ApprovalScope, Option<&'static str>),
}

fn memory_sequences() -> Vec<Value> {
    use ApprovalScope::{Always, Once, Session};
    let at = |tool: &str, args: Value| {
        let mut c = tool_call(tool, args, "s1", T0);
        c.cwd = Some("/ws".into());
        c
    };
    let in_session = |mut c: ToolCall, s: Option<&str>| {
        c.session_id = s.map(str::to_string);
        c
    };
    let with_id = |mut c: ToolCall, id: &str| {
        c.call_id = Some(id.into());
        c
    };
    let fetch = at("WebFetch", json!({"url": "https://example.com/a", "prompt": "summarize"}));
    let write = |p: &str| at("Write", json!({"file_path": p, "content": "x"}));
    let deploy = at("deploy", json!({"target": "prod"}));
    let rm = at("Bash", json!({"command": "rm -rf \"$TARGET\""}));
    let always = r#"{"tools": {"askTools": ["deploy"], "rules": {"tools.ask-tool": {"scope": "always"}}}}"#;
    let sequences: Vec<(&str, &str, Vec<Step>)> = vec![
        (
            "a session answer to a fetch holds in its session only",
            "{}",
            vec![
                Step::Check(Box::new(fetch.clone())),
                Step::Answer(true, Session, None),
                Step::Check(Box::new(fetch.clone())),
                Step::Check(Box::new(in_session(fetch.clone(), Some("s2")))),
                Step::Check(Box::new(in_session(fetch.clone(), None))),
            ],
        ),
        (
            "a write outside the workspace, approved, matches its normalized spellings",
            "{}",
            vec![
                Step::Check(Box::new(write("/opt/app//conf/../x.txt"))),
                Step::Answer(true, Session, None),
                Step::Check(Box::new(write("../opt/app/x.txt"))),
                Step::Check(Box::new(write("/opt/app/y.txt"))),
            ],
        ),
        (
            "an always deny then an always allow: deny wins",
            always,
            vec![
                Step::Check(Box::new(deploy.clone())),
                Step::Answer(false, Always, None),
                Step::Answer(true, Always, None),
                Step::Check(Box::new(deploy.clone())),
                Step::Check(Box::new(in_session(deploy.clone(), Some("s2")))),
            ],
        ),
        (
            "a once answer is used up and bound to its call ID",
            "{}",
            vec![
                Step::Check(Box::new(rm.clone())),
                Step::Answer(true, Once, None),
                Step::Check(Box::new(rm.clone())),
                Step::Check(Box::new(rm.clone())),
                Step::Answer(true, Once, Some("call-7")),
                Step::Check(Box::new(with_id(rm.clone(), "call-8"))),
                Step::Check(Box::new(with_id(rm.clone(), "call-7"))),
            ],
        ),
        (
            "nothing remembered: repeated allows and denies",
            "{}",
            vec![
                Step::Check(Box::new(at("Bash", json!({"command": "git status"})))),
                Step::Check(Box::new(at("Bash", json!({"command": "git status"})))),
                Step::Check(Box::new(at("Bash", json!({"command": "rm -rf /"})))),
                Step::Check(Box::new(at("Read", json!({"file_path": "~/.ssh/id_rsa"})))),
            ],
        ),
    ];
    let mut out = Vec::new();
    for (name, config, steps) in sequences {
        let rt = pooled(config);
        let mut last: Option<Verdict> = None;
        let mut results = Vec::new();
        for step in steps {
            match step {
                Step::Check(c) => {
                    let v = rt.check_tool_call(&c);
                    results.push(json!({"check": call_input(&c), "verdict": answer(&v)}));
                    last = Some(v);
                }
                Step::Answer(allow, scope, call_id) => {
                    let asked = last.as_ref().expect("an answer follows a check");
                    let approval = Approval {
                        key: asked.approval_key.clone().unwrap_or_default(),
                        allow,
                        scope,
                        session_id: Some("s1".into()),
                        call_id: call_id.map(str::to_string),
                        now_ms: T0,
                        idempotency_key: None,
                    };
                    let recorded = match rt.record_approval(&approval) {
                        Ok(()) => json!("recorded"),
                        Err(e) => json!(format!("refused: {e}")),
                    };
                    let scope = serde_json::to_value(warden_host::json::ScopeJson::from(scope)).expect("a scope");
                    results.push(
                        json!({"answer": {"allow": allow, "scope": scope, "callId": call_id}, "result": recorded}),
                    );
                }
            }
        }
        out.push(json!({"input": name, "steps": results}));
    }
    out
}

fn current() -> Value {
    json!({
        "about": "Every verdict on Warden's decision tables through the component. Generated; regenerate with \
                  `WARDEN_BLESS=1 cargo test --release -p warden-tests --test golden` and review the diff.",
        "tables": {
            "tool-calls": shared_table(),
            "cross-adapter": cross_adapter(),
            "corpus-paths": corpus_paths(),
            "dlp-strings": dlp_strings(),
            "memory-sequences": memory_sequences(),
        }
    })
}

/// Where `got` differs from `want`, as `path: want -> got` lines.
fn differences(path: &str, want: &Value, got: &Value, out: &mut Vec<String>) {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            let keys: std::collections::BTreeSet<&String> = w.keys().chain(g.keys()).collect();
            for k in keys {
                differences(
                    &format!("{path}.{k}"),
                    w.get(k).unwrap_or(&Value::Null),
                    g.get(k).unwrap_or(&Value::Null),
                    out,
                );
            }
        }
        (Value::Array(w), Value::Array(g)) if w.len() == g.len() => {
            for (i, (w, g)) in w.iter().zip(g).enumerate() {
                differences(&format!("{path}[{i}]"), w, g, out);
            }
        }
        _ if want != got => out.push(format!("{path}: {want} -> {got}")),
        _ => {}
    }
}

#[test]
fn every_verdict_on_the_decision_tables_matches_the_golden_file() {
    let got = current();
    let path = golden_path();
    let counts: Vec<String> = got["tables"]
        .as_object()
        .expect("tables")
        .iter()
        .map(|(name, rows)| format!("{name} {}", rows.as_array().map_or(0, Vec::len)))
        .collect();
    if std::env::var_os(BLESS).is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("create the folder");
        let text = serde_json::to_string_pretty(&got).expect("serializes") + "\n";
        std::fs::write(&path, text).expect("write the golden file");
        println!("golden: wrote {} ({})", path.display(), counts.join(", "));
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; generate it with `{BLESS}=1 cargo test --release -p warden-tests --test golden`",
            path.display()
        )
    });
    let want: Value = serde_json::from_str(&text).expect("the golden file is JSON");
    let mut diffs = Vec::new();
    for (name, rows) in got["tables"].as_object().expect("tables") {
        let wanted = &want["tables"][name];
        let (Some(rows), Some(wanted)) = (rows.as_array(), wanted.as_array()) else {
            diffs.push(format!("{name}: the table is missing from the golden file"));
            continue;
        };
        if rows.len() != wanted.len() {
            diffs.push(format!(
                "{name}: {} rows now, {} in the golden file (the table changed)",
                rows.len(),
                wanted.len()
            ));
        }
        for (i, (g, w)) in rows.iter().zip(wanted).enumerate() {
            let mut here = Vec::new();
            differences("", w, g, &mut here);
            if !here.is_empty() {
                diffs.push(format!("{name}[{i}] {}:\n    {}", g["input"], here.join("\n    ")));
            }
        }
    }
    println!("golden: compared {}; {} differ", counts.join(", "), diffs.len());
    let shown: Vec<&String> = diffs.iter().take(SHOWN).collect();
    assert!(
        diffs.is_empty(),
        "{} verdicts differ from {} (first {}):\n{}\nIf the change is intended, regenerate with \
         `{BLESS}=1 cargo test --release -p warden-tests --test golden` and review the diff of the file.",
        diffs.len(),
        path.display(),
        shown.len(),
        shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n")
    );
}

/// Rounds of the shared table through one reused instance.
const ROUNDS: usize = 25;
/// The reused instance's memory cap: a few MiB above what one call needs, so
/// memory that a call keeps (an allocator that does not give back what a
/// call freed) traps within the rounds instead of passing unnoticed.
const REUSED_MEMORY_CAP: usize = 12 * 1024 * 1024;

#[test]
fn one_reused_instance_answers_the_shared_table_round_after_round_as_fresh_instances_do() {
    let doc: Value = serde_json::from_str(corpus::TOOL_CALL_TABLE).expect("the table is JSON");
    let config = doc["config"].to_string();
    let calls: Vec<ToolCall> =
        doc["cases"].as_array().expect("cases").iter().map(|c| table_call(c, doc["cwd"].as_str())).collect();
    let fresh = tool_table(&config, calls.clone());

    let storage = Arc::new(Fresh::default());
    let log = CapturedLog::default();
    let mut opts = options(storage.clone(), &log);
    opts.limits = Limits { pool: 1, memory_bytes: REUSED_MEMORY_CAP, ..Limits::default() };
    let rt = Runtime::new(opts, &config).unwrap_or_else(|e| panic!("runtime did not start: {e}"));
    for round in 0..ROUNDS {
        for (i, (call, want)) in calls.iter().zip(&fresh).enumerate() {
            storage.reset();
            let got = json!({"input": call_input(call), "verdict": answer(&rt.check_tool_call(call))});
            let mut diffs = Vec::new();
            differences("", want, &got, &mut diffs);
            assert!(diffs.is_empty(), "round {round}, case {i} {}:\n    {}", got["input"], diffs.join("\n    "));
        }
        assert_eq!(rt.idle_instances(), 1, "round {round}: the instance was discarded (a trap?)");
    }
}

#[test]
fn the_golden_comparison_names_each_changed_field() {
    let want = json!({"decision": "deny", "rule": "exec.recursive-delete", "signals": [{"name": "a"}]});
    let got =
        json!({"decision": "allow", "rule": "exec.recursive-delete", "signals": [{"name": "b"}], "approvalKey": "k"});
    let mut out = Vec::new();
    differences("", &want, &got, &mut out);
    assert_eq!(
        out,
        [".approvalKey: null -> \"k\"", ".decision: \"deny\" -> \"allow\"", ".signals[0].name: \"a\" -> \"b\""]
    );
    let mut none = Vec::new();
    differences("", &want, &want, &mut none);
    assert!(none.is_empty());
}
