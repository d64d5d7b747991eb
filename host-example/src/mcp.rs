//! `warden mcp -- <server command...>`: an MCP proxy on stdio that runs every
//! `tools/call` through the tool-call judge before the real server sees it.
//!
//! The proxy works at the JSON-RPC message level: it spawns the real server,
//! and every message in either direction passes through unchanged (same ids,
//! same fields, protocol versions and methods it does not know included), so
//! initialization, listing, resources, prompts, progress, cancellation and
//! server-to-client requests all keep working. Only a `tools/call` request is
//! interpreted (with `rmcp`'s model types): the judge sees it as tool
//! `mcp__<server>__<tool>`. An allowed call is forwarded; a denied one is
//! answered by the proxy itself with a tool result that has `isError: true`
//! and the reason, so the model can read why. An `ask` cannot be answered on
//! this path (MCP has no approval step the proxy could rely on), so it is
//! answered the same way, with the approval key a person can record with
//! `warden approve`. Calls are judged at the host's clock: no time is read
//! from MCP messages, so `--replay` is refused.
//!
//! Failure mode: fail-closed. A `tools/call` that cannot be read is refused.

use crate::bindings::warden::guard::types::Decision;
use crate::json::{IdentityJson, ToolCallJson, decision_name, now_ms};
use crate::runtime::Runtime;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use serde_json::{Value, json};
use std::ffi::OsString;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::Mutex;

/// Longest message line accepted in either direction, in bytes (16 MiB).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How the proxy names and scopes its calls.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// The server's name in tool names: `mcp__<name>__<tool>`.
    pub server_name: String,
    /// The session remembered approvals of this proxy belong to.
    pub session_id: String,
}

/// Programs that run a package named by a later argument.
const LAUNCHERS: &[&str] = &["npx", "bunx", "uvx", "pnpx", "node", "deno", "python", "python3", "uv", "pnpm", "docker"];

/// A server name as tool names need it (lowercase letters, digits, `_` and
/// `-`), from the package a launcher runs or else the program itself.
pub fn server_name_from(command: &[OsString]) -> String {
    let args: Vec<String> = command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let basename = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
    let program = args.first().map(|p| basename(p)).unwrap_or_default();
    let package = if LAUNCHERS.contains(&program.as_str()) {
        args.iter()
            .skip(1)
            .find(|a| !a.starts_with('-') && !matches!(a.as_str(), "run" | "dlx" | "exec" | "tool"))
            .cloned()
            .unwrap_or(program)
    } else {
        program
    };
    // `@scope/name@1.2.3` → `name`.
    let name = basename(&package);
    let name = name.split('@').find(|p| !p.is_empty()).unwrap_or_default();
    let name = name.strip_suffix(".py").or_else(|| name.strip_suffix(".js")).unwrap_or(name);
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c.to_ascii_lowercase() } else { '_' })
        .collect();
    if cleaned.is_empty() { "server".into() } else { cleaned }
}

/// What to do with one message from the client.
enum Route {
    Forward,
    Answer(Value),
}

