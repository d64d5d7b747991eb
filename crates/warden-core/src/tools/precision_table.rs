//! Runs the table in `testdata/exec-precision.json` through the whole
//! engine: metadata-only commands, formatters on image files and on disks,
//! `$(pwd)` and `$PWD`, permission removal on system trees, literal `"~"`
//! and `'$HOME'`, `IFS` splitting and brace expansion, path aliases
//! (`/proc/self/root`, `/proc/self/cwd`, `~user`, doubled slashes), and
//! protected paths that protect reads or writes only. Every case is one
//! sentence and asserts the decision and the rule. The same table runs
//! through the component in `tests/tool_calls.rs`.

use crate::Warden;
use crate::fakes::{MemoryStorage, ScriptedHttp, VecLog};
use crate::model::{Identity, ToolCall};
use crate::ports::Ports;
use serde_json::Value;
use std::string::{String, ToString};
use std::vec::Vec;

const TABLE: &str = include_str!("../../testdata/exec-precision.json");

/// Fewest cases the table must hold.
const MIN_CASES: usize = 120;

#[test]
fn every_precision_alias_and_protection_mode_case_gets_its_decision_and_rule() {
    let doc: Value = serde_json::from_str(TABLE).expect("the table is JSON");
    let default_cwd = doc["cwd"].as_str().map(str::to_string);
    let cases = doc["cases"].as_array().expect("cases");
    let mut failures: Vec<String> = Vec::new();
    let (mut allowed, mut refused) = (0, 0);
    for case in cases {
        let name = case["config"].as_str().unwrap_or("default");
        let warden = Warden::configure(&doc["configs"][name].to_string()).expect("the table's configs are valid");
        let (storage, http, log) = (MemoryStorage::default(), ScriptedHttp::unreachable(), VecLog::default());
        let ports = Ports { http: &http, storage: &storage, log: &log };
        let call = ToolCall {
            tool_name: case["tool"].as_str().expect("tool").to_string(),
            arguments: case["args"].to_string(),
            call_id: None,
            run_id: None,
            session_id: Some("table".to_string()),
            now_ms: 1_700_000_000_000,
            identity: Identity::default(),
            cwd: default_cwd.clone(),
            derived_paths: Vec::new(),
        };
        let verdict = warden.check_tool_call(&ports, &call);
        let want = (case["expect"]["decision"].as_str().unwrap_or(""), case["expect"]["rule"].as_str().unwrap_or(""));
        if want.0 == "allow" {
            allowed += 1
        } else {
            refused += 1
        }
        if (verdict.decision.as_str(), verdict.rule.as_str()) != want {
            failures.push(std::format!(
                "{}: {} {} want {want:?}, got ({}, {}): {}",
                case["name"].as_str().unwrap_or(""),
                call.tool_name,
                call.arguments,
                verdict.decision.as_str(),
                verdict.rule,
                verdict.reason
            ));
        }
    }
    std::println!("precision table: {} cases, {} failed", cases.len(), failures.len());
    assert!(failures.is_empty(), "{} wrong:\n{}", failures.len(), failures.join("\n"));
    assert!(cases.len() >= MIN_CASES, "the table must hold at least {MIN_CASES} cases");
    assert!(allowed >= 30 && refused >= 30, "both directions: {allowed} look-alikes, {refused} refusals");
}
