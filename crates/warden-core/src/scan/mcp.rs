//! MCP tool lists: every description and input-schema text only describes,
//! and no tool's description may tell the model how to use another tool.

use super::phrases::{self, Place, Step};
use super::text::{self, quote};
use super::{Document, Kind, Report, Sink, json_text, push, push_at, rules};
use crate::model::Risk;
use crate::prelude::*;
use serde_json::Value;

/// Most tools one list may hold.
pub const MAX_TOOLS: usize = 1000;
/// Deepest input schema walked.
pub const MAX_SCHEMA_DEPTH: usize = 16;

/// Rows of cross-tool shadowing: `@tool` is another tool of the list.
pub const SHADOW_ROWS: &[(&str, &str, Risk)] = &[
    (
        "tells the model what to do when another tool runs",
        "when|whenever|if|each|every|once ~4 @tool ~2 is|are|gets|get|was ~1 called|used|invoked|run|executed",
        Risk::High,
    ),
    (
        "tells the model how to use another tool",
        "when|whenever|before|after|while ~2 using|calling|invoking|running|executing|use|call ~3 @tool",
        Risk::High,
    ),
    ("tells the model not to use another tool", "not ~1 use|call|invoke|trust|run ~2 @tool", Risk::High),
    (
        "tells the model how another tool must be used",
        "@tool ~4 must|shall|always|needs|need|requires ~1 to|be|include|add|send|use|set|contain|also|first|receive",
        Risk::Medium,
    ),
    (
        "tells the model how to use every other tool",
        "when|whenever|before|after|while|for ~2 using|calling|invoking|running|executing|use|call ~2 any|all|every|each|other|another ~2 other ~1 tool|tools|function|functions",
        Risk::High,
    ),
    (
        "tells the model how to use every other tool",
        "all|every|any|each|other ~1 other ~1 tool|tools ~3 must|should|always|need|needs|shall",
        Risk::High,
    ),
    (
        "tells the model not to use other tools",
        "not ~1 use|call|invoke|trust ~2 any|the|other|another ~1 other ~1 tool|tools",
        Risk::High,
    ),
];

/// Scans one MCP tool: its name, description and input schema, against the
/// names of the other tools of its list. Findings name the tool as their
/// document; a finding in the description is on the description's line (from
/// 1), one in the schema or elsewhere on line 0 with its field in the detail.
pub fn scan_tool(name: &str, description: &str, input_schema: Option<&Value>, other_tools: &[&str]) -> Report {
    let mut out = Sink::new();
    tool_findings(name, description, input_schema, other_tools, &mut |_, _| None, &mut out);
    let mut report = Report::default();
    super::add(&mut report, name, out);
    report
}

/// Scans a list of MCP tools (each `{name, description, inputSchema}`) as
/// [`scan_tool`] does each, every finding's document the tool's name.
pub fn scan_tools(tools: &[Value]) -> Report {
    let names: Vec<&str> = tools.iter().filter_map(|t| t.get("name").and_then(Value::as_str)).collect();
    let mut report = Report::default();
    for tool in tools.iter().take(MAX_TOOLS) {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
        let description = tool.get("description").and_then(Value::as_str).unwrap_or("");
        let others: Vec<&str> = names.iter().copied().filter(|n| *n != name).collect();
        let mut out = Sink::new();
        tool_findings(name, description, tool_schema(tool), &others, &mut |_, _| None, &mut out);
        extra_strings(tool, &mut out, &mut |_, _| None);
        super::add(&mut report, if name.is_empty() { "(a tool with no name)" } else { name }, out);
    }
    report
}

fn tool_schema(tool: &Value) -> Option<&Value> {
    tool.get("inputSchema").or_else(|| tool.get("input_schema")).or_else(|| tool.get("parameters"))
}

/// The tools of a `tools/list` answer: a JSON-RPC response, its result, or a bare list.
pub fn tools_of(value: &Value) -> Option<&Vec<Value>> {
    value
        .get("result")
        .and_then(|r| r.get("tools"))
        .or_else(|| value.get("tools"))
        .and_then(Value::as_array)
        .or_else(|| value.as_array())
}

/// Scans a `tools/list` answer captured to a file; lines are the file's.
pub fn scan_tools_text(text: &str, out: &mut Sink) {
    let value: Option<Value> = serde_json::from_str(text).ok();
    let Some(tools) = value.as_ref().and_then(tools_of) else {
        push(
            out,
            rules::UNREADABLE,
            0,
            String::from(
                "not a tools/list answer (a JSON-RPC result, `{\"tools\": [...]}` or a list of tools), so it was read as text that only describes",
            ),
        );
        let doc = Document { name: "", kind: Kind::Manifest, text };
        out.extend(super::scan_one(&doc));
        return;
    };
    let strings = json_text::strings(text);
    let names: Vec<&str> = tools.iter().filter_map(|t| t.get("name").and_then(Value::as_str)).collect();
    let mut cursor = 0usize;
    for tool in tools.iter().take(MAX_TOOLS) {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
        let description = tool.get("description").and_then(Value::as_str).unwrap_or("");
        let others: Vec<&str> = names.iter().copied().filter(|n| *n != name).collect();
        if let Some((i, _)) = json_text::find(&strings, name, cursor) {
            cursor = i;
        }
        let from = cursor;
        let mut line_of = |value: &str, _: &str| json_text::find(&strings, value, from).map(|(_, l)| l);
        let mut found = Sink::new();
        tool_findings(name, description, tool_schema(tool), &others, &mut line_of, &mut found);
        extra_strings(tool, &mut found, &mut line_of);
        for mut f in found {
            f.detail = format!("tool `{}`: {}", quote(name), f.detail);
            out.push(f);
        }
    }
}

