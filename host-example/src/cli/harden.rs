//! `warden audit-config`, `warden harden` and `warden rollback`: a runtime's
//! own configuration, audited by the component (`runtime-config`), fixed
//! with a backup beside the file, and restored from one byte for byte.
//!
//! The component decides what is wrong and how the text changes; this file
//! only finds, reads, backs up and writes files.

use super::{Failure, HostArgs, cache_dir, options};
use crate::bindings::exports::warden::guard::runtime_config::{AgentRuntime, ConfigFinding, FixAction};
use crate::bindings::warden::guard::types::Risk;
use crate::memory_storage::MemoryStorage;
use crate::runtime::Runtime;
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a backup's name adds to the file's name, before its time.
pub const BACKUP_MARK: &str = ".warden-backup-";
/// Most backups of one file written in the same millisecond (a counter
/// tells them apart); past it `harden` refuses to write (99).
pub const MAX_SAME_TIME_BACKUPS: u32 = 99;
/// Exit code of `audit-config --fail-on`: the findings were printed and one
/// meets the threshold.
pub const EXIT_FINDINGS: i32 = super::EXIT_THRESHOLD;

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuntimeArg {
    /// OpenClaw: `$OPENCLAW_CONFIG_PATH`, else `$OPENCLAW_STATE_DIR/openclaw.json`, else `~/.openclaw/openclaw.json`.
    Openclaw,
    /// Hermes Agent: `$HERMES_HOME/config.yaml`, else `~/.hermes/config.yaml`.
    Hermes,
    /// Claude Code: `$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`.
    ClaudeCode,
}

impl RuntimeArg {
    fn wit(self) -> AgentRuntime {
        match self {
            RuntimeArg::Openclaw => AgentRuntime::Openclaw,
            RuntimeArg::Hermes => AgentRuntime::Hermes,
            RuntimeArg::ClaudeCode => AgentRuntime::ClaudeCode,
        }
    }

    fn name(self) -> &'static str {
        match self {
            RuntimeArg::Openclaw => "openclaw",
            RuntimeArg::Hermes => "hermes",
            RuntimeArg::ClaudeCode => "claude-code",
        }
    }

    /// The runtime a file's name tells, when it does.
    fn from_name(path: &Path) -> Option<RuntimeArg> {
        let name = path.file_name()?.to_str()?;
        let name = name.split(BACKUP_MARK).next().unwrap_or(name);
        if name.starts_with("openclaw") && (name.ends_with(".json") || name.ends_with(".json5")) {
            Some(RuntimeArg::Openclaw)
        } else if name.ends_with(".yaml") || name.ends_with(".yml") {
            Some(RuntimeArg::Hermes)
        } else if name.starts_with("settings") && name.ends_with(".json") {
            Some(RuntimeArg::ClaudeCode)
        } else {
            None
        }
    }

    /// Where the runtime keeps its configuration by default.
    fn default_path(self) -> Result<PathBuf, Failure> {
        let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = || {
            env("HOME").ok_or_else(|| {
                Failure::invalid(format!(
                    "HOME is not set, so {}'s configuration cannot be found: pass its PATH",
                    self.name()
                ))
            })
        };
        Ok(match self {
            RuntimeArg::Openclaw => match (env("OPENCLAW_CONFIG_PATH"), env("OPENCLAW_STATE_DIR")) {
                (Some(path), _) => path,
                (None, Some(dir)) => dir.join("openclaw.json"),
                (None, None) => home()?.join(".openclaw").join("openclaw.json"),
            },
            RuntimeArg::Hermes => match env("HERMES_HOME") {
                Some(dir) => dir.join("config.yaml"),
                None => home()?.join(".hermes").join("config.yaml"),
            },
            RuntimeArg::ClaudeCode => match env("CLAUDE_CONFIG_DIR") {
                Some(dir) => dir.join("settings.json"),
                None => home()?.join(".claude").join("settings.json"),
            },
        })
    }
}

/// Which file, of which runtime.
#[derive(Args, Debug, Clone)]
pub struct Target {
    /// The runtime [default: told by the file's name: `openclaw*.json`, `*.yaml`, `settings*.json`].
    #[arg(long, value_enum)]
    runtime: Option<RuntimeArg>,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RiskArg {
    Low,
    Medium,
    High,
    Critical,
}

fn risk_rank(r: Risk) -> RiskArg {
    match r {
        Risk::Low => RiskArg::Low,
        Risk::Medium => RiskArg::Medium,
        Risk::High => RiskArg::High,
        Risk::Critical => RiskArg::Critical,
    }
}

pub fn risk_name(r: Risk) -> &'static str {
    match r {
        Risk::Low => "low",
        Risk::Medium => "medium",
        Risk::High => "high",
        Risk::Critical => "critical",
    }
}

