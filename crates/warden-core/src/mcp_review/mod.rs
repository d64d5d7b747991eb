//! Review of an MCP server's tool list before the client sees it.
//!
//! Every tool of one `tools/list` answer gets one [`Outcome`], in the order
//! listed:
//!
//! - [`Outcome::Refused`]: the tool breaks a limit or the list's shape (a
//!   name outside the protocol's characters, the same name twice, an
//!   oversized description or schema, past [`MAX_TOOLS_PER_LIST`]). Removed.
//! - [`Outcome::Poisoned`]: the scanner finds something high or critical in
//!   its name, description, title or parameter descriptions. Removed, never
//!   pinned, and no approval can bring it back: the server has to change it.
//! - [`Outcome::Changed`]: what was pinned for this server and tool name no
//!   longer matches (`mcp.description-changed`). Removed until a person
//!   approves the change with the approval key, which re-pins the new text.
//! - [`Outcome::Pinned`]: seen for the first time, and pinned now (trust on
//!   first use).
//! - [`Outcome::Kept`]: matches its pin.
//!
//! What is pinned is the tool as the model reads it: its name, description,
//! input schema and every other field (title, annotations, output schema),
//! as canonical JSON (keys sorted, no insignificant whitespace between JSON
//! tokens). Text inside strings is compared exactly: a description that only
//! changes its spacing, its line breaks or its Unicode normalization is a
//! change, because what the model reads changed.
//!
//! Pins live in storage namespace [`NAMESPACE`] under a keyed hash of the
//! server and tool name; the record holds a keyed hash of the canonical
//! text, never the text. Keys derive from the host's approval secret, and
//! approval keys are authenticated with it, so neither the MCP server nor
//! the client can make one.
//!
//! Failure mode: fail-closed. A storage failure fails the whole review, and
//! the host refuses the list rather than relaying tools it could not check.

pub mod pins;
#[cfg(test)]
mod tests;

use crate::model::PolicyError;
use crate::ports::Ports;
use crate::prelude::*;

/// Storage namespace of the pins.
pub const NAMESPACE: &str = "mcp-pins";
/// Most tools reviewed in one answer (one page of `tools/list`) (128). The
/// tools past it are removed with [`rules::TOO_MANY_TOOLS`]. The scanner
/// compares every tool's text with every other tool's name, so its work
/// grows with the square of this; 128 keeps a review well inside the
/// guard's CPU deadline.
pub const MAX_TOOLS_PER_LIST: usize = 128;
/// Most bytes of descriptions, schemas and other fields reviewed in one
/// answer (512 KiB). The tools past it are removed with
/// [`rules::LIST_TOO_LARGE`].
pub const MAX_LIST_BYTES: usize = 512 * 1024;
/// Longest tool name, in characters, as the protocol recommends (128).
pub const MAX_NAME_CHARS: usize = 128;
/// Longest tool description, in bytes of UTF-8 (16 KiB).
pub const MAX_DESCRIPTION_BYTES: usize = 16 * 1024;
/// Longest input schema plus other fields of one tool, in bytes of JSON text (64 KiB).
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;
/// Longest server name, in characters (128).
pub const MAX_SERVER_CHARS: usize = 128;

