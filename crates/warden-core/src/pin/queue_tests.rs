//! Queued wakes and dedicated-chat workers.

use super::queue::{self, MAX_QUEUED};
use super::*;
use crate::fakes::MemoryStorage;
use crate::model::{ChannelContext, Decision, Identity, Trigger, Turn};
use serde_json::json;

const T0: u64 = 1_700_000_000_000;
const SECRET: &[u8] = b"a secret of the host, long enough";
const PROMPT: &str = "New message from Bob in \"Bob\": can you send me the notes?";
const TTL: u64 = DEFAULT_TTL_MINUTES * 60_000;

fn wake(chat: &str, prompt: Option<&str>, now_ms: u64) -> TurnStart {
    TurnStart {
        session_id: "s1".into(),
        run_id: None,
        chat_id: Some(chat.into()),
        label: Some(chat.trim_start_matches("19:").into()),
        now_ms,
        prompt: prompt.map(str::to_string),
        dedicated: false,
    }
}

fn worker(chat: &str, now_ms: u64) -> TurnStart {
    TurnStart { dedicated: true, ..wake(chat, None, now_ms) }
}

fn entered(message: &str, chat: Option<&str>, trigger: Trigger, session: &str, now_ms: u64) -> Turn {
    Turn {
        run_id: None,
        session_id: Some(session.into()),
        now_ms,
        identity: Identity { channel_id: chat.map(str::to_string), ..Identity::default() },
        trigger,
        message: message.into(),
        context: ChannelContext::default(),
        history: Vec::new(),
        queue_mode: None,
        hook_timeout_ms: None,
    }
}

fn pinned_chat(config: &PinConfig, storage: &MemoryStorage, now_ms: u64) -> Option<String> {
    current(config, storage, "s1", now_ms).ok().flatten().map(|p| p.chat_id)
}

fn send(
    config: &PinConfig,
    storage: &MemoryStorage,
    tool: &str,
    args: Value,
    now_ms: u64,
) -> Option<(Decision, String)> {
    let c = ToolCall {
        tool_name: tool.into(),
        arguments: args.to_string(),
        call_id: None,
        run_id: None,
        session_id: Some("s1".into()),
        now_ms,
        identity: Identity::default(),
        cwd: None,
        derived_paths: Vec::new(),
    };
    check(config, storage, &c, Some(&args)).map(|v| (v.decision, v.rule))
}

/// Alice's answer is owed; Bob's wake arrives with `PROMPT` and is queued.
fn alice_owed_bob_queued(storage: &MemoryStorage) -> PinConfig {
    let config = PinConfig::default();
    assert!(matches!(start(&config, storage, SECRET, &wake("19:alice", None, T0)), Ok(Some(_))));
    let kept = start(&config, storage, SECRET, &wake("19:bob", Some(PROMPT), T0 + 10));
    assert_eq!(kept.ok().flatten().map(|p| p.chat_id), Some("19:alice".to_string()));
    config
}

#[test]
fn a_wake_that_arrives_while_an_answer_is_owed_is_queued_and_does_not_move_the_pin() {
    let storage = MemoryStorage::default();
    let config = alice_owed_bob_queued(&storage);
    assert_eq!(pinned_chat(&config, &storage, T0 + 20), Some("19:alice".into()));
    let to_alice = send(&config, &storage, "teams_send_chat_message", json!({"chat": "19:alice"}), T0 + 20);
    assert_eq!(to_alice, Some((Decision::Allow, rules::PINNED_CHAT.to_string())));
    let to_bob = send(&config, &storage, "teams_send_chat_message", json!({"chat": "19:bob"}), T0 + 20);
    assert_eq!(to_bob, Some((Decision::Deny, rules::OTHER_CHAT.to_string())));
    let waiting = queue::queued(&config, &storage, "s1", T0 + 20);
    assert_eq!(waiting, Ok(vec![("19:bob".to_string(), T0 + 10)]));
}

#[test]
fn the_queued_prompt_is_stored_only_as_a_keyed_hash() {
    let storage = MemoryStorage::default();
    alice_owed_bob_queued(&storage);
    let stored = storage.get(queue::NAMESPACE, "s1").ok().flatten().map(|r| r.value).unwrap_or_default();
    let text = String::from_utf8_lossy(&stored);
    assert!(!stored.is_empty());
    assert!(!text.contains("notes") && !text.contains("send me"), "{text}");
}

