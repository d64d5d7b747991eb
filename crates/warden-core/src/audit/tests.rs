use super::*;
use crate::Warden;
use crate::fakes::{MemoryStorage, ScriptedHttp, VecLog};
use crate::model::{Decision, Direction, Identity, OutboundMessage, ToolCall};
use crate::ports::{Level, Ports};
use serde_json::{Value, json};
use std::string::ToString;

const T0: u64 = 1_700_000_000_000;

struct Env {
    storage: MemoryStorage,
    http: ScriptedHttp,
    log: VecLog,
}

impl Env {
    fn new() -> Env {
        Env { storage: MemoryStorage::default(), http: ScriptedHttp::unreachable(), log: VecLog::default() }
    }

    fn ports(&self) -> Ports<'_> {
        Ports { http: &self.http, storage: &self.storage, log: &self.log }
    }
}

fn warden(config: Value, secret: Option<u8>) -> Warden {
    let mut w = match Warden::configure(&config.to_string()) {
        Ok(w) => w,
        Err(e) => panic!("configure: {e:?}"),
    };
    if let Some(b) = secret {
        let context =
            crate::host::HostContext { approval_secret: vec![b; crate::host::MIN_SECRET_BYTES], ..Default::default() };
        assert!(w.set_host_context(&context).is_ok());
    }
    w
}

fn call(tool: &str, args: Value, now_ms: u64) -> ToolCall {
    ToolCall {
        tool_name: tool.into(),
        arguments: args.to_string(),
        call_id: None,
        run_id: None,
        session_id: Some("s1".into()),
        now_ms,
        identity: Identity::default(),
        cwd: None,
        derived_paths: Vec::new(),
    }
}

fn read(i: u64) -> ToolCall {
    call("read", json!({"path": format!("/tmp/{i}")}), T0 + i)
}

fn entries(env: &Env) -> Vec<Entry> {
    export(&env.storage, 0, MAX_EXPORT_LIMIT).unwrap_or_default()
}

#[test]
fn an_append_that_loses_a_race_is_retried_onto_the_new_head() {
    let env = Env::new();
    let w = warden(json!({"tools": {}, "audit": {}}), Some(7));
    w.check_tool_call(&env.ports(), &read(1));
    env.storage.lose_commits(3);
    w.check_tool_call(&env.ports(), &read(2));
    let report = w.audit_verify(&env.ports()).unwrap_or_default();
    assert_eq!((report.ok, report.checked, report.head_seq), (true, 2, 2));
}

#[test]
fn an_unwritten_entry_leaves_the_decision_standing_is_logged_and_named_by_the_next_entry() {
    let env = Env::new();
    let w = warden(json!({"tools": {}, "audit": {}}), Some(7));
    env.storage.fail_commits_with(StorageError::Unavailable("disk full".into()));
    let v = w.check_tool_call(&env.ports(), &call("exec", json!({"command": "rm -rf /"}), T0));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Deny, "exec.recursive-delete"));
    assert!(
        env.log.lines().iter().any(|(l, m)| *l == Level::Warn && m.contains("audit: the entry of a tool-call check")),
        "{:?}",
        env.log.lines()
    );
    env.storage.heal();
    w.check_tool_call(&env.ports(), &read(1));
    let e = entries(&env);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].unrecorded_before, 1);
    let report = w.audit_verify(&env.ports()).unwrap_or_default();
    assert_eq!((report.ok, report.unrecorded), (true, 1));
}

#[test]
fn audit_required_refuses_tool_calls_and_messages_it_cannot_record() {
    let env = Env::new();
    let w = warden(json!({"tools": {}, "audit": {"required": true}}), Some(7));
    env.storage.fail_commits_with(StorageError::Unavailable("disk full".into()));
    let v = w.check_tool_call(&env.ports(), &read(1));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Deny, UNRECORDED_RULE));
    let message = OutboundMessage {
        direction: Direction::Outbound,
        channel: "email".into(),
        recipient: "bob@example.com".into(),
        sender: None,
        body: b"hello".to_vec(),
        thread: None,
        message_id: None,
        session_id: None,
        now_ms: T0,
        identity: Identity::default(),
    };
    let v = w.check_outbound(&env.ports(), &message);
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Deny, UNRECORDED_RULE));
}

