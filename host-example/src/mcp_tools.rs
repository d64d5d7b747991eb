//! The MCP proxy's review of `tools/list` answers, through the component's
//! `tool-review` export.
//!
//! Every answer of the server that carries a `result.tools` array (the
//! answer to a `tools/list`, one page at a time, whether or not the proxy saw
//! the request) is reviewed before the client sees it. Tools the review
//! removes (poisoned, changed since pinned, or breaking a limit) are taken
//! out of the array; the answer is relayed byte for byte when nothing was
//! removed, and as the proxy's serialization of it otherwise. Each removed
//! tool gets one line on stderr with its rule, and for a changed one the
//! `warden approve` command a person runs to re-pin it; the client never sees
//! the approval key.
//!
//! A `tools/call` is forwarded to the judge only for a tool the latest review
//! relayed. A removed tool's call is answered with a JSON-RPC error naming
//! its rule; a tool no review has listed yet (a call before any `tools/list`,
//! or a name the server never listed) with [`TOOL_NOT_LISTED_RULE`]. A
//! `tools/list` without a cursor starts a new listing: what earlier listings
//! said is forgotten once its answer is reviewed. A name relayed on an earlier
//! page of the same listing and listed again (in any case) is removed, and
//! calls to it are denied ([`DUPLICATE_ACROSS_PAGES_RULE`]).
//! `notifications/tools/list_changed` passes through; the client's next
//! `tools/list` is reviewed like the first.
//!
//! Failure mode: fail-closed. A review that fails (storage, the guard) turns
//! the answer into a JSON-RPC error ([`REVIEW_FAILED_RULE`]) and removes every
//! tool of the listing from what may be called.

use crate::bindings::exports::warden::guard::tool_review::{ListedTool, ToolOutcome, ToolVerdict};
use crate::json::now_ms;
use crate::runtime::Runtime;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, VecDeque};

/// A call to a tool no review has relayed: listed by no `tools/list` answer yet.
pub const TOOL_NOT_LISTED_RULE: &str = "mcp.tool-not-listed";
/// The review of a `tools/list` answer failed, so the answer was refused.
pub const REVIEW_FAILED_RULE: &str = "mcp.review-failed";
/// A name relayed on an earlier page of the same listing, listed again.
pub const DUPLICATE_ACROSS_PAGES_RULE: &str = "mcp.duplicate-tool";
/// `tools/list` requests remembered while they wait for an answer (64).
/// Past it a new `tools/list` is refused until answers arrive.
pub const MAX_PENDING_LISTS: usize = 64;
/// Tools remembered from the reviews of one listing (4096); past it the
/// remaining tools of the listing are removed with `mcp.too-many-tools`.
pub const MAX_REMEMBERED_TOOLS: usize = 4096;
/// JSON-RPC: the server's answer could not be reviewed.
pub const INTERNAL_ERROR: i64 = -32603;

/// What the latest listing said about one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Status {
    Relayed,
    Removed { rule: String, reason: String },
}

/// What the proxy knows about the server's tools.
#[derive(Debug, Default)]
pub struct ToolState {
    /// `tools/list` requests waiting for an answer: their `id` (JSON text) and
    /// whether they ask for the first page.
    pending: VecDeque<(String, bool)>,
    /// What the reviews of the current listing said, by exact name.
    tools: HashMap<String, Status>,
}

/// How a tool the client calls may go on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallGate {
    /// The latest review relayed it: judge the call.
    Judge,
    /// Denied with this rule and reason.
    Deny { rule: String, reason: String },
}

impl ToolState {
    /// Notes a `tools/list` request about to be forwarded; `Err` is the
    /// refusal to answer when too many wait already.
    pub fn note_request(&mut self, forward: &str) -> Result<(), Value> {
        let Ok(Value::Object(message)) = serde_json::from_str::<Value>(forward) else { return Ok(()) };
        if message.get("method").and_then(Value::as_str) != Some("tools/list") {
            return Ok(());
        }
        let Some(id) = message.get("id") else { return Ok(()) };
        if self.pending.len() >= MAX_PENDING_LISTS {
            return Err(crate::mcp::rpc_error(
                id.clone(),
                crate::mcp::INVALID_REQUEST,
                format!(
                    "warden refused this message: {MAX_PENDING_LISTS} `tools/list` requests already wait for an \
                     answer"
                ),
            ));
        }
        let first = message.get("params").and_then(|p| p.get("cursor")).is_none_or(Value::is_null);
        let key = id.to_string();
        self.pending.retain(|(k, _)| *k != key);
        self.pending.push_back((key, first));
        Ok(())
    }