#[test]
fn the_exact_prompt_entering_the_transcript_moves_the_pin_to_its_chat() {
    let storage = MemoryStorage::default();
    let config = alice_owed_bob_queued(&storage);
    let signals =
        queue::enter(&config, &storage, SECRET, &entered(PROMPT, Some("19:bob"), Trigger::Automation, "s1", T0 + 30));
    assert_eq!(signals.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), [queue::signals::MOVED]);
    assert_eq!(pinned_chat(&config, &storage, T0 + 31), Some("19:bob".into()));
    let to_bob = send(&config, &storage, "teams_send_chat_message", json!({"chat": "19:bob"}), T0 + 31);
    assert_eq!(to_bob, Some((Decision::Allow, rules::PINNED_CHAT.to_string())));
    let to_alice = send(&config, &storage, "teams_send_chat_message", json!({"chat": "19:alice"}), T0 + 31);
    assert_eq!(to_alice, Some((Decision::Deny, rules::OTHER_CHAT.to_string())));
    // The entry is used up: the pin moved once and the queue is empty.
    assert_eq!(queue::queued(&config, &storage, "s1", T0 + 31), Ok(Vec::new()));
}

#[test]
fn look_alikes_of_the_queued_prompt_move_nothing() {
    let spaced = format!("{PROMPT} ");
    let doubled = PROMPT.replacen(' ', "  ", 1);
    let newline = PROMPT.replacen(' ', "\n", 1);
    let prefix = &PROMPT[..PROMPT.len() - 1];
    let upper = PROMPT.to_uppercase();
    type Case<'a> = (&'a str, &'a str, Option<&'a str>, Trigger, &'a str);
    // (what, message, channel, trigger, session)
    let cases: &[Case] = &[
        ("a person typing the same text", PROMPT, Some("19:bob"), Trigger::User, "s1"),
        ("another agent sending the same text", PROMPT, Some("19:bob"), Trigger::Peer, "s1"),
        ("the same text in another chat", PROMPT, Some("19:carol"), Trigger::Automation, "s1"),
        ("the same text in the pinned chat", PROMPT, Some("19:alice"), Trigger::Automation, "s1"),
        ("the same text with no chat", PROMPT, None, Trigger::Automation, "s1"),
        ("the same text in another session", PROMPT, Some("19:bob"), Trigger::Automation, "s2"),
        ("a prefix of the prompt", prefix, Some("19:bob"), Trigger::Automation, "s1"),
        ("a trailing space", &spaced, Some("19:bob"), Trigger::Automation, "s1"),
        ("a doubled space", &doubled, Some("19:bob"), Trigger::Automation, "s1"),
        ("a newline for a space", &newline, Some("19:bob"), Trigger::Automation, "s1"),
        ("other case", &upper, Some("19:bob"), Trigger::Automation, "s1"),
        ("the chat ID in other case", PROMPT, Some("19:BOB"), Trigger::Automation, "s1"),
    ];
    for (what, message, chat, trigger, session) in cases {
        let storage = MemoryStorage::default();
        let config = alice_owed_bob_queued(&storage);
        let signals = queue::enter(&config, &storage, SECRET, &entered(message, *chat, *trigger, session, T0 + 30));
        assert!(signals.is_empty(), "{what}: {signals:?}");
        assert_eq!(pinned_chat(&config, &storage, T0 + 31), Some("19:alice".into()), "{what}");
        let to_bob = send(&config, &storage, "teams_send_chat_message", json!({"chat": "19:bob"}), T0 + 31);
        assert_eq!(to_bob, Some((Decision::Deny, rules::OTHER_CHAT.to_string())), "{what}");
        assert_eq!(queue::queued(&config, &storage, "s1", T0 + 31).map(|q| q.len()), Ok(1), "{what}");
    }
}

