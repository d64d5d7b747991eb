//! Runs the shared table of tool calls in `testdata/tool-calls.json` through
//! the whole engine, as the component would. Each call names a session (as
//! hosts do) that holds no pin.

use crate::Warden;
use crate::fakes::{MemoryStorage, ScriptedHttp, VecLog};
use crate::model::{Identity, ToolCall};
use crate::ports::Ports;
use serde_json::Value;
use std::string::{String, ToString};
use std::vec::Vec;

const TABLE: &str = include_str!("../../testdata/tool-calls.json");

/// Fewest cases the table must hold.
const MIN_CASES: usize = 150;

#[test]
fn every_tool_call_in_the_table_gets_its_decision_and_rule() {
    let doc: Value = serde_json::from_str(TABLE).expect("the table is JSON");
    let warden = Warden::configure(&doc["config"].to_string()).expect("the table's config is valid");
    let default_cwd = doc["cwd"].as_str().map(str::to_string);
    let cases = doc["cases"].as_array().expect("cases");
    let mut failures: Vec<String> = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let storage = MemoryStorage::default();
        let http = ScriptedHttp::unreachable();
        let log = VecLog::default();
        let ports = Ports { http: &http, storage: &storage, log: &log };
        let derived = case["derivedPaths"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        let call = ToolCall {
            tool_name: case["tool"].as_str().expect("tool").to_string(),
            arguments: case["args"].to_string(),
            call_id: None,
            run_id: None,
            // Hosts name the session; pinning refuses gated calls without one.
            session_id: Some("table".to_string()),
            now_ms: 1_700_000_000_000,
            identity: Identity::default(),
            cwd: case["cwd"].as_str().map(str::to_string).or_else(|| default_cwd.clone()),
            derived_paths: derived,
        };
        let verdict = warden.check_tool_call(&ports, &call);
        let want = (case["expect"]["decision"].as_str().unwrap_or(""), case["expect"]["rule"].as_str().unwrap_or(""));
        if (verdict.decision.as_str(), verdict.rule.as_str()) != want {
            failures.push(std::format!(
                "case {i} {} {}: want {want:?}, got ({}, {}): {}",
                call.tool_name,
                call.arguments,
                verdict.decision.as_str(),
                verdict.rule,
                verdict.reason
            ));
        }
    }
    std::println!("tool-call table: {} cases, {} failed", cases.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(cases.len() >= MIN_CASES, "the table must hold at least {MIN_CASES} cases");
}