#[test]
fn a_chain_written_under_another_secret_is_named_as_such() {
    let env = Env::new();
    warden(json!({"tools": {}, "audit": {}}), Some(7)).check_tool_call(&env.ports(), &read(1));
    let other = warden(json!({"tools": {}, "audit": {}}), Some(8));
    let report = other.audit_verify(&env.ports()).unwrap_or_default();
    assert_eq!(report.broken_seq, Some(1));
    assert!(report.problem.unwrap_or_default().contains("another key"));
}

#[test]
fn without_a_host_secret_the_chain_says_it_is_not_keyed() {
    let env = Env::new();
    let w = warden(json!({"tools": {}, "audit": {}}), None);
    w.check_tool_call(&env.ports(), &read(1));
    let report = w.audit_verify(&env.ports()).unwrap_or_default();
    assert_eq!((report.ok, report.keyed), (true, false));
}

#[test]
fn one_append_prunes_at_most_prune_per_append_entries() {
    let env = Env::new();
    let big = warden(json!({"tools": {}, "audit": {"maxEntries": 1000}}), Some(7));
    for i in 0..100 {
        big.check_tool_call(&env.ports(), &read(i));
    }
    let small = warden(json!({"tools": {}, "audit": {"maxEntries": 16}}), Some(7));
    small.check_tool_call(&env.ports(), &read(100));
    assert_eq!(entries(&env).len(), 101 - PRUNE_PER_APPEND);
    small.check_tool_call(&env.ports(), &read(101));
    assert_eq!(entries(&env).len(), 16);
    let report = small.audit_verify(&env.ports()).unwrap_or_default();
    assert_eq!((report.ok, report.floor_seq, report.head_seq, report.checked), (true, 87, 102, 16));
}

#[test]
fn the_trail_is_walked_across_pages() {
    let env = Env::new();
    let w = warden(json!({"tools": {}, "audit": {}}), Some(7));
    let n = PAGE_ENTRIES * 2 + 5;
    for i in 0..n {
        w.check_tool_call(&env.ports(), &read(i));
    }
    let report = w.audit_verify(&env.ports()).unwrap_or_default();
    assert_eq!((report.ok, report.checked), (true, n));
    let page = export(&env.storage, PAGE_ENTRIES - 1, 3).unwrap_or_default();
    assert_eq!(page.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![PAGE_ENTRIES, PAGE_ENTRIES + 1, PAGE_ENTRIES + 2]);
}

#[test]
fn export_limits_are_checked_at_and_past_their_bounds() {
    let env = Env::new();
    assert!(export(&env.storage, 0, 1).is_ok());
    assert!(export(&env.storage, 0, MAX_EXPORT_LIMIT).is_ok());
    for bad in [0, MAX_EXPORT_LIMIT + 1] {
        match export(&env.storage, 0, bad) {
            Err(PolicyError::InvalidInput(m)) => assert!(m.contains(&format!("`{bad}`")), "{m}"),
            other => panic!("{bad}: {other:?}"),
        }
    }
}

