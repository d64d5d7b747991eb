//! The consent ledger keeps no address book and no message text: after a whole
//! gate flow, the raw bytes of the SQLite file and its write-ahead log hold
//! neither the recipients nor the bodies.

use super::{at, decided3, outbound};
use serde_json::json;
use std::path::Path;
use warden_host::Runtime;
use warden_host::bindings::exports::warden::guard::policy::{Delivery, OutcomeReport};
use warden_tests::{TempDb, runtime};

const ADA: &str = "ada.lovelace@example.test";
const BOB: &str = "+15550123456";
const ROUTINE: &str = "Hello Ada, your order A-17 has shipped.";
const FREE_TEXT: &str = "Free text: the side door code is 4412, see you Friday.";
/// Stored in clear (documented), so finding it proves the scan reads the data.
const THREAD: &str = "thread-7781-clear";

fn files(db: &Path) -> Vec<(String, Vec<u8>)> {
    ["", "-wal", "-shm"]
        .iter()
        .filter_map(|suffix| {
            let path = format!("{}{suffix}", db.display());
            std::fs::read(&path).ok().map(|bytes| (path, bytes))
        })
        .collect()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// Fails if any file holds a recipient or a body; returns whether the thread ID was seen.
fn scan(db: &Path) -> bool {
    let files = files(db);
    assert!(!files.is_empty(), "the database exists");
    for (path, bytes) in &files {
        for secret in [ADA, BOB, ROUTINE, FREE_TEXT] {
            assert!(!contains(bytes, secret), "{path} holds `{secret}` in clear");
        }
    }
    files.iter().any(|(_, bytes)| contains(bytes, THREAD))
}

fn flow(rt: &Runtime) {
    let sent = |to: &str, delivery: Delivery, time: &str| {
        let report = OutcomeReport {
            channel: "email".into(),
            recipient: to.into(),
            delivery,
            thread: Some(THREAD.into()),
            now_ms: at(time, 0),
            idempotency_key: None,
        };
        rt.record_outcome(&report).expect("outcome recorded");
    };
    rt.gate(|g, s| g.call_consent(s, "email", ADA, Some("+01:00"), Some("signup form"), at("08:00", 0), None))
        .expect("consent");
    let values = vec![("name".to_string(), "Ada".to_string()), ("order".to_string(), "A-17".to_string())];
    rt.gate(|g, s| g.call_set_variables(s, "email", ADA, &values, at("08:01", 0), None)).expect("variables");
    let v = rt.check_outbound(&outbound("email", ADA, ROUTINE, Some(THREAD), at("10:00", 0)));
    assert_eq!(decided3(&v), ("allow", "gate.routine", None), "{}", v.reason);
    sent(ADA, Delivery::Sent, "10:01");
    let v = rt.check_outbound(&outbound("email", ADA, FREE_TEXT, Some(THREAD), at("10:05", 0)));
    assert_eq!(decided3(&v), ("ask", "gate.unanswered-thread", None), "{}", v.reason);
    sent(ADA, Delivery::Reply, "10:06");
    let v = rt.check_outbound(&outbound("email", ADA, FREE_TEXT, Some(THREAD), at("10:07", 0)));
    assert_eq!(decided3(&v), ("ask", "gate.no-template", None), "{}", v.reason);
    sent(ADA, Delivery::Failed, "10:08");
    let v = rt.check_outbound(&outbound("email", BOB, ROUTINE, None, at("10:09", 0)));
    assert_eq!(decided3(&v), ("deny", "gate.no-consent", None), "{}", v.reason);
    rt.gate(|g, s| g.call_consent(s, "sms", BOB, None, None, at("10:10", 0), None)).expect("consent");
    rt.gate(|g, s| g.call_opt_out(s, BOB, at("10:11", 0), None)).expect("opt-out");
    let v = rt.check_outbound(&outbound("sms", BOB, ROUTINE, None, at("10:12", 0)));
    assert_eq!(decided3(&v), ("deny", "gate.opted-out", None), "{}", v.reason);
    assert!(rt.gate(|g, s| g.call_revoke(s, "email", ADA, at("10:13", 0), None)).expect("revoke"));
    let log = rt.gate(|g, s| g.call_log(s, 50)).expect("log");
    assert_eq!(log.len(), 13);
    assert!(log.iter().all(|e| e.recipient_hash.len() == 64 && e.recipient_hash != ADA && e.recipient_hash != BOB));
}

#[test]
fn the_sqlite_file_holds_no_clear_text_recipient_or_body_after_a_gate_flow() {
    let secret = "a-ledger-secret-of-at-least-32-characters";
    for ledger_secret in [Some(secret), None] {
        let mut gate = json!({"ownerOffset": "+00:00", "templates": ["Hello $name, your order ${order} has shipped."]});
        if let Some(s) = ledger_secret {
            gate["ledgerSecret"] = json!(s);
        }
        let db = TempDb::new();
        let rt = runtime(&json!({ "gate": gate }).to_string(), db.open());
        flow(&rt);
        // While the host runs, the write-ahead log holds the newest pages.
        assert!(scan(&db.path()), "the scan saw the thread ID, which is stored in clear");
        drop(rt);
        // After the host stops, everything is in the main file.
        assert!(scan(&db.path()), "the scan saw the thread ID after the host stopped");
        assert!(!contains(&std::fs::read(db.path()).expect("db"), secret), "the ledger secret is never stored");
    }
}
