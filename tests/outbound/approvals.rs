//! A person's answer to a gate's ask, through `record-approval`: it decides
//! that exact message, and it never lifts a block.

use super::{at, decided3, outbound, signal};
use serde_json::json;
use warden_host::Runtime;
use warden_host::bindings::exports::warden::guard::policy::Approval;
use warden_host::bindings::warden::guard::types::{ApprovalScope, Verdict};
use warden_tests::{TempDb, decided, runtime};

const ALICE: &str = "+15550100";
const BODY: &str = "Can we move lunch to 1pm?";

/// A gate without templates, so every message asks, and one consent.
fn gate(db: &TempDb) -> Runtime {
    let rt = runtime(&json!({"gate": {"ownerOffset": "+00:00"}}).to_string(), db.open());
    rt.gate(|g, s| g.call_consent(s, "sms", ALICE, None, None, at("08:00", 0), None)).expect("consent");
    rt
}

fn answer(rt: &Runtime, asked: &Verdict, allow: bool, scope: ApprovalScope) {
    let key = asked.approval_key.clone().expect("an ask carries an approval key");
    let approval =
        Approval { key, allow, scope, session_id: None, call_id: None, now_ms: at("12:00", 0), idempotency_key: None };
    rt.record_approval(&approval).expect("the answer is recorded");
}

#[test]
fn an_approval_lets_the_asked_message_go_but_never_lifts_quiet_hours_or_an_opt_out() {
    let db = TempDb::new();
    let rt = gate(&db);
    let asked = rt.check_outbound(&outbound("sms", ALICE, BODY, None, at("12:00", 0)));
    assert_eq!(decided3(&asked), ("ask", "gate.no-template", None), "{}", asked.reason);
    answer(&rt, &asked, true, ApprovalScope::Always);

    let approved = rt.check_outbound(&outbound("sms", ALICE, BODY, None, at("12:01", 0)));
    assert_eq!(decided3(&approved), ("allow", "outbound.approved", None), "{}", approved.reason);
    assert!(signal(&approved, "gate.no-template").is_some(), "the ask it answered is kept as a signal");
    // Other words are another message.
    let other = rt.check_outbound(&outbound("sms", ALICE, "Lunch at 2pm then?", None, at("12:02", 0)));
    assert_eq!(decided(&other), ("ask", "gate.no-template"));
    // The same message at night, and after an opt-out, stays blocked.
    let night = rt.check_outbound(&outbound("sms", ALICE, BODY, None, at("22:00", 0)));
    assert_eq!(decided(&night), ("deny", "gate.quiet-hours"), "{}", night.reason);
    rt.gate(|g, s| g.call_opt_out(s, ALICE, at("12:03", 0), None)).expect("opt-out");
    let after = rt.check_outbound(&outbound("sms", ALICE, BODY, None, at("12:04", 0)));
    assert_eq!(decided(&after), ("deny", "gate.opted-out"), "{}", after.reason);
    // A new consent does not undo the opt-out either.
    rt.gate(|g, s| g.call_consent(s, "sms", ALICE, None, None, at("12:05", 0), None)).expect("consent");
    assert_eq!(
        decided(&rt.check_outbound(&outbound("sms", ALICE, BODY, None, at("12:06", 0)))),
        ("deny", "gate.opted-out")
    );
}

#[test]
fn a_once_answer_decides_one_check_and_a_rejection_denies() {
    let db = TempDb::new();
    let rt = gate(&db);
    let m = || outbound("sms", ALICE, BODY, None, at("12:00", 0));
    let asked = rt.check_outbound(&m());
    answer(&rt, &asked, false, ApprovalScope::Once);
    assert_eq!(decided(&rt.check_outbound(&m())), ("deny", "outbound.rejected"));
    let again = rt.check_outbound(&m());
    assert_eq!(decided(&again), ("ask", "gate.no-template"), "the rejection was used up");
    answer(&rt, &again, true, ApprovalScope::Once);
    assert_eq!(decided(&rt.check_outbound(&m())), ("allow", "outbound.approved"));
    assert_eq!(decided(&rt.check_outbound(&m())), ("ask", "gate.no-template"), "the approval was used up");
    // A key nobody was asked about is refused.
    let bogus = Approval {
        key: format!("m1:{}", "0".repeat(64)),
        allow: true,
        scope: ApprovalScope::Always,
        session_id: None,
        call_id: None,
        now_ms: at("12:00", 0),
        idempotency_key: None,
    };
    let refused = rt.record_approval(&bogus).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(refused.contains("key: no check is waiting for an answer about this message"), "{refused}");
}
