//! Inbound safety scenarios end to end: the real component and host, SQLite,
//! and a loopback mock of the chat-completions logprob protocol.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use warden_host::bindings::exports::warden::guard::policy::{QueueMode, SafetyOutcome, Trigger, Turn, TurnOutcome};
use warden_host::bindings::warden::guard::types::{ChannelContext, Identity, Message, Role};
use warden_host::json::outcome_name;
use warden_tests::mock_http::{MockServer, Recorded, Reply};
use warden_tests::{T0, TempDb, runtime};

const SALARY_PROMPT: &str = "This requester is not approved for pay details: say so and share none.";
const MEDICAL_PROMPT: &str = "This requester is not approved for health details: say so and share none.";

/// How the mock answers a question about one scenario.
#[derive(Clone, Copy, Debug)]
enum Answer {
    Yes(f64),
    Malformed,
    Status(u16),
    Slow(u64),
}

/// The scenario a request asks about, from its system message.
fn scenario_of(r: &Recorded) -> &'static str {
    let system = r.json()["messages"][0]["content"].as_str().unwrap_or_default().to_string();
    if system.contains("salary") { "salaries" } else { "medical" }
}

fn logprob_reply(p_yes: f64) -> Reply {
    let (yes, no) = (p_yes.max(1e-9).ln(), (1.0 - p_yes).max(1e-9).ln());
    let chosen = if p_yes >= 0.5 { "Yes" } else { "No" };
    Reply::json(
        200,
        &json!({"id": "c1", "object": "chat.completion", "model": "m", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": chosen}, "finish_reason": "length",
            "logprobs": {"content": [{"token": chosen, "logprob": if p_yes >= 0.5 { yes } else { no },
                "top_logprobs": [{"token": "Yes", "logprob": yes}, {"token": "No", "logprob": no},
                                 {"token": " yes", "logprob": -9.0}, {"token": "Maybe", "logprob": -9.5},
                                 {"token": "The", "logprob": -10.0}]}]}}]}),
    )
}

/// A mock classifier whose answers per scenario the test can change.
struct Classifier {
    server: MockServer,
    script: Arc<Mutex<BTreeMap<&'static str, Answer>>>,
}

impl Classifier {
    fn start() -> Classifier {
        let script: Arc<Mutex<BTreeMap<&'static str, Answer>>> = Arc::new(Mutex::new(BTreeMap::new()));
        let shared = script.clone();
        let server = MockServer::start(move |r| {
            let answer = shared.lock().map(|s| s.get(scenario_of(r)).copied()).ok().flatten();
            match answer.unwrap_or(Answer::Yes(0.0)) {
                Answer::Yes(p) => logprob_reply(p),
                Answer::Malformed => Reply::text(200, "I think the answer is yes"),
                Answer::Status(code) => Reply::text(code, "upstream failure"),
                Answer::Slow(ms) => logprob_reply(0.9).after(Duration::from_millis(ms)),
            }
        });
        Classifier { server, script }
    }

    fn answer(&self, scenario: &'static str, a: Answer) {
        if let Ok(mut s) = self.script.lock() {
            s.insert(scenario, a);
        }
    }
}

fn config(classifier: &Classifier, key_file: &str, overrides: Value) -> String {
    let mut c = json!({
        "destinations": [{
            "name": "classifier",
            "baseUrl": classifier.server.url("/v1"),
            "credential": {"file": key_file}
        }],
        "safety": {
            "enabled": true,
            "timeoutMs": 1500,
            "excludedChannels": [{"name": "#leadership", "provider": "slack", "accountId": "acme-ws", "channelId": "C_LEAD"}],
            "classifier": {"enabled": true, "destination": "classifier", "model": "small-model"},
            "scenarios": [
                {
                    "id": "salaries",
                    "instructions": "Requests about a specific employee's salary, pay or compensation, including how much someone makes.",
                    "flaggedPrompt": SALARY_PROMPT,
                    "approvedRequestors": [{"name": "Dani", "provider": "slack", "accountId": "acme-ws", "senderId": "U_DANI"}],
                    "excludedChannels": [{"provider": "slack", "accountId": "acme-ws", "channelId": "C_PEOPLE_OPS"}]
                },
                {
                    "id": "medical",
                    "instructions": "Requests about a specific person's health, illness or medical leave.",
                    "flaggedPrompt": MEDICAL_PROMPT,
                    "minProbability": 0.5
                }
            ]
        }
    });
    merge(&mut c, overrides);
    c.to_string()
}

