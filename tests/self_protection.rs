//! Approval keys and self-protection, through the `warden` binary run as a
//! subprocess (`warden check tool`, `warden approve`, `warden hook claude-code`)
//! and through the component.

use serde_json::{Value, json};
use std::path::PathBuf;
use warden_tests::setup::Setup;
use warden_tests::{CliOutput, T0, TempDb};

fn check(s: &Setup, call: &Value) -> Value {
    s.check_tool(call)
}

fn approve(s: &Setup, extra: &[&str]) -> CliOutput {
    s.run_in_dir(&[&["approve"][..], extra].concat(), "")
}

fn decided(v: &Value) -> (String, String) {
    (v["decision"].as_str().unwrap_or("?").to_string(), v["rule"].as_str().unwrap_or("?").to_string())
}

fn bash(command: &str, cwd: &str) -> Value {
    json!({"toolName": "Bash", "arguments": {"command": command}, "sessionId": "s1", "callId": "c1", "cwd": cwd, "nowMs": T0})
}

fn tool(name: &str, args: Value, cwd: &str) -> Value {
    json!({"toolName": name, "arguments": args, "sessionId": "s1", "cwd": cwd, "nowMs": T0})
}

/// Every way of changing one field of a real key: another value, case,
/// truncation, lengthening, padding and re-encoding.
fn alterations(key: &str) -> Vec<(String, String)> {
    let fields: Vec<&str> = key.split(':').collect();
    let mut out = Vec::new();
    for (i, field) in fields.iter().enumerate() {
        let with = |value: String| {
            let mut f: Vec<String> = fields.iter().map(|s| s.to_string()).collect();
            f[i] = value;
            f.join(":")
        };
        let mut flipped: Vec<char> = field.chars().collect();
        if let Some(last) = flipped.last_mut() {
            *last = match *last {
                '0' => '1',
                'o' => 'a',
                _ => '0',
            };
        }
        out.push((format!("field {i} changed"), with(flipped.into_iter().collect())));
        out.push((format!("field {i} upper case"), with(field.to_uppercase())));
        out.push((format!("field {i} truncated"), with(field.chars().skip(1).collect())));
        out.push((format!("field {i} lengthened"), with(format!("{field}0"))));
        out.push((format!("field {i} padded"), with(format!("{field} "))));
    }
    out.push(("scope letter widened".into(), key.replacen("t2:o:", "t2:a:", 1)));
    out.push(("whole key truncated".into(), key[..key.len() - 1].to_string()));
    out.push(("percent-encoded".into(), key.replace(':', "%3A")));
    out.push(("earlier format".into(), key.replacen("t2:", "t1:", 1)));
    out.push(("field added".into(), format!("{key}:00")));
    out.retain(|(_, k)| k != key);
    out
}

