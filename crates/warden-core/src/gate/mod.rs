//! The consent gate for outbound messages: whether a person agreed to be
//! messaged, whether they said stop, whether it is a decent hour where they
//! are, and whether the message is routine enough to go without asking.
//!
//! The rules decide in this order, and the first that applies wins:
//!
//! 1. an opt-out blocks absolutely: no consent recorded later and no approval
//!    overrides it (`gate.opted-out`);
//! 2. without a consent for this exact recipient on this exact channel the
//!    message is blocked, unless `requireConsent` is off (`gate.no-consent`);
//! 3. outside the sending window in the recipient's local time it is blocked
//!    (`gate.quiet-hours`); local time is `now_ms` shifted by the UTC offset on
//!    the consent record, or the owner's offset when the record has none;
//! 4. an unanswered thread (`gate.unanswered-thread`), a send inside
//!    `minGapSeconds` of the thread's last send or passed check (`gate.min-gap`: a
//!    pass reserves the thread for the gap), and wording
//!    that matches no template (`gate.no-template`) ask the person first;
//! 5. otherwise the message is routine and passes (`gate.routine`).
//!
//! Blocks are `deny`, asks are `ask`, passes are `allow`; the ledger spells
//! them `block`, `approve` and `pass`. Every check is recorded in the ledger
//! ([`ledger`]), which holds keyed hashes instead of recipients and bodies.
//! Inbound messages are not gated. `stopKeywords` lists the words an operator
//! treats as an opt-out; the gate reads no inbound traffic, so the host calls
//! `opt-out` when a reply is one of them ([`is_stop_keyword`] helps).
//!
//! Failure mode: **fail-closed**. A check whose state cannot be read, whose
//! ledger key does not match, or whose decision cannot be recorded is denied.
//! Writes go through compare-and-swap, so two hosts recording sends to one
//! thread both count.

pub mod clock;
pub mod ledger;
pub mod templates;

use crate::config::reader::{Node, Obj, Reader, Text, shorten};
use crate::digest;
use crate::idempotency::{Keyed, Lookup};
use crate::model::{
    CheckStatus, Decision, Delivery, Direction, GateStatus, LedgerEntry, Mode, OutboundMessage, OutcomeReport,
    PolicyError, Risk, Signal, Verdict,
};
use crate::ports::{Condition, Ports, Storage, StorageError, Write};
use crate::prelude::*;
use crate::store;
use ledger::{LedgerError, LedgerKey, NAMESPACE, Step, StoredEntry};
use serde::{Deserialize, Serialize};

/// Default owner offset when the section is absent (the gate is then off).
pub const DEFAULT_OWNER_OFFSET: &str = "+00:00";
/// Default start of the sending window, recipient-local, inclusive.
pub const DEFAULT_START: &str = "08:00";
/// Default end of the sending window, recipient-local, exclusive.
pub const DEFAULT_END: &str = "21:00";
/// Most batches one check tries to commit: after a conflict (another check
/// or record moved the thread or the ledger first) it decides again; as many
/// as a ledger line gets ([`ledger::MAX_APPEND_ATTEMPTS`]).
pub const MAX_CHECK_ATTEMPTS: usize = ledger::MAX_APPEND_ATTEMPTS;
/// Longest `minGapSeconds`: one week.
pub const MAX_MIN_GAP_SECONDS: u64 = 7 * 24 * 3600;
/// Most templates.
pub const MAX_TEMPLATES: usize = 100;
/// Longest template, in characters.
pub const MAX_TEMPLATE_CHARS: usize = 2000;
/// Most stop keywords.
pub const MAX_STOP_KEYWORDS: usize = 32;
/// Longest stop keyword, in characters.
pub const MAX_STOP_KEYWORD_CHARS: usize = 32;
/// Shortest `ledgerSecret`, in characters (about 128 bits even as lowercase hex).
pub const MIN_SECRET_CHARS: usize = 32;
/// Longest `ledgerSecret`, in characters.
pub const MAX_SECRET_CHARS: usize = 512;
/// Longest channel name, in characters.
pub const MAX_CHANNEL_CHARS: usize = 64;
/// Longest recipient, in characters.
pub const MAX_RECIPIENT_CHARS: usize = 512;
/// Longest thread ID, in characters.
pub const MAX_THREAD_CHARS: usize = 256;
/// Longest note of how a recipient agreed, in characters.
pub const MAX_HOW_CHARS: usize = 256;
/// Most template variables per recipient and channel.
pub const MAX_VARIABLES: usize = 64;
/// Longest template variable value, in characters.
pub const MAX_VARIABLE_VALUE_CHARS: usize = 512;
/// Most ledger lines `log` returns.
pub const MAX_LOG_LIMIT: u32 = 50;
/// Most records of one kind `status` counts; larger counts are reported as this.
pub const MAX_STATUS_SCAN: u32 = 10_000;

/// Rules this module decides with.
pub mod rules {
    pub const OPTED_OUT: &str = "gate.opted-out";
    pub const NO_CONSENT: &str = "gate.no-consent";
    pub const QUIET_HOURS: &str = "gate.quiet-hours";
    pub const UNANSWERED_THREAD: &str = "gate.unanswered-thread";
    pub const MIN_GAP: &str = "gate.min-gap";
    pub const NO_TEMPLATE: &str = "gate.no-template";
    pub const ROUTINE: &str = "gate.routine";
    /// The channel, recipient, thread or body cannot be checked.
    pub const INVALID_INPUT: &str = "gate.invalid-input";
    /// The gate's state could not be read or its decision recorded.
    pub const STORAGE_UNAVAILABLE: &str = "gate.storage-unavailable";
    /// The ledger was created under another key.
    pub const LEDGER_KEY_MISMATCH: &str = "gate.ledger-key-mismatch";
}

