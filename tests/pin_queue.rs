//! Queued wakes and dedicated-chat workers through the `warden` binary, one
//! process per step, sharing one SQLite database.

use serde_json::{Value, json};
use warden_tests::{T0, TempDb, warden_process};

const SESSION: &str = "agent:main:teams";
const PROMPT: &str = "New message from Bob in \"Bob\": can you send me the notes?";
const TTL_MS: u64 = 2 * 60_000;
const CONFIG: &str = r#"{"pin": {"ttlMinutes": 2}}"#;

struct Host {
    db: TempDb,
    config: String,
}

impl Host {
    fn new() -> Host {
        let db = TempDb::new();
        let path = db.dir.path().join("config.json");
        std::fs::write(&path, CONFIG).expect("write config");
        Host { config: path.display().to_string(), db }
    }

    fn run(&self, args: &[&str], stdin: &str) -> Value {
        let db = self.db.path().display().to_string();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--config", &self.config, "--db", &db, "--replay"]);
        let out = warden_process(&all, stdin);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
    }

    /// `warden pin`; the chat the session is pinned to afterwards.
    fn wake(&self, chat: &str, prompt: Option<&str>, now_ms: u64) -> Value {
        let now = now_ms.to_string();
        let mut args = vec!["pin", "--session", SESSION, "--chat", chat, "--now-ms", &now];
        if let Some(p) = prompt {
            args.extend(["--prompt", p]);
        }
        self.run(&args, "")
    }

    fn worker(&self, chat: &str, now_ms: u64) -> Value {
        let now = now_ms.to_string();
        self.run(&["pin", "--session", SESSION, "--chat", chat, "--now-ms", &now, "--dedicated"], "")
    }

    fn settle(&self, now_ms: u64) {
        let now = now_ms.to_string();
        self.run(&["settle", "--session", SESSION, "--now-ms", &now], "");
    }

    /// `warden check turn`: a message entering the transcript.
    fn enters(&self, message: &str, chat: &str, trigger: &str, now_ms: u64) -> Value {
        let turn = json!({
            "sessionId": SESSION, "nowMs": now_ms, "trigger": trigger, "message": message,
            "identity": {"channelId": chat, "senderId": "u-bob", "provider": "teams"},
        });
        self.run(&["check", "turn"], &turn.to_string())
    }

    /// `warden check tool`: the decision and the rule.
    fn tool(&self, tool: &str, args: Value, now_ms: u64) -> (String, String) {
        let call = json!({"toolName": tool, "arguments": args, "sessionId": SESSION, "nowMs": now_ms});
        let v = self.run(&["check", "tool"], &call.to_string());
        (v["decision"].as_str().unwrap_or_default().into(), v["rule"].as_str().unwrap_or_default().into())
    }

    fn send_to(&self, chat: &str, now_ms: u64) -> (String, String) {
        self.tool("teams_send_chat_message", json!({"chat": chat, "text": "hi"}), now_ms)
    }
}

fn is(got: (String, String), decision: &str, rule: &str) {
    assert_eq!((got.0.as_str(), got.1.as_str()), (decision, rule));
}

