//! Every string of the core's DLP table through `check-outbound`, with no gate
//! and no classifier configured: only the deterministic pre-checks decide.

use super::{data, message, signal};
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::Instant;
use warden_host::bindings::exports::warden::guard::policy::Direction;
use warden_tests::{T0, TempDb, decided, runtime};

/// A case's body: its parts joined (text, `{"repeat", "times"}`, or `{"hex"}` raw bytes).
fn body_of(parts: &Value) -> Vec<u8> {
    warden_core::fakes::body_from_parts(parts).expect("every part is a string, a repeat or hex")
}

#[test]
fn every_string_of_the_dlp_table_gets_its_decision_rule_and_offset_through_the_component() {
    let doc = data("dlp-strings.json");
    let cases = doc["cases"].as_array().expect("cases");
    assert!(cases.len() >= 100, "only {} cases", cases.len());
    let db = TempDb::new();
    let rt = runtime("{}", db.open());
    let started = Instant::now();
    let mut failures = Vec::new();
    let mut detectors = BTreeSet::new();
    let mut denied = 0;
    for case in cases {
        let name = case["name"].as_str().expect("name");
        let direction = if case["direction"] == "inbound" { Direction::Inbound } else { Direction::Outbound };
        let m = message(direction, "slack", "U0123", body_of(&case["parts"]), None, T0);
        let v = rt.check_outbound(&m);
        let expected = (case["expect"].as_str().expect("expect"), case["rule"].as_str().expect("rule"));
        if decided(&v) != expected {
            failures.push(format!("{name}: got {:?}, expected {expected:?}", decided(&v)));
            continue;
        }
        if v.rule != "dlp.pre-checks-passed" {
            denied += 1;
        }
        if let Some(offset) = case.get("offset").and_then(Value::as_u64) {
            let detector = expected.1.trim_start_matches("dlp.secret.");
            let wanted = format!("{detector} at character {offset}");
            if signal(&v, "dlp.secret") != Some(wanted.as_str()) {
                failures.push(format!("{name}: signals {:?}, expected {wanted}", v.signals));
            }
            detectors.insert(detector.to_string());
            // The hit names the detector and the position, never the secret.
            for part in case["parts"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                let secret_like = part.len() >= 10 && !part.contains(char::is_whitespace);
                let shown = v.reason.contains(part) || v.signals.iter().any(|s| s.detail.contains(part));
                if secret_like && shown {
                    failures.push(format!("{name}: the verdict repeats `{part}`"));
                }
            }
        }
    }
    println!(
        "dlp table: {} strings through check-outbound ({denied} denied, {} allowed, {} detectors) in {:.1?}",
        cases.len(),
        cases.len() - denied,
        detectors.len(),
        started.elapsed()
    );
    assert!(failures.is_empty(), "{} of {} strings failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}
