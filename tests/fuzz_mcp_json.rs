//! Fuzzing the MCP proxy's line router and the host's JSON request mapping
//! with proptest, on arbitrary bytes, generated messages and mutations of
//! valid ones. Each target runs a bounded number of cases by default (a smoke
//! run of seconds) and prints how many; `WARDEN_FUZZ_CASES=N` runs N each.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};
use warden_host::json as wj;
use warden_host::mcp::{self, INVALID_PARAMS, INVALID_REQUEST, MAX_DEPTH, McpOptions, PARSE_ERROR, Routed};

/// Cases per target, from `WARDEN_FUZZ_CASES` or `default`.
fn cases(default: u32) -> u32 {
    std::env::var("WARDEN_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn fuzz<S: Strategy>(name: &str, default: u32, strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>)
where
    S::Value: std::fmt::Debug,
{
    let cases = cases(default);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    if let Err(e) = runner.run(&strategy, test) {
        panic!("fuzz target `{name}` failed: {e}");
    }
    eprintln!("fuzz {name}: {cases} cases, no failure");
}

/// Valid client lines to mutate.
const MCP_SEEDS: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/ws/.env"}}}"#,
    r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"write_file","arguments":{"path":"/ws/x","content":"y"},"_meta":{"progressToken":1}}}"#,
    r#"{"jsonrpc":"2.0","id":4,"result":{"roots":[{"uri":"file:///ws"}]}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#,
];

/// Fragments that have walked around parsers before.
const FRAGMENTS: &[&str] = &[
    "1e400",
    r#""\ud800""#,
    r#""\udc00\ud800""#,
    "[[[[[[[[[[[[[[[[",
    "]]]]",
    "}",
    r#""__proto__":"#,
    r#"\u0000"#,
    r#""id":"#,
    r#","x":1"#,
    r#"tools\/call"#,
    "Tools/Call",
    "\u{feff}",
    r#""method":"tools/call","#,
    r#""params":[],"#,
    "null",
    "1.5",
    "-0",
    "18446744073709551616",
    r#"{"a":"#,
    " \t\r",
    r#""arguments":{"path":"/root/.ssh/id_rsa"},"#,
    r#""_meta":{"n":1e400},"#,
];

/// One edit of a byte string.
#[derive(Debug, Clone)]
enum Edit {
    Insert(usize, u8),
    Delete(usize, usize),
    Replace(usize, u8),
    Fragment(usize, usize),
    Duplicate(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Insert(i, b)),
        (any::<usize>(), 1usize..8).prop_map(|(i, n)| Edit::Delete(i, n)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Replace(i, b)),
        (any::<usize>(), 0..FRAGMENTS.len()).prop_map(|(i, f)| Edit::Fragment(i, f)),
        (any::<usize>(), 1usize..32).prop_map(|(i, n)| Edit::Duplicate(i, n)),
    ]
}

fn apply(seed: &str, edits: &[Edit]) -> Vec<u8> {
    let mut bytes = seed.as_bytes().to_vec();
    for e in edits {
        let at = |i: usize, len: usize| if len == 0 { 0 } else { i % (len + 1) };
        match *e {
            Edit::Insert(i, b) => {
                let i = at(i, bytes.len());
                bytes.insert(i, b);
            }
            Edit::Delete(i, n) => {
                let i = at(i, bytes.len());
                let end = (i + n).min(bytes.len());
                bytes.drain(i..end);
            }
            Edit::Replace(i, b) => {
                if !bytes.is_empty() {
                    let i = i % bytes.len();
                    bytes[i] = b;
                }
            }
            Edit::Fragment(i, f) => {
                let i = at(i, bytes.len());
                bytes.splice(i..i, FRAGMENTS[f].bytes());
            }
            Edit::Duplicate(i, n) => {
                let i = at(i, bytes.len());
                let end = (i + n).min(bytes.len());
                let copy = bytes[i..end].to_vec();
                bytes.splice(end..end, copy);
            }
        }
    }
    bytes
}

