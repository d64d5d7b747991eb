//! The scanner: what a skill, a plugin, an MCP server's tool list or a log
//! carries before any turn runs.
//!
//! [`scan_documents`] takes named text documents, each of a [`Kind`], and
//! answers with [`Finding`]s, each naming its rule (see [`rules::RULES`]), the
//! document, the line and a severity. It needs no configuration: where it
//! reuses the exec gate, the path guard and the DLP floor it runs their
//! built-in defaults ([`code`]). Every host gets the same findings because
//! they all come from here.
//!
//! A scanner finds patterns; it does not prove a document safe. What each
//! rule looks for, and what it does not, is written next to its row.

use crate::model::Risk;
use crate::prelude::*;

pub mod code;
pub mod domains;
pub mod encoded;
pub mod json_text;
pub mod markup;
pub mod mcp;
pub mod phrases;
pub mod rules;
#[cfg(test)]
mod tests;
pub mod text;

pub use mcp::{scan_tool, scan_tools};

/// Most documents one call scans.
pub const MAX_DOCUMENTS: usize = 2000;
/// Largest document scanned, in bytes (1 MiB).
pub const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;
/// Largest total of all documents in one call, in bytes (8 MiB).
pub const MAX_TOTAL_BYTES: usize = 8 * 1024 * 1024;
/// Longest document name, in characters.
pub const MAX_NAME_CHARS: usize = 1024;
/// Most findings one report lists; the report says when there were more.
pub const MAX_FINDINGS: usize = 1000;
/// Longest detail quoted from a document, in characters.
pub const MAX_QUOTE_CHARS: usize = 80;

/// What a document is, which decides where it may only describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A `SKILL.md`: front matter that only describes, a body of instructions
    /// for the model, fenced code blocks that may be run.
    Skill,
    /// A script a skill or plugin ships (shell, Python, JavaScript).
    Script,
    /// A plugin manifest (`openclaw.plugin.json`, `plugin.yaml`): only describes.
    Manifest,
    /// A `package.json`: its install scripts run at install.
    PackageJson,
    /// An MCP server's `tools/list` answer (a JSON-RPC result, `{"tools": [...]}` or a bare list).
    McpTools,
    /// A runtime's log or transcript.
    Log,
    /// Any other text (read as markdown).
    Text,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Skill => "skill",
            Kind::Script => "script",
            Kind::Manifest => "manifest",
            Kind::PackageJson => "package-json",
            Kind::McpTools => "mcp-tools",
            Kind::Log => "log",
            Kind::Text => "text",
        }
    }
}

/// One named text to scan.
#[derive(Debug, Clone, Copy)]
pub struct Document<'a> {
    /// How findings name it (a path, `tool search`, ...).
    pub name: &'a str,
    pub kind: Kind,
    pub text: &'a str,
}

/// One thing the scanner found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// One of [`rules::RULES`].
    pub rule: &'static str,
    /// The document's name.
    pub document: String,
    /// The line it is on, from 1 (0: the document as a whole).
    pub line: u32,
    pub severity: Risk,
    /// What was found, quoting at most [`MAX_QUOTE_CHARS`] of the document, never a secret.
    pub detail: String,
}

/// Everything one scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// By document (in the order given), then line, then rule.
    pub findings: Vec<Finding>,
    /// Whether findings past [`MAX_FINDINGS`] were left out.
    pub truncated: bool,
}

impl Report {
    /// The most severe finding's severity, if any.
    pub fn worst(&self) -> Option<Risk> {
        self.findings.iter().map(|f| f.severity).max()
    }
}

/// A finding of one document, before it carries the document's name.
#[derive(Debug, Clone)]
pub struct Found {
    pub rule: &'static str,
    pub line: u32,
    pub severity: Risk,
    pub detail: String,
}

/// Where the checks of one document put what they find.
pub type Sink = Vec<Found>;

pub(crate) fn push(out: &mut Sink, rule: &'static str, line: u32, detail: String) {
    out.push(Found { rule, line, severity: rules::severity(rule), detail });
}

pub(crate) fn push_at(out: &mut Sink, rule: &'static str, line: u32, severity: Risk, detail: String) {
    out.push(Found { rule, line, severity, detail });
}

