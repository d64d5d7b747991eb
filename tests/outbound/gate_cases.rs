//! Every case of the core's gate table, run through the component: each setup
//! op becomes a `gate` export or `record-outcome`, and the message goes through
//! `check-outbound` on a fresh SQLite ledger.

use super::{DAY0, at, data, decided3, outbound};
use serde_json::{Value, json};
use std::time::Instant;
use warden_host::CallError;
use warden_host::Runtime;
use warden_host::bindings::exports::warden::guard::policy::{Delivery, OutcomeReport};
use warden_tests::{TempDb, runtime};

const ALICE: &str = "+15550100";
const BODY: &str = "Reminder: your appointment is tomorrow.";

fn text<'a>(v: &'a Value, key: &str, default: &'a str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or(default)
}

fn when(v: &Value, default: &str) -> u64 {
    at(text(v, "at", default), v.get("day").and_then(Value::as_i64).unwrap_or(0))
}

/// Runs one setup op through the component.
fn apply(rt: &Runtime, op: &Value) -> Result<(), CallError> {
    let channel = text(op, "channel", "sms");
    let to = text(op, "to", ALICE);
    let now = when(op, "08:00");
    let thread = op.get("thread").and_then(Value::as_str);
    match text(op, "op", "") {
        "consent" => {
            let offset = op.get("offset").and_then(Value::as_str);
            rt.gate(|g, s| g.call_consent(s, channel, to, offset, None, now, None))
        }
        "optout" => rt.gate(|g, s| g.call_opt_out(s, to, now, None)),
        "revoke" => rt.gate(|g, s| g.call_revoke(s, channel, to, now, None)).map(|_| ()),
        "variables" => {
            let values: Vec<(String, String)> = op["values"]
                .as_object()
                .expect("values")
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().expect("a text value").to_string()))
                .collect();
            rt.gate(|g, s| g.call_set_variables(s, channel, to, &values, now, None))
        }
        outcome => {
            let delivery = match outcome {
                "sent" => Delivery::Sent,
                "failed" => Delivery::Failed,
                "reply" => Delivery::Reply,
                other => panic!("unknown op {other}"),
            };
            let report = OutcomeReport {
                channel: channel.into(),
                recipient: to.into(),
                delivery,
                thread: thread.map(Into::into),
                now_ms: now,
                idempotency_key: None,
            };
            rt.record_outcome(&report)
        }
    }
}

fn run_case(base: &Value, case: &Value) -> Result<(), String> {
    let mut section = base.clone();
    if let Some(overrides) = case.get("config").and_then(Value::as_object) {
        for (k, v) in overrides {
            section[k] = v.clone();
        }
    }
    let enabled = section.get("enabled") != Some(&Value::Bool(false));
    let db = TempDb::new();
    let rt = runtime(&json!({ "gate": section }).to_string(), db.open());
    let default_setup = json!([{"op": "consent"}]);
    for op in case.get("setup").unwrap_or(&default_setup).as_array().expect("setup") {
        match (enabled, apply(&rt, op)) {
            (true, Err(e)) => return Err(format!("setup {op} failed: {e}")),
            (false, Ok(())) => return Err(format!("setup {op} succeeded with the gate off")),
            _ => {}
        }
    }
    let empty = json!({});
    let c = case.get("check").unwrap_or(&empty);
    let m = outbound(
        text(c, "channel", "sms"),
        text(c, "to", ALICE),
        text(c, "body", BODY),
        c.get("thread").and_then(Value::as_str),
        when(c, "12:00"),
    );
    let v = rt.check_outbound(&m);
    let got = decided3(&v);
    let expected = match &case["expect"] {
        // The gate has nothing to say: only the DLP pre-checks ran.
        Value::Null => ("allow", "dlp.pre-checks-passed", None),
        Value::Array(a) => {
            let s = |i: usize| a.get(i).and_then(Value::as_str);
            let decision = match s(0) {
                Some("allow") => "allow",
                Some("ask") => "ask",
                Some("deny") => "deny",
                other => panic!("bad decision {other:?}"),
            };
            let observed = s(2).map(|o| match o {
                "ask" => "ask",
                "deny" => "deny",
                other => panic!("bad observed {other}"),
            });
            (decision, s(1).expect("rule"), observed)
        }
        other => panic!("bad expect {other}"),
    };
    if got != expected {
        return Err(format!("got {got:?}, expected {expected:?} ({})", v.reason));
    }
    // An ask carries the key a person's answer is recorded under; nothing else does.
    if (v.decision == warden_host::bindings::warden::guard::types::Decision::Ask) != v.approval_key.is_some() {
        return Err(format!("approval key {:?} on a {} verdict", v.approval_key, got.0));
    }
    Ok(())
}

#[test]
fn every_case_of_the_gate_table_decides_through_the_component_with_its_rule() {
    let doc = data("gate-cases.json");
    assert_eq!(doc["day0Ms"].as_u64(), Some(DAY0));
    let cases = doc["cases"].as_array().expect("cases");
    assert!(cases.len() >= 60, "only {} cases", cases.len());
    let started = Instant::now();
    let mut failures = Vec::new();
    for case in cases {
        if let Err(e) = run_case(&doc["base"], case) {
            failures.push(format!("{}: {e}", case["name"]));
        }
    }
    println!("gate table: {} cases through the component, host and SQLite in {:.1?}", cases.len(), started.elapsed());
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}
