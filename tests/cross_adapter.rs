//! One configuration, one list of tool calls, every Rust-side adapter: the
//! library, the `warden` command, the HTTP service, the Claude Code hook and
//! the MCP proxy must all give exactly the expected decision and rule. The
//! Hermes and OpenClaw end-to-end scripts run the same fixture through their
//! plugins.

use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use warden_host::json::{ToolCallJson, decision_name};
use warden_tests::{TempDb, runtime};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/cross-adapter").join(name)
}

struct Case {
    tool: String,
    args: Value,
    decision: String,
    rule: String,
}

fn cases() -> (String, Vec<Case>) {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("cases.json")).expect("cases")).expect("json");
    let cwd = doc["cwd"].as_str().expect("cwd").to_string();
    let cases = doc["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| Case {
            tool: c["tool"].as_str().expect("tool").into(),
            args: c["args"].clone(),
            decision: c["expect"]["decision"].as_str().expect("decision").into(),
            rule: c["expect"]["rule"].as_str().expect("rule").into(),
        })
        .collect();
    (cwd, cases)
}

fn config() -> String {
    std::fs::read_to_string(fixture("config.json")).expect("config")
}

fn request(case: &Case, cwd: &str) -> Value {
    json!({"toolName": case.tool, "arguments": case.args, "cwd": cwd})
}

fn cli(args: &[&str], stdin: &str) -> (i32, String) {
    let out = warden_tests::cli(args, stdin);
    (out.code, out.stdout)
}

/// The library, the command and the hook agree with the fixture on every case.
#[test]
fn library_command_and_hook_give_the_same_decisions() {
    let (cwd, cases) = cases();
    let db = TempDb::new();
    let rt = runtime(&config(), db.open());
    let config_path = fixture("config.json").display().to_string();
    let db_path = db.path().display().to_string();
    for case in &cases {
        let expected = (case.decision.as_str(), case.rule.as_str());
        let call: ToolCallJson = serde_json::from_value(request(case, &cwd)).expect("call");
        let v = rt.check_tool_call(&call.into());
        assert_eq!((decision_name(v.decision), v.rule.as_str()), expected, "library: {} {}", case.tool, case.args);

        let (code, out) =
            cli(&["check", "tool", "--config", &config_path, "--db", &db_path], &request(case, &cwd).to_string());
        assert_eq!(code, 0);
        let v: Value = serde_json::from_str(&out).expect("json");
        assert_eq!(
            (v["decision"].as_str(), v["rule"].as_str()),
            (Some(expected.0), Some(expected.1)),
            "command: {}",
            case.tool
        );

        let event = json!({"hook_event_name": "PreToolUse", "session_id": "cross", "cwd": cwd,
                           "tool_name": case.tool, "tool_input": case.args, "tool_use_id": "toolu_x"});
        let (code, out) = cli(
            &["hook", "claude-code", "--config", &config_path, "--db", &db_path, "--approve-allowed"],
            &event.to_string(),
        );
        assert_eq!(code, 0);
        let v: Value = serde_json::from_str(&out).expect("hook json");
        let answer = &v["hookSpecificOutput"];
        let reason = answer["permissionDecisionReason"].as_str().unwrap_or_default();
        assert_eq!(answer["permissionDecision"].as_str(), Some(expected.0), "hook: {} {reason}", case.tool);
        assert!(reason.starts_with(&format!("Warden ({}): ", expected.1)), "hook: {} {reason}", case.tool);
    }
    println!("cross-adapter: {} cases agree in the library, the command and the hook", cases.len());
}

/// The HTTP service agrees with the fixture on every case.
#[test]
fn the_http_service_gives_the_same_decisions() {
    let (cwd, cases) = cases();
    let db = TempDb::new();
    let rt = Arc::new(runtime(&config(), db.open()));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let options = warden_host::serve::ServeOptions {
            max_body_bytes: 1 << 20,
            concurrency: 2,
            clock: warden_host::clock::Clock::LIVE,
            ..warden_host::serve::ServeOptions::new("cross-adapter-token-0123")
        };
        let tokio = tokio::runtime::Runtime::new().expect("tokio");
        let _ =
            tokio.block_on(warden_host::serve::serve(rt, options, "127.0.0.1:0".parse().expect("addr"), move |a| {
                let _ = tx.send(a);
            }));
    });
    let addr = rx.recv().expect("service started");
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    for case in &cases {
        let mut resp = agent
            .post(format!("http://{addr}/v1/check/tool"))
            .header("authorization", "Bearer cross-adapter-token-0123")
            .send(request(case, &cwd).to_string())
            .expect("request");
        assert_eq!(resp.status().as_u16(), 200);
        let v: Value = serde_json::from_str(&resp.body_mut().read_to_string().expect("body")).expect("json");
        assert_eq!(
            (v["decision"].as_str(), v["rule"].as_str()),
            (Some(case.decision.as_str()), Some(case.rule.as_str())),
            "service: {} {}",
            case.tool,
            case.args
        );
    }
}

/// The MCP proxy, in front of the reference filesystem server, agrees on the
/// fixture's MCP tools: allowed calls reach the server, the others are
/// answered by the proxy with the rule.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_proxy_gives_the_same_decisions() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    let (_, cases) = cases();
    let db = TempDb::new();
    let rt = Arc::new(runtime(&config(), db.open()));
    let root = tempfile::tempdir().expect("root");
    let server = warden_tests::mcp_filesystem_server();
    let (client_side, proxy_side) = tokio::io::duplex(1 << 20);
    let (proxy_in, proxy_out) = tokio::io::split(proxy_side);
    let options = warden_host::mcp::McpOptions { server_name: "fs".into(), session_id: "cross".into() };
    let command = vec![server.into_os_string(), root.path().as_os_str().to_owned()];
    tokio::spawn(warden_host::mcp::run(rt, options, command, proxy_in, proxy_out));
    let client = ().serve(client_side).await.expect("handshake");
    // Calls are judged only for tools a reviewed `tools/list` answer relayed.
    client.list_all_tools().await.expect("tools/list");
    let mut checked = 0;
    for case in cases.iter().filter(|c| c.tool.starts_with("mcp__fs__")) {
        let name = case.tool.trim_start_matches("mcp__fs__").to_string();
        let result = client
            .call_tool(
                CallToolRequestParams::new(name).with_arguments(case.args.as_object().cloned().unwrap_or_default()),
            )
            .await
            .expect("answered");
        let text = serde_json::to_value(&result.content).map(|v| v.to_string()).unwrap_or_default();
        let from_warden = text.contains("Warden ");
        match case.decision.as_str() {
            "allow" => assert!(!from_warden, "{}: the server answered: {text}", case.tool),
            _ => {
                assert_eq!(result.is_error, Some(true));
                assert!(text.contains(&format!("({})", case.rule)), "{}: {text}", case.tool);
            }
        }
        checked += 1;
    }
    assert!(checked >= 2, "the fixture has MCP cases");
    client.cancel().await.expect("close");
}
