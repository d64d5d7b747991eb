//! The README's tested snippets, run in order as a newcomer would copy them:
//! every fenced block after a `<!-- tested: NAME -->` line, in a fresh home
//! folder with the built `warden` first on PATH. In a `console` block each
//! `$ ` line (with its `\` continuation lines) runs in `sh` with stderr
//! joined to stdout, and what follows it up to the next `$ ` is what it must
//! print: compared without whitespace, `…` matching anything. The snippets
//! only pipe JSON into `warden`; nothing they name is executed.

use std::path::{Path, PathBuf};
use std::process::Command;

const README: &str = include_str!("../README.md");
const MARK: &str = "<!-- tested: ";

/// One tested block: its name, its fence's info string, its text.
struct Block {
    name: String,
    lang: String,
    body: String,
}

fn tested_blocks() -> Vec<Block> {
    let lines: Vec<&str> = README.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.trim().strip_prefix(MARK) else { continue };
        let name = rest.trim_end_matches("-->").trim().to_string();
        let fence = lines.get(i + 1).copied().unwrap_or_default();
        assert!(fence.starts_with("```"), "the line after `{line}` must open a fenced block, got `{fence}`");
        let lang = fence.trim_start_matches('`').trim().to_string();
        let body: Vec<&str> = lines[i + 2..].iter().take_while(|l| !l.starts_with("```")).copied().collect();
        out.push(Block { name, lang, body: body.join("\n") });
    }
    out
}

/// The commands of a console block, each with what it must print.
fn commands(body: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut continuing = false;
    for line in body.lines() {
        if continuing {
            if let Some((command, _)) = out.last_mut() {
                command.push('\n');
                command.push_str(line);
            }
            continuing = line.ends_with('\\');
        } else if let Some(command) = line.strip_prefix("$ ") {
            out.push((command.to_string(), String::new()));
            continuing = command.ends_with('\\');
        } else if let Some((_, expected)) = out.last_mut() {
            expected.push_str(line);
            expected.push('\n');
        }
    }
    out
}

fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Whether `actual` matches `expected`, whitespace ignored, each `…` matching anything.
fn matches(expected: &str, actual: &str) -> bool {
    let (expected, actual) = (squeeze(expected), squeeze(actual));
    let pieces: Vec<&str> = expected.split('…').collect();
    let (Some(first), Some(last)) = (pieces.first(), pieces.last()) else { return false };
    if pieces.len() == 1 {
        return expected == actual;
    }
    if !actual.starts_with(first) || !actual.ends_with(last) || actual.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &actual[first.len()..actual.len() - last.len()];
    for piece in &pieces[1..pieces.len() - 1] {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

#[test]
fn the_matcher_ignores_whitespace_and_lets_an_ellipsis_stand_for_anything() {
    assert!(matches("{ \"a\": 1, … }", "{\"a\":1,\"b\":2}"));
    assert!(matches("x…y…z", "x12y34z"));
    assert!(!matches("x…y…z", "x12z34y"));
    assert!(!matches("{ \"a\": 1 }", "{\"a\":2}"));
    assert!(!matches("ab…ba", "aba"), "the two ends may not overlap");
}

/// A fresh home and working folder, with `warden` first on PATH.
struct Newcomer {
    dir: tempfile::TempDir,
    path: String,
}

impl Newcomer {
    fn new() -> Newcomer {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("work")).expect("work");
        let bin = warden_tests::warden_binary();
        let bin_dir = bin.parent().map(Path::to_path_buf).unwrap_or_default();
        let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
        Newcomer { dir, path }
    }

    fn home(&self) -> &Path {
        self.dir.path()
    }

    fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// Runs `command` in `sh`, stderr joined to stdout.
    fn sh(&self, command: &str) -> String {
        let mut sh = Command::new("sh");
        sh.arg("-c").arg(format!("{{ {command}\n}} 2>&1")).current_dir(self.work());
        sh.env("HOME", self.home()).env("PATH", &self.path).env("WARDEN_CACHE_DIR", warden_tests::cache_dir());
        for name in ["WARDEN_CONFIG", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"] {
            sh.env_remove(name);
        }
        let out = sh.output().expect("sh runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

#[test]
fn every_tested_readme_snippet_works_copied_in_order_on_a_fresh_home() {
    let blocks = tested_blocks();
    let names: Vec<&str> = blocks.iter().map(|b| b.name.as_str()).collect();
    assert!(names.iter().filter(|n| **n == "quickstart").count() >= 5, "the quick start is marked: {names:?}");
    assert!(names.contains(&"claude-code") && names.contains(&"claude-code-settings"), "{names:?}");

    let newcomer = Newcomer::new();
    // The first example names the demo's configuration by its path in a checkout.
    let demo = newcomer.work().join("host-example/demo");
    std::fs::create_dir_all(&demo).expect("demo folder");
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/../host-example/demo/config.json"), demo.join("config.json"))
        .expect("copy the demo configuration");

    let mut ran = 0;
    for block in &blocks {
        match block.lang.as_str() {
            "console" => {
                for (command, expected) in commands(&block.body) {
                    let actual = newcomer.sh(&command);
                    assert!(
                        matches(&expected, &actual),
                        "README block `{}`: `{command}`\nexpected:\n{expected}\ngot:\n{actual}",
                        block.name
                    );
                    ran += 1;
                }
            }
            "json" => {
                // A Claude Code settings file: each hook command, run as Claude Code would, on a call it must block.
                let settings: serde_json::Value = serde_json::from_str(&block.body).expect("the settings are JSON");
                let mut hooks = Vec::new();
                for event in settings["hooks"].as_object().into_iter().flat_map(|o| o.values()) {
                    for matcher in event.as_array().into_iter().flatten() {
                        for hook in matcher["hooks"].as_array().into_iter().flatten() {
                            hooks.extend(hook["command"].as_str().map(String::from));
                        }
                    }
                }
                assert_eq!(hooks.len(), 3, "{}", block.body);
                let event = r#"{"hook_event_name": "PreToolUse", "session_id": "s2", "cwd": "/tmp", "tool_name": "Bash", "tool_input": {"command": "rm -r -f /"}}"#;
                for hook in hooks {
                    let actual = newcomer.sh(&format!("echo '{event}' | {hook}"));
                    let answer: serde_json::Value =
                        serde_json::from_str(&actual).unwrap_or_else(|e| panic!("`{hook}`: {e}: {actual}"));
                    let out = &answer["hookSpecificOutput"];
                    assert_eq!(out["permissionDecision"], "deny", "`{hook}`: {actual}");
                    assert!(
                        out["permissionDecisionReason"].as_str().unwrap_or_default().contains("exec.recursive-delete")
                    );
                    ran += 1;
                }
            }
            other => panic!("README block `{}`: cannot test a `{other}` block", block.name),
        }
    }
    assert!(ran >= 10, "{ran} snippets ran");

    // Nothing but what the snippets wrote on purpose lands in the working folder;
    // the database is in the XDG state folder, created owner-only.
    let mut here: Vec<String> = std::fs::read_dir(newcomer.work())
        .expect("work")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    here.sort();
    assert_eq!(here, ["host-example", "warden.json"]);
    let state = newcomer.home().join(".local/state/warden");
    assert!(state.join("warden.db").is_file(), "the default database is in {}", state.display());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&state).map(|m| m.permissions().mode() & 0o777).unwrap_or(0);
        assert_eq!(mode, 0o700);
    }
}