type LineOf<'a> = dyn FnMut(&str, &str) -> Option<u32> + 'a;

fn tool_findings(
    name: &str,
    description: &str,
    schema: Option<&Value>,
    others: &[&str],
    line_of: &mut LineOf<'_>,
    out: &mut Sink,
) {
    let base = line_of(description, "description").unwrap_or(1);
    describes(description, base, others, out);
    describes(name, line_of(name, "name").unwrap_or(0), &[], out);
    if let Some(schema) = schema {
        let mut texts = Vec::new();
        schema_texts(schema, String::from("inputSchema"), 0, &mut texts);
        for (path, value) in texts {
            let line = line_of(&value, &path).unwrap_or(0);
            let mut found = Sink::new();
            describes(&value, 1, others, &mut found);
            for mut f in found {
                f.line = line;
                f.detail = format!("in `{path}`: {}", f.detail);
                out.push(f);
            }
        }
    }
}

/// Other texts of a tool that a client may show or send (title, annotations).
fn extra_strings(tool: &Value, out: &mut Sink, line_of: &mut LineOf<'_>) {
    let mut texts = Vec::new();
    for key in ["title", "annotations"] {
        if let Some(v) = tool.get(key) {
            schema_texts(v, String::from(key), 0, &mut texts);
        }
    }
    for (path, value) in texts {
        let line = line_of(&value, &path).unwrap_or(0);
        let mut found = Sink::new();
        describes(&value, 1, &[], &mut found);
        for mut f in found {
            f.line = line;
            f.detail = format!("in `{path}`: {}", f.detail);
            out.push(f);
        }
    }
}

fn schema_texts(value: &Value, path: String, depth: usize, out: &mut Vec<(String, String)>) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    match value {
        Value::String(s) => out.push((path, s.clone())),
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                schema_texts(v, format!("{path}[{i}]"), depth + 1, out);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                // Property names are identifiers, not text for the model; `type` and `format` are keywords.
                if matches!(k.as_str(), "type" | "format" | "$schema" | "$ref" | "pattern" | "required") {
                    continue;
                }
                schema_texts(v, format!("{path}.{k}"), depth + 1, out);
            }
        }
        _ => {}
    }
}

/// A text that should only describe, with the names of the other tools.
pub fn describes(value: &str, first_line: u32, others: &[&str], out: &mut Sink) {
    if value.is_empty() {
        return;
    }
    text::hidden(value, first_line, out);
    super::domains::scan(value, first_line, out);
    super::encoded::scan(value, first_line, 0, out);
    phrases::scan(value, first_line, Place::Describes, out);
    shadowing(value, first_line, others, out);
}

/// One tool's description instructing how to use another.
pub fn shadowing(description: &str, first_line: u32, others: &[&str], out: &mut Sink) {
    let mut words = text::words(description, first_line);
    for other in others {
        let name: Vec<String> = text::words(other, 1).into_iter().map(|(w, _)| w).collect();
        if name.is_empty() {
            continue;
        }
        // A one-word name is a word of prose too (`search`, `fetch`) unless it is quoted as a name.
        let quoted = ['`', '\'', '"'].iter().any(|q| description.contains(&format!("{q}{other}{q}")));
        if name.len() < 2 && !quoted {
            continue;
        }
        let mut i = 0usize;
        while i + name.len() <= words.len() {
            let hit = words.get(i..i + name.len()).is_some_and(|ws| ws.iter().map(|(w, _)| w).eq(name.iter()));
            if hit {
                let line = words.get(i).map_or(first_line, |w| w.1);
                words.splice(i..i + name.len(), [(String::from("@tool"), line)]);
            }
            i += 1;
        }
    }
    for (what, pattern, severity) in SHADOW_ROWS {
        let steps: Vec<Step<'_>> = phrases::compile(pattern);
        for start in 0..words.len() {
            if phrases::matches_at(&steps, phrases::within(&words, start), start) {
                let line = words.get(start).map_or(first_line, |w| w.1);
                push_at(
                    out,
                    rules::TOOL_SHADOWING,
                    line,
                    *severity,
                    format!("{what}: `{}`", quote(text::line_text(description, first_line, line))),
                );
                break;
            }
        }
    }
}
