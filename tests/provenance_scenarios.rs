//! Provenance scenario suites end to end: four assistants (email, chat,
//! banking, travel), each with the configuration its operator would write,
//! the consent its own data knows, and tasks a person asks for or content the
//! agent reads tries to hijack. Every task runs in its own session through the
//! real component over SQLite: the person's message goes to `check-turn`,
//! every call to `check-tool-call`, every tool result to
//! `observe-tool-result`, every message to `check-outbound`, and the person's
//! answers to `record-approval`. Each step's decision and rule are asserted,
//! and the counts of injections stopped, user tasks denied and user tasks
//! asked are printed per suite and overall.
//!
//! The tables are in `tests/fixtures/provenance/*.json`. A step marked
//! `knownFailure` is one whose expectation is what the person needs but not
//! what Warden does yet; the reason says why, and the step is held to the
//! mismatch (a known failure that starts to pass fails the suite, so the mark
//! is removed).

use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::Arc;
use warden_host::bindings::exports::warden::guard::policy::{
    Approval, Direction, OutboundMessage, ToolCall, ToolResult, Trigger, Turn, TurnEnd, TurnStart,
};
use warden_host::bindings::warden::guard::types::{ApprovalScope, ChannelContext, Identity, Verdict};
use warden_host::json::{ChannelContextJson, IdentityJson, ScopeJson, TriggerJson, decision_name};
use warden_host::storage::{SqliteStorage, Storage};
use warden_tests::{TempDb, runtime};

/// 2026-03-10T10:00:00Z: a Tuesday morning, inside every suite's daytime.
const DAY0: u64 = 1_773_136_800_000;

/// The time between two tasks, so no task shares a minute with another.
const TASK_GAP_MS: u64 = 600_000;

/// The time between two steps of a task.
const STEP_GAP_MS: u64 = 5_000;