fn merge(base: &mut Value, patch: Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                merge(b.entry(k).or_insert(Value::Null), v);
            }
        }
        (b, p) => *b = p,
    }
}

fn identity(sender: Option<&str>, channel: &str) -> Identity {
    Identity {
        provider: Some("slack".into()),
        account_id: Some("acme-ws".into()),
        sender_id: sender.map(Into::into),
        channel_id: Some(channel.into()),
        thread_id: None,
        agent_id: Some("main".into()),
    }
}

fn turn(run: &str, sender: Option<&str>, channel: &str, message: &str) -> Turn {
    Turn {
        run_id: Some(run.into()),
        session_id: Some("slack:work".into()),
        now_ms: T0,
        identity: identity(sender, channel),
        trigger: Trigger::User,
        message: message.into(),
        context: ChannelContext { thread_starter: None, replied_to: None, since_last_reply: Vec::new() },
        history: vec![Message { role: Role::User, author: Some("Bob".into()), text: "Who runs payroll?".into() }],
        queue_mode: Some(QueueMode::Followup),
        hook_timeout_ms: Some(10_000),
    }
}

struct Setup {
    classifier: Classifier,
    db: TempDb,
    key: tempfile::NamedTempFile,
}

impl Setup {
    fn new() -> Setup {
        let key = tempfile::NamedTempFile::new().expect("key file");
        std::fs::write(key.path(), "sk-test-classifier-key").expect("write key");
        Setup { classifier: Classifier::start(), db: TempDb::new(), key }
    }

    fn runtime(&self, overrides: Value) -> warden_host::Runtime {
        let key = self.key.path().display().to_string();
        runtime(&config(&self.classifier, &key, overrides), self.db.open())
    }
}

fn outcome(o: &TurnOutcome) -> (&'static str, &str) {
    (outcome_name(o.outcome), o.rule.as_str())
}

#[test]
fn an_unapproved_sender_asking_a_covered_question_gets_exactly_that_scenarios_prompt() {
    let s = Setup::new();
    s.classifier.answer("salaries", Answer::Yes(0.92));
    s.classifier.answer("medical", Answer::Yes(0.03));
    let rt = s.runtime(json!({}));
    let o = rt.check_turn(&turn("r1", Some("U_BOB"), "C_GENERAL", "What about Sally? How much does she make?"));
    assert_eq!(outcome(&o), ("flagged", "safety.flagged"));
    assert!(o.proceed);
    assert_eq!(o.scenarios, ["salaries"]);
    assert_eq!(o.append_context.as_deref(), Some(format!("<safety>\n{SALARY_PROMPT}\n</safety>").as_str()));
    let seen = s.classifier.server.requests();
    assert_eq!(seen.len(), 2, "one question per remaining scenario");
    let body = seen[0].json();
    assert_eq!(body["max_tokens"], 1);
    assert_eq!(body["logprobs"], true);
    assert!(body["top_logprobs"].as_u64().unwrap_or(0) >= 5);
    assert_eq!(seen[0].header("authorization"), Some("Bearer sk-test-classifier-key"), "the host attached the key");
}

#[test]
fn classifier_requests_never_carry_prompts_approval_lists_or_ids() {
    let s = Setup::new();
    s.classifier.answer("salaries", Answer::Yes(0.9));
    let rt = s.runtime(json!({}));
    rt.check_turn(&turn("r1", Some("U_BOB"), "C_GENERAL", "How much does Sally earn?"));
    let seen = s.classifier.server.requests();
    assert!(!seen.is_empty());
    for r in seen {
        let text = String::from_utf8_lossy(&r.body).into_owned();
        assert!(text.contains("How much does Sally earn?"), "the current message is judged");
        assert!(text.contains("Who runs payroll?"), "earlier history is context");
        for secret in
            [SALARY_PROMPT, MEDICAL_PROMPT, "U_DANI", "Dani", "U_BOB", "C_GENERAL", "C_PEOPLE_OPS", "acme-ws", "slack"]
        {
            assert!(!text.contains(secret), "{secret:?} leaked into a classifier request: {text}");
        }
    }
}

