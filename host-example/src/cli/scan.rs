//! `warden scan PATH...`: skills, plugins, MCP tool lists and logs, scanned
//! by the component's `scan` export before any of it reaches an agent.
//!
//! The host only reads files and prints: it walks each folder (bounded, not
//! following symbolic links), names each file's kind from its name (and, for
//! JSON, from whether it is a `tools/list` answer), skips binary and
//! oversized files and says so, and hands the texts to the component in
//! batches. The component decides every finding.

use super::{Failure, HostArgs, call_failure};
use crate::bindings::exports::warden::guard::scan::{Document, DocumentKind, ScanFinding};
use crate::bindings::warden::guard::types::Risk;
use crate::runtime::Runtime;
use clap::ValueEnum;
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Most files read in one run; the rest are skipped and listed.
pub const MAX_FILES: usize = 2000;
/// Largest file read, in bytes (1 MiB, the component's limit for one document).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Deepest folder walked below a path given.
pub const MAX_DEPTH: usize = 16;
/// Most bytes of text handed to the component in one call.
pub const MAX_BATCH_BYTES: usize = 1024 * 1024;
/// Most documents handed to the component in one call.
pub const MAX_BATCH_DOCUMENTS: usize = 200;
/// Folders not walked: version control, and dependencies a plugin installs
/// (they are other packages; scan them on their own if they ship with it).
pub const SKIPPED_FOLDERS: &[&str] = &[".git", "node_modules", "__pycache__", ".venv", "venv"];

/// The least severe finding that makes `warden scan` exit 3.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Severity {
    Low,
    Medium,
    High,
    Critical,
    /// Never: exit 0 whatever was found.
    None,
}

/// A document kind, as `--kind` and `POST /v1/scan` name it.
#[derive(ValueEnum, serde::Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ScanKind {
    Skill,
    Script,
    Manifest,
    PackageJson,
    McpTools,
    Log,
    Text,
}

impl From<ScanKind> for DocumentKind {
    fn from(k: ScanKind) -> DocumentKind {
        kind_of_arg(k)
    }
}

fn kind_of_arg(k: ScanKind) -> DocumentKind {
    match k {
        ScanKind::Skill => DocumentKind::Skill,
        ScanKind::Script => DocumentKind::Script,
        ScanKind::Manifest => DocumentKind::Manifest,
        ScanKind::PackageJson => DocumentKind::PackageJson,
        ScanKind::McpTools => DocumentKind::McpTools,
        ScanKind::Log => DocumentKind::Log,
        ScanKind::Text => DocumentKind::Text,
    }
}

pub(super) fn kind_name(k: DocumentKind) -> &'static str {
    match k {
        DocumentKind::Skill => "skill",
        DocumentKind::Script => "script",
        DocumentKind::Manifest => "manifest",
        DocumentKind::PackageJson => "package-json",
        DocumentKind::McpTools => "mcp-tools",
        DocumentKind::Log => "log",
        DocumentKind::Text => "text",
    }
}

pub(super) fn severity_name(r: Risk) -> &'static str {
    match r {
        Risk::Low => "low",
        Risk::Medium => "medium",
        Risk::High => "high",
        Risk::Critical => "critical",
    }
}

fn rank(r: Risk) -> Severity {
    match r {
        Risk::Low => Severity::Low,
        Risk::Medium => Severity::Medium,
        Risk::High => Severity::High,
        Risk::Critical => Severity::Critical,
    }
}

const SCRIPT_EXTENSIONS: &[&str] =
    &["sh", "bash", "zsh", "ksh", "fish", "py", "js", "mjs", "cjs", "ts", "ps1", "rb", "pl"];
const LOG_EXTENSIONS: &[&str] = &["log", "jsonl", "ndjson"];

/// The kind of a file, from its name and, for JSON, its text.
pub(super) fn classify(path: &Path, text: &str) -> DocumentKind {
    let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    match name.as_str() {
        "skill.md" => return DocumentKind::Skill,
        "package.json" => return DocumentKind::PackageJson,
        "openclaw.plugin.json" | "plugin.yaml" | "plugin.yml" | "manifest.json" => return DocumentKind::Manifest,
        _ => {}
    }
    if SCRIPT_EXTENSIONS.contains(&ext.as_str()) || (ext.is_empty() && text.starts_with("#!")) {
        return DocumentKind::Script;
    }
    if LOG_EXTENSIONS.contains(&ext.as_str()) {
        return DocumentKind::Log;
    }
    if ext == "json" && is_tools_list(text) {
        return DocumentKind::McpTools;
    }
    DocumentKind::Text
}

