//! `warden audit-config`, `warden harden` and `warden rollback` through the
//! shipped binary, on copies of real runtime configurations
//! (`tests/fixtures/harden/README.md` says where each came from).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use warden_tests::CliOutput;
use warden_tests::binary::warden_command;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/harden");

/// Runs `warden` with `args` and the environment `env` (HOME and the
/// runtimes' own variables are cleared unless set here).
fn warden_env(args: &[&str], env: &[(&str, &Path)]) -> CliOutput {
    let mut command = warden_command(args);
    for name in ["HOME", "OPENCLAW_CONFIG_PATH", "OPENCLAW_STATE_DIR", "HERMES_HOME", "CLAUDE_CONFIG_DIR"] {
        command.env_remove(name);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    let out = command.stdin(Stdio::null()).output().expect("warden runs");
    CliOutput {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn warden(args: &[&str]) -> CliOutput {
    warden_env(args, &[])
}

/// A fixture copied into a fresh folder under `name`.
fn copy(fixture: &str, name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(name);
    std::fs::copy(Path::new(FIXTURES).join(fixture), &path).expect("copy fixture");
    (dir, path)
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn backups(dir: &Path) -> Vec<String> {
    listing(dir).into_iter().filter(|n| n.contains(".warden-backup-")).collect()
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn rules(path: &Path, runtime: &str) -> Vec<String> {
    let out = warden(&["audit-config", "--runtime", runtime, "--json", &path.display().to_string()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    json(&out.stdout)["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["rule"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Each real configuration: (fixture, file name, runtime, rules it must report).
const REAL: &[(&str, &str, &str, &[&str])] = &[
    ("openclaw.json", "openclaw.json", "openclaw", &["config.openclaw.queue-steer"]),
    (
        "openclaw-commented.json5",
        "openclaw.json",
        "openclaw",
        &[
            "config.openclaw.plugin-not-allowed",
            "config.openclaw.plugin-disabled",
            "config.openclaw.conversation-access",
            "config.openclaw.prompt-injection-blocked",
            "config.openclaw.hook-timeout",
            "config.openclaw.queue-steer",
        ],
    ),
    (
        "hermes-config.yaml",
        "config.yaml",
        "hermes",
        &[
            "config.hermes.plugin-not-enabled",
            "config.hermes.plugin-disabled",
            "config.hermes.approvals-off",
            "config.hermes.cron-auto-approve",
            "config.hermes.hooks-auto-accept",
            "config.hermes.secret-redaction-off",
        ],
    ),
    (
        "hermes-fresh.yaml",
        "config.yaml",
        "hermes",
        &["config.hermes.plugin-not-enabled", "config.hermes.approvals-smart"],
    ),
    (
        "claude-settings.json",
        "settings.json",
        "claude-code",
        &[
            "config.claude-code.bypass-permissions",
            "config.claude-code.broad-allow",
            "config.claude-code.hook-matcher",
            "config.claude-code.hook-timeout",
        ],
    ),
];

#[test]
fn harden_then_rollback_restores_each_real_configuration_byte_for_byte() {
    for (fixture, name, runtime, expected) in REAL {
        let (dir, path) = copy(fixture, name);
        let original = std::fs::read(&path).expect("read");
        let found = rules(&path, runtime);
        for rule in *expected {
            assert!(found.iter().any(|r| r == rule), "{fixture}: {rule} not in {found:?}");
        }
        // The runtime is told by the file's name.
        let out = warden(&["harden", &path.display().to_string()]);
        assert_eq!(out.code, 0, "{fixture}: {}", out.stderr);
        assert!(
            out.stdout.contains("--- ") && out.stdout.contains("+++ ") && out.stdout.contains("@@"),
            "{}",
            out.stdout
        );
        let hardened = std::fs::read(&path).expect("read");
        assert_ne!(hardened, original, "{fixture}: harden changed nothing");
        let saved = backups(dir.path());
        assert_eq!(saved.len(), 1, "{fixture}: {saved:?}");
        assert_eq!(std::fs::read(dir.path().join(&saved[0])).expect("backup"), original, "{fixture}: backup differs");
        // Only what has no automatic fix is left.
        let left = warden(&["audit-config", "--json", &path.display().to_string()]);
        for f in json(&left.stdout)["findings"].as_array().expect("findings") {
            assert!(f["fix"].is_null(), "{fixture}: a fixable finding is left: {f}");
        }
        // The file still parses as its runtime reads it.
        if runtime == &"claude-code" {
            let _ = json(&String::from_utf8_lossy(&hardened));
        }

        let again = warden(&["harden", &path.display().to_string()]);
        assert_eq!(again.code, 0, "{}", again.stderr);
        assert!(again.stdout.contains("nothing to change"), "{fixture}: {}", again.stdout);
        assert_eq!(std::fs::read(&path).expect("read"), hardened, "{fixture}: the second harden changed the file");
        assert_eq!(backups(dir.path()).len(), 1, "{fixture}: the second harden wrote a backup");

        let back = warden(&["rollback", "--file", &path.display().to_string()]);
        assert_eq!(back.code, 0, "{fixture}: {}", back.stderr);
        assert_eq!(std::fs::read(&path).expect("read"), original, "{fixture}: rollback is not byte for byte");
    }
}

#[test]
fn dry_run_prints_the_diff_and_writes_nothing() {
    let (dir, path) = copy("openclaw-commented.json5", "openclaw.json");
    let before = listing(dir.path());
    let original = std::fs::read(&path).expect("read");
    let out = warden(&["harden", "--dry-run", &path.display().to_string()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("-        enabled: false,") && out.stdout.contains("+        enabled: true,"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("dry run: nothing was written"));
    assert_eq!(std::fs::read(&path).expect("read"), original);
    assert_eq!(listing(dir.path()), before);
}

#[test]
fn an_unreadable_configuration_is_refused_with_its_line_and_nothing_changes() {
    let cases: &[(&str, &str, &[u8], &str)] = &[
        ("openclaw.json", "openclaw", b"{\n  plugins: {\n    entries: [\n}\n", "line 4, column 1: unexpected `}`"),
        ("config.yaml", "hermes", b"plugins:\n  enabled: [warden\n", "is not valid yaml"),
        ("settings.json", "claude-code", b"{\"permissions\": }", "line 1, column 17"),
        ("settings.json", "claude-code", b"{\"a\": \"\xff\"}", "not UTF-8 text"),
    ];
    for (name, runtime, text, want) in cases {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        for command in ["audit-config", "harden"] {
            let out = warden(&[command, "--runtime", runtime, &path.display().to_string()]);
            assert_eq!(out.code, 2, "{command} {name}: {}", out.stderr);
            assert!(out.stderr.contains(want), "{command} {name}: {}", out.stderr);
            assert!(out.stderr.starts_with("error: "), "{}", out.stderr);
            assert_eq!(std::fs::read(&path).expect("read"), *text);
            assert_eq!(listing(dir.path()), vec![name.to_string()]);
        }
    }
}

#[test]
fn an_unknown_runtime_or_a_missing_file_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("dir");
    let out = warden(&["audit-config", "--runtime", "cursor", "x.json"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("'cursor'") && out.stderr.contains("openclaw, hermes, claude-code"), "{}", out.stderr);
    let missing = dir.path().join("openclaw.json");
    let out = warden(&["harden", &missing.display().to_string()]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("cannot read openclaw's configuration") && out.stderr.contains("openclaw.json"),
        "{}",
        out.stderr
    );
    let out = warden(&["audit-config", &dir.path().join("notes.txt").display().to_string()]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("cannot be told from its name: pass --runtime"), "{}", out.stderr);
    let out = warden(&["audit-config"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("name the runtime"), "{}", out.stderr);
    assert!(listing(dir.path()).is_empty());
}

#[test]
fn audit_config_fails_ci_only_at_the_risk_asked_for() {
    let (_dir, path) = copy("hermes-fresh.yaml", "config.yaml");
    let p = path.display().to_string();
    let table = warden(&["audit-config", &p]);
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert!(table.stdout.contains("critical  config.hermes.plugin-not-enabled  plugins.enabled"), "{}", table.stdout);
    assert!(table.stdout.contains("fix: add-item plugins.enabled \"warden\""), "{}", table.stdout);
    let critical = warden(&["audit-config", "--fail-on", "critical", &p]);
    assert_eq!(critical.code, 3, "{}", critical.stderr);
    let (_dir, good) = copy("hermes-fresh.yaml", "config.yaml");
    std::fs::write(&good, "plugins:\n  enabled: [warden]\napprovals:\n  mode: smart\n").expect("write");
    let low = warden(&["audit-config", "--fail-on", "medium", &good.display().to_string()]);
    assert_eq!(low.code, 0, "a low finding does not meet `medium`: {}", low.stdout);
    let low = warden(&["audit-config", "--fail-on", "low", &good.display().to_string()]);
    assert_eq!(low.code, 3);
}

#[test]
fn each_runtime_is_found_at_its_default_location() {
    let home = tempfile::tempdir().expect("home");
    let h = home.path();
    for (dir, file, fixture) in [
        (".openclaw", "openclaw.json", "openclaw.json"),
        (".hermes", "config.yaml", "hermes-fresh.yaml"),
        (".claude", "settings.json", "claude-settings.json"),
    ] {
        std::fs::create_dir_all(h.join(dir)).expect("mkdir");
        std::fs::copy(Path::new(FIXTURES).join(fixture), h.join(dir).join(file)).expect("copy");
    }
    for (runtime, expect) in [
        ("openclaw", ".openclaw/openclaw.json"),
        ("hermes", ".hermes/config.yaml"),
        ("claude-code", ".claude/settings.json"),
    ] {
        let out = warden_env(&["audit-config", "--json", "--runtime", runtime], &[("HOME", h)]);
        assert_eq!(out.code, 0, "{runtime}: {}", out.stderr);
        assert!(json(&out.stdout)["path"].as_str().unwrap_or_default().ends_with(expect), "{}", out.stdout);
    }
    // The runtimes' own variables win.
    let other = tempfile::tempdir().expect("other");
    std::fs::copy(Path::new(FIXTURES).join("hermes-config.yaml"), other.path().join("config.yaml")).expect("copy");
    let out =
        warden_env(&["audit-config", "--json", "--runtime", "hermes"], &[("HOME", h), ("HERMES_HOME", other.path())]);
    assert!(
        json(&out.stdout)["path"]
            .as_str()
            .unwrap_or_default()
            .starts_with(&std::fs::canonicalize(other.path()).expect("c").display().to_string())
    );
    let cfg = other.path().join("config.yaml");
    let out = warden_env(
        &["audit-config", "--json", "--runtime", "openclaw"],
        &[("HOME", h), ("OPENCLAW_CONFIG_PATH", &h.join(".openclaw/openclaw.json"))],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let _ = cfg;
}

#[cfg(unix)]
#[test]
fn a_symlinked_configuration_stays_a_link_and_its_target_is_hardened() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, real) = copy("openclaw-commented.json5", "real-openclaw.json");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let link = dir.path().join("openclaw.json");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let original = std::fs::read(&real).expect("read");
    let out = warden(&["harden", &link.display().to_string()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(std::fs::symlink_metadata(&link).expect("meta").file_type().is_symlink(), "the link was replaced");
    assert_ne!(std::fs::read(&real).expect("read"), original);
    assert_eq!(std::fs::metadata(&real).expect("meta").permissions().mode() & 0o777, 0o640, "the mode changed");
    let saved = backups(dir.path());
    assert_eq!(saved.len(), 1);
    assert!(saved[0].starts_with("real-openclaw.json.warden-backup-"), "{saved:?}");
    assert_eq!(std::fs::metadata(dir.path().join(&saved[0])).expect("meta").permissions().mode() & 0o777, 0o640);
    let back = warden(&["rollback", "--file", &link.display().to_string()]);
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert!(std::fs::symlink_metadata(&link).expect("meta").file_type().is_symlink());
    assert_eq!(std::fs::read(&real).expect("read"), original);
}

#[test]
fn each_harden_keeps_its_own_backup_and_rollback_takes_the_newest() {
    let (dir, path) = copy("hermes-fresh.yaml", "config.yaml");
    let p = path.display().to_string();
    let first = std::fs::read(&path).expect("read");
    assert_eq!(warden(&["harden", &p]).code, 0);
    let second = b"approvals:\n  mode: 'off'\n".to_vec();
    std::fs::write(&path, &second).expect("write");
    assert_eq!(warden(&["harden", &p]).code, 0);
    let saved = backups(dir.path());
    assert_eq!(saved.len(), 2, "{saved:?}");
    let back = warden(&["rollback", "--file", &p]);
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert_eq!(std::fs::read(&path).expect("read"), second, "the newest backup is restored");
    // An older one by name.
    let older = saved.iter().find(|n| std::fs::read(dir.path().join(n)).ok().as_deref() == Some(first.as_slice()));
    let older = dir.path().join(older.expect("the first backup"));
    let back = warden(&["rollback", &older.display().to_string()]);
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert_eq!(std::fs::read(&path).expect("read"), first);
}

#[test]
fn a_backup_of_another_file_is_refused_and_nothing_changes() {
    let (dir, a) = copy("openclaw.json", "openclaw.json");
    let b = dir.path().join("openclaw-b.json");
    std::fs::copy(Path::new(FIXTURES).join("openclaw.json"), &b).expect("copy");
    assert_eq!(warden(&["harden", &b.display().to_string()]).code, 0);
    let backup = dir.path().join(&backups(dir.path())[0]);
    let before = std::fs::read(&a).expect("read");
    let out = warden(&["rollback", "--file", &a.display().to_string(), &backup.display().to_string()]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("is a backup of") && out.stderr.contains("openclaw-b.json, not of"), "{}", out.stderr);
    assert_eq!(std::fs::read(&a).expect("read"), before);
    // Not a backup at all.
    let out = warden(&["rollback", &a.display().to_string()]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("is not a backup `warden harden` wrote"), "{}", out.stderr);
    // No backup yet.
    let out = warden(&["rollback", "--file", &a.display().to_string()]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("has no backup beside it"), "{}", out.stderr);
    assert_eq!(std::fs::read(&a).expect("read"), before);
}

#[test]
fn crlf_line_ends_and_a_byte_order_mark_survive_harden_and_rollback() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("settings.json");
    let text = "\u{feff}{\r\n  \"permissions\": {\r\n    \"allow\": [\"Bash(*)\", \"Read\"]\r\n  }\r\n}\r\n";
    std::fs::write(&path, text).expect("write");
    assert_eq!(warden(&["harden", &path.display().to_string()]).code, 0);
    let hardened = std::fs::read_to_string(&path).expect("read");
    assert!(hardened.starts_with('\u{feff}'));
    assert!(!hardened.contains("Bash(*)"));
    assert!(!hardened.replace("\r\n", "").contains('\n'), "{hardened:?}");
    assert_eq!(warden(&["rollback", "--file", &path.display().to_string()]).code, 0);
    assert_eq!(std::fs::read_to_string(&path).expect("read"), text);
}
