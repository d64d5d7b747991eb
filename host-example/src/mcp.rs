//! `warden mcp -- <server command...>`: an MCP proxy on stdio that runs every
//! `tools/call` through the tool-call judge before the real server sees it.
//!
//! The proxy works at the JSON-RPC message level: it spawns the real server
//! and passes every message on (same ids, same fields, protocol versions and
//! methods it does not know included), so initialization, listing, resources,
//! prompts, progress, cancellation and server-to-client requests all keep
//! working. Only a `tools/call` request is interpreted: the judge sees it as
//! tool `mcp__<server>__<tool>`. An allowed call is forwarded; a denied one is
//! answered by the proxy itself with a tool result that has `isError: true`,
//! the decision and the rule, so the model can read why. An `ask` cannot be
//! answered on this path (MCP has no approval step the proxy could rely on),
//! so it is answered the same way; the approval key goes to the proxy's
//! stderr, for a person, never to the model. Calls are judged at the host's
//! clock: no time is read from MCP messages, so `--replay` is refused.
//!
//! Every line from the client is read strictly before anything reaches the
//! server ([`classify`]): valid UTF-8, at most [`MAX_LINE_BYTES`], nesting at
//! most [`MAX_DEPTH`], valid JSON (no lone surrogates, no numbers out of
//! range), one message (no batch), an `id` that is a string or an integer, a
//! string `method`, no `__proto__` key, and a `tools/call` with exactly the
//! fields the protocol defines. What passes is forwarded as the proxy's own
//! serialization of what it read, so the server sees exactly what was judged
//! (one value per key, no byte-order mark, no odd spacing). A line refused is
//! answered with a JSON-RPC error that names why, with the message's `id`
//! when it can be recovered and `null` otherwise.
//!
//! Every answer the server gives to a forwarded `tools/call` (its `result`, or
//! its `error`, as JSON text) is reported to `observe-tool-result` under the
//! proxy's session before the client sees it, so the destinations in it are
//! known to come from content the agent read. An observation that fails or
//! takes longer than [`OBSERVE_TIMEOUT`] is logged on stderr and the answer is
//! relayed unchanged; its destinations then stay unknown to later checks,
//! which ask by default. At most [`MAX_PENDING_CALLS`] forwarded calls are
//! remembered while they wait for their answer.
//!
//! Failure mode: fail-closed. A `tools/call` that cannot be read is refused.

use crate::bindings::warden::guard::types::{ApprovalScope, Decision};
use crate::json::{IdentityJson, ToolCallJson, now_ms};
use crate::mcp_tools::{CallGate, ToolState};
use crate::runtime::Runtime;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};
use std::collections::VecDeque;
use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::Mutex;

/// Longest message line accepted in either direction, in bytes (16 MiB).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// Deepest nesting of arrays and objects accepted in a client message (64).
pub const MAX_DEPTH: usize = 64;
/// How long the server may take to exit once its input is closed before the
/// proxy stops it (2 s).
pub const SERVER_EXIT_GRACE: Duration = Duration::from_secs(2);

/// Forwarded `tools/call` requests remembered while they wait for the
/// server's answer, so the answer can be observed (1024). Past it the oldest
/// is forgotten, with a warning, and its answer is relayed unobserved.
pub const MAX_PENDING_CALLS: usize = 1024;
/// Longest wait for one answer's observation before the answer is relayed
/// anyway (5 s).
pub const OBSERVE_TIMEOUT: Duration = Duration::from_secs(5);

/// JSON-RPC: the message could not be parsed.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: the message is not an acceptable request.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: the parameters of the request are not acceptable.
pub const INVALID_PARAMS: i64 = -32602;

/// Top-level fields a `tools/call` request may carry.
const CALL_FIELDS: &[&str] = &["jsonrpc", "id", "method", "params"];
/// Fields `tools/call` parameters may carry (MCP 2025-11-25 and its drafts).
const CALL_PARAMS: &[&str] = &["name", "arguments", "_meta", "task", "inputResponses", "requestState"];

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