/// The operator's ledger secret. Never serialized, logged or shown.
#[derive(Clone, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LedgerSecret(String);

impl core::fmt::Debug for LedgerSecret {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("LedgerSecret(..)")
    }
}

/// The `gate` section.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct GateConfig {
    /// Whether messages are gated. On when the section is present.
    pub enabled: bool,
    /// `enforce`, or `observe` to record and log decisions but allow.
    pub mode: Mode,
    /// Required: the owner's UTC offset, `+HH:MM` or `-HH:MM`; the default offset of a consent record.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = r"^[+-]\d{2}:\d{2}$")))]
    pub owner_offset: String,
    /// Whether a consent for this exact recipient and channel is required.
    pub require_consent: bool,
    /// Start of the sending window in the recipient's local time, `HH:MM`, inclusive.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = r"^\d{2}:\d{2}$")))]
    pub start: String,
    /// End of the sending window, `HH:MM` (or `24:00`), exclusive; before `start` means it wraps past midnight.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = r"^\d{2}:\d{2}$")))]
    pub end: String,
    /// Least time between two sends in one thread, in seconds; a send sooner asks.
    #[cfg_attr(feature = "schema", schemars(range(max = MAX_MIN_GAP_SECONDS)))]
    pub min_gap_seconds: u64,
    /// Approved routine wording with `$name` / `${name}` variables and `$$` for a dollar; empty means every message asks.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_TEMPLATES)))]
    pub templates: Vec<String>,
    /// Replies the operator treats as an opt-out.
    #[cfg_attr(feature = "schema", schemars(length(min = 1, max = MAX_STOP_KEYWORDS)))]
    pub stop_keywords: Vec<String>,
    /// Secret key material for the ledger's hashes (32-512 characters); fixed once the ledger exists.
    #[serde(skip_serializing)]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>", length(min = MIN_SECRET_CHARS, max = MAX_SECRET_CHARS)))]
    pub ledger_secret: Option<LedgerSecret>,
    /// Settings per channel: `{"invite": {"noConsent": "ask"}}`.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_CHANNEL_SETTINGS)))]
    pub channels: BTreeMap<String, ChannelSettings>,
    /// Whether a recipient with consent on the channel may get wording that
    /// matches no template without an ask (`gate.no-template`). Off by
    /// default; safe only with the `flow` link and provenance checks on.
    pub free_text_for_consented: bool,
}

/// Most entries of `gate.channels`.
pub const MAX_CHANNEL_SETTINGS: usize = 64;

/// How a recipient without consent is treated on one channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum NoConsent {
    /// Blocked (`gate.no-consent`, `deny`): the default.
    Deny,
    /// Asked (`gate.no-consent`, `ask`): a person approves the first contact.
    Ask,
}

/// The settings of one channel in `gate.channels`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct ChannelSettings {
    /// `deny` (default) or `ask`: what `gate.no-consent` decides on this channel.
    #[serde(default = "default_no_consent")]
    pub no_consent: NoConsent,
}

// Used by the schema derive, which reads serde's defaults.
#[cfg_attr(not(feature = "schema"), allow(dead_code))]
fn default_no_consent() -> NoConsent {
    NoConsent::Deny
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            enabled: false,
            mode: Mode::Enforce,
            owner_offset: DEFAULT_OWNER_OFFSET.into(),
            require_consent: true,
            start: DEFAULT_START.into(),
            end: DEFAULT_END.into(),
            min_gap_seconds: 0,
            templates: Vec::new(),
            stop_keywords: vec!["STOP".into()],
            ledger_secret: None,
            channels: BTreeMap::new(),
            free_text_for_consented: false,
        }
    }
}

const OFFSET: Text = Text::non_blank(6)
    .matching(|s| clock::parse_offset(s).is_some(), "must be `+HH:MM` or `-HH:MM` between `-12:00` and `+14:00`");
const START: Text =
    Text::non_blank(5).matching(|s| clock::parse_clock(s, false).is_some(), "must be `HH:MM` from `00:00` to `23:59`");
const END: Text =
    Text::non_blank(5).matching(|s| clock::parse_clock(s, true).is_some(), "must be `HH:MM` from `00:00` to `24:00`");
const TEMPLATE: Text = Text::non_blank(MAX_TEMPLATE_CHARS);
const KEYWORD: Text = Text::non_blank(MAX_STOP_KEYWORD_CHARS);

