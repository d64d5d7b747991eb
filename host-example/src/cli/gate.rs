//! `warden gate ...`: the consent ledger from the command line.
//!
//! Every subcommand goes through the component: the `gate` exports, or
//! `record-outcome` for delivery outcomes, so the command validates and
//! records exactly what an embedding host would. What only the command line
//! has (the `name=value;name=value` list, the log limit, the outcome word) is
//! checked before the database is opened; everything else is checked by the
//! component before it writes. Either way bad input is one line naming the
//! field, exit code 2, and nothing is written.
//!
//! Recipients are never printed back: the ledger holds keyed hashes of them,
//! and `log` shows those.
//!
//! The gate reads no inbound traffic, so `gate.stopKeywords` is the host's to
//! apply: `reply --text` and `record ... reply --text` opt the recipient out
//! when the reply is one of them (the whole reply, trimmed, in any case). The
//! text is compared and dropped, never stored.

use super::{Failure, HostArgs, Policy, print_json, read_config, start};
use crate::bindings::exports::warden::guard::gate::GateStatus;
use crate::bindings::exports::warden::guard::policy::{Delivery, OutcomeReport};
use crate::clock::Clock;
use crate::json::{self, GateStatusJson, LedgerEntryJson};
use crate::runtime::{CallError, Runtime};
use crate::storage::Storage;
use clap::Subcommand;
use std::io::Write;
use warden_core::gate::ledger::{LEGACY_LOG_PREFIX, LOG_PREFIX, NAMESPACE as GATE_NAMESPACE, StoredEntry};

/// Ledger lines `warden gate log` shows when no limit is given.
pub const DEFAULT_LOG_LIMIT: u32 = 20;
/// Most ledger lines one `warden gate log` shows; `--before` pages further, `gate export` has them all.
pub const MAX_LOG_LIMIT: u32 = 10_000;
/// Hex digits of a keyed hash shown in the log table (`--json` has them all).
pub const SHOWN_HASH_CHARS: usize = 12;
/// The stop keyword when `gate.stopKeywords` is not set (the component's default).
pub const DEFAULT_STOP_KEYWORD: &str = "STOP";