/// What the proxy does with one line from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Routed {
    /// A blank line: nothing to forward, nothing to answer.
    Skip,
    /// Forward this text to the server (the proxy's serialization of the message).
    Forward(String),
    /// A `tools/call` request to judge first; `forward` is what the server gets if it is allowed.
    Judge(PendingCall),
    /// Refused: answer the client with this JSON-RPC error; the server sees nothing.
    Refuse(Value),
}

/// A `tools/call` request read strictly.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingCall {
    /// The request's `id` (a string or an integer).
    pub id: Value,
    /// The tool's name as the server knows it.
    pub name: String,
    /// The tool's arguments (`{}` when absent).
    pub arguments: Map<String, Value>,
    /// The request as forwarded: exactly the value that was judged.
    pub forward: String,
}

/// A JSON-RPC error answer.
pub fn rpc_error(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message.into() } })
}

fn refuse(id: Value, code: i64, why: impl std::fmt::Display) -> Routed {
    Routed::Refuse(rpc_error(id, code, format!("warden refused this message: {why}")))
}

/// The deepest nesting of arrays and objects in `text`, scanning no further
/// than one level past `limit`.
fn depth_past(text: &[u8], limit: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in text {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The `id` of a message that could not be read, when exactly one top-level
/// `id` holds a string or an integer; `null` otherwise.
pub fn recover_id(text: &[u8]) -> Value {
    let mut found: Option<Value> = None;
    let mut count = 0;
    let (mut depth, mut in_string, mut escaped, mut string_start) = (0usize, false, false, 0usize);
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => {
                    in_string = false;
                    let key = &text[string_start..i];
                    if depth == 1 && key == b"id" {
                        let rest = &text[i + 1..];
                        let colon = rest.iter().position(|c| !c.is_ascii_whitespace());
                        if let Some(c) = colon.filter(|&c| rest[c] == b':') {
                            count += 1;
                            let value =
                                serde_json::Deserializer::from_slice(&rest[c + 1..]).into_iter::<Value>().next();
                            found = match value {
                                Some(Ok(v)) if v.is_string() || v.is_i64() || v.is_u64() => Some(v),
                                _ => None,
                            };
                        }
                    }
                }
                _ => {}
            }
        } else {
            match b {
                b'"' => {
                    in_string = true;
                    string_start = i + 1;
                }
                b'[' | b'{' => depth += 1,
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        i += 1;
    }
    match (count, found) {
        (1, Some(v)) => v,
        _ => Value::Null,
    }
}

/// The path of the first `__proto__` key in `value`, if any.
fn proto_key(value: &Value, path: &str) -> Option<String> {
    match value {
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            let here = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
            if k == "__proto__" { Some(here) } else { proto_key(v, &here) }
        }),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| proto_key(v, &format!("{path}[{i}]"))),
        _ => None,
    }
}

/// A value as it appears in an error message: short, in backticks.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    let short: String = text.chars().take(60).collect();
    if short.len() < text.len() { format!("`{short}…`") } else { format!("`{short}`") }
}

/// True for spellings a lenient server might take for `tools/call`
/// (`Tools/Call`, `tools.call`, `tools/call\u0000`), other than the exact one.
fn looks_like_tools_call(method: &str) -> bool {
    let folded: String = method.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect();
    folded == "toolscall" && method != "tools/call"
}