/// The rules of this review.
pub mod rules {
    /// The tool matches its pin.
    pub const PIN_MATCHES: &str = "mcp.pin-matches";
    /// The tool was seen for the first time and is pinned now.
    pub const FIRST_SEEN: &str = "mcp.first-seen";
    /// The tool differs from what was pinned, and no person approved the change.
    pub const DESCRIPTION_CHANGED: &str = "mcp.description-changed";
    /// The tool's name is empty, too long, or has characters other than the protocol's.
    pub const INVALID_NAME: &str = "mcp.invalid-name";
    /// The list names the tool more than once (compared without case).
    pub const DUPLICATE_TOOL: &str = "mcp.duplicate-tool";
    /// The description is longer than [`super::MAX_DESCRIPTION_BYTES`].
    pub const DESCRIPTION_TOO_LARGE: &str = "mcp.description-too-large";
    /// The input schema and other fields are longer than [`super::MAX_SCHEMA_BYTES`].
    pub const SCHEMA_TOO_LARGE: &str = "mcp.schema-too-large";
    /// The input schema or the other fields are not JSON of the right shape.
    pub const INVALID_SCHEMA: &str = "mcp.invalid-schema";
    /// The tool is listed past [`super::MAX_TOOLS_PER_LIST`].
    pub const TOO_MANY_TOOLS: &str = "mcp.too-many-tools";
    /// The tool comes after [`super::MAX_LIST_BYTES`] of the answer.
    pub const LIST_TOO_LARGE: &str = "mcp.list-too-large";
    /// The scanner stopped at its limit of findings before it could clear the tool.
    pub const SCAN_INCOMPLETE: &str = "mcp.scan-incomplete";
}

/// One tool as a `tools/list` answer lists it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListedTool {
    /// The tool's name.
    pub name: String,
    /// Its description (empty when the server gave none).
    pub description: String,
    /// Its input schema, as JSON text.
    pub input_schema: String,
    /// Every other field of the tool (title, annotations, output schema,
    /// `_meta`), as the JSON text of one object (`{}` when none).
    pub other: String,
}

/// What happens to one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It matches its pin: relayed.
    Kept,
    /// Seen for the first time and pinned now: relayed.
    Pinned,
    /// A high or critical scan finding: removed.
    Poisoned,
    /// It differs from its pin: removed until a person approves the change.
    Changed,
    /// It breaks a limit or the list's shape: removed.
    Refused,
}

impl Outcome {
    /// Whether the client may see and call the tool.
    pub fn relayed(self) -> bool {
        matches!(self, Outcome::Kept | Outcome::Pinned)
    }
}

/// The review of one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolReview {
    /// The tool's name, as listed.
    pub name: String,
    /// What happens to it.
    pub outcome: Outcome,
    /// The rule that decided.
    pub rule: String,
    /// Why, for the operator's log and the denial of a call.
    pub reason: String,
    /// For [`Outcome::Changed`]: the key a person approves the change with.
    pub approval_key: Option<String>,
}

impl ToolReview {
    fn new(name: &str, outcome: Outcome, rule: &str, reason: String) -> ToolReview {
        ToolReview { name: name.to_string(), outcome, rule: rule.to_string(), reason, approval_key: None }
    }
}

/// What a scanner found in a tool: the rule and what it says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Poison {
    /// The scanner's rule.
    pub rule: String,
    /// Where and what.
    pub detail: String,
}

/// The name's problem, if it breaks the protocol's naming rules.
fn name_problem(name: &str) -> Option<String> {
    let chars = name.chars().count();
    if name.is_empty() || chars > MAX_NAME_CHARS {
        return Some(format!("a tool name must be 1 to {MAX_NAME_CHARS} characters, got {chars}"));
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))) {
        return Some(format!(
            "the tool name `{}` has the character {:?} (U+{:04X}); only ASCII letters, digits, `_`, `-` and `.` \
             are allowed",
            crate::config::reader::shorten(&name.escape_debug().to_string()),
            c,
            c as u32
        ));
    }
    None
}

/// The canonical JSON of a tool: what is pinned.
fn canonical(tool: &ListedTool) -> Result<Vec<u8>, String> {
    let schema: serde_json::Value =
        serde_json::from_str(&tool.input_schema).map_err(|e| format!("the input schema is not valid JSON ({e})"))?;
    let other: serde_json::Value =
        serde_json::from_str(&tool.other).map_err(|e| format!("the other fields are not valid JSON ({e})"))?;
    if !other.is_object() {
        return Err("the other fields must be a JSON object".into());
    }
    let value = serde_json::json!({
        "name": tool.name,
        "description": tool.description,
        "inputSchema": schema,
        "other": other,
    });
    Ok(crate::digest::canonical_json(&value))
}