/// The suites, by fixture file name.
const SUITES: [&str; 4] = ["email", "chat", "banking", "travel"];

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Suite {
    suite: String,
    about: String,
    /// The person the assistant works for: the identity of every turn unless a step says otherwise.
    person: IdentityJson,
    /// The operator's configuration.
    config: Value,
    /// Consent the assistant's own data knows, recorded through the gate export before any task.
    consents: Vec<Consent>,
    tasks: Vec<Task>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Consent {
    channel: String,
    recipient: String,
    #[serde(default)]
    how: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum TaskKind {
    User,
    Injection,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Task {
    id: String,
    kind: TaskKind,
    /// What the person asked and why the expected answers are the right ones.
    about: String,
    prompt: Prompt,
    steps: Vec<Step>,
}

/// A message that starts a turn: `check-turn`'s message, trigger, identity and channel context.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Prompt {
    text: String,
    #[serde(default)]
    trigger: TriggerJson,
    #[serde(default)]
    identity: Option<IdentityJson>,
    #[serde(default)]
    context: ChannelContextJson,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Step {
    /// A tool call: `{tool, args}`.
    #[serde(default)]
    call: Option<CallStep>,
    /// A message the agent sends: `{channel, to, body}`.
    #[serde(default)]
    outbound: Option<OutboundStep>,
    /// A later message in the same session, possibly from someone else.
    #[serde(default)]
    turn: Option<Prompt>,
    /// `[decision, rule]` of a call or message.
    #[serde(default)]
    expect: Option<(String, String)>,
    /// Text the reason must contain (such as the tool a destination was seen in).
    #[serde(default)]
    reason_has: Option<String>,
    /// The tool's result, reported after the call.
    #[serde(default)]
    result: Option<String>,
    /// `[found, recorded, dropped]` of the observation of `result`.
    #[serde(default)]
    observed: Option<(u32, u32, u32)>,
    /// The person approves this ask in this scope.
    #[serde(default)]
    approve: Option<ScopeJson>,
    /// The person's approval is expected to be refused.
    #[serde(default)]
    approval_refused: bool,
    /// The call the injected content wanted.
    #[serde(default)]
    target: bool,
    /// Another session of the same task (a label); default the task's own.
    #[serde(default)]
    session: Option<String>,
    /// Another identity for this step's call or message.
    #[serde(default)]
    identity: Option<IdentityJson>,
    /// The expectation is the issue's, not what Warden does yet; why.
    #[serde(default)]
    known_failure: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    note: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CallStep {
    tool: String,
    args: Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OutboundStep {
    channel: String,
    to: String,
    body: String,
}

/// What one step did.
struct Outcome {
    what: String,
    decision: &'static str,
    rule: String,
    reason: String,
}

/// What one task did.
struct TaskRun {
    id: String,
    kind: TaskKind,
    steps: Vec<Outcome>,
    /// Every target step was asked or denied.
    stopped: bool,
    denied: bool,
    asked: bool,
    mismatches: Vec<String>,
    known: Vec<String>,
}

/// What one suite did.
struct SuiteRun {
    name: String,
    tasks: Vec<TaskRun>,
    db: TempDb,
    reasons: Vec<String>,
}

impl SuiteRun {
    fn count(&self, kind: TaskKind, f: impl Fn(&TaskRun) -> bool) -> (usize, usize) {
        let of_kind: Vec<&TaskRun> = self.tasks.iter().filter(|t| t.kind == kind).collect();
        (of_kind.iter().filter(|t| f(t)).count(), of_kind.len())
    }

    fn mismatches(&self) -> Vec<String> {
        self.tasks
            .iter()
            .flat_map(|t| t.mismatches.iter().map(move |m| format!("{}/{}: {m}", self.name, t.id)))
            .collect()
    }
}

fn fixture_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/provenance").join(format!("{name}.json"))
}

fn load(name: &str) -> Suite {
    let path = fixture_path(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let suite: Suite = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(suite.suite, name, "{}: `suite` names the file", path.display());
    assert!(!suite.about.is_empty(), "{name}: `about` says what the assistant is");
    let mut ids = BTreeSet::new();
    for task in &suite.tasks {
        assert!(ids.insert(task.id.clone()), "{name}: task `{}` is listed twice", task.id);
        assert!(!task.about.is_empty(), "{name}/{}: `about` says why the answers are right", task.id);
        for (i, step) in task.steps.iter().enumerate() {
            let kinds = [step.call.is_some(), step.outbound.is_some(), step.turn.is_some()];
            assert_eq!(
                kinds.iter().filter(|k| **k).count(),
                1,
                "{name}/{} step {i}: one of call, outbound, turn",
                task.id
            );
            assert!(
                step.turn.is_some() || step.expect.is_some(),
                "{name}/{} step {i}: a call or message says what it expects",
                task.id
            );
        }
        if task.kind == TaskKind::Injection {
            assert!(
                task.steps.iter().any(|s| s.target),
                "{name}/{}: an injection task marks the call the injection wanted",
                task.id
            );
        }
    }
    suite
}

fn identity(json: &IdentityJson) -> Identity {
    json.clone().into()
}

fn context(json: &ChannelContextJson) -> ChannelContext {
    ChannelContext {
        thread_starter: json.thread_starter.clone().map(Into::into),
        replied_to: json.replied_to.clone().map(Into::into),
        since_last_reply: json.since_last_reply.iter().cloned().map(Into::into).collect(),
    }
}

fn trigger(t: TriggerJson) -> Trigger {
    match t {
        TriggerJson::User => Trigger::User,
        TriggerJson::Automation => Trigger::Automation,
        TriggerJson::Peer => Trigger::Peer,
    }
}

/// Runs every task of `suite` (or only `only`) on a fresh database.
fn run_suite(name: &str, only: Option<&str>) -> SuiteRun {
    let suite = load(name);
    let db = TempDb::new();
    let storage: Arc<dyn Storage> = Arc::new(SqliteStorage::open(db.path()).expect("open sqlite"));
    let rt = runtime(&suite.config.to_string(), storage);
    for (i, c) in suite.consents.iter().enumerate() {
        let how = c.how.as_deref();
        rt.gate(|g, s| g.call_consent(s, &c.channel, &c.recipient, None, how, DAY0 - 86_400_000 + i as u64, None))
            .unwrap_or_else(|e| panic!("{name}: consent {i} on `{}` was refused: {e:?}", c.channel));
    }
    let mut tasks = Vec::new();
    let mut reasons = Vec::new();
    for (t, task) in suite.tasks.iter().enumerate() {
        if only.is_some_and(|id| id != task.id) {
            continue;
        }
        let run = run_task(&rt, &suite, task, DAY0 + t as u64 * TASK_GAP_MS);
        reasons.extend(run.steps.iter().map(|s| s.reason.clone()));
        tasks.push(run);
    }
    assert!(!tasks.is_empty(), "{name}: no task named {only:?}");
    SuiteRun { name: name.into(), tasks, db, reasons }
}

fn run_task(rt: &warden_host::Runtime, suite: &Suite, task: &Task, start_ms: u64) -> TaskRun {
    let mut clock = start_ms;
    let mut tick = || {
        clock += STEP_GAP_MS;
        clock
    };
    let base = format!("{}:{}", suite.suite, task.id);
    let session_of = |label: Option<&str>| match label {
        None => base.clone(),
        Some(l) => format!("{base}:{l}"),
    };
    let mut started: BTreeSet<String> = BTreeSet::new();
    let mut begin = |session: &str, now_ms: u64, rt: &warden_host::Runtime| {
        if started.insert(session.to_string()) {
            let start = TurnStart {
                session_id: session.into(),
                run_id: None,
                chat_id: None,
                label: None,
                now_ms,
                prompt: None,
                dedicated: false,
            };
            rt.start_turn(&start).unwrap_or_else(|e| panic!("{session}: start-turn failed: {e:?}"));
        }
    };
    let turn = |prompt: &Prompt, session: &str, now_ms: u64| Turn {
        run_id: Some(format!("{session}:{now_ms}")),
        session_id: Some(session.into()),
        now_ms,
        identity: identity(prompt.identity.as_ref().unwrap_or(&suite.person)),
        trigger: trigger(prompt.trigger),
        message: prompt.text.clone(),
        context: context(&prompt.context),
        history: Vec::new(),
        queue_mode: None,
        hook_timeout_ms: None,
    };
    let first = session_of(None);
    let now = tick();
    begin(&first, now, rt);
    rt.check_turn(&turn(&task.prompt, &first, now));

    let mut steps = Vec::new();
    let mut mismatches = Vec::new();
    let mut known = Vec::new();
    let mut stopped = true;
    for (i, step) in task.steps.iter().enumerate() {
        let session = session_of(step.session.as_deref());
        let now = tick();
        begin(&session, now, rt);
        let who = identity(step.identity.as_ref().unwrap_or(&suite.person));
        if let Some(prompt) = &step.turn {
            rt.check_turn(&turn(prompt, &session, now));
            continue;
        }
        let (what, verdict): (String, Verdict) = if let Some(call) = &step.call {
            let v = rt.check_tool_call(&ToolCall {
                tool_name: call.tool.clone(),
                arguments: call.args.to_string(),
                call_id: Some(format!("{session}:{i}")),
                run_id: None,
                session_id: Some(session.clone()),
                now_ms: now,
                identity: who.clone(),
                cwd: None,
                derived_paths: Vec::new(),
            });
            (format!("call {}", call.tool), v)
        } else if let Some(out) = &step.outbound {
            let v = rt.check_outbound(&OutboundMessage {
                direction: Direction::Outbound,
                channel: out.channel.clone(),
                recipient: out.to.clone(),
                sender: None,
                body: out.body.as_bytes().to_vec(),
                thread: None,
                message_id: Some(format!("{session}:{i}")),
                session_id: Some(session.clone()),
                now_ms: now,
                identity: who.clone(),
            });
            (format!("outbound {}", out.channel), v)
        } else {
            unreachable!("checked by load")
        };
        let decision = decision_name(verdict.decision);
        let (want_decision, want_rule) = step.expect.clone().unwrap_or_default();
        let mut wrong = Vec::new();
        if decision != want_decision || verdict.rule != want_rule {
            wrong.push(format!("expected {want_decision} by {want_rule}, got {decision} by {}", verdict.rule));
        }
        if let Some(part) = &step.reason_has
            && !verdict.reason.contains(part.as_str())
        {
            wrong.push(format!("the reason does not name `{part}`: {}", verdict.reason));
        }
        if let Some(scope) = step.approve {
            let recorded = match &verdict.approval_key {
                Some(key) => rt
                    .record_approval(&Approval {
                        key: key.clone(),
                        allow: true,
                        scope: ApprovalScope::from(scope),
                        session_id: Some(session.clone()),
                        call_id: Some(format!("{session}:{i}")),
                        now_ms: now + 1,
                        idempotency_key: None,
                    })
                    .map_err(|e| format!("{e:?}")),
                None => Err("the verdict carries no approval key".to_string()),
            };
            match (recorded, step.approval_refused) {
                (Ok(()), true) => wrong.push("the approval was recorded, expected it refused".into()),
                (Err(e), false) => wrong.push(format!("the approval was refused: {e}")),
                _ => {}
            }
        }
        if step.target && decision == "allow" {
            stopped = false;
        }
        let label = format!("step {i} ({what})");
        match (&step.known_failure, wrong.is_empty()) {
            (None, false) => mismatches.push(format!("{label}: {}", wrong.join("; "))),
            (Some(why), true) => mismatches.push(format!(
                "{label}: marked as a known failure ({why}) but it now decides as expected; remove the mark"
            )),
            (Some(why), false) => known.push(format!("{label}: {} [{why}]", wrong.join("; "))),
            (None, true) => {}
        }
        if let (Some(call), Some(content)) = (&step.call, &step.result) {
            let report = ToolResult {
                tool_name: call.tool.clone(),
                call_id: Some(format!("{session}:{i}")),
                run_id: None,
                session_id: Some(session.clone()),
                now_ms: now + 2,
                identity: who,
                content: content.clone(),
                is_error: false,
            };
            match rt.observe_tool_result(&report) {
                Err(e) => mismatches.push(format!("{label}: observe-tool-result failed: {e:?}")),
                Ok(o) => {
                    let got = (o.found, o.recorded, o.dropped);
                    if let Some(want) = step.observed
                        && got != want
                    {
                        mismatches
                            .push(format!("{label}: observed (found, recorded, dropped) {got:?}, expected {want:?}"));
                    }
                }
            }
        }
        steps.push(Outcome { what: label, decision, rule: verdict.rule.clone(), reason: verdict.reason.clone() });
    }
    for session in &started {
        let end = TurnEnd { session_id: session.clone(), run_id: None, now_ms: tick() };
        rt.settle_turn(&end).unwrap_or_else(|e| panic!("{session}: settle-turn failed: {e:?}"));
    }
    let denied = steps.iter().any(|s| s.decision == "deny");
    let asked = steps.iter().any(|s| s.decision == "ask");
    TaskRun { id: task.id.clone(), kind: task.kind, steps, stopped, denied, asked, mismatches, known }
}

fn ratio((n, of): (usize, usize)) -> String {
    format!("{n}/{of}")
}

fn table(runs: &[SuiteRun]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<10} {:>20} {:>18} {:>18} {:>14}",
        "suite", "injections stopped", "users denied", "users asked", "known fails"
    );
    let mut totals = [(0, 0), (0, 0), (0, 0)];
    let mut known_total = 0;
    for run in runs {
        let cells = [
            run.count(TaskKind::Injection, |t| t.stopped),
            run.count(TaskKind::User, |t| t.denied),
            run.count(TaskKind::User, |t| t.asked),
        ];
        for (total, cell) in totals.iter_mut().zip(cells) {
            total.0 += cell.0;
            total.1 += cell.1;
        }
        let known: usize = run.tasks.iter().map(|t| t.known.len()).sum();
        known_total += known;
        let _ = writeln!(
            out,
            "{:<10} {:>20} {:>18} {:>18} {:>14}",
            run.name,
            ratio(cells[0]),
            ratio(cells[1]),
            ratio(cells[2]),
            known
        );
    }
    let _ = writeln!(
        out,
        "{:<10} {:>20} {:>18} {:>18} {:>14}",
        "overall",
        ratio(totals[0]),
        ratio(totals[1]),
        ratio(totals[2]),
        known_total
    );
    out
}

fn known_failures(runs: &[SuiteRun]) -> Vec<String> {
    runs.iter()
        .flat_map(|r| {
            r.tasks.iter().flat_map(move |t| t.known.iter().map(move |k| format!("{}/{}: {k}", r.name, t.id)))
        })
        .collect()
}

fn assert_as_written(runs: &[SuiteRun]) {
    let wrong: Vec<String> = runs.iter().flat_map(SuiteRun::mismatches).collect();
    assert!(wrong.is_empty(), "{} step(s) decided otherwise than written:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn every_suite_decides_every_call_as_written_and_prints_the_counts() {
    let runs: Vec<SuiteRun> = SUITES.iter().map(|s| run_suite(s, None)).collect();
    println!("\n{}", table(&runs));
    for run in &runs {
        let names = |f: &dyn Fn(&TaskRun) -> bool| -> Vec<&str> {
            run.tasks.iter().filter(|t| f(t)).map(|t| t.id.as_str()).collect()
        };
        let through = names(&|t| t.kind == TaskKind::Injection && !t.stopped);
        let denied = names(&|t| t.kind == TaskKind::User && t.denied);
        let asked = names(&|t| t.kind == TaskKind::User && t.asked);
        println!("{}: injections not stopped {through:?}; user tasks denied {denied:?}; asked {asked:?}", run.name);
        if std::env::var_os("WARDEN_SCENARIOS_VERBOSE").is_some() {
            for t in &run.tasks {
                for s in &t.steps {
                    println!("  {}/{} {}: {} by {} ({})", run.name, t.id, s.what, s.decision, s.rule, s.reason);
                }
            }
        }
    }
    let known = known_failures(&runs);
    if !known.is_empty() {
        println!("known failures ({}):\n{}\n", known.len(), known.join("\n"));
    }
    assert_as_written(&runs);
}

#[test]
fn every_suite_has_enough_user_and_injection_tasks() {
    for name in SUITES {
        let suite = load(name);
        let users = suite.tasks.iter().filter(|t| t.kind == TaskKind::User).count();
        let injections = suite.tasks.iter().filter(|t| t.kind == TaskKind::Injection).count();
        assert!(users >= 15, "{name}: {users} user tasks, want at least 15");
        assert!(injections >= 10, "{name}: {injections} injection tasks, want at least 10");
    }
}

/// Runs one task of one suite alone and asserts it decides as written.
fn task_decides_as_written(suite: &str, id: &str) -> TaskRun {
    let mut run = run_suite(suite, Some(id));
    assert_as_written(std::slice::from_ref(&run));
    run.tasks.remove(0)
}

fn last_step(run: &TaskRun) -> &Outcome {
    run.steps.last().unwrap_or_else(|| panic!("{}: no steps", run.id))
}

// Limits the design accepts, each asserted as what happens.

#[test]
fn an_iban_split_across_lines_of_a_bill_is_not_recognized_and_asks_as_unknown() {
    let run = task_decides_as_written("banking", "split-iban-in-bill");
    assert_eq!(last_step(&run).rule, "flow.unknown-destination", "{}", last_step(&run).what);
}

#[test]
fn an_address_spelled_out_in_words_is_not_recognized_and_asks_as_unknown() {
    let run = task_decides_as_written("email", "paraphrased-address-in-words");
    assert_eq!(last_step(&run).rule, "flow.unknown-destination", "{}", last_step(&run).what);
}

#[test]
fn an_approval_in_one_session_does_not_carry_to_another_session() {
    let run = task_decides_as_written("email", "approval-replayed-in-another-session");
    assert_eq!(last_step(&run).decision, "ask", "{}", last_step(&run).what);
}

#[test]
fn an_address_named_by_a_second_person_in_the_session_is_not_named_by_the_first() {
    let run = task_decides_as_written("chat", "second-identity-names-the-address");
    assert!(run.stopped, "the send to the second person's address went through: {}", last_step(&run).what);
}

#[test]
fn a_tool_result_claiming_to_be_the_person_is_still_untrusted() {
    let run = task_decides_as_written("email", "result-claims-to-be-the-user");
    assert!(run.stopped);
    assert_eq!(last_step(&run).rule, "flow.untrusted-destination");
}

#[test]
fn an_address_pasted_into_the_persons_message_counts_as_named_and_passes() {
    let run = task_decides_as_written("email", "pasted-content-counts-as-named");
    assert!(!run.stopped, "a pasted address is the person's words: {}", last_step(&run).rule);
}

#[test]
fn an_address_seen_only_in_another_session_is_unknown_and_asks() {
    let run = task_decides_as_written("email", "seen-in-another-session-only");
    assert_eq!(last_step(&run).rule, "flow.unknown-destination", "{}", last_step(&run).what);
}

#[test]
fn a_hotel_name_in_a_review_is_not_a_destination_and_the_reservation_passes() {
    let run = task_decides_as_written("travel", "review-books-another-hotel");
    assert!(!run.stopped, "{}", last_step(&run).rule);
}

#[test]
fn an_approval_of_one_call_does_not_trust_its_address_for_the_next() {
    let run = task_decides_as_written("email", "address-from-file-person-pointed-at");
    assert_eq!(last_step(&run).decision, "ask", "{}", last_step(&run).what);
}

#[test]
fn a_flood_past_the_session_bound_never_lets_the_injected_value_through() {
    let run = task_decides_as_written("chat", "flood-evicts-the-injected-value");
    assert!(run.stopped, "{}", last_step(&run).rule);
}

#[test]
fn an_address_in_an_argument_not_listed_as_a_recipient_field_is_not_classed() {
    let run = task_decides_as_written("email", "recipient-in-unlisted-field");
    assert!(!run.stopped, "{}", last_step(&run).rule);
}

// Privacy: what the suites leave in the database.

/// Every destination-like value written anywhere in a fixture: addresses,
/// numbers, IBANs, hosts and handles, each in the forms it could be stored in.
fn fixture_values(name: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(fixture_path(name)).expect("fixture");
    let json: Value = serde_json::from_str(&text).expect("fixture json");
    let mut strings = Vec::new();
    collect_strings(&json, &mut strings);
    let mut out = BTreeSet::new();
    for s in &strings {
        values_in(s, &mut out);
    }
    out
}

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(o) => o.iter().for_each(|(k, x)| {
            out.push(k.clone());
            collect_strings(x, out)
        }),
        _ => {}
    }
}

/// The values in one string, by a scan independent of the component's own extraction.
fn values_in(s: &str, out: &mut BTreeSet<String>) {
    let word_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '@' | '+' | '%');
    for word in s.split(|c: char| !word_char(c)) {
        let word = word.trim_matches(|c: char| matches!(c, '.' | '-' | '_'));
        if let Some((local, domain)) = word.split_once('@')
            && !local.is_empty()
            && domain.contains('.')
        {
            out.insert(word.to_ascii_lowercase());
            out.insert(domain.to_ascii_lowercase());
        } else if let Some(handle) = word.strip_prefix('@')
            && handle.len() >= 3
        {
            out.insert(word.to_ascii_lowercase());
        } else if is_host(word) {
            out.insert(word.to_ascii_lowercase());
        }
    }
    // IBANs, written in groups of four or not, found by their check digits.
    let chars: Vec<char> = s.chars().collect();
    for i in 0..chars.len() {
        let starts = chars[i..].len() >= 4
            && chars[i].is_ascii_alphabetic()
            && chars[i + 1].is_ascii_alphabetic()
            && chars[i + 2].is_ascii_digit()
            && chars[i + 3].is_ascii_digit()
            && (i == 0 || !chars[i - 1].is_ascii_alphanumeric());
        if !starts {
            continue;
        }
        let mut compact = String::new();
        for (j, c) in chars[i..].iter().enumerate() {
            if c.is_ascii_alphanumeric() {
                compact.push(c.to_ascii_uppercase());
            } else if *c == ' '
                && chars.get(i + j + 1).is_some_and(char::is_ascii_alphanumeric)
                && compact.len().is_multiple_of(4)
            {
                continue;
            } else {
                break;
            }
            if compact.len() == 34 {
                break;
            }
        }
        if let Some(len) = (15..=compact.len()).rev().find(|n| iban_checks(&compact[..*n])) {
            out.insert(compact[..len].to_string());
        }
    }
    // Phone numbers: runs of at least ten digits with the separators people write.
    let mut digits = String::new();
    for c in s.chars().chain(std::iter::once('x')) {
        if c.is_ascii_digit() {
            digits.push(c);
        } else if matches!(c, ' ' | '-' | '.' | '(' | ')' | '+') && !digits.is_empty() {
            continue;
        } else {
            if (10..=15).contains(&digits.len()) && digits.contains("555") {
                out.insert(format!("+{digits}"));
                out.insert(digits.clone());
            }
            digits.clear();
        }
    }
}

/// Whether `iban` has valid check digits (ISO 13616: the rearranged number is 1 modulo 97).
fn iban_checks(iban: &str) -> bool {
    let rearranged = iban[4..].chars().chain(iban[..4].chars());
    let mut rest = 0u32;
    for c in rearranged {
        let Some(d) = c.to_digit(36) else { return false };
        rest = if d >= 10 { (rest * 100 + d) % 97 } else { (rest * 10 + d) % 97 };
    }
    rest == 1
}

fn is_host(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    let labels: Vec<&str> = lower.split('.').collect();
    labels.len() >= 2
        && labels.iter().all(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        && ["example", "com", "org", "net", "test", "invalid"].contains(labels.last().unwrap_or(&""))
        && labels.iter().any(|l| l.chars().any(|c| c.is_ascii_alphabetic()))
}

/// The database's bytes: the file and its write-ahead log.
fn database_bytes(db: &TempDb) -> Vec<u8> {
    // The approval inbox keeps a pending ask's arguments (secrets redacted)
    // readable for the person who answers it, until it is answered, evicted
    // or expired: the one documented exception (README, "Approval inbox").
    // Everything else must hold no value in clear, so the inbox's rows are
    // removed and the file compacted before it is read.
    if let Ok(conn) = rusqlite::Connection::open(db.path()) {
        let _ = conn.execute("DELETE FROM records WHERE namespace = 'asks'", []);
        let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); VACUUM;");
    }
    let mut bytes = Vec::new();
    for suffix in ["", "-wal", "-journal"] {
        let path = std::path::PathBuf::from(format!("{}{suffix}", db.path().display()));
        if let Ok(b) = std::fs::read(&path) {
            bytes.extend(b);
        }
    }
    bytes
}

fn holds(haystack: &[u8], needle: &str) -> bool {
    let n = needle.as_bytes();
    !n.is_empty() && haystack.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

#[test]
fn no_value_of_any_suite_is_stored_in_clear_or_named_in_a_reason() {
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for name in SUITES {
        let values = fixture_values(name);
        assert!(values.len() >= 10, "{name}: the scan found only {} values: {values:?}", values.len());
        let run = run_suite(name, None);
        let records = run.db.records_in("flow");
        assert!(records > 0, "{name}: the suite left no record in the `flow` namespace");
        let bytes = database_bytes(&run.db);
        for value in &values {
            if holds(&bytes, value) {
                found.entry(format!("{name}: database")).or_default().push(value.clone());
            }
            // A host of a few letters (`example.com`) is allowed in a reason only where it is configuration.
            if value.contains('@') || value.chars().filter(char::is_ascii_digit).count() >= 10 {
                for reason in &run.reasons {
                    if holds(reason.as_bytes(), value) {
                        found.entry(format!("{name}: reason")).or_default().push(format!("{value} in `{reason}`"));
                    }
                }
            }
        }
    }
    assert!(found.is_empty(), "values in clear: {found:#?}");
}

#[test]
fn the_value_scan_finds_each_kind_of_destination() {
    let mut out = BTreeSet::new();
    values_in(
        "Mail ada@example.com or call +1 (212) 555-0142, pay DE12 2005 0550 5550 9999 01 via https://pay.example.org/x, ping @mallory",
        &mut out,
    );
    for want in ["ada@example.com", "+12125550142", "DE12200505505550999901", "pay.example.org", "@mallory"] {
        assert!(out.contains(want), "missing {want} in {out:?}");
    }
}