#[test]
fn kept_arguments_redact_secrets_in_values_and_keys() {
    let token = "ghp_".to_string() + &"a1B2c3D4e5F6g7H8i9J0".repeat(2)[..36];
    let c = call("exec", json!({"command": format!("echo {token}"), "env": {token.clone(): "x"}, "n": 1}), T0);
    let kept = match keep::tool_call(&c) {
        Ok(k) => k,
        Err(e) => panic!("{e}"),
    };
    assert!(!kept.arguments.contains(&token), "{}", kept.arguments);
    assert!(kept.arguments.contains("[redacted: "), "{}", kept.arguments);
    assert!(!kept.redacted.is_empty());
    let plain = keep::tool_call(&read(1)).unwrap_or_default();
    assert_eq!((plain.arguments.as_str(), plain.redacted.len()), (r#"{"path":"/tmp/1"}"#, 0));
}

#[test]
fn kept_arguments_are_bounded_at_and_past_max_kept_argument_bytes() {
    let pad = |n: usize| {
        let overhead = json!({"p": ""}).to_string().len();
        call("read", json!({"p": "a".repeat(n - overhead)}), T0)
    };
    assert!(keep::tool_call(&pad(keep::MAX_KEPT_ARGUMENT_BYTES)).is_ok());
    assert!(keep::tool_call(&pad(keep::MAX_KEPT_ARGUMENT_BYTES + 1)).is_err());
}

#[test]
fn a_section_without_keep_inputs_keeps_only_digests() {
    let env = Env::new();
    let w = warden(json!({"tools": {}, "audit": {}}), Some(7));
    w.check_tool_call(&env.ports(), &read(1));
    let e = entries(&env);
    assert_eq!(e[0].kept, None);
    assert_eq!(e[0].inputs.get("tool").map(String::as_str), Some("read"));
    assert_eq!(e[0].inputs.get("arguments").map(|d| d.len()), Some(32));
}

/// The fake storage, recording the limit of every listing of audit entries.
#[derive(Default)]
struct Listings {
    inner: MemoryStorage,
    limits: core::cell::RefCell<Vec<u32>>,
}

impl Storage for Listings {
    fn get(&self, n: &str, k: &str) -> Result<Option<crate::ports::Entry>, StorageError> {
        self.inner.get(n, k)
    }
    fn set(&self, n: &str, k: &str, v: &[u8], w: Condition) -> Result<u64, StorageError> {
        self.inner.set(n, k, v, w)
    }
    fn delete(&self, n: &str, k: &str, w: Condition) -> Result<bool, StorageError> {
        self.inner.delete(n, k, w)
    }
    fn list(&self, n: &str, p: &str, l: u32, r: bool) -> Result<Vec<(String, crate::ports::Entry)>, StorageError> {
        if n == NAMESPACE && p == ENTRY_PREFIX {
            self.limits.borrow_mut().push(l);
        }
        self.inner.list(n, p, l, r)
    }
    fn commit(&self, writes: &[Write]) -> Result<(), crate::ports::BatchError> {
        self.inner.commit(writes)
    }
}

#[test]
fn a_full_chain_drops_its_oldest_entry_each_append_reading_only_it_and_the_next() {
    let storage = Listings::default();
    let (http, log) = (ScriptedHttp::unreachable(), VecLog::default());
    let ports = Ports { http: &http, storage: &storage, log: &log };
    let w = warden(json!({"tools": {}, "audit": {"maxEntries": 16}}), Some(7));
    for i in 1..=40u64 {
        w.check_tool_call(&ports, &read(i));
        let report = w.audit_verify(&ports).unwrap_or_default();
        let kept = i.min(16);
        assert_eq!((report.ok, report.checked, report.head_seq), (true, kept, i), "after append {i}");
        assert_eq!(report.floor_seq, i + 1 - kept, "after append {i}");
    }
    // `verify` lists one entry to find the chain; every other listing is an
    // append's pruning, one for each of the 24 appends past the cap.
    let pruning: Vec<u32> = storage.limits.borrow().iter().copied().filter(|&l| l != 1).collect();
    assert_eq!(pruning, vec![2; 24], "an append at the cap lists its one entry to drop and the next");
}

#[test]
fn an_entry_left_below_the_floor_is_removed_and_pruning_goes_on() {
    let env = Env::new();
    let w = warden(json!({"tools": {}, "audit": {"maxEntries": 16}}), Some(7));
    for i in 1..=20 {
        w.check_tool_call(&env.ports(), &read(i));
    }
    let stale = json!({"seq": 1, "atMs": T0}).to_string();
    assert!(env.storage.set(NAMESPACE, &entry_key(1), stale.as_bytes(), Condition::Absent).is_ok());
    for i in 21..=23 {
        w.check_tool_call(&env.ports(), &read(i));
    }
    assert_eq!(env.storage.get(NAMESPACE, &entry_key(1)).ok().flatten(), None, "the stale entry is gone");
    let report = w.audit_verify(&env.ports()).unwrap_or_default();
    assert_eq!((report.ok, report.head_seq), (true, 23));
    assert!(report.checked <= 17, "pruning went on: {report:?}");
    assert!(entries(&env).len() <= 17);
}

/// The stored record at `key`, as JSON.
fn stored(env: &Env, key: &str) -> Value {
    let entry = env.storage.get(NAMESPACE, key).ok().flatten().map(|e| e.value).unwrap_or_default();
    serde_json::from_slice(&entry).unwrap_or_default()
}

#[test]
fn every_hash_of_the_trail_is_the_plain_hmac_of_its_canonical_json_under_the_key_derived_from_the_secret() {
    use sha2::Digest;
    // The chain's format, spelled out: a key derived from the secret (a fixed one without), MACs of labelled parts.
    let keyed = crate::digest::hmac(&[7; crate::host::MIN_SECRET_BYTES], &[b"warden/audit/chain-key/v1"]);
    let unkeyed: [u8; 32] = sha2::Sha256::digest(b"warden/audit/chain-key/v1/unkeyed").into();
    for (secret, key) in [(Some(7), keyed), (None, unkeyed)] {
        trail_hashes_are_plain_hmacs_under(secret, &key);
    }
}

fn trail_hashes_are_plain_hmacs_under(secret: Option<u8>, key: &[u8]) {
    use crate::digest::{canonical_json, hex, hmac};
    let env = Env::new();
    let w = warden(json!({"tools": {}, "audit": {"maxEntries": 16}}), secret);
    for i in 1..=17 {
        w.check_tool_call(&env.ports(), &read(i));
    }
    let tag = hex(&hmac(key, &[b"tag"]))[..16].to_string();
    let seal = |label: &str, record: &Value, field: &str| {
        let mut rest = record.clone();
        rest.as_object_mut().map(|m| m.remove(field));
        hex(&hmac(key, &[b"seal", label.as_bytes(), &canonical_json(&rest)]))
    };
    let head = stored(&env, HEAD_KEY);
    assert_eq!((head["seq"].as_u64(), head["floor"].as_u64()), (Some(17), Some(2)), "{head}");
    assert_eq!(head["key"], tag.as_str());
    assert_eq!(head["mac"], seal(HEAD_LABEL, &head, "mac").as_str());
    let floor = stored(&env, FLOOR_KEY);
    assert_eq!(floor["mac"], seal(FLOOR_LABEL, &floor, "mac").as_str());
    let session = hex(&hmac(key, &[b"input", b"session", b"s1"]))[..32].to_string();
    for seq in 16..=17 {
        let entry = stored(&env, &entry_key(seq));
        assert_eq!(entry["seq"].as_u64(), Some(seq));
        assert_eq!(entry["key"], tag.as_str());
        assert_eq!(entry["session"], session.as_str());
        let arguments = json!({"path": format!("/tmp/{seq}")}).to_string();
        let digest = hex(&hmac(key, &[b"input", b"arguments", arguments.as_bytes()]))[..32].to_string();
        assert_eq!(entry["inputs"]["arguments"], digest.as_str());
        assert_eq!(entry["hash"], seal(ENTRY_LABEL, &entry, "hash").as_str());
    }
    assert_eq!(stored(&env, &entry_key(17))["prev"], stored(&env, &entry_key(16))["hash"]);
}
