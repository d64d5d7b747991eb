//! Outbound messages end to end: the consent gate and data-loss prevention of
//! the real component, through the host (its HTTP gateway and CLI) and SQLite.
//! The table files are the core's own (`crates/warden-core/testdata`), so the
//! component is held to exactly the cases the core is tested with.

#[path = "outbound/approvals.rs"]
mod approvals;
#[path = "outbound/classifier.rs"]
mod classifier;
#[path = "outbound/dlp_strings.rs"]
mod dlp_strings;
#[path = "outbound/gate_cases.rs"]
mod gate_cases;
#[path = "outbound/gate_cli.rs"]
mod gate_cli;
#[path = "outbound/ledger.rs"]
mod ledger;
#[path = "outbound/pii.rs"]
mod pii;
#[path = "outbound/two_hosts.rs"]
mod two_hosts;

use serde_json::Value;
use warden_host::bindings::exports::warden::guard::policy::{Direction, OutboundMessage};
use warden_host::bindings::warden::guard::types::{Identity, Verdict};
use warden_host::json::decision_name;

/// 2024-06-03T00:00:00Z, the first day of the gate table.
pub const DAY0: u64 = 1_717_372_800_000;

/// A data file of the core's tests.
pub fn data(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/warden-core/testdata").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A message travelling `direction`, with no sender, ID or session.
pub fn message(
    direction: Direction,
    channel: &str,
    to: &str,
    body: Vec<u8>,
    thread: Option<&str>,
    now_ms: u64,
) -> OutboundMessage {
    OutboundMessage {
        direction,
        channel: channel.into(),
        recipient: to.into(),
        sender: None,
        body,
        thread: thread.map(Into::into),
        message_id: None,
        session_id: None,
        now_ms,
        identity: Identity {
            provider: None,
            account_id: None,
            sender_id: None,
            channel_id: None,
            thread_id: None,
            agent_id: None,
        },
    }
}

/// An outbound text message.
pub fn outbound(channel: &str, to: &str, body: &str, thread: Option<&str>, now_ms: u64) -> OutboundMessage {
    message(Direction::Outbound, channel, to, body.as_bytes().to_vec(), thread, now_ms)
}

/// Decision, rule and the observed decision, for assertions that check all three.
pub fn decided3(v: &Verdict) -> (&'static str, &str, Option<&'static str>) {
    (decision_name(v.decision), v.rule.as_str(), v.observed.map(decision_name))
}

/// The detail of the first signal named `name`.
pub fn signal<'a>(v: &'a Verdict, name: &str) -> Option<&'a str> {
    v.signals.iter().find(|s| s.name == name).map(|s| s.detail.as_str())
}

/// `HH:MM[:SS[.mmm]]` UTC on [`DAY0`] plus `day` days.
pub fn at(time: &str, day: i64) -> u64 {
    let (hms, ms) = time.split_once('.').unwrap_or((time, "0"));
    let parts: Vec<u64> = hms.split(':').map(|p| p.parse().expect("a number")).collect();
    let secs = parts[0] * 3600 + parts[1] * 60 + parts.get(2).copied().unwrap_or(0);
    let day_start = DAY0 as i64 + day * 86_400_000;
    day_start as u64 + secs * 1000 + ms.parse::<u64>().expect("milliseconds")
}
