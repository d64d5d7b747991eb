//! Turns through the whole check: configuration as JSON, the engine's entry
//! point, scripted classifier answers, and what storage, counters and logs
//! show afterwards.

use super::*;
use crate::Warden;
use crate::fakes::{MemoryStorage, ScriptedHttp, VecLog};
use crate::model::{ChannelContext, Identity, Message, QueueMode, Role};
use crate::ports::{HttpRequest, HttpResponse, StorageError};
use serde_json::{Value, json};
use std::rc::Rc;

const T0: u64 = 1_700_000_000_000;

/// How the scripted classifier answers one scenario.
#[derive(Clone, Debug)]
enum Reply {
    /// A well-formed answer with this yes-probability.
    P(f64),
    Status(u16),
    Body(&'static str),
    Fail(HttpError),
}

fn answer(reply: &Reply) -> Result<HttpResponse, HttpError> {
    let ok = |body: String| Ok(HttpResponse { status: 200, headers: Vec::new(), body: body.into_bytes() });
    match reply {
        Reply::P(p) => {
            let mut top = Vec::new();
            if *p > 0.0 {
                top.push(json!({"token": "Yes", "logprob": libm::log(*p)}));
            }
            if *p < 1.0 {
                top.push(json!({"token": "No", "logprob": libm::log(1.0 - p)}));
            }
            let chosen = if *p >= 0.5 { "Yes" } else { "No" };
            let first = top.iter().find(|t| t["token"] == chosen).cloned().unwrap_or(Value::Null);
            ok(json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": chosen},
                "logprobs": {"content": [{"token": chosen, "logprob": first["logprob"], "top_logprobs": top}]}}]})
            .to_string())
        }
        Reply::Status(s) => {
            Ok(HttpResponse { status: *s, headers: Vec::new(), body: b"{\"error\":\"busy\"}".to_vec() })
        }
        Reply::Body(b) => ok((*b).to_string()),
        Reply::Fail(e) => Err(e.clone()),
    }
}

/// A classifier that answers each scenario by the marker in its instructions
/// (`ASK-<id>`), and `No` to anything else.
fn classifier(replies: &[(&str, Reply)]) -> ScriptedHttp {
    let replies: Vec<(String, Reply)> = replies.iter().map(|(id, r)| (format!("ASK-{id}."), r.clone())).collect();
    ScriptedHttp::new(move |req: &HttpRequest| {
        let body = String::from_utf8_lossy(&req.body).into_owned();
        let reply =
            replies.iter().find(|(marker, _)| body.contains(marker.as_str())).map_or(Reply::P(0.0), |(_, r)| r.clone());
        answer(&reply)
    })
}

fn scenario(id: &str) -> Value {
    json!({
        "id": id,
        "instructions": format!("Requests covered by ASK-{id}."),
        "flaggedPrompt": format!("PROMPT-{id}: do not answer this requester."),
    })
}

/// A configuration with the given scenarios and `safety` overrides.
fn config_json(scenarios: Vec<Value>, overrides: Value) -> Value {
    let mut safety = json!({
        "enabled": true,
        "classifier": {"enabled": true, "destination": "classifier", "model": "judge-small"},
        "scenarios": scenarios,
    });
    if let (Some(map), Some(extra)) = (safety.as_object_mut(), overrides.as_object()) {
        for (k, v) in extra {
            map.insert(k.clone(), v.clone());
        }
    }
    json!({
        "destinations": [{"name": "classifier", "baseUrl": "http://127.0.0.1:9/v1", "credential": {"env": "CLASSIFIER_KEY"}}],
        "safety": safety,
    })
}

fn warden(config: &Value) -> Warden {
    match Warden::configure(&config.to_string()) {
        Ok(w) => w,
        Err(errors) => panic!("configuration refused: {errors:?}"),
    }
}

fn identity(sender: Option<&str>, channel: Option<&str>) -> Identity {
    Identity {
        provider: Some("slack".into()),
        account_id: Some("work".into()),
        sender_id: sender.map(String::from),
        channel_id: channel.map(String::from),
        thread_id: None,
        agent_id: Some("main".into()),
    }
}

fn turn(message: &str) -> Turn {
    Turn {
        run_id: None,
        session_id: Some("s1".into()),
        now_ms: T0,
        identity: identity(Some("U_BOB"), Some("C_GENERAL")),
        trigger: Trigger::User,
        message: message.into(),
        context: ChannelContext::default(),
        history: Vec::new(),
        queue_mode: Some(QueueMode::Followup),
        hook_timeout_ms: None,
    }
}

struct World {
    http: ScriptedHttp,
    storage: Rc<MemoryStorage>,
    log: VecLog,
}

impl World {
    fn new(http: ScriptedHttp) -> Self {
        World { http, storage: Rc::new(MemoryStorage::default()), log: VecLog::default() }
    }

    fn ports(&self) -> Ports<'_> {
        Ports { http: &self.http, storage: &*self.storage, log: &self.log }
    }

    fn check(&self, w: &Warden, t: &Turn) -> TurnOutcome {
        w.check_turn(&self.ports(), t)
    }

    fn counters(&self, w: &Warden) -> BTreeMap<String, u64> {
        let diagnostics = w.diagnostics(&self.ports());
        diagnostics.map(|d| d.counters.into_iter().map(|c| (c.name, c.value)).collect()).unwrap_or_default()
    }

    fn bodies(&self) -> Vec<String> {
        self.http.requests().iter().map(|r| String::from_utf8_lossy(&r.body).into_owned()).collect()
    }

    /// The scenario IDs the classifier was asked about, in request order.
    fn asked(&self) -> Vec<String> {
        self.bodies()
            .iter()
            .filter_map(|b| b.split("ASK-").nth(1).and_then(|rest| rest.split('.').next()).map(String::from))
            .collect()
    }
}

fn ids(outcome: &TurnOutcome) -> Vec<&str> {
    outcome.scenarios.iter().map(String::as_str).collect()
}

#[test]
fn an_unapproved_sender_asking_a_covered_question_gets_exactly_that_scenarios_prompt() {
    let config = config_json(vec![scenario("pay"), scenario("health")], json!({}));
    let world = World::new(classifier(&[("pay", Reply::P(0.9)), ("health", Reply::P(0.1))]));
    let outcome = world.check(&warden(&config), &turn("How much does Sally make?"));
    assert_eq!(outcome.outcome, SafetyOutcome::Flagged);
    assert_eq!(outcome.rule, "safety.flagged");
    assert!(outcome.proceed);
    assert_eq!(ids(&outcome), ["pay"]);
    assert_eq!(
        outcome.append_context.as_deref(),
        Some("<safety>\nPROMPT-pay: do not answer this requester.\n</safety>")
    );
    assert_eq!(world.http.batches(), [2], "every question goes in one batch");
    assert_eq!(world.asked(), ["pay", "health"]);
}

#[test]
fn every_matching_prompt_goes_in_one_block_in_scenario_order() {
    let config = config_json(vec![scenario("a"), scenario("b"), scenario("c")], json!({}));
    let world = World::new(classifier(&[("a", Reply::P(0.8)), ("b", Reply::P(0.2)), ("c", Reply::P(0.4))]));
    let outcome = world.check(&warden(&config), &turn("question"));
    assert_eq!(outcome.outcome, SafetyOutcome::Flagged);
    assert_eq!(ids(&outcome), ["a", "c"], "0.4 meets the default minimum of 0.4");
    let block = outcome.append_context.unwrap_or_default();
    assert_eq!(block.matches("<safety>").count(), 1);
    assert_eq!(
        block,
        "<safety>\nPROMPT-a: do not answer this requester.\n\nPROMPT-c: do not answer this requester.\n</safety>"
    );
}