/// A finding as JSON; the fix's value is JSON itself, not a string.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FindingJson {
    pub rule: String,
    pub risk: &'static str,
    pub path: String,
    pub detail: String,
    pub fix: Option<FixJson>,
}

#[derive(Serialize)]
pub struct FixJson {
    pub action: &'static str,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
}

impl From<&ConfigFinding> for FindingJson {
    fn from(f: &ConfigFinding) -> FindingJson {
        FindingJson {
            rule: f.rule.clone(),
            risk: risk_name(f.risk),
            path: f.path.clone(),
            detail: f.detail.clone(),
            fix: f.fix.as_ref().map(|x| FixJson {
                action: action_name(x.action),
                path: x.path.clone(),
                value: x.value.as_deref().and_then(|v| serde_json::from_str(v).ok()),
            }),
        }
    }
}

fn action_name(a: FixAction) -> &'static str {
    match a {
        FixAction::Set => "set",
        FixAction::Remove => "remove",
        FixAction::AddItem => "add-item",
        FixAction::RemoveItem => "remove-item",
    }
}

/// The runtime name `openclaw`, `hermes` or `claude-code` as the WIT enum.
pub fn parse_runtime(name: &str) -> Result<AgentRuntime, String> {
    match name {
        "openclaw" => Ok(AgentRuntime::Openclaw),
        "hermes" => Ok(AgentRuntime::Hermes),
        "claude-code" => Ok(AgentRuntime::ClaudeCode),
        other => Err(format!(
            "runtime: `{other}` is not a runtime whose configuration can be audited: use openclaw, hermes or claude-code"
        )),
    }
}

/// A runtime with no policy: the audit needs none, and nothing is stored.
fn start(host: &HostArgs) -> Result<Runtime, Failure> {
    let mut opts = options(host, Arc::new(MemoryStorage::default()), None);
    opts.cache_dir = cache_dir(host);
    Runtime::without_policy(opts).map_err(|e| Failure::failed(e.to_string()))
}

fn call(e: crate::runtime::CallError, path: &Path) -> Failure {
    match e {
        crate::runtime::CallError::Policy(crate::bindings::warden::guard::types::PolicyError::InvalidInput(m)) => {
            Failure::invalid(format!("{}: {m}; nothing was changed", path.display()))
        }
        other => Failure::failed(format!("{}: {other}; nothing was changed", path.display())),
    }
}

/// The file to work on (symbolic links followed, so the link stays and its
/// target is what changes) and its runtime.
fn resolve(target: &Target, path: Option<PathBuf>) -> Result<(RuntimeArg, PathBuf), Failure> {
    let (runtime, path) = match (target.runtime, path) {
        (Some(r), Some(p)) => (r, p),
        (Some(r), None) => (r, r.default_path()?),
        (None, Some(p)) => match RuntimeArg::from_name(&p) {
            Some(r) => (r, p),
            None => {
                return Err(Failure::invalid(format!(
                    "--runtime: the runtime of `{}` cannot be told from its name: pass --runtime openclaw, hermes or \
                     claude-code",
                    p.display()
                )));
            }
        },
        (None, None) => {
            return Err(Failure::invalid(
                "--runtime: name the runtime (openclaw, hermes or claude-code) or the configuration file",
            ));
        }
    };
    let real = std::fs::canonicalize(&path).map_err(|e| {
        Failure::invalid(format!("cannot read {}'s configuration {}: {e}", runtime.name(), path.display()))
    })?;
    if !real.is_file() {
        return Err(Failure::invalid(format!("{} is not a regular file", path.display())));
    }
    Ok((runtime, real))
}