impl GateConfig {
    /// Fields of the `gate` section.
    pub const FIELDS: &'static [&'static str] = &[
        "enabled",
        "mode",
        "ownerOffset",
        "requireConsent",
        "start",
        "end",
        "minGapSeconds",
        "templates",
        "stopKeywords",
        "ledgerSecret",
        "channels",
        "freeTextForConsented",
    ];

    /// Reads the `gate` section; absent means the gate is off.
    pub fn read(r: &mut Reader, obj: Option<Obj<'_>>) -> GateConfig {
        let mut c = GateConfig::default();
        let Some(obj) = obj else {
            return c;
        };
        c.enabled = r.bool(&obj, "enabled", true);
        c.mode = crate::config::reader::mode(r, &obj);
        if let Some(offset) = r.required_string(&obj, "ownerOffset", OFFSET) {
            c.owner_offset = offset;
        }
        c.require_consent = r.bool(&obj, "requireConsent", true);
        c.start = r.optional_string(&obj, "start", START).unwrap_or(c.start);
        c.end = r.optional_string(&obj, "end", END).unwrap_or(c.end);
        if clock::parse_clock(&c.start, false) == clock::parse_clock(&c.end, true) {
            r.error(
                obj.path_of("end"),
                format!("must differ from `start` (`{}`); use `00:00` to `24:00` for the whole day", c.start),
            );
        }
        c.min_gap_seconds = r.int(&obj, "minGapSeconds", 0..=MAX_MIN_GAP_SECONDS, 0);
        if let Some(list) =
            r.unique_list(&obj, "templates", MAX_TEMPLATES, read_template, "template", "", |t| t.to_string())
        {
            c.templates = list;
        }
        let keyword = |r: &mut Reader, n: Node<'_>| r.string_value(&n, KEYWORD);
        let upper = |k: &String| k.trim().to_uppercase();
        if let Some(list) = r.unique_list(&obj, "stopKeywords", MAX_STOP_KEYWORDS, keyword, "stop keyword", "", upper) {
            if list.is_empty() && obj.get("stopKeywords").is_some_and(|n| n.value.as_array().is_some_and(Vec::is_empty))
            {
                r.error(obj.path_of("stopKeywords"), "must name at least one keyword");
            }
            c.stop_keywords = list;
        }
        c.ledger_secret = obj.get("ledgerSecret").and_then(|node| read_secret(r, &node));
        if let Some(node) = obj.get("channels") {
            c.channels = read_channels(r, &node);
        }
        c.free_text_for_consented = r.bool(&obj, "freeTextForConsented", false);
        c
    }

    /// The check's status for reports.
    pub fn status(&self) -> CheckStatus {
        CheckStatus {
            check: "gate".into(),
            active: self.enabled,
            mode: self.mode.as_str().into(),
            reason: (!self.enabled).then(|| "not_configured".into()),
            failure_mode: "fail-closed".into(),
        }
    }

    /// Valid settings that are probably not what the operator meant.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.enabled && self.ledger_secret.is_none() {
            out.push(
                "gate.ledgerSecret is not set: the consent ledger hides recipients and message text from casual \
                 reading only; anyone with the storage can confirm guesses such as phone numbers"
                    .to_string(),
            );
        }
        out
    }

    fn owner_minutes(&self) -> i32 {
        clock::parse_offset(&self.owner_offset).unwrap_or(0)
    }

    fn window(&self) -> (u32, u32) {
        let start = clock::parse_clock(&self.start, false).unwrap_or(8 * 60);
        let end = clock::parse_clock(&self.end, true).unwrap_or(21 * 60);
        (start, end)
    }
}

fn read_channels(r: &mut Reader, node: &Node<'_>) -> BTreeMap<String, ChannelSettings> {
    let mut out = BTreeMap::new();
    let serde_json::Value::Object(map) = node.value else {
        r.error(
            node.path.clone(),
            format!("must be an object keyed by channel, got `{}`", crate::config::reader::shown(node.value)),
        );
        return out;
    };
    if map.len() > MAX_CHANNEL_SETTINGS {
        r.error(node.path.clone(), format!("must have at most {MAX_CHANNEL_SETTINGS} channels, got {}", map.len()));
    }
    for (name, value) in map.iter().take(MAX_CHANNEL_SETTINGS) {
        let child = Node { path: format!("{}.{name}", node.path), value };
        if let Err(PolicyError::InvalidInput(e)) = check_channel(name) {
            r.error(child.path.clone(), format!("`{}` is not a channel: {e}", shorten(name)));
            continue;
        }
        let Some(obj) = r.object(&child, &["noConsent"]) else { continue };
        let no_consent = match obj.get("noConsent") {
            None => NoConsent::Deny,
            Some(n) => match n.value.as_str() {
                Some("deny") => NoConsent::Deny,
                Some("ask") => NoConsent::Ask,
                _ => {
                    r.error(
                        n.path,
                        format!("must be `deny` or `ask`, got `{}`", crate::config::reader::shown(n.value)),
                    );
                    continue;
                }
            },
        };
        out.insert(name.clone(), ChannelSettings { no_consent });
    }
    out
}

fn read_template(r: &mut Reader, node: Node<'_>) -> Option<String> {
    let text = r.string_value(&node, TEMPLATE)?;
    if let Err((at, what)) = templates::parse(&text) {
        r.error(node.path, format!("`{}` {what} (at character {at})", shorten(&text)));
        return None;
    }
    Some(text)
}

/// Reads the secret without ever putting its value into an error.
fn read_secret(r: &mut Reader, node: &Node<'_>) -> Option<LedgerSecret> {
    let Some(text) = node.value.as_str() else {
        r.error(node.path.clone(), format!("must be a string of {MIN_SECRET_CHARS} to {MAX_SECRET_CHARS} characters"));
        return None;
    };
    let chars = text.chars().count();
    if !(MIN_SECRET_CHARS..=MAX_SECRET_CHARS).contains(&chars) || text.trim().is_empty() {
        r.error(
            node.path.clone(),
            format!("must be {MIN_SECRET_CHARS} to {MAX_SECRET_CHARS} characters, got {chars} (value not shown)"),
        );
        return None;
    }
    Some(LedgerSecret(text.to_string()))
}