#[derive(Subcommand, Debug)]
pub(super) enum GateCommand {
    /// Record that a recipient agreed to be messaged on a channel.
    Consent {
        #[command(flatten)]
        policy: Policy,
        /// The channel, such as `sms`.
        channel: String,
        /// The recipient, exactly as messages address them.
        recipient: String,
        /// Their UTC offset, `+HH:MM` or `-HH:MM`, for quiet hours; `-` or absent: the owner's offset.
        #[arg(allow_hyphen_values = true)]
        offset: Option<String>,
        /// How they agreed, such as "signup form, 2024-06-01".
        how: Option<String>,
        /// Record this once however often the command is repeated with the same key (1 to 128 of `A-Za-z0-9._:-`).
        #[arg(long, value_name = "KEY")]
        idempotency_key: Option<String>,
        /// The time, in milliseconds since the Unix epoch [default: now].
        #[arg(long)]
        now_ms: Option<u64>,
    },
    /// Record an absolute opt-out of a recipient on every channel.
    Optout {
        #[command(flatten)]
        policy: Policy,
        /// The recipient.
        recipient: String,
        /// Record this once however often the command is repeated with the same key (1 to 128 of `A-Za-z0-9._:-`).
        #[arg(long, value_name = "KEY")]
        idempotency_key: Option<String>,
        /// The time, in milliseconds since the Unix epoch [default: now].
        #[arg(long)]
        now_ms: Option<u64>,
    },
    /// Take a consent back.
    Revoke {
        #[command(flatten)]
        policy: Policy,
        /// The channel.
        channel: String,
        /// The recipient.
        recipient: String,
        /// Record this once however often the command is repeated with the same key (1 to 128 of `A-Za-z0-9._:-`).
        #[arg(long, value_name = "KEY")]
        idempotency_key: Option<String>,
        /// The time, in milliseconds since the Unix epoch [default: now].
        #[arg(long)]
        now_ms: Option<u64>,
    },
    /// Note that a recipient replied, clearing the thread.
    Reply {
        #[command(flatten)]
        policy: Policy,
        /// The channel.
        channel: String,
        /// The recipient.
        recipient: String,
        /// The thread [default: the recipient's messages without a thread].
        thread: Option<String>,
        /// The reply's text: one of `gate.stopKeywords` also opts the recipient out. Never stored.
        #[arg(long)]
        text: Option<String>,
        /// Record this once however often the command is repeated with the same key (1 to 128 of `A-Za-z0-9._:-`).
        #[arg(long, value_name = "KEY")]
        idempotency_key: Option<String>,
        /// The time, in milliseconds since the Unix epoch [default: now].
        #[arg(long)]
        now_ms: Option<u64>,
    },
    /// Store template variables for a recipient on a channel, replacing earlier ones.
    Variables {
        #[command(flatten)]
        policy: Policy,
        /// The channel.
        channel: String,
        /// The recipient.
        recipient: String,
        /// `name=value;name=value` (values are exact and cannot hold `;`); an empty argument clears them.
        pairs: String,
        /// Record this once however often the command is repeated with the same key (1 to 128 of `A-Za-z0-9._:-`).
        #[arg(long, value_name = "KEY")]
        idempotency_key: Option<String>,
        /// The time, in milliseconds since the Unix epoch [default: now].
        #[arg(long)]
        now_ms: Option<u64>,
    },
    /// Record what happened to a checked message: `sent`, `failed` or `reply`.
    Record {
        #[command(flatten)]
        policy: Policy,
        /// The channel.
        channel: String,
        /// The recipient.
        recipient: String,
        /// `sent` (opens the thread), `failed` (ledger only) or `reply` (clears the thread).
        outcome: String,
        /// The thread, if any.
        thread: Option<String>,
        /// For `reply`, the reply's text: one of `gate.stopKeywords` also opts the recipient out. Never stored.
        #[arg(long)]
        text: Option<String>,
        /// Record this once however often the command is repeated with the same key (1 to 128 of `A-Za-z0-9._:-`).
        #[arg(long, value_name = "KEY")]
        idempotency_key: Option<String>,
        /// The time, in milliseconds since the Unix epoch [default: now].
        #[arg(long)]
        now_ms: Option<u64>,
    },
    /// The last-written ledger lines first (default 20); `--before SEQ` pages to older ones.
    Log {
        #[command(flatten)]
        policy: Policy,
        /// How many lines, 1 to 10000 (also `--limit`).
        #[arg(conflicts_with = "limit_flag")]
        limit: Option<String>,
        /// How many lines, 1 to 10000.
        #[arg(long = "limit", value_name = "N")]
        limit_flag: Option<String>,
        /// Only lines numbered below this (the `seq` of the oldest line of the previous page).
        #[arg(long, value_name = "SEQ")]
        before: Option<u64>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Every ledger line as JSON lines, oldest first, paging through the store (nothing is capped).
    Export {
        #[command(flatten)]
        policy: Policy,
    },
    /// A summary: consents, opt-outs, open threads, ledger lines and checks by decision.
    Status {
        #[command(flatten)]
        policy: Policy,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Runs one `warden gate` subcommand.
pub(super) fn run(host: &HostArgs, clock: Clock, command: GateCommand, stdout: &mut dyn Write) -> Result<(), Failure> {
    // Checked before the database is opened, like every other argument.
    let now = |now_ms: Option<u64>| -> Result<u64, Failure> {
        clock.admit("--now-ms", now_ms).map_err(Failure::invalid)?;
        Ok(now_ms.unwrap_or_else(json::now_ms))
    };
    match command {
        GateCommand::Consent { policy, channel, recipient, offset, how, idempotency_key, now_ms } => {
            let offset = offset.filter(|o| o != "-");
            let now = now(now_ms)?;
            let (runtime, _) = open(host, &policy)?;
            runtime
                .gate(|g, s| {
                    let key = idempotency_key.as_deref();
                    g.call_consent(s, &channel, &recipient, offset.as_deref(), how.as_deref(), now, key)
                })
                .map_err(failure)?;
            print_json(stdout, &serde_json::json!({"recorded": "consent", "channel": channel}))
        }
        GateCommand::Optout { policy, recipient, idempotency_key, now_ms } => {
            let now = now(now_ms)?;
            let (runtime, _) = open(host, &policy)?;
            runtime.gate(|g, s| g.call_opt_out(s, &recipient, now, idempotency_key.as_deref())).map_err(failure)?;
            print_json(stdout, &serde_json::json!({"recorded": "optout"}))
        }
        GateCommand::Revoke { policy, channel, recipient, idempotency_key, now_ms } => {
            let now = now(now_ms)?;
            let (runtime, _) = open(host, &policy)?;
            let had = runtime
                .gate(|g, s| g.call_revoke(s, &channel, &recipient, now, idempotency_key.as_deref()))
                .map_err(failure)?;
            print_json(stdout, &serde_json::json!({"recorded": "revoke", "channel": channel, "hadConsent": had}))
        }
        GateCommand::Reply { policy, channel, recipient, thread, text, idempotency_key, now_ms } => {
            let now = now(now_ms)?;
            let (runtime, config) = open(host, &policy)?;
            runtime
                .gate(|g, s| g.call_reply(s, &channel, &recipient, thread.as_deref(), now, idempotency_key.as_deref()))
                .map_err(failure)?;
            let opted_out =
                stop_if_asked(&runtime, &config, &recipient, text.as_deref(), now, idempotency_key.as_deref())?;
            let answer =
                serde_json::json!({"recorded": "reply", "channel": channel, "thread": thread, "optedOut": opted_out});
            print_json(stdout, &answer)
        }
        GateCommand::Variables { policy, channel, recipient, pairs, idempotency_key, now_ms } => {
            let variables = parse_variables(&pairs)?;
            let now = now(now_ms)?;
            let (runtime, _) = open(host, &policy)?;
            runtime
                .gate(|g, s| {
                    let key = idempotency_key.as_deref();
                    g.call_set_variables(s, &channel, &recipient, &variables, now, key)
                })
                .map_err(failure)?;
            let names: Vec<&str> = variables.iter().map(|(n, _)| n.as_str()).collect();
            print_json(stdout, &serde_json::json!({"recorded": "variables", "channel": channel, "names": names}))
        }
        GateCommand::Record { policy, channel, recipient, outcome, thread, text, idempotency_key, now_ms } => {
            let delivery = parse_outcome(&outcome)?;
            if text.is_some() && delivery != Delivery::Reply {
                return Err(Failure::invalid(format!("text: only a `reply` has text, not `{outcome}`")));
            }
            let now = now(now_ms)?;
            let (runtime, config) = open(host, &policy)?;
            let report = OutcomeReport {
                channel: channel.clone(),
                recipient,
                delivery,
                thread,
                now_ms: now,
                idempotency_key: idempotency_key.clone(),
            };
            runtime.record_outcome(&report).map_err(failure)?;
            let opted_out =
                stop_if_asked(&runtime, &config, &report.recipient, text.as_deref(), now, idempotency_key.as_deref())?;
            let answer = serde_json::json!({"recorded": outcome, "channel": channel, "thread": report.thread, "optedOut": opted_out});
            print_json(stdout, &answer)
        }
        GateCommand::Log { policy, limit, limit_flag, before, json } => {
            let limit = parse_limit(limit.or(limit_flag).as_deref())?;
            let (runtime, _) = open(host, &policy)?;
            let lines = page(runtime.storage().as_ref(), before, limit)?;
            if json { print_json(stdout, &lines) } else { write_out(stdout, &log_table(&lines)) }
        }
        GateCommand::Export { policy } => {
            let (runtime, _) = open(host, &policy)?;
            let storage = runtime.storage().as_ref();
            let show = |stdout: &mut dyn Write, line: &Line| -> Result<(), Failure> {
                let text = serde_json::to_string(line).map_err(|e| Failure::failed(e.to_string()))?;
                write_out(stdout, &format!("{text}\n"))
            };
            for line in legacy(storage, MAX_LOG_LIMIT, false)? {
                show(stdout, &line)?;
            }
            let Some(newest) = newest_seq(storage)? else {
                return Ok(());
            };
            // One line at a time: nothing is held or capped, however long the ledger.
            for seq in 0..=newest {
                if let Some(line) = line_at(storage, seq)? {
                    show(stdout, &line)?;
                }
            }
            Ok(())
        }
        GateCommand::Status { policy, json } => {
            let (runtime, _) = open(host, &policy)?;
            let status = runtime.gate(|g, s| g.call_status(s)).map_err(failure)?;
            if json { print_json(stdout, &GateStatusJson::from(&status)) } else { write_out(stdout, &summary(&status)) }
        }
    }
}

/// Starts the runtime and makes sure the configuration turns the gate on;
/// returns the configuration text the component accepted with it.
fn open(host: &HostArgs, policy: &Policy) -> Result<(Runtime, String), Failure> {
    let policy = policy.resolve()?;
    let config = read_config(&policy.config)?;
    let runtime = start(host, &config, &policy.db, Some(&policy.config))?;
    let active = runtime.report().checks.iter().any(|c| c.check == "gate" && c.active);
    if !active {
        return Err(Failure::invalid(format!(
            "gate: the consent gate is off in {}: add a `gate` section with `ownerOffset`",
            policy.config.display()
        )));
    }
    Ok((runtime, config))
}

/// `gate.stopKeywords` of a configuration the component accepted (default `STOP`).
fn stop_keywords(config: &str) -> Vec<String> {
    let parsed: serde_json::Value = serde_json::from_str(config).unwrap_or_default();
    match parsed.pointer("/gate/stopKeywords").and_then(serde_json::Value::as_array) {
        Some(list) => list.iter().filter_map(serde_json::Value::as_str).map(String::from).collect(),
        None => vec![DEFAULT_STOP_KEYWORD.to_string()],
    }
}

/// Whether a reply is a stop keyword: the whole reply, trimmed, in any case.
pub fn is_stop_keyword(keywords: &[String], reply: &str) -> bool {
    let reply = reply.trim().to_uppercase();
    keywords.iter().any(|k| k.trim().to_uppercase() == reply)
}

/// Opts the recipient out when the reply's text is a stop keyword; says whether it did.
/// The reply's idempotency key guards the opt-out too (keys are per operation).
fn stop_if_asked(
    runtime: &Runtime,
    config: &str,
    recipient: &str,
    text: Option<&str>,
    now_ms: u64,
    idempotency_key: Option<&str>,
) -> Result<bool, Failure> {
    if !text.is_some_and(|t| is_stop_keyword(&stop_keywords(config), t)) {
        return Ok(false);
    }
    runtime.gate(|g, s| g.call_opt_out(s, recipient, now_ms, idempotency_key)).map_err(failure)?;
    Ok(true)
}

/// Invalid input is the caller's to fix (exit 2); anything else is a failure to run.
fn failure(e: CallError) -> Failure {
    super::call_failure(e)
}

/// Input shown in an error: at most 40 characters, control characters escaped.
fn shown(text: &str) -> String {
    let mut out: String = text.chars().take(40).flat_map(char::escape_debug).collect();
    if text.chars().count() > 40 {
        out.push('…');
    }
    out
}

/// Parses `name=value;name=value`: names are trimmed, values are kept exactly.
/// An empty argument is the empty list, which clears the stored variables.
fn parse_variables(text: &str) -> Result<Vec<(String, String)>, Failure> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for (i, pair) in text.split(';').enumerate() {
        if pair.trim().is_empty() {
            return Err(Failure::invalid(format!(
                "variables[{i}]: is empty; write `name=value` pairs separated by one `;`"
            )));
        }
        let Some((name, value)) = pair.split_once('=') else {
            return Err(Failure::invalid(format!("variables[{i}]: `{}` must be `name=value`", shown(pair))));
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(Failure::invalid(format!("variables[{i}]: `{}` has no name before `=`", shown(pair))));
        }
        if let Some(first) = out.iter().position(|(n, _)| n == name) {
            return Err(Failure::invalid(format!(
                "variables[{i}]: `{}` is given twice (also variables[{first}])",
                shown(name)
            )));
        }
        out.push((name.to_string(), value.to_string()));
    }
    Ok(out)
}

fn parse_outcome(text: &str) -> Result<Delivery, Failure> {
    match text {
        "sent" => Ok(Delivery::Sent),
        "failed" => Ok(Delivery::Failed),
        "reply" => Ok(Delivery::Reply),
        other => Err(Failure::invalid(format!("outcome: must be `sent`, `failed` or `reply`, got `{}`", shown(other)))),
    }
}

fn parse_limit(text: Option<&str>) -> Result<u32, Failure> {
    let Some(text) = text else {
        return Ok(DEFAULT_LOG_LIMIT);
    };
    match text.parse::<u32>() {
        Ok(n) if (1..=MAX_LOG_LIMIT).contains(&n) => Ok(n),
        _ => Err(Failure::invalid(format!(
            "limit: must be a whole number from 1 to {MAX_LOG_LIMIT}, got `{}`",
            shown(text)
        ))),
    }
}

/// One ledger line with its number in writing order (the cursor of `--before`).
#[derive(serde::Serialize)]
struct Line {
    /// `None` for a line of the older layout, which was not numbered.
    #[serde(skip_serializing_if = "Option::is_none")]
    seq: Option<u64>,
    #[serde(flatten)]
    entry: LedgerEntryJson,
}

fn storage_failure(e: impl std::fmt::Display) -> Failure {
    Failure::failed(format!("storage failed: {e}"))
}

/// The number of the newest ledger line, if any. Lines are numbered from 0 in
/// writing order by the component (`line/` and twenty digits).
fn newest_seq(storage: &dyn Storage) -> Result<Option<u64>, Failure> {
    let newest = storage.list(GATE_NAMESPACE, LOG_PREFIX, 1, true).map_err(storage_failure)?;
    Ok(newest.first().and_then(|(key, _)| key.get(LOG_PREFIX.len()..)?.parse::<u64>().ok()))
}

/// Line `seq`, decoded with the component's own record type; `None` if absent.
fn line_at(storage: &dyn Storage, seq: u64) -> Result<Option<Line>, Failure> {
    let key = format!("{LOG_PREFIX}{seq:020}");
    let Some(record) = storage.get(GATE_NAMESPACE, &key).map_err(storage_failure)? else {
        return Ok(None);
    };
    decode(&key, &record.value, Some(seq)).map(Some)
}

/// Lines of the older layout (`log/`), not numbered: at most [`MAX_LOG_LIMIT`], newest first if `reverse`.
fn legacy(storage: &dyn Storage, limit: u32, reverse: bool) -> Result<Vec<Line>, Failure> {
    let lines = storage.list(GATE_NAMESPACE, LEGACY_LOG_PREFIX, limit, reverse).map_err(storage_failure)?;
    lines.iter().map(|(key, record)| decode(key, &record.value, None)).collect()
}

fn decode(key: &str, value: &[u8], seq: Option<u64>) -> Result<Line, Failure> {
    let stored: StoredEntry = serde_json::from_slice(value)
        .map_err(|e| Failure::failed(format!("ledger line {key} is not readable: {e}")))?;
    let e = warden_core::model::LedgerEntry::from(stored);
    let entry = LedgerEntryJson {
        at_ms: e.at_ms,
        event: e.event,
        channel: e.channel,
        recipient_hash: e.recipient_hash,
        body_hash: e.body_hash,
        thread: e.thread,
        decision: e.decision,
        rule: e.rule,
    };
    Ok(Line { seq, entry })
}

/// Up to `limit` lines numbered below `before` (or the newest), newest first.
fn page(storage: &dyn Storage, before: Option<u64>, limit: u32) -> Result<Vec<Line>, Failure> {
    let Some(newest) = newest_seq(storage)? else {
        return legacy(storage, limit, true);
    };
    let top = match before {
        Some(b) => b.min(newest.saturating_add(1)),
        None => newest.saturating_add(1),
    };
    let mut out = Vec::new();
    let mut seq = top;
    while seq > 0 && out.len() < limit as usize {
        seq -= 1;
        if let Some(line) = line_at(storage, seq)? {
            out.push(line);
        }
    }
    let left = limit.saturating_sub(u32::try_from(out.len()).unwrap_or(u32::MAX));
    if seq == 0 && left > 0 {
        out.extend(legacy(storage, left, true)?);
    }
    Ok(out)
}

fn write_out(stdout: &mut dyn Write, text: &str) -> Result<(), Failure> {
    stdout.write_all(text.as_bytes()).map_err(|e| Failure::failed(format!("cannot write the answer: {e}")))
}

/// `2024-06-03T12:00:00.000Z` for milliseconds since the Unix epoch.
pub fn utc(ms: u64) -> String {
    let days = (ms / 86_400_000) as i64;
    let in_day = ms % 86_400_000;
    // Civil date from days since 1970-01-01 (proleptic Gregorian calendar).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s, milli) = (in_day / 3_600_000, in_day / 60_000 % 60, in_day / 1000 % 60, in_day % 1000);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

fn short_hash(hash: &str) -> String {
    match hash.get(..SHOWN_HASH_CHARS) {
        Some(head) if hash.len() > SHOWN_HASH_CHARS => format!("{head}…"),
        _ => hash.to_string(),
    }
}

/// The ledger lines as a table, newest first, as the component returned them.
fn log_table(lines: &[Line]) -> String {
    let dash = || "-".to_string();
    let header = ["SEQ", "TIME (UTC)", "EVENT", "CHANNEL", "DECISION", "RULE", "THREAD", "RECIPIENT", "BODY"];
    let rows: Vec<[String; 9]> = lines
        .iter()
        .map(|line| {
            let e = &line.entry;
            [
                line.seq.map_or_else(dash, |n| n.to_string()),
                utc(e.at_ms),
                e.event.clone(),
                e.channel.clone().unwrap_or_else(dash),
                e.decision.clone().unwrap_or_else(dash),
                e.rule.clone().unwrap_or_else(dash),
                e.thread.as_deref().map(shown).unwrap_or_else(dash),
                short_hash(&e.recipient_hash),
                e.body_hash.as_deref().map(short_hash).unwrap_or_else(dash),
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect();
        format!("{}\n", padded.join("  ").trim_end())
    };
    let mut out = line(&header.map(String::from));
    for row in &rows {
        out.push_str(&line(row));
    }
    if rows.is_empty() {
        out.push_str("(the ledger is empty)\n");
    }
    out
}

/// The status as aligned text.
fn summary(status: &GateStatus) -> String {
    let decisions: Vec<String> = status.decisions.iter().map(|(d, n)| format!("{d} {n}")).collect();
    format!(
        "consents      {}\nopt-outs      {}\nopen threads  {}\nledger lines  {}\nchecks        {}\n",
        status.consents,
        status.opt_outs,
        status.open_threads,
        status.entries,
        if decisions.is_empty() { "none".to_string() } else { decisions.join(", ") }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variable_lists_parse_or_name_the_bad_pair() {
        let ok = |text: &str| parse_variables(text).ok();
        let pairs = |list: &[(&str, &str)]| -> Option<Vec<(String, String)>> {
            Some(list.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect())
        };
        assert_eq!(ok("name=Ada;order=A-17"), pairs(&[("name", "Ada"), ("order", "A-17")]));
        assert_eq!(ok(" name =Ada ; x= y=z"), pairs(&[("name", "Ada "), ("x", " y=z")]));
        assert_eq!(ok("amount="), pairs(&[("amount", "")]));
        assert_eq!(ok(""), pairs(&[]));
        let cases = [
            ("name", "variables[0]: `name` must be `name=value`"),
            ("name=Ada;order", "variables[1]: `order` must be `name=value`"),
            ("=Ada", "variables[0]: `=Ada` has no name before `=`"),
            ("name=Ada;", "variables[1]: is empty"),
            ("name=Ada;;x=1", "variables[1]: is empty"),
            ("a=1;b=2;a=3", "variables[2]: `a` is given twice (also variables[0])"),
        ];
        for (text, expected) in cases {
            let message = parse_variables(text).err().map(|f| f.message).unwrap_or_default();
            assert!(message.starts_with(expected), "{text}: {message}");
            assert_eq!(message.lines().count(), 1, "{text}");
        }
    }

    #[test]
    fn limits_and_outcomes_are_checked_before_anything_opens() {
        assert_eq!(parse_limit(None).ok(), Some(DEFAULT_LOG_LIMIT));
        assert_eq!(parse_limit(Some("1")).ok(), Some(1));
        assert_eq!(parse_limit(Some("10000")).ok(), Some(10_000));
        for bad in ["0", "10001", "-1", "ten", ""] {
            let message = parse_limit(Some(bad)).err().map(|f| f.message).unwrap_or_default();
            assert!(message.starts_with("limit: must be a whole number from 1 to 10000"), "{bad}: {message}");
        }
        assert_eq!(parse_outcome("sent").ok(), Some(Delivery::Sent));
        assert_eq!(parse_outcome("reply").ok(), Some(Delivery::Reply));
        let message = parse_outcome("delivered").err().map(|f| f.message).unwrap_or_default();
        assert_eq!(message, "outcome: must be `sent`, `failed` or `reply`, got `delivered`");
    }

    #[test]
    fn a_stop_keyword_is_the_whole_reply_in_any_case() {
        let configured = stop_keywords(r#"{"gate": {"ownerOffset": "+00:00", "stopKeywords": ["STOP", "Arrêt"]}}"#);
        assert_eq!(configured, ["STOP", "Arrêt"]);
        assert_eq!(stop_keywords(r#"{"gate": {"ownerOffset": "+00:00"}}"#), ["STOP"]);
        for (reply, stop) in
            [(" stop\n", true), ("ARRÊT", true), ("stop please", false), ("unstop", false), ("", false)]
        {
            assert_eq!(is_stop_keyword(&configured, reply), stop, "{reply:?}");
        }
    }

    #[test]
    fn times_are_shown_in_utc_with_milliseconds() {
        assert_eq!(utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(utc(1_717_372_800_000), "2024-06-03T00:00:00.000Z");
        assert_eq!(utc(1_709_164_799_999), "2024-02-28T23:59:59.999Z");
        assert_eq!(utc(1_709_164_800_000 + 86_400_000), "2024-03-01T00:00:00.000Z");
        assert_eq!(utc(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }
}
