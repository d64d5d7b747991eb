//! The inputs the benchmarks time and the golden decisions record: every
//! shell command of the core's shared tool-call table, and a generated set of
//! file paths (inside and outside the workspace, protected and not, written
//! in the forms agents use). Both run with the table's configuration and
//! working directory.

use serde_json::{Value, json};

/// The core's shared table of tool calls.
pub const TOOL_CALL_TABLE: &str = include_str!("../../crates/warden-core/testdata/tool-calls.json");
/// The table's working directory, which is also its workspace.
pub const CWD: &str = "/ws";
/// The configuration every corpus call runs under.
pub const CONFIG: &str = r#"{"tools": {"workspace": "/ws"}}"#;
/// Fewest inputs of the whole corpus.
pub const MIN_INPUTS: usize = 450;

/// One timed input: a tool call and what it stands for.
#[derive(Debug, Clone)]
pub struct Input {
    /// `command` or `path`.
    pub kind: &'static str,
    /// The command or the path itself.
    pub text: String,
    /// The tool called.
    pub tool: &'static str,
    /// Its arguments, as the agent sent them.
    pub args: Value,
}

/// Every distinct shell command of the tool-call table, in table order.
pub fn commands() -> Vec<Input> {
    let doc: Value = serde_json::from_str(TOOL_CALL_TABLE).unwrap_or(Value::Null);
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for case in doc["cases"].as_array().into_iter().flatten() {
        let tool = case["tool"].as_str().unwrap_or_default();
        if tool != "Bash" && tool != "exec" {
            continue;
        }
        let Some(command) = case["args"]["command"].as_str() else { continue };
        if seen.insert(command.to_string()) {
            out.push(Input { kind: "command", text: command.into(), tool: "Bash", args: json!({"command": command}) });
        }
    }
    out
}

/// File paths in the forms agents write them, each read (`Read`) and, for
/// one in three, written (`Write`).
pub fn paths() -> Vec<Input> {
    let inside = [
        "src/main.rs",
        "src/lib.rs",
        "./README.md",
        "docs/../Cargo.toml",
        "/ws/tests/a.rs",
        "/ws/crates/core/src/shell/parse.rs",
        "target/debug/build.log",
        "app/.env.example",
        "web/package.json",
        "scripts/deploy.sh",
        ".github/workflows/ci.yml",
        "/ws/./notes//todo.md",
    ];
    let protected = [
        "~/.ssh/id_rsa",
        "$HOME/.ssh//id_ed25519",
        "/home/dev/.ssh/config",
        "/root/.ssh/authorized_keys",
        "~/.aws/credentials",
        "~/.aws/sso/cache/token.json",
        "~/.gnupg/private-keys-v1.d/key",
        "~/.kube/config",
        "~/.docker/config.json",
        "~/.netrc",
        "~/.git-credentials",
        "~/.config/gh/hosts.yml",
        "~/.npmrc",
        "~/.bashrc",
        "~/.zshrc",
        "/etc/shadow",
        "/etc/sudoers.d/90-cloud",
        "/ws/.env",
        "app/.env.local",
        "/ws/../ws/.env.production",
    ];
    let outside = [
        "/etc/hosts",
        "/etc/passwd",
        "/var/log/syslog",
        "/tmp/out.txt",
        "/usr/local/bin/tool",
        "~/.ssh/id_rsa.pub",
        "~/notes.txt",
        "../other/secret.txt",
        "/opt/app/config.yaml",
        "/dev/null",
    ];
    let mut out = Vec::new();
    for (i, path) in inside.iter().chain(&protected).chain(&outside).enumerate() {
        for prefix in ["", "./"] {
            let path = if prefix.is_empty() || path.starts_with(['/', '~', '$', '.']) {
                if prefix.is_empty() { path.to_string() } else { continue }
            } else {
                format!("{prefix}{path}")
            };
            out.push(Input { kind: "path", text: path.clone(), tool: "Read", args: json!({"file_path": path}) });
            if i % 3 == 0 {
                let args = json!({"file_path": path, "content": "fn main() {}\n"});
                out.push(Input { kind: "path", text: path.clone(), tool: "Write", args });
            }
            let args = json!({"file_path": path, "old_string": "a", "new_string": "b"});
            if i % 5 == 1 {
                out.push(Input { kind: "path", text: path, tool: "Edit", args });
            }
        }
    }
    out
}

/// Commands, then paths.
pub fn all() -> Vec<Input> {
    let mut inputs = commands();
    inputs.extend(paths());
    inputs
}
