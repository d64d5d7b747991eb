//! `warden serve`: auth, limits, malformed input, concurrency, and answers
//! identical to the CLI's.

use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use warden_host::clock::Clock;
use warden_host::serve::{OPENAPI, ROUTES, ServeOptions};
use warden_tests::{T0, TempDb, pin, runtime};

const TOKEN: &str = "test-token-0123456789";

struct Service {
    addr: SocketAddr,
    _db: TempDb,
}

fn start(config: &str, max_body_bytes: usize) -> (Service, Arc<warden_host::Runtime>) {
    let db = TempDb::new();
    let rt = Arc::new(runtime(config, db.open()));
    let (tx, rx) = std::sync::mpsc::channel();
    let serving = rt.clone();
    std::thread::spawn(move || {
        // Requests here carry the fixed instant `T0`: the service replays them.
        let options = ServeOptions { token: TOKEN.into(), max_body_bytes, concurrency: 4, clock: Clock::REPLAY };
        let tokio = tokio::runtime::Runtime::new().expect("tokio");
        let listen: SocketAddr = "127.0.0.1:0".parse().expect("addr");
        let _ = tokio.block_on(warden_host::serve::serve(serving, options, listen, move |addr| {
            let _ = tx.send(addr);
        }));
    });
    let addr = rx.recv().expect("service started");
    (Service { addr, _db: db }, rt)
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).build().into()
}