/// Reads one client line strictly and decides what happens to it, without
/// judging: every line is skipped (blank), forwarded, held for the judge, or
/// refused with an answer.
pub fn classify(line: &[u8]) -> Routed {
    // JSON's own whitespace only: a form feed or vertical tab around a
    // message is not JSON, and what is forwarded must parse strictly.
    let json_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let start = line.iter().position(|b| !json_space(b)).unwrap_or(line.len());
    let end = line.iter().rposition(|b| !json_space(b)).map_or(start, |i| i + 1);
    let trimmed = line.get(start..end).unwrap_or_default();
    if trimmed.is_empty() {
        return Routed::Skip;
    }
    if line.len() > MAX_LINE_BYTES {
        return refuse(recover_id(trimmed), PARSE_ERROR, format!("it is longer than {MAX_LINE_BYTES} bytes"));
    }
    let text = match std::str::from_utf8(trimmed) {
        Ok(t) => t,
        Err(e) => {
            let at = e.valid_up_to();
            return refuse(recover_id(trimmed), PARSE_ERROR, format!("it is not valid UTF-8 (byte {at})"));
        }
    };
    if depth_past(trimmed, MAX_DEPTH) {
        return refuse(
            recover_id(trimmed),
            PARSE_ERROR,
            format!("it nests arrays and objects deeper than {MAX_DEPTH} levels"),
        );
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let text = e.to_string();
            let why = if text.contains("surrogate") || text.contains("hex escape") {
                format!("it is not valid JSON: a `\\u` escape is not a whole character (a lone surrogate?) ({text})")
            } else {
                format!("it is not valid JSON ({text})")
            };
            return refuse(recover_id(trimmed), PARSE_ERROR, why);
        }
    };
    let Value::Object(message) = &value else {
        if value.is_array() {
            return refuse(
                Value::Null,
                INVALID_REQUEST,
                "a batch (a JSON array of messages) is not accepted; MCP sends one message per line",
            );
        }
        return refuse(Value::Null, INVALID_REQUEST, format!("a message must be a JSON object, not {}", shown(&value)));
    };
    let id = match message.get("id") {
        None => None,
        Some(id @ Value::String(_)) => Some(id.clone()),
        Some(id @ Value::Number(n)) if n.is_i64() || n.is_u64() => Some(id.clone()),
        Some(other) => {
            return refuse(
                Value::Null,
                INVALID_REQUEST,
                format!("`id` must be a string or an integer, not {}", shown(other)),
            );
        }
    };
    let answer_id = id.clone().unwrap_or(Value::Null);
    if let Some(path) = proto_key(&value, "") {
        return refuse(
            answer_id,
            INVALID_REQUEST,
            format!("it has a `__proto__` key at `{path}`, which JavaScript servers may read as a prototype"),
        );
    }
    let method = match message.get("method") {
        None => None,
        Some(Value::String(m)) => Some(m.as_str()),
        Some(other) => {
            return refuse(answer_id, INVALID_REQUEST, format!("`method` must be a string, not {}", shown(other)));
        }
    };
    let forward = value.to_string();
    let Some(method) = method else {
        return Routed::Forward(forward);
    };
    if looks_like_tools_call(method) {
        return refuse(
            answer_id,
            INVALID_REQUEST,
            format!(
                "the method `{}` is a spelling of `tools/call`; only `tools/call` itself is accepted",
                method.escape_debug()
            ),
        );
    }
    if method != "tools/call" {
        return Routed::Forward(forward);
    }
    let Some(id) = id else {
        return refuse(Value::Null, INVALID_REQUEST, "a `tools/call` without an `id` (a notification) is not accepted");
    };
    if let Some(extra) = message.keys().find(|k| !CALL_FIELDS.contains(&k.as_str())) {
        return refuse(
            id,
            INVALID_REQUEST,
            format!("a `tools/call` has no field `{extra}` (allowed: {})", CALL_FIELDS.join(", ")),
        );
    }
    if message.get("jsonrpc") != Some(&json!("2.0")) {
        return refuse(id, INVALID_REQUEST, "`jsonrpc` must be `\"2.0\"`");
    }
    let params = match message.get("params") {
        Some(Value::Object(p)) => p,
        Some(other) => return refuse(id, INVALID_PARAMS, format!("`params` must be an object, not {}", shown(other))),
        None => return refuse(id, INVALID_PARAMS, "`params` is required for `tools/call`"),
    };
    if let Some(extra) = params.keys().find(|k| !CALL_PARAMS.contains(&k.as_str())) {
        return refuse(
            id,
            INVALID_PARAMS,
            format!("`params` of a `tools/call` has no field `{extra}` (allowed: {})", CALL_PARAMS.join(", ")),
        );
    }
    let name = match params.get("name") {
        Some(Value::String(n)) => n.clone(),
        Some(other) => {
            return refuse(id, INVALID_PARAMS, format!("`params.name` must be a string, not {}", shown(other)));
        }
        None => return refuse(id, INVALID_PARAMS, "`params.name` is required"),
    };
    let arguments = match params.get("arguments") {
        None => Map::new(),
        Some(Value::Object(a)) => a.clone(),
        Some(other) => {
            return refuse(id, INVALID_PARAMS, format!("`params.arguments` must be an object, not {}", shown(other)));
        }
    };
    if let Some(meta) = params.get("_meta").filter(|m| !m.is_object()) {
        return refuse(id, INVALID_PARAMS, format!("`params._meta` must be an object, not {}", shown(meta)));
    }
    Routed::Judge(PendingCall { id, name, arguments, forward })
}

