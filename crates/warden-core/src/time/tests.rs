//! Stored times dated after the request: each kind of record, at the skew and
//! one millisecond past it.

use super::*;
use crate::fakes::{MemoryStorage, ScriptedHttp, VecLog};
use crate::gate::{self, GateConfig};
use crate::model::{
    Decision, Delivery, Direction, Identity, OutboundMessage, OutcomeReport, SafetyOutcome, ToolCall, TurnStart, Usage,
};
use crate::pin::{self, PinConfig};
use crate::ports::{Condition, Ports, Storage};
use crate::prelude::*;
use crate::safety::runs;
use crate::tools::budget::{self, BudgetConfig, Window};
use serde_json::json;

/// 2024-06-03T12:00:00Z: inside the gate's default sending window.
const NOON: u64 = 1_717_416_000_000;
const SKEW: u64 = MAX_FUTURE_SKEW_MS;
/// A time in microseconds, as a host that confuses the units sends it.
const MICROS: u64 = NOON * 1000;
const ALICE: &str = "+15550100";

#[test]
fn a_stored_time_counts_up_to_the_skew_ahead_and_not_one_millisecond_more() {
    assert_eq!(MAX_FUTURE_SKEW_MS, 300_000);
    assert_eq!(age(NOON - 7, NOON), Some(7));
    assert_eq!(age(NOON, NOON), Some(0));
    assert_eq!(age(NOON + SKEW, NOON), Some(0));
    assert_eq!(age(NOON + SKEW + 1, NOON), None);
    assert_eq!(age(MICROS, NOON), None);
    assert!(credible(u64::MAX, u64::MAX - SKEW));
    assert!(!credible(u64::MAX, u64::MAX - SKEW - 1));
    assert!(credible(0, 0));
}

fn pin_at(storage: &MemoryStorage, now_ms: u64) {
    let start = TurnStart {
        session_id: "s1".into(),
        run_id: Some("r1".into()),
        chat_id: Some("19:alice".into()),
        label: Some("Alice".into()),
        now_ms,
        prompt: None,
        dedicated: false,
    };
    assert!(matches!(pin::start(&PinConfig::default(), storage, b"", &start), Ok(Some(_))));
}

fn send_to_bob(storage: &MemoryStorage, now_ms: u64) -> Option<(Decision, String)> {
    let args = json!({"chat": "19:bob"});
    let call = ToolCall {
        tool_name: "teams_send_chat_message".into(),
        arguments: args.to_string(),
        call_id: None,
        run_id: None,
        session_id: Some("s1".into()),
        now_ms,
        identity: Identity::default(),
        cwd: None,
        derived_paths: Vec::new(),
    };
    pin::check(&PinConfig::default(), storage, &call, Some(&args)).map(|v| (v.decision, v.rule))
}

#[test]
fn a_pin_dated_past_the_skew_counts_as_expired_and_one_at_the_skew_still_holds() {
    let config = PinConfig::default();
    let other = Some((Decision::Deny, pin::rules::OTHER_CHAT.to_string()));
    let ttl = pin::DEFAULT_TTL_MINUTES * 60_000;

    let storage = MemoryStorage::default();
    pin_at(&storage, NOON + SKEW);
    assert_eq!(send_to_bob(&storage, NOON), other, "a pin from a clock slightly ahead holds");
    // It lasts its TTL from the time it carries, no longer.
    assert_eq!(send_to_bob(&storage, NOON + SKEW + ttl), other);
    assert_eq!(send_to_bob(&storage, NOON + SKEW + ttl + 1), None);

    for far in [NOON + SKEW + 1, MICROS, u64::MAX] {
        let storage = MemoryStorage::default();
        pin_at(&storage, far);
        assert_eq!(send_to_bob(&storage, NOON), None, "a pin dated {far} is not evidence at {NOON}");
        assert_eq!(pin::current(&config, &storage, "s1", NOON), Ok(None));
        // The next real turn pins again and is enforced.
        pin_at(&storage, NOON + 1);
        assert_eq!(send_to_bob(&storage, NOON + 2), other);
    }
}

struct World {
    http: ScriptedHttp,
    storage: MemoryStorage,
    log: VecLog,
}

impl World {
    fn new() -> Self {
        World { http: ScriptedHttp::unreachable(), storage: MemoryStorage::default(), log: VecLog::default() }
    }