fn is_tools_list(text: &str) -> bool {
    let Ok(v) = serde_json::from_str::<Value>(text) else { return false };
    let tools = v.get("result").and_then(|r| r.get("tools")).or_else(|| v.get("tools")).or(Some(&v));
    tools.and_then(Value::as_array).is_some_and(|a| !a.is_empty() && a.iter().all(|t| t.get("name").is_some()))
}

/// What the walk read and what it left out.
#[derive(Default)]
pub(super) struct Walk {
    pub documents: Vec<Document>,
    pub skipped: Vec<(String, String)>,
}

impl Walk {
    fn skip(&mut self, path: &Path, why: impl Into<String>) {
        self.skipped.push((path.display().to_string(), why.into()));
    }

    fn read_file(&mut self, path: &Path, forced: Option<DocumentKind>) {
        if self.documents.len() >= MAX_FILES {
            self.skip(path, format!("more than {MAX_FILES} files; not read"));
            return;
        }
        let size = match std::fs::metadata(path) {
            Ok(m) => m.len(),
            Err(e) => return self.skip(path, format!("cannot be read: {e}")),
        };
        if size > MAX_FILE_BYTES {
            return self.skip(path, format!("{size} bytes, over the limit of {MAX_FILE_BYTES}; not scanned"));
        }
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => return self.skip(path, format!("cannot be read: {e}")),
        };
        if bytes.iter().take(8192).any(|&b| b == 0) {
            return self.skip(path, "binary; not scanned");
        }
        let Ok(text) = String::from_utf8(bytes) else {
            return self.skip(path, "not UTF-8 text; not scanned");
        };
        let kind = forced.unwrap_or_else(|| classify(path, &text));
        self.documents.push(Document { name: path.display().to_string(), kind, text });
    }

    fn walk(&mut self, dir: &Path, depth: usize) {
        if depth > MAX_DEPTH {
            return self.skip(dir, format!("deeper than {MAX_DEPTH} folders; not walked"));
        }
        let mut entries: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
            Err(e) => return self.skip(dir, format!("cannot be read: {e}")),
        };
        entries.sort();
        for path in entries {
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if meta.file_type().is_symlink() {
                self.skip(&path, "a symbolic link; not followed");
            } else if meta.is_dir() {
                if SKIPPED_FOLDERS.contains(&name.as_str()) {
                    self.skip(&path, "a folder of version control or installed dependencies; not walked");
                } else {
                    self.walk(&path, depth + 1);
                }
            } else if meta.is_file() {
                self.read_file(&path, None);
            }
        }
    }
}

/// Reads every path: files as they are, folders walked.
pub(super) fn read_paths(paths: &[PathBuf], forced: Option<ScanKind>) -> Result<Walk, Failure> {
    let mut walk = Walk::default();
    for path in paths {
        let meta = std::fs::metadata(path)
            .map_err(|e| Failure::invalid(format!("PATH: `{}` cannot be read: {e}", path.display())))?;
        if meta.is_dir() {
            if forced.is_some() {
                return Err(Failure::invalid(format!(
                    "--kind: `{}` is a folder; --kind names the kind of files given one by one",
                    path.display()
                )));
            }
            walk.walk(path, 0);
        } else {
            walk.read_file(path, forced.map(kind_of_arg));
        }
    }
    Ok(walk)
}

/// Scans the documents in batches the component accepts.
pub(super) fn scan_all(runtime: &Runtime, documents: &[Document]) -> Result<(Vec<ScanFinding>, bool), Failure> {
    let mut findings = Vec::new();
    let mut truncated = false;
    let mut start = 0usize;
    while start < documents.len() {
        let mut end = start;
        let mut bytes = 0usize;
        while let Some(d) = documents.get(end) {
            if end > start && (bytes + d.text.len() > MAX_BATCH_BYTES || end - start >= MAX_BATCH_DOCUMENTS) {
                break;
            }
            bytes += d.text.len();
            end += 1;
        }
        let report = runtime.scan_documents(documents.get(start..end).unwrap_or(&[])).map_err(call_failure)?;
        findings.extend(report.findings);
        truncated |= report.truncated;
        start = end;
    }
    Ok((findings, truncated))
}