fn tool_result(id: &Value, text: String) -> Value {
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    // Older protocol versions have no result type; absent means complete for every version.
    result.result_type = None;
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// What happens to one client line: the text to forward to the server, or
/// the answer to give the client. Exactly one of the two is `Some`, except
/// for a blank line (neither).
/// No tool has been listed on this path, so every `tools/call` is denied
/// with `mcp.tool-not-listed` before the judge.
pub fn route_line(runtime: &Runtime, options: &McpOptions, line: &[u8]) -> (Option<String>, Option<Value>) {
    let (forward, answer, _) = route(runtime, options, &std::sync::Mutex::default(), line);
    (forward, answer)
}

/// [`route_line`], with the `id` and judged tool name of a `tools/call` that is forwarded.
fn route(
    runtime: &Runtime,
    options: &McpOptions,
    tools: &std::sync::Mutex<ToolState>,
    line: &[u8],
) -> (Option<String>, Option<Value>, Option<(Value, String)>) {
    let call = match classify(line) {
        Routed::Skip => return (None, None, None),
        Routed::Forward(text) => {
            let noted =
                tools.lock().map_err(|_| rpc_error(Value::Null, INVALID_REQUEST, "the proxy's tool state is unusable"));
            return match noted.and_then(|mut t| t.note_request(&text)) {
                Ok(()) => (Some(text), None, None),
                Err(answer) => (None, Some(answer), None),
            };
        }
        Routed::Refuse(answer) => {
            eprintln!("warden mcp: {}", answer["error"]["message"].as_str().unwrap_or("refused a client message"));
            return (None, Some(answer), None);
        }
        Routed::Judge(call) => call,
    };
    let gate = tools.lock().map(|t| t.gate(&call.name)).unwrap_or_else(|_| CallGate::Deny {
        rule: crate::mcp_tools::REVIEW_FAILED_RULE.into(),
        reason: "the proxy's tool state is unusable".into(),
    });
    if let CallGate::Deny { rule, reason } = gate {
        eprintln!("warden mcp: denied a call to `{}` ({rule}): {reason}", call.name.escape_debug());
        return (None, Some(crate::mcp_tools::denied_call(&call.id, &rule, &reason)), None);
    }
    let tool = format!("mcp__{}__{}", options.server_name, call.name);
    let request = ToolCallJson {
        tool_name: tool.clone(),
        arguments: Value::Object(call.arguments),
        call_id: Some(call.id.to_string()),
        run_id: None,
        session_id: Some(options.session_id.clone()),
        now_ms: Some(now_ms()),
        identity: IdentityJson { agent_id: Some(format!("mcp:{}", options.server_name)), ..Default::default() },
        cwd: std::env::current_dir().ok().map(|d| d.display().to_string()),
        derived_paths: Vec::new(),
    };
    let verdict = runtime.check_tool_call(&request.into());
    match verdict.decision {
        Decision::Allow => (Some(call.forward), None, Some((call.id, tool))),
        Decision::Deny => {
            let text = format!("Warden denied this tool call ({}): {}", verdict.rule, verdict.reason);
            (None, Some(tool_result(&call.id, text)), None)
        }
        Decision::Ask => {
            // The key is for a person: it goes to stderr (the MCP client's server log), never to the model.
            let key = verdict.approval_key.clone().unwrap_or_default();
            let scope = match verdict.scope {
                Some(ApprovalScope::Once) => format!("--scope once --call '{}'", call.id.to_string().replace('\'', "")),
                Some(ApprovalScope::Always) => "--scope always".to_string(),
                _ => format!("--scope session --session {}", options.session_id),
            };
            eprintln!(
                "warden mcp: `{tool}` needs approval ({}); a person can record it with `warden approve --key {key} \
                 {scope}`",
                verdict.rule
            );
            let text = format!(
                "Warden needs a person to approve this tool call ({}): {} The approval is recorded outside this \
                 conversation; retry once a person has approved it.",
                verdict.rule, verdict.reason
            );
            (None, Some(tool_result(&call.id, text)), None)
        }
    }
}

/// Forwarded `tools/call` requests waiting for the server's answer: the
/// request's `id` (as JSON text) and the judged tool name, oldest first.
#[derive(Default)]
struct PendingCalls(std::sync::Mutex<VecDeque<(String, String)>>);

impl PendingCalls {
    fn insert(&self, id: &Value, tool: String) {
        let Ok(mut calls) = self.0.lock() else { return };
        let key = id.to_string();
        calls.retain(|(k, _)| *k != key);
        calls.push_back((key, tool));
        if calls.len() > MAX_PENDING_CALLS
            && let Some((id, tool)) = calls.pop_front()
        {
            eprintln!(
                "warden mcp: more than {MAX_PENDING_CALLS} tool calls wait for an answer; the answer to `{tool}` \
                 (id {id}) will not be observed, so the destinations in it stay unknown to later checks"
            );
        }
    }

    fn take(&self, id: &Value) -> Option<String> {
        let mut calls = self.0.lock().ok()?;
        let key = id.to_string();
        let at = calls.iter().position(|(k, _)| *k == key)?;
        calls.remove(at).map(|(_, tool)| tool)
    }

    fn is_empty(&self) -> bool {
        self.0.lock().map(|c| c.is_empty()).unwrap_or(true)
    }
}

/// The tool result a server line reports, when it answers a pending call.
fn answered_call(
    pending: &PendingCalls,
    options: &McpOptions,
    line: &str,
) -> Option<crate::bindings::exports::warden::guard::policy::ToolResult> {
    if pending.is_empty() {
        return None;
    }
    let Ok(Value::Object(message)) = serde_json::from_str::<Value>(line) else { return None };
    if message.contains_key("method") {
        return None;
    }
    let (content, is_error) = match (message.get("result"), message.get("error")) {
        (Some(result), None) => (result, result.get("isError") == Some(&Value::Bool(true))),
        (None, Some(error)) => (error, true),
        _ => return None,
    };
    let id = message.get("id")?;
    let tool = pending.take(id)?;
    let result = crate::json::ToolResultJson {
        tool_name: tool,
        content: Value::String(content.to_string()),
        call_id: Some(id.to_string()),
        run_id: None,
        session_id: Some(options.session_id.clone()),
        now_ms: Some(now_ms()),
        identity: IdentityJson { agent_id: Some(format!("mcp:{}", options.server_name)), ..Default::default() },
        is_error,
    };
    Some(result.into())
}

/// Reports a server's answer to a tool call before it is relayed; a failure
/// or a timeout is logged and the answer goes on unchanged.
async fn observe_answer(runtime: &Arc<Runtime>, result: crate::bindings::exports::warden::guard::policy::ToolResult) {
    let tool = result.tool_name.clone();
    let rt = runtime.clone();
    let observed =
        tokio::time::timeout(OBSERVE_TIMEOUT, tokio::task::spawn_blocking(move || rt.observe_tool_result(&result)));
    let why = match observed.await {
        Ok(Ok(Ok(_))) => return,
        Ok(Ok(Err(e))) => e.to_string(),
        Ok(Err(e)) => format!("the observation failed: {e}"),
        Err(_) => format!("it took longer than {} s", OBSERVE_TIMEOUT.as_secs()),
    };
    eprintln!(
        "warden mcp: the result of `{tool}` was not recorded ({why}); it is relayed unchanged, and the destinations \
         in it stay unknown to later checks"
    );
}

/// The line the client gets for a server line: reviewed when it lists tools.
async fn review_tools(
    runtime: &Arc<Runtime>,
    server: &str,
    tools: &Arc<std::sync::Mutex<ToolState>>,
    text: String,
) -> String {
    if !text.contains("\"tools\"") {
        return text;
    }
    let (rt, server, state) = (runtime.clone(), server.to_string(), tools.clone());
    let line = text.clone();
    match tokio::task::spawn_blocking(move || crate::mcp_tools::review_line(&rt, &server, &state, &line)).await {
        Ok(Some(reviewed)) => reviewed,
        Ok(None) => text,
        Err(e) => {
            eprintln!("warden mcp: a tool list could not be reviewed ({e}); it is dropped");
            let id =
                serde_json::from_str::<Value>(&text).ok().and_then(|v| v.get("id").cloned()).unwrap_or(Value::Null);
            rpc_error(
                id,
                crate::mcp_tools::INTERNAL_ERROR,
                "Warden refused this tool list (mcp.review-failed): the review failed",
            )
            .to_string()
        }
    }
}

/// One line read with a bound: its bytes (without the newline), or how
/// many bytes a line over the bound had.
enum Line {
    Text(Vec<u8>),
    TooLong(usize),
}

/// Reads up to the next `\n`, keeping at most `max` bytes; `None` at the end.
async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R, max: usize) -> std::io::Result<Option<Line>> {
    let (mut line, mut seen) = (Vec::new(), 0usize);
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(match seen {
                0 => None,
                n if n > max => Some(Line::TooLong(n)),
                _ => Some(Line::Text(line)),
            });
        }
        let (chunk, used, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        seen += chunk.len();
        if seen <= max {
            line.extend_from_slice(chunk);
        } else {
            line = Vec::new();
        }
        reader.consume(used);
        if done {
            return Ok(Some(if seen > max { Line::TooLong(seen) } else { Line::Text(line) }));
        }
    }
}