fn read_text(path: &Path) -> Result<String, Failure> {
    let bytes = std::fs::read(path).map_err(|e| Failure::invalid(format!("cannot read {}: {e}", path.display())))?;
    String::from_utf8(bytes).map_err(|e| {
        Failure::invalid(format!(
            "{}: the file is not UTF-8 text (invalid byte at offset {}); nothing was changed",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

fn out(stdout: &mut dyn Write, text: &str) -> Result<(), Failure> {
    stdout.write_all(text.as_bytes()).map_err(|e| Failure::failed(format!("cannot write the answer: {e}")))
}

/// `warden audit-config`.
pub(super) fn audit(
    host: &HostArgs,
    target: &Target,
    path: Option<PathBuf>,
    json: bool,
    fail_on: Option<RiskArg>,
    stdout: &mut dyn Write,
) -> Result<(), Failure> {
    let (runtime, path) = resolve(target, path)?;
    let text = read_text(&path)?;
    let findings = start(host)?.audit_config(runtime.wit(), &text).map_err(|e| call(e, &path))?;
    if json {
        let body = serde_json::json!({
            "runtime": runtime.name(),
            "path": path.display().to_string(),
            "findings": findings.iter().map(FindingJson::from).collect::<Vec<_>>(),
        });
        let text = serde_json::to_string_pretty(&body).map_err(|e| Failure::failed(e.to_string()))?;
        out(stdout, &format!("{text}\n"))?;
    } else {
        out(stdout, &table(runtime, &path, &findings))?;
    }
    match fail_on {
        Some(t) if findings.iter().any(|f| risk_rank(f.risk) >= t) => Err(Failure {
            code: EXIT_FINDINGS,
            message: format!("a finding is `{}` or more severe", format!("{t:?}").to_lowercase()),
        }),
        _ => Ok(()),
    }
}

fn table(runtime: RuntimeArg, path: &Path, findings: &[ConfigFinding]) -> String {
    let mut s = String::new();
    let fixable = findings.iter().filter(|f| f.fix.is_some()).count();
    s.push_str(&format!("{} configuration {}: {} finding(s)", runtime.name(), path.display(), findings.len()));
    if fixable > 0 {
        s.push_str(&format!(", {fixable} fixed by `warden harden`"));
    }
    s.push('\n');
    for f in findings {
        s.push_str(&format!("\n{:<9} {}  {}\n", risk_name(f.risk), f.rule, f.path));
        s.push_str(&format!("          {}\n", f.detail));
        match &f.fix {
            Some(x) => {
                let value = x.value.as_deref().map(|v| format!(" {v}")).unwrap_or_default();
                s.push_str(&format!("          fix: {} {}{value}\n", action_name(x.action), x.path));
            }
            None => s.push_str("          fix: by hand\n"),
        }
    }
    s
}

/// `warden harden`.
pub(super) fn harden(
    host: &HostArgs,
    target: &Target,
    path: Option<PathBuf>,
    dry_run: bool,
    stdout: &mut dyn Write,
) -> Result<(), Failure> {
    let (runtime, path) = resolve(target, path)?;
    let text = read_text(&path)?;
    let fixed = start(host)?.harden_config(runtime.wit(), &text).map_err(|e| call(e, &path))?;
    if fixed == text {
        return out(stdout, &format!("{}: nothing to change\n", path.display()));
    }
    let shown = path.display().to_string();
    let diff = similar::TextDiff::from_lines(&text, &fixed);
    out(stdout, &diff.unified_diff().context_radius(3).header(&shown, &shown).to_string())?;
    if dry_run {
        return out(stdout, "dry run: nothing was written\n");
    }
    let backup = write_backup(&path, text.as_bytes())?;
    if let Err(e) = write_atomic(&path, fixed.as_bytes()) {
        let _ = std::fs::remove_file(&backup);
        return Err(e);
    }
    out(stdout, &format!("hardened {}; backup {}\n", path.display(), backup.display()))
}

/// `NAME.warden-backup-20261202T010203.456Z[-N]` beside the file, written
/// once (never over another), with the file's permissions.
fn write_backup(path: &Path, bytes: &[u8]) -> Result<PathBuf, Failure> {
    let now = crate::json::now_ms();
    let stamp: String = super::gate::utc(now).chars().filter(|c| !matches!(c, '-' | ':')).collect();
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mode = std::fs::metadata(path).map(|m| m.permissions()).ok();
    for n in 1..=MAX_SAME_TIME_BACKUPS {
        let suffix = if n == 1 { String::new() } else { format!("-{n}") };
        let backup = path.with_file_name(format!("{name}{BACKUP_MARK}{stamp}{suffix}"));
        let file = std::fs::OpenOptions::new().write(true).create_new(true).open(&backup);
        match file {
            Ok(mut f) => {
                if let Some(p) = &mode {
                    let _ = f.set_permissions(p.clone());
                }
                f.write_all(bytes).and_then(|()| f.sync_all()).map_err(|e| {
                    let _ = std::fs::remove_file(&backup);
                    Failure::failed(format!("cannot write the backup {}: {e}; nothing was changed", backup.display()))
                })?;
                return Ok(backup);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(Failure::failed(format!(
                    "cannot write the backup {}: {e}; nothing was changed",
                    backup.display()
                )));
            }
        }
    }
    Err(Failure::failed(format!(
        "{MAX_SAME_TIME_BACKUPS} backups of {} already have this time; nothing was changed",
        path.display()
    )))
}

/// Replaces `path` with `bytes` in one rename, keeping its permissions: a
/// crash leaves the old file or the new one, never half of one.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let fail =
        |e: std::io::Error| Failure::failed(format!("cannot write {}: {e}; nothing was changed", path.display()));
    let mut tmp = tempfile::Builder::new().prefix(".warden-").tempfile_in(dir).map_err(fail)?;
    tmp.write_all(bytes).and_then(|()| tmp.as_file().sync_all()).map_err(fail)?;
    if let Ok(meta) = std::fs::metadata(path) {
        tmp.as_file().set_permissions(meta.permissions()).map_err(fail)?;
    }
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}

/// The file a backup was made of, and the backup's order among its siblings.
fn backup_of(backup: &Path) -> Option<(PathBuf, (String, u32))> {
    let name = backup.file_name()?.to_str()?;
    let (original, stamp) = name.rsplit_once(BACKUP_MARK)?;
    let (time, n) = match stamp.split_once('-') {
        Some((t, n)) => (t, n.parse::<u32>().ok()?),
        None => (stamp, 1),
    };
    let ok = time.len() == "20261202T010203.456Z".len()
        && time.ends_with('Z')
        && time.chars().filter(|c| c.is_ascii_digit()).count() == 17;
    (ok && !original.is_empty()).then(|| (backup.with_file_name(original), (time.to_string(), n)))
}

/// `warden rollback`.
pub(super) fn rollback(
    target: &Target,
    file: Option<PathBuf>,
    backup: Option<PathBuf>,
    stdout: &mut dyn Write,
) -> Result<(), Failure> {
    let backup = match backup {
        Some(b) => {
            let real = std::fs::canonicalize(&b)
                .map_err(|e| Failure::invalid(format!("cannot read the backup {}: {e}", b.display())))?;
            let (original, _) = backup_of(&real).ok_or_else(|| {
                Failure::invalid(format!(
                    "`{}` is not a backup `warden harden` wrote (NAME{BACKUP_MARK}YYYYMMDDTHHMMSS.mmmZ)",
                    b.display()
                ))
            })?;
            if let Some(f) = &file {
                let f = std::fs::canonicalize(f).unwrap_or_else(|_| f.clone());
                if f != original {
                    return Err(Failure::invalid(format!(
                        "{} is a backup of {}, not of {}; nothing was changed",
                        b.display(),
                        original.display(),
                        f.display()
                    )));
                }
            }
            real
        }
        None => {
            let (_, path) = resolve(target, file)?;
            latest_backup(&path)?
        }
    };
    let (original, _) = backup_of(&backup).ok_or_else(|| Failure::invalid("not a backup"))?;
    let bytes = std::fs::read(&backup)
        .map_err(|e| Failure::invalid(format!("cannot read the backup {}: {e}", backup.display())))?;
    // A link to the configuration stays a link: its target is what is restored.
    let original = std::fs::canonicalize(&original).unwrap_or(original);
    write_atomic(&original, &bytes)?;
    out(stdout, &format!("restored {} from {}\n", original.display(), backup.display()))
}

fn latest_backup(path: &Path) -> Result<PathBuf, Failure> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Failure::invalid(format!("cannot list {} for backups: {e}", dir.display())))?;
    let best = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| backup_of(&p).filter(|(o, _)| o == path).map(|(_, order)| (order, p)))
        .max_by(|a, b| a.0.cmp(&b.0));
    best.map(|(_, p)| p).ok_or_else(|| {
        Failure::invalid(format!("{} has no backup beside it ({BACKUP_MARK}...); nothing was changed", path.display()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backups_written_in_the_same_instant_never_overwrite_each_other() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, "a: 1\n").expect("write");
        let written: Vec<PathBuf> = (0..20)
            .map(|i| write_backup(&path, format!("v{i}").as_bytes()).map_err(|f| f.message).expect("backup"))
            .collect();
        for (i, b) in written.iter().enumerate() {
            assert_eq!(std::fs::read_to_string(b).expect("read"), format!("v{i}"), "{}", b.display());
        }
        // The newest is the one written last, counters ordered as numbers (`-10` after `-9`).
        assert_eq!(latest_backup(&path).map_err(|f| f.message).expect("latest"), written[19]);
    }
}