#[test]
fn a_prompt_hashed_under_another_secret_moves_nothing() {
    let storage = MemoryStorage::default();
    let config = alice_owed_bob_queued(&storage);
    let turn = entered(PROMPT, Some("19:bob"), Trigger::Automation, "s1", T0 + 30);
    assert!(queue::enter(&config, &storage, b"another secret", &turn).is_empty());
    assert_eq!(pinned_chat(&config, &storage, T0 + 31), Some("19:alice".into()));
}

#[test]
fn a_queued_wake_is_valid_at_exactly_the_ttl_and_expires_one_millisecond_later() {
    for (now, moves) in [(T0 + 10 + TTL, true), (T0 + 10 + TTL + 1, false)] {
        let storage = MemoryStorage::default();
        let config = alice_owed_bob_queued(&storage);
        let signals =
            queue::enter(&config, &storage, SECRET, &entered(PROMPT, Some("19:bob"), Trigger::Automation, "s1", now));
        assert_eq!(!signals.is_empty(), moves, "at +{}", now - T0);
        let expected = moves.then(|| "19:bob".to_string());
        assert_eq!(pinned_chat(&config, &storage, now), expected, "at +{}", now - T0);
    }
}

#[test]
fn a_queued_wake_survives_the_owed_answer_settling_and_still_moves_the_pin() {
    let storage = MemoryStorage::default();
    let config = alice_owed_bob_queued(&storage);
    assert_eq!(settle(&storage, &TurnEnd { session_id: "s1".into(), run_id: None, now_ms: T0 + 20 }), Ok(()));
    assert_eq!(pinned_chat(&config, &storage, T0 + 21), None);
    let signals =
        queue::enter(&config, &storage, SECRET, &entered(PROMPT, Some("19:bob"), Trigger::Automation, "s1", T0 + 30));
    assert_eq!(signals.len(), 1);
    assert_eq!(pinned_chat(&config, &storage, T0 + 31), Some("19:bob".into()));
}

#[test]
fn a_wake_without_a_prompt_moves_the_pin_as_before() {
    let storage = MemoryStorage::default();
    let config = PinConfig::default();
    assert!(matches!(start(&config, &storage, SECRET, &wake("19:alice", None, T0)), Ok(Some(_))));
    assert!(matches!(start(&config, &storage, SECRET, &wake("19:bob", None, T0 + 1)), Ok(Some(_))));
    assert_eq!(pinned_chat(&config, &storage, T0 + 2), Some("19:bob".into()));
}

#[test]
fn a_wake_with_a_prompt_and_no_owed_answer_pins_at_once() {
    let storage = MemoryStorage::default();
    let config = PinConfig::default();
    assert!(matches!(start(&config, &storage, SECRET, &wake("19:bob", Some(PROMPT), T0)), Ok(Some(_))));
    assert_eq!(pinned_chat(&config, &storage, T0 + 1), Some("19:bob".into()));
    assert_eq!(queue::queued(&config, &storage, "s1", T0 + 1), Ok(Vec::new()));
}

#[test]
fn the_queue_holds_max_queued_wakes_and_evicts_the_oldest_past_the_bound() {
    let storage = MemoryStorage::default();
    let config = PinConfig::default();
    assert!(matches!(start(&config, &storage, SECRET, &wake("19:alice", None, T0)), Ok(Some(_))));
    let prompt = |i: usize| format!("wake {i}");
    for i in 0..MAX_QUEUED {
        let queued = start(&config, &storage, SECRET, &wake(&format!("19:c{i}"), Some(&prompt(i)), T0 + 1 + i as u64));
        assert!(queued.is_ok(), "{i}");
    }
    assert_eq!(queue::queued(&config, &storage, "s1", T0 + 100).map(|q| q.len()), Ok(MAX_QUEUED));
    let past = start(&config, &storage, SECRET, &wake("19:late", Some("late"), T0 + 100));
    assert!(past.is_ok());
    let waiting = queue::queued(&config, &storage, "s1", T0 + 101).unwrap_or_default();
    assert_eq!(waiting.len(), MAX_QUEUED);
    assert_eq!(waiting.first().map(|q| q.0.as_str()), Some("19:c1"));
    assert_eq!(waiting.last().map(|q| q.0.as_str()), Some("19:late"));
    // The evicted wake's prompt moves nothing; a kept one still does.
    let evicted = entered(&prompt(0), Some("19:c0"), Trigger::Automation, "s1", T0 + 102);
    assert!(queue::enter(&config, &storage, SECRET, &evicted).is_empty());
    assert_eq!(pinned_chat(&config, &storage, T0 + 102), Some("19:alice".into()));
    let kept = entered(&prompt(1), Some("19:c1"), Trigger::Automation, "s1", T0 + 103);
    assert_eq!(queue::enter(&config, &storage, SECRET, &kept).len(), 1);
    assert_eq!(pinned_chat(&config, &storage, T0 + 103), Some("19:c1".into()));
}