    /// Whether a call to `name` may be judged.
    pub fn gate(&self, name: &str) -> CallGate {
        match self.tools.get(name) {
            Some(Status::Relayed) => CallGate::Judge,
            Some(Status::Removed { rule, reason }) => CallGate::Deny { rule: rule.clone(), reason: reason.clone() },
            None => CallGate::Deny {
                rule: TOOL_NOT_LISTED_RULE.into(),
                reason: format!(
                    "no `tools/list` answer reviewed by Warden lists `{}`; list the tools first",
                    name.escape_debug()
                ),
            },
        }
    }

    /// Whether the answer with this `id` starts a new listing (and forgets it as pending).
    fn take_first_page(&mut self, id: &Value) -> bool {
        let key = id.to_string();
        match self.pending.iter().position(|(k, _)| *k == key) {
            Some(at) => self.pending.remove(at).is_some_and(|(_, first)| first),
            None => false,
        }
    }
}

/// The answer's `tools` array, when `line` is an answer that lists tools.
fn listed(line: &str) -> Option<(Map<String, Value>, Value)> {
    // Cheap test first: most lines are not tool lists.
    if !line.contains("\"tools\"") {
        return None;
    }
    let Ok(Value::Object(message)) = serde_json::from_str::<Value>(line) else { return None };
    if message.contains_key("method") {
        return None;
    }
    let tools = message.get("result")?.get("tools")?.clone();
    Some((message, tools))
}

/// A listed tool as the review reads it: a non-string name is read as
/// empty (and refused), a non-string description stays among the other
/// fields (and is pinned with them).
fn listed_tool(entry: &Value) -> ListedTool {
    let Value::Object(fields) = entry else {
        return ListedTool {
            name: String::new(),
            description: String::new(),
            input_schema: "null".into(),
            other: json!({ "entry": entry }).to_string(),
        };
    };
    let mut other = fields.clone();
    let name = match other.remove("name") {
        Some(Value::String(n)) => n,
        Some(v) => {
            other.insert("name".into(), v);
            String::new()
        }
        None => String::new(),
    };
    let description = match other.remove("description") {
        Some(Value::String(d)) => d,
        Some(v) => {
            other.insert("description".into(), v);
            String::new()
        }
        None => String::new(),
    };
    let input_schema = other.remove("inputSchema").unwrap_or(Value::Null).to_string();
    ListedTool { name, description, input_schema, other: Value::Object(other).to_string() }
}

fn log_removed(server: &str, verdict: &ToolVerdict) {
    let what = match verdict.outcome {
        ToolOutcome::Poisoned => "poisoned",
        ToolOutcome::Changed => "changed since it was pinned",
        _ => "refused",
    };
    let approve = match &verdict.approval_key {
        Some(key) => format!(
            "; a person who has read the new description can re-pin it with `warden approve --key {key} --scope \
             always`"
        ),
        None => String::new(),
    };
    eprintln!(
        "warden mcp: removed tool `{}` of server `{server}` from the list ({what}, {}): {}{approve}",
        verdict.name.escape_debug(),
        verdict.rule,
        verdict.reason
    );
}