    fn ports(&self) -> Ports<'_> {
        Ports { http: &self.http, storage: &self.storage, log: &self.log }
    }
}

const ROUTINE_TEXT: &str = "Reminder: your appointment is tomorrow.";

fn gate_config() -> GateConfig {
    let doc = json!({"gate": {"ownerOffset": "+00:00", "minGapSeconds": 3600, "templates": [ROUTINE_TEXT]}});
    crate::Config::parse(&doc.to_string()).map(|c| c.gate).unwrap_or_default()
}

fn message(now_ms: u64) -> OutboundMessage {
    OutboundMessage {
        direction: Direction::Outbound,
        channel: "sms".into(),
        recipient: ALICE.into(),
        sender: None,
        body: ROUTINE_TEXT.as_bytes().to_vec(),
        thread: Some("t1".into()),
        message_id: None,
        session_id: None,
        now_ms,
        identity: Identity::default(),
    }
}

fn outcome(world: &World, delivery: Delivery, now_ms: u64) {
    let report = OutcomeReport {
        channel: "sms".into(),
        recipient: ALICE.into(),
        delivery,
        thread: Some("t1".into()),
        now_ms,
        idempotency_key: None,
    };
    assert_eq!(gate::record_outcome(&gate_config(), &world.ports(), &report), Ok(()));
}

fn gate_check(world: &World, now_ms: u64) -> Option<(Decision, String)> {
    gate::check(&gate_config(), &world.ports(), &message(now_ms)).map(|v| (v.decision, v.rule))
}

/// A world with consent and one answered send to Alice's thread `t1` at `sent_ms`.
fn sent_at(sent_ms: u64) -> World {
    let world = World::new();
    assert_eq!(gate::consent(&gate_config(), &world.ports(), "sms", ALICE, None, None, NOON - 60_000, None), Ok(()));
    outcome(&world, Delivery::Sent, sent_ms);
    outcome(&world, Delivery::Reply, NOON);
    world
}

#[test]
fn a_send_dated_past_the_skew_does_not_ask_min_gap_and_the_next_real_send_replaces_it() {
    let gap = Some((Decision::Ask, gate::rules::MIN_GAP.to_string()));
    let routine = Some((Decision::Allow, gate::rules::ROUTINE.to_string()));

    let world = sent_at(NOON + SKEW);
    assert_eq!(gate_check(&world, NOON), gap, "a send from a clock slightly ahead counts as just now");

    for far in [NOON + SKEW + 1, MICROS, u64::MAX] {
        let world = sent_at(far);
        assert_eq!(gate_check(&world, NOON), routine, "a send dated {far} is not evidence at {NOON}");
    }
    for far in [MICROS, u64::MAX] {
        let world = sent_at(far);
        // A real send replaces the far one and is counted from its own time.
        outcome(&world, Delivery::Sent, NOON + 1000);
        outcome(&world, Delivery::Reply, NOON + 2000);
        assert_eq!(gate_check(&world, NOON + 3000), gap);
        assert_eq!(gate_check(&world, NOON + 1000 + 3_600_000), routine);
    }
}

#[test]
fn an_unanswered_thread_asks_until_a_reply_whatever_its_send_was_dated() {
    // The thread's state is not a time: a reply clears it, so a far send cannot hold it.
    let world = World::new();
    assert_eq!(gate::consent(&gate_config(), &world.ports(), "sms", ALICE, None, None, NOON, None), Ok(()));
    outcome(&world, Delivery::Sent, MICROS);
    assert_eq!(gate_check(&world, NOON), Some((Decision::Ask, gate::rules::UNANSWERED_THREAD.to_string())));
    outcome(&world, Delivery::Reply, NOON + 1);
    assert_eq!(gate_check(&world, NOON + 2), Some((Decision::Allow, gate::rules::ROUTINE.to_string())));
}