async fn write_line<W: AsyncWrite + Unpin>(out: &Mutex<W>, line: &[u8]) -> std::io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(line).await?;
    out.write_all(b"\n").await?;
    out.flush().await
}

/// Copies the server's lines to the client until the server closes its
/// output. Lines that are not UTF-8 are repaired (U+FFFD) so the client can
/// read them; lines over [`MAX_LINE_BYTES`] are dropped with a warning.
async fn server_to_client<S, W>(
    server_out: S,
    out: Arc<Mutex<W>>,
    observer: (Arc<Runtime>, McpOptions, Arc<PendingCalls>),
    tools: Arc<std::sync::Mutex<ToolState>>,
) where
    S: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::new(server_out);
    loop {
        match read_line(&mut reader, MAX_LINE_BYTES).await {
            Ok(Some(Line::Text(bytes))) => {
                let text = match String::from_utf8(bytes) {
                    Ok(t) => t,
                    Err(e) => {
                        eprintln!("warden mcp: a server message was not valid UTF-8; invalid bytes were replaced");
                        String::from_utf8_lossy(e.as_bytes()).into_owned()
                    }
                };
                if let Some(result) = answered_call(&observer.2, &observer.1, &text) {
                    observe_answer(&observer.0, result).await;
                }
                let text = review_tools(&observer.0, &observer.1.server_name, &tools, text).await;
                if write_line(&out, text.as_bytes()).await.is_err() {
                    return;
                }
            }
            Ok(Some(Line::TooLong(n))) => {
                eprintln!("warden mcp: dropped a server message of {n} bytes (longer than {MAX_LINE_BYTES})");
            }
            Ok(None) | Err(_) => return,
        }
    }
}