/// Reviews a server line that lists tools; `None` when the line lists none
/// (relay it as it is). `Some(text)` is what the client gets instead: the
/// same line when nothing was removed.
pub fn review_line(runtime: &Runtime, server: &str, state: &std::sync::Mutex<ToolState>, line: &str) -> Option<String> {
    let (mut message, tools) = listed(line)?;
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let first = state.lock().map(|mut s| s.take_first_page(&id)).unwrap_or(false);
    let Value::Array(entries) = tools else {
        eprintln!("warden mcp: refused a tool list whose `tools` is not an array");
        return Some(refused(&id, "the server's answer has a `tools` that is not an array").to_string());
    };
    let listed: Vec<ListedTool> = entries.iter().map(listed_tool).collect();
    let verdicts = match runtime.review_tools(server, &listed, now_ms()) {
        Ok(v) if v.len() == listed.len() => v,
        Ok(v) => {
            let why = format!("the review answered {} verdicts for {} tools", v.len(), listed.len());
            return Some(failed(state, &id, &why));
        }
        Err(e) => return Some(failed(state, &id, &e.to_string())),
    };
    let Ok(mut state) = state.lock() else {
        return Some(refused(&id, "the proxy's tool state is unusable").to_string());
    };
    if first {
        state.tools.clear();
    }
    let mut kept = Vec::with_capacity(entries.len());
    let mut removed = 0usize;
    for (entry, verdict) in entries.into_iter().zip(verdicts) {
        let mut verdict = verdict;
        let folded = verdict.name.to_ascii_lowercase();
        let earlier = state.tools.iter().any(|(n, s)| *s == Status::Relayed && n.to_ascii_lowercase() == folded);
        let relayed = matches!(verdict.outcome, ToolOutcome::Kept | ToolOutcome::Pinned);
        if relayed && earlier {
            verdict = ToolVerdict {
                outcome: ToolOutcome::Refused,
                rule: DUPLICATE_ACROSS_PAGES_RULE.into(),
                reason: format!(
                    "`{}` is listed again on a later page of the same listing; calls to it are denied",
                    verdict.name.escape_debug()
                ),
                approval_key: None,
                ..verdict
            };
            // The earlier copy reached the client: its calls are denied too.
            for (n, s) in state.tools.iter_mut() {
                if n.to_ascii_lowercase() == folded {
                    *s = Status::Removed { rule: verdict.rule.clone(), reason: verdict.reason.clone() };
                }
            }
        } else if state.tools.len() >= MAX_REMEMBERED_TOOLS && !state.tools.contains_key(&verdict.name) {
            verdict = ToolVerdict {
                outcome: ToolOutcome::Refused,
                rule: "mcp.too-many-tools".into(),
                reason: format!("the listing has more than {MAX_REMEMBERED_TOOLS} tools; the rest are removed"),
                approval_key: None,
                ..verdict
            };
        }
        if matches!(verdict.outcome, ToolOutcome::Kept | ToolOutcome::Pinned) {
            state.tools.insert(verdict.name.clone(), Status::Relayed);
            kept.push(entry);
        } else {
            log_removed(server, &verdict);
            if !verdict.name.is_empty() {
                state.tools.insert(
                    verdict.name.clone(),
                    Status::Removed { rule: verdict.rule.clone(), reason: verdict.reason.clone() },
                );
            }
            removed += 1;
        }
    }
    if removed == 0 {
        return Some(line.to_string());
    }
    if let Some(Value::Object(result)) = message.get_mut("result") {
        result.insert("tools".into(), Value::Array(kept));
    }
    Some(Value::Object(message).to_string())
}

fn refused(id: &Value, why: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": INTERNAL_ERROR,
            "message": format!("Warden refused this tool list ({REVIEW_FAILED_RULE}): {why}"),
            "data": { "rule": REVIEW_FAILED_RULE },
        }
    })
}

/// A review that failed: the answer becomes an error, and nothing of the
/// listing may be called.
fn failed(state: &std::sync::Mutex<ToolState>, id: &Value, why: &str) -> String {
    eprintln!("warden mcp: the tool list could not be reviewed ({why}); it is refused, and its tools cannot be called");
    // Every tool known so far stays known, denied by the failure's rule.
    if let Ok(mut state) = state.lock() {
        for status in state.tools.values_mut() {
            *status = Status::Removed {
                rule: REVIEW_FAILED_RULE.into(),
                reason: "the latest tool list could not be reviewed".into(),
            };
        }
    }
    refused(id, &format!("it could not be reviewed ({why})")).to_string()
}

/// The JSON-RPC error that denies a call to a removed or unlisted tool.
pub fn denied_call(id: &Value, rule: &str, reason: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": crate::mcp::INVALID_PARAMS,
            "message": format!("Warden denied this tool call ({rule}): {reason}"),
            "data": { "rule": rule },
        }
    })
}
