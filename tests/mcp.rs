//! `warden mcp`: the reference MCP filesystem server from npm behind the
//! proxy, driven by a real MCP client (rmcp).

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::json;
use std::sync::Arc;
use warden_host::mcp::{McpOptions, run};
use warden_tests::{TempDb, runtime};

async fn connect(
    config: &str,
    db: &TempDb,
    root: &std::path::Path,
) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let rt = Arc::new(runtime(config, db.open()));
    let (client_side, proxy_side) = tokio::io::duplex(1 << 20);
    let (proxy_in, proxy_out) = tokio::io::split(proxy_side);
    let command = vec![warden_tests::mcp_filesystem_server().into_os_string(), root.as_os_str().to_owned()];
    let options = McpOptions { server_name: "fs".into(), session_id: "mcp-test".into() };
    tokio::spawn(run(rt, options, command, proxy_in, proxy_out));
    ().serve(client_side).await.expect("MCP handshake through the proxy")
}

fn text_of(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(&result.content).map(|v| v.to_string()).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_calls_pass_through_and_denied_calls_return_the_reason() {
    let db = TempDb::new();
    let root = tempfile::tempdir().expect("root");
    std::fs::write(root.path().join("notes.txt"), "hello from the filesystem").expect("write");
    let root_path = root.path().canonicalize().expect("canonical root");
    // Writing is gated: the pin section names the server's write tool.
    let config = r#"{"pin": {"tools": [{"name": "mcp__fs__write_file", "kind": "new-chat"}]}}"#;
    let rt = Arc::new(runtime(config, db.open()));
    rt.start_turn(&warden_tests::pin("mcp-test", "r1", "c1", "the operator", warden_host::json::now_ms()))
        .expect("pin");
    let client = connect(config, &db, &root_path).await;

    let tools = client.list_all_tools().await.expect("tools/list passes through");
    assert!(tools.iter().any(|t| t.name == "read_text_file" || t.name == "read_file"), "{tools:?}");

    let read_tool = if tools.iter().any(|t| t.name == "read_text_file") { "read_text_file" } else { "read_file" };
    let path = root_path.join("notes.txt").display().to_string();
    let read = client
        .call_tool(
            CallToolRequestParams::new(read_tool)
                .with_arguments(json!({"path": path}).as_object().cloned().unwrap_or_default()),
        )
        .await
        .expect("allowed call");
    assert_ne!(read.is_error, Some(true), "{}", text_of(&read));
    assert!(text_of(&read).contains("hello from the filesystem"), "{}", text_of(&read));

    let target = root_path.join("new.txt");
    let write = client
        .call_tool(CallToolRequestParams::new("write_file").with_arguments(
            json!({"path": target.display().to_string(), "content": "x"}).as_object().cloned().unwrap_or_default(),
        ))
        .await
        .expect("denied call still answers");
    assert_eq!(write.is_error, Some(true));
    let text = text_of(&write);
    assert!(text.contains("Warden denied this tool call (pin.new-chat)"), "{text}");
    assert!(!target.exists(), "the server never saw the denied call");
    client.cancel().await.expect("close");
}