#[test]
fn a_forged_widened_cross_session_or_altered_key_is_refused_by_warden_approve_and_the_genuine_key_works_once() {
    let s = Setup::new(&json!({}));
    let call = bash("rm -rf \"$TARGET\"", "/ws");
    let asked = check(&s, &call);
    assert_eq!(decided(&asked), ("ask".into(), "exec.recursive-delete-dynamic".into()));
    let key = asked["approvalKey"].as_str().expect("key").to_string();

    for (what, altered) in alterations(&key) {
        let out = approve(&s, &["--key", &altered, "--scope", "once"]);
        assert_eq!(out.code, warden_host::cli::EXIT_INVALID, "{what}: {}", out.stderr);
        assert!(out.stderr.starts_with("error: key: "), "{what}: {}", out.stderr);
    }
    let refusals: &[(&[&str], &str)] = &[
        (&["--scope", "always"], "scope: `always` is broader than the `once` this call offers"),
        (&["--scope", "session"], "scope: `session` is broader"),
        (&["--scope", "once", "--session", "s2"], "sessionId: `s2` is not the session this call was asked in"),
        (&["--scope", "once", "--call", "c2"], "callId: `c2` is not the call this call was asked in"),
    ];
    for (extra, expected) in refusals {
        let out = approve(&s, &[&["--key", key.as_str()][..], extra].concat());
        assert_eq!(out.code, warden_host::cli::EXIT_INVALID, "{extra:?}: {}", out.stderr);
        assert!(out.stderr.contains(expected), "{extra:?}: {}", out.stderr);
    }
    // A key another database's warden gave (another secret) is refused here.
    let other = Setup::new(&json!({}));
    let foreign = check(&other, &call)["approvalKey"].as_str().expect("key").to_string();
    assert_ne!(foreign, key);
    let out = approve(&s, &["--key", &foreign, "--scope", "once"]);
    assert_eq!(out.code, warden_host::cli::EXIT_INVALID);
    assert!(out.stderr.contains("was altered or was not given by this warden"), "{}", out.stderr);
    assert_eq!(s.db.answers(), 0, "no refused answer was recorded");

    // The genuine key works, once.
    let out = approve(&s, &["--key", &key, "--scope", "once"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(decided(&check(&s, &call)), ("allow".into(), "memory.allow".into()));
    assert_eq!(decided(&check(&s, &call)), ("ask".into(), "exec.recursive-delete-dynamic".into()));
}

#[test]
fn the_approval_secret_is_a_private_file_beside_the_database_and_a_bad_one_fails_closed() {
    let s = Setup::new(&json!({}));
    check(&s, &bash("ls", "/ws"));
    let key_file = PathBuf::from(format!("{}.key", s.db_path));
    let meta = std::fs::metadata(&key_file).expect("key file");
    assert_eq!(meta.len(), warden_host::host_context::SECRET_BYTES as u64);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let out = s.run_in_dir(&["check", "tool", "--replay"], &bash("ls", "/ws").to_string());
        assert_eq!(out.code, warden_host::cli::EXIT_FAILURE);
        assert!(out.stderr.contains("must be readable by its owner only"), "{}", out.stderr);
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    }
    std::fs::write(&key_file, b"short").expect("truncate");
    let out = approve(&s, &["--key", "t2:x", "--scope", "once"]);
    assert_eq!(out.code, warden_host::cli::EXIT_FAILURE);
    assert!(out.stderr.contains("holds 5 bytes, not the 32"), "{}", out.stderr);
}

#[test]
fn forged_scope_letter_is_refused_through_the_component() {
    let db = TempDb::new();
    let rt = warden_tests::runtime("{}", db.open());
    let asked = rt.check_tool_call(&warden_tests::tool_call("Bash", json!({"command": "rm -rf \"$T\""}), "s1", T0));
    assert_eq!(warden_tests::decided(&asked), ("ask", "exec.recursive-delete-dynamic"));
    let key = asked.approval_key.clone().expect("key");
    let approval = |key: String, scope| warden_host::bindings::exports::warden::guard::policy::Approval {
        key,
        allow: true,
        scope,
        session_id: None,
        call_id: None,
        now_ms: T0,
        idempotency_key: None,
    };
    use warden_host::bindings::warden::guard::types::ApprovalScope;
    for (what, altered) in alterations(&key) {
        let result = rt.record_approval(&approval(altered, ApprovalScope::Once));
        assert!(
            matches!(&result, Err(warden_host::CallError::Policy(warden_host::bindings::warden::guard::types::PolicyError::InvalidInput(m))) if m.starts_with("key: ")),
            "{what}: {result:?}"
        );
    }
    assert_eq!(db.answers(), 0);
    assert_eq!(rt.record_approval(&approval(key, ApprovalScope::Once)), Ok(()));
    assert_eq!(db.answers(), 1);
}

/// The agent's own tool calls against warden, each with the `self.*` rule that denies it.
fn attacks(s: &Setup, home: &str) -> Vec<(Value, &'static str)> {
    let db = &s.db_path;
    let dir = s.dir().display().to_string();
    let config = &s.config;
    let shell = |c: String| bash(&c, "/ws");
    vec![
        (shell("warden approve --key t2:x --scope always".into()), "self.admin-command"),
        (
            shell(format!("{} approve --key k --scope always", warden_tests::binary::warden_binary().display())),
            "self.admin-command",
        ),
        (shell("sudo warden gate opt-out --recipient x".into()), "self.admin-command"),
        (shell("env -i warden serve --config /tmp/open.json".into()), "self.admin-command"),
        (shell("sh -c 'warden approve --scope always --key k'".into()), "self.admin-command"),
        (shell("w=warden; \"$w\" approve --key k --scope always".into()), "self.admin-command"),
        (shell(format!("sqlite3 {db} 'delete from records'")), "self.database-client"),
        (shell(format!("sqlite3 '{db}' 'delete from records'")), "self.database-client"),
        (shell(format!("cd {dir} && sqlite3 ./warden.db 'delete from records'")), "self.database-client"),
        (bash("sqlite3 warden.db 'delete from records'", &dir), "self.database-client"),
        (shell(format!("sqlite3 {dir}/sub/../warden.db .dump")), "self.database-client"),
        (shell(format!("DB={db}; env sqlite3 \"$DB\" 'delete from records'")), "self.database-client"),
        (shell(format!("sudo sh -c \"sqlite3 {db} 'delete from records'\"")), "self.database-client"),
        (shell(format!("ln -s {dir} /tmp/alias && sqlite3 /tmp/alias/warden.db .dump")), "self.database-client"),
        (
            shell(format!("python3 -c \"import sqlite3; sqlite3.connect('{db}').execute('delete from records')\"")),
            "self.database-client",
        ),
        (shell(format!("cat {db}.key")), "self.protected-file"),
        (shell(format!("rm -f {db}-wal")), "self.protected-file"),
        // Sibling globs share the folder's literal head; a doubled slash is the same file.
        (shell(format!("rm -f {dir}//warden.db-shm")), "self.protected-file"),
        (shell(format!("cp {db} /tmp/copy.db")), "self.protected-file"),
        (shell(format!("echo '{{}}' > {config}")), "self.protected-file"),
        (bash("echo '{}' > .claude/settings.json", "/ws"), "self.protected-file"),
        (bash("sed -i /warden/d .claude/settings.local.json", "/ws"), "self.protected-file"),
        (bash("rm ~/.claude/settings.json", "/ws"), "self.protected-file"),
        (tool("Write", json!({"file_path": ".claude/settings.json", "content": "{}"}), "/ws"), "self.protected-file"),
        (
            tool("Write", json!({"file_path": format!("{home}/.claude/settings.json"), "content": "{}"}), "/ws"),
            "self.protected-file",
        ),
        (
            tool(
                "Edit",
                json!({"file_path": config, "old_string": "{", "new_string": "{\"tools\":{\"enabled\":false},"}),
                "/ws",
            ),
            "self.protected-file",
        ),
        (tool("Read", json!({"file_path": format!("{db}.key")}), "/ws"), "self.protected-file"),
    ]
}

#[test]
fn warden_approve_a_database_client_on_its_database_and_a_write_to_hook_settings_are_denied_through_the_binary() {
    let s = Setup::new(&json!({}));
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    for (call, rule) in attacks(&s, &home) {
        let v = check(&s, &call);
        assert_eq!(decided(&v), ("deny".to_string(), rule.to_string()), "{call}: {}", v["reason"]);
        assert_eq!(v["risk"], "critical", "{call}");
    }
    let lookalikes = [
        bash(&format!("sqlite3 {}/app.db 'delete from sessions'", s.dir().display()), "/ws"),
        bash("sqlite3 data/warden.db.bak .dump", "/ws"),
        bash("cat /ws/config/settings.json", "/ws"),
        bash("warden --version", "/ws"),
        bash("warden validate --config /ws/w.json", "/ws"),
        bash("echo warden approve --scope always", "/ws"),
        tool("Read", json!({"file_path": "/ws/.vscode/settings.json"}), "/ws"),
        tool("Read", json!({"file_path": format!("{}/notes.txt", s.dir().display())}), "/ws"),
    ];
    for call in lookalikes {
        let v = check(&s, &call);
        assert_eq!(decided(&v), ("allow".to_string(), "tools.allow".to_string()), "{call}: {}", v["reason"]);
    }
}

#[test]
fn the_claude_code_hook_denies_self_attacks_with_their_rule() {
    let s = Setup::new(&json!({}));
    let event = |tool: &str, input: Value| {
        json!({"session_id": "cc-1", "cwd": "/work/project", "hook_event_name": "PreToolUse",
               "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_01"})
        .to_string()
    };
    let cases = [
        (event("Bash", json!({"command": "warden approve --key k --scope always"})), "self.admin-command"),
        (
            event("Bash", json!({"command": format!("sqlite3 {} 'delete from records'", s.db_path)})),
            "self.database-client",
        ),
        (
            event("Write", json!({"file_path": "/work/project/.claude/settings.json", "content": "{}"})),
            "self.protected-file",
        ),
        (
            event("Edit", json!({"file_path": ".claude/settings.local.json", "old_string": "a", "new_string": "b"})),
            "self.protected-file",
        ),
    ];
    for (e, rule) in cases {
        let out = s.run_in_dir(&["hook", "claude-code"], &e);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let v: Value = serde_json::from_str(&out.stdout).unwrap_or(Value::Null);
        let answer = &v["hookSpecificOutput"];
        assert_eq!(answer["permissionDecision"], "deny", "{e}");
        let reason = answer["permissionDecisionReason"].as_str().unwrap_or_default();
        assert!(reason.starts_with(&format!("Warden ({rule}): ")), "{reason}");
    }
    // An unrelated settings file is not warden's.
    let e = event("Write", json!({"file_path": "/work/project/config/settings.json", "content": "{}"}));
    let out = s.run_in_dir(&["hook", "claude-code"], &e);
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.stderr);
}

#[test]
fn with_a_home_set_the_warden_binary_judges_paths_from_a_working_directory_in_home_by_where_they_lead() {
    // A working directory under the configured home is `~/project` once
    // normalized; relative paths from it are joined, or walked when they
    // climb, and each reaches the protected path it names.
    let s = Setup::new(&json!({"tools": {"home": "/home/dev"}}));
    let cwd = "/home/dev/project";
    let cases = [
        ("cat .env", "deny", "path.protected"),
        ("cat ././/.env", "deny", "path.protected"),
        ("cat ../.ssh/id_rsa", "deny", "path.protected"),
        ("cd .. && cat .ssh/id_rsa", "deny", "path.protected"),
        ("cat ~/project/../.aws/credentials", "deny", "path.protected"),
        ("cat /home/dev/.ssh/id_rsa", "deny", "path.protected"),
        ("cat src/../.env.example", "allow", "tools.allow"),
        ("cat src/main.rs", "allow", "tools.allow"),
    ];
    for (command, decision, rule) in cases {
        let v = check(&s, &bash(command, cwd));
        assert_eq!(decided(&v), (decision.to_string(), rule.to_string()), "`{command}`: {}", v["reason"]);
    }
}
