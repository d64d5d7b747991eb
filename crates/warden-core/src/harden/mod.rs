//! Audit and hardening of an agent runtime's own configuration.
//!
//! [`audit`] reads the configuration of OpenClaw (`openclaw.json`, JSON5),
//! Hermes (`config.yaml`) or Claude Code (`settings.json`) and reports the
//! settings that keep Warden from working or weaken the agent's safety, each
//! with the setting's path, what is wrong, and the fix as data. [`harden`]
//! applies every fix to the text and changes nothing else: comments,
//! spacing, key order, line endings and a byte-order mark stay, and a
//! hardened text hardens to itself. Rules are in one file per runtime.
//!
//! Pure: the caller reads, backs up and writes the file.

mod claude_code;
mod edit;
mod hermes;
mod json5;
mod openclaw;
pub mod tree;
mod yaml;

#[cfg(test)]
mod tests;

use crate::model::{PolicyError, Risk};
use crate::prelude::*;
pub use tree::Seg;
use tree::{Kind, Node};

/// Largest configuration text accepted, in bytes (1 MiB).
pub const MAX_CONFIG_BYTES: usize = 1024 * 1024;
/// Deepest nesting of objects and arrays accepted (64).
pub const MAX_DEPTH: usize = 64;
/// Most fixes one `harden` applies (256); past it the text is refused as unfixable.
pub const MAX_FIXES: usize = 256;

/// Rule of a key written twice in one object: the runtime reads the last.
pub const DUPLICATE_KEY: &str = "config.duplicate-key";

/// The runtimes whose configuration can be audited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentRuntime {
    /// OpenClaw: `openclaw.json` (JSON5).
    OpenClaw,
    /// Hermes Agent: `config.yaml`.
    Hermes,
    /// Claude Code: `settings.json`.
    ClaudeCode,
}

impl AgentRuntime {
    /// Every runtime, in the order they are documented.
    pub const ALL: [AgentRuntime; 3] = [AgentRuntime::OpenClaw, AgentRuntime::Hermes, AgentRuntime::ClaudeCode];

    /// `openclaw`, `hermes` or `claude-code`.
    pub fn name(self) -> &'static str {
        match self {
            AgentRuntime::OpenClaw => "openclaw",
            AgentRuntime::Hermes => "hermes",
            AgentRuntime::ClaudeCode => "claude-code",
        }
    }

    /// The runtime named `name`; the error lists the names allowed.
    pub fn parse(name: &str) -> Result<AgentRuntime, String> {
        AgentRuntime::ALL.into_iter().find(|r| r.name() == name).ok_or_else(|| {
            format!("runtime: `{name}` is not a runtime whose configuration can be audited: use openclaw, hermes or claude-code")
        })
    }

    fn syntax(self) -> Syntax {
        match self {
            AgentRuntime::Hermes => Syntax::Yaml,
            AgentRuntime::OpenClaw | AgentRuntime::ClaudeCode => Syntax::Json5,
        }
    }
}

/// How a configuration is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Syntax {
    Json5,
    Yaml,
}

/// Where a text could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// What a fix does to the setting at its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixAction {
    /// Set the value (creating the objects on the way).
    Set,
    /// Remove the key.
    Remove,
    /// Add the value to the list (creating it).
    AddItem,
    /// Remove the value from the list.
    RemoveItem,
}

impl FixAction {
    pub fn name(self) -> &'static str {
        match self {
            FixAction::Set => "set",
            FixAction::Remove => "remove",
            FixAction::AddItem => "add-item",
            FixAction::RemoveItem => "remove-item",
        }
    }
}

/// A fix as data.
#[derive(Debug, Clone, PartialEq)]
pub struct Fix {
    pub action: FixAction,
    pub path: Vec<Seg>,
    /// The new value or the list item (JSON); none for `remove`.
    pub value: Option<serde_json::Value>,
}

/// One setting that weakens Warden or the agent's safety.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The rule, `config.<runtime>.<what>`.
    pub rule: &'static str,
    pub risk: Risk,
    /// The setting's path, such as `plugins.entries.warden.enabled`.
    pub path: String,
    /// What is wrong and what the fix does.
    pub detail: String,
    /// The fix; none where only a person can fix it (the detail says how).
    pub fix: Option<Fix>,
}

impl Finding {
    fn new(rule: &'static str, risk: Risk, path: String, detail: String, fix: Option<Fix>) -> Finding {
        Finding { rule, risk, path, detail, fix }
    }
}

fn set(path: Vec<Seg>, value: serde_json::Value) -> Option<Fix> {
    Some(Fix { action: FixAction::Set, path, value: Some(value) })
}