#[test]
fn approved_excluded_and_disabled_get_no_prompt_and_no_request_when_none_remain() {
    let s = Setup::new();
    s.classifier.answer("salaries", Answer::Yes(0.99));
    s.classifier.answer("medical", Answer::Yes(0.99));
    let rt = s.runtime(json!({"safety": {"scenarios": [
        {"id": "salaries", "instructions": "salary questions", "flaggedPrompt": SALARY_PROMPT,
         "approvedRequestors": [{"provider": "SLACK", "accountId": "ACME-WS", "senderId": "U_DANI"}],
         "excludedChannels": [{"provider": "slack", "accountId": "acme-ws", "channelId": "c_people_ops"}]},
        {"id": "medical", "instructions": "medical questions", "flaggedPrompt": MEDICAL_PROMPT, "enabled": false}
    ]}}));
    let cases = [
        // (sender, channel, outcome, requests made)
        (Some("U_DANI"), "C_GENERAL", "no_scenarios", 0), // approved, provider and account case-insensitively
        (Some("u_dani"), "C_GENERAL", "flagged", 1),      // senderId matches exactly: not approved
        (Some("U_BOB"), "C_PEOPLE_OPS", "no_scenarios", 0), // the scenario's own exclusion, channel case-insensitively
        (Some("U_BOB"), "C_LEAD", "excluded", 0),         // the global exclusion
        (None, "C_GENERAL", "flagged", 1),                // no sender: never approved
    ];
    for (i, (sender, channel, expected, requests)) in cases.into_iter().enumerate() {
        let before = s.classifier.server.requests().len();
        let o = rt.check_turn(&turn(&format!("run-{i}"), sender, channel, "What does Sally make?"));
        assert_eq!(outcome_name(o.outcome), expected, "{sender:?} in {channel}");
        assert_eq!(o.rule, format!("safety.{expected}"));
        assert_eq!(s.classifier.server.requests().len() - before, requests, "{sender:?} in {channel}");
        if expected != "flagged" {
            assert_eq!(o.append_context, None);
        } else {
            assert_eq!(o.scenarios, ["salaries"], "the disabled scenario is never asked");
        }
    }
}

#[test]
fn every_outcome_is_reachable_through_the_component_and_counted() {
    let s = Setup::new();
    let rt = s.runtime(json!({}));
    let expected: std::cell::RefCell<BTreeMap<String, u64>> = Default::default();
    let check = |rt: &warden_host::Runtime, t: Turn, want: &str| {
        let o = rt.check_turn(&t);
        assert_eq!(outcome(&o), (want, format!("safety.{want}").as_str()), "{}", o.reason);
        *expected.borrow_mut().entry(format!("safety.outcome.{want}")).or_default() += 1;
        o
    };
    s.classifier.answer("salaries", Answer::Yes(0.9));
    s.classifier.answer("medical", Answer::Yes(0.1));
    check(&rt, turn("a", Some("U_BOB"), "C_GENERAL", "What does Sally make?"), "flagged");
    s.classifier.answer("salaries", Answer::Yes(0.1));
    check(&rt, turn("b", Some("U_BOB"), "C_GENERAL", "When is the offsite?"), "no_match");
    check(&rt, turn("c", Some("U_BOB"), "C_LEAD", "What does Sally make?"), "excluded");
    check(&rt, turn("d", Some("U_BOB"), "C_GENERAL", "   "), "empty_request");
    let huge = "word ".repeat(40_000);
    let o = check(&rt, turn("e", Some("U_BOB"), "C_GENERAL", &huge), "input_too_large");
    assert_eq!(o.scenarios, ["salaries", "medical"], "too large to check: every eligible prompt is added");
    s.classifier.answer("salaries", Answer::Yes(0.95));
    s.classifier.answer("medical", Answer::Malformed);
    let o = check(&rt, turn("f", Some("U_BOB"), "C_GENERAL", "Sally's pay?"), "partial_response");
    assert_eq!(o.scenarios, ["salaries"]);
    s.classifier.answer("salaries", Answer::Status(500));
    s.classifier.answer("medical", Answer::Malformed);
    check(&rt, turn("g", Some("U_BOB"), "C_GENERAL", "Sally's pay?"), "failed");
    s.classifier.answer("salaries", Answer::Slow(3_000));
    s.classifier.answer("medical", Answer::Slow(3_000));
    check(&rt, turn("h", Some("U_BOB"), "C_GENERAL", "Sally's pay?"), "timed_out");
    let mut automation = turn("i", Some("U_BOB"), "C_GENERAL", "Sally's pay?");
    automation.trigger = Trigger::Automation;
    check(&rt, automation, "not_user_triggered");

    // Cancelled: the host stops while the classifier is still answering.
    let cancelling = std::thread::scope(|scope| {
        let waiting = scope.spawn(|| rt.check_turn(&turn("j", Some("U_BOB"), "C_GENERAL", "Sally's pay?")));
        std::thread::sleep(Duration::from_millis(300));
        rt.cancel_requests();
        waiting.join().expect("turn check")
    });
    rt.resume_requests();
    assert_eq!(outcome(&cancelling), ("cancelled", "safety.cancelled"));
    *expected.borrow_mut().entry("safety.outcome.cancelled".into()).or_default() += 1;

    // The key file disappears: the host has no credential.
    let missing = Setup { key: tempfile::NamedTempFile::new().expect("file"), ..Setup::new() };
    std::fs::write(missing.key.path(), "").expect("empty key");
    let rt_missing = runtime(&config(&s.classifier, &missing.key.path().display().to_string(), json!({})), s.db.open());
    check(&rt_missing, turn("k", Some("U_BOB"), "C_GENERAL", "Sally's pay?"), "missing_key");
    let rt_disabled = s.runtime(json!({"safety": {"classifier": {"enabled": false}}}));
    check(&rt_disabled, turn("l", Some("U_BOB"), "C_GENERAL", "Sally's pay?"), "provider_disabled");
    let rt_off = s.runtime(json!({"safety": {"enabled": false}}));
    let o = rt_off.check_turn(&turn("m", Some("U_BOB"), "C_GENERAL", "Sally's pay?"));
    assert_eq!(outcome_name(o.outcome), "not_configured");
    let approved_everywhere = s.runtime(json!({"safety": {"scenarios": [
        {"id": "salaries", "instructions": "salary", "flaggedPrompt": SALARY_PROMPT, "agentIds": ["other-agent"]}
    ]}}));
    check(&approved_everywhere, turn("n", Some("U_BOB"), "C_GENERAL", "Sally's pay?"), "no_scenarios");

    let diagnostics = rt.diagnostics().expect("diagnostics");
    let counters: BTreeMap<String, u64> = diagnostics
        .counters
        .iter()
        .filter(|c| c.name.starts_with("safety.outcome."))
        .map(|c| (c.name.clone(), c.value))
        .collect();
    assert_eq!(counters, expected.into_inner(), "diagnostics count every outcome exactly");
    let scenario_counts: BTreeMap<String, u64> = diagnostics
        .counters
        .iter()
        .filter(|c| c.name.starts_with("safety.scenario."))
        .map(|c| (c.name.clone(), c.value))
        .collect();
    assert_eq!(scenario_counts.get("safety.scenario.salaries"), Some(&2), "{scenario_counts:?}");
}