/// Least guest CPU time one scan call gets, in milliseconds: a 1 MiB script
/// is judged command by command. A larger `--cpu-ms` raises it.
pub const MIN_SCAN_CPU_MS: u64 = 30_000;

/// A runtime with no policy: the scan export needs none.
pub(super) fn scanner(host: &HostArgs) -> Result<Runtime, Failure> {
    let storage = Arc::new(crate::memory_storage::MemoryStorage::default());
    let host = HostArgs { cpu_ms: host.cpu_ms.max(MIN_SCAN_CPU_MS), ..host.clone() };
    Runtime::new(super::options(&host, storage, None), "{}").map_err(|e| Failure::failed(e.to_string()))
}

pub fn finding_json(f: &ScanFinding) -> Value {
    json!({
        "rule": f.rule,
        "document": f.document,
        "line": f.line,
        "severity": severity_name(f.severity),
        "detail": f.detail,
    })
}

/// `warden scan`.
pub(super) fn run(
    host: &HostArgs,
    paths: &[PathBuf],
    as_json: bool,
    fail_on: Severity,
    kind: Option<ScanKind>,
    stdout: &mut dyn Write,
) -> Result<(), Failure> {
    let walk = read_paths(paths, kind)?;
    let runtime = scanner(host)?;
    let (findings, truncated) = scan_all(&runtime, &walk.documents)?;
    let write_err = |e: std::io::Error| Failure::failed(format!("cannot write the answer: {e}"));
    if as_json {
        let v = json!({
            "findings": findings.iter().map(finding_json).collect::<Vec<_>>(),
            "documents": walk.documents.iter().map(|d| json!({"name": d.name, "kind": kind_name(d.kind)})).collect::<Vec<_>>(),
            "skipped": walk.skipped.iter().map(|(p, w)| json!({"path": p, "reason": w})).collect::<Vec<_>>(),
            "truncated": truncated,
        });
        super::print_json(stdout, &v)?;
    } else {
        print_table(stdout, &findings, &walk, truncated).map_err(write_err)?;
    }
    let worst = findings.iter().map(|f| rank(f.severity)).max();
    match worst {
        Some(w) if fail_on != Severity::None && w >= fail_on => {
            let at = findings.iter().filter(|f| rank(f.severity) >= fail_on).count();
            Err(Failure::threshold(format!(
                "{at} finding(s) at or above `{}`",
                match fail_on {
                    Severity::Low => "low",
                    Severity::Medium => "medium",
                    Severity::High => "high",
                    Severity::Critical | Severity::None => "critical",
                }
            )))
        }
        _ => Ok(()),
    }
}

fn print_table(out: &mut dyn Write, findings: &[ScanFinding], walk: &Walk, truncated: bool) -> std::io::Result<()> {
    if findings.is_empty() {
        writeln!(out, "no findings in {} file(s)", walk.documents.len())?;
    } else {
        let location = |f: &ScanFinding| {
            if f.line == 0 { f.document.clone() } else { format!("{}:{}", f.document, f.line) }
        };
        let rule_w = findings.iter().map(|f| f.rule.len()).max().unwrap_or(4).max(4);
        let loc_w = findings.iter().map(|f| location(f).chars().count()).max().unwrap_or(8).clamp(8, 60);
        writeln!(out, "{:<8}  {:<rule_w$}  {:<loc_w$}  DETAIL", "SEVERITY", "RULE", "LOCATION")?;
        for f in findings {
            writeln!(
                out,
                "{:<8}  {:<rule_w$}  {:<loc_w$}  {}",
                severity_name(f.severity),
                f.rule,
                location(f),
                f.detail
            )?;
        }
        let count = |r: Risk| findings.iter().filter(|f| f.severity == r).count();
        writeln!(
            out,
            "\n{} finding(s) in {} file(s): {} critical, {} high, {} medium, {} low",
            findings.len(),
            walk.documents.len(),
            count(Risk::Critical),
            count(Risk::High),
            count(Risk::Medium),
            count(Risk::Low)
        )?;
    }
    if truncated {
        writeln!(out, "more findings than a report lists were left out")?;
    }
    for (path, why) in &walk.skipped {
        writeln!(out, "skipped {path}: {why}")?;
    }
    Ok(())
}