/// The scanner over the tools of one list that keep to the limits: what
/// it found in each, by tool name.
pub type Scanner<'a> = &'a dyn Fn(&[&ListedTool]) -> BTreeMap<String, Poison>;

/// Reviews the tools of one `tools/list` answer of `server`, pinning the
/// new ones; `scanner` is asked once about every tool that keeps to the
/// limits. One review per tool, in the order listed. A storage failure
/// fails the review (`storage`): nothing is relayed unchecked.
pub fn review(
    secret: &[u8],
    ports: &Ports<'_>,
    server: &str,
    tools: &[ListedTool],
    now_ms: u64,
    scanner: Scanner<'_>,
) -> Result<Vec<ToolReview>, PolicyError> {
    let server_chars = server.chars().count();
    if server.trim().is_empty() || server_chars > MAX_SERVER_CHARS {
        return Err(PolicyError::InvalidInput(format!(
            "server: must be 1 to {MAX_SERVER_CHARS} characters and not blank, got {server_chars}"
        )));
    }
    let keys = pins::PinKeys::derive(secret);
    // Names compared without ASCII case: `Read_File` next to `read_file`
    // leaves the client to pick one, so neither is relayed.
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for tool in tools.iter().take(MAX_TOOLS_PER_LIST) {
        *seen.entry(tool.name.to_ascii_lowercase()).or_default() += 1;
    }
    let size = |tool: &ListedTool| tool.description.len() + tool.input_schema.len() + tool.other.len();
    let within = |tool: &ListedTool| {
        tool.description.len() <= MAX_DESCRIPTION_BYTES
            && tool.input_schema.len() + tool.other.len() <= MAX_SCHEMA_BYTES
            && name_problem(&tool.name).is_none()
    };
    // The tools that keep to every limit, the answer's byte budget included, in order.
    let mut budget = MAX_LIST_BYTES;
    let mut in_budget = Vec::with_capacity(tools.len());
    for tool in tools.iter().take(MAX_TOOLS_PER_LIST) {
        let ok = within(tool) && size(tool) <= budget;
        if ok {
            budget -= size(tool);
        }
        in_budget.push(ok);
    }
    let scanned: Vec<&ListedTool> = tools.iter().zip(&in_budget).filter(|(_, ok)| **ok).map(|(t, _)| t).collect();
    let poisoned = scanner(&scanned);
    let mut out = Vec::with_capacity(tools.len());
    for (index, tool) in tools.iter().enumerate() {
        let name = tool.name.as_str();
        if index >= MAX_TOOLS_PER_LIST {
            out.push(ToolReview::new(
                name,
                Outcome::Refused,
                rules::TOO_MANY_TOOLS,
                format!(
                    "the list has {} tools; at most {MAX_TOOLS_PER_LIST} are reviewed, the rest removed",
                    tools.len()
                ),
            ));
            continue;
        }
        if let Some(why) = name_problem(name) {
            out.push(ToolReview::new(name, Outcome::Refused, rules::INVALID_NAME, why));
            continue;
        }
        let copies = seen.get(&name.to_ascii_lowercase()).copied().unwrap_or(0);
        if copies > 1 {
            out.push(ToolReview::new(
                name,
                Outcome::Refused,
                rules::DUPLICATE_TOOL,
                format!("the list names `{name}` {copies} times (compared without case); none of them is relayed"),
            ));
            continue;
        }
        if tool.description.len() > MAX_DESCRIPTION_BYTES {
            out.push(ToolReview::new(
                name,
                Outcome::Refused,
                rules::DESCRIPTION_TOO_LARGE,
                format!("the description has {} bytes, more than {MAX_DESCRIPTION_BYTES}", tool.description.len()),
            ));
            continue;
        }
        let schema_bytes = tool.input_schema.len() + tool.other.len();
        if schema_bytes > MAX_SCHEMA_BYTES {
            out.push(ToolReview::new(
                name,
                Outcome::Refused,
                rules::SCHEMA_TOO_LARGE,
                format!("the input schema and other fields have {schema_bytes} bytes, more than {MAX_SCHEMA_BYTES}"),
            ));
            continue;
        }
        if !in_budget.get(index).copied().unwrap_or(false) {
            out.push(ToolReview::new(
                name,
                Outcome::Refused,
                rules::LIST_TOO_LARGE,
                format!(
                    "the tools listed up to this one have more than {MAX_LIST_BYTES} bytes of descriptions and \
                     schemas; the rest are removed"
                ),
            ));
            continue;
        }
        let canonical = match canonical(tool) {
            Ok(c) => c,
            Err(why) => {
                out.push(ToolReview::new(name, Outcome::Refused, rules::INVALID_SCHEMA, why));
                continue;
            }
        };
        if let Some(found) = poisoned.get(name) {
            let reason = format!("the scanner found {} in this tool: {}", found.rule, found.detail);
            out.push(ToolReview::new(name, Outcome::Poisoned, &found.rule, reason));
            continue;
        }
        let hash = keys.description_hash(&canonical);
        let slot = keys.slot(server, name);
        out.push(match pins::read(ports.storage, &slot)? {
            Some(pin) if pin.hash == hash => ToolReview::new(
                name,
                Outcome::Kept,
                rules::PIN_MATCHES,
                "the tool matches the description pinned for it".into(),
            ),
            Some(_) => {
                let mut review = ToolReview::new(
                    name,
                    Outcome::Changed,
                    rules::DESCRIPTION_CHANGED,
                    format!(
                        "the tool `{name}` of server `{}` differs from the description pinned for it; it stays \
                         removed until a person approves the change",
                        crate::config::reader::shorten(server)
                    ),
                );
                review.approval_key = Some(keys.approval_key(secret, &slot, &hash));
                review
            }
            None => {
                pins::pin(ports.storage, &slot, &hash, pins::PinnedBy::FirstUse, now_ms)?;
                ToolReview::new(
                    name,
                    Outcome::Pinned,
                    rules::FIRST_SEEN,
                    "seen for the first time; its description is pinned now".into(),
                )
            }
        });
    }
    Ok(out)
}