fn post(s: &Service, path: &str, token: Option<&str>, body: &str) -> (u16, Value) {
    let mut req = agent().post(format!("http://{}{path}", s.addr)).header("content-type", "application/json");
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let mut resp = req.send(body).expect("request");
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

fn get(s: &Service, path: &str, token: Option<&str>) -> (u16, Value) {
    let mut req = agent().get(format!("http://{}{path}", s.addr));
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let mut resp = req.call().expect("request");
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

#[test]
fn health_is_open_and_everything_else_needs_the_token() {
    let (s, _) = start("{}", 1 << 20);
    let (status, body) = get(&s, "/v1/health", None);
    assert_eq!(status, 200);
    assert_eq!(body["status"], "ok");
    let call = r#"{"toolName": "x", "arguments": {}}"#;
    assert_eq!(post(&s, "/v1/check/tool", None, call).0, 401);
    assert_eq!(post(&s, "/v1/check/tool", Some("wrong-token-0123456789"), call).0, 401);
    assert_eq!(get(&s, "/v1/diagnostics", None).0, 401);
    assert_eq!(post(&s, "/v1/check/tool", Some(TOKEN), call).0, 200);
}

#[test]
fn oversized_requests_are_refused_with_413() {
    let (s, _) = start("{}", 4096);
    let big = json!({"toolName": "x", "arguments": {"text": "a".repeat(5000)}}).to_string();
    let (status, body) = post(&s, "/v1/check/tool", Some(TOKEN), &big);
    assert_eq!(status, 413, "{body}");
    assert!(body["error"].as_str().unwrap_or_default().contains("larger"), "{body}");
}

#[test]
fn malformed_json_is_refused_with_400_naming_the_field() {
    let (s, _) = start("{}", 1 << 20);
    let cases = [
        ("/v1/check/tool", r#"{"toolName": 5, "arguments": {}}"#, "toolName: invalid type"),
        ("/v1/check/tool", r#"{"toolName": "x""#, "EOF while parsing"),
        ("/v1/check/turn", r#"{"message": "hi", "queueMode": "sideways"}"#, "queueMode: unknown variant"),
        ("/v1/check/outbound", r#"{"channel": "sms", "recipient": "+1"}"#, "body: missing field"),
        ("/v1/record", r#"{"approval": {"key": "k"}}"#, "approval: missing field `allow`"),
        ("/v1/record", r#"{"nonsense": {}}"#, "unknown variant `nonsense`"),
    ];
    for (path, body, expected) in cases {
        let (status, answer) = post(&s, path, Some(TOKEN), body);
        assert_eq!(status, 400, "{path} {body}: {answer}");
        let message = answer["error"].as_str().unwrap_or_default();
        assert!(message.contains(expected), "{path} {body}: {message}");
    }
}

#[test]
fn concurrent_requests_get_the_same_answers_as_the_library() {
    let (s, rt) = start("{}", 1 << 20);
    rt.start_turn(&pin("s1", "r1", "19:alice", "Alice", T0)).expect("pin");
    let calls: Vec<(Value, &str, &str)> = vec![
        (
            json!({"toolName": "teams_send_chat_message", "arguments": {"chat": "19:bob"}, "sessionId": "s1", "nowMs": T0}),
            "deny",
            "pin.other-chat",
        ),
        (
            json!({"toolName": "teams_send_chat_message", "arguments": {"chat": "19:alice"}, "sessionId": "s1", "nowMs": T0}),
            "allow",
            "pin.pinned-chat",
        ),
        (json!({"toolName": "calendar_list", "arguments": {}, "sessionId": "s1", "nowMs": T0}), "allow", "tools.allow"),
    ];
    let threads: Vec<_> = (0..48)
        .map(|i| {
            let (call, decision, rule) = calls[i % calls.len()].clone();
            let addr = s.addr;
            std::thread::spawn(move || {
                let mut resp = agent()
                    .post(format!("http://{addr}/v1/check/tool"))
                    .header("authorization", format!("Bearer {TOKEN}"))
                    .send(call.to_string())
                    .expect("request");
                assert_eq!(resp.status().as_u16(), 200);
                let v: Value = serde_json::from_str(&resp.body_mut().read_to_string().expect("body")).expect("json");
                assert_eq!((v["decision"].as_str(), v["rule"].as_str()), (Some(decision), Some(rule)), "{call}");
                v
            })
        })
        .collect();
    let answers: Vec<Value> = threads.into_iter().map(|t| t.join().expect("no request failed")).collect();
    assert_eq!(answers.len(), 48);
    // The library gives the identical JSON for the same request.
    for (call, _, _) in &calls {
        let json_call: warden_host::json::ToolCallJson = serde_json::from_value(call.clone()).expect("call");
        let direct = warden_host::json::VerdictJson::from(&rt.check_tool_call(&json_call.into()));
        let (_, served) = post(&s, "/v1/check/tool", Some(TOKEN), &call.to_string());
        assert_eq!(serde_json::to_value(direct).expect("json"), served);
    }
}

#[test]
fn record_starts_and_settles_turns() {
    let (s, _) = start("{}", 1 << 20);
    let (status, body) = post(
        &s,
        "/v1/record",
        Some(TOKEN),
        &json!({"turnStart": {"sessionId": "s9", "chatId": "c1", "nowMs": T0}}).to_string(),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["pin"]["chatId"], "c1");
    let call =
        json!({"toolName": "teams_send_chat_message", "arguments": {"chat": "c2"}, "sessionId": "s9", "nowMs": T0 + 1});
    assert_eq!(post(&s, "/v1/check/tool", Some(TOKEN), &call.to_string()).1["rule"], "pin.other-chat");
    let (status, _) =
        post(&s, "/v1/record", Some(TOKEN), &json!({"turnEnd": {"sessionId": "s9", "nowMs": T0 + 2}}).to_string());
    assert_eq!(status, 200);
    assert_eq!(post(&s, "/v1/check/tool", Some(TOKEN), &call.to_string()).1["rule"], "tools.allow");
    let (status, body) = post(
        &s,
        "/v1/record",
        Some(TOKEN),
        &json!({"approval": {"key": "bogus", "allow": true, "scope": "once"}}).to_string(),
    );
    assert_eq!(status, 400, "{body}");
}

#[test]
fn openapi_document_describes_exactly_the_served_routes() {
    let doc: Value = serde_json::from_str(OPENAPI).expect("openapi is JSON");
    assert_eq!(doc["openapi"], "3.1.0");
    let mut documented: Vec<(String, String)> = doc["paths"]
        .as_object()
        .expect("paths")
        .iter()
        .flat_map(|(path, item)| {
            item.as_object().into_iter().flat_map(move |m| m.keys().map(move |method| (method.clone(), path.clone())))
        })
        .collect();
    documented.sort();
    let mut served: Vec<(String, String)> = ROUTES.iter().map(|(m, p)| (m.to_string(), p.to_string())).collect();
    served.sort();
    assert_eq!(documented, served);
    let (s, _) = start("{}", 1 << 20);
    for (method, path) in ROUTES {
        let status = if *method == "get" { get(&s, path, Some(TOKEN)).0 } else { post(&s, path, Some(TOKEN), "{}").0 };
        assert_ne!(status, 404, "{method} {path} is served");
    }
}