/// Checks the call's limits: one line naming the field and the bound.
pub fn check_limits(docs: &[Document<'_>]) -> Result<(), String> {
    if docs.len() > MAX_DOCUMENTS {
        return Err(format!(
            "documents: {} documents given; at most {MAX_DOCUMENTS} are scanned in one call",
            docs.len()
        ));
    }
    let mut total = 0usize;
    for (i, d) in docs.iter().enumerate() {
        if d.name.trim().is_empty() {
            return Err(format!("documents[{i}].name: must not be blank"));
        }
        if d.name.chars().count() > MAX_NAME_CHARS {
            return Err(format!("documents[{i}].name: must be at most {MAX_NAME_CHARS} characters"));
        }
        if d.text.len() > MAX_DOCUMENT_BYTES {
            return Err(format!(
                "documents[{i}].text: `{}` is {} bytes; at most {MAX_DOCUMENT_BYTES} are scanned",
                text::shorten(d.name, MAX_QUOTE_CHARS),
                d.text.len()
            ));
        }
        total += d.text.len();
    }
    if total > MAX_TOTAL_BYTES {
        return Err(format!(
            "documents: {total} bytes of text in all; at most {MAX_TOTAL_BYTES} are scanned in one call"
        ));
    }
    Ok(())
}

/// Scans every document. Refuses, naming the field, a call past the limits
/// ([`MAX_DOCUMENTS`], [`MAX_DOCUMENT_BYTES`], [`MAX_TOTAL_BYTES`],
/// [`MAX_NAME_CHARS`]); scans nothing then.
pub fn scan_documents(docs: &[Document<'_>]) -> Result<Report, String> {
    check_limits(docs)?;
    let mut report = Report::default();
    for doc in docs {
        let found = scan_one(doc);
        add(&mut report, doc.name, found);
    }
    Ok(report)
}

/// What a detail says before its last quote.
fn what(detail: &str) -> &str {
    detail.rsplit_once(": `").map_or(detail, |(head, _)| head)
}

pub(crate) fn add(report: &mut Report, name: &str, mut found: Sink) {
    found.sort_by(|a, b| (a.line, a.rule, &a.detail).cmp(&(b.line, b.rule, &b.detail)));
    // The same row found twice on a line (in a comment and in the line around it) is one finding.
    found.dedup_by(|a, b| a.line == b.line && a.rule == b.rule && what(&a.detail) == what(&b.detail));
    for f in found {
        if report.findings.len() >= MAX_FINDINGS {
            report.truncated = true;
            return;
        }
        report.findings.push(Finding {
            rule: f.rule,
            document: name.to_string(),
            line: f.line,
            severity: f.severity,
            detail: f.detail,
        });
    }
}

/// The findings of one document (within the limits).
pub(crate) fn scan_one(doc: &Document<'_>) -> Sink {
    let mut out = Sink::new();
    match doc.kind {
        Kind::Skill => markup::scan_markdown(doc.text, true, &mut out),
        Kind::Text => markup::scan_markdown(doc.text, false, &mut out),
        Kind::Script => {
            everywhere(doc.text, 1, &mut out);
            code::scan_script(doc.text, 1, &mut out);
        }
        Kind::Manifest => describing_document(doc.text, &mut out),
        Kind::PackageJson => {
            describing_document(doc.text, &mut out);
            code::scan_package_json(doc.text, &mut out);
        }
        Kind::McpTools => mcp::scan_tools_text(doc.text, &mut out),
        Kind::Log => {
            everywhere(doc.text, 1, &mut out);
            // JSON-lines logs carry their text escaped.
            for (line, s) in json_text::strings(doc.text) {
                if s.contains(['\\', '&']) || !s.is_ascii() || doc.text.contains("\\u") {
                    everywhere(&s, line, &mut out);
                }
            }
        }
    }
    secrets(doc.text, &mut out);
    out
}

/// A document that should only describe, such as a manifest: every text in
/// it (JSON strings decoded) is held to the describing rules.
fn describing_document(text: &str, out: &mut Sink) {
    text::hidden(text, 1, out);
    domains::scan(text, 1, out);
    encoded::scan(text, 1, 0, out);
    let strings = json_text::strings(text);
    if strings.is_empty() {
        phrases::scan(text, 1, phrases::Place::Describes, out);
    } else {
        for (line, s) in strings {
            if s.contains('\\') || !s.is_ascii() {
                text::hidden(&s, line, out);
                domains::scan(&s, line, out);
            }
            phrases::scan(&s, line, phrases::Place::Describes, out);
        }
    }
}

/// The checks every text gets: hidden characters, look-alike domains,
/// encoded blobs, and the instructions that are malicious wherever they stand.
pub(crate) fn everywhere(text: &str, first_line: u32, out: &mut Sink) {
    text::hidden(text, first_line, out);
    domains::scan(text, first_line, out);
    encoded::scan(text, first_line, 0, out);
    phrases::scan(text, first_line, phrases::Place::Instructs, out);
}

/// The DLP floor's deterministic detectors, over windows of whole lines.
fn secrets(text: &str, out: &mut Sink) {
    for (first_line, window) in text::windows(text, crate::dlp::MAX_BODY_BYTES) {
        for hit in crate::dlp::detectors::scan(window) {
            let line = first_line + text::line_of_char(window, hit.offset) - 1;
            push(out, rules::SECRET, line, format!("a secret ({}) is written here; it is not quoted", hit.detector));
        }
    }
}