fn signal_names(outcome: &Value) -> Vec<String> {
    outcome["signals"]
        .as_array()
        .map(|a| a.iter().filter_map(|s| s["name"].as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

#[test]
fn a_queued_wake_does_not_move_the_pin_until_its_exact_prompt_enters_the_transcript() {
    let host = Host::new();
    assert_eq!(host.wake("19:alice", None, T0)["chatId"], "19:alice");
    // Bob's wake arrives while Alice's answer is owed: the pin stays on Alice.
    assert_eq!(host.wake("19:bob", Some(PROMPT), T0 + 10)["chatId"], "19:alice");
    is(host.send_to("19:alice", T0 + 20), "allow", "pin.pinned-chat");
    is(host.send_to("19:bob", T0 + 20), "deny", "pin.other-chat");
    // The exact prompt enters the transcript in Bob's chat: the pin moves.
    let outcome = host.enters(PROMPT, "19:bob", "automation", T0 + 30);
    assert!(signal_names(&outcome).contains(&"pin.moved".to_string()), "{outcome}");
    is(host.send_to("19:bob", T0 + 40), "allow", "pin.pinned-chat");
    is(host.send_to("19:alice", T0 + 40), "deny", "pin.other-chat");
}

#[test]
fn someone_elses_identical_looking_text_moves_nothing() {
    let host = Host::new();
    host.wake("19:alice", None, T0);
    host.wake("19:bob", Some(PROMPT), T0 + 10);
    let spaced = format!("{PROMPT}\n");
    let prefix = &PROMPT[..20];
    let look_alikes: &[(&str, &str, &str)] = &[
        (PROMPT, "19:bob", "user"),
        (PROMPT, "19:bob", "peer"),
        (PROMPT, "19:mallory", "automation"),
        (prefix, "19:bob", "automation"),
        (&spaced, "19:bob", "automation"),
    ];
    for (i, (message, chat, trigger)) in look_alikes.iter().enumerate() {
        let outcome = host.enters(message, chat, trigger, T0 + 20 + i as u64);
        assert!(!signal_names(&outcome).contains(&"pin.moved".to_string()), "{chat} {trigger}: {outcome}");
        is(host.send_to("19:bob", T0 + 30), "deny", "pin.other-chat");
        is(host.send_to("19:alice", T0 + 30), "allow", "pin.pinned-chat");
    }
    // The real one still moves it afterwards.
    host.enters(PROMPT, "19:bob", "automation", T0 + 40);
    is(host.send_to("19:bob", T0 + 41), "allow", "pin.pinned-chat");
}

#[test]
fn a_queued_wake_expires_with_the_pin_ttl() {
    let host = Host::new();
    host.wake("19:alice", None, T0);
    host.wake("19:bob", Some(PROMPT), T0 + 10);
    let late = T0 + 10 + TTL_MS + 1;
    let outcome = host.enters(PROMPT, "19:bob", "automation", late);
    assert!(!signal_names(&outcome).contains(&"pin.moved".to_string()), "{outcome}");
    // Nothing is pinned any more (Alice's pin expired too), and Bob's wake moved nothing.
    is(host.send_to("19:bob", late), "allow", "tools.allow");
    assert_eq!(
        host.run(&["pin", "--session", SESSION, "--chat", "19:carol", "--now-ms", &late.to_string()], "")["chatId"],
        "19:carol"
    );
}

#[test]
fn a_dedicated_workers_pin_survives_settle_and_the_ttl_and_it_is_refused_listen_mode_and_account_tools() {
    let host = Host::new();
    let pin = host.worker("19:alice", T0);
    assert_eq!(pin["chatId"], "19:alice");
    host.settle(T0 + 1);
    let much_later = T0 + 100 * TTL_MS;
    is(host.send_to("19:bob", much_later), "deny", "pin.other-chat");
    is(host.send_to("19:alice", much_later), "allow", "pin.pinned-chat");
    is(host.tool("teams_set_listen_mode", json!({"mode": "all"}), much_later), "deny", "pin.worker-forbidden");
    is(host.tool("teams_switch_account", json!({"account": "other"}), much_later), "deny", "pin.worker-forbidden");
    is(host.tool("calendar_list", json!({}), much_later), "allow", "tools.allow");
    // Another wake cannot move it.
    let db = host.db.path().display().to_string();
    let out = warden_process(
        &["pin", "--session", SESSION, "--chat", "19:bob", "--config", &host.config, "--db", &db, "--replay"],
        "",
    );
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("dedicated-chat worker for `19:alice`"), "{}", out.stderr);
    is(host.send_to("19:alice", much_later), "allow", "pin.pinned-chat");
}

#[test]
fn listen_mode_tools_are_not_refused_outside_a_dedicated_worker() {
    let host = Host::new();
    host.wake("19:alice", None, T0);
    is(host.tool("teams_set_listen_mode", json!({"mode": "all"}), T0 + 1), "allow", "tools.allow");
}