#[test]
fn a_prompt_is_accepted_at_max_prompt_bytes_and_refused_past_it_or_empty() {
    let storage = MemoryStorage::default();
    let config = PinConfig::default();
    let at = "a".repeat(queue::MAX_PROMPT_BYTES);
    assert!(start(&config, &storage, SECRET, &wake("19:a", Some(&at), T0)).is_ok());
    let past = "a".repeat(queue::MAX_PROMPT_BYTES + 1);
    let refused = start(&config, &storage, SECRET, &wake("19:a", Some(&past), T0));
    let expected =
        format!("prompt: must be at most {} bytes, got {}", queue::MAX_PROMPT_BYTES, queue::MAX_PROMPT_BYTES + 1);
    assert_eq!(refused, Err(PolicyError::InvalidInput(expected)));
    let empty = start(&config, &storage, SECRET, &wake("19:a", Some(""), T0));
    assert_eq!(empty, Err(PolicyError::InvalidInput("prompt: must not be empty when given".into())));
}

#[test]
fn a_dedicated_workers_pin_survives_settle_and_any_age() {
    let storage = MemoryStorage::default();
    let config = PinConfig::default();
    let pinned = start(&config, &storage, SECRET, &worker("19:alice", T0));
    assert_eq!(pinned.ok().flatten().map(|p| p.expires_at_ms), Some(u64::MAX));
    assert_eq!(settle(&storage, &TurnEnd { session_id: "s1".into(), run_id: None, now_ms: T0 + 1 }), Ok(()));
    let later = T0 + 10 * MAX_TTL_MINUTES * 60_000;
    assert_eq!(pinned_chat(&config, &storage, later), Some("19:alice".into()));
    let to_bob = send(&config, &storage, "teams_send_chat_message", json!({"chat": "19:bob"}), later);
    assert_eq!(to_bob, Some((Decision::Deny, rules::OTHER_CHAT.to_string())));
    let to_alice = send(&config, &storage, "teams_send_chat_message", json!({"chat": "19:alice"}), later);
    assert_eq!(to_alice, Some((Decision::Allow, rules::PINNED_CHAT.to_string())));
}

#[test]
fn a_dedicated_workers_pin_cannot_be_moved_cleared_or_queued_away() {
    let storage = MemoryStorage::default();
    let config = PinConfig::default();
    assert!(start(&config, &storage, SECRET, &worker("19:alice", T0)).is_ok());
    let moved = start(&config, &storage, SECRET, &wake("19:bob", None, T0 + 1));
    assert!(
        matches!(&moved, Err(PolicyError::InvalidInput(m)) if m.starts_with("chatId: this session is a dedicated-chat worker for `19:alice`")),
        "{moved:?}"
    );
    let cleared = start(&config, &storage, SECRET, &TurnStart { chat_id: None, ..wake("x", None, T0 + 2) });
    assert!(matches!(cleared, Err(PolicyError::InvalidInput(_))));
    let queued = start(&config, &storage, SECRET, &wake("19:bob", Some(PROMPT), T0 + 3));
    assert!(matches!(queued, Err(PolicyError::InvalidInput(_))));
    let other_worker = start(&config, &storage, SECRET, &worker("19:bob", T0 + 4));
    assert!(matches!(other_worker, Err(PolicyError::InvalidInput(_))));
    // Starting again for its own chat is fine and changes nothing.
    assert!(matches!(start(&config, &storage, SECRET, &wake("19:alice", None, T0 + 5)), Ok(Some(_))));
    assert_eq!(pinned_chat(&config, &storage, T0 + 6), Some("19:alice".into()));
}