fn mutated(seeds: &'static [&'static str]) -> impl Strategy<Value = Vec<u8>> {
    (0..seeds.len(), prop::collection::vec(edit(), 0..6)).prop_map(move |(s, edits)| apply(seeds[s], &edits))
}

/// Any JSON value, nested a little.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        "[a-z_/\\\\ .\u{0}-\u{7f}]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{0,6}|__proto__|_meta|arguments|name", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A message shaped like JSON-RPC, with fields drawn from near-misses.
fn rpc_like() -> impl Strategy<Value = Vec<u8>> {
    let method = prop_oneof![
        Just(json!("tools/call")),
        Just(json!("Tools/Call")),
        Just(json!("tools.call")),
        Just(json!("tools/call ")),
        Just(json!("tools/list")),
        Just(json!("ping")),
        Just(json!(["tools/call"])),
        Just(json!(7)),
    ];
    let id = prop_oneof![
        Just(None),
        Just(Some(json!(1))),
        Just(Some(json!("x"))),
        Just(Some(json!(1.5))),
        Just(Some(json!(null))),
        Just(Some(json!(true))),
        Just(Some(json!({"a": 1}))),
        Just(Some(json!(u64::MAX))),
    ];
    let params = prop_oneof![
        Just(None),
        any_json().prop_map(Some),
        ("[a-z_]{1,12}", any_json()).prop_map(|(n, a)| Some(json!({"name": n, "arguments": a}))),
        ("[a-z_]{1,12}", prop::collection::btree_map("[a-z]{1,4}", any_json(), 0..3))
            .prop_map(|(n, a)| Some(json!({"name": n, "arguments": a}))),
    ];
    (method, id, params, prop::option::of(("[a-zA-Z_]{1,8}", any_json()))).prop_map(|(m, id, p, extra)| {
        let mut msg = serde_json::Map::new();
        msg.insert("jsonrpc".into(), json!("2.0"));
        msg.insert("method".into(), m);
        if let Some(id) = id {
            msg.insert("id".into(), id);
        }
        if let Some(p) = p {
            msg.insert("params".into(), p);
        }
        if let Some((k, v)) = extra {
            msg.insert(k, v);
        }
        Value::Object(msg).to_string().into_bytes()
    })
}

fn check(cond: bool, what: impl FnOnce() -> String) -> Result<(), TestCaseError> {
    if cond { Ok(()) } else { Err(TestCaseError::fail(what())) }
}

fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn has_proto(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.iter().any(has_proto),
        Value::Object(o) => o.iter().any(|(k, v)| k == "__proto__" || has_proto(v)),
        _ => false,
    }
}