#[test]
fn ledger_lines_dated_far_ahead_do_not_push_newer_lines_out_of_the_log() {
    let world = World::new();
    let config = gate_config();
    assert_eq!(gate::consent(&config, &world.ports(), "sms", ALICE, None, None, NOON, None), Ok(()));
    for i in 0..u64::from(gate::MAX_LOG_LIMIT) {
        assert_eq!(gate::opt_out(&config, &world.ports(), "+15550199", MICROS + i, None), Ok(()));
    }
    assert_eq!(gate::revoke(&config, &world.ports(), "sms", ALICE, NOON + 1, None), Ok(true));
    let newest = gate::log(&config, &world.ports(), 1).unwrap_or_default();
    assert_eq!(newest.iter().map(|e| (e.event.as_str(), e.at_ms)).collect::<Vec<_>>(), [("revoke", NOON + 1)]);
    let all = gate::log(&config, &world.ports(), gate::MAX_LOG_LIMIT).unwrap_or_default();
    assert_eq!(all.len() as u32, gate::MAX_LOG_LIMIT);
    assert_eq!(all.last().map(|e| e.at_ms), Some(MICROS + 1), "the oldest line shown is the second opt-out");
}

#[test]
fn ledger_lines_of_the_older_layout_follow_every_numbered_line() {
    let world = World::new();
    let config = gate_config();
    let legacy = json!({"atMs": NOON - 5, "event": "consent", "channel": "sms", "recipientHash": "00"});
    let key = format!("{}{:020}-{:06}", gate::ledger::LEGACY_LOG_PREFIX, NOON - 5, 0);
    world.storage.set(gate::ledger::NAMESPACE, &key, legacy.to_string().as_bytes(), Condition::Any).expect("seed");
    assert_eq!(gate::opt_out(&config, &world.ports(), ALICE, NOON, None), Ok(()));
    let log = gate::log(&config, &world.ports(), 5).unwrap_or_default();
    let seen: Vec<(&str, u64)> = log.iter().map(|e| (e.event.as_str(), e.at_ms)).collect();
    assert_eq!(seen, [("optout", NOON), ("consent", NOON - 5)]);
    assert_eq!(gate::log(&config, &world.ports(), 1).map(|l| l.len()), Ok(1));
}

fn run(at_ms: u64) -> runs::RunRecord {
    runs::RunRecord {
        binding: "b".into(),
        at_ms,
        outcome: SafetyOutcome::NoMatch,
        reason: "nothing matched".into(),
        scenarios: Vec::new(),
        missing_identity: false,
    }
}

#[test]
fn a_run_answer_dated_past_the_skew_is_not_reused() {
    for (at_ms, reused) in [(NOON + SKEW, true), (NOON + SKEW + 1, false), (MICROS, false)] {
        let world = World::new();
        runs::remember(&world.ports(), "run-1", &run(at_ms));
        assert_eq!(runs::lookup(&world.ports(), "run-1", "b", NOON).is_some(), reused, "stored at {at_ms}");
    }
}

#[test]
fn a_budget_bucket_dated_past_the_skew_does_not_count() {
    let config = BudgetConfig {
        tokens: Some(Window { limit: 100, window_minutes: 60 }),
        calls: None,
        warn_percent: budget::DEFAULT_WARN_PERCENT,
    };
    // Buckets start on the minute, so the first one past the skew starts a minute later.
    for (at_ms, counted) in [(NOON + SKEW, true), (NOON + SKEW + 60_000, false), (MICROS, false)] {
        let storage = MemoryStorage::default();
        let usage = Usage { agent_id: None, session_id: None, tokens: 100, now_ms: at_ms };
        assert_eq!(budget::record(Some(&config), &storage, &usage), Ok(()));
        let out = budget::check(&config, &storage, budget::DEFAULT_AGENT, NOON, false).expect("check");
        let rule = out.exceeded.map(|(rule, _)| rule);
        assert_eq!(rule.is_some(), counted, "tokens reported at {at_ms}: {rule:?}");
    }
}

#[test]
fn every_kind_of_record_keeps_its_meaning_when_no_time_lies_ahead() {
    // The ordinary case, for contrast: a send a minute ago asks, a pin a minute ago holds.
    let world = sent_at(NOON - 60_000);
    assert_eq!(gate_check(&world, NOON), Some((Decision::Ask, gate::rules::MIN_GAP.to_string())));
    let storage = MemoryStorage::default();
    pin_at(&storage, NOON - 60_000);
    assert_eq!(send_to_bob(&storage, NOON), Some((Decision::Deny, pin::rules::OTHER_CHAT.to_string())));
}
