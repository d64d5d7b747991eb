//! `warden init`: a starter configuration for one runtime.
//!
//! The configuration is strict JSON and the component refuses unknown fields
//! (a misspelt setting must never be silently ignored), so the file holds no
//! comments and no `$comment` keys: it is exactly what `warden validate`
//! accepts. What each setting does, and what to do next, is printed on stderr
//! when the file is written.

use super::Failure;
use clap::ValueEnum;
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum InitRuntime {
    /// OpenClaw's plugin: reply pinning for its `message` tool, the judge on every tool call.
    Openclaw,
    /// Hermes Agent's plugin: the judge on every tool call.
    Hermes,
    /// Claude Code command hooks (`warden hook claude-code`).
    ClaudeCode,
    /// An MCP server behind `warden mcp`.
    Mcp,
    /// `warden serve`: the checks as an HTTP service, with the consent gate on.
    Serve,
    /// Any host: every check at its defaults.
    Generic,
}

/// The starter configuration for `runtime`, and the lines explaining it.
pub fn starter(runtime: InitRuntime) -> (Value, Vec<&'static str>) {
    let common = [
        "tool calls: the judge runs with its built-in taxonomy (exec gate, path guard, self-protection); add",
        "  `tools.workspace` to confine file tools to a folder, `tools.rules` to allow, ask or deny by name.",
        "outbound messages: the DLP secret floor is always on; add `dlp` settings for listed values.",
        "inbound turns: add `safety.scenarios` (and a classifier destination) to condition answers on who asks.",
    ];
    let (config, specific): (Value, Vec<&'static str>) = match runtime {
        InitRuntime::Openclaw => (
            json!({}),
            vec![
                "reply pinning is on with its default tools: a turn's reply stays in the chat it came from.",
                "install the plugin (integrations/openclaw) and point its `configPath` at this file.",
            ],
        ),
        InitRuntime::Hermes => (
            json!({"pin": {"enabled": false}}),
            vec![
                "`pin.enabled: false`: Hermes sends replies itself, so reply pinning is off.",
                "install the plugin (integrations/hermes) and point it at this file.",
            ],
        ),
        InitRuntime::ClaudeCode => (
            json!({"pin": {"enabled": false}}),
            vec![
                "`pin.enabled: false`: Claude Code has no chat tools to pin.",
                "in ~/.claude/settings.json, run `warden hook claude-code` for PreToolUse, PostToolUse and",
                "  UserPromptSubmit; with this file in ~/.config/warden/warden.json no `--config` is needed.",
            ],
        ),
        InitRuntime::Mcp => (
            json!({"pin": {"enabled": false}}),
            vec![
                "`pin.enabled: false`: an MCP server's tools are judged; there is no chat to pin.",
                "run the server behind Warden: `warden mcp -- <server command...>`.",
            ],
        ),
        InitRuntime::Serve => (
            json!({"gate": {"ownerOffset": "+00:00"}}),
            vec![
                "`gate.ownerOffset`: the consent gate is on; quiet hours use this UTC offset for recipients",
                "  recorded without one. Set it to yours.",
                "start it with a token: `WARDEN_TOKEN=... warden serve`.",
            ],
        ),
        InitRuntime::Generic => (json!({}), Vec::new()),
    };
    (config, specific.into_iter().chain(common).collect())
}

/// Writes the starter configuration to `path`; an existing file is kept unless `force`.
pub(super) fn run(
    runtime: InitRuntime,
    path: &Path,
    force: bool,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<(), Failure> {
    let (config, notes) = starter(runtime);
    let text = serde_json::to_string_pretty(&config).map_err(|e| Failure::failed(e.to_string()))? + "\n";
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::failed(format!("cannot create the folder {}: {e}", dir.display())))?;
    }
    let written = if force {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        tempfile::NamedTempFile::new_in(dir)
            .and_then(|mut tmp| {
                tmp.write_all(text.as_bytes())?;
                tmp.persist(path).map(|_| ()).map_err(|e| e.error)
            })
            .map_err(|e| Failure::failed(format!("cannot write {}: {e}", path.display())))
    } else {
        let file = std::fs::OpenOptions::new().write(true).create_new(true).open(path);
        match file {
            Ok(mut f) => f
                .write_all(text.as_bytes())
                .map_err(|e| Failure::failed(format!("cannot write {}: {e}", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(Failure::invalid(format!(
                "{}: already exists and was left as it is; pass --force to replace it",
                path.display()
            ))),
            Err(e) => Err(Failure::failed(format!("cannot write {}: {e}", path.display()))),
        }
    };
    written?;
    let _ = writeln!(stderr, "wrote {} (check it with `warden validate --config {}`)", path.display(), path.display());
    for note in notes {
        let _ = writeln!(stderr, "  {note}");
    }
    super::print_json(
        stdout,
        &json!({"written": path.display().to_string(), "runtime": runtime.to_possible_value().map(|v| v.get_name().to_string())}),
    )
}