/// The router's promises for one line.
fn router_properties(line: &[u8]) -> Result<(), TestCaseError> {
    let routed = mcp::classify(line);
    let shown = || String::from_utf8_lossy(line).into_owned();
    let strict = serde_json::from_slice::<Value>(line).ok();
    match &routed {
        Routed::Skip => check(line.trim_ascii().is_empty(), || format!("skipped a non-blank line: {}", shown()))?,
        Routed::Refuse(answer) => {
            check(answer["jsonrpc"] == "2.0", || format!("answer without jsonrpc: {answer}"))?;
            let code = answer["error"]["code"].as_i64().unwrap_or(0);
            check([PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS].contains(&code), || format!("code: {answer}"))?;
            let message = answer["error"]["message"].as_str().unwrap_or_default();
            check(message.starts_with("warden refused this message: "), || format!("message: {answer}"))?;
            let id = &answer["id"];
            check(id.is_null() || id.is_string() || id.is_i64() || id.is_u64(), || format!("id: {answer}"))?;
            check(!answer.to_string().contains('\n'), || "the answer is one line".into())?;
        }
        Routed::Forward(text) => {
            let v: Value = serde_json::from_str(text).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
            check(strict.is_some(), || format!("forwarded a line the strict parse refuses: {}", shown()))?;
            check(v.is_object() && !text.contains('\n'), || format!("forwarded {text}"))?;
            let method = v.get("method");
            check(method.is_none() || method.is_some_and(Value::is_string), || format!("method: {text}"))?;
            let m = method.and_then(Value::as_str).unwrap_or_default();
            let folded: String = m.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_lowercase();
            check(folded != "toolscall", || format!("forwarded a tools/call unjudged: {text}"))?;
            check(!has_proto(&v) && depth(&v) <= MAX_DEPTH, || format!("forwarded {text}"))?;
            // Forwarded again, the text is forwarded again (floats aside, reparsed to the nearest value).
            check(matches!(mcp::classify(text.as_bytes()), Routed::Forward(_)), || format!("not stable: {text}"))?;
        }
        Routed::Judge(call) => {
            check(strict.is_some(), || format!("judged a line the strict parse refuses: {}", shown()))?;
            let v: Value = serde_json::from_str(&call.forward).map_err(|e| TestCaseError::fail(e.to_string()))?;
            check(v["method"] == "tools/call" && v["id"] == call.id, || format!("forward: {}", call.forward))?;
            check(v["params"]["name"] == json!(call.name), || format!("name: {}", call.forward))?;
            // The judged arguments are, byte for byte, the arguments the server receives.
            let judged = Value::Object(call.arguments.clone()).to_string();
            let absent = v["params"].get("arguments").is_none() && call.arguments.is_empty();
            check(absent || call.forward.contains(&format!("\"arguments\":{judged}")), || {
                format!("arguments {judged} not in {}", call.forward)
            })?;
            let again = mcp::classify(call.forward.as_bytes());
            let stable = matches!(&again, Routed::Judge(c) if c.id == call.id && c.name == call.name);
            check(stable, || format!("not stable: {}", call.forward))?;
        }
    }
    Ok(())
}

#[test]
fn the_mcp_router_answers_every_refused_line_on_arbitrary_bytes() {
    fuzz("mcp-router-bytes", 2000, prop::collection::vec(any::<u8>(), 0..256), |b| router_properties(&b));
}

#[test]
fn the_mcp_router_never_forwards_an_unjudged_call_on_mutated_lines() {
    fuzz("mcp-router-mutated", 4000, mutated(MCP_SEEDS), |b| router_properties(&b));
}

#[test]
fn the_mcp_router_keeps_its_promises_on_generated_messages() {
    fuzz("mcp-router-generated", 2000, rpc_like(), |b| router_properties(&b));
}