/// Whether a reply is one of the configured stop keywords (trimmed, any case).
pub fn is_stop_keyword(config: &GateConfig, reply: &str) -> bool {
    let reply = reply.trim();
    let reply = reply.to_uppercase();
    config.stop_keywords.iter().any(|k| k.trim().to_uppercase() == reply)
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConsentRecord {
    at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    offset: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    how: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OptOutRecord {
    at_ms: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VariablesRecord {
    at_ms: u64,
    values: BTreeMap<String, String>,
}

/// One thread's state. `sends` and `replies` count every recorded outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ThreadRecord {
    pub awaiting_reply: bool,
    pub last_send_ms: Option<u64>,
    pub sends: u64,
    pub replies: u64,
    /// When a check last passed in this thread while `minGapSeconds` is set:
    /// a pass reserves the thread for the gap, so two gateways checking at
    /// once cannot both pass inside it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_pass_ms: Option<u64>,
}

fn invalid(message: String) -> PolicyError {
    PolicyError::InvalidInput(message)
}

fn check_channel(channel: &str) -> Result<(), PolicyError> {
    let chars = channel.chars().count();
    if channel.is_empty() || chars > MAX_CHANNEL_CHARS || !channel.bytes().all(|b| b.is_ascii_graphic() && b != b'/') {
        return Err(invalid(format!(
            "channel: `{}` must be 1 to {MAX_CHANNEL_CHARS} visible ASCII characters without `/`",
            shorten(channel)
        )));
    }
    Ok(())
}

/// Recipients are never echoed back: they are what the ledger keeps out of clear text.
fn check_recipient(recipient: &str) -> Result<(), PolicyError> {
    let chars = recipient.chars().count();
    if recipient.trim().is_empty() {
        return Err(invalid("recipient: must not be blank".into()));
    }
    if chars > MAX_RECIPIENT_CHARS {
        return Err(invalid(format!("recipient: must be at most {MAX_RECIPIENT_CHARS} characters, got {chars}")));
    }
    if recipient.chars().any(char::is_control) {
        return Err(invalid("recipient: must not contain control characters".into()));
    }
    Ok(())
}

fn check_thread(thread: Option<&str>) -> Result<(), PolicyError> {
    let Some(thread) = thread else {
        return Ok(());
    };
    let chars = thread.chars().count();
    if thread.trim().is_empty() || chars > MAX_THREAD_CHARS || thread.chars().any(char::is_control) {
        return Err(invalid(format!(
            "thread: must be 1 to {MAX_THREAD_CHARS} characters without control characters, got {chars}"
        )));
    }
    Ok(())
}

fn check_target(channel: &str, recipient: &str, thread: Option<&str>) -> Result<(), PolicyError> {
    check_channel(channel)?;
    check_recipient(recipient)?;
    check_thread(thread)
}

fn not_configured() -> PolicyError {
    PolicyError::Other("the consent gate is not configured: add a `gate` section with `ownerOffset`".into())
}

fn open(config: &GateConfig, storage: &dyn Storage, now_ms: u64) -> Result<LedgerKey, LedgerError> {
    let settings = digest::versioned(config);
    ledger::open(storage, config.ledger_secret.as_ref().map(|s| s.0.as_str()), &settings, now_ms)
}

fn open_for_admin(config: &GateConfig, storage: &dyn Storage, now_ms: u64) -> Result<LedgerKey, PolicyError> {
    if !config.enabled {
        return Err(not_configured());
    }
    open(config, storage, now_ms).map_err(|e| match e {
        LedgerError::Storage(e) => e.into(),
        mismatch => PolicyError::Other(mismatch.to_string()),
    })
}

/// Whether the ledger holds a consent on `channel` for any of `recipients`
/// (the same person written several ways) and no opt-out for it. `false`
/// when the gate is off or its ledger does not exist yet; nothing is written.
pub fn consented(
    config: &GateConfig,
    storage: &dyn Storage,
    channel: &str,
    recipients: &[&str],
    now_ms: u64,
) -> Result<bool, StorageError> {
    if !config.enabled || check_channel(channel).is_err() {
        return Ok(false);
    }
    if store::get_json::<serde_json::Value>(storage, NAMESPACE, ledger::META_KEY)?.is_none() {
        return Ok(false);
    }
    let key = match open(config, storage, now_ms) {
        Ok(key) => key,
        Err(LedgerError::Storage(e)) => return Err(e),
        // A ledger this secret cannot read holds no consent it can find.
        Err(LedgerError::KeyMismatch { .. }) => return Ok(false),
    };
    for r in recipients {
        if check_recipient(r).is_err() {
            continue;
        }
        let h = key.recipient(r);
        if store::get_json::<OptOutRecord>(storage, NAMESPACE, &opt_out_key(&h))?.is_some() {
            return Ok(false);
        }
        if store::get_json::<ConsentRecord>(storage, NAMESPACE, &consent_key(channel, &h))?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

fn consent_key(channel: &str, recipient_hash: &str) -> String {
    format!("{}{channel}/{recipient_hash}", ledger::CONSENT_PREFIX)
}

fn variables_key(channel: &str, recipient_hash: &str) -> String {
    format!("{}{channel}/{recipient_hash}", ledger::VARIABLES_PREFIX)
}

fn thread_key(channel: &str, recipient_hash: &str, thread_hash: &str) -> String {
    format!("{}{channel}/{recipient_hash}/{thread_hash}", ledger::THREAD_PREFIX)
}

fn opt_out_key(recipient_hash: &str) -> String {
    format!("{}{recipient_hash}", ledger::OPT_OUT_PREFIX)
}

fn label(decision: Decision) -> &'static str {
    match decision {
        Decision::Allow => "pass",
        Decision::Ask => "approve",
        Decision::Deny => "block",
    }
}

/// The gate's answer to a message, under `gate.mode`, or `None` when the gate
/// is off or the message is inbound. Every answer is recorded in the ledger.
pub fn check(config: &GateConfig, ports: &Ports<'_>, message: &OutboundMessage) -> Option<Verdict> {
    if !config.enabled || message.direction != Direction::Outbound {
        return None;
    }
    Some(judge(config, ports, message).under(config.mode))
}

fn judge(config: &GateConfig, ports: &Ports<'_>, message: &OutboundMessage) -> Verdict {
    let deny = |rule: &str, reason: String| Verdict::deny(rule, reason, Risk::High);
    if let Err(PolicyError::InvalidInput(e)) =
        check_target(&message.channel, &message.recipient, message.thread.as_deref())
    {
        return deny(rules::INVALID_INPUT, format!("The message cannot be gated: {e}."));
    }
    let Ok(body) = core::str::from_utf8(&message.body) else {
        return deny(rules::INVALID_INPUT, "The message cannot be gated: body: not valid UTF-8.".into());
    };
    let key = match open(config, ports.storage, message.now_ms) {
        Ok(key) => key,
        Err(LedgerError::Storage(e)) => {
            return deny(
                rules::STORAGE_UNAVAILABLE,
                format!("The consent ledger could not be read ({e}), so the message is held back."),
            );
        }
        Err(mismatch) => return deny(rules::LEDGER_KEY_MISMATCH, format!("The message is held back: {mismatch}.")),
    };
    let recipient_hash = key.recipient(&message.recipient);
    let storage = ports.storage;
    let mut entry = StoredEntry {
        at_ms: message.now_ms,
        event: "check".into(),
        channel: Some(message.channel.clone()),
        recipient_hash: recipient_hash.clone(),
        body_hash: Some(key.body(&message.body)),
        thread: message.thread.clone(),
        decision: None,
        rule: None,
    };
    // The line is written with the decision it records, and a pass under
    // `minGapSeconds` reserves the thread in the same batch, conditional on
    // the thread as read: a concurrent pass makes this batch conflict, and the
    // retry decides again on what that pass wrote.
    let mut failure = CheckError::Record(StorageError::Conflict);
    for _ in 0..MAX_CHECK_ATTEMPTS {
        let (verdict, thread) = match evaluate(config, storage, &key, &recipient_hash, message, body) {
            Ok(v) => v,
            Err(e) => {
                failure = CheckError::Read(e);
                break;
            }
        };
        entry.decision = Some(label(verdict.decision).into());
        entry.rule = Some(verdict.rule.clone());
        let mut reserve = Vec::new();
        if let Some(ThreadRead { key, mut record, when }) = thread.filter(|_| config.min_gap_seconds > 0) {
            record.last_pass_ms = Some(message.now_ms);
            match store::json_write(NAMESPACE, &key, &record, when) {
                Ok(write) => reserve.push(write),
                Err(e) => {
                    failure = CheckError::Record(e);
                    break;
                }
            }
        }
        // The ledger retries its own append on a conflict; a second call
        // means the batch conflicted, perhaps on the thread, so this decides again.
        let mut once = Some(reserve);
        let attempt = ledger::commit::<CheckError>(storage, &entry, || match once.take() {
            Some(writes) => Ok(ledger::Step::Write(writes, true)),
            None => Err(CheckError::Record(StorageError::Conflict)),
        });
        match attempt {
            Ok(_) => return verdict,
            Err(CheckError::Record(StorageError::Conflict)) => continue,
            Err(e) => {
                failure = e;
                break;
            }
        }
    }
    match failure {
        CheckError::Read(e) => deny(
            rules::STORAGE_UNAVAILABLE,
            format!("The consent ledger could not be read ({e}), so the message is held back."),
        ),
        CheckError::Record(e) => deny(
            rules::STORAGE_UNAVAILABLE,
            format!(
                "The gate's decision could not be recorded in the consent ledger ({e}), so the message is held back."
            ),
        ),
    }
}

fn evaluate(
    config: &GateConfig,
    storage: &dyn Storage,
    key: &LedgerKey,
    recipient_hash: &str,
    message: &OutboundMessage,
    body: &str,
) -> Result<(Verdict, Option<ThreadRead>), StorageError> {
    let channel = message.channel.as_str();
    if store::get_json::<OptOutRecord>(storage, NAMESPACE, &opt_out_key(recipient_hash))?.is_some() {
        return Ok((
            Verdict::deny(
                rules::OPTED_OUT,
                "This recipient opted out of all messages. An opt-out is absolute: no consent or approval overrides it.",
                Risk::High,
            ),
            None,
        ));
    }
    let consent =
        store::get_json::<ConsentRecord>(storage, NAMESPACE, &consent_key(channel, recipient_hash))?.map(|(c, _)| c);
    let mut asks: Vec<(&str, String)> = Vec::new();
    if config.require_consent && consent.is_none() {
        let why = format!("This recipient has not agreed to be messaged on `{}`.", shorten(channel));
        match config.channels.get(channel).map_or(NoConsent::Deny, |c| c.no_consent) {
            NoConsent::Deny => return Ok((Verdict::deny(rules::NO_CONSENT, why, Risk::High), None)),
            // A first contact a person approves; the later rules still apply.
            NoConsent::Ask => asks.push((rules::NO_CONSENT, why)),
        }
    }
    let offset_text = consent.as_ref().and_then(|c| c.offset.clone()).unwrap_or_else(|| config.owner_offset.clone());
    let offset = clock::parse_offset(&offset_text).unwrap_or_else(|| config.owner_minutes());
    let (start, end) = config.window();
    let local = clock::local_minute(message.now_ms, offset);
    if !clock::within(start, end, local) {
        return Ok((
            Verdict::deny(
                rules::QUIET_HOURS,
                format!(
                    "It is {} for the recipient (UTC{offset_text}), outside the sending window {}-{}.",
                    clock::show(local),
                    config.start,
                    config.end
                ),
                Risk::Medium,
            ),
            None,
        ));
    }
    let thread_hash = key.thread(message.thread.as_deref());
    let thread_key = thread_key(channel, recipient_hash, &thread_hash);
    let read = store::get_json::<ThreadRecord>(storage, NAMESPACE, &thread_key)?;
    let when = store::unchanged(&read);
    let thread = read.map(|(t, _)| t).unwrap_or_default();
    if thread.awaiting_reply {
        asks.push((rules::UNANSWERED_THREAD, "The last message in this thread has had no reply yet.".into()));
    }
    // A last send dated further ahead than the skew is not evidence (see `crate::time`).
    // A passed check counts as a send for the gap (see `ThreadRecord::last_pass_ms`).
    let ages = thread.last_send_ms.into_iter().chain(thread.last_pass_ms);
    if let Some(since) = ages.filter_map(|at| crate::time::age(at, message.now_ms)).min() {
        let gap_ms = config.min_gap_seconds.saturating_mul(1000);
        if since < gap_ms {
            asks.push((
                rules::MIN_GAP,
                format!(
                    "Only {}s passed since the last send (or passed check) in this thread; the least gap is {}s.",
                    since / 1000,
                    config.min_gap_seconds
                ),
            ));
        }
    }
    let variables = store::get_json::<VariablesRecord>(storage, NAMESPACE, &variables_key(channel, recipient_hash))?
        .map(|(v, _)| v.values)
        .unwrap_or_default();
    let template = templates::first_match(&config.templates, &variables, body);
    let free_text = config.free_text_for_consented && consent.is_some();
    if template.is_none() && !free_text {
        let why = if config.templates.is_empty() {
            "No routine wording is approved, so every message is asked about."
        } else {
            "The wording matches none of the approved templates."
        };
        asks.push((rules::NO_TEMPLATE, why.into()));
    }
    let mut asks = asks.into_iter();
    let Some((rule, reason)) = asks.next() else {
        let which = match template {
            Some(i) => format!("the wording matches template {i}"),
            None => "a consented recipient may get free text (`freeTextForConsented`)".into(),
        };
        let verdict = Verdict::allow(rules::ROUTINE, format!("Consent, hours and thread allow it, and {which}."));
        return Ok((verdict, Some(ThreadRead { key: thread_key, record: thread, when })));
    };
    let mut verdict =
        Verdict::new(Decision::Ask, rule, format!("{reason} Ask the person before sending."), Risk::Medium);
    for (rule, reason) in asks {
        verdict = verdict.with_signal(Signal::new(rule, reason));
    }
    Ok((verdict, None))
}

/// The thread record a passing check read, to reserve the thread with.
struct ThreadRead {
    key: String,
    record: ThreadRecord,
    when: Condition,
}

/// Why a check could not be decided: its state could not be read, or its
/// answer could not be recorded.
enum CheckError {
    Read(StorageError),
    Record(StorageError),
}

impl From<StorageError> for CheckError {
    fn from(e: StorageError) -> Self {
        CheckError::Record(e)
    }
}

/// Commits a ledger line with the writes of `change`, claiming `keyed` in the
/// same batch; a repeated key answers as the first call did and writes nothing.
fn record(
    storage: &dyn Storage,
    entry: StoredEntry,
    keyed: Option<Keyed>,
    mut change: impl FnMut() -> Result<(Vec<Write>, bool), PolicyError>,
) -> Result<bool, PolicyError> {
    ledger::commit(storage, &entry, || {
        let claim = match &keyed {
            Some(k) => match k.lookup(storage)? {
                Lookup::Repeat(answer) => return Ok(Step::Done(answer)),
                Lookup::New(when) => Some((k, when)),
            },
            None => None,
        };
        let (mut writes, answer) = change()?;
        if let Some((k, when)) = claim {
            writes.extend(k.claim(storage, when, answer)?);
        }
        Ok(Step::Write(writes, answer))
    })
}

fn entry(event: &str, at_ms: u64, channel: Option<&str>, recipient_hash: String, thread: Option<&str>) -> StoredEntry {
    StoredEntry {
        at_ms,
        event: event.into(),
        channel: channel.map(Into::into),
        recipient_hash,
        body_hash: None,
        thread: thread.map(Into::into),
        decision: None,
        rule: None,
    }
}

/// The idempotency key of a gate call over its fields (never its time).
fn keyed(
    operation: &str,
    key: Option<&str>,
    request: serde_json::Value,
    now_ms: u64,
) -> Result<Option<Keyed>, PolicyError> {
    Keyed::new(NAMESPACE, operation, key, &request, now_ms)
}

/// Records what happened to a checked message: a send opens the thread, a
/// reply clears it, a failure only enters the ledger. The thread, the line
/// and the totals are one atomic batch.
pub fn record_outcome(config: &GateConfig, ports: &Ports<'_>, report: &OutcomeReport) -> Result<(), PolicyError> {
    check_target(&report.channel, &report.recipient, report.thread.as_deref())?;
    let delivery = match report.delivery {
        Delivery::Sent => "sent",
        Delivery::Reply => "reply",
        Delivery::Failed => "failed",
    };
    let request = serde_json::json!({
        "channel": report.channel, "recipient": report.recipient, "delivery": delivery, "thread": report.thread,
    });
    let keyed = keyed("outcome", report.idempotency_key.as_deref(), request, report.now_ms)?;
    let key = open_for_admin(config, ports.storage, report.now_ms)?;
    let recipient_hash = key.recipient(&report.recipient);
    let thread_key = thread_key(&report.channel, &recipient_hash, &key.thread(report.thread.as_deref()));
    let now = report.now_ms;
    let storage = ports.storage;
    let line = entry(delivery, now, Some(&report.channel), recipient_hash, report.thread.as_deref());
    record(storage, line, keyed, || {
        if report.delivery == Delivery::Failed {
            return Ok((Vec::new(), true));
        }
        let read = store::get_json::<ThreadRecord>(storage, NAMESPACE, &thread_key)?;
        let when = store::unchanged(&read);
        let mut t = read.map(|(t, _)| t).unwrap_or_default();
        if report.delivery == Delivery::Sent {
            t.awaiting_reply = true;
            t.last_send_ms = Some(match t.last_send_ms {
                Some(last) if crate::time::credible(last, now) => last.max(now),
                _ => now,
            });
            t.sends = t.sends.saturating_add(1);
        } else {
            t.awaiting_reply = false;
            t.replies = t.replies.saturating_add(1);
        }
        Ok((vec![store::json_write(NAMESPACE, &thread_key, &t, when)?], true))
    })
    .map(|_| ())
}

/// Records that a recipient agreed to be messaged on a channel, with their UTC
/// offset (default: the owner's) and a note of how they agreed.
#[allow(clippy::too_many_arguments)]
pub fn consent(
    config: &GateConfig,
    ports: &Ports<'_>,
    channel: &str,
    recipient: &str,
    offset: Option<&str>,
    how: Option<&str>,
    now_ms: u64,
    idempotency_key: Option<&str>,
) -> Result<(), PolicyError> {
    check_target(channel, recipient, None)?;
    if let Some(o) = offset
        && clock::parse_offset(o).is_none()
    {
        return Err(invalid(format!(
            "offset: `{}` must be `+HH:MM` or `-HH:MM` between `-12:00` and `+14:00`",
            shorten(o)
        )));
    }
    if let Some(h) = how {
        let chars = h.chars().count();
        if h.trim().is_empty() || chars > MAX_HOW_CHARS {
            return Err(invalid(format!("how: must be 1 to {MAX_HOW_CHARS} characters, got {chars}")));
        }
    }
    let request = serde_json::json!({"channel": channel, "recipient": recipient, "offset": offset, "how": how});
    let keyed = keyed("consent", idempotency_key, request, now_ms)?;
    let key = open_for_admin(config, ports.storage, now_ms)?;
    let recipient_hash = key.recipient(recipient);
    let consent = ConsentRecord { at_ms: now_ms, offset: offset.map(Into::into), how: how.map(Into::into) };
    let write = store::json_write(NAMESPACE, &consent_key(channel, &recipient_hash), &consent, Condition::Any)?;
    let line = entry("consent", now_ms, Some(channel), recipient_hash, None);
    record(ports.storage, line, keyed, || Ok((vec![write.clone()], true))).map(|_| ())
}

/// Records an absolute opt-out of a recipient on every channel.
pub fn opt_out(
    config: &GateConfig,
    ports: &Ports<'_>,
    recipient: &str,
    now_ms: u64,
    idempotency_key: Option<&str>,
) -> Result<(), PolicyError> {
    check_recipient(recipient)?;
    let keyed = keyed("optout", idempotency_key, serde_json::json!({"recipient": recipient}), now_ms)?;
    let key = open_for_admin(config, ports.storage, now_ms)?;
    let recipient_hash = key.recipient(recipient);
    let record_key = opt_out_key(&recipient_hash);
    let storage = ports.storage;
    let line = entry("optout", now_ms, None, recipient_hash, None);
    record(storage, line, keyed, || {
        // The first opt-out's time is kept; a repeated one only adds a ledger line.
        let writes = match store::get_json::<OptOutRecord>(storage, NAMESPACE, &record_key)? {
            Some(_) => Vec::new(),
            None => {
                vec![store::json_write(NAMESPACE, &record_key, &OptOutRecord { at_ms: now_ms }, Condition::Absent)?]
            }
        };
        Ok((writes, true))
    })
    .map(|_| ())
}

/// Takes a consent back; says whether there was one.
pub fn revoke(
    config: &GateConfig,
    ports: &Ports<'_>,
    channel: &str,
    recipient: &str,
    now_ms: u64,
    idempotency_key: Option<&str>,
) -> Result<bool, PolicyError> {
    check_target(channel, recipient, None)?;
    let request = serde_json::json!({"channel": channel, "recipient": recipient});
    let keyed = keyed("revoke", idempotency_key, request, now_ms)?;
    let key = open_for_admin(config, ports.storage, now_ms)?;
    let recipient_hash = key.recipient(recipient);
    let record_key = consent_key(channel, &recipient_hash);
    let storage = ports.storage;
    let line = entry("revoke", now_ms, Some(channel), recipient_hash, None);
    record(storage, line, keyed, || match storage.get(NAMESPACE, &record_key)? {
        Some(current) => Ok((vec![Write::remove(NAMESPACE, &record_key, Condition::Version(current.version))], true)),
        None => Ok((Vec::new(), false)),
    })
}

/// Notes that a recipient replied, clearing the thread.
pub fn reply(
    config: &GateConfig,
    ports: &Ports<'_>,
    channel: &str,
    recipient: &str,
    thread: Option<&str>,
    now_ms: u64,
    idempotency_key: Option<&str>,
) -> Result<(), PolicyError> {
    let report = OutcomeReport {
        channel: channel.into(),
        recipient: recipient.into(),
        delivery: Delivery::Reply,
        thread: thread.map(Into::into),
        now_ms,
        idempotency_key: idempotency_key.map(Into::into),
    };
    record_outcome(config, ports, &report)
}

/// Stores template variables for a recipient on a channel, replacing earlier ones.
pub fn set_variables(
    config: &GateConfig,
    ports: &Ports<'_>,
    channel: &str,
    recipient: &str,
    variables: &[(String, String)],
    now_ms: u64,
    idempotency_key: Option<&str>,
) -> Result<(), PolicyError> {
    check_target(channel, recipient, None)?;
    if variables.len() > MAX_VARIABLES {
        return Err(invalid(format!("variables: must be at most {MAX_VARIABLES}, got {}", variables.len())));
    }
    let mut values = BTreeMap::new();
    for (i, (name, value)) in variables.iter().enumerate() {
        if !templates::is_variable_name(name) {
            return Err(invalid(format!(
                "variables[{i}]: `{}` must be a letter or `_`, then letters, digits or `_`, at most {} characters",
                shorten(name),
                templates::MAX_VARIABLE_NAME_CHARS
            )));
        }
        let chars = value.chars().count();
        if chars > MAX_VARIABLE_VALUE_CHARS {
            return Err(invalid(format!(
                "variables[{i}]: the value of `{name}` must be at most {MAX_VARIABLE_VALUE_CHARS} characters, got {chars}"
            )));
        }
        if values.insert(name.clone(), value.clone()).is_some() {
            return Err(invalid(format!("variables[{i}]: `{name}` is given twice")));
        }
    }
    let request = serde_json::json!({"channel": channel, "recipient": recipient, "variables": values});
    let keyed = keyed("variables", idempotency_key, request, now_ms)?;
    let key = open_for_admin(config, ports.storage, now_ms)?;
    let recipient_hash = key.recipient(recipient);
    let vars = VariablesRecord { at_ms: now_ms, values };
    let write = store::json_write(NAMESPACE, &variables_key(channel, &recipient_hash), &vars, Condition::Any)?;
    let line = entry("variables", now_ms, Some(channel), recipient_hash, None);
    record(ports.storage, line, keyed, || Ok((vec![write.clone()], true))).map(|_| ())
}

/// The newest ledger lines first, at most `limit` (1-50).
pub fn log(config: &GateConfig, ports: &Ports<'_>, limit: u32) -> Result<Vec<LedgerEntry>, PolicyError> {
    if !config.enabled {
        return Err(not_configured());
    }
    if !(1..=MAX_LOG_LIMIT).contains(&limit) {
        return Err(invalid(format!("limit: must be between 1 and {MAX_LOG_LIMIT}, got `{limit}`")));
    }
    Ok(ledger::newest(ports.storage, limit)?)
}

/// A summary of the ledger. Counts of consents, opt-outs and open threads stop at [`MAX_STATUS_SCAN`].
pub fn status(config: &GateConfig, ports: &Ports<'_>) -> Result<GateStatus, PolicyError> {
    if !config.enabled {
        return Err(not_configured());
    }
    let count = |prefix: &str| -> Result<u64, StorageError> {
        Ok(ports.storage.list(NAMESPACE, prefix, MAX_STATUS_SCAN, false)?.len() as u64)
    };
    let threads = ports.storage.list(NAMESPACE, ledger::THREAD_PREFIX, MAX_STATUS_SCAN, false)?;
    let open_threads = threads
        .iter()
        .filter(|(_, e)| serde_json::from_slice::<ThreadRecord>(&e.value).is_ok_and(|t| t.awaiting_reply))
        .count() as u64;
    let stats = ledger::stats(ports.storage)?;
    let decisions = ["pass", "approve", "block"]
        .iter()
        .map(|d| (d.to_string(), stats.decisions.get(*d).copied().unwrap_or(0)))
        .collect();
    Ok(GateStatus {
        consents: count(ledger::CONSENT_PREFIX)?,
        opt_outs: count(ledger::OPT_OUT_PREFIX)?,
        open_threads,
        entries: stats.entries,
        decisions,
    })
}

#[cfg(test)]
mod channels_tests;
#[cfg(test)]
mod tests;