fn denial(id: &Value, text: String) -> Value {
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    // Older protocol versions have no result type; absent means complete for every version.
    result.result_type = None;
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// Decides what happens to a `tools/call` request; anything else is forwarded.
fn route(runtime: &Runtime, options: &McpOptions, message: &Value) -> Route {
    if message.get("method").and_then(Value::as_str) != Some("tools/call") {
        return Route::Forward;
    }
    let Some(id) = message.get("id") else {
        return Route::Forward;
    };
    let params: Result<CallToolRequestParams, _> =
        serde_json::from_value(message.get("params").cloned().unwrap_or(Value::Null));
    let params = match params {
        Ok(p) => p,
        Err(e) => {
            return Route::Answer(denial(
                id,
                format!("Warden refused this tool call: its parameters could not be read ({e})."),
            ));
        }
    };
    let call = ToolCallJson {
        tool_name: format!("mcp__{}__{}", options.server_name, params.name),
        arguments: Value::Object(params.arguments.clone().unwrap_or_default()),
        call_id: Some(id.to_string()),
        run_id: None,
        session_id: Some(options.session_id.clone()),
        now_ms: Some(now_ms()),
        identity: IdentityJson { agent_id: Some(format!("mcp:{}", options.server_name)), ..Default::default() },
        cwd: std::env::current_dir().ok().map(|d| d.display().to_string()),
        derived_paths: Vec::new(),
    };
    let verdict = runtime.check_tool_call(&call.into());
    match verdict.decision {
        Decision::Allow => Route::Forward,
        Decision::Deny => {
            Route::Answer(denial(id, format!("Warden denied this tool call ({}): {}", verdict.rule, verdict.reason)))
        }
        Decision::Ask => {
            let key = verdict.approval_key.clone().unwrap_or_default();
            Route::Answer(denial(
                id,
                format!(
                    "Warden needs a person to approve this tool call ({}): {} A person can approve it with \
                     `warden approve --key {key}`, then retry.",
                    verdict.rule, verdict.reason
                ),
            ))
        }
    }
}

/// Decides for a single message or each message of a batch; returns what to
/// forward (if anything) and the answers the proxy gives itself.
fn route_line(runtime: &Runtime, options: &McpOptions, line: &str) -> (Option<String>, Vec<Value>) {
    let Ok(value) = serde_json::from_str::<Value>(line) else {
        // Not ours to judge: the server answers malformed input itself.
        return (Some(line.to_string()), Vec::new());
    };
    match value {
        Value::Array(batch) => {
            let mut forward = Vec::new();
            let mut answers = Vec::new();
            for message in batch {
                match route(runtime, options, &message) {
                    Route::Forward => forward.push(message),
                    Route::Answer(a) => answers.push(a),
                }
            }
            let forward = (!forward.is_empty()).then(|| Value::Array(forward).to_string());
            (forward, answers)
        }
        message => match route(runtime, options, &message) {
            Route::Forward => (Some(line.to_string()), Vec::new()),
            Route::Answer(a) => (None, vec![a]),
        },
    }
}

async fn write_line<W: AsyncWrite + Unpin>(out: &Mutex<W>, line: &str) -> std::io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(line.as_bytes()).await?;
    out.write_all(b"\n").await?;
    out.flush().await
}

/// Runs the proxy between the client (`client_in`, `client_out`) and the
/// server started from `command`, until the client closes its side; returns
/// the server's exit code.
pub async fn run<R, W>(
    runtime: Arc<Runtime>,
    options: McpOptions,
    command: Vec<OsString>,
    client_in: R,
    client_out: W,
) -> std::io::Result<i32>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let Some((program, args)) = command.split_first() else {
        return Err(std::io::Error::other("no server command given after `--`"));
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| std::io::Error::other(format!("cannot start `{}`: {e}", program.to_string_lossy())))?;
    let (Some(mut server_in), Some(server_out)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(std::io::Error::other("the server's stdio could not be connected"));
    };
    let out = Arc::new(Mutex::new(client_out));

    let to_client = {
        let out = out.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(server_out).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if line.len() > MAX_LINE_BYTES || write_line(&out, &line).await.is_err() {
                    break;
                }
            }
        })
    };

    let mut lines = BufReader::new(client_in).lines();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        if line.len() > MAX_LINE_BYTES {
            return Err(std::io::Error::other(format!("a client message exceeds {MAX_LINE_BYTES} bytes")));
        }
        let (rt, opts, text) = (runtime.clone(), options.clone(), line.clone());
        let (forward, answers) = tokio::task::spawn_blocking(move || route_line(&rt, &opts, &text))
            .await
            .map_err(|e| std::io::Error::other(format!("the check failed: {e}")))?;
        for answer in answers {
            write_line(&out, &answer.to_string()).await?;
        }
        if let Some(forward) = forward {
            server_in.write_all(forward.as_bytes()).await?;
            server_in.write_all(b"\n").await?;
            server_in.flush().await?;
        }
    }
    // The client is gone: close the server's input and let it finish.
    drop(server_in);
    let status = child.wait().await?;
    let _ = to_client.await;
    Ok(status.code().unwrap_or(1))
}

/// The decision's name, for logs.
pub fn describe(decision: Decision) -> &'static str {
    decision_name(decision)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_come_from_the_package_or_program() {
        let names = |args: &[&str]| server_name_from(&args.iter().map(OsString::from).collect::<Vec<_>>());
        assert_eq!(names(&["npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp/dir"]), "server-filesystem");
        assert_eq!(
            names(&["npx", "-y", "@modelcontextprotocol/server-filesystem@2025.8.21", "."]),
            "server-filesystem"
        );
        assert_eq!(names(&["/usr/bin/My Server", "--port", "1"]), "my_server");
        assert_eq!(names(&["uvx", "mcp-server-git"]), "mcp-server-git");
        assert_eq!(names(&["python3", "servers/notes.py"]), "notes");
    }
}