/// Why the proxy stopped relaying.
enum Stop {
    ClientClosed,
    ServerClosed,
}

/// Runs the proxy between the client (`client_in`, `client_out`) and the
/// server started from `command`, until either side closes; returns the
/// server's exit code (0 when the proxy had to stop a server that did not
/// exit within [`SERVER_EXIT_GRACE`] of its input closing). The server is
/// always reaped before this returns.
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
    let pending = Arc::new(PendingCalls::default());
    let observer = (runtime.clone(), options.clone(), pending.clone());
    let tools = Arc::new(std::sync::Mutex::new(ToolState::default()));
    let mut to_client = tokio::spawn(server_to_client(server_out, out.clone(), observer, tools.clone()));
    let mut client = BufReader::new(client_in);

    let stop = loop {
        let line = tokio::select! {
            line = read_line(&mut client, MAX_LINE_BYTES) => line,
            _ = &mut to_client => break Stop::ServerClosed,
        };
        let bytes = match line {
            Ok(Some(Line::Text(bytes))) => bytes,
            Ok(Some(Line::TooLong(n))) => {
                let answer = rpc_error(
                    Value::Null,
                    PARSE_ERROR,
                    format!("warden refused this message: it is longer than {MAX_LINE_BYTES} bytes ({n})"),
                );
                eprintln!("warden mcp: refused a client message of {n} bytes");
                write_line(&out, answer.to_string().as_bytes()).await?;
                continue;
            }
            Ok(None) | Err(_) => break Stop::ClientClosed,
        };
        let (rt, opts, state) = (runtime.clone(), options.clone(), tools.clone());
        let (forward, answer, call) = tokio::task::spawn_blocking(move || route(&rt, &opts, &state, &bytes))
            .await
            .map_err(|e| std::io::Error::other(format!("the check failed: {e}")))?;
        // Remembered before the server can answer it.
        if let Some((id, tool)) = call {
            pending.insert(&id, tool);
        }
        if let Some(answer) = answer {
            write_line(&out, answer.to_string().as_bytes()).await?;
        }
        if let Some(forward) = forward {
            let sent = async {
                server_in.write_all(forward.as_bytes()).await?;
                server_in.write_all(b"\n").await?;
                server_in.flush().await
            };
            if sent.await.is_err() {
                break Stop::ServerClosed;
            }
        }
    };
    // Close the server's input and give it a moment to finish, then stop it.
    drop(server_in);
    let code = match tokio::time::timeout(SERVER_EXIT_GRACE, child.wait()).await {
        Ok(status) => status?.code().unwrap_or(1),
        Err(_) => {
            eprintln!(
                "warden mcp: the server did not exit within {} s of its input closing; stopping it",
                SERVER_EXIT_GRACE.as_secs()
            );
            child.kill().await?;
            match stop {
                Stop::ClientClosed => 0,
                Stop::ServerClosed => 1,
            }
        }
    };
    if !to_client.is_finished() {
        let _ = tokio::time::timeout(SERVER_EXIT_GRACE, &mut to_client).await;
        to_client.abort();
    }
    Ok(code)
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
