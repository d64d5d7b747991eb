//! The exec gate and the path guard, with their built-in defaults, over the
//! commands a skill or plugin ships: scripts, fenced shell code blocks and
//! `package.json` scripts. Commands are data here: they are parsed and
//! judged, never run.

use super::text::quote;
use super::{Sink, json_text, push, push_at, rules};
use crate::model::Risk;
use crate::prelude::*;
use crate::tools::path_guard::Places;
use crate::tools::protected::Access;
use crate::tools::{ToolsConfig, exec, rules as tool_rules};
use once_cell::race::OnceBox;
use serde_json::Value;

/// Most commands judged in one document; the rest are not.
pub const MAX_COMMANDS: usize = 5000;
/// The `package.json` scripts npm runs at install.
pub const INSTALL_SCRIPTS: &[&str] =
    &["preinstall", "install", "postinstall", "prepare", "preprepare", "postprepare", "prepublish"];

struct Defaults {
    tools: ToolsConfig,
    host: crate::host::Prepared,
}

static DEFAULTS: OnceBox<Defaults> = OnceBox::new();

fn defaults() -> &'static Defaults {
    DEFAULTS.get_or_init(|| {
        Box::new(Defaults { tools: ToolsConfig::default(), host: crate::host::HostContext::default().prepare() })
    })
}

fn places() -> Places<'static> {
    let d = defaults();
    Places {
        cwd: None,
        workspace: None,
        home: &d.tools.compiled.home,
        protected: &d.tools.compiled.protected,
        writable: &d.tools.compiled.writable,
        host: &d.host,
        dots: crate::paths::Dots::Hidden,
    }
}

/// Whether a chunk of prose names a path the path guard protects by default
/// (`~/.ssh/id_rsa`, `$HOME/.aws/credentials`, `.env`).
pub fn names_protected_path(chunk: &str) -> bool {
    let trimmed = chunk
        .trim_start_matches(|c: char| "`'\"([<{*_=:".contains(c))
        .trim_end_matches(|c: char| "`'\")]>},;:.!?*_".contains(c));
    let path = ["${HOME}", "$HOME", "%USERPROFILE%", "%userprofile%"]
        .iter()
        .find_map(|h| trimmed.strip_prefix(h).map(|rest| format!("~{rest}")))
        .unwrap_or_else(|| trimmed.to_string());
    let path = path.replace('\\', "/");
    if !(path.starts_with('~') || path.starts_with('/') || path.starts_with(".env") || path.contains("/.")) {
        return false;
    }
    let places = places();
    let normalized = places.normalize(&path);
    places.protected_by(&normalized, Access::Read).is_some()
        || places.protected_by(&normalized, Access::Write).is_some()
}

/// Where a command stands, which names what its findings mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A script, a code block, a package script that is not run at install.
    Code,
    /// A `package.json` script npm runs at install (named).
    Install(&'static str),
}

/// Judges one command (on `line`) with the exec gate's built-in rules.
pub fn scan_command(command: &str, line: u32, origin: Origin, out: &mut Sink) {
    for f in exec::check(&places(), command, None) {
        let (rule, severity) = match f.rule {
            tool_rules::EXEC_UNPARSABLE | tool_rules::EXEC_TOO_COMPLEX | tool_rules::PATH_OUTSIDE_WORKSPACE => continue,
            tool_rules::EXEC_DOWNLOAD_EXECUTE => (rules::INSTALL_EXEC, Risk::Critical),
            r if r.starts_with("path.") || r.starts_with("self.") => (rules::PROTECTED_PATH, Risk::High),
            tool_rules::EXEC_DYNAMIC_CODE | tool_rules::EXEC_DYNAMIC_PROGRAM => {
                (rules::DANGEROUS_COMMAND, Risk::Medium)
            }
            _ => (rules::DANGEROUS_COMMAND, Risk::High),
        };
        let (rule, severity, at) = match origin {
            Origin::Code => (rule, severity, String::new()),
            // Whatever runs at install runs on every machine that installs it.
            Origin::Install(name) => (
                if rule == rules::DANGEROUS_COMMAND { rules::INSTALL_EXEC } else { rule },
                severity.max(Risk::High),
                format!("the `{name}` script, run at install: "),
            ),
        };
        push_at(out, rule, line, severity, format!("{at}{} ({}): {}", quote(command), f.rule, f.reason));
    }
}

/// Judges a script: each logical line (continuations joined), the whole
/// script when it parses as shell (what one line saves and another runs), and
/// the quoted strings of lines that are not shell (`os.system("...")`).
pub fn scan_script(text: &str, first_line: u32, out: &mut Sink) {
    let mut judged = 0usize;
    let mut pending = String::new();
    let mut pending_line = first_line;
    for (i, raw) in text.split('\n').enumerate() {
        let line = first_line.saturating_add(u32::try_from(i).unwrap_or(u32::MAX));
        if pending.is_empty() {
            pending_line = line;
        }
        if let Some(head) = raw.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        pending.push_str(raw);
        let command = core::mem::take(&mut pending);
        let trimmed = command.trim();
        if trimmed.is_empty() || trimmed.starts_with("//") {
            continue;
        }
        if judged >= MAX_COMMANDS {
            return too_many(pending_line, out);
        }
        judged += 1;
        scan_command(trimmed, pending_line, Origin::Code, out);
        for literal in literals(trimmed) {
            if judged >= MAX_COMMANDS {
                return too_many(pending_line, out);
            }
            judged += 1;
            scan_command(&literal, pending_line, Origin::Code, out);
        }
    }
    // Across lines: `curl -o x.sh ...` then `sh x.sh`.
    if crate::shell::parse(text).is_ok() {
        let mut whole = Sink::new();
        scan_command(text, first_line, Origin::Code, &mut whole);
        for f in whole {
            if f.rule == rules::INSTALL_EXEC && !out.iter().any(|o| o.rule == f.rule) {
                push_at(out, f.rule, first_line, f.severity, format!("across lines of the script: {}", f.detail));
            }
        }
    }
}

fn too_many(line: u32, out: &mut Sink) {
    push(out, rules::UNREADABLE, line, format!("more than {MAX_COMMANDS} commands; from here on they were not judged"));
}

/// Quoted strings of a line of code that hold a space, as commands.
fn literals(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = line.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        if c != '"' && c != '\'' && c != '`' {
            continue;
        }
        let mut s = String::new();
        let mut closed = false;
        while let Some((_, d)) = chars.next() {
            if d == '\\' {
                if let Some((_, e)) = chars.next() {
                    s.push(e);
                }
                continue;
            }
            if d == c {
                closed = true;
                break;
            }
            s.push(d);
        }
        if closed && s.contains(' ') && s.len() >= 6 {
            out.push(s);
        }
    }
    out
}

/// Judges the scripts of a `package.json`; install scripts as run at install.
pub fn scan_package_json(text: &str, out: &mut Sink) {
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            push(out, rules::UNREADABLE, 0, format!("not JSON ({e}), so its scripts were not judged"));
            return;
        }
    };
    let Some(scripts) = value.get("scripts").and_then(Value::as_object) else { return };
    let strings = json_text::strings(text);
    for (name, command) in scripts {
        let Some(command) = command.as_str() else { continue };
        let line = json_text::find(&strings, name, 0).map_or(0, |(_, l)| l);
        let origin = match INSTALL_SCRIPTS.iter().find(|s| **s == name.as_str()) {
            Some(s) => Origin::Install(s),
            None => Origin::Code,
        };
        scan_command(command, line, origin, out);
    }
}