#[test]
fn the_mcp_router_with_the_real_judge_answers_or_forwards_each_line() {
    let db = warden_tests::TempDb::new();
    let runtime = warden_tests::runtime("{}", db.open());
    let options = McpOptions { server_name: "fs".into(), session_id: "fuzz".into() };
    fuzz("mcp-router-judged", 64, mutated(MCP_SEEDS), |line| {
        let (forward, answer) = mcp::route_line(&runtime, &options, &line);
        let blank = line.trim_ascii().is_empty();
        check(blank || forward.is_some() != answer.is_some(), || "exactly one of forward and answer".into())?;
        if let Some(answer) = answer {
            let ok = answer["error"]["message"].is_string() || answer["result"]["isError"] == true;
            check(ok && answer["jsonrpc"] == "2.0", || format!("answer: {answer}"))?;
        }
        if let Some(text) = forward {
            // `.env` reads by the server's read tools are never forwarded: the judge denies them (`path.protected`).
            let v: Value = serde_json::from_str(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let reader =
                ["read_text_file", "read_file", "write_file"].contains(&v["params"]["name"].as_str().unwrap_or(""));
            let reads_env = v["method"] == "tools/call"
                && reader
                && v["params"]["arguments"]["path"].as_str().is_some_and(|p| p.ends_with("/.env"));
            check(!reads_env, || format!("forwarded {text}"))?;
        }
        Ok(())
    });
}

/// Valid requests of every JSON mapping, to mutate.
const JSON_SEEDS: &[&str] = &[
    r#"{"toolName":"exec","arguments":{"command":"rm -rf ~"},"sessionId":"s1","nowMs":1700000000000}"#,
    r#"{"toolName":"Read","arguments":"{\"file_path\":\"/ws/.env\"}","cwd":"/ws","derivedPaths":["/ws/x"]}"#,
    r#"{"message":"hi","sessionId":"s1","trigger":"peer","queueMode":"steer","history":[{"role":"user","text":"a"}]}"#,
    r#"{"channel":"sms","recipient":"+15550100","body":"hello","identity":{"agentId":"a"}}"#,
    r#"{"channel":"email","recipient":"a@example.com","bodyBytes":[104,105],"direction":"inbound"}"#,
    r#"{"sessionId":"s1","chatId":"c1","label":"Alice","nowMs":1}"#,
    r#"{"key":"t1:o:abc","allow":true,"scope":"once","callId":"c"}"#,
    r#"{"tokens":12,"agentId":"a"}"#,
    r#"{"channel":"sms","recipient":"+1","delivery":"sent","thread":"t"}"#,
];

/// Parses `text` as every mapping; converts what parses. Errors are text a person can read.
fn mapping_properties(text: &str) -> Result<(), TestCaseError> {
    fn one<T: serde::de::DeserializeOwned>(text: &str, strict_ok: bool) -> Result<Option<T>, TestCaseError> {
        match wj::parse::<T>(text) {
            Ok(v) => {
                check(strict_ok, || format!("accepted what is not JSON: {text}"))?;
                Ok(Some(v))
            }
            Err(message) => {
                check(!message.trim().is_empty(), || format!("empty error for {text}"))?;
                let named = ["Json", "struct ", "enum ", "warden_"].iter().any(|n| message.contains(n));
                check(!named, || format!("type name: {message}"))?;
                Ok(None)
            }
        }
    }
    let strict_ok = serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
    if let Some(c) = one::<wj::ToolCallJson>(text, strict_ok)? {
        let _: warden_host::bindings::exports::warden::guard::policy::ToolCall = c.into();
    }
    if let Some(t) = one::<wj::TurnJson>(text, strict_ok)? {
        let _: warden_host::bindings::exports::warden::guard::policy::Turn = t.into();
    }
    if let Some(o) = one::<wj::OutboundJson>(text, strict_ok)?
        && let Err(message) = o.into_wit()
    {
        check(message.starts_with("body: "), || format!("outbound error: {message}"))?;
    }
    if let Some(s) = one::<wj::TurnStartJson>(text, strict_ok)? {
        let _: warden_host::bindings::exports::warden::guard::policy::TurnStart = s.into();
    }
    if let Some(e) = one::<wj::TurnEndJson>(text, strict_ok)? {
        let _: warden_host::bindings::exports::warden::guard::policy::TurnEnd = e.into();
    }
    if let Some(a) = one::<wj::ApprovalJson>(text, strict_ok)? {
        let _: warden_host::bindings::exports::warden::guard::policy::Approval = a.into();
    }
    if let Some(u) = one::<wj::UsageJson>(text, strict_ok)? {
        let _: warden_host::bindings::exports::warden::guard::policy::Usage = u.into();
    }
    if let Some(o) = one::<wj::OutcomeJson>(text, strict_ok)? {
        let _: warden_host::bindings::exports::warden::guard::policy::OutcomeReport = o.into();
    }
    Ok(())
}

#[test]
fn the_json_request_mapping_refuses_or_converts_arbitrary_text() {
    fuzz("json-mapping-text", 2000, "\\PC{0,200}", |t| mapping_properties(&t));
}

#[test]
fn the_json_request_mapping_refuses_or_converts_mutated_requests() {
    fuzz("json-mapping-mutated", 4000, mutated(JSON_SEEDS), |b| mapping_properties(&String::from_utf8_lossy(&b)));
}

#[test]
fn a_message_with_a_form_feed_around_it_is_refused_not_forwarded() {
    // A form feed is ASCII whitespace but not JSON whitespace: the strict parse refuses the line.
    for line in [
        &b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\x0c"[..],
        b"\x0b{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
    ] {
        assert!(matches!(mcp::classify(line), Routed::Refuse(_)), "{}", String::from_utf8_lossy(line));
    }
    assert!(matches!(mcp::classify(b" \t\r\n"), Routed::Skip));
}