#[test]
fn a_rebuild_of_the_same_run_reuses_its_answer_even_on_another_instance() {
    let s = Setup::new();
    s.classifier.answer("salaries", Answer::Yes(0.9));
    let first = s.runtime(json!({}));
    let t = turn("run-42", Some("U_BOB"), "C_GENERAL", "What does Sally make?");
    let a = first.check_turn(&t);
    assert_eq!(outcome(&a), ("flagged", "safety.flagged"));
    let asked = s.classifier.server.requests().len();
    let second = s.runtime(json!({}));
    let b = second.check_turn(&t);
    assert!(b.reused);
    assert_eq!(b.append_context, a.append_context);
    assert_eq!(s.classifier.server.requests().len(), asked, "no new classifier request");
}

#[test]
fn turns_without_identity_are_counted_and_steer_mode_and_short_hook_timeouts_warn() {
    let s = Setup::new();
    let rt = s.runtime(json!({}));
    let mut t = turn("w1", None, "C_GENERAL", "hello");
    t.identity = Identity {
        provider: None,
        account_id: None,
        sender_id: None,
        channel_id: None,
        thread_id: None,
        agent_id: None,
    };
    t.queue_mode = Some(QueueMode::Steer);
    t.hook_timeout_ms = Some(1_000);
    let o = rt.check_turn(&t);
    assert!(o.missing_identity);
    let d = rt.diagnostics().expect("diagnostics");
    assert_eq!(d.counters.iter().find(|c| c.name == "safety.missing_identity").map(|c| c.value), Some(1));
    let warnings = d.warnings.join("\n");
    assert!(warnings.contains("queue_mode_steer"), "{warnings}");
    assert!(warnings.contains("host_hook_timeout_below_whisperer_timeouts"), "{warnings}");
    let safety = d.checks.iter().find(|c| c.check == "safety").expect("status");
    assert!(safety.active);
    assert_eq!(safety.failure_mode, "fail-open");
    let _ = SafetyOutcome::Flagged;
}