fn remove(path: Vec<Seg>) -> Option<Fix> {
    Some(Fix { action: FixAction::Remove, path, value: None })
}

fn add_item(path: Vec<Seg>, item: &str) -> Option<Fix> {
    Some(Fix { action: FixAction::AddItem, path, value: Some(serde_json::Value::String(item.to_string())) })
}

fn remove_item(path: Vec<Seg>, item: &str) -> Option<Fix> {
    Some(Fix { action: FixAction::RemoveItem, path, value: Some(serde_json::Value::String(item.to_string())) })
}

fn invalid(message: String) -> PolicyError {
    PolicyError::InvalidInput(message)
}

/// Reads `text` as `runtime`'s configuration: an object at the top (an empty
/// YAML file is an empty one).
fn read(runtime: AgentRuntime, text: &str) -> Result<Node, PolicyError> {
    if text.len() > MAX_CONFIG_BYTES {
        return Err(invalid(format!(
            "the configuration is {} bytes; at most {MAX_CONFIG_BYTES} bytes are read",
            text.len()
        )));
    }
    let syntax = runtime.syntax();
    let parsed = match syntax {
        Syntax::Json5 => json5::parse(text),
        Syntax::Yaml => yaml::parse(text),
    };
    let what = match runtime {
        AgentRuntime::OpenClaw => "json5",
        AgentRuntime::ClaudeCode => "json",
        AgentRuntime::Hermes => "yaml",
    };
    let root = parsed.map_err(|e| {
        invalid(format!(
            "the {} configuration is not valid {what}: line {}, column {}: {}",
            runtime.name(),
            e.line,
            e.column,
            e.message
        ))
    })?;
    match root.kind {
        Kind::Object(_) => Ok(root),
        Kind::Null if syntax == Syntax::Yaml => Ok(root),
        _ => Err(invalid(format!("the {} configuration must be an object at the top level", runtime.name()))),
    }
}

/// The settings in `text` that weaken Warden or the agent's safety, most
/// severe first.
pub fn audit(runtime: AgentRuntime, text: &str) -> Result<Vec<Finding>, PolicyError> {
    let root = read(runtime, text)?;
    Ok(findings(runtime, &root))
}

fn findings(runtime: AgentRuntime, root: &Node) -> Vec<Finding> {
    let mut out = Vec::new();
    match runtime {
        AgentRuntime::OpenClaw => openclaw::audit(root, &mut out),
        AgentRuntime::Hermes => hermes::audit(root, &mut out),
        AgentRuntime::ClaudeCode => claude_code::audit(root, &mut out),
    }
    let mut dups = Vec::new();
    root.duplicate_keys(&mut Vec::new(), &mut dups);
    for (mut path, key) in dups {
        path.push(Seg::Key(key.clone()));
        out.push(Finding::new(
            DUPLICATE_KEY,
            Risk::Medium,
            tree::display(&path),
            format!(
                "`{key}` is written more than once here; {} reads only the last one and tools that read the first \
                 see another configuration: keep one (no automatic fix)",
                runtime.name()
            ),
            None,
        ));
    }
    out.sort_by_key(|f| core::cmp::Reverse(f.risk));
    out
}

/// `text` with every fix of [`audit`] applied, and nothing else changed.
/// A text with nothing to fix comes back byte for byte.
pub fn harden(runtime: AgentRuntime, text: &str) -> Result<String, PolicyError> {
    let mut current = text.to_string();
    let mut root = read(runtime, &current)?;
    for _ in 0..MAX_FIXES {
        let found = findings(runtime, &root);
        let Some(fix) = found.iter().find_map(|f| f.fix.as_ref()) else { return Ok(current) };
        let next = edit::apply(&current, runtime.syntax(), &root, fix).map_err(invalid)?;
        let reread = read(runtime, &next).map_err(|_| {
            PolicyError::Other(format!("a fix of `{}` did not keep the file readable", tree::display(&fix.path)))
        })?;
        // A fix that leaves its own finding in place would loop: stop.
        let before = found.iter().filter(|f| f.fix.as_ref() == Some(fix)).count();
        let after = findings(runtime, &reread).iter().filter(|f| f.fix.as_ref() == Some(fix)).count();
        if next == current || after >= before {
            return Err(PolicyError::Other(format!(
                "`{}` could not be fixed automatically; change it by hand",
                tree::display(&fix.path)
            )));
        }
        current = next;
        root = reread;
    }
    Err(invalid(format!("the configuration needs more than {MAX_FIXES} fixes; fix it by hand")))
}