/// The scanner's verdict on the tools of one list: for each tool with a
/// high or critical finding in its name, description, title, annotations or
/// parameter descriptions (one tool's text telling how to use another
/// included), the first such finding. When the scanner stops at its limit of
/// findings, every tool it did not find poisoned is reported as
/// [`rules::SCAN_INCOMPLETE`]: it was not cleared.
pub fn scan(tools: &[&ListedTool]) -> BTreeMap<String, Poison> {
    let values: Vec<serde_json::Value> = tools
        .iter()
        .map(|t| {
            let mut fields = match serde_json::from_str::<serde_json::Value>(&t.other) {
                Ok(serde_json::Value::Object(map)) => map,
                _ => serde_json::Map::new(),
            };
            fields.insert("name".into(), serde_json::Value::String(t.name.clone()));
            fields.insert("description".into(), serde_json::Value::String(t.description.clone()));
            let schema = serde_json::from_str(&t.input_schema).unwrap_or(serde_json::Value::Null);
            fields.insert("inputSchema".into(), schema);
            serde_json::Value::Object(fields)
        })
        .collect();
    let report = crate::scan::mcp::scan_tools(&values);
    let mut out: BTreeMap<String, Poison> = BTreeMap::new();
    for finding in &report.findings {
        if finding.severity >= crate::model::Risk::High && !out.contains_key(&finding.document) {
            let at = if finding.line > 0 { format!(" (line {})", finding.line) } else { String::new() };
            out.insert(
                finding.document.clone(),
                Poison { rule: finding.rule.to_string(), detail: format!("{}{at}", finding.detail) },
            );
        }
    }
    if report.truncated {
        for tool in tools {
            out.entry(tool.name.clone()).or_insert_with(|| Poison {
                rule: rules::SCAN_INCOMPLETE.into(),
                detail: format!(
                    "the scanner stopped at {} findings in this list before it could clear this tool",
                    crate::scan::MAX_FINDINGS
                ),
            });
        }
    }
    out
}