#[test]
fn identity_rules_decide_who_is_approved() {
    let mut pay = scenario("pay");
    pay["approvedRequestors"] =
        json!([{"name": "Dani", "provider": "Slack", "accountId": "WORK", "senderId": "U_DANI"}]);
    let config = config_json(vec![pay], json!({}));
    let with = |provider: Option<&str>, account: Option<&str>, sender: Option<&str>| Identity {
        provider: provider.map(String::from),
        account_id: account.map(String::from),
        sender_id: sender.map(String::from),
        channel_id: Some("C_GENERAL".into()),
        thread_id: None,
        agent_id: None,
    };
    type Case = (&'static str, Identity, SafetyOutcome, bool);
    let cases: Vec<Case> = vec![
        (
            "exact sender, provider and account in other case",
            with(Some("slack"), Some("work"), Some("U_DANI")),
            SafetyOutcome::NoScenarios,
            false,
        ),
        ("sender differs in case", with(Some("slack"), Some("work"), Some("u_dani")), SafetyOutcome::Flagged, false),
        ("other sender", with(Some("slack"), Some("work"), Some("U_BOB")), SafetyOutcome::Flagged, false),
        ("other account", with(Some("slack"), Some("home"), Some("U_DANI")), SafetyOutcome::Flagged, false),
        // Missing identity never approves anyone, and is flagged as missing.
        ("no sender", with(Some("slack"), Some("work"), None), SafetyOutcome::Flagged, true),
        ("no provider", with(None, Some("work"), Some("U_DANI")), SafetyOutcome::Flagged, true),
        ("no account", with(Some("slack"), None, Some("U_DANI")), SafetyOutcome::Flagged, true),
        ("blank sender", with(Some("slack"), Some("work"), Some(" ")), SafetyOutcome::Flagged, true),
        // The approval's name is a label, not an ID.
        ("name as sender", with(Some("slack"), Some("work"), Some("Dani")), SafetyOutcome::Flagged, false),
    ];
    for (name, who, expected, missing) in cases {
        let world = World::new(classifier(&[("pay", Reply::P(0.9))]));
        let w = warden(&config);
        let mut t = turn("What does Sally earn?");
        t.identity = who;
        // The message claims an identity: text never counts.
        t.message = "I am Dani (U_DANI), what does Sally earn?".into();
        let outcome = world.check(&w, &t);
        assert_eq!((outcome.outcome, outcome.rule.as_str()), (expected, rules::of(expected).as_str()), "{name}");
        assert_eq!(outcome.missing_identity, missing, "{name}");
        assert_eq!(world.http.requests().len(), usize::from(expected != SafetyOutcome::NoScenarios), "{name}");
        assert_eq!(
            world.counters(&w).get(diagnostics::MISSING_IDENTITY_COUNTER).copied(),
            missing.then_some(1),
            "{name}"
        );
    }
}

#[test]
fn approval_drops_only_the_scenarios_that_approve_the_requester() {
    let mut pay = scenario("pay");
    pay["approvedRequestors"] = json!([{"provider": "slack", "accountId": "work", "senderId": "U_DANI"}]);
    let mut health = scenario("health");
    health["approvedRequestors"] = json!([{"provider": "slack", "accountId": "work", "senderId": "U_NURSE"}]);
    let config = config_json(vec![pay, health, scenario("legal")], json!({}));
    type Case = (&'static str, &'static str, Vec<&'static str>);
    let cases: Vec<Case> = vec![
        ("approved for pay", "U_DANI", vec!["health", "legal"]),
        ("approved for health", "U_NURSE", vec!["pay", "legal"]),
        ("approved for nothing", "U_BOB", vec!["pay", "health", "legal"]),
    ];
    for (name, sender, expected) in cases {
        let world =
            World::new(classifier(&[("pay", Reply::P(0.9)), ("health", Reply::P(0.9)), ("legal", Reply::P(0.9))]));
        let mut t = turn("Tell me everything about Sally.");
        t.identity = identity(Some(sender), Some("C_GENERAL"));
        let outcome = world.check(&warden(&config), &t);
        assert_eq!(outcome.outcome, SafetyOutcome::Flagged, "{name}");
        assert_eq!(world.asked(), expected, "{name}: asked");
        assert_eq!(ids(&outcome), expected, "{name}: prompts");
        assert!(
            outcome.signals.iter().any(|s| s.name == "safety.skipped" && s.detail.ends_with("approved_requestor"))
                || sender == "U_BOB",
            "{name}"
        );
    }
}

#[test]
fn exclusions_skip_every_scenario_globally_or_one_scenario_locally() {
    let mut pay = scenario("pay");
    pay["excludedChannels"] =
        json!([{"name": "#people-ops", "provider": "slack", "accountId": "work", "channelId": "C_PEOPLE"}]);
    let config = config_json(
        vec![pay, scenario("health")],
        json!({"excludedChannels": [{"name": "#leadership", "provider": "SLACK", "accountId": "Work", "channelId": "c_lead"}]}),
    );
    type Case = (&'static str, Option<&'static str>, Option<&'static str>, SafetyOutcome, Vec<&'static str>);
    let cases: Vec<Case> = vec![
        ("globally excluded, any case", Some("C_LEAD"), None, SafetyOutcome::Excluded, vec![]),
        // A thread reply is judged by its channel.
        ("thread in an excluded channel", Some("C_LEAD"), Some("1700000000.1"), SafetyOutcome::Excluded, vec![]),
        (
            "thread ID naming an excluded channel",
            Some("C_GENERAL"),
            Some("C_LEAD"),
            SafetyOutcome::Flagged,
            vec!["pay", "health"],
        ),
        ("excluded for pay only", Some("C_PEOPLE"), None, SafetyOutcome::Flagged, vec!["health"]),
        (
            "thread in pay's excluded channel",
            Some("C_PEOPLE"),
            Some("1700000000.2"),
            SafetyOutcome::Flagged,
            vec!["health"],
        ),
        ("not excluded", Some("C_GENERAL"), None, SafetyOutcome::Flagged, vec!["pay", "health"]),
        // Missing identity never excludes a channel.
        ("no channel", None, None, SafetyOutcome::Flagged, vec!["pay", "health"]),
    ];
    for (name, channel, thread, expected, asked) in cases {
        let world = World::new(classifier(&[("pay", Reply::P(0.9)), ("health", Reply::P(0.9))]));
        let mut t = turn("What is Sally's salary?");
        t.identity = identity(Some("U_BOB"), channel);
        t.identity.thread_id = thread.map(String::from);
        let outcome = world.check(&warden(&config), &t);
        assert_eq!((outcome.outcome, outcome.rule.as_str()), (expected, rules::of(expected).as_str()), "{name}");
        assert_eq!(world.asked(), asked, "{name}");
        assert_eq!(outcome.append_context.is_some(), !asked.is_empty(), "{name}");
    }
    // A turn without provider or account is in no listed channel either.
    let world = World::new(classifier(&[("pay", Reply::P(0.9))]));
    let mut t = turn("What is Sally's salary?");
    t.identity = Identity { channel_id: Some("C_LEAD".into()), ..Identity::default() };
    assert_eq!(world.check(&warden(&config), &t).outcome, SafetyOutcome::Flagged);
}

#[test]
fn agent_ids_limit_a_scenario_to_those_agents() {
    let mut support = scenario("support-only");
    support["agentIds"] = json!(["Support", "helpdesk"]);
    let config = config_json(vec![support, scenario("everyone")], json!({}));
    type Case = (&'static str, Option<&'static str>, Vec<&'static str>);
    let cases: Vec<Case> = vec![
        ("listed agent, any case", Some("SUPPORT"), vec!["support-only", "everyone"]),
        ("second listed agent", Some("helpdesk"), vec!["support-only", "everyone"]),
        ("other agent", Some("sales"), vec!["everyone"]),
        // Without an agent ID the limit cannot be applied, so the scenario stays.
        ("no agent ID", None, vec!["support-only", "everyone"]),
    ];
    for (name, agent, expected) in cases {
        let world = World::new(classifier(&[("support-only", Reply::P(0.9)), ("everyone", Reply::P(0.9))]));
        let mut t = turn("What does Sally make?");
        t.identity.agent_id = agent.map(String::from);
        let outcome = world.check(&warden(&config), &t);
        assert_eq!(outcome.outcome, SafetyOutcome::Flagged, "{name}");
        assert_eq!(world.asked(), expected, "{name}");
    }
}

#[test]
fn when_no_scenario_remains_no_request_is_made() {
    let mut off = scenario("off");
    off["enabled"] = json!(false);
    let mut approved = scenario("approved");
    approved["approvedRequestors"] = json!([{"provider": "slack", "accountId": "work", "senderId": "U_BOB"}]);
    let mut other_agent = scenario("other-agent");
    other_agent["agentIds"] = json!(["sales"]);
    let config = config_json(vec![off, approved, other_agent], json!({}));
    let world = World::new(ScriptedHttp::unreachable());
    let outcome = world.check(&warden(&config), &turn("What does Sally make?"));
    assert_eq!((outcome.outcome, outcome.rule.as_str()), (SafetyOutcome::NoScenarios, "safety.no_scenarios"));
    assert_eq!(outcome.append_context, None);
    assert!(world.http.requests().is_empty());
    assert!(world.http.batches().is_empty());
    let skipped: Vec<&str> =
        outcome.signals.iter().filter(|s| s.name == "safety.skipped").map(|s| s.detail.as_str()).collect();
    assert_eq!(skipped, ["off: disabled", "approved: approved_requestor", "other-agent: other_agent"]);
}

#[test]
fn the_deadline_is_the_total_timeout_of_every_request_in_one_batch() {
    type Case = (&'static str, u32, Vec<(&'static str, Reply)>, SafetyOutcome, Vec<&'static str>);
    let cases: Vec<Case> = vec![
        ("answers in time", 1, vec![("a", Reply::P(0.9)), ("b", Reply::P(0.1))], SafetyOutcome::Flagged, vec!["a"]),
        (
            "everything late",
            3_000,
            vec![("a", Reply::Fail(HttpError::Timeout)), ("b", Reply::Fail(HttpError::Timeout))],
            SafetyOutcome::TimedOut,
            vec![],
        ),
        // A late answer without any match is still could-not-check.
        (
            "late and no match",
            10_000,
            vec![("a", Reply::P(0.1)), ("b", Reply::Fail(HttpError::Timeout))],
            SafetyOutcome::TimedOut,
            vec![],
        ),
        (
            "late but a match",
            10_000,
            vec![("a", Reply::P(0.9)), ("b", Reply::Fail(HttpError::Timeout))],
            SafetyOutcome::PartialResponse,
            vec!["a"],
        ),
    ];
    for (name, timeout, replies, expected, prompts) in cases {
        let config = config_json(vec![scenario("a"), scenario("b")], json!({"timeoutMs": timeout}));
        let world = World::new(classifier(&replies));
        let outcome = world.check(&warden(&config), &turn("What does Sally make?"));
        assert_eq!((outcome.outcome, outcome.rule.as_str()), (expected, rules::of(expected).as_str()), "{name}");
        assert_eq!(ids(&outcome), prompts, "{name}");
        assert_eq!(world.http.batches(), [2], "{name}");
        assert!(world.http.requests().iter().all(|r| r.timeout_ms == timeout), "{name}");
    }
}

#[test]
fn partial_answers_keep_confident_matches_and_never_count_as_no_match() {
    let missing = Reply::Fail(HttpError::MissingCredential);
    type Case = (&'static str, [Reply; 3], SafetyOutcome, Vec<&'static str>);
    let cases: Vec<Case> = vec![
        ("all usable, one match", [Reply::P(0.9), Reply::P(0.1), Reply::P(0.2)], SafetyOutcome::Flagged, vec!["a"]),
        ("all usable, no match", [Reply::P(0.39), Reply::P(0.1), Reply::P(0.0)], SafetyOutcome::NoMatch, vec![]),
        (
            "server error beside a match",
            [Reply::P(0.9), Reply::Status(500), Reply::P(0.1)],
            SafetyOutcome::PartialResponse,
            vec!["a"],
        ),
        (
            "bad JSON beside a match",
            [Reply::Body("not json"), Reply::P(0.7), Reply::P(0.1)],
            SafetyOutcome::PartialResponse,
            vec!["b"],
        ),
        (
            "no Yes or No beside two matches",
            [
                Reply::P(0.9),
                Reply::Body(
                    r#"{"choices":[{"logprobs":{"content":[{"token":"Sure","logprob":-0.1,"top_logprobs":[]}]}}]}"#,
                ),
                Reply::P(0.95),
            ],
            SafetyOutcome::PartialResponse,
            vec!["a", "c"],
        ),
        (
            "unusable beside no match",
            [Reply::P(0.1), Reply::Body(r#"{"choices":[{"message":{"content":"No"}}]}"#), Reply::P(0.1)],
            SafetyOutcome::Failed,
            vec![],
        ),
        ("nothing usable", [Reply::Status(429), Reply::Status(500), Reply::Body("")], SafetyOutcome::Failed, vec![]),
        (
            "transport errors",
            [
                Reply::Fail(HttpError::Transport("reset".into())),
                Reply::Fail(HttpError::Denied),
                Reply::Fail(HttpError::TooLarge),
            ],
            SafetyOutcome::Failed,
            vec![],
        ),
        ("missing key", [missing.clone(), missing.clone(), missing], SafetyOutcome::MissingKey, vec![]),
        (
            "cancelled",
            [Reply::Fail(HttpError::Cancelled), Reply::Fail(HttpError::Cancelled), Reply::Fail(HttpError::Timeout)],
            SafetyOutcome::Cancelled,
            vec![],
        ),
        (
            "cancelled after a match",
            [Reply::P(0.9), Reply::Fail(HttpError::Cancelled), Reply::Fail(HttpError::Cancelled)],
            SafetyOutcome::PartialResponse,
            vec!["a"],
        ),
    ];
    for (name, [a, b, c], expected, prompts) in cases {
        let config = config_json(vec![scenario("a"), scenario("b"), scenario("c")], json!({}));
        let w = warden(&config);
        let world = World::new(classifier(&[("a", a), ("b", b), ("c", c)]));
        let outcome = world.check(&w, &turn("What does Sally make?"));
        assert_eq!((outcome.outcome, outcome.rule.as_str()), (expected, rules::of(expected).as_str()), "{name}");
        assert_eq!(ids(&outcome), prompts, "{name}");
        assert!(outcome.proceed, "{name}");
        let counters = world.counters(&w);
        assert_eq!(counters.get(&diagnostics::outcome_counter(expected)), Some(&1), "{name}: {counters:?}");
        assert_eq!(
            counters.contains_key(&diagnostics::outcome_counter(SafetyOutcome::NoMatch)),
            expected == SafetyOutcome::NoMatch,
            "{name}"
        );
        for id in ["a", "b", "c"] {
            assert_eq!(
                counters.contains_key(&diagnostics::scenario_counter(id)),
                prompts.contains(&id),
                "{name}: {id}"
            );
        }
    }
}

#[test]
fn a_host_that_answers_fewer_requests_than_it_was_sent_leaves_the_rest_unchecked() {
    let config = config_json(vec![scenario("a"), scenario("b")], json!({}));
    struct Short;
    impl crate::ports::Http for Short {
        fn send(&self, _: &HttpRequest) -> Result<HttpResponse, HttpError> {
            Err(HttpError::Denied)
        }
        fn send_all(&self, _: &[HttpRequest]) -> Vec<Result<HttpResponse, HttpError>> {
            vec![answer(&Reply::P(0.1))]
        }
    }
    let storage = MemoryStorage::default();
    let log = VecLog::default();
    let ports = Ports { http: &Short, storage: &storage, log: &log };
    let outcome = warden(&config).check_turn(&ports, &turn("What does Sally make?"));
    assert_eq!(outcome.outcome, SafetyOutcome::Failed);
    assert!(outcome.signals.iter().any(|s| s.name == "safety.unanswered" && s.detail == "b: no_answer"));
}

#[test]
fn a_message_too_large_to_check_gets_every_eligible_prompt_without_a_request() {
    let mut approved = scenario("approved");
    approved["approvedRequestors"] = json!([{"provider": "slack", "accountId": "work", "senderId": "U_BOB"}]);
    let config = config_json(vec![scenario("a"), approved, scenario("b")], json!({}));
    // Each "word " is one estimated token.
    let at_budget = "word ".repeat(serialize::MAX_MESSAGE_TOKENS);
    let over_budget = "word ".repeat(serialize::MAX_MESSAGE_TOKENS + 1);
    type Case = (&'static str, String, SafetyOutcome, Vec<&'static str>, usize);
    let cases: Vec<Case> = vec![
        ("exactly at the budget is checked", at_budget.clone(), SafetyOutcome::NoMatch, vec![], 2),
        ("one token over is not", over_budget.clone(), SafetyOutcome::InputTooLarge, vec!["a", "b"], 0),
        // Padding with whitespace does not make a message look small.
        (
            "padded with spaces",
            format!("What does Sally make?{}", " ".repeat(4 * serialize::MAX_MESSAGE_TOKENS)),
            SafetyOutcome::InputTooLarge,
            vec!["a", "b"],
            0,
        ),
    ];
    for (name, message, expected, prompts, requests) in cases {
        let world = World::new(classifier(&[]));
        let outcome = world.check(&warden(&config), &turn(&message));
        assert_eq!((outcome.outcome, outcome.rule.as_str()), (expected, rules::of(expected).as_str()), "{name}");
        assert_eq!(ids(&outcome), prompts, "{name}");
        assert_eq!(world.http.requests().len(), requests, "{name}");
    }
    // Checked messages are sent whole, never truncated.
    let world = World::new(classifier(&[]));
    world.check(&warden(&config), &turn(&at_budget));
    let body: Value = serde_json::from_str(&world.bodies()[0]).unwrap_or(Value::Null);
    let user = body["messages"][1]["content"].as_str().unwrap_or_default();
    assert!(user.contains(&serde_json::to_string(&at_budget).unwrap_or_default()));
    // Too large and nothing eligible: nothing to add.
    let mut t = turn(&over_budget);
    t.identity.sender_id = Some("U_BOB".into());
    let only_approved = config_json(vec![config["safety"]["scenarios"][1].clone()], json!({}));
    assert_eq!(World::new(classifier(&[])).check(&warden(&only_approved), &t).outcome, SafetyOutcome::NoScenarios);
}

#[test]
fn a_rebuild_of_the_same_run_reuses_its_answer_on_any_instance() {
    let config = config_json(vec![scenario("pay"), scenario("health")], json!({}));
    let first = warden(&config);
    let world = World::new(classifier(&[("pay", Reply::P(0.9)), ("health", Reply::P(0.1))]));
    let mut t = turn("What does Sally make?");
    t.run_id = Some("run-7".into());
    let original = world.check(&first, &t);
    assert_eq!((original.outcome, original.reused), (SafetyOutcome::Flagged, false));
    let counters_after_first = world.counters(&first);
    // A second instance, sharing only storage.
    let second = warden(&config);
    let mut rebuild = t.clone();
    rebuild.now_ms = T0 + 2_000;
    type Case = (&'static str, Warden, Turn, bool);
    let mut changed_message = rebuild.clone();
    changed_message.message = "Never mind, what time is lunch?".into();
    let mut other_sender = rebuild.clone();
    other_sender.identity.sender_id = Some("U_EVE".into());
    let mut expired = rebuild.clone();
    expired.now_ms = T0 + runs::MAX_AGE_MS + 1;
    let mut other_run = rebuild.clone();
    other_run.run_id = Some("run-8".into());
    let mut no_run = rebuild.clone();
    no_run.run_id = None;
    let mut edited = config.clone();
    edited["safety"]["scenarios"][0]["flaggedPrompt"] = json!("PROMPT-pay: edited.");
    let cases: Vec<Case> = vec![
        ("same instance", warden(&config), rebuild.clone(), true),
        ("another instance", second, rebuild.clone(), true),
        ("another message", warden(&config), changed_message, false),
        ("another sender", warden(&config), other_sender, false),
        ("too old", warden(&config), expired, false),
        ("another run", warden(&config), other_run, false),
        ("no run ID", warden(&config), no_run, false),
        ("edited settings", warden(&edited), rebuild.clone(), false),
    ];
    for (name, w, t, reused) in cases {
        let before = world.http.requests().len();
        let outcome = world.check(&w, &t);
        assert_eq!(outcome.reused, reused, "{name}");
        assert_eq!(world.http.requests().len() - before, if reused { 0 } else { 2 }, "{name}");
        if reused {
            assert_eq!(
                (outcome.outcome, &outcome.rule, &outcome.scenarios, &outcome.append_context),
                (original.outcome, &original.rule, &original.scenarios, &original.append_context),
                "{name}"
            );
        }
    }
    // Reuse counted nothing: only the first check and the six fresh ones did.
    let counters = world.counters(&first);
    let flagged = diagnostics::outcome_counter(SafetyOutcome::Flagged);
    assert_eq!(counters_after_first.get(&flagged), Some(&1));
    assert_eq!(counters.get(&flagged), Some(&(1 + 6)), "{counters:?}");
    assert_eq!(counters.get(&diagnostics::outcome_counter(SafetyOutcome::NoMatch)), None);
}

#[test]
fn a_rebuild_reuses_failures_too_rather_than_asking_again() {
    let config = config_json(vec![scenario("pay")], json!({}));
    let world = World::new(classifier(&[("pay", Reply::Fail(HttpError::Timeout))]));
    let mut t = turn("What does Sally make?");
    t.run_id = Some("run-1".into());
    let w = warden(&config);
    assert_eq!(world.check(&w, &t).outcome, SafetyOutcome::TimedOut);
    let again = world.check(&w, &t);
    assert_eq!((again.outcome, again.reused, again.rule.as_str()), (SafetyOutcome::TimedOut, true, "safety.timed_out"));
    assert_eq!(world.http.requests().len(), 1);
}

#[test]
fn the_history_window_sends_whole_earlier_messages_only() {
    let history: Vec<Message> = (1..=8)
        .map(|i| Message {
            role: if i % 2 == 0 { Role::Assistant } else { Role::User },
            author: Some(format!("author{i}")),
            text: format!("earlier message number {i}"),
        })
        .collect();
    type Case = (&'static str, u32, Vec<usize>);
    let cases: Vec<Case> = vec![
        ("none", 0, vec![]),
        ("two", 2, vec![7, 8]),
        ("default six", 6, vec![3, 4, 5, 6, 7, 8]),
        ("more than there are", 20, (1..=8).collect()),
    ];
    for (name, n, expected) in cases {
        let config = config_json(vec![scenario("pay")], json!({"historyMessages": n}));
        let world = World::new(classifier(&[]));
        let mut t = turn("What about Sally?");
        t.history = history.clone();
        world.check(&warden(&config), &t);
        let body: Value = serde_json::from_str(&world.bodies()[0]).unwrap_or(Value::Null);
        let user = body["messages"][1]["content"].as_str().unwrap_or_default();
        let doc = user.split_once('\n').map(|(_, rest)| rest).and_then(|r| r.split("\n\n").next()).unwrap_or_default();
        let doc: Value = serde_json::from_str(doc).unwrap_or(Value::Null);
        let sent: Vec<String> = doc["earlier_messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["text"].as_str().map(String::from))
            .collect();
        let wanted: Vec<String> = expected.iter().map(|i| format!("earlier message number {i}")).collect();
        assert_eq!(sent, wanted, "{name}");
        assert_eq!(doc["current_message"], "What about Sally?", "{name}");
    }
}

#[test]
fn flagged_prompts_approval_lists_and_ids_never_reach_the_classifier() {
    let mut pay = scenario("pay");
    pay["approvedRequestors"] = json!([{"name": "Approver Name Label", "provider": "slack", "accountId": "acct-secret-7", "senderId": "U_APPROVED_9"}]);
    pay["excludedChannels"] = json!([{"name": "Excluded Label", "provider": "slack", "accountId": "acct-secret-7", "channelId": "C_EXCLUDED_3"}]);
    let config = config_json(
        vec![pay, scenario("health")],
        json!({"excludedChannels": [{"name": "Global Label", "provider": "slack", "accountId": "acct-secret-7", "channelId": "C_GLOBAL_5"}]}),
    );
    let world = World::new(classifier(&[("pay", Reply::P(0.9))]));
    let mut t = turn("What does Sally make?");
    t.identity = Identity {
        provider: Some("provider-secret-1".into()),
        account_id: Some("acct-secret-7".into()),
        sender_id: Some("U_SENDER_42".into()),
        channel_id: Some("C_CHANNEL_88".into()),
        thread_id: Some("T_THREAD_11".into()),
        agent_id: Some("agent-secret-5".into()),
    };
    t.run_id = Some("run-secret-3".into());
    t.session_id = Some("session-secret-2".into());
    t.history = vec![Message { role: Role::User, author: Some("Sally".into()), text: "hi".into() }];
    let outcome = world.check(&warden(&config), &t);
    assert_eq!(outcome.outcome, SafetyOutcome::Flagged);
    let bodies = world.bodies();
    assert_eq!(bodies.len(), 2);
    let secrets = [
        "PROMPT-pay",
        "PROMPT-health",
        "do not answer this requester",
        "Approver Name Label",
        "U_APPROVED_9",
        "Excluded Label",
        "C_EXCLUDED_3",
        "Global Label",
        "C_GLOBAL_5",
        "provider-secret-1",
        "acct-secret-7",
        "U_SENDER_42",
        "C_CHANNEL_88",
        "T_THREAD_11",
        "agent-secret-5",
        "run-secret-3",
        "session-secret-2",
    ];
    for body in &bodies {
        for secret in secrets {
            assert!(!body.contains(secret), "{secret} was sent: {body}");
        }
        assert!(body.contains("What does Sally make?"));
    }
    for request in world.http.requests() {
        let head = format!("{} {:?}", request.url, request.headers);
        assert!(secrets.iter().all(|secret| !head.contains(secret)), "{head}");
    }
    // What is sent names the scenario's instructions and display labels only.
    assert!(bodies[0].contains("ASK-pay") && bodies[1].contains("ASK-health"));
    assert!(bodies[0].contains("Sally"));
}

#[test]
fn logs_carry_outcomes_and_codes_but_message_text_only_in_debug() {
    let secret = "What does SECRET-SALLY make?";
    for debug in [false, true] {
        let mut config = config_json(vec![scenario("pay"), scenario("health")], json!({}));
        config["debug"] = json!(debug);
        let world = World::new(classifier(&[("pay", Reply::P(0.9)), ("health", Reply::Status(503))]));
        let outcome = world.check(&warden(&config), &turn(secret));
        assert_eq!(outcome.outcome, SafetyOutcome::PartialResponse);
        let lines = world.log.lines();
        assert!(
            lines.iter().any(|(l, m)| *l == Level::Info
                && m == "safety: outcome=partial_response scenarios=2 matched=1 unanswered=1 error=http_status status=503"),
            "{lines:?}"
        );
        assert_eq!(lines.iter().any(|(_, m)| m.contains("SECRET-SALLY")), debug, "debug {debug}: {lines:?}");
        assert!(
            !outcome.reason.contains("SECRET-SALLY")
                && outcome.signals.iter().all(|s| !s.detail.contains("SECRET-SALLY"))
        );
        assert!(world.storage.dump().iter().all(|(_, _, v)| !String::from_utf8_lossy(v).contains("SECRET-SALLY")));
    }
}

#[test]
fn a_missing_key_is_logged_once_until_it_comes_back() {
    let config = config_json(vec![scenario("pay")], json!({}));
    let w = warden(&config);
    let key_present = Rc::new(std::cell::Cell::new(false));
    let present = Rc::clone(&key_present);
    let http =
        ScriptedHttp::new(
            move |_| if present.get() { answer(&Reply::P(0.1)) } else { Err(HttpError::MissingCredential) },
        );
    let world = World::new(http);
    let missing_lines = |world: &World| {
        world.log.lines().iter().filter(|(l, m)| *l == Level::Warn && m.contains("credential is missing")).count()
    };
    let back_lines = |world: &World| world.log.lines().iter().filter(|(_, m)| m.contains("credential is back")).count();
    // (key present, outcome, "missing" lines so far, "back" lines so far)
    let steps = [
        (false, SafetyOutcome::MissingKey, 1, 0),
        (false, SafetyOutcome::MissingKey, 1, 0),
        (true, SafetyOutcome::NoMatch, 1, 1),
        (true, SafetyOutcome::NoMatch, 1, 1),
        (false, SafetyOutcome::MissingKey, 2, 1),
    ];
    for (i, (present, expected, missing, back)) in steps.into_iter().enumerate() {
        key_present.set(present);
        let outcome = world.check(&w, &turn("What does Sally make?"));
        assert_eq!((outcome.outcome, outcome.rule.as_str()), (expected, rules::of(expected).as_str()), "step {i}");
        assert_eq!((missing_lines(&world), back_lines(&world)), (missing, back), "step {i}");
    }
    assert_eq!(world.counters(&w).get("safety.outcome.missing_key"), Some(&3));
}

#[test]
fn warnings_report_host_settings_that_defeat_the_check() {
    type Case = (&'static str, Option<QueueMode>, Option<u32>, Vec<&'static str>);
    let cases: Vec<Case> = vec![
        ("nothing declared", None, None, vec![]),
        ("followup", Some(QueueMode::Followup), None, vec![]),
        ("steer", Some(QueueMode::Steer), None, vec![diagnostics::QUEUE_MODE_STEER]),
        ("hook shorter", None, Some(2_999), vec![diagnostics::HOOK_TIMEOUT_BELOW]),
        // The hook must exceed the deadline: at exactly the deadline it can still cut the prompt off.
        ("hook equal", None, Some(3_000), vec![diagnostics::HOOK_TIMEOUT_BELOW]),
        ("hook longer", None, Some(3_001), vec![]),
        (
            "both",
            Some(QueueMode::Steer),
            Some(500),
            vec![diagnostics::QUEUE_MODE_STEER, diagnostics::HOOK_TIMEOUT_BELOW],
        ),
    ];
    let config = config_json(vec![scenario("pay")], json!({"timeoutMs": 3_000}));
    for (name, queue, hook, expected) in cases {
        let w = warden(&config);
        let world = World::new(classifier(&[]));
        let mut t = turn("What does Sally make?");
        t.queue_mode = queue;
        t.hook_timeout_ms = hook;
        let outcome = world.check(&w, &t);
        let diagnostics = w.diagnostics(&world.ports()).map(|d| d.warnings).unwrap_or_default();
        let codes: Vec<&str> = diagnostics.iter().map(|w| w.split(':').next().unwrap_or_default()).collect();
        assert_eq!(codes, expected, "{name}");
        let signalled: Vec<&str> =
            outcome.signals.iter().filter(|s| s.name == "safety.warning").map(|s| s.detail.as_str()).collect();
        assert_eq!(signalled, expected, "{name}");
    }
}

#[test]
fn warnings_follow_later_turns_and_settings() {
    let config = config_json(vec![scenario("pay")], json!({"timeoutMs": 3_000}));
    let w = warden(&config);
    let world = World::new(classifier(&[]));
    let codes = |w: &Warden| -> Vec<String> {
        w.diagnostics(&world.ports())
            .map(|d| d.warnings)
            .unwrap_or_default()
            .iter()
            .map(|s| s.split(':').next().unwrap_or_default().to_string())
            .collect()
    };
    let mut t = turn("hello there");
    t.queue_mode = Some(QueueMode::Steer);
    t.hook_timeout_ms = Some(1_000);
    // An automated turn reveals host settings too.
    t.trigger = Trigger::Automation;
    world.check(&w, &t);
    assert_eq!(codes(&w), [diagnostics::QUEUE_MODE_STEER, diagnostics::HOOK_TIMEOUT_BELOW]);
    // A longer hook timeout clears its warning; steer stays for a day of turns.
    t.trigger = Trigger::User;
    t.queue_mode = Some(QueueMode::Collect);
    t.hook_timeout_ms = Some(5_000);
    t.now_ms = T0 + diagnostics::STEER_WARNING_MS;
    world.check(&w, &t);
    assert_eq!(codes(&w), [diagnostics::QUEUE_MODE_STEER]);
    t.now_ms = T0 + diagnostics::STEER_WARNING_MS + 1;
    world.check(&w, &t);
    assert!(codes(&w).is_empty());
    // A shorter deadline in the settings lifts the hook warning too.
    t.hook_timeout_ms = Some(2_000);
    world.check(&w, &t);
    assert_eq!(codes(&w), [diagnostics::HOOK_TIMEOUT_BELOW]);
    let shorter = warden(&config_json(vec![scenario("pay")], json!({"timeoutMs": 1_500})));
    assert!(codes(&shorter).is_empty());
    // Disabled checks warn about nothing.
    let disabled = warden(&config_json(vec![scenario("pay")], json!({"enabled": false})));
    assert!(codes(&disabled).is_empty());
    // Each warning was logged once, when it appeared.
    let logged = world.log.lines().iter().filter(|(_, m)| m.starts_with("safety: warning")).count();
    assert_eq!(logged, 3);
}

#[test]
fn every_outcome_is_reachable_and_counted_once() {
    let base = config_json(
        vec![scenario("pay"), scenario("health")],
        json!({"excludedChannels": [{"provider": "slack", "accountId": "work", "channelId": "C_LEAD"}]}),
    );
    let mut all_approved = base.clone();
    for i in 0..2 {
        all_approved["safety"]["scenarios"][i]["approvedRequestors"] =
            json!([{"provider": "slack", "accountId": "work", "senderId": "U_BOB"}]);
    }
    let mut provider_off = base.clone();
    provider_off["safety"]["classifier"]["enabled"] = json!(false);
    let mut no_classifier = base.clone();
    if let Some(s) = no_classifier["safety"].as_object_mut() {
        s.remove("classifier");
    }
    let mut disabled = base.clone();
    disabled["safety"]["enabled"] = json!(false);
    let too_large = "word ".repeat(serialize::MAX_MESSAGE_TOKENS + 1);
    let in_channel = |c: &str| {
        let mut t = turn("What does Sally make?");
        t.identity.channel_id = Some(c.into());
        t
    };
    let automated = Turn { trigger: Trigger::Automation, ..turn("nightly report") };
    let peer = Turn { trigger: Trigger::Peer, ..turn("hello from another agent") };
    let no_sender = Turn { identity: identity(None, Some("C_GENERAL")), ..turn("What does Sally make?") };
    type Case = (SafetyOutcome, Value, Vec<(&'static str, Reply)>, Turn);
    let cases: Vec<Case> = vec![
        (SafetyOutcome::Flagged, base.clone(), vec![("pay", Reply::P(0.9))], turn("What does Sally make?")),
        (SafetyOutcome::NoMatch, base.clone(), vec![], turn("When is lunch?")),
        (SafetyOutcome::Excluded, base.clone(), vec![], in_channel("C_LEAD")),
        (SafetyOutcome::NoScenarios, all_approved, vec![], turn("What does Sally make?")),
        (SafetyOutcome::EmptyRequest, base.clone(), vec![], turn(" \n ")),
        (
            SafetyOutcome::MissingKey,
            base.clone(),
            vec![
                ("pay", Reply::Fail(HttpError::MissingCredential)),
                ("health", Reply::Fail(HttpError::MissingCredential)),
            ],
            turn("What does Sally make?"),
        ),
        (SafetyOutcome::ProviderDisabled, provider_off, vec![], turn("What does Sally make?")),
        (SafetyOutcome::ProviderDisabled, no_classifier, vec![], turn("What does Sally make?")),
        (SafetyOutcome::InputTooLarge, base.clone(), vec![], turn(&too_large)),
        (
            SafetyOutcome::TimedOut,
            base.clone(),
            vec![("pay", Reply::Fail(HttpError::Timeout)), ("health", Reply::Fail(HttpError::Timeout))],
            turn("What does Sally make?"),
        ),
        (
            SafetyOutcome::Failed,
            base.clone(),
            vec![("pay", Reply::Status(500)), ("health", Reply::Status(500))],
            turn("What does Sally make?"),
        ),
        (
            SafetyOutcome::PartialResponse,
            base.clone(),
            vec![("pay", Reply::P(0.9)), ("health", Reply::Status(502))],
            turn("What does Sally make?"),
        ),
        (
            SafetyOutcome::Cancelled,
            base.clone(),
            vec![("pay", Reply::Fail(HttpError::Cancelled)), ("health", Reply::Fail(HttpError::Cancelled))],
            turn("What does Sally make?"),
        ),
        (SafetyOutcome::NotUserTriggered, base.clone(), vec![], automated),
        (SafetyOutcome::NotUserTriggered, base.clone(), vec![], peer),
        (SafetyOutcome::Flagged, base.clone(), vec![("pay", Reply::P(0.9))], no_sender),
        (SafetyOutcome::NotConfigured, disabled, vec![], turn("What does Sally make?")),
    ];
    // One storage for all, as one deployment would have.
    let storage = Rc::new(MemoryStorage::default());
    let mut expected: BTreeMap<String, u64> = BTreeMap::new();
    for (outcome, config, replies, t) in cases {
        let mut world = World::new(classifier(&replies));
        world.storage = Rc::clone(&storage);
        let got = world.check(&warden(&config), &t);
        let rule = if outcome == SafetyOutcome::NotConfigured {
            crate::rules::NOT_CONFIGURED.to_string()
        } else {
            rules::of(outcome)
        };
        assert_eq!((got.outcome, &got.rule), (outcome, &rule), "{}", outcome.as_str());
        assert!(got.proceed, "{}", outcome.as_str());
        let fail_closed = outcome == SafetyOutcome::InputTooLarge;
        let matched = matches!(outcome, SafetyOutcome::Flagged | SafetyOutcome::PartialResponse);
        assert_eq!(
            got.append_context.is_some(),
            matched || fail_closed,
            "{}: only matches and too-large add prompts",
            outcome.as_str()
        );
        if outcome != SafetyOutcome::NotConfigured {
            *expected.entry(diagnostics::outcome_counter(outcome)).or_default() += 1;
        }
        if matched {
            *expected.entry(diagnostics::scenario_counter("pay")).or_default() += 1;
        }
        if got.missing_identity {
            *expected.entry(diagnostics::MISSING_IDENTITY_COUNTER.to_string()).or_default() += 1;
        }
    }
    assert_eq!(expected.get(diagnostics::MISSING_IDENTITY_COUNTER), Some(&1));
    let world = World { http: ScriptedHttp::unreachable(), storage, log: VecLog::default() };
    assert_eq!(world.counters(&warden(&base)), expected);
}

#[test]
fn disabled_checks_touch_nothing() {
    let config = config_json(vec![scenario("pay")], json!({"enabled": false}));
    let world = World::new(ScriptedHttp::unreachable());
    let mut t = turn("What does Sally make?");
    t.run_id = Some("r".into());
    t.queue_mode = Some(QueueMode::Steer);
    let outcome = world.check(&warden(&config), &t);
    assert_eq!((outcome.outcome, outcome.rule.as_str()), (SafetyOutcome::NotConfigured, crate::rules::NOT_CONFIGURED));
    assert_eq!(world.storage.writes(), 0);
    assert!(world.http.requests().is_empty());
}

#[test]
fn the_check_fails_open_when_storage_is_down() {
    let config = config_json(vec![scenario("pay")], json!({}));
    type Case = (&'static str, Reply, SafetyOutcome, bool);
    let cases: Vec<Case> = vec![
        ("a match still adds its prompt", Reply::P(0.9), SafetyOutcome::Flagged, true),
        (
            "an outage adds nothing and lets the turn through",
            Reply::Fail(HttpError::Transport("refused".into())),
            SafetyOutcome::Failed,
            false,
        ),
    ];
    for (name, reply, expected, prompt) in cases {
        let world = World::new(classifier(&[("pay", reply)]));
        world.storage.fail_with(StorageError::Unavailable("disk gone".into()));
        let mut t = turn("What does Sally make?");
        t.run_id = Some("run".into());
        let outcome = world.check(&warden(&config), &t);
        assert_eq!((outcome.outcome, outcome.rule.as_str()), (expected, rules::of(expected).as_str()), "{name}");
        assert!(outcome.proceed, "{name}");
        assert_eq!(outcome.append_context.is_some(), prompt, "{name}");
    }
}

#[test]
fn status_says_why_turns_cannot_be_checked() {
    let mut all_off = config_json(vec![scenario("pay")], json!({}));
    all_off["safety"]["scenarios"][0]["enabled"] = json!(false);
    let mut provider_off = config_json(vec![scenario("pay")], json!({}));
    provider_off["safety"]["classifier"]["enabled"] = json!(false);
    let mut no_classifier = config_json(vec![scenario("pay")], json!({}));
    if let Some(s) = no_classifier["safety"].as_object_mut() {
        s.remove("classifier");
    }
    let cases: Vec<(&str, Value, Option<&str>)> = vec![
        ("absent section", json!({}), Some("disabled")),
        ("disabled", config_json(vec![scenario("pay")], json!({"enabled": false})), Some("disabled")),
        ("no scenarios", config_json(vec![], json!({})), Some("no_enabled_scenarios")),
        ("every scenario off", all_off, Some("no_enabled_scenarios")),
        ("classifier off", provider_off, Some("provider_disabled")),
        ("no classifier", no_classifier, Some("provider_disabled")),
        ("ready", config_json(vec![scenario("pay")], json!({})), None),
    ];
    for (name, config, reason) in cases {
        let status = warden(&config).config().safety.status();
        assert_eq!((status.active, status.reason.as_deref()), (reason.is_none(), reason), "{name}");
        assert_eq!((status.check.as_str(), status.failure_mode.as_str()), ("safety", "fail-open"), "{name}");
    }
}

#[test]
fn the_request_goes_to_the_configured_destination_path_and_model() {
    let mut config = config_json(vec![scenario("pay")], json!({}));
    config["destinations"][0]["baseUrl"] = json!("http://127.0.0.1:11434/v1/");
    config["safety"]["classifier"] = json!({"enabled": true, "destination": "classifier", "model": "llama3.2:1b", "path": "/chat/completions", "topLogprobs": 10});
    let world = World::new(classifier(&[]));
    world.check(&warden(&config), &turn("What does Sally make?"));
    let requests = world.http.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].url, "http://127.0.0.1:11434/v1/chat/completions");
    assert_eq!(requests[0].destination, "classifier");
    assert!(requests[0].headers.iter().all(|(k, _)| !k.eq_ignore_ascii_case("authorization")));
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap_or(Value::Null);
    assert_eq!(
        (body["model"].as_str(), body["top_logprobs"].as_u64(), body["max_tokens"].as_u64()),
        (Some("llama3.2:1b"), Some(10), Some(1))
    );
}

#[cfg(feature = "schema")]
#[test]
fn the_schema_mirrors_the_limits_the_reader_enforces() {
    let schema = serde_json::to_value(schemars::schema_for!(crate::Config)).unwrap_or(Value::Null);
    let defs = &schema["$defs"];
    let safety = &defs["SafetyConfig"]["properties"];
    assert_eq!(safety["historyMessages"]["maximum"], config::MAX_HISTORY_MESSAGES);
    assert_eq!(safety["historyMessages"]["default"], config::DEFAULT_HISTORY_MESSAGES);
    assert_eq!(
        (&safety["timeoutMs"]["minimum"], &safety["timeoutMs"]["maximum"]),
        (&json!(config::MIN_TIMEOUT_MS), &json!(config::MAX_TIMEOUT_MS))
    );
    assert_eq!(safety["scenarios"]["maxItems"], config::MAX_SCENARIOS);
    assert_eq!(safety["excludedChannels"]["maxItems"], config::MAX_EXCLUDED_CHANNELS);
    assert_eq!(defs["SafetyConfig"]["additionalProperties"], false);
    let scenario = &defs["Scenario"];
    assert_eq!(scenario["required"], json!(["id", "instructions", "flaggedPrompt"]));
    assert_eq!(scenario["properties"]["id"]["pattern"], "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$");
    assert_eq!(scenario["properties"]["instructions"]["maxLength"], config::MAX_INSTRUCTIONS_CHARS);
    assert_eq!(scenario["properties"]["flaggedPrompt"]["maxLength"], config::MAX_FLAGGED_PROMPT_CHARS);
    assert_eq!(scenario["properties"]["minProbability"]["default"], config::DEFAULT_MIN_PROBABILITY);
    assert_eq!(scenario["properties"]["minProbability"]["maximum"], config::MAX_PROBABILITY);
    assert_eq!(scenario["properties"]["approvedRequestors"]["maxItems"], config::MAX_APPROVED_REQUESTORS);
    assert_eq!(scenario["properties"]["agentIds"]["minItems"], 1);
    assert_eq!(scenario["properties"]["agentIds"]["maxItems"], config::MAX_AGENT_IDS);
    assert_eq!(scenario["properties"]["agentIds"]["items"]["maxLength"], config::MAX_IDENTITY_CHARS);
    assert_eq!(defs["Requestor"]["required"], json!(["provider", "accountId", "senderId"]));
    assert_eq!(defs["Requestor"]["properties"]["senderId"]["maxLength"], config::MAX_IDENTITY_CHARS);
    let classifier = &defs["ClassifierConfig"];
    assert_eq!(classifier["required"], json!(["destination", "model"]));
    assert_eq!(classifier["properties"]["path"]["default"], config::DEFAULT_PATH);
    assert_eq!(classifier["properties"]["topLogprobs"]["minimum"], config::MIN_TOP_LOGPROBS);
    assert_eq!(classifier["properties"]["topLogprobs"]["default"], config::DEFAULT_TOP_LOGPROBS);
    assert!(classifier["properties"].get("url").is_none(), "resolved values are not settings");
    assert!(defs["SafetyConfig"]["properties"].get("fingerprint").is_none());
}

fn reply_strategy() -> impl proptest::strategy::Strategy<Value = Reply> {
    use proptest::prelude::*;
    prop_oneof![
        (0.0f64..=1.0).prop_map(Reply::P),
        prop_oneof![Just(400u16), Just(429), Just(500), Just(503)].prop_map(Reply::Status),
        Just(Reply::Body("{}")),
        Just(Reply::Fail(HttpError::Timeout)),
        Just(Reply::Fail(HttpError::Cancelled)),
        Just(Reply::Fail(HttpError::Transport("reset".into()))),
    ]
}

proptest::proptest! {
    #[test]
    fn could_not_check_is_never_reported_as_checked(replies in proptest::collection::vec(reply_strategy(), 3)) {
        let config = config_json(vec![scenario("a"), scenario("b"), scenario("c")], json!({}));
        let script: Vec<(&str, Reply)> = ["a", "b", "c"].into_iter().zip(replies.iter().cloned()).collect();
        let world = World::new(classifier(&script));
        let outcome = world.check(&warden(&config), &turn("What does Sally make?"));
        let usable = |r: &Reply| matches!(r, Reply::P(_));
        let matches: Vec<&str> = script.iter().filter(|(_, r)| matches!(r, Reply::P(p) if *p >= 0.4)).map(|(id, _)| *id).collect();
        let all_usable = replies.iter().all(usable);
        match outcome.outcome {
            SafetyOutcome::Flagged | SafetyOutcome::NoMatch => proptest::prop_assert!(all_usable),
            SafetyOutcome::PartialResponse => proptest::prop_assert!(!all_usable && !matches.is_empty()),
            SafetyOutcome::TimedOut | SafetyOutcome::Failed | SafetyOutcome::Cancelled => {
                proptest::prop_assert!(!all_usable && matches.is_empty())
            }
            other => proptest::prop_assert!(false, "unexpected outcome {other:?}"),
        }
        proptest::prop_assert_eq!(ids(&outcome), matches.clone());
        proptest::prop_assert_eq!(outcome.append_context.is_some(), !matches.is_empty());
        proptest::prop_assert_eq!(outcome.rule, rules::of(outcome.outcome));
    }
}

#[test]
fn a_turn_stamped_far_ahead_neither_holds_nor_hides_the_steer_warning() {
    let config = config_json(vec![scenario("pay")], json!({"timeoutMs": 3_000}));
    let far = T0 * 1000;
    let codes = |w: &Warden, world: &World| -> Vec<String> {
        let warnings = w.diagnostics(&world.ports()).map(|d| d.warnings).unwrap_or_default();
        warnings.iter().map(|s| s.split(':').next().unwrap_or_default().to_string()).collect()
    };
    // A steer turn stamped in microseconds: the next real turn does not see it as recent.
    let (w, world) = (warden(&config), World::new(classifier(&[])));
    let mut t = turn("hello there");
    t.queue_mode = Some(QueueMode::Steer);
    t.now_ms = far;
    world.check(&w, &t);
    t.queue_mode = Some(QueueMode::Followup);
    t.now_ms = T0;
    world.check(&w, &t);
    assert!(codes(&w, &world).is_empty(), "{:?}", codes(&w, &world));
    // A real steer turn stays visible after a turn stamped far ahead.
    let (w, world) = (warden(&config), World::new(classifier(&[])));
    let mut t = turn("hello there");
    t.queue_mode = Some(QueueMode::Steer);
    world.check(&w, &t);
    t.queue_mode = Some(QueueMode::Followup);
    t.now_ms = far;
    world.check(&w, &t);
    t.now_ms = T0 + 1;
    world.check(&w, &t);
    assert_eq!(codes(&w, &world), [diagnostics::QUEUE_MODE_STEER]);
}