#[test]
fn a_dedicated_start_without_a_chat_is_refused_and_changes_nothing() {
    let storage = MemoryStorage::default();
    let config = PinConfig::default();
    let refused = start(&config, &storage, SECRET, &TurnStart { chat_id: None, ..worker("x", T0) });
    assert_eq!(
        refused,
        Err(PolicyError::InvalidInput(
            "dedicated: a dedicated-chat worker needs `chatId`, the chat it runs for".into()
        ))
    );
    assert_eq!(storage.writes(), 0);
}

#[test]
fn a_dedicated_worker_is_refused_listen_mode_and_account_tools() {
    let storage = MemoryStorage::default();
    let config = PinConfig::default();
    assert!(start(&config, &storage, SECRET, &worker("19:alice", T0)).is_ok());
    let forbidden = Some((Decision::Deny, rules::WORKER_FORBIDDEN.to_string()));
    for tool in default_worker_forbidden() {
        assert_eq!(send(&config, &storage, &tool, json!({"mode": "all"}), T0 + 1), forbidden, "{tool}");
    }
    assert_eq!(send(&config, &storage, "calendar_list", json!({}), T0 + 1), None);
}

#[test]
fn listen_mode_tools_are_free_for_a_session_that_is_not_a_dedicated_worker() {
    let storage = MemoryStorage::default();
    let config = PinConfig::default();
    assert_eq!(send(&config, &storage, "teams_set_listen_mode", json!({}), T0), None);
    assert!(start(&config, &storage, SECRET, &wake("19:alice", None, T0)).is_ok());
    assert_eq!(send(&config, &storage, "teams_set_listen_mode", json!({}), T0 + 1), None);
}

#[test]
fn worker_forbidden_tools_are_configurable_and_an_unreadable_pin_refuses_them() {
    let config = crate::Config::parse(r#"{"pin": {"workerForbiddenTools": ["pi_listen"]}}"#).map(|c| c.pin);
    let Ok(config) = config else { panic!("config refused: {config:?}") };
    let storage = MemoryStorage::default();
    assert!(start(&config, &storage, SECRET, &worker("19:alice", T0)).is_ok());
    assert_eq!(
        send(&config, &storage, "pi_listen", json!({}), T0 + 1),
        Some((Decision::Deny, rules::WORKER_FORBIDDEN.to_string()))
    );
    assert_eq!(send(&config, &storage, "teams_set_listen_mode", json!({}), T0 + 1), None);
    storage.fail_with(crate::ports::StorageError::Unavailable("disk gone".into()));
    assert_eq!(
        send(&config, &storage, "pi_listen", json!({}), T0 + 2),
        Some((Decision::Deny, rules::STORAGE_UNAVAILABLE.to_string()))
    );
}

#[test]
fn worker_forbidden_tools_are_bounded_and_checked_as_names() {
    let errors = |text: &str| -> Vec<String> {
        crate::Config::parse(text).err().map(|e| e.iter().map(ToString::to_string).collect()).unwrap_or_default()
    };
    let at: Vec<String> = (0..MAX_WORKER_FORBIDDEN).map(|i| format!("t{i}")).collect();
    let past: Vec<String> = (0..=MAX_WORKER_FORBIDDEN).map(|i| format!("t{i}")).collect();
    assert_eq!(errors(&json!({"pin": {"workerForbiddenTools": at}}).to_string()), Vec::<String>::new());
    let past_errors = errors(&json!({"pin": {"workerForbiddenTools": past}}).to_string());
    assert_eq!(past_errors.len(), 1, "{past_errors:?}");
    assert!(past_errors[0].starts_with("pin.workerForbiddenTools: "), "{past_errors:?}");
    let dup = errors(r#"{"pin": {"workerForbiddenTools": ["a", "a"]}}"#);
    assert_eq!(
        dup,
        ["pin.workerForbiddenTools[1]: duplicate tool name `a`; first used at pin.workerForbiddenTools[0]"]
    );
    let spaced = errors(r#"{"pin": {"workerForbiddenTools": ["a b"]}}"#);
    assert_eq!(spaced.len(), 1, "{spaced:?}");
    assert!(spaced[0].starts_with("pin.workerForbiddenTools[0]: "), "{spaced:?}");
}
